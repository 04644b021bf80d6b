"""Elastic replica groups (docs/model.md, "Elastic replica groups"): an exact case by hand, the degraded bucket only
where there are groups, the combinations refused, and the job without the keys unchanged."""

from dataclasses import replace

import pytest
from specs import spec

from simd.engine import US_PER_SECOND, Cause, advance, new_state, run_job
from simd.engine.servers import Servers
from simd.engine.spec import REFUSED, MemoryTier, Stragglers, compile_spec

S = US_PER_SECOND
# a failure in every step (probability 1 per GPU and step): one cause, noticed at once, restarted in 60 s, that drops
# its group; two groups, one must run
EVERY_STEP = spec(n_gpus=8, step_seconds=10.0, target_steps=100, hard_per_gpu_hour=360.0, sdc_per_gpu_hour=0.0,
                  ckpt_interval_steps=5, validation_interval_steps=0, restart_seconds=60.0,
                  causes=(Cause("gpu", 1.0, 0.0, 60.0, elastic=True),), elastic_groups=2, elastic_min_groups=1,
                  elastic_replace_seconds=1000.0, elastic_heal_seconds=1000.0)


def test_a_failure_in_every_step_alternates_a_drop_and_a_restart_with_the_group_out():
    """Step 1 on both groups fails: its group dropped, the step's work lost (rollback), no restart; the step again on
    the one group left (half its compute degraded) fails: one group must run, so the cause's restart, which brings
    both back. Each pair of units: two steps of 10 s, the restart's 60 s, 5 s degraded."""
    state, _ = advance(new_state(EVERY_STEP), 8 * 80 * S)
    t = state.totals
    assert (t.elastic_drops, sum(t.interruptions), t.elastic_rejoins) == (8, 8, 0)
    assert t.bucket_us() == {"productive": 0, "rollback": 8 * 15 * S, "checkpoint": 0, "validation": 0,
                             "restart": 8 * 60 * S, "detection": 0, "straggler": 0, "shadow": 0, "waiting": 0,
                             "degraded": 8 * 5 * S}
    assert (t.steps_executed, t.steps_recomputed, state.step, state.rejoin) == (16, 16, 0, (0, 0))


def test_a_dropped_group_rejoins_at_the_first_step_from_its_rejoin_time():
    """Without failures after the first drop: the group out 2,000 s after its failure (replacement, heal), the steps
    that start before then run on one group of two (half of each degraded), those from then on both, and the
    fault-tolerant mode's 1% overhead on every step is degraded too."""
    s = replace(EVERY_STEP, hard_per_gpu_hour=0.0, elastic_overhead=0.01, ckpt_seconds=0.0, target_steps=1000)
    state = replace(new_state(s), rejoin=(0, 1000 * S))  # a group out, rejoining at 1,000 s
    state, _ = advance(state, 2000 * S)
    t = state.totals
    # steps of 10.1 s: step 100 starts at 999.9 s, on one group; from step 101 (at 1,010 s) both; step 198 ends at
    # 1,999.8 s; the checkpoints every 5 steps commit the steps to 195, the 3 after it pending
    assert t.elastic_rejoins == 1 and state.rejoin == (0, 0) and t.steps_executed == 198
    assert t.degraded_us == 100 * 5 * S + 198 * S // 10
    assert t.productive_us == 100 * 5 * S + 95 * 10 * S and state.pending_us == 3 * 10 * S


def test_the_degraded_bucket_only_with_elastic_groups_and_the_job_without_them_unchanged():
    plain = spec(target_steps=300, hard_per_gpu_hour=1e-3)
    assert "degraded" not in run_job(plain).bucket_seconds
    zero = replace(plain, elastic_groups=0, elastic_replace_seconds=5.0, elastic_overhead=0.1,
                   causes=(Cause("hardware", 1.0, 0.0, 60.0, elastic=True),))
    assert run_job(replace(plain, causes=(Cause("hardware", 1.0, 0.0, 60.0),))) == run_job(zero)
    job = run_job(replace(plain, elastic_groups=4, hard_per_gpu_hour=0.0))
    assert job.bucket_seconds["degraded"] == 0.0 and job.elastic == {"drops": 0, "rejoins": 0,
                                                                      "overhead_seconds": 0.0}


@pytest.mark.parametrize("other", [dict(migration_seconds=30.0, servers=Servers(gpus_per_server=8, warm_standbys=1),
                                        causes=(Cause("hardware", 1.0, 0.0, 60.0, predicted=0.5),)),
                                   dict(tier=MemoryTier("local", 5, 2.0, 10.0)), dict(ckpt_write_seconds=30.0),
                                   dict(ckpt_save_failure=0.1), dict(ckpt_corrupt_on_load=0.1, ckpt_retention=3)])
def test_combinations_not_modelled_are_refused_naming_both(other):
    refusal = r"^recovery\.elastic and [a-z_.]+( \(or [a-z_.]+\))? cannot be combined \(elastic replica groups with"
    with pytest.raises(ValueError, match=refusal):
        compile_spec(spec(elastic_groups=4, **other))
    assert all(("elastic", o) in REFUSED for o in ("migration", "shadow", "fleet", "hyper",
                                                    "committed_sdc", "memory_tier", "jit", "async_saves"))


def test_with_servers_the_job_s_servers_are_a_multiple_of_the_groups():
    with pytest.raises(ValueError, match=r"the job's servers \(125\) must be a multiple of the elastic replica groups "
                                         r"\(4\)"):
        compile_spec(spec(n_gpus=1000, elastic_groups=4, servers=Servers(gpus_per_server=8, warm_standbys=1)))
    compile_spec(spec(n_gpus=1024, elastic_groups=4, servers=Servers(gpus_per_server=8, warm_standbys=1)))


def test_a_retarget_brings_the_rejoins_no_later_than_the_new_rejoin_from_now_alike_for_replicas():
    """A drill's endless heal ends with it: at a retarget every group out rejoins at the latest the new parameters'
    replace + heal from the retarget's time; the replicas' arrays give what core gives each State."""
    from simd.engine import retarget, with_seed
    from simd.engine.replicas import advance_replicas, new_replicas, retarget_replicas

    s = spec(target_steps=10**6, hard_per_gpu_hour=2e-4, sdc_per_gpu_hour=0.0,
             causes=(Cause("gpu", 1.0, 0.0, 60.0, elastic=True),), elastic_groups=8, elastic_min_groups=1,
             elastic_replace_seconds=600.0, elastic_heal_seconds=1e6)
    states = advance_replicas(new_replicas(s, [0, 1, 2]), 20 * 3600 * S)
    assert sum(r > 0 for x in states for r in x.rejoin) >= 3  # groups out, none back yet
    short = replace(s, elastic_heal_seconds=900.0)
    alone = tuple(retarget(x, with_seed(short, x.plan.spec.seed)) for x in states)
    assert retarget_replicas(states, short) == alone
    assert all(r == 0 or 0 < r <= 20 * 3600 * S + 1500 * S for x in alone for r in x.rejoin)
    assert advance_replicas(retarget_replicas(states, short), 21 * 3600 * S) == \
        tuple(advance(x, 21 * 3600 * S)[0] for x in alone)
    with pytest.raises(ValueError, match="retarget cannot change the elastic replica groups"):
        retarget(states[0], replace(s, elastic_groups=4))


def test_on_servers_a_retarget_keeps_a_group_out_until_its_replacement_is_ready_alike_for_replicas():
    """With servers the cap of a retarget is from the group's last replacement, not from now: groups of one server
    with no pools to take from wait for repairs of ~11 days; a heal cut to 900 s brings each back 1,500 s after its
    repair (State.group_ready), or sooner if its rejoin was, and the replicas' arrays give what core gives."""
    from simd.engine import retarget, with_seed
    from simd.engine.replicas import advance_replicas, new_replicas, retarget_replicas

    s = spec(n_gpus=64, target_steps=10**6, hard_per_gpu_hour=2e-3, sdc_per_gpu_hour=0.0,
             causes=(Cause("gpu", 1.0, 0.0, 60.0, elastic=True),), elastic_groups=8, elastic_min_groups=1,
             elastic_replace_seconds=600.0, elastic_heal_seconds=1e6,
             servers=Servers(warm_standbys=0, repair=("exponential", 1e6, 0.0)))
    now = 40 * 3600 * S
    states = advance_replicas(new_replicas(s, [0, 1, 2]), now)
    out = [(r, x) for st in states for r, x in zip(st.rejoin, st.group_ready, strict=True) if r]
    assert len(out) >= 3 and any(x > now for _, x in out)  # groups out, some waiting for a repair
    short = replace(s, elastic_heal_seconds=900.0)
    alone = tuple(retarget(x, with_seed(short, x.plan.spec.seed)) for x in states)
    assert retarget_replicas(states, short) == alone
    for before, after in zip(states, alone, strict=True):
        for r0, x, r1 in zip(before.rejoin, before.group_ready, after.rejoin, strict=True):
            assert r1 == min(r0, max(now, x) + 1500 * S)
    assert advance_replicas(retarget_replicas(states, short), 41 * 3600 * S) == \
        tuple(advance(x, 41 * 3600 * S)[0] for x in alone)


def test_under_stragglers_each_drawn_step_splits_its_base_compute_and_pays_the_overhead():
    """The rejoin case above with each step's duration drawn (stragglers): a step that starts before the rejoin time
    runs on one group of two (half its base compute degraded), the later ones on both; every step lasts its drawn
    time plus the mode's overhead (degraded); the time above the base step time is the straggler bucket's whole."""
    s = replace(EVERY_STEP, hard_per_gpu_hour=0.0, elastic_overhead=0.01, ckpt_seconds=0.0, target_steps=1000,
                stragglers=Stragglers(jitter_seconds=0.5))
    state = replace(new_state(s), rejoin=(0, 1000 * S))
    state, _ = advance(state, 2000 * S)
    t = state.totals
    durations = [int(d) for d in state.plan.step_times.durations(0, 400, 0)[0]]
    base, ovh = 10 * S, S // 10
    ends, at = [], 0
    for d in durations:  # each step's end while it fits in the 2,000 s
        if at + d + ovh > 2000 * S:
            break
        at += d + ovh
        ends.append(at)
    n = len(ends)
    before = sum(1 for e in [0, *ends[:-1]] if e < 1000 * S)  # the steps that start before the rejoin
    assert t.elastic_rejoins == 1 and state.rejoin == (0, 0) and t.steps_executed == n and state.clock == 2000 * S
    assert t.degraded_us == before * base // 2 + n * ovh
    assert t.straggler_us == sum(durations[:n]) - n * base
    assert t.productive_us + state.pending_us == before * base // 2 + (n - before) * base
