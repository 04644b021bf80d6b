"""The analytic optima of docs/checkpoints.md, section 6: the asynchronous save's cost and optimum, the two-level
optimum (Benoit et al., IEEE TC 2017) on the note's Llama-3 numbers, and Gemini's waste per failure."""

import math

import numpy as np
import pytest

from simd.models import checkpoint as ck


def test_async_save_cost_is_blocking_plus_compute_lost_to_the_slowdown():
    # b 5 s, W 240 s, s 1.05: the write computes 240/1.05 = 228.57 s of 240: 11.43 s lost
    assert ck.async_save_cost_seconds(5.0, 240.0, 1.05) == pytest.approx(16.4286, abs=1e-4)
    assert ck.async_save_cost_seconds(0.5, 2.0, 1.01) == pytest.approx(0.5198, abs=1e-4)  # the note's C1
    assert ck.async_save_cost_seconds(5.0, 240.0, 1.0) == 5.0  # no slowdown: only the blocking
    assert ck.async_save_cost_seconds(7.0, 0.0, 1.0) == 7.0
    with pytest.raises(ValueError):
        ck.async_save_cost_seconds(5.0, 240.0, 0.9)


def test_async_optimum_is_young_on_the_effective_cost_and_hardly_moved_by_the_latency():
    # the note's single persistent tier: C_eff 16.43 s, M 10,012 s -> sqrt(2 * 16.43 * 10012) = 574 s
    m = 54 * 86400 / 466
    assert ck.async_interval_seconds(5.0, 240.0, 1.05, m) == pytest.approx(573.5, abs=0.5)
    # the latency adds w/M at every interval, and terms that fall with T (w b, (s - 1) w^2 / 2, w = 240/1.05) far
    # below C_eff M: the minimizer moves by under 1% (578 s)
    t = np.linspace(300, 900, 601)
    h = ck.async_overhead(t, 5.0, 240.0, 1.05, m, 100.0)
    assert t[np.argmin(h)] == pytest.approx(573.5, rel=0.01)
    # a failure loses T/2 + w (1 + b/T) + (s - 1) w^2 / (2T) + R
    w = 240 / 1.05
    assert ck.async_overhead(600.0, 5.0, 240.0, 1.05, m, 100.0) == pytest.approx(
        16.4286 / 600 + (300 + w * (1 + 5 / 600) + 0.05 * w * w / 1200 + 100) / m, rel=1e-5)


def test_an_interval_below_w_over_s_makes_every_save_wait():
    # W 240 s, s 1.2: 200 s of compute run under one write
    assert ck.unwaited_interval_seconds(240.0, 1.2) == pytest.approx(200.0)
    # waiting: a cycle is b + W = 245 s of wall time for T of compute: (245 - T)/T; a failure loses T + b + s T/2
    # (the save before the interval unwritten: back two saves, the older interval redone unslowed); continuous at 200
    m = 1000.0
    assert ck.async_overhead(100.0, 5.0, 240.0, 1.2, m, 0.0) == pytest.approx(145 / 100 + (100 + 5 + 60) / m)
    below = ck.async_overhead(200.0 - 1e-9, 5.0, 240.0, 1.2, m, 0.0)
    assert below == pytest.approx(ck.async_overhead(200.0, 5.0, 240.0, 1.2, m, 0.0))
    # Young on C_eff = 45 s would be sqrt(2 * 45 * 1000) = 300 s >= 200: no wait there
    assert ck.async_interval_seconds(5.0, 240.0, 1.2, m) == pytest.approx(300.0)
    # M 400 s: Young on C_eff 189.7 s < 200, the waiting regime's sqrt(2 * 245 * 400 / 3.2) = 247.5 s > 200: W/s
    assert ck.async_interval_seconds(5.0, 240.0, 1.2, 400.0) == pytest.approx(200.0)
    # a write far longer than the MTBF: W 10,000 s, s 1.05, M 100 s -> the waiting regime's
    # sqrt(2 (b + W) M / (2 + s)) = sqrt(2 * 10,005 * 100 / 3.05) = 810.0 s
    assert ck.async_interval_seconds(5.0, 10000.0, 1.05, 100.0) == pytest.approx(810.0, abs=0.1)


def test_a_failure_while_saves_wait_loses_two_intervals_not_the_write():
    """Every save waiting (T < W / s): the save at an interval's start is written only at the next one, so a
    failure u into it goes back two saves and redoes T (unslowed: the rollback aborts the write) + b + s u:
    3T/2 + b + R without a slowdown, whatever the write's length; T/2 + W + R counts the write instead."""
    for w in (600.0, 6000.0):
        assert ck.async_loss_seconds(300.0, 5.0, w, 1.0, 20.0) == pytest.approx(450 + 5 + 20)
    assert ck.async_loss_seconds(300.0, 5.0, 600.0, 1.5, 20.0) == pytest.approx(300 + 5 + 1.5 * 150 + 20)
    # without a slowdown it is the memory tier's loss, the same derivation
    for t, w in ((300.0, 150.0), (300.0, 600.0), (300.0, 0.0)):
        assert ck.async_loss_seconds(t, 1.0, w, 1.0, 20.0) == pytest.approx(ck.tier_loss_seconds(t, 1.0, w, 20.0))
    # whole steps of 30 s: a write of 150 s at 1.2x spans 4.17 steps of compute, slows 5 and is durable after them
    assert ck.async_latency_seconds(240.0, 150.0, 1.2, 30.0) == 150.0
    assert ck.async_latency_seconds(240.0, 150.0, 1.2) == pytest.approx(125.0)
    assert ck.async_latency_seconds(240.0, 144.0, 1.2, 30.0) == 120.0  # 4 steps exactly: the 5th starts unslowed


@pytest.mark.parametrize("b, w, s, m, r", [(5, 240, 1.05, 10012, 300), (5, 240, 1.2, 400, 50),
                                           (5, 10000, 1.05, 100, 0), (60, 30, 2.0, 3600, 600)])
def test_async_interval_minimizes_the_overhead(b, w, s, m, r):
    best = ck.async_interval_seconds(b, w, s, m)
    t = np.geomspace(best / 20, best * 20, 20001)
    h = ck.async_overhead(t, b, w, s, m, r)
    # Young's leaves out the latency's terms that fall with T: within 0.2% of the minimum (0.11% for a write of
    # 0.6 MTBF, M 400 s: W / s there, 200 s, against 214 s; under 2e-5 at the others)
    assert ck.async_overhead(best, b, w, s, m, r) <= h.min() * (1 + 2e-3)


def test_async_efficiency_without_a_write_is_the_blocking_one_bit_for_bit():
    steps = np.arange(1, 400)
    assert np.array_equal(ck.async_efficiency(steps, 30.0, 240.0, 0.0, 1.0, 28440.0, 388.2),
                          ck.efficiency(steps, 30.0, 240.0, 28440.0, 388.2))
    # with a write: 1 / (1 + H), steps whole
    e = ck.async_efficiency(20, 30.0, 5.0, 240.0, 1.05, 10012.0, 100.0)
    assert e == pytest.approx(1 / (1 + ck.async_overhead(600.0, 5.0, 240.0, 1.05, 10012.0, 100.0, 30.0)))


def test_two_level_optimum_on_the_notes_llama3_numbers():
    # checkpoints.md, section 7: 466 interruptions in 54 days (M = 10,012 s); a failure needs the persistent
    # tier when a burst (0.44 of 8.63 a day) loses the peer copies (1.64e-3 per burst) or the peer load is
    # corrupt (1e-3): lambda2 / lambda = 0.051 * 1.64e-3 + 1e-3 = 1.08e-3; the rest the peer tier absorbs
    lam = 466 / (54 * 86400)
    share2 = 0.44 / 8.63 * 1.64e-3 + 1e-3
    rates = (lam * (1 - share2), lam * share2)
    costs = (ck.async_save_cost_seconds(0.5, 2.0, 1.01), ck.async_save_cost_seconds(5.0, 240.0, 1.05))
    t1, t2 = ck.two_level_intervals(costs, rates)
    assert t1 == pytest.approx(102, rel=0.01)  # the note: 102 s (17 steps of 6 s)
    assert t2 == pytest.approx(17_400, rel=0.01)  # the note: 17,400 s (2,900 steps)
    # H* = sqrt(2 l1 C1) + sqrt(2 l2 C2) + l1 (W1 + R1) + l2 (W2 + R2), peer W 2 s, load 10 s, persistent 240, 93.6
    h = ck.two_level_overhead(costs, rates, (2.0, 240.0), (10.0, 93.6))
    assert h == pytest.approx(0.010184 + 0.0018857 + 0.0011973 + 0.0000361, rel=1e-3)
    # one level is Young
    assert ck.two_level_intervals((16.4,), (1 / 10012,))[0] == pytest.approx(ck.young_interval_seconds(16.4, 10012))
    with pytest.raises(ValueError):
        ck.two_level_intervals((1.0, 2.0), (0.1,))


def test_gemini_waste_per_failure():
    # t_ckpt 2 s, one checkpoint every 20 s, retrieval 10 s: 2 + 10 + 10
    assert ck.gemini_wasted_seconds(2.0, 20.0, 10.0) == 22.0
    assert ck.gemini_wasted_seconds(240.0, 3600.0, 93.6) == pytest.approx(240 + 1800 + 93.6)
    with pytest.raises(ValueError, match="at least t_ckpt"):
        ck.gemini_wasted_seconds(30.0, 20.0, 0.0)
    assert math.isclose(ck.gemini_wasted_seconds(0.0, 1.0, 0.0), 0.5)
