"""Elastic replica groups as scenario keys (recovery.elastic): the causes that drop their group, one clear error
for what is wrong or not modelled beside them, check-config's words, simulate --json's degraded bucket and counts
only for the scenarios that have them, and the daemon's metrics (recoveries by path, rejoins, groups running)."""

from __future__ import annotations

import pytest
from support.daemon import FakeClock
from support.scenarios import job, scenario_file

from simd.daemon.process import assemble
from simd.offline.simulate import simulate
from simd.scenario.errors import ConfigError
from simd.scenario.load import parse_config
from simd.scenario.summary import summary

ELASTIC = {"groups": 8, "min_groups": 6, "replace_seconds": 600, "heal_seconds": 900, "overhead": 0.02}
# llama3's causes, one given as data that takes no server down (software); SDCs found by validation
BUSY = {"n_gpus": 1024, "step_seconds": 30, "target_steps": 3000,
        "failures": {"hard_per_gpu_hour": 2.0e-3, "sdc_per_gpu_hour": 1.0e-4,
                     "causes": {"gpu": 0.5, "host": 0.3, "software": {"share": 0.2, "server_down": False}}},
        "checkpoint": {"interval_steps": 50, "seconds": 30, "load_seconds": 93.6},
        "recovery": {"elastic": ELASTIC}}


def _one(**keys):
    (s,) = parse_config(scenario_file(job("e", **keys))).scenarios
    return s


def test_the_causes_that_take_a_server_down_drop_their_group_unless_named():
    spec = _one(**BUSY).job_spec()
    assert {c.name for c in spec.causes if c.elastic} == {"gpu", "host"}
    assert (spec.elastic_groups, spec.elastic_min_groups, spec.elastic_replace_seconds, spec.elastic_heal_seconds,
            spec.elastic_overhead) == (8, 6, 600, 900, 0.02)
    named = _one(**{**BUSY, "recovery": {"elastic": {**ELASTIC, "causes": ["software"]}}}).job_spec()
    assert [c.name for c in named.causes if c.elastic] == ["software"]
    plain = _one(recovery={"elastic": {"groups": 4}}).job_spec()
    assert [c.elastic for c in plain.cause_list] == [True]  # without causes the one cause is hardware
    assert plain.elastic_replace_seconds == 55.0  # absent: a warm standby's swap
    assert _one().job_spec().elastic_groups == 0


@pytest.mark.parametrize(("keys", "message"), [
    ({"recovery": {"elastic": {**ELASTIC, "min_groups": 9}}}, "min_groups must be <= groups (8), got 9"),
    ({"recovery": {"elastic": {**ELASTIC, "causes": ["disk"]}}},
     "recovery.elastic.causes: disk not among the failure causes (hardware)"),
    ({"n_gpus": 100, "recovery": {"elastic": ELASTIC}}, "n_gpus must be a multiple of recovery.elastic.groups"),
    ({"recovery": {"elastic": {**ELASTIC, "overhead": 2}}}, "recovery.elastic.overhead: must be <= 1, got 2"),
    ({"n_gpus": 1000, "servers": {"gpus_per_server": 8}, "recovery": {"elastic": ELASTIC}},
     "the job's servers (n_gpus / servers.gpus_per_server) must be a multiple of recovery.elastic.groups (each group "
     "a block of them), got 125 and 8"),
    ({"failures": {"hard_per_gpu_hour": 2.0e-3, "sdc_per_gpu_hour": 1.0e-4, "causes": {"gpu": 1.0}},
      "servers": {"gpus_per_server": 8, "warm_standbys": 2,
                  "repair": {"automatic": {"distribution": "exponential", "mean_seconds": 7200}}},
      "recovery": {"elastic": ELASTIC, "migration": {"seconds": 30, "causes": {"gpu": 0.1}}}},
     "recovery.elastic and recovery.migration cannot be combined (elastic replica groups with live migration"),
    ({"checkpoint": {"interval_steps": 50, "seconds": 30, "tiers": {"local": {"interval_steps": 10, "seconds": 1}}},
      "recovery": {"elastic": ELASTIC}}, "recovery.elastic and checkpoint.tiers cannot be combined"),
    ({"checkpoint": {"interval_steps": 50, "seconds": 30, "write_seconds": 60}, "recovery": {"elastic": ELASTIC}},
     "recovery.elastic and checkpoint.write_seconds (or checkpoint.save_failure) cannot be "
     "combined"),
])
def test_a_wrong_number_or_a_mechanism_not_modelled_beside_them_is_one_clear_error(keys, message):
    with pytest.raises(ConfigError) as e:
        _one(**keys)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_check_config_says_how_the_groups_drop_and_rejoin():
    """check-config names the causes that drop a group: those that take a server down (software here does not), or
    the ones named."""
    assert ("elastic replica groups (8, at least 6 running; gpu and host failures drop theirs, the causes that take "
            "a server down; rejoining in 600 + 900 s; overhead 0.02)") in summary(_one(**BUSY))
    named = {**BUSY, "recovery": {"elastic": {**ELASTIC, "causes": ["software"]}}}
    assert "(8, at least 6 running; software failures drop theirs; rejoining in" in summary(_one(**named))
    plain = summary(_one(recovery={"elastic": {"groups": 4}}))
    assert "hardware failures drop theirs, the causes that take a server down;" in plain
    assert "elastic" not in summary(_one())


def test_check_config_prints_the_elastic_causes_and_counts_in_the_singular_for_one(tmp_path):
    """As a user reads it: one warm standby, one spare, one attempt are singular in check-config's line."""
    from support.cli import simd

    pools = {"gpus_per_server": 8, "warm_standbys": 1, "spares": {"count": 1},
             "repair": {"automatic": {"distribution": "exponential", "mean_seconds": 7200}},
             "retirement": {"failures": 1, "window_seconds": 3600}}
    (tmp_path / "s.yaml").write_text(scenario_file(
        job("e", **BUSY),
        job("p", n_gpus=8, servers=pools, recovery={"crash_loop": {"failure_probability": 0.5, "max_attempts": 1,
                                                                    "escalation_seconds": 600}})))
    r = simd("check-config", str(tmp_path / "s.yaml"))
    assert r.returncode == 0, r.stderr
    assert "gpu and host failures drop theirs, the causes that take a server down;" in r.stdout
    assert "1 server of 8 GPUs, 1 warm standby, 1 spare, exponential repairs" in r.stdout
    assert "retired after 1 failure in 3600 s" in r.stdout and "after 1 attempt a 600 s intervention" in r.stdout
    assert not any(f"1 {word}s" in r.stdout for word in ("server", "warm standby", "spare", "attempt", "failure"))


def test_simulate_has_the_degraded_bucket_and_the_counts_only_with_elastic_groups():
    s = _one(**BUSY)
    seen = {"drops": 0, "rejoins": 0, "restarts": 0}
    for seed in range(3):
        line = simulate(s, seed, None).as_json()
        b = line["bucket_seconds"]
        assert b["degraded"] > 0 and sum(b.values()) == pytest.approx(line["wall_seconds"], rel=1e-12)
        # the overhead on every executed step, and a share of the steps run with groups out
        assert b["degraded"] > line["elastic"]["overhead_seconds"] > 0
        seen = {"drops": seen["drops"] + line["elastic"]["drops"],
                "rejoins": seen["rejoins"] + line["elastic"]["rejoins"],
                "restarts": seen["restarts"] + line["interruptions"]}
    assert min(seen.values()) > 0
    plain = simulate(_one(), 0, None).as_json()
    assert "elastic" not in plain and "degraded" not in plain["bucket_seconds"]


def test_the_daemon_exports_recoveries_by_path_rejoins_and_groups_running():
    clock = FakeClock(0.0)
    text = scenario_file(job("both", seed=3, replicas=2, **{**BUSY, "target_steps": 100000}),
                         job("plain", seed=4, **{**BUSY, "target_steps": 100000, "recovery": {}}), speedup=3600)
    ticker, _ = assemble(parse_config(text), clock=clock, wall=lambda: 1.7e9)
    clock.t = 20.0
    ticker.tick()
    r = ticker.registry

    def value(name, **labels):
        return r.get_sample_value(name, labels)

    assert value("simd_recoveries_total", scenario="both", path="elastic") > 0
    assert value("simd_recoveries_total", scenario="both", path="restart") > 0
    assert value("simd_elastic_rejoins_total", scenario="both") > 0
    assert 0 <= value("simd_elastic_groups_running", scenario="both") <= 16
    assert value("simd_bucket_seconds_total", scenario="both", bucket="degraded") > 0
    assert value("simd_recoveries_total", scenario="plain", path="elastic") == 0
    assert value("simd_recoveries_total", scenario="plain", path="restart") == \
        sum(value("simd_interruptions_total", scenario="plain", cause=c) for c in ("gpu", "host", "software"))
    # without elastic groups: no rejoin, the job one group
    assert (value("simd_elastic_rejoins_total", scenario="plain"), value("simd_elastic_groups_running",
                                                                         scenario="plain")) == (0, 1)
    assert value("simd_bucket_seconds_total", scenario="plain", bucket="degraded") is None


def test_every_numeric_key_is_a_sweep_parameter():
    from simd.offline.sweep.grid import grid, parse_params

    points = grid(_one(**BUSY), parse_params(["recovery.elastic.heal_seconds=60,3600",
                                              "recovery.elastic.min_groups=2,7"]))
    assert sorted((p.scenario.job_spec().elastic_heal_seconds, p.scenario.job_spec().elastic_min_groups)
                  for p in points) == [(60, 2), (60, 7), (3600, 2), (3600, 7)]
    for key in ("groups=8,16", "replace_seconds=0,55", "overhead=0,0.1"):
        assert len(grid(_one(**BUSY), parse_params([f"recovery.elastic.{key}"]))) == 2


def test_a_drill_keeps_the_groups_out_until_it_ends_and_needs_elastic_groups():
    """elastic-no-rejoin: the heal lasts the drill through, so no group rejoins while it runs (the same scenario
    undrilled does); when it ends the groups out rejoin at the latest replace + heal later. On a scenario without
    elastic groups the drill is a one-line configuration error."""
    drill = {"name": "elastic-no-rejoin", "description": "heals never end", "duration_seconds": 36000,
             "start_at_seconds": 0, "scenarios": ["drilled"], "effects": {"elastic_heal_seconds": 1e6}}
    clock = FakeClock(0.0)
    # sixteen groups, one must run, every cause dropping its group, no SDC (no restart brings the groups back): the
    # drops (~1 an hour) pile up while no group rejoins
    keys = {**BUSY, "target_steps": 100000,
            "recovery": {"elastic": {**ELASTIC, "groups": 16, "min_groups": 1, "causes": ["gpu", "host", "software"]}},
            "failures": {**BUSY["failures"], "hard_per_gpu_hour": 1.0e-3, "sdc_per_gpu_hour": 0.0}}
    text = scenario_file(job("drilled", seed=3, **keys), job("undrilled", seed=3, **keys), drills=(drill,),
                         speedup=3600)
    ticker, _ = assemble(parse_config(text), clock=clock, wall=lambda: 1.7e9)

    def value(name, scenario, **labels):
        return ticker.registry.get_sample_value(name, {"scenario": scenario, **labels})

    clock.t = 9.0  # simulated hour 9 of the drill's 10
    ticker.tick()
    assert value("simd_elastic_rejoins_total", "drilled") == 0
    assert value("simd_recoveries_total", "drilled", path="elastic") > 0
    assert value("simd_elastic_rejoins_total", "undrilled") > 0
    out = 16 - value("simd_elastic_groups_running", "drilled")
    assert out > 0
    clock.t = 10.5  # the drill over for half an hour: a group out rejoins within 600 + 900 s
    ticker.tick()
    assert value("simd_elastic_rejoins_total", "drilled") >= out
    with pytest.raises(ConfigError) as e:
        parse_config(scenario_file(job("plain"), drills=({**drill, "scenarios": ["plain"]},)))
    assert "drills[0] on scenario plain: the drill's elastic_heal_seconds needs recovery.elastic" in str(e.value)
    assert "\n" not in str(e.value)


def test_a_sweep_over_the_heal_has_the_degraded_share_in_its_files_and_table_and_its_shares_sum_to_one(tmp_path):
    """Under stragglers (the points do not share a window of step durations: a rejoin ends a drawn segment, which the
    window's prefix path does not look for). (Without elastic groups the columns are STAT_COLUMNS alone:
    tests/offline.)"""
    import csv

    from support.cli import simd

    keys = {**BUSY, "n_gpus": 256, "target_steps": 600, "stragglers": {"jitter_seconds": 0.5}}
    (tmp_path / "e.yaml").write_text(scenario_file(job("e", **keys)))
    out = tmp_path / "out"
    r = simd("sweep", "--config", str(tmp_path / "e.yaml"), "--scenario", "e", "--param",
             "recovery.elastic.heal_seconds=0,7200", "--replicas", "3", "--workers", "1", "--out", str(out))
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader((out / "sweep.csv").open()))
    assert [float(x["share_degraded"]) > 0 for x in rows] == [True, True]
    assert float(rows[1]["share_degraded"]) > float(rows[0]["share_degraded"])  # groups out longer
    for x in rows:  # (the finished replicas' mean shares, the in-flight time none at a job's end)
        assert sum(float(v) for k, v in x.items() if k.startswith("share_")) == pytest.approx(1.0, rel=1e-9)
    # the printed table has the CSV's degraded share, after the straggler share, and says what it is
    head, *lines = r.stdout.splitlines()[:3]
    assert head.split()[head.split().index("strag") + 1] == "degraded"
    at = head.split().index("degraded")  # (every header before it one word, as its cells)
    assert [line.split()[at] for line in lines] == [f"{float(x['share_degraded']):.1%}" for x in rows]
    assert "degraded: mean share of wall time in the degraded bucket" in r.stdout
