"""One memory budget for a whole scenario file (simd.scenario.schema.MAX_FILE_BYTES, from scenario_bytes): the
per-scenario cap (servers x replicas) alone would let a file hold any number of scenarios at that cap (1000
scenarios of 50 replicas of 131,072-server clusters); their estimated peak bytes are summed against the budget."""

from __future__ import annotations

import pytest
from support.cli import simd
from support.scenarios import job, scenario_file

from simd.scenario import ConfigError, parse_config
from simd.scenario.schema import MAX_FILE_BYTES, MAX_SCENARIO_SERVERS, Scenario, scenario_bytes

POOLS = {"warm_standbys": 32768, "spares": {"count": 32768},
         "repair": {"automatic": {"distribution": "exponential", "mean_seconds": 20000}}}


def at_the_cap(name: str, seed: int, **servers) -> dict:
    """A scenario at the per-scenario cap: a 131,072-server cluster (65,536 in the job) x 64 replicas."""
    return job(name, seed=seed, replicas=MAX_SCENARIO_SERVERS // (1 << 17), n_gpus=8 * 65536, step_seconds=10,
               target_steps=1000, failures={"hard_per_gpu_hour": 1e-5, "sdc_per_gpu_hour": 0.0},
               servers={**POOLS, **servers})


def test_one_scenario_at_its_cap_fits_the_files_budget():
    """The scenario alone (a file also bounds its tick: at this many replicas of this cluster the calls alone are
    over a tick's work, simd.engine.work, so a file refuses it for that)."""
    assert scenario_bytes(Scenario.model_validate(at_the_cap("one", 1))) <= MAX_FILE_BYTES


@pytest.mark.parametrize("count", [2, 50])
def test_scenarios_each_within_the_cap_are_refused_beyond_the_files_budget(count):
    text = scenario_file(*[at_the_cap(f"s{i}", i) for i in range(count)])
    with pytest.raises(ConfigError) as exc:
        parse_config(text)
    (line,) = [e for e in exc.value.errors if "memory" in e]
    assert f"must be <= {MAX_FILE_BYTES} bytes in all" in line and "\n" not in line


def test_sweep_points_count_in_the_budget():
    body = {k: v for k, v in at_the_cap("x", 3).items() if k != "name"}
    text = scenario_file(job("small", seed=1)) + \
        "sweeps:\n  - name: sw\n    checkpoint_intervals: [5, 10]\n    scenario: " + \
        __import__("json").dumps(body) + "\n"
    with pytest.raises(ConfigError) as exc:
        parse_config(text)
    assert any("memory" in e for e in exc.value.errors)


def test_check_config_refuses_the_file_in_one_line(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text(scenario_file(*[at_the_cap(f"s{i}", i) for i in range(4)]))
    r = simd("check-config", str(path))
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and f"<= {MAX_FILE_BYTES} bytes in all" in r.stderr
