"""The scenario keys of asynchronous, failing and kept saves and corrupt loads: checkpoint.write_seconds,
write_slowdown, save_failure, retention_checkpoints (one number with sdc.retention_checkpoints), corrupt_on_load;
what reaches the engine, check-config's line, and the errors (one line each, naming the key)."""

import pytest
from support.scenarios import job, scenario_file

from simd.engine import run_job
from simd.scenario import ConfigError, parse_config, summary

COMMITTED = {"semantics": "committed",
             "detectors": [{"name": "scan", "latency": {"distribution": "exponential", "mean_seconds": 3600}}]}


def scenario(checkpoint: dict, sdc: dict | None = None):
    """support.scenarios' small job with ``checkpoint`` (and ``sdc``), as check-config reads it."""
    return parse_config(scenario_file(job("s", checkpoint=checkpoint, sdc=sdc))).scenarios[0]


def errors(checkpoint: dict, sdc: dict | None = None) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        scenario(checkpoint, sdc)
    return exc.value.errors


CKPT = {"interval_steps": 20, "seconds": 30}


def test_the_keys_reach_the_engine_and_check_configs_line():
    s = scenario({**CKPT, "write_seconds": 240, "write_slowdown": 1.05, "save_failure": {"probability": 0.01},
                  "retention_checkpoints": 4, "corrupt_on_load": 0.001})
    j = s.job_spec()
    assert (j.ckpt_write_seconds, j.ckpt_write_slowdown, j.ckpt_save_failure) == (240, 1.05, 0.01)
    assert (j.ckpt_retention, j.ckpt_corrupt_on_load) == (4, 0.001)
    assert ("(30 s, written asynchronously in 240 s, steps 1.05x meanwhile, 0.01 of saves failing, 0.001 of loads "
            "found corrupt, the 4 newest saves kept)") in summary(s)
    # a write that slows no step says so (not "1x"); a retention of one save in the singular
    line = summary(scenario({**CKPT, "write_seconds": 240, "retention_checkpoints": 1}, COMMITTED))
    assert "written asynchronously in 240 s, steps not slowed meanwhile" in line
    assert line.endswith("committed SDCs (1 detector, the newest save kept)")


def test_the_retention_is_one_number_under_either_key():
    by_sdc = scenario(CKPT, {**COMMITTED, "retention_checkpoints": 3})
    by_ckpt = scenario({**CKPT, "retention_checkpoints": 3}, COMMITTED)
    assert by_sdc.job_spec() == by_ckpt.job_spec()
    assert by_ckpt.job_spec().committed_sdc.retention_checkpoints == 3 and by_ckpt.job_spec().ckpt_retention == 0
    assert run_job(by_sdc.job_spec()) == run_job(by_ckpt.job_spec())
    assert "committed SDCs (1 detector, the 3 newest saves kept)" in summary(by_ckpt)
    assert summary(by_ckpt).count("newest saves kept") == 1  # said once, with the committed SDCs


@pytest.mark.parametrize("checkpoint, sdc, expected", [
    ({**CKPT, "retention_checkpoints": 3}, {**COMMITTED, "retention_checkpoints": 3},
     "sdc.retention_checkpoints and checkpoint.retention_checkpoints are one number"),
    (CKPT, COMMITTED, "sdc.retention_checkpoints (or checkpoint.retention_checkpoints): required with semantics: "
     "committed"),
    ({**CKPT, "corrupt_on_load": 0.1}, None, "checkpoint.corrupt_on_load needs checkpoint.retention_checkpoints"),
    ({**CKPT, "write_slowdown": 1.1}, None, "checkpoint.write_slowdown needs checkpoint.write_seconds > 0"),
    ({**CKPT, "save_failure": {"probability": 1.5}}, None,
     "scenarios[0].checkpoint.save_failure.probability: must be <= 1"),
    ({**CKPT, "write_seconds": -1}, None, "scenarios[0].checkpoint.write_seconds: must be >= 0"),
    ({**CKPT, "corrupt_on_load": 0.1, "retention_checkpoints": 0}, None,
     "scenarios[0].checkpoint.retention_checkpoints: must be >= 1"),
])
def test_a_bad_combination_is_one_line_naming_it(checkpoint, sdc, expected):
    errs = errors(checkpoint, sdc)
    assert len(errs) == 1 and expected in errs[0], errs


def test_corrupt_loads_run_beside_committed_sdcs_under_either_retention_key_and_beside_a_tier_too():
    """The persistent checkpoints' corrupt loads beside committed SDCs (docs/model.md, "Checkpoints kept and found
    corrupt"), the retention given by either key (one number); a memory tier's own corrupt loads beside committed
    SDCs; the three at once."""
    by_ckpt = scenario({**CKPT, "retention_checkpoints": 3, "corrupt_on_load": 0.1}, COMMITTED).job_spec()
    by_sdc = scenario({**CKPT, "corrupt_on_load": 0.1}, {**COMMITTED, "retention_checkpoints": 3}).job_spec()
    assert by_ckpt == by_sdc and by_sdc.committed_sdc.retention_checkpoints == 3
    assert by_sdc.ckpt_corrupt_on_load == 0.1 and run_job(by_sdc).loads["corrupt"] >= 0
    tier = {"peer": {"interval_steps": 5, "seconds": 1, "load_seconds": 10, "corrupt_on_load": 0.5}}
    s = scenario({**CKPT, "retention_checkpoints": 3, "tiers": tier}, COMMITTED)
    assert s.job_spec().tier.corrupt_on_load == 0.5 and s.job_spec().committed_sdc is not None
    run_job(s.job_spec())
    three = scenario({**CKPT, "retention_checkpoints": 3, "corrupt_on_load": 0.1, "tiers": tier}, COMMITTED)
    assert three.job_spec().ckpt_corrupt_on_load == 0.1 and run_job(three.job_spec()).tier["saves"] > 0


def test_a_memory_tiers_writes_reach_the_engine_and_check_configs_line_and_refuse_what_they_do_not_model():
    """checkpoint.tiers.*.write_seconds: the save written after its blocking (docs/model.md, "Memory tiers")."""
    tier = {"local": {"interval_steps": 5, "seconds": 1, "load_seconds": 10, "write_seconds": 40}}
    s = scenario({**CKPT, "tiers": tier})
    assert s.job_spec().tier.write_seconds == 40
    assert ("a local tier every 5 steps (1 s, written in 40 s, load 10 s, each shard held by its own server)"
            in summary(s))
    assert run_job(s.job_spec()).tier["saves_aborted"] >= 0
    failing = {"local": {**tier["local"], "save_failure": {"probability": 0.1}}}
    assert scenario({**CKPT, "tiers": failing}).job_spec().tier.save_failure == 0.1  # (its writes fail at their end)
    jit = scenario({**CKPT, "tiers": tier, "just_in_time": {"causes": ["hardware"], "seconds": 5}}).job_spec()
    assert jit.tier.write_seconds == 40 and jit.jit_seconds == 5  # (a failure aborts the write; the survivors save)
    assert run_job(jit).jit_saves >= 0
    # beside committed SDCs (a save holding the SDC commits it when written)
    committed = scenario({**CKPT, "retention_checkpoints": 3, "tiers": tier}, COMMITTED).job_spec()
    assert committed.tier.write_seconds == 40 and committed.committed_sdc is not None
    assert run_job(committed).tier["saves"] > 0
    # ... and two tiers beside them (a late find goes down both tiers' clean copies)
    two = scenario({**CKPT, "retention_checkpoints": 3, "tiers": {**tier, "peer": {
        "interval_steps": 10, "seconds": 1, "load_seconds": 10}}}, COMMITTED).job_spec()
    assert two.lower_tier.kind == "local" and two.committed_sdc is not None
    assert run_job(two).tier["local_saves"] > 0


def test_check_config_names_the_keys_a_user_wrote_for_mechanisms_that_do_not_combine(tmp_path):
    """A refusal names the scenario keys that switch each mechanism on, not the engine's names for them."""
    from support.cli import simd
    from support.scenarios import job, scenario_file

    tiers = {"peer": {"interval_steps": 10, "seconds": 1, "load_seconds": 10},
             "local": {"interval_steps": 5, "seconds": 1, "load_seconds": 5}}
    p = tmp_path / "s.yaml"
    p.write_text(scenario_file(job("s", checkpoint={**CKPT, "tiers": tiers}, recovery={"elastic": {"groups": 2}})))
    r = simd("check-config", str(p))
    assert r.returncode == 2 and r.stdout == ""
    # (one line for both tiers)
    assert r.stderr.count("recovery.elastic and checkpoint.tiers cannot be combined (elastic replica groups with a "
                          "memory tier are not modelled)") == 1, r.stderr
    assert "memory_tier" not in r.stderr and "two_tiers" not in r.stderr


def test_a_corrupt_loads_drill_on_committed_sdcs_runs_with_their_retention():
    """A drill's corrupt_on_load on a scenario of committed SDCs whose retention is sdc.retention_checkpoints: the
    drill's loads fall back down the checkpoints that retention keeps (one number)."""
    config = scenario_file(job("s", checkpoint={**CKPT, "corrupt_on_load": 1e-6},
                               sdc={**COMMITTED, "retention_checkpoints": 3}), drills=(
        {"name": "c", "description": "x", "duration_seconds": 60, "scenarios": ["s"],
         "effects": {"corrupt_on_load": 0.5}},))
    c = parse_config(config)
    drilled = c.scenarios[0].with_effects(c.drills[0].effects).job_spec()
    assert drilled.ckpt_corrupt_on_load == 0.5 and drilled.committed_sdc.retention_checkpoints == 3
    assert run_job(drilled).loads["corrupt"] >= 0


@pytest.mark.parametrize(("scenario_p", "drill_p", "switch"), [(0.0, 0.5, "on"), (0.01, 0.0, "off")])
def test_a_drill_cannot_switch_corrupt_loads_on_or_off(scenario_p, drill_p, switch):
    """The engine keeps the checkpoints a fallback loads only while loads can be corrupt: a drill switching that
    on mid-job would fall back past checkpoints it never kept (to the job's start, uncounted), off would leave its
    clean ones where only the SDC's are expected; refused, naming both values."""
    config = scenario_file(job("s", checkpoint={**CKPT, "retention_checkpoints": 3, "corrupt_on_load": scenario_p}),
                           drills=({"name": "c", "description": "x", "duration_seconds": 60, "scenarios": ["s"],
                                    "effects": {"corrupt_on_load": drill_p}},))
    with pytest.raises(ConfigError) as err:
        parse_config(config)
    assert f"the drill's corrupt_on_load {drill_p:g} switches corrupt loads {switch}" in str(err.value)
    assert f"checkpoint.corrupt_on_load is {scenario_p:g}" in str(err.value)
