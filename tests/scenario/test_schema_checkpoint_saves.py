"""The scenario keys of asynchronous, failing and kept saves and corrupt loads: checkpoint.write_seconds,
write_slowdown, save_failure, retention_checkpoints (one number with sdc.retention_checkpoints), corrupt_on_load;
what reaches the engine, check-config's line, and the errors (one line each, naming the key)."""

import pytest

from simd.engine import run_job
from simd.scenario import ConfigError, parse_config, summary

HEAD = """
scenarios:
  - name: s
    n_gpus: 1024
    step_seconds: 60
    target_steps: 3000
    failures: {hard_per_gpu_hour: 2.0e-4, sdc_per_gpu_hour: 1.5e-4}
    validation: {interval_steps: 25, seconds: 20}
"""
COMMITTED = "    sdc: {semantics: committed, detectors: [{name: scan, latency: {distribution: exponential, " \
            "mean_seconds: 3600}}]%s}\n"


def scenario(checkpoint: str, extra: str = ""):
    return parse_config(HEAD + f"    checkpoint: {checkpoint}\n" + extra).scenarios[0]


def errors(checkpoint: str, extra: str = "") -> list[str]:
    with pytest.raises(ConfigError) as exc:
        scenario(checkpoint, extra)
    return exc.value.errors


def test_the_keys_reach_the_engine_and_check_configs_line():
    s = scenario("{interval_steps: 25, seconds: 30, write_seconds: 240, write_slowdown: 1.05, "
                 "save_failure: {probability: 0.01}, retention_checkpoints: 4, corrupt_on_load: 0.001}")
    j = s.job_spec()
    assert (j.ckpt_write_seconds, j.ckpt_write_slowdown, j.ckpt_save_failure) == (240, 1.05, 0.01)
    assert (j.ckpt_retention, j.ckpt_corrupt_on_load) == (4, 0.001)
    assert "(30 s, written asynchronously in 240 s, steps 1.05x meanwhile, 0.01 of saves failing)" in summary(s)


def test_the_retention_is_one_number_under_either_key():
    by_sdc = scenario("{interval_steps: 25, seconds: 30}", COMMITTED % ", retention_checkpoints: 3")
    by_ckpt = scenario("{interval_steps: 25, seconds: 30, retention_checkpoints: 3}", COMMITTED % "")
    assert by_sdc.job_spec() == by_ckpt.job_spec()
    assert by_ckpt.job_spec().committed_sdc.retention_checkpoints == 3 and by_ckpt.job_spec().ckpt_retention == 0
    assert run_job(by_sdc.job_spec()) == run_job(by_ckpt.job_spec())
    assert "retention 3 checkpoints" in summary(by_ckpt)


@pytest.mark.parametrize("checkpoint, extra, expected", [
    ("{interval_steps: 25, seconds: 30, retention_checkpoints: 3}", COMMITTED % ", retention_checkpoints: 3",
     "sdc.retention_checkpoints and checkpoint.retention_checkpoints are one number"),
    ("{interval_steps: 25, seconds: 30}", COMMITTED % "", "sdc.retention_checkpoints (or "
     "checkpoint.retention_checkpoints): required with semantics: committed"),
    ("{interval_steps: 25, seconds: 30, retention_checkpoints: 3, corrupt_on_load: 0.1}", COMMITTED % "",
     "committed_sdc and corrupt_loads cannot be combined"),
    ("{interval_steps: 25, seconds: 30, corrupt_on_load: 0.1}", "",
     "checkpoint.corrupt_on_load needs checkpoint.retention_checkpoints"),
    ("{interval_steps: 25, seconds: 30, write_slowdown: 1.1}", "",
     "checkpoint.write_slowdown needs checkpoint.write_seconds > 0"),
    ("{interval_steps: 25, seconds: 30, save_failure: {probability: 1.5}}", "",
     "scenarios[0].checkpoint.save_failure.probability: must be <= 1"),
    ("{interval_steps: 25, seconds: 30, write_seconds: -1}", "", "scenarios[0].checkpoint.write_seconds: must be >= 0"),
    ("{interval_steps: 25, seconds: 30, corrupt_on_load: 0.1, retention_checkpoints: 0}", "",
     "scenarios[0].checkpoint.retention_checkpoints: must be >= 1"),
])
def test_a_bad_combination_is_one_line_naming_it(checkpoint, extra, expected):
    errs = errors(checkpoint, extra)
    assert len(errs) == 1 and expected in errs[0], errs
