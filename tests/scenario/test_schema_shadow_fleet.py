"""The scenario file's `shadow` and `fleet`: validated, refused where they conflict,
turned into the engine's JobSpec, scaled by drills; the default configuration's scenarios for them."""

from dataclasses import replace

import pytest

from simd.engine import Accelerator, Shadow, run_job
from simd.scenario import ConfigError, DrillEffects, default_config, parse_config

HEAD = """scenarios:
  - name: s
    step_seconds: 60
    target_steps: 300
    checkpoint: {interval_steps: 25, seconds: 300}
    validation: {interval_steps: 25, seconds: 20}
"""
PLAIN = HEAD + "    n_gpus: 1024\n    failures: {hard_per_gpu_hour: 2.0e-4, sdc_per_gpu_hour: 1.5e-4}\n"
FLEET = HEAD + """    fleet:
      - {type: h100, count: 768, hard_per_gpu_hour: 2.0e-4, sdc_per_gpu_hour: 1.5e-4}
      - {type: mi300, count: 256, hard_per_gpu_hour: 1.0e-3, sdc_per_gpu_hour: 6.0e-4}
"""


def errors(text: str) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        parse_config(text)
    return exc.value.errors


def test_a_fleet_gives_the_gpus_and_the_rates():
    s = parse_config(FLEET).scenarios[0]
    spec = s.job_spec()
    assert s.gpus == spec.n_gpus == 1024
    assert spec.fleet == (Accelerator("h100", 768, 2.0e-4, 1.5e-4), Accelerator("mi300", 256, 1.0e-3, 6.0e-4))
    assert spec.hard_per_gpu_hour == pytest.approx((768 * 2.0e-4 + 256 * 1.0e-3) / 1024)  # the mean, for display
    assert spec.cause_list[0].name == "hardware"
    with_causes = parse_config(FLEET + "    failures: {causes: llama3}\n").scenarios[0].job_spec()
    assert [c.name for c in with_causes.cause_list] == ["gpu", "network", "host", "software", "other"]


def test_shadow_ranks_reach_the_job_spec():
    s = parse_config(PLAIN + "    shadow: {fraction: 0.25, overhead: 0.05}\n").scenarios[0]
    assert s.job_spec().shadow == Shadow(0.25, 0.05)
    assert parse_config(PLAIN + "    shadow: {fraction: 0.5}\n").scenarios[0].job_spec().shadow == Shadow(0.5, 0.0)
    assert parse_config(PLAIN).scenarios[0].job_spec().shadow is None


@pytest.mark.parametrize("text, expected", [
    (FLEET + "    n_gpus: 1024\n",
     "scenarios[0]: n_gpus and fleet exclude each other (the fleet's counts add up to the job's GPUs), "
     "got n_gpus 1024"),
    (FLEET + "    failures: {hard_per_gpu_hour: 1.0e-4}\n",
     "scenarios[0]: failures.hard_per_gpu_hour and fleet exclude each other (each accelerator type has its rates)"),
    (FLEET.replace("mi300", "h100"), "scenarios[0]: fleet: the types must have distinct names, got ['h100', 'h100']"),
    (FLEET.replace("hard_per_gpu_hour: 1.0e-3", "hard_per_gpu_hour: 100.0"),
     "scenarios[0]: fleet[1].hard_per_gpu_hour * step_seconds / 3600 is a probability per GPU-step and must be <= 1, "
     "got 100.0 * 60.0 / 3600"),
    (FLEET + "    shadow: {fraction: 0.5}\n",
     "scenarios[0]: shadow and fleet cannot be combined (shadow ranks on a mixed fleet are not modelled)"),
    (PLAIN + "    shadow: {fraction: 0.5}\n    stragglers: {jitter_seconds: 0.5}\n",
     "scenarios[0]: shadow and stragglers cannot be combined (the step-time model of shadowed ranks is not modelled)"),
    (FLEET.replace("count: 256,", "count: 0,"), "scenarios[0].fleet[1].count: must be > 0, got 0"),
    (FLEET.replace("type: mi300", "type: MI-300"), "scenarios[0].fleet[1].type: must match ^[a-z0-9_]+$, got 'MI-300'"),
    (FLEET.replace("count: 256,", "count: 256, vendor: x,"), "scenarios[0].fleet[1].vendor: unknown key"),
    (HEAD + "    fleet: []\n", "scenarios[0].fleet: must have at least 1 item(s), got []"),
    (PLAIN + "    shadow: {fraction: 1.5}\n", "scenarios[0].shadow.fraction: must be <= 1, got 1.5"),
    (PLAIN + "    shadow: {fraction: 0.5, overhead: -0.1}\n", "scenarios[0].shadow.overhead: must be >= 0, got -0.1"),
    (PLAIN + "    shadow: {overhead: 0.1}\n", "scenarios[0].shadow.fraction: required key is missing"),
    (PLAIN + "    shadow: {fraction: 0.5, ranks: 3}\n", "scenarios[0].shadow.ranks: unknown key"),
])
def test_refusals_are_one_line_each(text, expected):
    assert errors(text) == [expected]


def test_without_a_fleet_n_gpus_and_the_rates_stay_required_with_the_other_errors():
    errs = errors(HEAD.replace("step_seconds: 60", "step_seconds: -1") + "    failures: {causes: llama3}\n")
    assert errs == ["scenarios[0].step_seconds: must be >= 0.001, got -1",
                    "scenarios[0].n_gpus: required key is missing",
                    "scenarios[0].failures.hard_per_gpu_hour: required key is missing",
                    "scenarios[0].failures.sdc_per_gpu_hour: required key is missing"]
    assert errors(HEAD) == ["scenarios[0].n_gpus: required key is missing",
                            "scenarios[0].failures: required key is missing"]


def test_drills_scale_every_types_rates():
    s = parse_config(FLEET).scenarios[0]
    storm = s.with_effects(DrillEffects(hard_rate_factor=10, sdc_rate_factor=2)).job_spec()
    assert [(a.hard_per_gpu_hour, a.sdc_per_gpu_hour) for a in storm.fleet] == [(2.0e-3, 3.0e-4), (1.0e-2, 1.2e-3)]
    parse_config(FLEET + """drills:
  - name: storm
    description: more failures
    duration_seconds: 3600
    effects: {hard_rate_factor: 10}
""")  # a drill on a fleet scenario validates


def test_a_fleet_of_one_type_simulates_as_the_plain_scenario():
    one = HEAD + "    fleet: [{type: h100, count: 1024, hard_per_gpu_hour: 2.0e-4, sdc_per_gpu_hour: 1.5e-4}]\n"
    for seed in range(5):
        plain = run_job(parse_config(PLAIN).scenarios[0].job_spec(seed))
        fleet = run_job(parse_config(one).scenarios[0].job_spec(seed))
        assert replace(fleet, interruptions_by_type=plain.interruptions_by_type,
                       sdc_onsets_by_type=plain.sdc_onsets_by_type) == plain
        assert fleet.interruptions_by_type == {"h100": plain.interruptions}


def test_every_rank_shadowed_needs_no_validation_and_gets_no_warning():
    no_validation = PLAIN.replace("validation: {interval_steps: 25, seconds: 20}", "validation: {interval_steps: 0}")
    assert parse_config(no_validation).warnings()  # SDCs can be baked in
    assert not parse_config(no_validation + "    shadow: {fraction: 1.0}\n").warnings()
    assert parse_config(no_validation + "    shadow: {fraction: 0.5}\n").warnings()


def test_the_default_configuration_has_a_scenario_per_mechanism_on_the_optimized_job():
    config = default_config()
    base = config.scenario("optimized")
    for name in ("optimized-shadow", "optimized-fleet"):
        s = config.scenario(name)
        assert (s.gpus, s.step_seconds, s.target_steps, s.checkpoint, s.restart_seconds) == \
            (base.gpus, base.step_seconds, base.target_steps, base.checkpoint, base.restart_seconds)
    assert config.scenario("optimized-shadow").shadow.fraction == 1.0
    assert [a.type for a in config.scenario("optimized-fleet").fleet] == ["generic", "h100"]
    assert config.scenario("optimized-fleet").fleet[0].hard_per_gpu_hour == base.failures.hard_per_gpu_hour
