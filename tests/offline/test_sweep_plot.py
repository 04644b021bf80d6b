"""The sweep's PNG as a person reads it: axis labels with units, the legend, the CI band, the model curve and
the optima for an interval sweep; a heat map with a colour bar for two parameters (matplotlib introspection)."""

import math
from dataclasses import replace

import numpy as np
import pytest
from matplotlib.collections import FillBetweenPolyCollection, PolyCollection
from matplotlib.image import AxesImage
from support.scenarios import SWEEP_SMALL

from simd.executors import Serial
from simd.offline.sweep import plot as sweepplot
from simd.offline.sweep.grid import grid, parse_params
from simd.offline.sweep.run import Runner, first_order, fixed_sweep
from simd.scenario import parse_config

META = {"scenario": "small", "mode": "fixed", "replicas": 6, "seed_base": 0}



def _sweep(small, *params, replicas=6):
    ps = parse_params(list(params))
    return ps, fixed_sweep(Runner(grid(small, ps), Serial(), 1), 0, replicas)


def _legend(ax) -> list[str]:
    """The legend's entries, each on one line (a long one is wrapped: plot._wrapped)."""
    return [" ".join(t.get_text().split()) for t in ax.get_legend().get_texts()]


def test_interval_sweep_curve(small, tmp_path):
    params, results = _sweep(small, "checkpoint.interval_steps=10:200:6")
    fig = sweepplot.render(params, results, META)
    ax, zoom = fig.axes
    assert zoom.get_xlabel() == "checkpoint.interval_steps (steps)"  # the shared x axis, labelled below
    assert ax.get_ylabel() == "effective utilization (productive / wall time, %)"
    assert zoom.get_ylabel() == "95% CI around the\nmean (% points)"
    model = first_order(small)
    widest = max(100 * r.stats.utilization_half_width for r in results)
    assert _legend(ax) == [f"95% confidence interval of the mean (+-{widest:.2g} points at most)",
                           "first-order model (seed 001; no validation, SDC or stragglers)",
                           f"Young optimum sqrt(2CM): {model.young_steps:.0f} steps",
                           f"Daly (2006) optimum: {model.daly_steps:.0f} steps", "simulated mean"]
    # the band spans mean +- half-width at every point, in percent
    band = [c for c in ax.collections if isinstance(c, FillBetweenPolyCollection)]
    assert len(band) == 1
    ys = band[0].get_paths()[0].vertices[:, 1]
    low = [100 * r.stats.ci_low for r in results]
    high = [100 * r.stats.ci_high for r in results]
    assert ys.min() == pytest.approx(min(low)) and ys.max() == pytest.approx(max(high))
    assert all(h - lo > 0 for lo, h in zip(low, high, strict=True))  # a band, not a line
    # and at its own scale below: +- the half-width around 0
    (zband,) = [c for c in zoom.collections if isinstance(c, FillBetweenPolyCollection)]
    zys = zband.get_paths()[0].vertices[:, 1]
    assert zys.max() == pytest.approx(widest) and zys.min() == pytest.approx(-widest)
    # the optima: vertical lines at Young's and Daly's interval
    verticals = sorted(line.get_xdata()[0] for line in ax.lines
                       if len(set(np.asarray(line.get_xdata(), dtype=float))) == 1)
    assert verticals == pytest.approx(sorted([model.young_steps, model.daly_steps]))
    # the model's curve is seed 001's efficiency over the swept range
    curve = next(line for line in ax.lines if line.get_label().startswith("first-order model"))
    x, y = curve.get_data()
    assert x[0] == 10 and x[-1] == 200 and y == pytest.approx(100 * model.efficiency(x))
    path = tmp_path / "curve.png"
    sweepplot.save(fig, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size < 200_000


def test_log_spaced_param_gets_a_log_axis(small):
    params, results = _sweep(small, "failures.hard_per_gpu_hour=1e-4:1e-3:3log", replicas=3)
    ax, zoom = sweepplot.render(params, results, META).axes
    assert ax.get_xscale() == zoom.get_xscale() == "log"
    assert zoom.get_xlabel() == "failures.hard_per_gpu_hour (per GPU-hour)"
    assert "first-order model at each point (seed 001; no validation, SDC or stragglers)" in _legend(ax)
    assert not any(t.startswith("Young") for t in _legend(ax))  # optima only for the interval itself


def test_a_sweep_of_corrupt_loads_says_the_model_leaves_them_out(small):
    text = SWEEP_SMALL.replace("checkpoint: {interval_steps: 40, seconds: 60}",
                               "checkpoint: {interval_steps: 40, seconds: 60, retention_checkpoints: 3}")
    params, results = _sweep(parse_config(text).scenario("small"), "checkpoint.corrupt_on_load=0,0.5", replicas=2)
    ax, _ = sweepplot.render(params, results, META).axes
    assert any("no validation, SDC, stragglers or corrupt persistent loads" in t for t in _legend(ax))
    band = ax.collections[0].get_paths()[0].vertices[:, 1]  # the interval, clipped to a share's range
    assert band.min() >= 0.0 and band.max() <= 100.0


def test_an_integer_key_gets_whole_ticks(small):
    """An integer key (a few of them swept: matplotlib's default locator would put ticks at 1.5, 2.5, ...) is
    labelled with whole numbers only, on both panels' shared axis."""
    text = SWEEP_SMALL.replace("checkpoint: {interval_steps: 40, seconds: 60}",
                               "checkpoint: {interval_steps: 40, seconds: 60, corrupt_on_load: 0.3, "
                               "retention_checkpoints: 2}")
    params, results = _sweep(parse_config(text).scenario("small"), "checkpoint.retention_checkpoints=1:3:3",
                             replicas=2)
    fig = sweepplot.render(params, results, META)
    fig.canvas.draw()
    for ax in fig.axes:
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert ticks == [1.0, 2.0, 3.0]


def _unfinished(results, i, n=1):
    """``results`` with point ``i`` as if only ``n`` of its replicas had finished (stats.mean_ci: no interval
    below two) and the others not."""
    r = results[i]
    half = r.stats.utilization_half_width if n > 1 else math.inf
    stats = replace(r.stats, n=n, unfinished=len(r.replicas) - n, utilization_half_width=half)
    return [*results[:i], replace(r, stats=stats), *results[i + 1:]]


def test_a_point_whose_replicas_did_not_all_finish_is_ringed_and_its_missing_interval_said(small):
    params, results = _sweep(small, "checkpoint.interval_steps=10:200:4", replicas=3)
    ax, _ = sweepplot.render(params, _unfinished(results, 2), META).axes
    (ring,) = [line for line in ax.lines if line.get_label() == sweepplot.UNFINISHED_LABEL]
    assert list(ring.get_xdata()) == [params[0].values[2]]
    assert list(ring.get_ydata()) == [pytest.approx(100 * results[2].stats.utilization_mean)]
    widest = max(100 * r.stats.utilization_half_width for i, r in enumerate(results) if i != 2)
    assert (f"95% confidence interval of the mean (+-{widest:.2g} points at most; none at 1 point of fewer than 2 "
            "finished replicas)") in _legend(ax)
    ax, _ = sweepplot.render(params, results, META).axes  # all finished: no ring, no such entry
    assert sweepplot.UNFINISHED_LABEL not in _legend(ax)
    assert not any("none at" in t for t in _legend(ax))


def test_a_cell_whose_replicas_did_not_all_finish_is_marked(small):
    params, results = _sweep(small, "checkpoint.interval_steps=20,40", "n_gpus=256,512", replicas=2)
    fig = sweepplot.render(params, _unfinished(results, 3), META)
    ax = fig.axes[0]
    (mark,) = [line for line in ax.lines if line.get_label() == sweepplot.UNFINISHED_CELL]
    assert (round(mark.get_xdata()[0]), round(mark.get_ydata()[0])) == (1, 1)  # the cell of (40, 512)
    assert sweepplot.UNFINISHED_CELL in [t.get_text() for t in fig.legends[0].get_texts()]


def test_categorical_param(small):
    params, results = _sweep(small, "recovery.strategy=cold,warm", replicas=4)
    (ax,) = sweepplot.render(params, results, META).axes
    assert [t.get_text() for t in ax.get_xticklabels()] == ["cold", "warm"]
    assert ax.get_xlabel() == "recovery.strategy"
    widest = max(100 * r.stats.utilization_half_width for r in results)
    assert sorted(_legend(ax)) == ["first-order model (seed 001; no validation, SDC or stragglers)",
                                   f"simulated mean, 95% confidence interval (+-{widest:.2g} points at most)"]


def test_two_params_heat_map(small, tmp_path):
    params, results = _sweep(small, "checkpoint.interval_steps=20,40,80", "n_gpus=256,512", replicas=3)
    fig = sweepplot.render(params, results, META)
    ax, bar = fig.axes
    assert ax.get_ylabel() == "checkpoint.interval_steps (steps)" and ax.get_xlabel() == "n_gpus (GPUs)"
    assert bar.get_ylabel() == "mean effective utilization (productive / wall time, %)"
    (image,) = [a for a in ax.get_children() if isinstance(a, AxesImage)]
    want = np.array([100 * r.stats.utilization_mean for r in results]).reshape(3, 2)
    assert np.asarray(image.get_array()) == pytest.approx(want)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["20", "40", "80"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["256", "512"]
    labels = [t.get_text() for t in ax.texts]
    assert labels[0] == f"{want[0, 0]:.1f}\n+-{100 * results[0].stats.utilization_half_width:.2f}"
    assert not [c for c in ax.collections if isinstance(c, PolyCollection)]
    # blocking saves: the model's optimum is Young's on the blocking cost, drawn where it falls in the grid
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "first-order optimum (Young sqrt(2CM))" in legend
    sweepplot.save(fig, tmp_path / "heat.png")
    assert (tmp_path / "heat.png").stat().st_size < 200_000


@pytest.mark.parametrize("key,unit", [("checkpoint.seconds", "s"), ("step_seconds", "s"), ("n_gpus", "GPUs"),
                                      ("stragglers.slowdown", "x base step time"), ("validation.interval_steps",
                                                                                    "steps"),
                                      ("failures.sdc_per_gpu_hour", "per GPU-hour"), ("restart_seconds", "s")])
def test_units_from_key_names(key, unit):
    assert sweepplot.unit(key) == unit
