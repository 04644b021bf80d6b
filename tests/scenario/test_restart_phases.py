"""The cold restart as a timeline of phases (recovery.phases: stop, reschedule, communicator_init, warmup, each
seconds or a law in the job's size; the load is checkpoint.load_seconds): their sum is every cold restart, a law
is evaluated at the job's size when the file is read, a restart given twice is an error naming both, and the
restart bucket splits by phase exactly (simulate --json's restart_phases, simd_restart_seconds_total)."""

from __future__ import annotations

import math

import pytest
from support.daemon import FakeClock
from support.scenarios import job, scenario_file

from simd.daemon.process import assemble
from simd.models import recovery
from simd.offline.simulate import simulate
from simd.scenario.errors import ConfigError
from simd.scenario.load import parse_config

# TrainMover's 8,192-GPU cold restart without its load (simd/models/recovery.py), NCCL's initialization as the
# power law of recovery.NCCL_INIT_*
NCCL = {"law": "power", "at_gpus": recovery.NCCL_INIT_AT_GPUS, "seconds": recovery.NCCL_INIT_SECONDS,
        "exponent": recovery.NCCL_INIT_EXPONENT}
PHASES = {"stop": 31.2, "reschedule": 90.0, "communicator_init": NCCL, "warmup": 108.0}
# a job with many restarts of every kind: llama3's causes under the warm strategy (software and other restart
# cold), SDCs found by validation (which divides the checkpoint interval: none baked in), and a checkpoint load
BUSY = {"n_gpus": 16384, "failures": {"hard_per_gpu_hour": 1.0e-4, "sdc_per_gpu_hour": 4.0e-5, "causes": "llama3"},
        "recovery": {"strategy": "warm", "phases": PHASES},
        "checkpoint": {"interval_steps": 20, "seconds": 60, "load_seconds": 93.6}}


def _one(**keys):
    (s,) = parse_config(scenario_file(job("p", **keys))).scenarios
    return s


def test_the_phases_sum_is_every_cold_restart_and_a_law_is_taken_at_the_jobs_size():
    s = _one(**BUSY)
    nccl = 65.4 * (16384 / 8192) ** recovery.NCCL_INIT_EXPONENT
    cold = 31.2 + 90.0 + nccl + 108.0
    spec = s.job_spec()
    assert math.isclose(spec.restart_seconds, cold, abs_tol=1e-6)
    restarts = {c.name: c.restart_seconds for c in spec.causes}
    assert restarts["software"] == restarts["other"] == spec.restart_seconds
    assert restarts["gpu"] == recovery.WARM_SWAP_SECONDS
    # a law as the job grows: 65.4 s at 8,192 GPUs, 265 s at 98,304 (NCCLX's stock NCCL), to 1%
    assert _one(**{**BUSY, "n_gpus": 8192}).restart_phases_us()["communicator_init"] == 65_400_000
    assert math.isclose(_one(**{**BUSY, "n_gpus": 98304}).restart_phases_us()["communicator_init"] / 1e6, 265.0,
                        rel_tol=0.01)
    log = {"law": "log", "at_gpus": 1024, "seconds": 100.0, "per_doubling_seconds": 10.0}
    assert _one(n_gpus=4096, recovery={"phases": {"warmup": log}}).cold_restart_seconds == 120.0


def test_phases_equal_to_a_constant_restart_give_the_same_job():
    phased = _one(recovery={"phases": {"stop": 100.0, "warmup": 288.2}})
    plain = _one(restart_seconds=388.2)
    assert phased.job_spec() == plain.job_spec()


@pytest.mark.parametrize(("keys", "message"), [
    ({"restart_seconds": 300, "recovery": {"phases": PHASES}},
     "restart_seconds and recovery.phases both give the cold restart"),
    ({"failures": {**BUSY["failures"], "causes": {"gpu": {"share": 1.0, "restart_seconds": 30}}},
      "recovery": {"phases": PHASES}},
     "failures.causes.gpu.restart_seconds and recovery.phases both give its cold restart"),
    ({"recovery": {"phases": {**PHASES, "checkpoint_load": 93.6}}}, "the load phase is checkpoint.load_seconds"),
    ({"recovery": {"phases": {"warmup": {"law": "log", "at_gpus": 8192, "seconds": 10, "per_doubling_seconds": 20}}}},
     "recovery.phases.warmup: the law gives -70 s at 512 GPUs"),
    ({"recovery": {"phases": {"stop": {"law": "power", "at_gpus": 8, "seconds": 10, "per_doubling_seconds": 1}}}},
     "law: power takes exponent"),
    ({"recovery": {"phases": {"stop": {"law": "cubic", "at_gpus": 8, "seconds": 10, "exponent": 1}}}},
     "recovery.phases.stop.law: input should be 'power' or 'log'"),
])
def test_a_restart_given_twice_or_a_law_out_of_range_is_one_clear_error(keys, message):
    with pytest.raises(ConfigError) as e:
        _one(**keys)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_simulate_splits_the_restart_bucket_by_phase_exactly():
    s = _one(**BUSY)
    phases = {k: v / 1e6 for k, v in s.restart_phases_us().items()}
    seen = {"cold": 0, "warm": 0, "sdc": 0}
    for seed in range(6):
        line = simulate(s, seed, None).as_json()
        split, by_cause = line["restart_phases"], line["interruptions_by_cause"]
        cold = by_cause["software"] + by_cause["other"] + line["sdc_detected"]  # every cold restart
        warm = by_cause["gpu"] + by_cause["network"] + by_cause["host"]
        assert line["sdc_baked"] == 0
        for k, v in phases.items():
            assert split[k] == pytest.approx(cold * v, abs=1e-6)
        assert split["warm_swap"] == pytest.approx(warm * 55.0, abs=1e-6)
        loads = split["checkpoint_load"] / 93.6
        assert abs(loads - round(loads)) < 1e-9 and round(loads) <= cold + warm
        assert sum(split.values()) == pytest.approx(line["restart_seconds"], abs=1e-6)
        seen = {"cold": seen["cold"] + cold, "warm": seen["warm"] + warm, "sdc": seen["sdc"] + line["sdc_detected"]}
    assert min(seen.values()) > 0  # every kind of restart met
    assert "restart_phases" not in simulate(_one(), 0, None).as_json()  # without phases: as before


def test_the_daemon_exports_the_restart_by_phase_summing_to_the_restart_bucket():
    clock = FakeClock(0.0)
    text = scenario_file(job("phased", seed=3, step_seconds=30, target_steps=100000, **BUSY),
                         job("plain", seed=4, step_seconds=30, target_steps=100000,
                             **{**BUSY, "recovery": {"strategy": "warm"}}),
                         speedup=3600)
    ticker, _ = assemble(parse_config(text), clock=clock, wall=lambda: 1.7e9)
    clock.t = 100.0
    ticker.tick()
    r = ticker.registry
    for name, parts in (("phased", ("stop", "reschedule", "checkpoint_load", "communicator_init", "warmup",
                                    "warm_swap")), ("plain", ("restart", "checkpoint_load", "warm_swap"))):
        got = {p: r.get_sample_value("simd_restart_seconds_total", {"scenario": name, "phase": p}) for p in parts}
        bucket = r.get_sample_value("simd_bucket_seconds_total", {"scenario": name, "bucket": "restart"})
        assert all(v > 0 for v in got.values()), got
        assert sum(got.values()) == pytest.approx(bucket, rel=1e-12)
    assert r.get_sample_value("simd_restart_seconds_total", {"scenario": "plain", "phase": "stop"}) is None
