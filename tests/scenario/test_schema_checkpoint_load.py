"""The scenario key checkpoint.load_seconds: a recovery's load of the checkpoint it rolls back to."""

import pytest

from simd.engine import new_state
from simd.metrics.snapshot import scenario_info
from simd.offline.sweep.run import first_order
from simd.scenario import ConfigError, default_config, parse_config, summary

HEAD = """
scenarios:
  - name: s
    n_gpus: 1024
    step_seconds: 60
    target_steps: 3000
    failures: {hard_per_gpu_hour: 2.0e-4, sdc_per_gpu_hour: 1.5e-4}
    validation: {interval_steps: 25, seconds: 20}
"""


def scenario(checkpoint: str):
    return parse_config(HEAD + f"    checkpoint: {checkpoint}\n").scenarios[0]


def test_the_load_reaches_the_engine_and_check_configs_line():
    s = scenario("{interval_steps: 25, seconds: 300, load_seconds: 93.6}")
    assert s.job_spec().ckpt_load_seconds == 93.6
    assert "checkpoint every 25 steps (300 s, load 93.6 s)" in summary(s)


def test_without_the_key_there_is_no_load_and_the_line_is_unchanged():
    s = scenario("{interval_steps: 25, seconds: 300}")
    assert s.job_spec().ckpt_load_seconds == 0.0
    assert "checkpoint every 25 steps (300 s), " in summary(s)
    assert all(x.job_spec().ckpt_load_seconds == 0.0 for x in default_config().scenarios
               if "load_seconds" not in x.checkpoint.model_fields_set)


def test_the_first_order_models_recovery_holds_the_load():
    """Seed 001's first-order model (the sweep's and the daemon's analytic efficiency): R is the detection, the
    restart and the load, which every rollback but one to the job's start pays."""
    loaded = scenario("{interval_steps: 25, seconds: 300, load_seconds: 93.5}")
    plain = scenario("{interval_steps: 25, seconds: 300}")  # restart_seconds absent: 388.2 s
    assert first_order(loaded).recovery_seconds == first_order(plain).recovery_seconds + 93.5 == 481.7
    assert first_order(loaded).efficiency(25) == scenario_info(loaded, loaded, new_state(loaded.job_spec())) \
        .analytic_efficiency < first_order(plain).efficiency(25)


@pytest.mark.parametrize("value, expected", [
    ("-1", "must be >= 0, got -1"),
    ("2.0e6", "must be <= 1e+06, got 2000000.0"),
    (".nan", "must be a finite number, got nan"),
    ("fast", "must be a number, got 'fast'"),
])
def test_a_bad_load_is_one_line(value, expected):
    with pytest.raises(ConfigError) as exc:
        scenario(f"{{interval_steps: 25, seconds: 300, load_seconds: {value}}}")
    assert exc.value.errors == [f"scenarios[0].checkpoint.load_seconds: {expected}"]
