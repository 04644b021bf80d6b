"""Scenario keys of two mechanisms: checkpoint.hyper and sdc (committed SDCs, late detectors)."""

import pytest

from simd.engine.spec import CommittedSdc, Detector, Hyper
from simd.scenario import ConfigError, default_config, parse_config, summary

HEAD = """
scenarios:
  - name: s
    n_gpus: 1024
    step_seconds: 60
    target_steps: 3000
    failures: {hard_per_gpu_hour: 2.0e-4, sdc_per_gpu_hour: 1.5e-4}
"""


def scenario(extra: str):
    return parse_config(HEAD + extra).scenarios[0]


def errors(extra: str) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        parse_config(HEAD + extra)
    return exc.value.errors


LAYERS = """
    sdc:
      semantics: committed
      retention_checkpoints: 4
      detectors:
        - {name: guard, coverage: 0.5, latency: {distribution: lognormal, median_seconds: 300, sigma: 1.0}}
        - {name: ripple, latency: {distribution: uniform, max_seconds: 259200}}
        - {name: scan, latency: {distribution: exponential, mean_seconds: 86400}}
"""


def test_hyper_and_committed_sdc_reach_the_engine():
    s = scenario("    checkpoint: {interval_steps: 25, seconds: 300, hyper: {interval_steps: 5, window_steps: 100}}\n"
                 "    validation: {interval_steps: 5, seconds: 20}\n" + LAYERS)
    spec = s.job_spec()
    assert spec.hyper == Hyper(5, 100)
    assert spec.committed_sdc == CommittedSdc((Detector("guard", "lognormal", 300.0, 1.0, 0.5),
                                               Detector("ripple", "uniform", 259200.0),
                                               Detector("scan", "exponential", 86400.0)), 4)
    assert s.warnings() == []  # validation every 5 divides both intervals
    line = summary(s)
    assert "hyper-checkpointing every 5 steps for 100 steps" in line and "committed SDCs (3 detectors" in line


def test_shadow_ranks_combine_with_hyper_checkpointing_and_committed_sdcs():
    """Refused until the per-step oracle modelled them together (simd/engine/oracle.py; the engine against it
    in tests/engine/statistical/test_shadow_oracle.py): one scenario with all three reaches the engine."""
    s = scenario("    checkpoint: {interval_steps: 25, seconds: 300, hyper: {interval_steps: 5, window_steps: 100}}\n"
                 "    shadow: {fraction: 0.5, overhead: 0.05}\n" + LAYERS)
    spec = s.job_spec()
    assert spec.hyper == Hyper(5, 100) and spec.shadow.fraction == 0.5 and len(spec.committed_sdc.detectors) == 3


def test_without_the_keys_the_meaning_is_seed_000s():
    spec = scenario("    checkpoint: {interval_steps: 25, seconds: 300}\n").job_spec()
    assert spec.hyper is None and spec.committed_sdc is None
    spec = scenario("    checkpoint: {interval_steps: 25, seconds: 300}\n    sdc: {semantics: reference}\n").job_spec()
    assert spec.committed_sdc is None


@pytest.mark.parametrize("extra, expected", [
    ("    checkpoint: {interval_steps: 25, seconds: 300, hyper: {interval_steps: 0, window_steps: 5}}\n",
     "scenarios[0].checkpoint.hyper.interval_steps: must be > 0, got 0"),
    ("    checkpoint: {interval_steps: 25, seconds: 300, hyper: {interval_steps: 5}}\n",
     "scenarios[0].checkpoint.hyper.window_steps: required key is missing"),
    ("    checkpoint: {interval_steps: 25, seconds: 300, hyper: {interval_steps: 5, window_steps: 5, anchor: 1}}\n",
     "scenarios[0].checkpoint.hyper.anchor: unknown key"),
    ("    checkpoint: {interval_steps: 25, seconds: 300}\n    sdc: {semantics: committed}\n",
     "scenarios[0]: sdc.retention_checkpoints (or checkpoint.retention_checkpoints): required with semantics: "
     "committed"),
    ("    checkpoint: {interval_steps: 25, seconds: 300}\n    sdc: {semantics: reference, retention_checkpoints: 3}\n",
     "scenarios[0].sdc: sdc.detectors and sdc.retention_checkpoints need semantics: committed (under the reference "
     "semantics an SDC never outlives a checkpoint)"),
    ("    checkpoint: {interval_steps: 25, seconds: 300}\n    sdc: {semantics: later}\n",
     "scenarios[0].sdc.semantics: input should be 'reference' or 'committed', got 'later'"),
    ("    checkpoint: {interval_steps: 25, seconds: 300}\n    sdc: {semantics: committed, retention_checkpoints: 0}\n",
     "scenarios[0].sdc.retention_checkpoints: must be >= 1, got 0"),
    ("    checkpoint: {interval_steps: 25, seconds: 300}\n    sdc: {semantics: committed, retention_checkpoints: 2, "
     "detectors: [{name: a, latency: {distribution: weibull, mean_seconds: 1}}]}\n",
     "scenarios[0].sdc.detectors[0].latency: 'distribution' must be one of 'exponential', 'lognormal', 'uniform', "
     "got {'distribution': 'weibull', 'mean_seconds': 1}"),
    ("    checkpoint: {interval_steps: 25, seconds: 300}\n    sdc: {semantics: committed, retention_checkpoints: 2, "
     "detectors: [{name: a, latency: {distribution: uniform}}]}\n",
     "scenarios[0].sdc.detectors[0].latency.uniform.max_seconds: required key is missing"),
    ("    checkpoint: {interval_steps: 25, seconds: 300}\n    sdc: {semantics: committed, retention_checkpoints: 2, "
     "detectors: [{name: a, coverage: 2, latency: {distribution: uniform, max_seconds: 1}}]}\n",
     "scenarios[0].sdc.detectors[0].coverage: must be <= 1, got 2"),
    ("    checkpoint: {interval_steps: 25, seconds: 300}\n    sdc: {semantics: committed, retention_checkpoints: 2, "
     "detectors: [{name: a, latency: {distribution: uniform, max_seconds: 1}}, "
     "{name: a, latency: {distribution: uniform, max_seconds: 2}}]}\n",
     "scenarios[0].sdc: sdc.detectors: the names must be distinct, got ['a', 'a']"),
])
def test_bad_keys_are_one_line_each(extra, expected):
    assert errors(extra) == [expected]


def test_warnings_name_what_can_happen():
    s = scenario("    checkpoint: {interval_steps: 25, seconds: 300, hyper: {interval_steps: 5, window_steps: 100}}\n"
                 "    validation: {interval_steps: 25, seconds: 20}\n")
    (w,) = s.warnings()
    assert "validation every 25 steps does not divide checkpoint.hyper.interval_steps 5" in w
    s = scenario("    checkpoint: {interval_steps: 25, seconds: 300}\n" + LAYERS)
    (w,) = s.warnings()
    assert "no validation: SDCs can be committed with checkpoints" in w



def test_default_configuration_has_both_scenarios_beside_optimized():
    c = default_config()
    opt = c.scenario("optimized").job_spec()
    for name in ("optimized-hyper", "optimized-layered-sdc"):
        spec = c.scenario(name).job_spec()
        same_job = (spec.n_gpus, spec.step_seconds, spec.target_steps, spec.hard_per_gpu_hour, spec.sdc_per_gpu_hour,
                    spec.ckpt_interval_steps, spec.ckpt_seconds, spec.restart_seconds, spec.seed)
        assert same_job == (opt.n_gpus, opt.step_seconds, opt.target_steps, opt.hard_per_gpu_hour,
                            opt.sdc_per_gpu_hour, opt.ckpt_interval_steps, opt.ckpt_seconds, opt.restart_seconds,
                            opt.seed), name
    assert c.scenario("optimized-hyper").job_spec().hyper is not None
    assert c.scenario("optimized-layered-sdc").job_spec().committed_sdc is not None
