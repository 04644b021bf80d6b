"""Scenario files: validation errors name the field path and the constraint; unknown keys are errors."""

import pytest
from support.scenarios import OPTIMIZED as GOOD
from support.scenarios import job, scenario_file

from simd.models import recovery
from simd.scenario import ConfigError, default_config, parse_config


def errors(text):
    with pytest.raises(ConfigError) as exc:
        parse_config(text)
    return exc.value.errors


def test_design_example_is_valid_and_means_seed_000():
    c = parse_config(GOOD)
    s = c.scenarios[0]
    spec = s.job_spec()
    assert (spec.n_gpus, spec.step_seconds, spec.target_steps, spec.ckpt_interval_steps) == (1024, 60, 3000, 25)
    assert spec.causes[0].name == "hardware" and spec.causes[0].restart_seconds == 60
    assert spec.stragglers is None and s.replicas == 1
    assert c.warnings() == []


def test_error_names_the_field_path_and_constraint():
    assert errors(GOOD.replace("interval_steps: 25, seconds: 300", "interval_steps: -5, seconds: 300")) == [
        "scenarios[0].checkpoint.interval_steps: must be > 0, got -5"]


def test_every_problem_is_reported_one_per_line():
    bad = GOOD.replace("n_gpus: 1024", "n_gpus: 0").replace("step_seconds: 60", "step_seconds: fast") \
        .replace("seed: 8", "seed: 8\n    colour: blue")
    assert sorted(errors(bad)) == sorted([
        "scenarios[0].n_gpus: must be > 0, got 0",
        "scenarios[0].step_seconds: must be a number, got 'fast'",
        "scenarios[0].colour: unknown key",
    ])


def test_unknown_top_level_key_and_missing_keys():
    errs = errors("scenarios:\n  - name: a\n    n_gpus: 4\nspeeed: 3\n")
    assert "speeed: unknown key" in errs
    assert "scenarios[0].step_seconds: required key is missing" in errs
    assert "scenarios[0].failures: required key is missing" in errs


def test_an_unknown_key_is_named_and_its_value_never_shown():
    """A key the schema does not know may hold anything (a password pasted into the wrong file): its name says
    what is wrong; its value is not echoed, however short."""
    errs = errors(GOOD.replace("seed: 8", "seed: 8\n    password: hunter2\n    token: {secret: abc}"))
    assert sorted(errs) == ["scenarios[0].password: unknown key", "scenarios[0].token: unknown key"]
    assert not any("hunter2" in e or "abc" in e for e in errs)


def test_strings_are_not_coerced_to_numbers():
    assert errors(GOOD.replace("n_gpus: 1024", "n_gpus: '1024'")) == [
        "scenarios[0].n_gpus: must be an integer, got '1024'"]


def test_yaml_syntax_and_shape_errors():
    assert errors("scenarios: [")[0].startswith("<config>: not valid YAML at line 2")  # libyaml: at the end
    assert errors("- 1\n- 2\n") == ["<config>: the top level must be a mapping with a 'scenarios' list, got list"]


def test_duplicate_names_and_probability_bounds():
    two = GOOD + GOOD.split("scenarios:\n", 1)[1]
    assert errors(two) == ["scenarios[1].name: 'optimized' is already the name of scenarios[0]"]
    assert errors(GOOD.replace("hard_per_gpu_hour: 2.0e-4", "hard_per_gpu_hour: 100")) == [
        "scenarios[0]: failures.hard_per_gpu_hour * step_seconds / 3600 is a probability per GPU-step and must "
        "be <= 1, got 100.0 * 60.0 / 3600"]


def test_nondividing_validation_warns():
    c = parse_config(GOOD.replace("validation: {interval_steps: 25", "validation: {interval_steps: 40"))
    assert len(c.warnings()) == 1 and "does not divide" in c.warnings()[0]


def test_a_tier_validation_misses_warns_with_what_its_sdcs_do_under_each_semantics():
    """A memory tier every 5 steps, validation every 25: an SDC can reach the tier's saves; under the reference
    semantics it is baked in and rolled back there, under committed SDCs it is committed with the save and only a
    detector finds it (docs/model.md, "Memory tiers": SDCs), as the checkpoints' own warning says."""
    tier = GOOD.replace("checkpoint: {interval_steps: 25, seconds: 300}", "checkpoint: {interval_steps: 25, "
                        "seconds: 300, tiers: {local: {interval_steps: 5, seconds: 1, load_seconds: 10}}}")
    (reference,) = parse_config(tier).warnings()
    (committed,) = parse_config(tier + "    sdc: {semantics: committed, retention_checkpoints: 2}\n").warnings()
    assert "sdc-baked-tier" in reference and "rolled back there" in reference
    assert "sdc-baked-tier" in committed and "rolled back" not in committed and "sdc.detectors" in committed


def test_causes_recovery_and_stragglers():
    text = GOOD.replace("sdc_per_gpu_hour: 1.5e-4}", "sdc_per_gpu_hour: 1.5e-4, causes: llama3}").replace(
        "restart_seconds: 60", "recovery: {strategy: warm}\n    stragglers: {jitter_seconds: 0.5, slow_ranks: 1, "
                               "slowdown: 1.2, mitigation: {detect_after_steps: 50}}")
    spec = parse_config(text).scenarios[0].job_spec()
    by = {c.name: c for c in spec.causes}
    assert set(by) == set(recovery.LLAMA3_CAUSE_SHARES)
    assert by["gpu"].restart_seconds == recovery.WARM_SWAP_SECONDS and by["gpu"].detection_seconds == 10.0
    assert by["software"].restart_seconds == recovery.COLD_RESTART_SECONDS  # absent restart: TrainMover
    assert spec.stragglers.replace_after_steps == 50
    assert errors(GOOD.replace("sdc_per_gpu_hour: 1.5e-4}", "sdc_per_gpu_hour: 1.5e-4, causes: {gpu: 0.5}}")) == [
        "scenarios[0].failures.causes: shares must sum to 1, got 0.5"]


def test_sweeps_expand_to_named_scenarios():
    text = GOOD + """sweeps:
  - name: sw
    checkpoint_intervals: [40, 10, 20]
    scenario: {n_gpus: 8, step_seconds: 30, target_steps: 100, failures: {hard_per_gpu_hour: 1.0e-3,
               sdc_per_gpu_hour: 0}, checkpoint: {interval_steps: 1, seconds: 5}, replicas: 3}
"""
    c = parse_config(text)
    names = [s.name for s in c.all_scenarios]
    assert names == ["optimized", "sw-10", "sw-20", "sw-40"]
    assert c.scenario("sw-20").checkpoint.interval_steps == 20 and c.scenario("sw-20").sweep == "sw"
    assert c.scenario("sw-20").replica_seeds() == [0, 1, 2]
    clash = text.replace("name: optimized", "name: sw-20")
    assert "is already the name of" in errors(clash)[0]


def test_embedded_default_is_valid():
    c = default_config()
    assert {"ideal", "naive", "optimized"} <= {s.name for s in c.all_scenarios}


def test_numbers_are_read_as_yaml_1_2():
    # YAML 1.1 (PyYAML's default) reads 2e-4 as text and `no` as false; YAML 1.2, like every other tool, does not
    c = parse_config(GOOD.replace("hard_per_gpu_hour: 2.0e-4", "hard_per_gpu_hour: 2e-4")
                     .replace("sdc_per_gpu_hour: 1.5e-4", "sdc_per_gpu_hour: 15E-5"))
    assert c.scenarios[0].failures.hard_per_gpu_hour == 2e-4 and c.scenarios[0].failures.sdc_per_gpu_hour == 1.5e-4
    assert parse_config(GOOD.replace("seed: 8", "seed: 0x10")).scenarios[0].seed == 16
    assert parse_config(GOOD.replace("seed: 8", "seed: 010")).scenarios[0].seed == 10  # 1.1: octal 8
    assert parse_config(GOOD.replace("name: optimized", "name: no")).scenarios[0].name == "no"  # 1.1: False
    assert errors(GOOD.replace("seed: 8", "seed: .inf")) == ["scenarios[0].seed: must be an integer, got inf"]
    assert errors(GOOD.replace("step_seconds: 60", 'step_seconds: "1e-3"')) == [
        "scenarios[0].step_seconds: must be a number, got '1e-3'"]  # quoted: text, as YAML says


def test_engine_limits_are_validated_with_their_range():
    assert errors(GOOD.replace("step_seconds: 60", "step_seconds: 1.0e-9")) == [
        "scenarios[0].step_seconds: must be >= 0.001, got 1e-09"]
    assert errors(GOOD.replace("interval_steps: 25, seconds: 300", "interval_steps: 1000000000000000000000000000000,"
                               " seconds: 300")) == [
        "scenarios[0].checkpoint.interval_steps: must be <= 1000000000, got 1000000000000000000000000000000"]
    assert errors(GOOD.replace("seconds: 300", "seconds: 1.0e+300")) == [
        "scenarios[0].checkpoint.seconds: must be <= 1e+06, got 1e+300"]
    assert errors(GOOD.replace("target_steps: 3000", "target_steps: 100000000000")) == [
        "scenarios[0]: target_steps * step_seconds is the failure-free job and must be <= 1e+12 simulated seconds, "
        "got 100000000000 * 60"]


def test_long_values_are_not_echoed_whole():
    (line,) = errors(GOOD.replace("seed: 8", "seed: [" + ", ".join(["1"] * 20_000) + "]"))
    assert line.startswith("scenarios[0].seed: must be an integer, got [1, 1,") and len(line) < 200


def test_the_file_size_of_scenarios_is_bounded():
    one = GOOD.split("scenarios:\n")[1]
    many = "scenarios:\n" + "".join(one.replace("name: optimized", f"name: s{i}") for i in range(1001))
    assert errors(many)[0].startswith("scenarios: must have at most 1000 item(s)")


DRILL = """drills:
  - name: storm
    description: hard failures x10 for ten simulated hours
    duration_seconds: 36000
    effects: {hard_rate_factor: 10, checkpoint_seconds_factor: 2}
"""


def test_drills_scale_their_scenarios():
    c = parse_config(GOOD + DRILL)
    d = c.drill("storm")
    s = c.drill_targets(d)[0].with_effects(d.effects)
    assert s.failures.hard_per_gpu_hour == pytest.approx(2.0e-3) and s.checkpoint.seconds == 600
    assert d.start_at_seconds is None  # on demand only


def test_drill_errors_name_the_drill():
    assert errors(GOOD + DRILL + "    scenarios: [nope]\n") == ["drills[0].scenarios[0]: no scenario named 'nope'"]
    assert errors(GOOD + DRILL + DRILL.split("drills:\n")[1]) == [
        "drills[1].name: 'storm' is already the name of drills[0]"]
    huge = (GOOD + DRILL).replace("hard_rate_factor: 10", "hard_rate_factor: 1000000")
    assert errors(huge)[0].startswith("drills[0] on scenario optimized: failures.hard_per_gpu_hour * step_seconds")
    assert errors((GOOD + DRILL).replace("duration_seconds: 36000", "duration_seconds: 0")) == [
        "drills[0].duration_seconds: must be > 0, got 0"]


def test_the_embedded_default_has_no_warnings_only_acknowledged_notes():
    """The default's deliberate risks (naive without validation, hyper checkpoints between validations,
    committed SDCs without validation, a memory tier's saves between validations) are acknowledged in the file:
    notes, never warnings; the same scenarios in a user's file without ``acknowledge`` are warned about, with the
    code that would acknowledge them."""
    from simd.scenario import default_config

    config = default_config()
    assert config.warnings() == []
    assert {n.split(":")[0] for n in config.notes()} == {"scenario naive", "scenario optimized-hyper",
                                                          "scenario optimized-layered-sdc",
                                                          "scenario llama3-16k-tiered",
                                                          "scenario llama3-16k-peer-writes"}
    for s in config.all_scenarios:
        if s.acknowledge:
            bare = s.model_copy(update={"acknowledge": []})
            assert bare.notes() == [] and len(bare.warnings()) == 1
            assert bare.warnings()[0].endswith(f"[deliberate? acknowledge: [{s.acknowledge[0]}]]")


def test_acknowledge_does_not_change_the_scenario_key():
    """How a warning is logged is not part of the simulation: a saved state resumes across the change."""
    from simd.live.lane import scenario_key
    from simd.scenario import default_config

    s = default_config().scenario("naive")
    assert scenario_key(s) == scenario_key(s.model_copy(update={"acknowledge": []}))


def test_an_unknown_acknowledge_code_is_an_error_naming_the_codes():
    text = GOOD.replace("    restart_seconds: 60\n", "    restart_seconds: 60\n    acknowledge: [sdc-bakd]\n", 1)
    assert errors(text) == ["scenarios[0].acknowledge[0]: input should be 'sdc-baked', 'sdc-baked-hyper', "
                            "'sdc-baked-tier' or 'peer-no-servers', got 'sdc-bakd'"]


def test_the_replicas_of_a_file_are_capped_by_what_one_daemon_holds():
    """1000 scenarios of 10,000 replicas passed check-config and took the daemon to 5.4 GB on a reload of a
    tenth of them; the replicas of a file are now capped (simd.scenario.limits.MAX_TOTAL_REPLICAS)."""
    from simd.scenario.limits import MAX_TOTAL_REPLICAS

    def text(n_scenarios: int, replicas: int, sweep_replicas: int = 0) -> str:
        jobs = [job(f"s{i}", replicas=replicas) for i in range(n_scenarios)]
        body = scenario_file(*jobs)
        if sweep_replicas:
            body += ("sweeps:\n  - name: sw\n    checkpoint_intervals: [10, 20]\n    scenario: {replicas: "
                     f"{sweep_replicas}, n_gpus: 8, step_seconds: 1, target_steps: 10, failures: "
                     "{hard_per_gpu_hour: 0, sdc_per_gpu_hour: 0}, checkpoint: {interval_steps: 5, seconds: 1}}\n")
        return body

    assert errors(text(100, 10_000)) == [
        f"replicas: at most {MAX_TOTAL_REPLICAS} in all (scenarios and sweep points, what one daemon holds in "
        "memory), got 1000000"]
    assert errors(text(4, 10_000, 5_001)) == [
        f"replicas: at most {MAX_TOTAL_REPLICAS} in all (scenarios and sweep points, what one daemon holds in "
        "memory), got 50002"]
    assert len(parse_config(text(5, 10_000)).all_scenarios) == 5
