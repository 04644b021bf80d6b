"""Asynchronous and failing saves and corrupt loads (checkpoint.write_seconds, write_slowdown, save_failure,
corrupt_on_load, retention_checkpoints; JobSpec.ckpt_write_seconds, ckpt_write_slowdown, ckpt_save_failure,
ckpt_corrupt_on_load, ckpt_retention):
the engine against the per-step oracle (means within 4 standard errors, distributions by KS: engine_stats) with
failures during writes, saves that wait for the write before them, and every mechanism a write meets (validation,
SDCs baked in and committed with their detectors, hyper windows, causes, stragglers, shadow ranks, servers with
pools and bursts); any cut of time giving the same state on each.

The statistical and property checks (slow: they live in tests/engine/statistical)."""

from dataclasses import replace

import pytest
from engine_stats import agree_with_oracle, field
from extended_specs import mixed_specs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from late_sdc_cases import CONFIGS as LATE
from specs import llama3_causes, spec
from support.examples import examples
from support.partition import check_cuts, horizon_us

from simd.engine.servers import Servers
from simd.engine.shadow import Shadow
from simd.engine.spec import Hyper, Stragglers

SEEDS = 84  # per configuration, as the newer oracle modules (the suite's 5-minute limit)
LOAD = 93.6  # TrainMover's checkpoint load at 8,192 GPUs (simd/models/recovery.py)
POOLS = Servers(warm_standbys=1, spares=1, preemption_seconds=600.0, repair=("exponential", 7200.0, 0.0),
                burst_per_day=2.0, burst_mean_size=3.0)


def _async(s, write: float, slowdown: float = 1.25, fail: float = 0.0):
    return replace(s, ckpt_write_seconds=write, ckpt_write_slowdown=slowdown if write else 1.0,
                   ckpt_save_failure=fail)


# seed 000's optimized job (60 s steps, a checkpoint every 25 steps = 1,500 s) with writes of about half an
# interval and a hard rate that puts failures in them; writes longer than the interval (every save waits); SDCs
# baked in (validation not dividing the checkpoint) beside writes; committed SDCs with hyper windows, causes and
# stragglers; shadow disagreements; servers with pools and bursts
CONFIGS = {
    "failures_during_writes": _async(spec(hard_per_gpu_hour=6e-4, ckpt_load_seconds=LOAD), 700.0),
    "writes_wait": _async(spec(hard_per_gpu_hour=3e-4), 2400.0, 1.05),
    "baked_nondividing": _async(spec(n_gpus=4096, hard_per_gpu_hour=5e-4, sdc_per_gpu_hour=3.0e-4,
                                     target_steps=1200, ckpt_interval_steps=50, validation_interval_steps=40), 1800.0),
    "committed_hyper_causes_stragglers": _async(replace(LATE["with_hyper_causes_stragglers"],
                                                        ckpt_load_seconds=LOAD), 240.0, 1.5),
    "stragglers_causes": _async(spec(causes=llama3_causes("warm"), hard_per_gpu_hour=4e-4,
                                     stragglers=Stragglers(0.5, 1, 1.2, replace_after_steps=40)), 900.0),
    "shadow": _async(spec(causes=llama3_causes("warm"), restart_seconds=388.2, sdc_per_gpu_hour=4e-4,
                          shadow=Shadow(0.5, 0.05)), 600.0),
    "servers_pools_bursts": _async(spec(n_gpus=64, hard_per_gpu_hour=0.015, sdc_per_gpu_hour=0.002, servers=POOLS,
                                        ckpt_load_seconds=LOAD), 1000.0),
    "hyper": _async(spec(sdc_per_gpu_hour=6e-4, validation_interval_steps=20, hyper=Hyper(5, 300)), 400.0),
    # saves that fail (a fifth of them), blocking and written, with committed SDCs
    "failing_blocking": _async(spec(hard_per_gpu_hour=4e-4, ckpt_load_seconds=LOAD), 0.0, fail=0.2),
    "failing_writes": _async(spec(hard_per_gpu_hour=4e-4), 700.0, fail=0.2),
    "failing_committed": _async(replace(LATE["nondividing_retention1"], ckpt_load_seconds=LOAD), 300.0, fail=0.3),
    # corrupt loads: half of the loads corrupt with 3 checkpoints kept, so chains reach the job's start; with
    # asynchronous and failing saves and SDCs baked in; with shadow disagreements and hyper windows
    "corrupt_chains_to_start": replace(spec(hard_per_gpu_hour=1e-4, ckpt_load_seconds=600.0),
                                       ckpt_corrupt_on_load=0.5, ckpt_retention=3),
    "corrupt_async_failing_baked": replace(_async(spec(hard_per_gpu_hour=1e-4, sdc_per_gpu_hour=2e-4,
                                                       ckpt_interval_steps=50, validation_interval_steps=40,
                                                       ckpt_load_seconds=LOAD), 900.0, fail=0.2),
                                           ckpt_corrupt_on_load=0.3, ckpt_retention=2),
    "corrupt_shadow_hyper": replace(spec(causes=llama3_causes("warm"), sdc_per_gpu_hour=4e-4, shadow=Shadow(0.5, 0.05),
                                         validation_interval_steps=20, hyper=Hyper(5, 300), ckpt_load_seconds=LOAD),
                                    ckpt_corrupt_on_load=0.2, ckpt_retention=4),
}
READS = {f: field(f) for f in ("effective_utilization", "interruptions", "sdc_detected", "sdc_baked",
                               "recompute_steps", "wall_seconds", "checkpoint_seconds", "checkpoints")}
SAVES = {"saves_aborted": (lambda j: j.saves["aborted"], lambda r: r["saves_aborted"]),
         "saves_failed": (lambda j: j.saves["failed"], lambda r: r["saves_failed"]),
         "write_seconds": (lambda j: j.saves["write_seconds"], lambda r: r["checkpoint_write_seconds"]),
         "wait_seconds": (lambda j: j.saves["wait_seconds"], lambda r: r["checkpoint_wait_seconds"])}
LATE_READS = {f: field(f) for f in ("sdc_late_found", "sdc_unrecoverable", "checkpoints_lost")}
LOADS = {"loads_corrupt": (lambda j: j.loads["corrupt"], lambda r: r["loads_corrupt"]),
         "fallbacks_to_start": (lambda j: j.loads["fallbacks_to_start"], lambda r: r["fallbacks_to_start"])}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_engine_matches_the_per_step_loop_with_asynchronous_saves(name):
    base = CONFIGS[name]
    reads = READS | (SAVES if base.ckpt_write_seconds or base.ckpt_save_failure else {}) | \
        (LATE_READS if base.committed_sdc else {}) | (LOADS if base.ckpt_corrupt_on_load else {})
    means = agree_with_oracle(name, base, SEEDS, reads)
    if base.ckpt_write_seconds:
        assert means["write_seconds"] > 0 and means["wait_seconds"] > 0
    if base.ckpt_save_failure:
        assert means["saves_failed"] > 0.15 * means["checkpoints"]
    if base.ckpt_corrupt_on_load:
        assert means["loads_corrupt"] > 0.2
    if name == "corrupt_chains_to_start":
        assert means["fallbacks_to_start"] > 0.1
    if name in ("failures_during_writes", "servers_pools_bursts", "baked_nondividing"):
        assert means["saves_aborted"] > 0.3
    if name == "writes_wait":  # every save but the first waits
        assert means["wait_seconds"] > (means["checkpoints"] - 2) * 800


WRITES = st.sampled_from([0.0, 1.0, 45.0, 300.0, 700.0, 5000.0])
SLOWDOWNS = st.sampled_from([1.0, 1.05, 1.5, 2.0])
FAILURES = st.sampled_from([0.0, 0.0, 0.1, 0.5, 1.0])
SERVERS = st.sampled_from([None, None, POOLS, Servers(burst_per_day=20.0, burst_mean_size=3.0)])


@st.composite
def async_specs(draw):
    """The kernel's plans (some on servers) and the extended mechanisms', each with asynchronous saves."""
    s = _async(draw(mixed_specs(SERVERS)), draw(WRITES), draw(SLOWDOWNS), draw(FAILURES))
    if s.committed_sdc is None and draw(st.booleans()):  # corrupt loads (committed SDCs refuse them)
        s = replace(s, ckpt_corrupt_on_load=draw(st.sampled_from([0.2, 0.5, 1.0])),
                    ckpt_retention=draw(st.integers(1, 4)), ckpt_load_seconds=draw(st.sampled_from([0.0, 93.6])))
    return s


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=async_specs(), horizon_steps=st.integers(1, 2000), cuts=st.lists(st.floats(0, 1), max_size=10))
def test_any_partition_gives_identical_state_with_asynchronous_saves(s, horizon_steps, cuts):
    check_cuts(s, horizon_us(s, horizon_steps), cuts)


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(CONFIGS)), seed=st.integers(0, 2**32), horizon_steps=st.integers(1, 4000),
       cuts=st.lists(st.floats(0, 1), max_size=10))
def test_any_partition_gives_identical_state_on_the_oracle_configurations(name, seed, horizon_steps, cuts):
    s = replace(CONFIGS[name], seed=seed)
    check_cuts(s, horizon_us(s, horizon_steps), cuts)
