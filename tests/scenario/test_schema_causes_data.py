"""Causes as data (failures.causes: {name: {share, detection_seconds, restart_seconds, warm}}): each cause's share,
how the job finds it (at once, after a latency, or a hang found by a watchdog's timeout) and how it recovers
reach the engine; `llama3` is the same causes given by name; a share alone keeps its name's defaults."""

import pytest
from support.scenarios import job, scenario_file

from simd.engine import run_job
from simd.models import recovery
from simd.scenario import ConfigError, parse_config

RATES = {"hard_per_gpu_hour": 2.0e-3, "sdc_per_gpu_hour": 0.0}


def scenario(causes, **keys):
    return parse_config(scenario_file(job("s", failures={**RATES, "causes": causes}, **keys))).scenarios[0]


def test_the_llama3_preset_is_its_causes_given_as_data():
    as_data = {name: {"share": share, "detection_seconds": recovery.DETECTION_SECONDS[name],
                      "warm": name in recovery.WARM_CAPABLE_CAUSES}
               for name, share in recovery.LLAMA3_CAUSE_SHARES.items()}
    for strategy in ("cold", "warm"):
        preset = scenario("llama3", recovery={"strategy": strategy}).job_spec()
        given = scenario(as_data, recovery={"strategy": strategy}).job_spec()
        assert given == preset
        assert run_job(given) == run_job(preset)


def test_a_hang_found_by_a_timeout_and_a_cause_with_its_own_restart():
    s = scenario({"gpu": {"share": 0.5, "warm": True}, "hang": {"share": 0.3, "detection_seconds": 600},
                  "driver": {"share": 0.2, "restart_seconds": 120}},
                 recovery={"strategy": "warm"}, restart_seconds=300, target_steps=4000)
    causes = {c.name: c for c in s.job_spec().causes}
    assert (causes["gpu"].detection_seconds, causes["gpu"].restart_seconds) == (
        recovery.DETECTION_SECONDS["gpu"], recovery.WARM_SWAP_SECONDS)
    assert (causes["hang"].detection_seconds, causes["hang"].restart_seconds) == (600, 300)  # cold: not warm
    assert (causes["driver"].detection_seconds, causes["driver"].restart_seconds) == (0, 120)
    # the hang's timeout is time the job stands still: the detection bucket holds ~ interruptions x 0.3 x 600 s
    j = run_job(s.job_spec())
    hangs = j.interruptions_by_cause["hang"]
    assert hangs > 0 and j.bucket_seconds["detection"] == pytest.approx(
        hangs * 600 + j.interruptions_by_cause["gpu"] * recovery.DETECTION_SECONDS["gpu"])


def test_shares_and_data_mix_and_must_sum_to_one():
    s = scenario({"gpu": 0.6, "hang": {"share": 0.4, "detection_seconds": 900}})
    assert [(c.name, c.share, c.detection_seconds) for c in s.job_spec().causes] == [
        ("gpu", 0.6, recovery.DETECTION_SECONDS["gpu"]), ("hang", 0.4, 900)]
    with pytest.raises(ConfigError) as exc:
        scenario({"gpu": 0.6, "hang": {"share": 0.6}})
    assert exc.value.errors == ["scenarios[0].failures.causes: shares must sum to 1, got 1.2"]
    with pytest.raises(ConfigError) as exc:
        scenario({"gpu": 0.6, "hang": {"share": 0.4, "detection_seconds": -1}})
    assert len(exc.value.errors) == 1 and "detection_seconds: must be >= 0" in exc.value.errors[0]


def test_a_cause_that_takes_no_server_down_leaves_its_servers_in_the_job():
    """With server pools, a failure whose cause takes no server down (a software fault) sends no server to repair:
    no standby or spare replaces it and the restart waits for none; the same failures taking their servers down
    start repairs and replacements."""
    pools = {"warm_standbys": 1, "spares": {"count": 2, "preemption_seconds": 600},
             "repair": {"automatic": {"distribution": "exponential", "mean_seconds": 7200}}}
    keys = {"n_gpus": 512, "servers": {"gpus_per_server": 8, **pools}, "target_steps": 4000}
    stays = run_job(scenario({"software": {"share": 1.0, "server_down": False}}, **keys).job_spec())
    down = run_job(scenario({"software": {"share": 1.0}}, **keys).job_spec())
    assert stays.server_failures > 10 and down.server_failures > 10
    assert stays.repairs["started"] == 0 and sum(stays.replacements.values()) == 0
    assert stays.bucket_seconds["waiting"] == 0
    assert down.repairs["started"] > 10 and sum(down.replacements.values()) > 10
