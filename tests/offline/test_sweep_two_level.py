"""A sweep of a scenario with a memory tier over its two intervals (docs/checkpoints.md, section 7): the heat map
draws the two-level model's optimum (simd.models.analytic.TwoLevel) beside the simulated one, or names the axis it
leaves; the rows and the JSON carry the model's efficiency (the daemon's gauge) and its optima."""

import numpy as np
import pytest

from simd.engine import new_state
from simd.executors import Serial
from simd.metrics.snapshot import scenario_info
from simd.offline.sweep import outputs as sweepout
from simd.offline.sweep import plot as sweepplot
from simd.offline.sweep.grid import grid, parse_params
from simd.offline.sweep.run import Runner, fixed_sweep, two_level
from simd.scenario import parse_config

META = {"scenario": "tiered", "mode": "fixed", "replicas": 2, "seed_base": 0}
# 512 GPUs failing every ~3.9 h of compute; a peer tier (never lost without servers) whose copy is found corrupt on
# a tenth of its loads, which go on to the persistent checkpoint: the tier's optimum ~6 steps, the persistent
# one's ~137
TIERED = """scenarios:
  - name: tiered
    seed: 7
    n_gpus: 512
    step_seconds: 30
    target_steps: 1000
    failures: {hard_per_gpu_hour: 5.0e-4, sdc_per_gpu_hour: 0.0}
    checkpoint: {interval_steps: 64, seconds: 60, load_seconds: 60,
                 tiers: {peer: {interval_steps: 4, seconds: 1, load_seconds: 10, corrupt_on_load: 0.1}}}
    validation: {interval_steps: 0, seconds: 0}
    restart_seconds: 120
"""
TIER_KEY = "checkpoint.tiers.peer.interval_steps"


@pytest.fixture(scope="module")
def tiered():
    return parse_config(TIERED).scenario("tiered")


def _sweep(scenario, persistent: str, tier: str = "2,4,8,16"):
    params = parse_params([f"{TIER_KEY}={tier}", f"checkpoint.interval_steps={persistent}"])
    return params, fixed_sweep(Runner(grid(scenario, params), Serial(), 1), 0, 2)


def _diamonds(fig):
    return [ln for ln in fig.axes[0].lines if ln.get_marker() == "D"]


def test_the_heat_map_draws_the_two_level_optimum_between_the_cells(tiered):
    params, results = _sweep(tiered, "32,64,128,256")
    model = two_level(tiered)
    tier, persistent = model.tier_optimum_steps, dict(model.optimal_interval_steps)["young"]
    assert 2 < tier < 16 and 32 < persistent < 256
    (diamond,) = _diamonds(sweepplot.render(params, results, META))
    x, y = diamond.get_data()
    assert y[0] == pytest.approx(np.interp(tier, [2, 4, 8, 16], [0, 1, 2, 3]))
    assert x[0] == pytest.approx(np.interp(persistent, [32, 64, 128, 256], [0, 1, 2, 3]))
    assert diamond.get_label().startswith(f"two-level model's optimum: tier {tier:.0f}, persistent {persistent:.0f}")


def test_an_optimum_outside_the_grid_is_named_with_its_axis(tiered):
    params, results = _sweep(tiered, "16,32", "2,4,8")
    (diamond,) = _diamonds(sweepplot.render(params, results, META))
    assert len(diamond.get_xdata()) == 0 and diamond.get_label().endswith("(outside the grid: persistent)")


def test_the_rows_and_the_json_carry_the_two_level_model(tiered):
    params, results = _sweep(tiered, "64")
    doc = sweepout.document(META, params, results)
    model = two_level(tiered)
    assert doc["first_order"] is None
    assert doc["two_level"]["tier_interval_optimal_steps"] == model.tier_optimum_steps
    for r, point in zip(results, doc["points"], strict=True):
        s = r.point.scenario
        # the daemon's gauge, on the plan compiled with the stragglers (none here)
        assert point["analytic_efficiency"] == scenario_info(s, s, new_state(s.job_spec())).analytic_efficiency
        assert 0.5 < point["analytic_efficiency"] < 1


def test_the_legend_of_a_one_panel_heat_map_fits_in_the_figure(tiered):
    """The two-level model's label is long: side by side with the star's, the legend ran off both edges of a heat
    map without the cost panel, its ends cut off in the PNG."""
    params, results = _sweep(tiered, "32,64,128,256")
    fig = sweepplot.render(params, results, META)
    fig.canvas.draw()
    (legend,) = fig.legends
    box, frame = legend.get_window_extent(), fig.bbox
    assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0


def test_a_sweep_of_the_tier_interval_draws_the_two_level_model_where_it_reaches(tiered):
    """One parameter, the tier's interval: the two-level model's efficiency at each point as a dashed curve, left
    out (a gap in the curve, said in its legend) at the points beyond its reach (simd.models.analytic.REACH), where
    the daemon exports no gauge either."""
    scenario = parse_config(TIERED.replace("interval_steps: 64", "interval_steps: 128")).scenario("tiered")
    params = parse_params([f"{TIER_KEY}=4,16,64"])
    results = fixed_sweep(Runner(grid(scenario, params), Serial(), 1), 0, 2)
    model = two_level(scenario)
    reach = [model.in_reach(128, t) for t in (4, 16, 64)]
    assert reach == [True, True, False]  # the case at hand (a tier every 64 steps: a failure's loss ~7% of the MTBF)
    ax = sweepplot.render(params, results, META).axes[0]
    (curve,) = [ln for ln in ax.lines if ln.get_label().startswith("two-level model at each point")]
    x, y = curve.get_data()
    assert list(x) == [4, 16, 64]
    for t, got, inside in zip(x, y, reach, strict=True):
        assert got == pytest.approx(100 * model.efficiency(128, t)) if inside else np.isnan(got)
    label = curve.get_label()
    assert " ".join(label.split()).endswith("not at 1 of 3 points: beyond its reach or no hard failures)")
    # a long entry is wrapped: the constrained layout would otherwise squeeze the axes to make room for it
    assert max(len(line) for line in label.splitlines()) <= sweepplot.LEGEND_WIDTH
    fig = ax.get_figure()
    fig.canvas.draw()  # (the layout is made at drawing)
    assert ax.get_position().width > 0.75
    assert curve.get_marker() == "x"  # a point between two without a value is drawn too


def test_two_memory_tiers_have_no_model():
    """A local tier under a peer tier is three levels, which the two-level model is not: no gauge, no curve, no
    optimum (docs/checkpoints.md, section 6), rather than the peer-and-persistent model's value, the same whatever
    the local tier does."""
    from pathlib import Path

    from simd.offline.sweep.run import analytic_efficiency
    from simd.scenario import load_config

    s = load_config(Path(__file__).resolve().parents[2] / "docs" / "examples" / "two-tiers.yaml").scenario(
        "peer-and-local")
    assert s.job_spec().lower_tier is not None
    assert two_level(s) is None and analytic_efficiency(s) is None
    assert scenario_info(s, s, new_state(s.job_spec())).analytic_efficiency is None
    # and a sweep's plot says why it draws no model (a legend entry without a mark)
    from types import SimpleNamespace

    from simd.offline.sweep.plot import _no_model
    points = [SimpleNamespace(point=SimpleNamespace(scenario=s))] * 2
    assert _no_model(points).startswith("no analytic model: two memory tiers are three levels")
