"""Stragglers in the engine: step = max over ranks, sampled exactly; invariances kept."""

import math
from dataclasses import replace

import numpy as np
import pytest
from specs import spec

from simd.engine import US_PER_SECOND, Stragglers, advance, new_state, run_job
from simd.engine.stragglers import _SHIFT, BUCKET_FACTORS, StepTimes, _lines
from simd.engine.streams import generator_at, stream_state
from simd.models.straggler import expected_max_normal, norm_ppf

BASE_US = 30 * US_PER_SECOND


def _mean_se(x):
    return float(np.mean(x)), float(np.std(x, ddof=1) / math.sqrt(len(x)))


def test_table_equals_closed_form_max_of_normals_to_the_microsecond():
    times = StepTimes(1024, BASE_US, 0.5 * US_PER_SECOND, 0, 1.0, stream_state(3, "straggler"))
    d = times.durations(0, 200_000, 0)[0]
    u = times.uniforms(0, 200_000)
    exact = BASE_US + 0.5e6 * -norm_ppf(-np.expm1(np.log(u) / 1024))  # Phi^-1(u^(1/n)), through 1 - u^(1/n)
    # rounding to 1 us, plus the table interpolation error the module documents (about 1e-7 of the jitter)
    assert np.max(np.abs(d - np.maximum(exact, BASE_US))) <= 0.5 + 0.05


@pytest.mark.parametrize("r", [0.0, 2.0**-53, 0.25, 0.5 - 2.0**-53, 0.5, 0.5 + 2.0**-53, 0.75, 1.0 - 2.0**-53])
def test_table_lookup_at_the_ends_of_both_halves(r):
    """The direct bit-pattern index of v = r - 1/2 at the extremes: r = 1/2 exactly (v = +0, u = 0), r = 0
    (v = -1/2, u = 1/2), the tails on either side of r = 1/2 and the ends of [0, 1)."""
    n, jitter = 1024, 0.5 * US_PER_SECOND
    lines = _lines(n, 0, BASE_US, jitter, 1.0)
    v = np.array([r - 0.5])
    i = int((v.view(np.uint64) >> np.uint64(_SHIFT))[0])
    x = lines.a[i] + lines.b[i] * v[0] - 0.5  # the table carries +0.5 for rounding
    u = max(v[0] if v[0] >= 0 else 1.0 + v[0], 2.0**-64)  # u = 0 is the grid's lower end
    exact = BASE_US + jitter * -norm_ppf(-math.expm1(math.log(u) / n))
    assert abs(x - exact) < 0.05


@pytest.mark.parametrize("kind", ["PCG64", "PCG64DXSM"])
def test_stream_uniform_number_i_does_not_depend_on_where_reading_starts(kind):
    state = stream_state(9, "straggler", kind)
    assert state["bit_generator"] == kind
    whole = generator_at(state, 0).random(1000)
    for first in (1, 17, 999):
        assert np.array_equal(generator_at(state, first).random(1000 - first), whole[first:])


def test_unknown_bit_generator_is_refused():
    with pytest.raises(ValueError, match="bit_generator"):
        stream_state(1, "straggler", "MT19937")


def test_mean_step_with_jitter_is_the_expected_max_of_1024_normals():
    times = StepTimes(1024, BASE_US, 0.5 * US_PER_SECOND, 0, 1.0, stream_state(4, "straggler"))
    m, se = _mean_se(times.durations(0, 400_000, 0)[0] / US_PER_SECOND)
    expected = expected_max_normal(1024, 30.0, 0.5)  # about 31.62 s (seed 001, scenario 4)
    assert abs(expected - 31.62) < 0.01
    assert abs(m - expected) < 4 * se


def test_one_rank_20_percent_slow_gives_36_seconds():
    times = StepTimes(1024, BASE_US, 0.5 * US_PER_SECOND, 1, 1.2, stream_state(5, "straggler"))
    m, se = _mean_se(times.durations(0, 400_000, 400_000)[0] / US_PER_SECOND)
    assert abs(m - 36.0) < 4 * se + 1e-3  # the slow rank dominates: E[max] = 36.0 + O(1e-9)


def test_mixed_slow_and_healthy_ranks_match_brute_force():
    """4 ranks, 2 of them 20% slow: the table against drawing every rank (4 standard errors)."""
    times = StepTimes(4, BASE_US, 0.5 * US_PER_SECOND, 2, 1.2, stream_state(6, "straggler"))
    d = times.durations(0, 200_000, 200_000)[0] / US_PER_SECOND
    rng = np.random.default_rng(6)
    ranks = np.concatenate([30 + 0.5 * rng.standard_normal((200_000, 2)),
                            36 + 0.5 * rng.standard_normal((200_000, 2))], axis=1)
    brute = np.maximum(ranks.max(axis=1), 30.0)
    for q in (0.01, 0.5, 0.99):
        assert abs(np.quantile(d, q) - np.quantile(brute, q)) < 0.02, q
    (m1, se1), (m2, se2) = _mean_se(d), _mean_se(brute)
    assert abs(m1 - m2) < 4 * math.hypot(se1, se2)


def test_mitigation_replaces_slow_ranks_after_the_detection_delay():
    s = spec(hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0, target_steps=500, ckpt_interval_steps=50,
             validation_interval_steps=0, step_seconds=30.0, n_gpus=1024,
             stragglers=Stragglers(0.5, 1, 1.2, replace_after_steps=100))
    state, events = advance(new_state(s), 10**7 * US_PER_SECOND, max_jobs=3)
    assert state.totals.stragglers_replaced == 3  # one slow rank, found once in each job
    job = events[0].job
    # 100 steps at ~36 s, 400 at ~31.62 s
    assert abs(job.mean_step_seconds - (100 * 36.0 + 400 * 31.624) / 500) < 0.05


def test_stragglers_off_keeps_the_base_step_time():
    job = run_job(spec(stragglers=Stragglers(0.0, 0, 1.0)))
    assert job.bucket_seconds["straggler"] == 0 and job.mean_step_seconds == 60.0


def test_straggler_time_is_its_own_bucket_and_lowers_utilization():
    plain = run_job(spec(seed=3))
    slow = run_job(spec(seed=3, stragglers=Stragglers(0.5, 1, 1.2)))
    assert slow.bucket_seconds["straggler"] > 0.19 * (slow.target_steps + slow.recompute_steps) * 60 * 0.99
    assert slow.effective_utilization < plain.effective_utilization
    assert replace(spec(), stragglers=None) == spec()


@pytest.mark.parametrize("kind", ["PCG64", "PCG64DXSM"])
@pytest.mark.parametrize("first", [0, 1, 63, 12345, 10**12 + 7])
def test_compiled_generators_are_numpys_bit_for_bit(kind, first):
    from simd.engine.pcg import doubles, words

    state = stream_state(11, "x", kind)
    assert np.array_equal(doubles(words(state), first, 2000), generator_at(state, first).random(2000))


def test_run_called_from_python_with_plain_ints_draws_the_same_steps():
    """stepkernel.run takes the generator state as it comes: Python ints below 2**63 (which numba would type
    int64, with arithmetic shifts) give the same steps as the compiled callers' uint64 state."""
    from simd.engine import stepkernel
    from simd.engine.pcg import seek

    times = StepTimes(16384, 6 * US_PER_SECOND, 0.1 * US_PER_SECOND, 1, 1.2, stream_state(4, "straggler",
                                                                                          "PCG64DXSM"))
    w, tables = times.kernel_args()
    d, buckets = times.durations_numpy(0, 1000, 50)
    for cast in (int, np.uint64):
        sh, sl = (cast(x) for x in seek(w, 0))
        hist = np.zeros(len(BUCKET_FACTORS) + 1, dtype=np.int64)
        out = stepkernel.run(sh, sl, cast(w[2]), cast(w[3]), True, 0, 1000, 1 << 62, 200, 0, 72 * US_PER_SECOND,
                             100, 20 * US_PER_SECOND, 50, 0, 1 << 62, *tables, hist)
        assert out[2] == 1000 and out[4] == int(d.sum()) and out[5] == stepkernel.FITTED
        assert np.array_equal(hist, StepTimes.histogram_of(d, buckets, 1000))


@pytest.mark.parametrize("due_at,budget_at", [(None, None), (137, None), (None, 211), (90, 300), (400, 150)])
def test_run_ends_fitted_cut_or_due_as_a_step_by_step_loop_does(due_at, budget_at):
    """stepkernel.run with a shifted checkpoint lattice (a hyper window's), a per-step overhead (shadow ranks) and
    a deadline (a detector's finding) against the same rules written step by step over the numpy reference's
    durations: where it ends, how, the time and durations summed, the histogram, the step drawn last."""
    from simd.engine import stepkernel
    from simd.engine.pcg import seek

    times = StepTimes(1024, 6 * US_PER_SECOND, 0.5 * US_PER_SECOND, 1, 1.2, stream_state(9, "straggler",
                                                                                         "PCG64DXSM"))
    w, tables = times.kernel_args()
    a, b, period, offset, ckpt, every, val, slow, extra = 10, 500, 7, 3, 40_000, 5, 9_000, 20, 300
    d, buckets = times.durations_numpy(a, b - a, slow)
    # the loop: the deadline and budget put at the start of the chosen steps
    starts, used = [], 0
    for j in range(b - a):
        q = a + j + 1
        starts.append(used)
        used += int(d[j]) + extra + (ckpt if (q - offset) % period == 0 else 0) + (val if q % every == 0 else 0)
    due = starts[due_at] + int(d[due_at]) + extra if due_at is not None else 1 << 62
    budget = starts[budget_at] + 1 if budget_at is not None else 1 << 62
    m, how, used, total = a, stepkernel.FITTED, 0, 0
    for j in range(b - a):
        q = a + j + 1
        cost = int(d[j]) + extra + (ckpt if (q - offset) % period == 0 else 0) + (val if q % every == 0 else 0)
        if used + int(d[j]) + extra >= due:
            how = stepkernel.DUE
            break
        if used + cost > budget:
            how = stepkernel.CUT
            break
        used, total, m = used + cost, total + int(d[j]), q
    hist = np.zeros(len(BUCKET_FACTORS) + 1, dtype=np.int64)
    sh, sl = (np.uint64(x) for x in seek(w, a))  # (boxed as Python ints: typed by value, as the test above says)
    out = stepkernel.run(sh, sl, w[2], w[3], True, a, b, budget, period, offset, ckpt, every, val, slow, extra, due,
                         *tables, hist)
    assert out[2:6] == (m, used, total, how)
    assert np.array_equal(hist, StepTimes.histogram_of(d[:m - a], buckets[:m - a], m - a))
    if how != stepkernel.FITTED:  # the step drawn last is step m + 1
        assert (out[6], out[7]) == (int(d[m - a]), int(buckets[m - a]))
    assert how == (stepkernel.FITTED if due_at is None and budget_at is None else
                   stepkernel.DUE if budget_at is None or (due_at is not None and due_at <= budget_at)
                   else stepkernel.CUT)


def test_the_compiled_erfc_gives_the_standard_librarys_doubles():
    """The straggler tables' tails (stragglers._log_cdf) come from stepkernel.erfc_into: bit for bit math.erfc over
    the tables' range and its extremes."""
    from simd.engine.stepkernel import erfc_into

    x = np.concatenate((np.linspace(-40.0, 40.0, 100_001), np.random.default_rng(3).normal(0.0, 6.0, 100_000),
                        [0.0, -0.0, 1e-300, 5e-324, 27.2, 26.5, -6.0, np.inf, -np.inf]))
    got = np.empty_like(x)
    erfc_into(x, got)
    assert np.array_equal(got.view(np.int64), np.array([math.erfc(v) for v in x]).view(np.int64))
