"""The sweep's optimum (issue: choosing intervals): the point of the highest mean utilization and the points a
paired comparison over the same seeds cannot tell from it, in the text, the JSON and on the heat map; the
first-order model of asynchronous saves (C_eff) in the daemon's gauges and the sweep's model."""

import math

import numpy as np
import pytest
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from scipy import stats
from support.scenarios import SWEEP_SMALL

from simd.executors import Serial
from simd.models import checkpoint as ck
from simd.offline.sweep import outputs as sweepout
from simd.offline.sweep import plot as sweepplot
from simd.offline.sweep.grid import grid, parse_params
from simd.offline.sweep.run import Runner, first_order, fixed_sweep
from simd.scenario import parse_config

META = {"scenario": "async", "mode": "fixed", "replicas": 4, "seed_base": 0}
ASYNC = SWEEP_SMALL.replace("name: small", "name: async").replace(
    "checkpoint: {interval_steps: 40, seconds: 60}",
    "checkpoint: {interval_steps: 40, seconds: 5, write_seconds: 600, write_slowdown: 1.2}")


@pytest.fixture(scope="module")
def async_small():
    return parse_config(ASYNC).scenario("async")


@pytest.fixture(scope="module")
def heat(async_small):
    params = parse_params(["checkpoint.interval_steps=10,20,40,80", "checkpoint.write_seconds=300,600"])
    return params, fixed_sweep(Runner(grid(async_small, params), Serial(), 1), 0, 4)


def test_async_first_order_model_uses_the_effective_cost(async_small):
    from simd.engine import new_state
    from simd.metrics.snapshot import scenario_info

    model = first_order(async_small)
    step, m, r = 30.0, model.mtbf_seconds, model.recovery_seconds
    c_eff = 5 + 600 * (1 - 1 / 1.2)  # 105 s
    assert model.save_cost_seconds == pytest.approx(c_eff)
    assert model.young_steps == pytest.approx(math.sqrt(2 * c_eff * m) / step)
    assert model.daly_steps == pytest.approx(ck.daly_interval_seconds(c_eff, m) / step)
    assert model.wait_below_steps == pytest.approx(500 / step)
    # 1 / (1 + C/T + L/M) at the configured 40 steps, steps whole: the write (600 s at 1.2x, 16.7 steps of compute)
    # slows 17 steps, w = 510 s, C = 5 + 0.2 w; a failure loses T/2 + w (1 + b/T) + (s - 1) w^2 / (2T) + R
    t, w = 40 * step, 17 * step
    assert model.efficiency(40) == pytest.approx(
        1 / (1 + (5 + 0.2 * w) / t + (t / 2 + w * (1 + 5 / t) + 0.2 * w * w / (2 * t) + r) / m))
    # the daemon's gauges are the same numbers
    info = scenario_info(async_small, async_small, new_state(async_small.job_spec()))
    assert info.optimal_interval_steps == (("young", model.young_steps), ("daly", model.daly_steps))
    assert info.analytic_efficiency == model.efficiency(40)


def test_without_a_write_the_model_is_the_blocking_one(small):
    model = first_order(small)
    assert model.young_steps == ck.young_interval_seconds(60.0, model.mtbf_seconds) / 30.0
    assert model.daly_steps == ck.daly_interval_seconds(60.0, model.mtbf_seconds) / 30.0
    assert model.efficiency(40) == ck.efficiency(40, 30.0, 60.0, model.mtbf_seconds, model.recovery_seconds)


def _paired_contains_zero(a, b) -> bool:
    """The 95% Student interval of the mean per-seed difference of utilization contains 0."""
    ub = {x.seed: x.effective_utilization for x in b if x.completed}
    d = np.array([x.effective_utilization - ub[x.seed] for x in a if x.completed and x.seed in ub])
    half = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
    return bool(abs(d.mean()) <= half)


def test_utilization_optimum_and_what_cannot_be_told_from_it(heat):
    params, results = heat
    best = sweepout.utilization_optimum(params, results)
    top = max(results, key=lambda r: r.stats.utilization_mean)
    assert best["params"] == dict(zip(("checkpoint.interval_steps", "checkpoint.write_seconds"), top.point.values,
                                      strict=True))
    assert best["utilization_mean"] == top.stats.utilization_mean
    want = [dict(zip(best["params"], r.point.values, strict=True)) for r in results
            if r is not top and _paired_contains_zero(r.replicas, top.replicas)]
    assert best["within_noise"] == want
    # the text under the table and the JSON say the same
    (line,) = sweepout.optimum_notes(params, results)
    at = ", ".join(f"{k}={v:g}" for k, v in best["params"].items())
    assert line.startswith(f"highest util: {at} ({top.stats.utilization_mean:.1%} +- ")
    for p in want:
        assert ", ".join(f"{k}={v:g}" for k, v in p.items()) in line
    doc = sweepout.document(META, params, results)
    assert doc["utilization_optimum"] == best
    assert doc["first_order"]["save_cost_seconds"] == pytest.approx(5 + 300 * (1 - 1 / 1.2))  # the first point's


def test_a_point_no_other_is_near_and_a_single_point_gets_no_note(heat):
    params, results = heat
    one = [r for r in results if r.point.values == (40, 300)]
    assert sweepout.optimum_notes(params, one) == []
    assert sweepout.utilization_optimum(params, one)["within_noise"] == []


def test_heat_map_marks_the_optimum_the_indistinguishable_cells_and_the_model(heat):
    params, results = heat
    fig = sweepplot.render(params, results, META)
    ax = fig.axes[0]
    best = sweepout.utilization_optimum(params, results)
    rows, cols = params
    cell = (rows.values.index(best["params"][rows.key]), cols.values.index(best["params"][cols.key]))
    (star,) = [ln for ln in ax.lines if ln.get_marker() == "*"]
    x, y = star.get_data()
    assert (round(y[0]), round(x[0])) == cell  # inside the optimum's cell
    hatched = sorted((round(p.get_y() + 0.5), round(p.get_x() + 0.5)) for p in ax.patches
                     if isinstance(p, Rectangle) and p.get_hatch())
    assert hatched == sorted((rows.values.index(p[rows.key]), cols.values.index(p[cols.key]))
                             for p in best["within_noise"])
    # the first-order optimum for each write time, between the grid's intervals (rows 10, 20, 40, 80)
    (opt,) = [ln for ln in ax.lines if isinstance(ln, Line2D) and ln.get_label().startswith("first-order optimum")]
    xs, ys = opt.get_data()
    for j, w in enumerate((300, 600)):
        point = results[j].point.scenario
        assert point.checkpoint.write_seconds == w
        steps = first_order(point).young_steps
        assert ys[list(xs).index(j)] == pytest.approx(np.interp(steps, [10, 20, 40, 80], [0, 1, 2, 3]))
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any(t.startswith("highest mean") for t in legend)


def test_interval_curve_of_async_saves_shows_the_wait_region(async_small):
    params = parse_params(["checkpoint.interval_steps=10:80:3"])
    results = fixed_sweep(Runner(grid(async_small, params), Serial(), 1), 0, 2)
    ax = sweepplot.render(params, results, META).axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    model = first_order(async_small)
    assert f"Young optimum sqrt(2 C_eff M), C_eff = b + W(1 - 1/s): {model.young_steps:.0f} steps" in labels
    assert f"below W / s = {model.wait_below_steps:.0f} steps every save waits" in labels
