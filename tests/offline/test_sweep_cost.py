"""The sweep of a scenario with server pools: what capacity cost (GPU-hours held per productive GPU-hour, and
money with servers.price_per_gpu_hour) beside the utilization, per replica equal to ``simd simulate --json``'s,
with its confidence interval, the point of the lowest cost, the table, the files and the figure; none of it for
a scenario without pools. And the servers model's optional keys as sweep parameters."""

import csv
import json
import math

import pytest
from matplotlib.image import AxesImage
from support.cli import simd

from simd.executors import LocalPool, Serial
from simd.offline.simulate import simulate
from simd.offline.sweep import outputs as sweepout
from simd.offline.sweep import plot as sweepplot
from simd.offline.sweep.grid import GridError, field_kind, grid, parse_params
from simd.offline.sweep.run import Runner, fixed_sweep, run_point, run_points
from simd.offline.sweep.stats import mean_ci, paired_difference
from simd.scenario import parse_config

# 8 servers of 8 GPUs failing every ~2 h of compute, 1 standby and 2 spares, repairs of hours: with few spares the
# job waits for repairs (the waiting bucket), with many it pays for idle servers, so the cost has a minimum.
POOLS = """scenarios:
  - name: pools
    seed: 3
    n_gpus: 64
    step_seconds: 30
    target_steps: 2000
    failures: {hard_per_gpu_hour: 2.0e-3, sdc_per_gpu_hour: 0.0}
    checkpoint: {interval_steps: 40, seconds: 60}
    restart_seconds: 120
    servers:
      gpus_per_server: 8
      lemons: {fraction: 0.2, multiplier: 5}
      warm_standbys: 1
      spares: {count: 2, preemption_seconds: 600}
      repair:
        automatic: {distribution: exponential, mean_seconds: 7200}
        manual: {probability: 0.5, time: {distribution: exponential, mean_seconds: 36000}}
      retirement: {failures: 2, window_seconds: 86400}
      price_per_gpu_hour: 2.5
"""
META = {"scenario": "pools", "mode": "fixed", "replicas": 8, "seed_base": 0}
SPARES = "servers.spares.count=0,1,2,4,8"


@pytest.fixture(scope="module")
def pools():
    return parse_config(POOLS).scenario("pools")


@pytest.fixture(scope="module")
def unpriced(pools):
    servers = pools.servers.model_copy(update={"price_per_gpu_hour": None})
    return pools.model_copy(update={"servers": servers})


@pytest.fixture(scope="module")
def spares_sweep(pools):
    params = parse_params([SPARES])
    return params, fixed_sweep(Runner(grid(pools, params), Serial(), 1), 0, 8)


# ---- per replica: simd simulate --json's numbers


def test_replicas_carry_simulate_json_cost(pools):
    results = run_point(pools, [0, 1, 2, 3])
    for r in results:
        line = simulate(pools, r.seed).as_json()
        assert r.completed
        assert r.gpu_hours_job == line["gpu_hours"]["job"] and r.gpu_hours_pools == line["gpu_hours"]["pools"]
        assert r.gpu_hours_per_productive == line["gpu_hours_per_productive_gpu_hour"]  # bit for bit
        assert r.cost_per_productive == line["cost_per_productive_gpu_hour"]
        assert r.gpu_hours_per_productive > 1.0  # the pools are paid for, and not every second is productive


def test_without_a_price_gpu_hours_only(unpriced):
    r = run_point(unpriced, [0])[0]
    assert "cost_per_productive_gpu_hour" not in simulate(unpriced, 0).as_json()
    assert r.gpu_hours_per_productive is not None and r.cost_per_productive is None


def test_shared_durations_give_the_same_cost(pools):
    # run_points' group path (here: no stragglers, so each point alone) and run_point agree
    scenarios = [p.scenario for p in grid(pools, parse_params([SPARES]))]
    assert run_points(scenarios, [4, 5]) == [run_point(sc, [4, 5]) for sc in scenarios]


# ---- per point: the mean and its interval


def test_point_cost_is_the_mean_of_simulate_per_seed(spares_sweep, pools):
    _, results = spares_sweep
    for res in results:
        lines = [simulate(res.point.scenario, seed).as_json() for seed in range(8)]
        c = res.stats.cost
        m, sd, half = mean_ci([ln["gpu_hours_per_productive_gpu_hour"] for ln in lines])
        assert (c.gpu_hours_per_productive.mean, c.gpu_hours_per_productive.sd,
                c.gpu_hours_per_productive.half_width) == (m, sd, half)
        assert c.cost_per_productive.mean == mean_ci([ln["cost_per_productive_gpu_hour"] for ln in lines])[0]
        assert c.cost_per_productive.mean == pytest.approx(2.5 * m, rel=1e-12)
        assert c.gpu_hours_job_mean == pytest.approx(math.fsum(ln["gpu_hours"]["job"] for ln in lines) / 8)
        assert c.gpu_hours_pools_mean == pytest.approx(math.fsum(ln["gpu_hours"]["pools"] for ln in lines) / 8)
    # the trade-off this scenario is made for: waiting without spares, idle servers with many
    ratios = [r.stats.cost.gpu_hours_per_productive.mean for r in results]
    assert ratios[0] > min(ratios) < ratios[-1]
    assert results[0].stats.shares["waiting"] > results[-1].stats.shares["waiting"]


def test_local_pool_equals_serial_with_cost(pools):
    points = grid(pools, parse_params(["servers.spares.count=0,4"]))
    serial = fixed_sweep(Runner(points, Serial(), 1), 0, 5)
    pool = LocalPool(2)
    try:
        local = fixed_sweep(Runner(points, pool, pool.workers), 0, 5)
    finally:
        pool.close()
    assert local == serial  # every replica's cost and every statistic, bit for bit, once pickled


def test_cost_optimum_is_the_lowest_mean_and_what_cannot_be_told_from_it(spares_sweep):
    params, results = spares_sweep
    best = sweepout.cost_optimum(params, results)
    means = {r.point.values[0]: r.stats.cost.gpu_hours_per_productive.mean for r in results}
    at = min(means, key=means.get)
    assert best["params"] == {"servers.spares.count": at}
    assert best["gpu_hours_per_productive_gpu_hour_mean"] == means[at]
    winner = next(r for r in results if r.point.values[0] == at)
    for r in results:
        if r is winner:
            continue
        d, half, n = paired_difference(r.replicas, winner.replicas, lambda x: x.gpu_hours_per_productive)
        assert n == 8 and d > 0  # the others are higher on these seeds
        assert ({"servers.spares.count": r.point.values[0]} in best["within_noise"]) == (d <= half)
    assert sweepout.cost_optimum(params, [r for r in results if r.point.values[0] == 8])["within_noise"] == []


# ---- the table and the files


def test_csv_json_and_table_have_the_cost(spares_sweep, tmp_path):
    params, results = spares_sweep
    sweepout.write_csv(tmp_path / "s.csv", params, results)
    with open(tmp_path / "s.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ([params[0].key, *sweepout.STAT_COLUMNS, *sweepout.COST_COLUMNS,
                              *sweepout.MONEY_COLUMNS])
    assert {"gpu_hours_per_productive_gpu_hour_ci_half_width", "cost_per_productive_gpu_hour_mean"} <= set(rows[0])
    for row, res in zip(rows, results, strict=True):
        c = res.stats.cost
        assert float(row["gpu_hours_per_productive_gpu_hour_mean"]) == c.gpu_hours_per_productive.mean
        assert float(row["gpu_hours_per_productive_gpu_hour_ci_low"]) == c.gpu_hours_per_productive.ci_low
        assert float(row["cost_per_productive_gpu_hour_ci_half_width"]) == c.cost_per_productive.half_width
        assert float(row["gpu_hours_pools_mean"]) == c.gpu_hours_pools_mean
    sweepout.write_json(tmp_path / "s.json", META, params, results)
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["cost_optimum"] == sweepout.cost_optimum(params, results)
    point = doc["points"][0]
    assert point["gpu_hours_per_productive_gpu_hour_mean"] == results[0].stats.cost.gpu_hours_per_productive.mean
    assert point["cost_per_productive_gpu_hour_sd"] == results[0].stats.cost.cost_per_productive.sd
    head, *lines = sweepout.table(params, results).splitlines()
    assert head.split()[-5:] == ["wait", "GPUh/pGPUh", "+-ci95", "price/pGPUh", "+-ci95"]
    for line, res in zip(lines, results, strict=True):
        c = res.stats.cost
        assert line.split()[-4:] == [f"{c.gpu_hours_per_productive.mean:.4f}",
                                     f"{c.gpu_hours_per_productive.half_width:.4f}",
                                     f"{c.cost_per_productive.mean:.4f}", f"{c.cost_per_productive.half_width:.4f}"]
        assert line.split()[-5] == f"{res.stats.shares['waiting']:.1%}"


def test_without_a_price_no_money_columns(unpriced, tmp_path):
    params = parse_params(["servers.spares.count=0,2"])
    results = fixed_sweep(Runner(grid(unpriced, params), Serial(), 1), 0, 3)
    assert sweepout.columns(params, results)[-len(sweepout.COST_COLUMNS):] == list(sweepout.COST_COLUMNS)
    assert not set(sweepout.MONEY_COLUMNS) & set(sweepout.columns(params, results))
    assert sweepout.table(params, results).splitlines()[0].split()[-3:] == ["wait", "GPUh/pGPUh", "+-ci95"]
    assert "price/pGPUh" not in "\n".join(sweepout.cost_notes(params, results))


def test_command_prints_the_cost_and_the_optimum(tmp_path):
    cfg = tmp_path / "pools.yaml"
    cfg.write_text(POOLS)
    out = tmp_path / "out"
    r = simd("sweep", "--config", str(cfg), "--scenario", "pools", "--param", SPARES, "--replicas", "4",
             "--workers", "1", "--out", str(out))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "GPUh/pGPUh" in lines[0] and lines[6] == sweepout.TABLE_NOTE
    assert lines[7].startswith("wait: mean share of wall time waiting for a server")
    doc = json.loads((out / "sweep.json").read_text())
    best = doc["cost_optimum"]["params"]["servers.spares.count"]
    assert lines[8].startswith(f"lowest GPUh/pGPUh: servers.spares.count={best} (")
    best = doc["utilization_optimum"]["params"]["servers.spares.count"]
    assert lines[9].startswith(f"highest util: servers.spares.count={best} (")
    # the file's numbers are simd simulate --json's for the same seeds (3 .. 6: the scenario's seed)
    for point in doc["points"]:
        sc = grid(parse_config(POOLS).scenario("pools"),
                  parse_params([f"servers.spares.count={point['params']['servers.spares.count']}"]))[0].scenario
        per_seed = [simulate(sc, seed).as_json()["gpu_hours_per_productive_gpu_hour"] for seed in range(3, 7)]
        assert point["gpu_hours_per_productive_gpu_hour_mean"] == pytest.approx(math.fsum(per_seed) / 4, rel=1e-15)


# ---- no pools: nothing of it


def test_no_pools_no_cost(small, tmp_path):
    params = parse_params(["checkpoint.interval_steps=20,80"])
    results = fixed_sweep(Runner(grid(small, params), Serial(), 1), 0, 3)
    assert all(r.gpu_hours_per_productive is None and r.cost_per_productive is None
               for res in results for r in res.replicas)
    assert all(res.stats.cost is None for res in results)
    assert not sweepout.has_cost(results) and sweepout.cost_notes(params, results) == []
    assert sweepout.cost_optimum(params, results) is None
    cols = sweepout.columns(params, results)
    assert cols == [params[0].key, *sweepout.STAT_COLUMNS]
    sweepout.write_json(tmp_path / "s.json", META, params, results)
    doc = json.loads((tmp_path / "s.json").read_text())
    assert "cost_optimum" not in doc and not any("gpu_hours" in k for k in doc["points"][0])
    assert "GPUh" not in sweepout.table(params, results)
    assert len(sweepplot.render(params, results, META).axes) == 2


# ---- the figure


def test_curve_has_a_cost_panel_with_its_band_optimum_and_money_axis(spares_sweep):
    params, results = spares_sweep
    fig = sweepplot.render(params, results, META)
    ax, zoom, cax, czoom = fig.axes[:4]
    assert cax.get_ylabel() == sweepplot.COST_LABEL and czoom.get_xlabel() == "servers.spares.count (servers)"
    assert zoom.get_xlabel() == ""  # one x label, under the last panel
    legend = [t.get_text() for t in cax.get_legend().get_texts()]
    best = sweepout.cost_optimum(params, results)
    at = best["params"]["servers.spares.count"]
    assert any(t.startswith(f"lowest: servers.spares.count = {at} (") for t in legend)
    assert legend[0].startswith("95% confidence interval of the mean (+-")
    money = [a for a in cax.child_axes if a.get_ylabel().startswith("money per productive GPU-hour")]  # secondary
    assert len(money) == 1 and "at 2.5 per GPU-hour held" in money[0].get_ylabel()


def test_price_swept_gets_its_own_money_series(pools):
    params = parse_params(["servers.price_per_gpu_hour=1,3"])
    results = fixed_sweep(Runner(grid(pools, params), Serial(), 1), 0, 3)
    fig = sweepplot.render(params, results, META)
    twin = [a for a in fig.axes if a.get_ylabel() == "money per productive GPU-hour"]
    assert len(twin) == 1
    m = [r.stats.cost.cost_per_productive.mean for r in results]
    assert m[1] == pytest.approx(3 * m[0])  # the same replicas at three times the price


def test_categories_and_heat_map_show_the_cost(pools):
    params = parse_params(["recovery.strategy=cold,warm"])
    results = fixed_sweep(Runner(grid(pools, params), Serial(), 1), 0, 3)
    fig = sweepplot.render(params, results, META)
    assert [a.get_ylabel() for a in fig.axes[:2]] == [sweepplot.UTILIZATION_LABEL, sweepplot.COST_LABEL]
    params = parse_params(["servers.spares.count=0,2", "servers.warm_standbys=0,1"])
    results = fixed_sweep(Runner(grid(pools, params), Serial(), 1), 0, 3)
    fig = sweepplot.render(params, results, META)
    maps = [a for a in fig.axes if any(isinstance(c, AxesImage) for c in a.get_children())]
    assert len(maps) == 2 and len(maps[1].patches) == 1  # the lowest cost's cell outlined


# ---- the servers model's keys as sweep parameters


@pytest.mark.parametrize("key,kind", [("servers.spares.count", "int"), ("servers.warm_standbys", "int"),
                                      ("servers.retirement.failures", "int"),
                                      ("servers.retirement.window_seconds", "float"),
                                      ("servers.price_per_gpu_hour", "float"),
                                      ("servers.repair.manual.probability", "float"),
                                      ("servers.diagnosis.misattribution", "float")])
def test_servers_keys_are_sweep_parameters(key, kind):
    # warm_standbys and price_per_gpu_hour are `Annotated[...] | None`: their constraints are looked through
    assert field_kind(key) == (kind, ())


def test_retirement_cannot_be_switched_off_by_a_value(pools):
    with pytest.raises(GridError, match=r"servers.retirement.failures=0: scenario pools refuses it: .*>= 1"):
        grid(pools, parse_params(["servers.retirement.failures=0,2"]))
    points = grid(pools, parse_params(["servers.warm_standbys=0,3"]))
    assert [p.scenario.servers.warm_standbys for p in points] == [0, 3]
