"""Two memory tiers at once, a local tier under a peer tier under the persistent checkpoint (JobSpec.tier and
lower_tier; docs/model.md, "Two memory tiers"): exact cases, in the per-step oracle and the engine's loop
(tests/engine/statistical/test_two_tiers_oracle.py compares the two in distribution)."""

from dataclasses import replace

import pytest
from specs import spec

from simd.engine import Cause, advance, new_state, retarget, run_job
from simd.engine.oracle import oracle_run
from simd.engine.servers import Servers
from simd.engine.spec import CommittedSdc, Detector, MemoryTier, compile_spec

# a peer tier every 5 steps (2 s, a 10 s load) and a local one every step (0.5 s, a 3 s load) under checkpoints
# every 25 (docs/checkpoints.md, section 5: proposals; no public figure for a local copy's cost)
PEER = MemoryTier("peer", 5, 2.0, 10.0, 2)
LOCAL = MemoryTier("local", 1, 0.5, 3.0)
LOAD = 93.6  # TrainMover's checkpoint load at 8,192 GPUs (simd/models/recovery.py)
SOFTWARE = (Cause("software", 1.0, 0.0, 300.0, server_down=False),)  # a fault that keeps every server's memory


def _two(**kw):
    return replace(spec(ckpt_load_seconds=LOAD, **kw), tier=PEER, lower_tier=LOCAL)


def test_without_failures_each_tier_saves_where_no_higher_one_does():
    """3,000 steps: the checkpoint at 120 of them, the peer tier at the other 480 multiples of 5, the local tier at
    the other 2,400 steps; each save costs its own blocking."""
    r = oracle_run(_two(hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0))
    assert r["checkpoints"] == 120 and r["tiers"]["peer"]["saves"] == 480 and r["tiers"]["local"]["saves"] == 2400
    assert r["checkpoint_seconds"] == 120 * 300.0 + 480 * 2.0 + 2400 * 0.5
    assert r["tier_saves"] == 2880 and r["effective_utilization"] == 3000 * 60.0 / r["wall_seconds"]


def test_a_recovery_loads_the_step_before_the_failure_from_whichever_tier_saved_it():
    """Faults that keep the servers' memory and a local tier every step: every recovery goes back one step, to
    the checkpoint of whichever tier saved it, and pays that tier's load."""
    for seed in range(3):
        r = oracle_run(replace(_two(causes=SOFTWARE, sdc_per_gpu_hour=0.0, hard_per_gpu_hour=6e-4), seed=seed))
        t = r["tiers"]
        assert r["interruptions"] > 10 and r["recompute_steps"] == r["interruptions"]
        assert t["local"]["losses"] == t["peer"]["losses"] == 0
        assert t["local"]["recoveries"] > t["peer"]["recoveries"] > 0
        assert t["local"]["recoveries"] + t["peer"]["recoveries"] + r["recoveries_persistent"] + \
            r["recoveries_start"] == r["interruptions"]
        assert r["load_seconds"] == pytest.approx(3.0 * t["local"]["recoveries"] + 10.0 * t["peer"]["recoveries"]
                                                  + LOAD * r["recoveries_persistent"])


@pytest.mark.parametrize("base", [
    spec(hard_per_gpu_hour=6e-4, sdc_per_gpu_hour=0.0, ckpt_load_seconds=LOAD),
    spec(n_gpus=16, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.0, ckpt_load_seconds=LOAD,
         servers=Servers(gpus_per_server=1, burst_per_day=8.0, burst_mean_size=3.0)),
    spec(hard_per_gpu_hour=4e-4, sdc_per_gpu_hour=0.0, ckpt_write_seconds=700.0, ckpt_write_slowdown=1.2,
         ckpt_save_failure=0.2, ckpt_corrupt_on_load=0.3, ckpt_retention=2, ckpt_load_seconds=LOAD),
], ids=["plain", "bursts", "async_failing_corrupt"])
def test_a_free_local_tier_every_failure_loses_changes_nothing_under_a_peer_tier(base):
    """A local tier that costs nothing, without SDCs: every hard failure takes a server down and the local copies
    with it, so every recovery is the peer tier's or the persistent one's, at the same times: the job with the peer
    tier alone, but for the local tier's saves and losses."""
    peer = replace(PEER, corrupt_on_load=0.3, retention_checkpoints=2)
    for seed in range(3):
        s = replace(base, seed=seed, tier=peer)
        two, one = oracle_run(replace(s, lower_tier=replace(LOCAL, seconds=0.0))), oracle_run(s)
        local = two["tiers"]["local"]
        assert local["losses"] == two["interruptions"] > 0 and local["recoveries"] == 0 and local["saves"] > 1000
        del two["tiers"]
        for k in ("tier_saves", "tier_losses"):
            del two[k], one[k]
        assert two == one


@pytest.mark.parametrize("keep", [1, 3, 6])
def test_every_local_copy_found_corrupt_is_loaded_down_to_the_newest_peer_copy_then_the_peer_tier(keep):
    """Every load of the local tier found corrupt: a recovery loads the local copies newer than the peer tier's
    newest copy (at most 4 between peer saves every 5 steps, whatever it keeps), newest first, paying each, then
    the peer tier's; never a local copy the peer copy stands for."""
    s = replace(_two(causes=SOFTWARE, sdc_per_gpu_hour=0.0, hard_per_gpu_hour=6e-4),
                lower_tier=replace(LOCAL, corrupt_on_load=1.0, retention_checkpoints=keep))
    r = oracle_run(s)
    t = r["tiers"]
    assert t["local"]["recoveries"] == 0 and t["peer"]["recoveries"] > 0.6 * r["interruptions"]
    assert 0 < t["local"]["loads_corrupt"] <= min(keep, 4) * r["interruptions"]
    assert r["load_seconds"] == pytest.approx(3.0 * t["local"]["loads_corrupt"] + 10.0 * t["peer"]["recoveries"]
                                              + LOAD * r["recoveries_persistent"])
    if keep > 1:
        fewer = oracle_run(replace(s, lower_tier=replace(s.lower_tier, retention_checkpoints=keep // 2)))
        assert t["local"]["loads_corrupt"] > fewer["tiers"]["local"]["loads_corrupt"]


def test_a_peer_loss_takes_the_local_tier_too():
    """Servers under bursts: every failure takes a server's memory (the local tier), a burst that takes a whole
    peer group the peer tier too; the recoveries then load the persistent checkpoint."""
    s = _two(n_gpus=16, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.0,
             servers=Servers(gpus_per_server=1, burst_per_day=24.0, burst_mean_size=4.0))
    lost = both = 0
    for seed in range(3):
        r = oracle_run(replace(s, seed=seed))
        t = r["tiers"]
        assert t["local"]["losses"] == r["interruptions"] and t["local"]["recoveries"] == 0
        lost += t["peer"]["losses"]
        both += t["peer"]["recoveries"] > 0 and r["recoveries_persistent"] > 0
    assert lost > 0 and both > 0


def test_the_engines_loop_runs_two_tiers_that_nest():
    s = _two()
    assert compile_spec(s).low_every == 1 and compile_spec(replace(s, lower_tier=None)).low_every == 0
    with pytest.raises(ValueError, match="a local tier under a peer tier, its interval a divisor"):
        compile_spec(replace(s, lower_tier=replace(LOCAL, interval_steps=3)))


def test_the_engines_loop_saves_each_tier_where_no_higher_one_does_and_recovers_from_the_step_before():
    """The engine's loop on the exact cases above: without failures the checkpoint at 120 of 3,000 steps, the
    peer tier at 480, the local tier at 2,400, each at its blocking; faults that keep the servers' memory go back
    one step each, to whichever tier saved it, paying its load (the local tier's counts are the tier's too)."""
    j = run_job(_two(hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.0))
    assert j.checkpoints == 120 and j.tier["saves"] == 2880 and j.tier["local_saves"] == 2400
    assert j.bucket_seconds["checkpoint"] == 120 * 300.0 + 480 * 2.0 + 2400 * 0.5
    for seed in range(2):
        j = run_job(replace(_two(causes=SOFTWARE, sdc_per_gpu_hour=0.0, hard_per_gpu_hour=6e-4), seed=seed))
        t = j.tier
        assert j.interruptions > 10 and j.recompute_steps == j.interruptions and t["losses"] == 0
        assert t["local_recoveries"] > t["recoveries_tier"] - t["local_recoveries"] > 0
        assert t["recoveries_tier"] + t["recoveries_persistent"] + t["recoveries_start"] == j.interruptions
        assert j.load_seconds == pytest.approx(3.0 * t["local_recoveries"] + 10.0 * (
            t["recoveries_tier"] - t["local_recoveries"]) + LOAD * t["recoveries_persistent"])


@pytest.mark.parametrize("down", [False, True], ids=["memory_kept", "memory_lost"])
def test_the_survivors_save_just_in_time_unless_a_surviving_copy_is_the_step_before(down):
    """Just-in-time saves beside a local tier every step: when the failure keeps every server's memory, the local
    copy of the step before it survives and no save is needed; when it takes the server down (the local copies
    with it) the survivors save unless a peer or persistent checkpoint is that step. Either way each recovery
    recomputes the failed step alone, in the oracle and the engine's loop."""
    cause = Cause("gpu", 1.0, 0.0, 300.0, server_down=down, jit=True)
    s = replace(_two(causes=(cause,), sdc_per_gpu_hour=0.0, hard_per_gpu_hour=6e-4), jit_seconds=30.0)
    r = oracle_run(s)
    assert r["interruptions"] > 10 and r["recompute_steps"] == r["interruptions"]
    if down:
        assert 0.6 * r["interruptions"] < r["jit_saves"] < r["interruptions"]
        assert r["tiers"]["local"]["recoveries"] == 0
    else:
        assert r["jit_saves"] == 0 and r["tiers"]["local"]["recoveries"] > 0.6 * r["interruptions"]
    j = run_job(s)  # the engine's loop alike
    assert j.interruptions > 10 and j.recompute_steps == j.interruptions
    if down:
        assert 0.6 * j.interruptions < j.jit_saves < j.interruptions and j.tier["local_recoveries"] == 0
    else:
        assert j.jit_saves == 0 and j.tier["local_recoveries"] > 0.6 * j.interruptions


def test_a_retarget_keeps_the_local_tier_and_its_retention():
    """The local tier's copies are a ring of the replica's row as wide as its retention: a drill may change its
    costs, not add it, remove it or change how many copies it keeps."""
    s = _two()
    state, _ = advance(new_state(s), 3600 * 10**6)
    assert retarget(state, replace(s, lower_tier=replace(LOCAL, seconds=1.0))).plan.low_us == 10**6
    for other in (replace(s, lower_tier=None), replace(s, lower_tier=replace(LOCAL, retention_checkpoints=2))):
        with pytest.raises(ValueError, match="cannot add or remove a second memory tier nor change its retention"):
            retarget(state, other)


def test_every_load_is_paid_at_its_tiers_price():
    """Exactly, in the engine's loop and the oracle: the loads' time is 3 s for each local copy loaded (a recovery
    from it or a copy found corrupt), 10 s for each peer copy, the persistent load for each persistent checkpoint
    loaded (a recovery from it or one found corrupt), with every level's loads found corrupt now and then, SDCs
    found by validation and baked into saves, failures on servers struck by bursts."""
    base = replace(spec(n_gpus=16, target_steps=600, ckpt_load_seconds=LOAD, hard_per_gpu_hour=0.01,
                        sdc_per_gpu_hour=0.05, validation_interval_steps=7, ckpt_corrupt_on_load=0.3, ckpt_retention=2,
                        servers=Servers(gpus_per_server=1, burst_per_day=8.0, burst_mean_size=3.0)),
                   tier=replace(PEER, corrupt_on_load=0.5, retention_checkpoints=3),
                   lower_tier=replace(LOCAL, corrupt_on_load=0.5,
                                      retention_checkpoints=2))
    local_bad = peer_bad = 0
    for seed in range(6):
        s = replace(base, seed=seed)
        j, r = run_job(s), oracle_run(s)
        t, o = j.tier, r["tiers"]
        for loads, local, peer, persistent in (
                (j.load_seconds, t["local_recoveries"] + t["local_loads_corrupt"],
                 t["recoveries_tier"] - t["local_recoveries"] + t["loads_corrupt"] - t["local_loads_corrupt"],
                 t["recoveries_persistent"] + j.loads["corrupt"]),
                (r["load_seconds"], o["local"]["recoveries"] + o["local"]["loads_corrupt"],
                 o["peer"]["recoveries"] + o["peer"]["loads_corrupt"],
                 r["recoveries_persistent"] + r["loads_corrupt"])):
            assert loads == pytest.approx(3.0 * local + 10.0 * peer + LOAD * persistent, abs=1e-6), seed
        local_bad += t["local_loads_corrupt"]
        peer_bad += t["loads_corrupt"] - t["local_loads_corrupt"]
    assert local_bad > 3 and peer_bad > 3


def test_beside_committed_sdcs_every_recovery_pays_the_loads_it_made():
    """Committed SDCs found late within minutes (the local tier's clean copies still kept), faults that keep the
    servers' memory, both tiers' copies found corrupt on half their loads: the loads' time is each tier's load for
    each recovery from it and each of its copies found corrupt, and the persistent load for each recovery from a
    persistent checkpoint, in the engine and the oracle alike; both tiers recovered from."""
    s = replace(_two(causes=SOFTWARE, hard_per_gpu_hour=4e-4, sdc_per_gpu_hour=1e-3, validation_interval_steps=0,
                     target_steps=1000, committed_sdc=CommittedSdc((Detector("d", "uniform", 600.0),), 2)),
                tier=replace(PEER, corrupt_on_load=0.5, retention_checkpoints=2),
                lower_tier=replace(LOCAL, corrupt_on_load=0.5, retention_checkpoints=12))
    local = peer = 0
    for seed in range(4):
        j, o = run_job(replace(s, seed=seed)), oracle_run(replace(s, seed=seed))
        ol, op = o["tiers"]["local"], o["tiers"]["peer"]
        for loads, l_rec, l_bad, p_rec, p_bad, persistent in (
                (j.load_seconds, j.tier["local_recoveries"], j.tier["local_loads_corrupt"],
                 j.tier["recoveries_tier"] - j.tier["local_recoveries"],
                 j.tier["loads_corrupt"] - j.tier["local_loads_corrupt"], j.tier["recoveries_persistent"]),
                (o["load_seconds"], ol["recoveries"], ol["loads_corrupt"], op["recoveries"], op["loads_corrupt"],
                 o["recoveries_persistent"])):
            assert loads == pytest.approx((l_rec + l_bad) * LOCAL.load_seconds + (p_rec + p_bad) * PEER.load_seconds
                                          + persistent * LOAD, abs=1e-6), seed
        local += ol["recoveries"] + j.tier["local_recoveries"]
        peer += op["recoveries"]
        assert o["sdc_late_found"] + j.sdc_late_found > 0, seed
    assert local > 4 and peer > 1
