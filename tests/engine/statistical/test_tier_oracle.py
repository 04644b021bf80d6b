"""A checkpoint tier in memory under the persistent one (checkpoint.tiers; JobSpec.tier, MemoryTier): the engine
against the per-step oracle (means within 4 standard errors, distributions by KS: engine_stats) with a local and a
peer tier, on servers with bursts and failure domains and pools, beside asynchronous, failing and corrupt
persistent saves, its own checkpoint found corrupt (keeping three copies: a recovery goes down them before the
persistent checkpoint, a late find to the newest clean one), SDCs baked in at the tier's saves, its writes inside
hyper windows, causes that keep their server and stragglers; Gemini's closed form for the share of bursts that lose
a peer tier; any cut of time giving the same state.

The statistical and property checks (slow: they live in tests/engine/statistical)."""

from dataclasses import replace
from math import comb

import pytest
from engine_stats import agree_with_oracle, field
from extended_specs import mixed_specs
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from specs import llama3_causes, spec
from support.examples import examples
from support.partition import check_cuts, horizon_us

from simd.engine import Cause, run_job
from simd.engine.oracle import oracle_run
from simd.engine.servers import Servers
from simd.engine.spec import CommittedSdc, Detector, Hyper, MemoryTier, Stragglers, compile_spec

SEEDS = 84  # per configuration (the suite's 5-minute limit)
LOAD = 93.6  # TrainMover's checkpoint load at 8,192 GPUs (simd/models/recovery.py)


def _tier(kind: str = "peer", every: int = 5, copies: int = 2, jump: int = 1) -> MemoryTier:
    # a save blocks 2 s and a recovery from it loads in 10 s (docs/checkpoints.md, section 5: proposals)
    return MemoryTier(kind, every, 2.0, 10.0, copies if kind == "peer" else 1, jump)


def _job(**kw):
    """Seed 000's optimized job, half as long (1,500 steps of 60 s, a checkpoint every 25), with the loads."""
    return spec(target_steps=1500, ckpt_load_seconds=LOAD, **kw)


BURSTS = Servers(gpus_per_server=1, burst_per_day=8.0, burst_mean_size=3.0)
DOMAINS = Servers(warm_standbys=1, spares=1, preemption_seconds=600.0, repair=("exponential", 7200.0, 0.0),
                  burst_per_day=4.0, burst_domain=4)
SOFTWARE = (Cause("gpu", 0.6, 0.0, 300.0), Cause("software", 0.4, 0.0, 300.0, server_down=False))
# a local tier (lost on every failure without servers) with SDCs baked in at its saves and validation not dividing
# the checkpoint; a peer tier on 16 one-GPU servers struck by bursts of mean 3; on 8-GPU servers with pools and
# domain bursts (groups inside a domain: lost with it); beside asynchronous, failing and corrupt persistent saves;
# causes that keep their server (and its memory); stragglers and llama3's causes
GUARD = Detector("loss_spike", "lognormal", 600.0, 1.0, 0.5)  # half the SDCs, after ~10 minutes
FAST_GUARD = Detector("loss_spike", "lognormal", 300.0, 1.0, 0.5)  # half the SDCs, after ~5 minutes
LAYERS = (GUARD, Detector("ripple", "uniform", 172800.0), Detector("scanner", "exponential", 86400.0))
CONFIGS = {
    "local_sdc_nondividing": replace(_job(hard_per_gpu_hour=4e-4, sdc_per_gpu_hour=3e-4, ckpt_interval_steps=50,
                                          validation_interval_steps=40), tier=_tier("local")),
    # (a third of its saves failing, the copy before each staying the newest)
    "peer_bursts": replace(_job(n_gpus=16, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.0, servers=BURSTS),
                           tier=replace(_tier(), save_failure=0.3)),
    "peer_pools_domains": replace(_job(n_gpus=64, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.0, servers=DOMAINS),
                                  tier=_tier()),
    "async_failing_corrupt": replace(_job(hard_per_gpu_hour=4e-4, ckpt_write_seconds=700.0, ckpt_write_slowdown=1.2,
                                          ckpt_save_failure=0.2, ckpt_corrupt_on_load=0.3, ckpt_retention=2),
                                     tier=replace(_tier("local"), save_failure=0.3)),
    # the tier keeping 3 copies, found corrupt on half its loads: down its copies newer than the persistent
    # checkpoint, then on to a persistent chain of corrupt loads, with SDCs
    "tier_corrupt_chains": replace(_job(n_gpus=16, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.01, servers=BURSTS,
                                        ckpt_corrupt_on_load=0.3, ckpt_retention=2),
                                   tier=replace(_tier(), corrupt_on_load=0.5, retention_checkpoints=3)),
    # a local tier found corrupt on half its loads by SDC rollbacks (every failure takes it), writes in flight
    "tier_corrupt_async_sdc": replace(_job(hard_per_gpu_hour=4e-4, sdc_per_gpu_hour=4e-4, validation_interval_steps=40,
                                           ckpt_interval_steps=50, ckpt_write_seconds=700.0, ckpt_write_slowdown=1.2),
                                      tier=replace(_tier("local"), corrupt_on_load=0.5)),
    "software_keeps_memory": replace(_job(n_gpus=64, hard_per_gpu_hour=0.01, causes=SOFTWARE,
                                          servers=Servers(burst_per_day=4.0)), tier=_tier("local")),
    # hyper windows beside a tier: their lattice (every 5 from the rollback point) against the tier's multiples of 4
    # (a persistent save stands for the tier's where both fall), SDCs baked into either and rolled back; with
    # committed SDCs found by a detector, and stragglers
    "hyper_peer_bursts": replace(_job(n_gpus=16, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.01, ckpt_interval_steps=20,
                                      validation_interval_steps=30, hyper=Hyper(5, 200), servers=BURSTS),
                                 tier=_tier(every=4)),
    "hyper_committed_stragglers": replace(_job(hard_per_gpu_hour=4e-4, sdc_per_gpu_hour=6e-4, ckpt_interval_steps=20,
                                               validation_interval_steps=0, hyper=Hyper(5, 200),
                                               stragglers=Stragglers(0.5, 1, 1.2, replace_after_steps=40),
                                               committed_sdc=CommittedSdc((GUARD,), 3)),
                                          tier=replace(_tier("local", every=4), save_failure=0.2)),
    "stragglers_causes": replace(_job(causes=llama3_causes("warm"), hard_per_gpu_hour=4e-4, sdc_per_gpu_hour=3e-4,
                                      stragglers=Stragglers(0.5, 1, 1.2, replace_after_steps=40)), tier=_tier()),
    # the tier's saves written after their blocking (MemoryTier.write_seconds): a peer tier under bursts whose
    # writes (200 s) end before its next save (300 s), a fifth of them failing at their end, whose copy is found
    # corrupt on some loads, SDCs baked in at its saves; a local tier whose writes (400 s) outlast its interval (4
    # steps of 60 s: every save waits), beside asynchronous persistent writes, stragglers and llama3's causes
    "tier_writes_peer_bursts": replace(_job(n_gpus=16, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.004, servers=BURSTS,
                                            validation_interval_steps=10),
                                       tier=replace(_tier(), write_seconds=200.0, corrupt_on_load=0.3,
                                                    save_failure=0.2)),
    "tier_writes_waiting_async_stragglers": replace(_job(causes=llama3_causes("warm"), hard_per_gpu_hour=6e-4,
                                                         sdc_per_gpu_hour=3e-4, ckpt_interval_steps=20,
                                                         ckpt_write_seconds=500.0, ckpt_write_slowdown=1.2,
                                                         stragglers=Stragglers(0.5, 1, 1.2, replace_after_steps=40)),
                                                    tier=replace(_tier("local", every=4), write_seconds=400.0)),
    # the tier's writes inside hyper windows (the tier keeps its own multiples of 4, the window's lattice every 5 or 3
    # from the rollback point; a persistent save stands for the tier's where both fall, the writes run through it):
    # a peer tier under bursts whose writes end before its next save, a fifth failing, SDCs baked in at every level;
    # a local tier whose writes outlast its interval (every save waits) under a lattice finer than it (persistent
    # checkpoints among the quiet steps between the tier's saves), beside stragglers and llama3's causes
    "tier_writes_hyper_peer_bursts": replace(_job(n_gpus=16, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.01,
                                                  ckpt_interval_steps=20, validation_interval_steps=30,
                                                  hyper=Hyper(5, 200), servers=BURSTS),
                                             tier=replace(_tier(every=4), write_seconds=200.0, save_failure=0.2)),
    "tier_writes_hyper_waiting_stragglers": replace(_job(causes=llama3_causes("warm"), hard_per_gpu_hour=6e-4,
                                                         sdc_per_gpu_hour=6e-4, ckpt_interval_steps=20,
                                                         validation_interval_steps=10, hyper=Hyper(3, 200),
                                                         stragglers=Stragglers(0.5, 1, 1.2, replace_after_steps=40)),
                                                    tier=replace(_tier("local", every=4), write_seconds=400.0)),
}
# committed SDCs beside a tier (tier saves take the SDC, a late find goes back to the tier's clean copy if still
# there, else the newest clean persistent one or the oldest retained): layered detectors and a local tier every
# hard failure loses; a peer tier under bursts keeping 3 copies, retention 1 (unrecoverable finds, or a late find
# back to an older clean copy of the tier); asynchronous persistent writes with validation not dividing the
# checkpoint. The first two find the tier's copies corrupt on 40% and half their loads (a detector's find, late or
# not, and a hard failure's recovery then go on to the tier's older copies, then to the persistent checkpoints)
COMMITTED = {
    "committed_layers_local": replace(_job(hard_per_gpu_hour=4e-4, sdc_per_gpu_hour=4e-4, validation_interval_steps=0,
                                           committed_sdc=CommittedSdc(LAYERS, 2)),
                                      tier=replace(_tier("local"), corrupt_on_load=0.4)),
    "committed_bursts_retention1": replace(_job(n_gpus=16, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.02,
                                                validation_interval_steps=0, servers=BURSTS,
                                                committed_sdc=CommittedSdc((GUARD, Detector("scanner", "exponential",
                                                                                            86400.0)), 1)),
                                           tier=replace(_tier(), corrupt_on_load=0.5, retention_checkpoints=3)),
    "committed_async_nondividing": replace(_job(hard_per_gpu_hour=4e-4, sdc_per_gpu_hour=4e-4, ckpt_interval_steps=50,
                                                validation_interval_steps=40, ckpt_write_seconds=700.0,
                                                ckpt_write_slowdown=1.2,
                                                committed_sdc=CommittedSdc((GUARD, Detector("ripple", "uniform",
                                                                                            21600.0)), 3)),
                                           tier=replace(_tier("local", every=10), save_failure=0.2)),
    # the tier's saves written after their blocking beside committed SDCs (a save whose snapshot holds the SDC
    # commits it when written; a find aborts the write in flight): a local tier whose writes outlast its interval
    # (every save waits) with layered detectors, validation off, its copy found corrupt on 40% of loads; a peer tier
    # under bursts keeping 3 copies, whose writes end before its next save, a fifth failing, found corrupt on half
    # its loads, retention 2, beside asynchronous persistent writes
    "committed_tier_writes_waiting": replace(_job(hard_per_gpu_hour=4e-4, sdc_per_gpu_hour=4e-4,
                                                  validation_interval_steps=0, committed_sdc=CommittedSdc(LAYERS, 2)),
                                             tier=replace(_tier("local"), write_seconds=400.0, corrupt_on_load=0.4)),
    # ... and the three at once: the waiting local tier's writes inside hyper windows (lattice every 5 from the
    # rollback point, the tier's own multiples of 4) beside committed SDCs found by layered detectors
    "committed_tier_writes_hyper": replace(_job(hard_per_gpu_hour=4e-4, sdc_per_gpu_hour=4e-4,
                                                validation_interval_steps=0, hyper=Hyper(5, 200),
                                                committed_sdc=CommittedSdc(LAYERS, 2)),
                                           tier=replace(_tier("local"), write_seconds=400.0, corrupt_on_load=0.4)),
    # committed SDCs beside corrupt persistent loads too (40%, three kept, a checkpoint every 10 steps), with a local
    # tier every 2 steps keeping 6 copies, found corrupt on 30% of its loads, lost with the faults that take a server
    # down: a hard failure falls back down the tier's copies, then the kept persistent checkpoints, holding the SDC or
    # not; a find loads the tier's copies first (a late one its clean ones, above persistent checkpoints holding the
    # SDC), then goes down the persistent ones (a late one past those holding the SDC, to the start, or from the
    # oldest kept with the SDC accepted)
    "committed_corrupt_persistent": replace(_job(hard_per_gpu_hour=2e-4, sdc_per_gpu_hour=2e-4, ckpt_interval_steps=10,
                                                 ckpt_seconds=60.0, validation_interval_steps=0, causes=SOFTWARE,
                                                 ckpt_corrupt_on_load=0.4,
                                                 committed_sdc=CommittedSdc((FAST_GUARD, Detector("ripple", "uniform",
                                                                                                  21600.0)), 3)),
                                            tier=replace(_tier("local", every=2), corrupt_on_load=0.3,
                                                         retention_checkpoints=6)),
    "committed_tier_writes_bursts_async": replace(
        _job(n_gpus=16, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.02, validation_interval_steps=0, servers=BURSTS,
             ckpt_write_seconds=700.0, ckpt_write_slowdown=1.2,
             committed_sdc=CommittedSdc((GUARD, Detector("scanner", "exponential", 86400.0)), 2)),
        tier=replace(_tier(), write_seconds=200.0, save_failure=0.2, corrupt_on_load=0.5, retention_checkpoints=3)),
}
TIER = {k: (lambda j, k=k: j.tier[k], lambda r, o=o: r[o]) for k, o in (
    ("saves", "tier_saves"), ("losses", "tier_losses"), ("recoveries_tier", "recoveries_tier"),
    ("recoveries_persistent", "recoveries_persistent"), ("recoveries_start", "recoveries_start"),
    ("loads_corrupt", "tier_loads_corrupt"))}
FAILED = {"saves_failed": (lambda j: j.tier.get("saves_failed", 0), lambda r: r["tier_saves_failed"]),
          "saves_aborted": (lambda j: j.tier.get("saves_aborted", 0), lambda r: r["tier_saves_aborted"])}
LATE = {f: field(f) for f in ("sdc_late_found", "sdc_unrecoverable", "checkpoints_lost", "load_seconds")}
PERSISTENT_CORRUPT = {n: (lambda j, k=k: j.loads.get(k, 0), lambda r, o=o: r[o]) for n, k, o in (
    ("persistent_corrupt", "corrupt", "loads_corrupt"), ("fallbacks_to_start", "fallbacks_to_start",
                                                         "fallbacks_to_start"))}
LOADS = {"load_seconds": field("load_seconds")}
READS = {f: field(f) for f in ("effective_utilization", "interruptions", "sdc_detected", "sdc_baked",
                               "recompute_steps", "wall_seconds", "checkpoints", "hyper_steps",
                               "hyper_activations")} | TIER


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_engine_matches_the_per_step_loop_with_a_memory_tier(name):
    # the tier's corrupt loads by distribution too: one draw each (not one per job, nor one repeated)
    means = agree_with_oracle(name, CONFIGS[name], SEEDS, READS | FAILED | (LOADS if "hyper" in name else {}),
                              ("loads_corrupt", "recoveries_tier") if name.startswith("tier_corrupt") else
                              ("saves_aborted", "recoveries_tier") if name.startswith("tier_writes") else ())
    # both kinds of recovery met (a local tier every failure loses serves committed SDCs' finds only)
    assert means["recoveries_tier"] > (0.1 if name == "hyper_committed_stragglers" else 1)
    assert means["recoveries_persistent"] > 0.5
    if name in ("local_sdc_nondividing", "async_failing_corrupt", "peer_pools_domains", "software_keeps_memory"):
        assert means["losses"] > 1
    if name.startswith("tier_corrupt"):
        assert means["loads_corrupt"] > 1
    if "hyper" in name:
        assert means["hyper_steps"] > 100
    if name in ("peer_bursts", "async_failing_corrupt"):
        assert 0.25 < means["saves_failed"] / (means["saves"] + means["saves_failed"]) < 0.35
    if name == "tier_writes_peer_bursts":  # (aborted writes not among them)
        assert 0.15 < means["saves_failed"] / (means["saves"] + means["saves_failed"]) < 0.25
    if name.startswith("tier_writes"):  # writes in flight when failures came (and at the job's end)
        assert means["saves_aborted"] > 5


@pytest.mark.parametrize("name", sorted(COMMITTED))
def test_engine_matches_the_per_step_loop_with_committed_sdcs_beside_a_tier(name):
    means = agree_with_oracle(name, COMMITTED[name], SEEDS, READS | LATE | FAILED | PERSISTENT_CORRUPT,
                              ("sdc_late_found", "loads_corrupt", "load_seconds"))
    assert means["sdc_late_found"] > 1 and means["saves"] > 100
    # (recoveries from the tier are rare here: in committed_layers_local only finds of an SDC in no checkpoint yet
    # load the local tier, ~0.1-0.2 a job: the bound asks that the path be taken at all, a few times over the seeds)
    assert means["recoveries_tier"] > 0.05 and means["recoveries_persistent"] > 1
    if name.endswith("retention1"):
        assert means["sdc_unrecoverable"] > 0.3
    if name != "committed_async_nondividing":  # (a local tier is loaded by finds only: fewer loads)
        assert means["loads_corrupt"] > (0.1 if name in ("committed_layers_local", "committed_tier_writes_hyper",
                                                         "committed_corrupt_persistent") else 0.3)
    if name == "committed_corrupt_persistent":  # the persistent checkpoints' fallbacks met, to the start too
        assert means["persistent_corrupt"] > 1 and means["fallbacks_to_start"] > 0.05
    if "writes" in name:  # the writes met: saves aborted by rollbacks; the three at once: hyper windows opened
        assert means["saves_aborted"] > 0.5 and ("hyper" not in name or means["hyper_steps"] > 100)


@pytest.mark.parametrize("corrupt", [None, 1.0])
def test_every_recovery_pays_the_loads_it_made(corrupt):
    """Beside committed SDCs, exactly: the loads' time is a memory tier's load for each recovery from it and each
    copy of it found corrupt, and the persistent load for each recovery from a persistent checkpoint (none from
    the job's start) and each persistent checkpoint found corrupt, in the engine and the oracle alike; every tier
    load found corrupt with ``corrupt`` 1 (its configured share otherwise)."""
    for name, base in COMMITTED.items():
        if corrupt is not None:
            base = replace(base, tier=replace(base.tier, corrupt_on_load=corrupt))
        for seed in range(4):
            s = replace(base, seed=seed)
            j, o = run_job(s), oracle_run(s)
            keys = ("recoveries_tier", "loads_corrupt", "recoveries_persistent")
            for loads, tier, bad, persistent, persistent_bad in (
                    (j.load_seconds, *(j.tier[k] for k in keys), j.loads.get("corrupt", 0)),
                    (o["load_seconds"], o["recoveries_tier"], o["tier_loads_corrupt"], o["recoveries_persistent"],
                     o["loads_corrupt"])):
                assert loads == pytest.approx((tier + bad) * s.tier.load_seconds + (persistent + persistent_bad) *
                                              s.ckpt_load_seconds, abs=1e-6), (name, seed)
                assert tier == 0 or corrupt is None


# a hyper window's lattice (every 3 from the rollback point) finer than a local tier's saves (every 4), validation
# off: every SDC baked in at the next save point of either level and rolled back there, so windows open at the job's
# start and put persistent checkpoints among the steps before the tier's first save (one SDC every ~3 steps: the job
# goes back to either level's checkpoints many times)
LATTICE = replace(spec(target_steps=300, ckpt_load_seconds=LOAD, hard_per_gpu_hour=0.0, sdc_per_gpu_hour=0.02,
                       validation_interval_steps=0, ckpt_interval_steps=20, hyper=Hyper(3, 1000)),
                  tier=_tier("local", every=4))


@pytest.mark.parametrize("write", [0.0, 100.0])
def test_every_rollback_in_a_hyper_window_pays_the_load_of_the_checkpoint_it_goes_back_to(write):
    """Exactly, in the engine and the oracle alike: the loads' time is the tier's load for each recovery from it and
    the persistent load for each from a persistent checkpoint (none from the job's start), with the tier's saves
    written after their blocking or not, where the newest checkpoint a rollback meets is a lattice point between
    the tier's saves."""
    for seed in range(100):
        s = replace(LATTICE, tier=replace(LATTICE.tier, write_seconds=write), seed=seed)
        j, o = run_job(s), oracle_run(s)
        for loads, tier, persistent in (
                (j.load_seconds, j.tier["recoveries_tier"], j.tier["recoveries_persistent"]),
                (o["load_seconds"], o["recoveries_tier"], o["recoveries_persistent"])):
            assert loads == pytest.approx(tier * s.tier.load_seconds + persistent * LOAD, abs=1e-6), seed


def _losses_per_burst(servers: Servers, tier: MemoryTier, steps: int) -> tuple[float, int]:
    """The share of interruptions that lost the tier, on 16 one-GPU servers whose own failures are negligible (every
    interruption a burst), over a job of ``steps``, and how many there were."""
    base = replace(spec(n_gpus=16, hard_per_gpu_hour=1e-9, sdc_per_gpu_hour=0.0, target_steps=steps,
                        ckpt_interval_steps=100, ckpt_seconds=0.0, validation_interval_steps=0, restart_seconds=0.0),
                   servers=servers, tier=tier)
    j = run_job(base)
    return j.tier["losses"] / j.interruptions, j.interruptions


def _gemini(n: int, m: int, k: int) -> float:
    """P(some group of m of n servers wholly among k failed ones, uniform), by inclusion-exclusion; Gemini (SOSP'23,
    Corollary 1) gives its union bound, equal to it for k < 2m (docs/checkpoints.md, section 2)."""
    g = n // m
    return sum((-1) ** (j + 1) * comb(g, j) * comb(n - j * m, k - j * m) for j in range(1, k // m + 1)) / comb(n, k)


@pytest.mark.parametrize("mean_size", [2.0, 3.0])
def test_the_share_of_bursts_that_lose_a_peer_tier_is_geminis(mean_size):
    """Bursts of K = 2 + Geometric(q) servers (q = 1 / (mean_size - 1)) on 16 servers, groups of 2 neighbours: the
    share of bursts that lose the tier is sum_k P(K = k) P_loss(16, 2, k) (1/15 for K = 2: Gemini's 16 x 1 / (2 x
    120)), within 4 standard errors of a binomial share."""
    # 72 bursts a day of 60 s steps: one step in 20 (a job that rolls back to its tier every 10 steps moves on)
    share, n = _losses_per_burst(Servers(gpus_per_server=1, burst_per_day=72.0, burst_mean_size=mean_size),
                                 _tier(every=10), 400_000)
    q = 1.0 / (mean_size - 1.0)
    want = sum(q * (1 - q) ** (k - 2) * _gemini(16, 2, k) for k in range(2, 17))
    se = (want * (1 - want) / n) ** 0.5
    assert n > 20_000 and abs(share - want) < 4 * se, (share, want, se, n)


def test_groups_spread_over_failure_domains_survive_a_domain_and_groups_inside_one_do_not():
    """Domain bursts (4 servers): groups of 2 neighbours (jump 1) lie inside a domain, lost with every burst; a jump
    of 4 puts a group's members in two domains, never both struck."""
    domains = Servers(gpus_per_server=1, burst_per_day=72.0, burst_domain=4)
    inside, n = _losses_per_burst(domains, _tier(every=10, jump=1), 20_000)
    spread, _ = _losses_per_burst(domains, _tier(every=10, jump=4), 20_000)
    assert n > 1000 and inside == 1.0 and spread == 0.0


@st.composite
def tier_specs(draw):
    """The kernel's plans and the extended mechanisms' jobs that a memory tier joins (not hyper-checkpointing), on
    servers or not, with a local or a peer tier at a divisor of their checkpoint interval, its own loads found
    corrupt or not, its saves failing or written after their blocking or neither, keeping one copy or three."""
    s = draw(mixed_specs(st.sampled_from([None, None, BURSTS, DOMAINS, Servers(burst_per_day=20.0,
                                                                                  burst_domain=2)])))
    assume(s.ckpt_interval_steps > 1)
    every = draw(st.sampled_from([d for d in range(1, s.ckpt_interval_steps) if s.ckpt_interval_steps % d == 0]))
    kind, copies, jump = draw(st.sampled_from([("local", 1, 1), ("peer", 2, 1), ("peer", 2, 2), ("peer", 4, 1)]))
    n = compile_spec(s).servers
    if kind == "peer" and n and n % (copies * jump):
        kind, copies, jump = "local", 1, 1
    corrupt = draw(st.sampled_from([0.0, 0.0, 0.5]))
    fails = draw(st.sampled_from([0.0, 0.0, 0.3]))
    keep = draw(st.sampled_from([1, 1, 3]))  # its copies kept
    # its saves written after their blocking
    writes = draw(st.sampled_from([0.0, 0.0, 50.0, 700.0]))
    # the persistent checkpoints' loads found corrupt too, or not (beside committed SDCs: the one ring)
    s = replace(s, ckpt_corrupt_on_load=draw(st.sampled_from([0.0, 0.0, 0.4])))
    return replace(s, tier=MemoryTier(kind, every, draw(st.sampled_from([0.0, 1.0, 30.0])),
                                      draw(st.sampled_from([0.0, 10.0])), copies, jump, corrupt, fails, writes, keep))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                           HealthCheck.filter_too_much])
@given(s=tier_specs(), horizon_steps=st.integers(1, 2000), cuts=st.lists(st.floats(0, 1), max_size=10))
def test_any_partition_gives_identical_state_with_a_memory_tier(s, horizon_steps, cuts):
    check_cuts(s, horizon_us(s, horizon_steps), cuts)


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(CONFIGS | COMMITTED)), seed=st.integers(0, 2**32),
       horizon_steps=st.integers(1, 3000), cuts=st.lists(st.floats(0, 1), max_size=10))
def test_any_partition_gives_identical_state_on_the_oracle_configurations(name, seed, horizon_steps, cuts):
    s = replace((CONFIGS | COMMITTED)[name], seed=seed)
    check_cuts(s, horizon_us(s, horizon_steps), cuts)
