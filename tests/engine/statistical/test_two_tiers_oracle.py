"""Two memory tiers at once, a local tier under a peer tier under the persistent checkpoint (JobSpec.tier and
lower_tier; docs/model.md, "Two memory tiers"): the engine's loop against the per-step oracle (means within 4
standard errors, distributions by KS: engine_stats), summed over the tiers and the local tier's own counts, on
servers struck by bursts with every level's loads found corrupt and copies retained (with SDCs baked in, and with
committed SDCs found late), and with both tiers' saves written after their blocking and failing beside asynchronous,
failing persistent saves, and writing inside hyper windows; any cut of time (many random cuts) and any tick size
giving the same state."""

import random
from dataclasses import replace

import pytest
from engine_stats import agree_with_oracle, field
from specs import spec
from support.partition import check_cuts, horizon_us

from simd.engine import Cause
from simd.engine.servers import Servers
from simd.engine.spec import CommittedSdc, Detector, Hyper, MemoryTier

SEEDS = 84  # per configuration (the suite's 5-minute limit)
LOAD = 93.6  # TrainMover's checkpoint load at 8,192 GPUs (simd/models/recovery.py)
# a peer tier every 5 steps (2 s, a 10 s load) and a local one every step (0.5 s, a 3 s load) under checkpoints
# every 25 (docs/checkpoints.md, section 5: proposals; no public figure for a local copy's cost)
PEER = MemoryTier("peer", 5, 2.0, 10.0, 2)
LOCAL = MemoryTier("local", 1, 0.5, 3.0)
BURSTS = Servers(gpus_per_server=1, burst_per_day=8.0, burst_mean_size=3.0)
GPU_SOFTWARE = (Cause("gpu", 0.6, 0.0, 300.0), Cause("software", 0.4, 0.0, 300.0, server_down=False))
# an in-job loss-spike guard (half the SDCs, after ~3 minutes: within the local tier's copies kept) and a fleet
# scanner (a day on average)
DETECTORS = (Detector("loss_spike", "lognormal", 180.0, 1.0, 0.5), Detector("scanner", "exponential", 86400.0))
CONFIGS = {
    # 16 one-GPU servers struck by bursts of mean 3 (the local copies go with any, the peer ones with a whole group),
    # SDCs baked in at the tiers' saves; persistent loads found corrupt on 30% (two kept), the peer tier's on 40%
    # (three kept), the local tier's on 30% (two kept)
    "bursts_corrupt_retained": replace(
        spec(n_gpus=16, target_steps=600, ckpt_load_seconds=LOAD, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.002,
             servers=BURSTS, ckpt_corrupt_on_load=0.3, ckpt_retention=2),
        tier=replace(PEER, corrupt_on_load=0.4, retention_checkpoints=3),
        lower_tier=replace(LOCAL, corrupt_on_load=0.3, retention_checkpoints=2)),
    # both tiers' saves written after their blocking (the local tier's 150 s writes outlast its 2-step interval:
    # its saves wait), a fifth of the peer tier's and 30% of the local tier's failing, beside asynchronous persistent
    # saves a fifth of which fail; faults that keep their server (and both tiers' copies) and SDCs
    "writes_failing": replace(
        spec(target_steps=600, ckpt_load_seconds=LOAD, hard_per_gpu_hour=6e-4, sdc_per_gpu_hour=3e-4,
             ckpt_write_seconds=500.0, ckpt_write_slowdown=1.2, ckpt_save_failure=0.2, causes=GPU_SOFTWARE),
        tier=replace(PEER, interval_steps=10, write_seconds=200.0, save_failure=0.2),
        lower_tier=replace(LOCAL, interval_steps=2, seconds=1.0, write_seconds=150.0, save_failure=0.3)),
    # both tiers' writes inside hyper windows (the lattice every 3 from the rollback point, each tier its own
    # multiples, a higher level's save standing for the lower ones where they fall together; validation every 7
    # lets SDCs be baked in at every level), the local tier's writes outlasting its interval
    "hyper_writes": replace(
        spec(target_steps=600, ckpt_load_seconds=LOAD, hard_per_gpu_hour=1e-3, sdc_per_gpu_hour=1e-3,
             validation_interval_steps=7, hyper=Hyper(3, 60), causes=GPU_SOFTWARE),
        tier=replace(PEER, interval_steps=10, write_seconds=200.0),
        lower_tier=replace(LOCAL, interval_steps=2, seconds=1.0, write_seconds=150.0)),
    # committed SDCs found by two detectors, validation off, beside both tiers under bursts, with faults that keep
    # their server (and both tiers' copies): every save of every level takes the SDC present, a hard failure goes
    # back to the newest surviving copy, holding it or not, and a late find to the local tier's clean copies newer
    # than the peer tier's newest clean one, then to the peer tier's, then to the clean persistent one if retained,
    # else the oldest retained; the local tier keeping 4 copies, its saves written in 30 s, found corrupt on 30% of
    # its loads, the peer tier keeping 3, found corrupt on 40%, the persistent checkpoints on 30% (retention 2: a
    # recovery that reaches them goes down the kept ones, docs/model.md, "Checkpoints kept and found corrupt")
    "committed_bursts": replace(
        spec(n_gpus=16, target_steps=600, ckpt_load_seconds=LOAD, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.02,
             validation_interval_steps=0, servers=BURSTS, causes=GPU_SOFTWARE, ckpt_corrupt_on_load=0.3,
             committed_sdc=CommittedSdc(DETECTORS, 2)),
        tier=replace(PEER, corrupt_on_load=0.4, retention_checkpoints=3),
        lower_tier=replace(LOCAL, corrupt_on_load=0.3, retention_checkpoints=4, write_seconds=30.0)),
}
TIER = {k: (lambda j, k=k: j.tier.get(k, 0), lambda r, o=o: r[o]) for k, o in (
    ("saves", "tier_saves"), ("losses", "tier_losses"), ("recoveries_tier", "recoveries_tier"),
    ("recoveries_persistent", "recoveries_persistent"), ("recoveries_start", "recoveries_start"),
    ("loads_corrupt", "tier_loads_corrupt"), ("saves_failed", "tier_saves_failed"),
    ("saves_aborted", "tier_saves_aborted"))}
LOCAL_READS = {f"local_{k}": (lambda j, k=k: j.tier[f"local_{k}"], lambda r, k=k: r["tiers"]["local"][k])
               for k in ("saves", "saves_failed", "saves_aborted", "losses", "recoveries", "loads_corrupt")}
READS = {f: field(f) for f in ("effective_utilization", "interruptions", "sdc_detected", "sdc_baked",
                               "recompute_steps", "wall_seconds", "checkpoints", "load_seconds", "hyper_steps",
                               "hyper_activations", "sdc_late_found", "sdc_unrecoverable",
                               "checkpoints_lost")} | TIER | LOCAL_READS | {
    "persistent_corrupt": (lambda j: j.loads.get("corrupt", 0), lambda r: r["loads_corrupt"])}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_engine_matches_the_per_step_loop_with_two_tiers(name):
    means = agree_with_oracle(name, CONFIGS[name], SEEDS, READS, ("recoveries_tier", "local_recoveries") +
                              (("sdc_late_found",) if CONFIGS[name].committed_sdc else ()))
    # every level recovered from, and the mechanisms of the configuration met
    assert means["local_recoveries"] > 0.1 and means["recoveries_tier"] > means["local_recoveries"] + 0.5
    assert means["recoveries_persistent"] > 0.5
    if name == "bursts_corrupt_retained":
        assert means["losses"] > means["local_losses"] > 1 and means["loads_corrupt"] > 1
    elif name == "committed_bursts":  # late finds (some unrecoverable) and both tiers' copies found corrupt
        assert means["sdc_late_found"] > 1 and means["sdc_unrecoverable"] > 0.1
        assert means["local_loads_corrupt"] > 0.3 and means["loads_corrupt"] > means["local_loads_corrupt"] + 0.3
        assert means["local_saves_aborted"] > 0.3 and means["persistent_corrupt"] > 0.3
    elif name == "hyper_writes":
        assert means["hyper_steps"] > 100 and means["sdc_baked"] > 1
        assert means["local_saves_aborted"] > 1 and means["saves_aborted"] > means["local_saves_aborted"]
    else:
        assert means["local_saves_failed"] > 10 and means["saves_failed"] > means["local_saves_failed"]
        assert means["local_saves_aborted"] > 1 and means["saves_aborted"] > means["local_saves_aborted"]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_many_random_cuts_give_the_state_of_one_call_with_two_tiers(name):
    """2,000 random cuts of a job and a half (a unit at every local save, between them every kind of cut)."""
    s = replace(CONFIGS[name], seed=3)
    rnd = random.Random(name)
    check_cuts(s, horizon_us(s, s.target_steps), [rnd.random() for _ in range(2000)])


@pytest.mark.parametrize("name", ["bursts_corrupt_retained", "committed_bursts"])
@pytest.mark.parametrize("ticks", [7, 97])
def test_any_tick_size_gives_identical_state_with_two_tiers(name, ticks):
    s = replace(CONFIGS[name], seed=5)
    check_cuts(s, horizon_us(s, s.target_steps), [i / ticks for i in range(1, ticks)])
