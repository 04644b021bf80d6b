"""Predicted failures migrated live to a warm standby (recovery.migration; Cause.predicted, JobSpec.migration_seconds):
the engine against the per-step oracle (means within 4 standard errors, distributions by KS: engine_stats) on
servers with pools, with standbys enough and too few, bursts that are not foreseen, Weibull lifetimes and lemons,
SDCs, hyper windows, in-process restarts and crash loops on the failures that are not migrated; any cut of time
giving the same state.

The statistical and property checks (slow: they live in tests/engine/statistical)."""

from dataclasses import replace

import pytest
from engine_stats import agree_with_oracle, field
from extended_specs import mixed_specs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from specs import llama3_causes, spec
from support.examples import examples
from support.partition import check_cuts, horizon_us

from simd.engine.servers import Servers
from simd.engine.spec import Hyper

SEEDS = 84
LOAD = 93.6  # TrainMover's checkpoint load at 8,192 GPUs (simd/models/recovery.py)
HARDWARE = ("gpu", "host")  # Llama 3's causes a health check may flag ahead


def _predicted(causes, share, names=HARDWARE):
    return tuple(replace(c, predicted=share if c.name in names else 0.0) for c in causes)


POOLS = Servers(gpus_per_server=8, warm_standbys=2, spares=1, preemption_seconds=600.0,
                repair=("exponential", 7200.0, 0.0))
# one standby, bursts of 2 + geometric servers (not foreseen), Weibull lifetimes, lemons, manual repairs
SCARCE = Servers(gpus_per_server=8, warm_standbys=1, spares=1, preemption_seconds=600.0,
                 repair=("exponential", 14400.0, 0.0), manual_probability=0.2, manual_repair=("exponential", 86400.0,
                                                                                               0.0),
                 lifetime="weibull", shape=0.7, lemon_fraction=0.1, lemon_multiplier=5.0, burst_per_day=2.0,
                 burst_mean_size=3.0)
CONFIGS = {
    "pools": spec(n_gpus=64, target_steps=1500, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.0, servers=POOLS,
                  causes=_predicted(llama3_causes(), 0.5), migration_seconds=30.0, ckpt_load_seconds=LOAD),
    "scarce_bursts_sdc_hyper": spec(n_gpus=64, target_steps=1500, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.002,
                                    validation_interval_steps=20, hyper=Hyper(5, 300), servers=SCARCE,
                                    causes=_predicted(llama3_causes("warm"), 0.8), migration_seconds=60.0,
                                    ckpt_load_seconds=LOAD),
    "with_restart_paths": spec(n_gpus=64, target_steps=1500, hard_per_gpu_hour=0.01, sdc_per_gpu_hour=0.0,
                               servers=POOLS, ckpt_load_seconds=LOAD, migration_seconds=30.0,
                               causes=tuple(replace(c, in_process=c.name == "software", crash_loop=True)
                                            for c in _predicted(llama3_causes(), 0.3, ("gpu", "network"))),
                               in_process_seconds=20.0, in_process_success=0.5, restart_failure=0.3,
                               restart_attempts=2, escalation_seconds=1800.0),
}
READS = {f: field(f) for f in ("effective_utilization", "interruptions", "recompute_steps", "wall_seconds",
                               "restart_seconds", "server_failures", "sdc_detected")} | {
    "migrated": (lambda j: j.migration["migrated"], lambda r: r["migrations"]),
    "no_standby": (lambda j: j.migration["no_standby"], lambda r: r["migrations_no_standby"]),
    "waiting_seconds": (lambda j: j.bucket_seconds["waiting"], lambda r: r["waiting_seconds"]),
    "standby": (lambda j: j.replacements["standby"], lambda r: r["replacements_standby"]),
    "repairs": (lambda j: j.repairs["started"], lambda r: r["repairs_started"])}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_engine_matches_the_per_step_loop_with_live_migration(name):
    means = agree_with_oracle(name, CONFIGS[name], SEEDS, READS, distributions=("migrated",))
    assert means["migrated"] > 1  # the mechanism ran
    if name == "scarce_bursts_sdc_hyper":  # one standby: flagged failures that found none
        assert means["no_standby"] > 0.2


@st.composite
def migration_specs(draw):
    """The kernel's plans and the extended mechanisms' jobs that run on servers, on pools with warm standbys, with
    some of their causes' failures flagged ahead."""
    s = draw(mixed_specs(st.just(None)))
    pools = draw(st.sampled_from([POOLS, replace(SCARCE, warm_standbys=draw(st.integers(1, 3)))]))
    s = replace(s, servers=pools, committed_sdc=None, hyper=None, n_gpus=64, hard_per_gpu_hour=0.01,
                shadow=None, fleet=())
    causes = s.cause_list
    shares = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=len(causes), max_size=len(causes)))
    return replace(s, causes=tuple(replace(c, predicted=x) for c, x in zip(causes, shares, strict=True)),
                   migration_seconds=draw(st.sampled_from([0.0, 1.0, 60.0])))


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                           HealthCheck.filter_too_much])
@given(s=migration_specs(), horizon_steps=st.integers(1, 2000), cuts=st.lists(st.floats(0, 1), max_size=10))
def test_any_partition_gives_identical_state_with_live_migration(s, horizon_steps, cuts):
    check_cuts(s, horizon_us(s, horizon_steps), cuts)
