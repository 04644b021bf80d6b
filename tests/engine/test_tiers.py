"""A memory tier under the persistent checkpoint (JobSpec.tier, MemoryTier; docs/model.md, "Memory tiers") and
just-in-time saves (Cause.jit, JobSpec.jit_seconds): exact cases. The oracle, Gemini's closed form and the
partitions: tests/engine/statistical/test_tier_oracle.py, test_jit_oracle.py."""

from dataclasses import replace

import pytest
from specs import spec

from simd.engine import Cause, run_job
from simd.engine.servers import Servers
from simd.engine.spec import CommittedSdc, Detector, MemoryTier


def test_without_failures_the_tier_saves_between_the_checkpoints_and_costs_its_blocking():
    """3,000 steps, a checkpoint every 25 (300 s), the tier every 5 (2 s): 600 lattice points of which 120 are the
    checkpoint's (it stands for the tier there)."""
    base = spec(hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0)
    j = run_job(replace(base, tier=MemoryTier("local", 5, 2.0, 10.0)))
    plain = run_job(base)
    assert j.tier == {"saves": 480, "losses": 0, "recoveries_tier": 0, "recoveries_persistent": 0,
                      "recoveries_start": 0, "loads_corrupt": 0}
    assert j.checkpoints == plain.checkpoints == 120
    assert j.bucket_seconds["checkpoint"] == plain.bucket_seconds["checkpoint"] + 480 * 2.0
    assert j.wall_seconds == plain.wall_seconds + 960.0 and plain.tier == {}


@pytest.mark.parametrize("base", [
    spec(hard_per_gpu_hour=6e-4, sdc_per_gpu_hour=0.0, ckpt_load_seconds=93.6),
    spec(n_gpus=64, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.0, ckpt_load_seconds=93.6,
         servers=Servers(warm_standbys=1, spares=1, repair=("exponential", 7200.0, 0.0), burst_per_day=4.0)),
    spec(hard_per_gpu_hour=4e-4, sdc_per_gpu_hour=0.0, ckpt_write_seconds=700.0, ckpt_write_slowdown=1.2,
         ckpt_save_failure=0.2, ckpt_corrupt_on_load=0.3, ckpt_retention=2, ckpt_load_seconds=93.6),
], ids=["plain", "pools_bursts", "async_failing_corrupt"])
def test_a_free_tier_every_failure_loses_changes_nothing(base):
    """A local tier that costs nothing to save, without SDCs (which would roll back to it): every hard failure takes
    it, so every recovery is the persistent one's, at the same times, and each step is productive once (the steps
    committed at the tier's saves and recomputed after a loss are rollback time, not productive again)."""
    for seed in range(3):
        s = replace(base, seed=seed)
        j, plain = run_job(replace(s, tier=MemoryTier("local", 5, 0.0))), run_job(s)
        assert j.tier["losses"] == j.interruptions > 0 and j.tier["recoveries_tier"] == 0
        assert replace(j, tier={}) == plain


def test_a_peer_tier_survives_single_failures_and_the_recoveries_load_from_it():
    """Servers failing one at a time (no bursts): a peer group of 2 always keeps a copy; a recovery loads the
    tier's checkpoint unless the persistent one is as new (no tier save since it)."""
    base = spec(n_gpus=64, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.0, ckpt_load_seconds=93.6,
                servers=Servers(), tier=MemoryTier("peer", 5, 2.0, 10.0, copies=2))
    j = run_job(base)
    t = j.tier
    assert t["losses"] == 0 and t["recoveries_tier"] > 0.6 * j.interruptions
    assert t["recoveries_tier"] + t["recoveries_persistent"] + t["recoveries_start"] == j.interruptions
    local = run_job(replace(base, tier=MemoryTier("local", 5, 2.0, 10.0)))
    assert local.tier["losses"] == local.interruptions and local.tier["recoveries_tier"] == 0
    assert j.recompute_steps < local.recompute_steps


def test_a_failure_saved_just_in_time_loses_only_the_step_in_flight():
    """Every cause saved just in time, no SDC: each rollback recomputes exactly the failed step (the save holds the
    step before it, or the newest checkpoint already is that step); the saves cost their blocking and the loads."""
    base = spec(hard_per_gpu_hour=6e-4, sdc_per_gpu_hour=0.0, ckpt_load_seconds=93.6)
    j = run_job(replace(base, causes=(Cause("hardware", 1.0, 0.0, 60.0, jit=True),), jit_seconds=30.0))
    plain = run_job(base)
    assert j.interruptions > 10 and j.recompute_steps == j.interruptions
    assert 0.8 * j.interruptions < j.jit_saves <= j.interruptions and plain.jit_saves == 0
    assert j.bucket_seconds["checkpoint"] == plain.bucket_seconds["checkpoint"] + 30.0 * j.jit_saves
    assert plain.recompute_steps > 5 * plain.interruptions


@pytest.mark.parametrize("servers", [None, Servers(gpus_per_server=1, burst_per_day=8.0, burst_mean_size=3.0)],
                         ids=["local", "peer_bursts"])
def test_with_committed_sdcs_each_step_is_productive_once_and_every_second_in_one_bucket(servers):
    """Committed SDCs beside a memory tier (docs/model.md, "Memory tiers"): tier saves take the SDC and overwrite
    the tier's clean copy, losses take it, late finds go back below work the tier's saves committed. Whatever the
    path, a job whose SDCs were all found ends with every step productive exactly once (work committed above the
    checkpoint a late find goes back to is recomputed as rollback, not productive again), and the buckets add up
    to the wall time."""
    n = 16 if servers else 1024
    base = spec(n_gpus=n, target_steps=1000, hard_per_gpu_hour=4e-4 * 1024 / n, sdc_per_gpu_hour=4e-4 * 1024 / n,
                ckpt_interval_steps=25, validation_interval_steps=0, ckpt_load_seconds=93.6, servers=servers,
                committed_sdc=CommittedSdc((Detector("loss_spike", "lognormal", 600.0, 1.0, 1.0),
                                            Detector("ripple", "uniform", 6 * 3600.0)), 2),
                tier=MemoryTier("peer" if servers else "local", 5, 2.0, 10.0, 2 if servers else 1))
    checked = late = below = 0
    for seed in range(30):
        j = run_job(replace(base, seed=seed))
        assert sum(j.bucket_seconds.values()) == pytest.approx(j.wall_seconds, abs=1e-6)
        if sum(j.sdc_onsets_by_type.values()) == j.sdc_detected + j.sdc_late_found:
            assert j.bucket_seconds["productive"] == pytest.approx(1000 * 60.0, abs=1e-6)
            checked += 1
            late += j.sdc_late_found
            below += j.tier["recoveries_persistent"] > 0 and j.sdc_late_found > 0
    assert checked > 5 and late > 5 and below > 2


@pytest.mark.parametrize("base", [
    spec(hard_per_gpu_hour=6e-4, sdc_per_gpu_hour=3e-4, ckpt_interval_steps=50, validation_interval_steps=40,
         ckpt_load_seconds=93.6),
    spec(n_gpus=64, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.0, ckpt_load_seconds=93.6,
         servers=Servers(warm_standbys=1, spares=1, repair=("exponential", 7200.0, 0.0), burst_per_day=4.0)),
    spec(hard_per_gpu_hour=4e-4, sdc_per_gpu_hour=3e-4, ckpt_write_seconds=700.0, ckpt_write_slowdown=1.2,
         ckpt_save_failure=0.2, ckpt_corrupt_on_load=0.3, ckpt_retention=2, ckpt_load_seconds=93.6),
], ids=["sdc_nondividing", "pools_bursts", "async_failing_corrupt"])
def test_a_free_tier_whose_every_save_fails_changes_nothing(base):
    """A peer tier that costs nothing and whose every save fails: no checkpoint of it ever exists, so no SDC is baked
    into one, every recovery is the persistent one's, and the job is the job without the tier, event for event."""
    for seed in range(3):
        s = replace(base, seed=seed)
        j = run_job(replace(s, tier=MemoryTier("peer", 5, 0.0, 10.0, 2, save_failure=1.0)))
        plain = run_job(s)
        assert j.tier["saves"] == 0 and j.tier["saves_failed"] > 100 and j.tier["recoveries_tier"] == 0
        assert replace(j, tier={}) == plain and plain.interruptions > 0


def test_the_waits_for_a_memory_tiers_writes_show_in_the_saves_wait_seconds():
    """A local tier every 5 steps (300 s) whose writes take 600 s, without failures: every save waits for the write
    before it (docs/model.md, "Memory tiers", Writes: checkpoint time, ``saves.wait_seconds``), so the checkpoint
    bucket beyond the blocking (of every tier save, the last one's write aborted at the job's end) is those waits,
    and ``saves`` reports them although the persistent saves block."""
    base = spec(hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0)
    j = run_job(replace(base, tier=MemoryTier("local", 5, 2.0, 10.0, write_seconds=600.0)))
    plain = run_job(base)
    blocking = 2.0 * (j.tier["saves"] + j.tier["saves_aborted"])
    wait = j.bucket_seconds["checkpoint"] - plain.bucket_seconds["checkpoint"] - blocking
    assert wait > 0 and j.saves["wait_seconds"] == pytest.approx(wait)


CORRUPT_TIER = spec(n_gpus=16, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.0, ckpt_load_seconds=93.6,
                    servers=Servers(gpus_per_server=1), tier=MemoryTier("peer", 5, 2.0, 10.0, copies=2))


def test_copies_kept_change_nothing_where_no_load_is_found_corrupt():
    """Without corrupt loads or committed SDCs a recovery loads the tier's newest copy whatever it keeps (its
    points then units of the loop: the same times), so 3 copies give one copy's results exactly; with its loads
    corrupt they differ."""
    for seed in range(3):
        s = replace(CORRUPT_TIER, seed=seed)
        assert run_job(replace(s, tier=replace(s.tier, retention_checkpoints=3))) == run_job(s)
    s = replace(CORRUPT_TIER, tier=replace(CORRUPT_TIER.tier, corrupt_on_load=0.5))
    assert run_job(replace(s, tier=replace(s.tier, retention_checkpoints=3))) != run_job(s)


@pytest.mark.parametrize("keep", [1, 2, 3])
def test_every_copy_found_corrupt_is_loaded_newest_first_down_to_the_persistent_checkpoint(keep):
    """Every load of the tier found corrupt: each recovery loads each copy newer than the persistent checkpoint (at
    most ``keep``, a save every 5 steps between checkpoints every 25: at most 4), pays each load, and recovers from
    the persistent checkpoint; with more copies kept, more loads."""
    s = replace(CORRUPT_TIER, tier=replace(CORRUPT_TIER.tier, corrupt_on_load=1.0, retention_checkpoints=keep))
    j = run_job(s)
    t = j.tier
    assert t["recoveries_tier"] == 0 and t["recoveries_persistent"] + t["recoveries_start"] == j.interruptions
    assert t["loads_corrupt"] <= min(keep, 4) * j.interruptions
    assert j.load_seconds == pytest.approx(t["loads_corrupt"] * 10.0 + t["recoveries_persistent"] * 93.6)
    fewer = run_job(replace(s, tier=replace(s.tier, retention_checkpoints=keep - 1))) if keep > 1 else None
    assert fewer is None or t["loads_corrupt"] > fewer.tier["loads_corrupt"]
