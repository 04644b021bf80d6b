"""Servers (simd/engine/servers.py, issue 21's first stage): the reduction to seed 000's process, the lifetimes'
means, what a drill does to lifetimes, counting the servers that fail. The kernel against the per-step oracle
in distribution and under any cut of time: tests/engine/statistical/test_servers_oracle.py."""

import math
import random
from dataclasses import replace

import numpy as np
import pytest
from specs import spec
from support.partition import assert_partitioned, check_cuts, horizon_us

from simd.engine import US_PER_SECOND, Stragglers, advance, compile_spec, new_state, retarget, run_job
from simd.engine import servers as srv
from simd.engine.kernel.servers import lifetime_steps
from simd.engine.servers import Servers
from simd.engine.spec import Cause

S = US_PER_SECOND


@pytest.mark.parametrize("servers", [Servers(), Servers(gpus_per_server=4, lemon_multiplier=7.0),
                                     Servers(lemon_fraction=0.003, lemon_multiplier=3.0),  # 0.384 servers: none
                                     Servers(lemon_fraction=0.001, lemon_multiplier=3.0),  # 0.128 servers: none
                                     Servers(lemon_fraction=0.5, lemon_multiplier=1.0)])
def test_identical_exponential_servers_are_the_plain_job_bit_for_bit(servers):
    base = spec(hard_per_gpu_hour=1e-3, seed=7)
    job = replace(base, servers=servers)
    assert compile_spec(job).servers == 0
    assert compile_spec(job).hard_log1m == compile_spec(base).hard_log1m
    got, want = run_job(job), run_job(base)
    assert got == want and got.interruptions > 10


@pytest.mark.parametrize("kind,shape", [("exponential", 1.0), ("weibull", 0.7), ("weibull", 1.5),
                                        ("lognormal", 0.5), ("lognormal", 1.5)])
def test_a_lifetime_has_the_servers_mean(kind, shape):
    """Inverse transforms of a fine grid of uniforms: their mean is 1 / rate (scale large enough that rounding up
    to whole steps adds ~0.5 step in 10**6)."""
    rate = 1e-6
    scale = srv.scale(kind, shape, rate)
    n = 200_000
    u = (np.arange(n) + 0.5) / n
    steps = np.array([lifetime_steps(srv.LIFETIMES.index(kind), shape, scale, x) for x in u.tolist()], dtype=float)
    assert steps.mean() * rate == pytest.approx(1.0, rel=2e-3 if kind != "lognormal" or shape < 1 else 2e-2)
    assert steps.min() >= 1


def test_gamma_multipliers_have_mean_one_and_variance_one_over_the_shape():
    s = spec(n_gpus=8 * 4000, servers=Servers(rate_shape=0.5))
    assert compile_spec(s).servers == 4000
    state, _ = advance(new_state(s), 60 * S)
    m = np.array(state.srv_mult) / srv.MULT_ONE
    assert len(m) == 4000 and m.min() > 0
    assert m.mean() == pytest.approx(1.0, abs=4 * (2.0 / 4000) ** 0.5)  # 4 standard errors
    assert m.var() == pytest.approx(2.0, rel=0.25)
    again, _ = advance(new_state(replace(s, seed=1)), 60 * S)
    assert again.srv_mult != state.srv_mult  # each replica's servers their own


def test_a_drill_keeps_the_servers_rates_and_a_new_shape_draws_them_again():
    s = spec(hard_per_gpu_hour=1e-3, servers=Servers(rate_shape=0.7))
    state, _ = advance(new_state(s), 500 * 60 * S)
    kept = retarget(state, replace(s, ckpt_interval_steps=50))
    assert kept.srv_mult == state.srv_mult and kept.srv_next == state.srv_next
    hot, _ = advance(retarget(state, replace(s, hard_per_gpu_hour=2e-3)), state.clock + 1)
    assert hot.srv_mult == state.srv_mult  # (drawn again: the same draws, the rate is a server's own)
    other, _ = advance(retarget(state, replace(s, servers=Servers(rate_shape=3.0))), state.clock + 1)
    assert other.srv_mult != state.srv_mult


def test_lifetime_edges():
    assert lifetime_steps(0, 1.0, float("inf"), 0.5) == 2**50  # rate 0: never
    assert lifetime_steps(1, 0.7, 0.0, 0.5) == 1  # infinite rate: its first step
    assert lifetime_steps(2, 1.0, 10.0, 1.0) == 2**50  # the normal quantile of 1
    assert lifetime_steps(0, 1.0, 10.0, 1.0) == 1  # -log 1 = 0: at least one step


def test_lemons_fail_more_and_every_failed_server_is_counted():
    base = spec(hard_per_gpu_hour=1e-3, target_steps=3000, seed=3)
    plain = run_job(base)
    lemons = run_job(replace(base, servers=Servers(lemon_fraction=0.25, lemon_multiplier=5.0)))
    assert compile_spec(replace(base, servers=Servers(lemon_fraction=0.25, lemon_multiplier=5.0))).lemons == 32
    assert lemons.interruptions > 1.5 * plain.interruptions  # expected rate x2 (0.75 + 0.25 * 5)
    assert lemons.server_failures >= lemons.interruptions and plain.server_failures == 0


def test_servers_failing_in_one_step_interrupt_once():
    """16 servers whose lifetimes all end in their first step (every GPU fails surely): one interruption per
    executed step, 16 server failures each."""
    s = spec(n_gpus=128, step_seconds=60.0, hard_per_gpu_hour=60.0, target_steps=5, ckpt_interval_steps=5,
             servers=Servers(lifetime="weibull", shape=2.0))
    state, _ = advance(new_state(s), 10 * 60 * S)
    t = state.totals
    assert sum(t.interruptions) == t.steps_executed == 10 * 60 // 120  # each step + its 60 s restart
    assert t.server_failures == 16 * sum(t.interruptions)


def test_a_drill_that_keeps_the_failure_model_keeps_each_servers_lifetime():
    s = spec(hard_per_gpu_hour=1e-3, servers=Servers(lifetime="weibull", shape=0.7))
    state, _ = advance(new_state(s), 500 * 60 * S)
    assert state.lifetimes >= 128 and len(state.srv_next) == 128
    kept = retarget(state, replace(s, ckpt_interval_steps=50))
    assert (kept.lifetimes, kept.srv_next) == (state.lifetimes, state.srv_next)
    renewed = retarget(state, replace(s, hard_per_gpu_hour=2e-3))
    assert (renewed.lifetimes, renewed.srv_next) == (0, ())
    after, _ = advance(renewed, state.clock + 1)  # every server starts a new lifetime at the current step
    assert after.lifetimes == 128 and min(after.srv_next) > state.g


POOLS = Servers(warm_standbys=2, spares=3, preemption_seconds=900.0, repair=("exponential", 36000.0, 0.0))


def test_a_failed_server_goes_to_repair_and_a_standby_then_a_spare_replaces_it():
    """128 servers, 2 standbys (servers 128, 129), 3 spares (130-132): the first failures take the standbys at no
    wait, the next the spares after their preemption, the next wait for a repair; every role accounted for."""
    s = spec(hard_per_gpu_hour=2e-3, target_steps=3000, servers=POOLS, seed=4)
    state, _ = advance(new_state(s), 3000 * 60 * S)
    t, roles = state.totals, state.srv_role
    assert len(roles) == len(state.srv_repair) == len(state.srv_next) == 133
    assert roles.count(srv.JOB) == 128 and roles.count(srv.REPAIR) + roles.count(srv.STANDBY) + \
        roles.count(srv.SPARE) == 5
    assert (t.replacements_standby, t.replacements_spare) >= (2, 3) and t.replacements_waited > 0
    assert t.replacements_standby + t.replacements_spare + t.replacements_waited == t.server_failures
    assert t.waiting_us >= t.replacements_spare * 900 * S  # each spare's preemption, and the waits for repairs
    in_repair = [e for e, r in zip(state.srv_repair, roles, strict=True) if r == srv.REPAIR]
    assert all(e < 2**62 for e in in_repair) and all(e == 2**62 for e, r in zip(state.srv_repair, roles, strict=True)
                                                    if r != srv.REPAIR)
    assert [state.srv_next[i] < 2**62 for i in range(133)] == [r == srv.JOB for r in roles]


def test_host_selection_waits_once_per_interruption_beyond_the_standbys():
    """No standbys and spares enough (preempted at once): every interruption takes a spare and costs exactly one
    host selection in the waiting bucket, whatever servers it replaced; the failures are the same (lifetimes count
    executed steps). With standbys enough, replacements are warm and select no hosts."""
    pools = replace(POOLS, warm_standbys=0, spares=64, preemption_seconds=0.0, repair=("exponential", 600.0, 0.0))
    base = spec(hard_per_gpu_hour=2e-3, target_steps=1000, seed=3, servers=pools)
    host = replace(base, servers=replace(pools, host_selection_seconds=180.0))
    a, b = run_job(base), run_job(host)
    assert a.interruptions == b.interruptions > 0 and a.replacements == b.replacements
    assert a.replacements["waited"] == a.replacements["standby"] == 0 and a.bucket_seconds["waiting"] == 0
    assert b.bucket_seconds["waiting"] == pytest.approx(180.0 * b.interruptions, abs=1e-6)
    assert b.wall_seconds == pytest.approx(a.wall_seconds + 180.0 * b.interruptions, abs=1e-6)
    warm = replace(base, servers=replace(pools, warm_standbys=64, spares=0, host_selection_seconds=180.0))
    assert run_job(warm).bucket_seconds["waiting"] == 0


def test_a_gang_rescheduling_staffs_the_standbys_before_the_restart():
    """Two standbys, spares enough (10 min of preemption each), repairs that never end within the job: under the
    job policy the first two interruptions take the standbys and every later one a spare; re-scheduled as a gang,
    each interruption that takes a spare also staffs the two standbys from the spares (preempted together), so the
    interruptions go standby, standby, spare, standby, standby, spare, ...: one spare and one preemption's wait in
    three, three spares gone each time. The failures are the same (lifetimes count executed steps)."""
    pools = Servers(warm_standbys=2, spares=64, preemption_seconds=600.0, repair=("exponential", 1e12, 0.0))
    base = spec(hard_per_gpu_hour=2e-3, target_steps=1000, seed=3, servers=pools)
    gang = replace(base, servers=replace(pools, gang=True))
    a, b = run_job(base), run_job(gang)
    n = b.interruptions
    assert a.interruptions == n == b.server_failures > 8  # one server per interruption
    assert (a.replacements["standby"], a.replacements["spare"]) == (2, n - 2)
    rescheduled = -(-(n - 2) // 3)
    assert (b.replacements["standby"], b.replacements["spare"], b.replacements["waited"]) == \
        (n - rescheduled, rescheduled, 0)
    assert b.bucket_seconds["waiting"] == pytest.approx(600.0 * rescheduled, abs=1e-6)
    assert a.bucket_seconds["waiting"] == pytest.approx(600.0 * (n - 2), abs=1e-6)
    state, _ = advance(new_state(gang), 10**9 * S, max_jobs=1)
    assert state.srv_role.count(srv.SPARE) == 64 - 3 * rescheduled


def test_a_gang_without_standbys_is_the_job_policy():
    pools = Servers(warm_standbys=0, spares=2, preemption_seconds=600.0, repair=("exponential", 7200.0, 0.0),
                    host_selection_seconds=180.0)
    base = spec(hard_per_gpu_hour=2e-3, target_steps=1000, seed=5, servers=pools)
    assert run_job(replace(base, servers=replace(pools, gang=True))) == run_job(base)


def test_the_job_waits_in_its_own_bucket_and_every_microsecond_is_in_one():
    s = spec(hard_per_gpu_hour=2e-3, target_steps=500, servers=replace(POOLS, warm_standbys=0, spares=0))
    state, _ = advance(new_state(s), 10**6 * S)
    b = state.totals.bucket_us()
    assert b["waiting"] > 0
    assert_partitioned(state)
    assert state.totals.replacements_waited == state.totals.server_failures > 0


def test_a_drill_keeps_the_pools():
    s = spec(hard_per_gpu_hour=2e-3, servers=POOLS)
    state, _ = advance(new_state(s), 800 * 60 * S)
    hot = retarget(state, replace(s, hard_per_gpu_hour=4e-3))
    assert (hot.srv_role, hot.srv_repair, hot.lifetimes, hot.srv_next) == (state.srv_role, state.srv_repair, 0, ())
    after, _ = advance(hot, state.clock + 1)
    assert [n < 2**62 for n in after.srv_next] == [r == srv.JOB for r in state.srv_role]


def test_any_cut_of_time_gives_the_same_state():
    s = spec(hard_per_gpu_hour=2e-3, target_steps=500,
             servers=Servers(lemon_fraction=0.1, lemon_multiplier=4.0, lifetime="lognormal", shape=1.0))
    horizon = 3000 * 60 * S
    whole, ev = advance(new_state(s), horizon, trace=True)
    state, events = new_state(s), []
    for cut in range(1, 40):
        state, e = advance(state, horizon * cut // 40 + 7, trace=True)
        events += e
    state, e = advance(state, horizon, trace=True)
    assert state == whole and events + e == ev and whole.totals.jobs_completed >= 2


def test_diagnosis_and_retirement_keep_the_books():
    """Imperfect diagnosis and retirement at the first blame: every failure is missed or blames a server that is
    replaced; a blamed server is repaired or retired; retirement stops at the job's servers (128 of 133)."""
    s = spec(hard_per_gpu_hour=2e-3, target_steps=3000, seed=7, servers=replace(
        POOLS, lemon_fraction=0.1, lemon_multiplier=5.0, diagnosis=0.7, misattribution=0.4, retire_after=1,
        retire_window_seconds=1e6, repair=("exponential", 600.0, 0.0)))
    state, _ = advance(new_state(s), 3000 * 60 * S)
    t, roles = state.totals, state.srv_role
    replaced = t.replacements_standby + t.replacements_spare + t.replacements_waited
    assert t.diagnosis_missed > 10 and t.diagnosis_wrong > 10
    assert replaced == t.repairs_started + t.retirements <= t.server_failures - t.diagnosis_missed
    assert roles.count(srv.JOB) == 128 and roles.count(srv.RETIRED) == t.retirements == 5
    assert len(state.srv_blamed) == 133 and sum(b > 0 for b in state.srv_blamed) >= 5


def test_retirement_needs_k_blames_within_the_window():
    """Two blames within 10 simulated minutes never happen at this rate (a server fails every ~8 h): none is
    retired; within ~12 days most repeat offenders are."""
    base = dict(hard_per_gpu_hour=2e-3, target_steps=3000, seed=7)
    never = spec(**base, servers=replace(POOLS, retire_after=2, retire_window_seconds=600.0))
    soon = spec(**base, servers=replace(POOLS, retire_after=2, retire_window_seconds=1e6))
    t_never = advance(new_state(never), 3000 * 60 * S)[0].totals
    t_soon = advance(new_state(soon), 3000 * 60 * S)[0].totals
    assert t_never.retirements == 0 and t_soon.retirements > 0


def test_the_census_counts_ended_repairs_in_the_pools():
    """servers.census: two replicas of a 3-server job with 1 standby and 2 spares at clock 100: replica 0 has a
    repair that ended (back to the standbys, which are empty), one still in the manual stage; replica 1 is not
    laid out yet."""
    J, P, A, M, X = srv.JOB, srv.SPARE, srv.REPAIR, srv.REPAIR_MANUAL, srv.RETIRED
    roles = np.array([[J, J, J, A, M, X], [0, 0, 0, 0, 0, 0]])
    ends = np.array([[0, 0, 0, 90, 500, 0], [0] * 6])
    by_state, exhausted = srv.census(1, 3, roles, ends, np.array([100, 0]))
    assert dict(zip(srv.STATES, by_state, strict=True)) == {
        "job": 6, "standby": 2, "spare": 2, "withheld": 0, "repair_automatic": 0, "repair_manual": 1, "retired": 1}
    assert exhausted == 0
    roles[0, 3] = P
    assert srv.census(1, 3, roles, ends, np.array([50, 0]))[0][1:3] == (1, 3)  # (the spare, the fresh replica's)
    roles[0, 3], ends[0, 3] = A, 90
    assert srv.census(1, 3, roles, ends, np.array([50, 0])) == ((6, 1, 2, 0, 1, 1, 1), 1)  # replica 0 has none left
    roles[0, 3] = P
    assert srv.census(1, 3, roles, ends, np.array([50, 0]), withheld=1) == ((6, 1, 1, 2, 0, 1, 1), 1)


def test_bursts_strike_several_servers_at_once_and_a_drill_draws_them_afresh():
    """A burst strikes 2 + geometric servers (or a 4-server domain) in one step: one interruption, each struck
    server counted as failed; a drill (retarget) draws the next burst from the current step under the new rate,
    the replicas' batch as core does."""
    from simd.engine import advance_replicas, new_replicas, retarget_replicas

    for servers in (Servers(burst_per_day=20.0, burst_mean_size=4.0), Servers(burst_per_day=20.0, burst_domain=4,
                                                                              warm_standbys=2, spares=2,
                                                                              repair=("exponential", 600.0, 0.0))):
        s = spec(hard_per_gpu_hour=1e-4, target_steps=3000, servers=servers, seed=3)
        state, _ = advance(new_state(s), 3000 * 60 * S)
        t = state.totals
        assert t.burst_events > 10 and t.burst_servers >= 2 * t.burst_events - 5
        assert t.server_failures >= t.burst_servers and sum(t.interruptions) < t.server_failures
        hot = replace(s, servers=replace(servers, burst_per_day=60.0))
        one = retarget(state, hot)
        assert one.burst_at == state.g and one.burst_draws == state.burst_draws
        batch = retarget_replicas(advance_replicas(new_replicas(s, [3, 4]), 3000 * 60 * S), hot)
        assert batch[0] == one
        later = advance_replicas(batch, 6000 * 60 * S)
        assert later[0] == advance(one, 6000 * 60 * S)[0]
        assert later[0].totals.burst_events - t.burst_events > 2 * t.burst_events  # 3x the rate


REPLAY = ((100.0, 1000.0, 1010.0), (100.0,), (), (2500.0,))  # per log server: fault starts (s); span 3000 s


def _replayed_steps(times, step, period, servers, until):
    """Per cluster server, its replayed fault steps up to ``until``, straight from the rules (servers.py) and the
    log's times: log server i mod N's faults at ceil(t / step), shifted by (i div N) / C of the period (C copies),
    repeating with the period."""
    n = len(times)
    copies = -(-servers // n)
    out = []
    for i in range(servers):
        phase = (i // n) * period // copies
        faults = {max(1, math.ceil(t / step)) for t in times[i % n]}
        out.append(sorted(f + m * period + phase for f in faults for m in range(-1, until // period + 1)
                          if 1 <= f + m * period + phase <= until))
    return out


def test_a_replayed_log_interrupts_the_job_exactly_at_its_faults():
    """5 servers replay a log of 4 (server 4 is log server 0's second copy, shifted by half the 50-step period):
    the job's interruptions are exactly the distinct executed steps that hold a fault of one of its servers (two
    faults in one step, 1000 s and 1010 s, or two servers at 100 s: one interruption), its server failures every
    fault; any cut of time gives the same."""
    s = spec(n_gpus=40, step_seconds=60.0, target_steps=300, ckpt_interval_steps=10, validation_interval_steps=0,
             hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0,
             servers=Servers(replay=REPLAY, replay_span_seconds=3000.0))
    plan = compile_spec(s)
    assert (plan.replay_servers, plan.replay_period, plan.replay_copies) == (4, 50, 2)
    assert plan.replay == (0, 2, 3, 3, 4, 2, 17, 2, 42)  # offsets, then steps: ceil(1000/60) = ceil(1010/60) = 17
    whole, events = advance(new_state(s), 10**12, max_jobs=1, trace=True)
    per_server = _replayed_steps(REPLAY, 60.0, 50, 5, whole.g)
    assert per_server[4] == [x + 25 for x in per_server[0] if x + 25 <= whole.g]  # the shifted copy
    assert sum(whole.totals.interruptions) == len(set().union(*per_server)) > 10
    assert whole.totals.server_failures == sum(len(p) for p in per_server)
    assert sum(e.kind == "interruption" for e in events) == sum(whole.totals.interruptions)
    state = new_state(s)
    for cut in range(1, 30):
        state, _ = advance(state, whole.clock * cut // 30 + 11, max_jobs=1)
    assert advance(state, 10**12, max_jobs=1)[0] == whole


def test_a_replayed_log_with_bursts_keeps_its_faults():
    """Bursts beside a replayed log: the plan keeps the log's table and the bursts' rate, and the job meets every
    fault the log gives its servers as the log alone does, plus the bursts' (bursts far apart: each strikes two
    servers, who then replay the log on)."""
    base = Servers(replay=REPLAY, replay_span_seconds=3000.0)
    alone = spec(n_gpus=40, step_seconds=60.0, target_steps=300, ckpt_interval_steps=10, validation_interval_steps=0,
                 hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0, servers=base)
    both = replace(alone, servers=replace(base, burst_per_day=0.5, burst_mean_size=2.0))
    a, b = compile_spec(alone), compile_spec(both)
    assert (b.replay, b.replay_servers, b.replay_period, b.replay_copies) == \
        (a.replay, a.replay_servers, a.replay_period, a.replay_copies)
    assert b.burst_log1m < 0.0 and a.burst_log1m == 0.0
    whole = advance(new_state(both), 10**12, max_jobs=1)[0]
    per_server = _replayed_steps(REPLAY, 60.0, 50, 5, whole.g)
    assert whole.totals.burst_events >= 1
    assert whole.totals.server_failures >= sum(len(p) for p in per_server) + whole.totals.burst_servers - \
        whole.totals.burst_events * 2  # every replayed fault of the run, the bursts' servers on top (at most a
    # burst's pair coinciding with a fault of its step)


def test_a_replayed_log_repairs_its_servers_in_its_own_times():
    """`replay.repairs: log` (servers.Servers.replay_repairs): with no standby the job waits for each failed server's
    repair, and the waiting is the same as a repair model of that fixed length where every logged repair has it
    (two faults in one step: the longer repair, 5000 s, the server down until the last ends), whatever the model
    says; a repair the log leaves open takes the model's, so such a log waits between the model's and the log's."""
    log = ((550.0, 600.0, 30_000.0),)  # the first two in one step, the 10th

    def waiting(repairs, model_seconds):
        s = spec(n_gpus=8, step_seconds=60.0, target_steps=1000, ckpt_interval_steps=10, validation_interval_steps=0,
                 hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0, servers=Servers(
                     replay=log, replay_span_seconds=86_400.0, replay_repairs=repairs, warm_standbys=0,
                     repair=("lognormal", model_seconds, 0.0)))
        return run_job(s).bucket_seconds["waiting"]

    logged = waiting(((1000.0, 5000.0, 5000.0),), 100.0)
    assert logged == waiting((), 5000.0) > 2 * 4000.0
    assert compile_spec(spec(n_gpus=8, servers=Servers(replay=log, replay_span_seconds=86_400.0, replay_repairs=(
        (1000.0, 5000.0, 5000.0),), warm_standbys=0, repair=("lognormal", 100.0, 0.0)))).replay_repair_us == (
        5e9, 5e9)
    assert waiting((), 100.0) < waiting(((1000.0, 5000.0, float("nan")),), 100.0) < logged


def test_bursts_under_stragglers_are_the_same_whatever_the_cut():
    """The burst picks' counter once shared its name with the straggler sampler's bucket in the kernel: under
    stragglers a cut call then seeked the picks' stream elsewhere (hypothesis found it: a cut at time 0 struck
    other servers)."""
    s = spec(n_gpus=3, step_seconds=30.0, target_steps=20, hard_per_gpu_hour=0.0, ckpt_interval_steps=1,
             validation_interval_steps=0, seed=0, stragglers=Stragglers(0.5, 1, 1.3),
             servers=Servers(gpus_per_server=1, burst_per_day=20.0))
    horizon = int(129 * 30 * S * 1.7)
    whole, _ = advance(new_state(s), horizon)
    cut, _ = advance(advance(new_state(s), 0)[0], horizon)
    assert whole.totals.burst_events >= 1 and cut == whole


def test_the_loop_lays_the_cluster_out_by_the_one_rule():
    """kernel.servers.start_role (the loop's) and servers.start_roles (the oracle's and the census's) agree."""
    from simd.engine.kernel.servers import start_role

    for n in range(0, 14):
        for job in range(0, n + 1):
            for standbys in range(0, n - job + 1):
                assert [start_role(i, job, standbys) for i in range(n)] == \
                    srv.start_roles(job, standbys, n).tolist()


def test_the_counted_pick_of_a_job_server_is_the_walks_pick():
    """The kernel picks the r-th job server (a burst's, a misdiagnosis's scapegoat) from a count tree of the job's
    servers in O(log n), where a walk over the roles took O(n) per pick (a burst of 10,000 servers of a 65,536-server
    job held a tick for seconds): the same server for every rank, skip and layout of roles."""
    from simd.engine.kernel import servers as ks

    rng = np.random.default_rng(5)
    for n in (1, 2, 3, 7, 64, 100):
        p = 1 << max(0, (n - 1).bit_length())
        role = rng.choice([ks.JOB, ks.STANDBY, ks.SPARE, ks.REPAIR, ks.RETIRED], size=n).astype(np.int64)
        cnt = np.empty(2 * p, dtype=np.int64)
        ks.build_jobs(cnt, role, n, p)
        for _ in range(3):
            i = int(rng.integers(n))
            role[i] = ks.JOB if role[i] != ks.JOB else ks.RETIRED
            ks.set_job(cnt, i, 1 if role[i] == ks.JOB else 0, p)
            jobs = int((role == ks.JOB).sum())
            for skip in (-1, *range(n)):
                for r in range(jobs + 2):
                    assert ks.nth_job_counted(role, cnt, jobs, r, p, skip) == ks.nth_job(role, jobs, r, skip)


def _cut_by_budget(s, limit: int):
    """Replicas 2, 3 and 4 of ``s`` over three times its compute: (one uncut call's states, the states of calls cut
    by a work budget of ``limit`` one after another, how many calls); every cut call leaves the replicas at one
    clock, having done work."""
    from simd.engine import advance_replicas, new_replicas
    from simd.engine.layout import Pos

    until = 3 * s.target_steps * int(s.step_seconds) * S
    budget = np.array([limit, 1000, 15, 500, 750, 20], dtype=np.int64)
    whole = advance_replicas(new_replicas(s, [2, 3, 4]), until)
    states, calls = new_replicas(s, [2, 3, 4]), 0
    while states[0].clock < until:
        states = advance_replicas(states, until, budget=budget)
        clocks = states.batch.pos[:, Pos.clock]
        assert (clocks == clocks[0]).all() and states.batch.work > 0
        calls += 1
    return whole, states, calls


@pytest.mark.parametrize("limit", [0, 3_000, 40_000])
def test_calls_cut_by_a_work_budget_give_the_uncut_states_bit_for_bit(limit):
    """advance_replicas with a budget stops each replica once it has spent its limit of work, at the end of a unit,
    and every replica at the earliest clock: calls cut so, one after another, reach the states of one uncut call,
    bit for bit, with bursts, pools, retirement and misdiagnosis (the work model's weights: loop.BUDGET_FIELDS)."""
    servers = Servers(burst_per_day=60.0, burst_mean_size=12.0, warm_standbys=5, spares=7, diagnosis=0.8,
                      misattribution=0.3, retire_after=1, retire_window_seconds=1e6,
                      repair=("exponential", 3600.0, 0.0))
    s = spec(hard_per_gpu_hour=3e-4, target_steps=800, servers=servers, seed=2)
    whole, states, calls = _cut_by_budget(s, limit)
    assert tuple(states) == tuple(whole) and whole[0].totals.burst_events > 5 and whole[0].totals.retirements > 0
    assert calls > (1 if limit > 10_000 else 10)  # the budget did cut


@pytest.mark.parametrize("limit", [0, 3_000])
def test_elastic_groups_on_servers_cut_by_a_work_budget_give_the_uncut_states(limit):
    """The budget's cut (above) with elastic replica groups on the same servers (8 groups of 16, at least 4 running):
    a drop's decision draws a burst's servers without striking them, so a cut before its unit changes nothing."""

    servers = Servers(burst_per_day=60.0, burst_mean_size=12.0, warm_standbys=5, spares=7, diagnosis=0.8,
                      misattribution=0.3, retire_after=1, retire_window_seconds=1e6,
                      repair=("exponential", 3600.0, 0.0))
    s = spec(hard_per_gpu_hour=3e-4, target_steps=800, servers=servers, seed=2, elastic_groups=8,
             elastic_min_groups=4, elastic_replace_seconds=600.0, elastic_heal_seconds=900.0,
             causes=(Cause("hardware", 1.0, 0.0, 60.0, elastic=True),))
    whole, states, calls = _cut_by_budget(s, limit)
    assert tuple(states) == tuple(whole) and calls > 10
    assert whole[0].totals.elastic_drops > 5 and whole[0].totals.elastic_rejoins > 0
    assert whole[0].totals.interruptions[0] > 0 and whole[0].totals.burst_events > 5


def test_a_mixtures_one_uniform_picks_the_component_and_its_quantile():
    """kernel.late.mixture_us: the first component whose cumulative weight reaches u, its time the inverse
    transform of u's place within it (in (0, 1], never 0: an exponential of -log(0) would be endless)."""
    from simd.engine.kernel.late import mixture_us
    from simd.engine.late import latency_us

    cum, kinds = np.array([0.25, 0.75, 1.0]), np.array([0, 1, 2])
    scales, sigmas = np.array([1e6, 2e6, 3e6]), np.array([0.0, 1.5, 0.0])
    for u, j, v in ((0.1, 0, 0.4), (0.25, 0, 1.0), (0.5, 1, 0.5), (0.75, 1, 1.0), (0.8, 2, 0.2), (1.0, 2, 1.0)):
        expected = latency_us(("exponential", "lognormal", "uniform")[j], scales[j], sigmas[j], v)
        assert mixture_us(cum, kinds, scales, sigmas, u) == pytest.approx(expected, abs=1), (u, j)
    just_past = np.nextafter(0.25, 1.0)
    assert 0 < mixture_us(cum, kinds, scales, sigmas, just_past) < 10  # the lognormal's lowest quantile
    assert mixture_us(np.array([1.0]), kinds[:1], scales[:1], sigmas[:1], 1e-300) > 0


def test_repairs_of_a_mixture_have_its_mean():
    """No pools: the job waits for each failed server's own repair, so the waiting time over the failures is the
    mixture's mean (0.5 x 600 s + 0.5 x 36,000 s = 18,300 s; standard deviation 31,000 s), where either component
    alone is far from it."""
    mixture = ((0.5, "exponential", 600.0, 0.0), (0.5, "exponential", 36000.0, 0.0))
    s = spec(n_gpus=64, hard_per_gpu_hour=0.015, target_steps=20000, seed=7,
             servers=Servers(warm_standbys=0, repair_mixture=mixture))
    state, _ = advance(new_state(s), 10**15)
    t = state.totals
    per_failure = t.waiting_us / US_PER_SECOND / t.server_failures
    assert t.server_failures > 300 and abs(per_failure - 18300) < 4 * 31000 / math.sqrt(t.server_failures)


@pytest.mark.parametrize("kind,shape", [("weibull", 0.7), ("lognormal", 1.0)])
def test_operational_time_at_multiplier_one_is_the_servers_own_clock_bit_for_bit(kind, shape):
    """Regimes and a schedule whose multipliers are all 1: every executed step adds 1 to a server's operational age,
    so each lifetime ends in the step it ends in without them (the regime path drawn and walked, nothing changed)."""
    base = spec(n_gpus=64, hard_per_gpu_hour=0.01, seed=3)
    plain = replace(base, servers=Servers(lifetime=kind, shape=shape, rate_shape=1.5))
    timed = replace(base, servers=Servers(lifetime=kind, shape=shape, rate_shape=1.5,
                                          regimes=((1.0, 0.2), (1.0, 0.05)), rate_schedule=((0.0, 1.0), (0.5, 1.0))))
    assert compile_spec(timed).regimes
    got, want = run_job(timed), run_job(plain)
    assert got == want and got.interruptions > 10


def test_a_rate_schedule_changes_the_failures_by_the_jobs_compute_time():
    """A schedule that stops the failures for the job's first day of compute (multiplier 0), then fails at three
    times the rate: no server fails in the first day's steps, and the rest fail about three times as often."""
    base = spec(n_gpus=64, hard_per_gpu_hour=0.01, target_steps=6000, seed=4)
    job = replace(base, servers=Servers(lifetime="weibull", shape=1.0, rate_schedule=((0.0, 0.0), (1.0, 3.0))))
    first_day, _ = advance(new_state(job), 86400 * S)  # (its steps all of the first day's compute)
    assert first_day.g > 1000 and first_day.totals.server_failures == 0
    state, _ = advance(first_day, 10**15, max_jobs=1)
    steady = run_job(replace(base, servers=Servers(lifetime="weibull", shape=1.0)))
    assert state.totals.server_failures > 2 * steady.server_failures


def test_a_drill_keeps_the_regime_path_when_the_servers_keep_their_lifetimes():
    """A retarget that keeps the failure model keeps the regime cursor (the path is the replica's world), and one
    that changes it walks the same path again from its start (the stream is not renewed)."""
    job = replace(spec(n_gpus=64, hard_per_gpu_hour=0.01, seed=5),
                  servers=Servers(lifetime="weibull", shape=0.8, regimes=((0.3, 0.1), (4.0, 0.05))))
    state, _ = advance(new_state(job), 40 * 3600 * S)
    assert state.regime and state.regime[0] > 1
    kept = retarget(state, replace(job, sdc_per_gpu_hour=job.sdc_per_gpu_hour * 2))
    assert kept.regime == state.regime
    redrawn = retarget(state, replace(job, hard_per_gpu_hour=0.02))
    assert redrawn.regime == () and redrawn.lifetimes == 0
    later, _ = advance(redrawn, state.clock + 3600 * S)
    assert later.regime[0] >= state.regime[0]  # the same path, walked again to the current step


def test_a_small_fitted_frailty_beside_regimes_walks_no_further_than_the_horizon():
    """InfiniteHBD's joint fit (simd trace fit --joint-regimes: a frailty of shape 0.39, Weibull 0.32, storms of 50
    minutes in calm of 2.8 days): some gamma multipliers fall below 1e-8, lifetimes of ~1e14 operational steps,
    whose walk over the regime stretches (a few thousand steps each) would take ~1e11 stretches. A lifetime that
    cannot end within kernel.servers.REGIME_HORIZON executed steps is never (no walk), so the job runs; any cut of
    time gives the same state (the regime cursor and the servers' ends)."""
    from simd.engine.kernel.servers import REGIME_HORIZON

    job = replace(spec(n_gpus=3200, step_seconds=60.0, hard_per_gpu_hour=2.5e-6, target_steps=3000, seed=8),
                  servers=Servers(lifetime="weibull", shape=0.3231, rate_shape=0.3876,
                                  regimes=((0.78, 2.78), (18.6, 0.0344))))
    state, _ = advance(new_state(job), 10**15, max_jobs=1)
    ends = np.asarray(state.srv_next)
    never = 1 << 50  # (a lifetime's end then: its start + 2**50, kernel.draws.GAP_CAP)
    assert state.totals.server_failures > 0 and (ends >= never).any()  # some lifetimes never end
    assert not ((ends > state.g + REGIME_HORIZON + 10**6) & (ends < never)).any()  # (a stretch past it at most)
    rng = random.Random(2)
    check_cuts(job, horizon_us(job, 3000), [rng.random() for _ in range(300)])
