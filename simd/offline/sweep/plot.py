"""The sweep's PNG (matplotlib, Agg: no display needed).

- One numeric parameter: mean effective utilization against it with the 95% confidence band (and error bars,
  which stay visible when the band is thinner than the line). For ``checkpoint.interval_steps``, seed 001's
  first-order model as a curve and Young's and Daly's optima as vertical lines; for another parameter the
  model's value at each point, where it is defined.
- One categorical parameter (``recovery.strategy``): the means with their intervals as error bars.
- Two parameters: a heat map of the mean utilization with a colour bar, each cell labelled when they fit.

Figures are built with ``matplotlib.figure.Figure`` (no pyplot state), so tests can inspect what is drawn.
"""

from __future__ import annotations

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from simd.offline.sweep.grid import Param
from simd.offline.sweep.run import PointResult, first_order

INTERVAL_KEY = "checkpoint.interval_steps"
UTILIZATION_LABEL = "effective utilization (productive / wall time, %)"
# Cells of a heat map get their value written in them up to this many in either direction (beyond, the text
# would not fit a 9-inch figure).
MAX_LABELLED_CELLS = 16
DENSE_POINTS = 400  # samples of the model's curve


def unit(key: str) -> str:
    """The unit of a scenario key, from its name (docs/design.md 3.7: units in names)."""
    leaf = key.rsplit(".", 1)[-1]
    if leaf.endswith("_steps"):
        return "steps"
    if leaf.endswith("seconds"):
        return "s"
    if leaf.endswith("_per_gpu_hour"):
        return "per GPU-hour"
    return {"n_gpus": "GPUs", "slow_ranks": "ranks", "slowdown": "x base step time",
            "goodput_target": "fraction"}.get(leaf, "")


def axis_label(p: Param) -> str:
    u = "" if not p.numeric else unit(p.key)
    return f"{p.key} ({u})" if u else p.key


def _pct(x) -> np.ndarray:
    return 100.0 * np.asarray(x, dtype=float)


def _title(meta: dict) -> str:
    how = (f"{meta['replicas']} replicas per point" if meta.get("mode") == "fixed"
           else f"replicas until the 95% CI half-width <= {meta['ci_half_width']:g}")
    return f"{meta['scenario']}: {how}, seeds from {meta['seed_base']}"


def _ci_label(half, what: str = "95% confidence interval of the mean") -> str:
    finite = half[np.isfinite(half)]
    return f"{what} (+-{finite.max():.2g} points at most)" if finite.size else what


def _curve(fig: Figure, p: Param, results: list[PointResult], meta: dict) -> None:
    ax, zoom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 1))
    x = np.array(p.values, dtype=float)
    mean = _pct([r.stats.utilization_mean for r in results])
    half = _pct([r.stats.utilization_half_width for r in results])
    ax.fill_between(x, mean - half, mean + half, alpha=0.3, color="C0", label=_ci_label(half))
    ax.errorbar(x, mean, yerr=half, fmt="o-", color="C0", ms=4, capsize=3, label="simulated mean")
    # The interval is often far thinner than the curve's range (thousands of replicas, long jobs): the lower
    # panel shows it at its own scale, around the mean.
    zoom.fill_between(x, -half, half, alpha=0.3, color="C0")
    zoom.axhline(0.0, color="C0", lw=1)
    zoom.set_ylabel("95% CI around the\nmean (% points)")
    zoom.grid(True, alpha=0.3)
    model = first_order(results[0].point.scenario)
    if p.key == INTERVAL_KEY and model is not None:
        dense = np.geomspace(x[0], x[-1], DENSE_POINTS) if p.log else np.linspace(x[0], x[-1], DENSE_POINTS)
        ax.plot(dense, _pct(model.efficiency(dense)), "--", color="C1",
                label="first-order model (seed 001; no validation, SDC or stragglers)")
        ax.axvline(model.young_steps, color="C2", ls=":", lw=1.5,
                   label=f"Young optimum sqrt(2CM): {model.young_steps:.0f} steps")
        ax.axvline(model.daly_steps, color="C3", ls="-.", lw=1.5,
                   label=f"Daly (2006) optimum: {model.daly_steps:.0f} steps")
    else:
        models = [first_order(r.point.scenario) for r in results]
        if all(m is not None for m in models):
            ax.plot(x, _pct([m.efficiency(r.point.scenario.checkpoint.interval_steps)
                             for m, r in zip(models, results, strict=True)]),
                    "--", color="C1", label="first-order model at each point (seed 001)")
    if p.log:
        ax.set_xscale("log")
    zoom.set_xlabel(axis_label(p))
    ax.set_ylabel(UTILIZATION_LABEL)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    ax.set_title(_title(meta), fontsize="medium")


def _categories(fig: Figure, p: Param, results: list[PointResult], meta: dict) -> None:
    ax = fig.add_subplot()
    x = np.arange(len(p.values))
    mean = _pct([r.stats.utilization_mean for r in results])
    half = _pct([r.stats.utilization_half_width for r in results])
    ax.errorbar(x, mean, yerr=half, fmt="o", color="C0", capsize=6,
                label=_ci_label(half, "simulated mean, 95% confidence interval"))
    models = [first_order(r.point.scenario) for r in results]
    if all(m is not None for m in models):
        ax.plot(x, _pct([m.efficiency(r.point.scenario.checkpoint.interval_steps)
                         for m, r in zip(models, results, strict=True)]),
                "x", color="C1", ms=9, label="first-order model (seed 001)")
    ax.set_xticks(x, [str(v) for v in p.values])
    ax.set_xlim(-0.5, len(x) - 0.5)
    ax.set_xlabel(axis_label(p))
    ax.set_ylabel(UTILIZATION_LABEL)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    ax.set_title(_title(meta), fontsize="medium")


def _heatmap(fig: Figure, rows: Param, cols: Param, results: list[PointResult], meta: dict) -> None:
    ax = fig.add_subplot()
    shape = (len(rows.values), len(cols.values))
    mean = _pct([r.stats.utilization_mean for r in results]).reshape(shape)  # the first param varies slowest
    half = _pct([r.stats.utilization_half_width for r in results]).reshape(shape)
    im = ax.imshow(mean, origin="lower", aspect="auto", cmap="viridis")
    fig.colorbar(im, ax=ax, label=f"mean {UTILIZATION_LABEL}")
    ax.set_xticks(np.arange(shape[1]), [f"{v:.4g}" if isinstance(v, float) else str(v) for v in cols.values],
                  rotation=45 if shape[1] > 8 else 0)
    ax.set_yticks(np.arange(shape[0]), [f"{v:.4g}" if isinstance(v, float) else str(v) for v in rows.values])
    ax.set_xlabel(axis_label(cols))
    ax.set_ylabel(axis_label(rows))
    if max(shape) <= MAX_LABELLED_CELLS:
        middle = np.nanmean(mean) if np.isfinite(mean).any() else 0.0
        for i in range(shape[0]):
            for j in range(shape[1]):
                ax.text(j, i, f"{mean[i, j]:.1f}\n+-{half[i, j]:.2f}", ha="center", va="center", fontsize="x-small",
                        color="black" if mean[i, j] > middle else "white")
    ax.set_title(_title(meta) + "\ncells: mean +- 95% CI half-width (percentage points)", fontsize="medium")


def render(params: list[Param], results: list[PointResult], meta: dict) -> Figure:
    """The figure for a sweep of one or two params (``results`` in grid order)."""
    fig = Figure(figsize=(9, 6), layout="constrained")
    FigureCanvasAgg(fig)
    if len(params) == 2:
        _heatmap(fig, params[0], params[1], results, meta)
    elif params[0].numeric:
        _curve(fig, params[0], results, meta)
    else:
        _categories(fig, params[0], results, meta)
    return fig


def save(fig: Figure, path) -> None:
    fig.savefig(path, dpi=100)
