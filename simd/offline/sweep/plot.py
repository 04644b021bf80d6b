"""The sweep's PNG (matplotlib, Agg: no display needed).

- One numeric parameter: mean effective utilization against it with the 95% confidence band (and error bars,
  which stay visible when the band is thinner than the line). For ``checkpoint.interval_steps``, seed 001's
  first-order model as a curve and Young's and Daly's optima as vertical lines; for another parameter the
  model's value at each point, where it is defined.
- One categorical parameter (``recovery.strategy``): the means with their intervals as error bars.
- Two parameters: a heat map of the mean utilization with a colour bar, each cell labelled when they fit; a star
  on the cell of the highest mean, hatched outlines on the cells a paired comparison (same seeds, 95% interval of
  the mean difference) cannot tell from it; when one parameter is ``checkpoint.interval_steps``, the first-order
  model's optimum (Young, with asynchronous saves on ``C_eff``) for each value of the other, where it falls
  inside the grid; when the other is a memory tier's interval, the two-level model's optimum of both instead.

With server pools (the results have cost statistics) every figure gets the cost of a productive GPU-hour beside
the utilization, drawn the same way: below the curve (with its own confidence panel, the grid point of the lowest
cost marked, and money on a right-hand axis with ``servers.price_per_gpu_hour``), below the categories, or as a
second heat map. Without pools the figures are unchanged.

Figures are built with ``matplotlib.figure.Figure`` (no pyplot state), so tests can inspect what is drawn.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator

from simd.offline.sweep.grid import Param
from simd.offline.sweep.outputs import cost_optimum, has_cost, utilization_optimum
from simd.offline.sweep.run import PointResult, analytic_efficiency, first_order, two_level

INTERVAL_KEY = "checkpoint.interval_steps"
TIER_INTERVAL_KEYS = ("checkpoint.tiers.peer.interval_steps", "checkpoint.tiers.local.interval_steps")
UTILIZATION_LABEL = "effective utilization (productive / wall time, %)"
# The first-order model knows no servers: with pools its label says it never waits for one.
_NO_POOLS = {False: "", True: "; never waits for a server"}
_LEFT_OUT = ("validation", "SDC", "stragglers")  # what the analytic models leave out (simd.models.analytic)


def _leaves(results: list[PointResult]) -> str:
    """What the model's legend says it leaves out: _LEFT_OUT, and the persistent checkpoints found corrupt on load
    when a point has them (no analytic model here falls back down the persistent checkpoints: a sweep of
    checkpoint.corrupt_on_load draws it flat)."""
    out = _LEFT_OUT + (("corrupt persistent loads",) if any(
        r.point.scenario.checkpoint.corrupt_on_load for r in results) else ())
    return "; no " + ", ".join(out[:-1]) + " or " + out[-1]


COST_LABEL = "GPU-hours held per productive GPU-hour\n(job + standbys + spares, in repair too)"
# Cells of a heat map get their value written in them up to this many in either direction (beyond, the text
# would not fit a 9-inch figure).
MAX_LABELLED_CELLS = 16
# A legend entry's longest line, characters: at the legend's small font ~5.5 px a character, 70 of them take ~40%
# of a 9-inch figure's width at 100 dpi, so a legend inside the axes leaves room for the curves beside it
LEGEND_WIDTH = 70
DENSE_POINTS = 400  # samples of the model's curve


# Counts of the servers model whose names do not say what they count.
SERVER_UNITS = {"servers.spares.count": "servers", "servers.warm_standbys": "servers",
                "servers.retirement.failures": "failures within the window"}


def unit(key: str) -> str:
    """The unit of a scenario key, from its name (docs/design.md 3.7: units in names)."""
    if key in SERVER_UNITS:
        return SERVER_UNITS[key]
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


def _ci_label(half, what: str = "95% confidence interval of the mean", unit: str = " points") -> str:
    """The interval's legend entry: its widest half-width, and at how many points there is none (fewer than two
    finished replicas: stats.mean_ci's inf, the band then the whole range)."""
    finite = half[np.isfinite(half)]
    none = len(half) - finite.size - int(np.isnan(half).sum())
    widest = f"+-{finite.max():.2g}{unit} at most" if finite.size else ""
    undefined = f"none at {none} point{'s' if none > 1 else ''} of fewer than 2 finished replicas" if none else ""
    inside = "; ".join(x for x in (widest, undefined) if x)
    return f"{what} ({inside})" if inside else what


def _ratios(results: list[PointResult]) -> tuple[np.ndarray, np.ndarray]:
    """Mean GPU-hours held per productive GPU-hour and its 95% half-width per point (nan where not defined)."""
    cost = [r.stats.cost for r in results]
    return (np.array([np.nan if c is None else c.gpu_hours_per_productive.mean for c in cost]),
            np.array([np.nan if c is None else c.gpu_hours_per_productive.half_width for c in cost]))


def _prices(results: list[PointResult]) -> list:
    return [None if r.point.scenario.servers is None else r.point.scenario.servers.price_per_gpu_hour
            for r in results]


def _money_axis(ax, results: list[PointResult], x) -> None:
    """Money per productive GPU-hour on the right of a cost panel: a second scale of the same curve when the
    price is the same at every point, else its own series (the price swept)."""
    prices = _prices(results)
    if any(pr is None for pr in prices):
        return
    if len(set(prices)) == 1:
        price = prices[0]
        if price > 0:
            sec = ax.secondary_yaxis("right", functions=(lambda y: y * price, lambda y: y / price))
            sec.set_ylabel(f"money per productive GPU-hour\n(at {price:g} per GPU-hour held)")
        return
    twin = ax.twinx()
    money = [None if r.stats.cost is None else r.stats.cost.cost_per_productive for r in results]
    half = np.array([np.nan if m is None else m.half_width for m in money])
    money = np.array([np.nan if m is None else m.mean for m in money])
    twin.errorbar(x, money, yerr=half, fmt="s--", color="C3", ms=4, capsize=3,
                  label="money per productive GPU-hour (right axis)")
    twin.set_ylabel("money per productive GPU-hour", color="C3")
    twin.legend(loc="upper right", fontsize="small")


def _cost_curve(ax, zoom, p: Param, results: list[PointResult], x) -> None:
    mean, half = _ratios(results)
    ax.fill_between(x, mean - half, mean + half, alpha=0.3, color="C4", label=_ci_label(half, unit=""))
    ax.errorbar(x, mean, yerr=half, fmt="o-", color="C4", ms=4, capsize=3, label="simulated mean")
    best = cost_optimum([p], results)
    if best is not None:
        v = best["params"][p.key]
        near = [q[p.key] for q in best["within_noise"]]
        ax.axvline(v, color="C2", ls=":", lw=1.5,
                   label=f"lowest: {p.key} = {v:g} ({best['gpu_hours_per_productive_gpu_hour_mean']:.4f})"
                   + (f"; not told apart from it (paired 95% CI): {', '.join(f'{u:g}' for u in near)}"
                      if near else ""))
    zoom.fill_between(x, -half, half, alpha=0.3, color="C4")
    zoom.axhline(0.0, color="C4", lw=1)
    zoom.set_ylabel("95% CI around\nthe mean (GPU-h)")
    zoom.grid(True, alpha=0.3)
    ax.set_ylabel(COST_LABEL)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    _money_axis(ax, results, x)


def _wrapped(label: str) -> str:
    """A legend entry on lines of at most LEGEND_WIDTH characters: the constrained layout makes room for a legend's
    whole width, so one long line squeezes the axes beside it."""
    return textwrap.fill(label, LEGEND_WIDTH)


def _model_points(results: list[PointResult], cost: bool, each: str = "") -> tuple[np.ndarray, str] | None:
    """The model's efficiency at each point (the daemon's gauge: the first-order model's, or with a memory tier the
    two-level one's), %, NaN where it has none, and its legend entry (``each``: words after the model's name); None
    when no point has a value."""
    values = [analytic_efficiency(r.point.scenario) for r in results]
    if all(v is None for v in values):
        return None
    tiered = results[0].point.scenario.checkpoint.tiers is not None
    name = f"two-level model{each} (Benoit et al. 2017" if tiered else f"first-order model{each} (seed 001"
    return (_pct([math.nan if v is None else v for v in values]),
            _wrapped(name + _leaves(results) + _NO_POOLS[cost] + _beyond(values) + ")"))


def _no_model(results: list[PointResult]) -> str:
    """The legend's words where no point has a model value (_model_points is None): why."""
    tiers = [r.point.scenario.checkpoint.tiers for r in results]
    if all(t is not None and t.peer is not None and t.local is not None for t in tiers):
        return "no analytic model: two memory tiers are three levels, beyond the two-level model (docs/checkpoints.md)"
    return "no analytic model at any point: beyond its reach or no hard failures"


def _beyond(values: list) -> str:
    """What a model curve leaves out: the points without a model value (beyond its reach, simd.models.analytic.REACH:
    a failure's expected loss above that share of the time between failures, where the model drifts; or without
    hard failures), if any."""
    out = sum(v is None for v in values)
    return f"; not at {out} of {len(values)} points: beyond its reach or no hard failures" if out else ""


# a point some of whose replicas did not finish (their jobs past the sweep's limit): its means leave them out, as
# the table's "!" says (outputs.UNFINISHED_NOTE)
UNFINISHED_LABEL = "ringed: some replicas did not finish, left out of the mean"
UNFINISHED_CELL = "!: some of the cell's replicas did not finish, left out of its mean"


def _unfinished(ax, x, y, results: list[PointResult]) -> None:
    """The points with replicas that did not finish, ringed in red (one legend entry), if any."""
    m = np.array([r.stats.unfinished > 0 for r in results])
    if m.any():
        ax.plot(np.asarray(x)[m], np.asarray(y)[m], "o", mfc="none", mec="red", ms=11, mew=1.5, ls="none",
                label=UNFINISHED_LABEL)


def _curve(fig: Figure, p: Param, results: list[PointResult], meta: dict) -> None:
    cost = has_cost(results)
    if cost:
        ax, zoom, cax, czoom = fig.subplots(4, 1, sharex=True, height_ratios=(3, 1, 3, 1))
    else:
        ax, zoom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 1))
    x = np.array(p.values, dtype=float)
    mean = _pct([r.stats.utilization_mean for r in results])
    half = _pct([r.stats.utilization_half_width for r in results])
    # a share's interval clipped to 0 .. 100% (a normal interval of few replicas can reach past either)
    ax.fill_between(x, np.clip(mean - half, 0.0, 100.0), np.clip(mean + half, 0.0, 100.0), alpha=0.3, color="C0",
                    label=_ci_label(half))
    ax.errorbar(x, mean, yerr=half, fmt="o-", color="C0", ms=4, capsize=3, label="simulated mean")
    _unfinished(ax, x, mean, results)
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
                label=_wrapped("first-order model (seed 001" + _leaves(results) + ")"))
        # with just-in-time saves after a share f of the failures, Young's on the others (none: no optimum)
        m = "M" if model.jit_rate == 0 else "M/(1 - f)"
        if math.isfinite(model.young_steps):
            ax.axvline(model.young_steps, color="C2", ls=":", lw=1.5,
                       label=f"Young optimum sqrt(2C{m}): {model.young_steps:.0f} steps" if model.write_seconds == 0
                       else f"Young optimum sqrt(2 C_eff {m}), C_eff = b + W(1 - 1/s): {model.young_steps:.0f} steps")
        if model.write_seconds > 0 and x[0] <= model.wait_below_steps <= x[-1]:
            ax.axvspan(x[0], model.wait_below_steps, color="C1", alpha=0.1,
                       label=f"below W / s = {model.wait_below_steps:.0f} steps every save waits")
        if math.isfinite(model.daly_steps):
            ax.axvline(model.daly_steps, color="C3", ls="-.", lw=1.5,
                       label=f"Daly (2006) optimum: {model.daly_steps:.0f} steps")
    else:
        model_points = _model_points(results, cost, " at each point")
        if model_points is not None:
            # markers as well as the line: a point whose neighbours have no value draws no segment
            ax.plot(x, model_points[0], "x--", color="C1", ms=6, label=model_points[1])
        else:  # a legend entry without a mark: why there is no model
            ax.plot([], [], " ", label=_wrapped(_no_model(results)))
    if p.log:
        ax.set_xscale("log")
    elif p.kind == "int":  # an integer key's axis: whole ticks (the axes share it)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if cost:
        _cost_curve(cax, czoom, p, results, x)
        czoom.set_xlabel(axis_label(p))
    else:
        zoom.set_xlabel(axis_label(p))
    ax.set_ylabel(UTILIZATION_LABEL)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    ax.set_title(_title(meta), fontsize="medium")


def _categories(fig: Figure, p: Param, results: list[PointResult], meta: dict) -> None:
    cost = has_cost(results)
    if cost:
        ax, cax = fig.subplots(2, 1, sharex=True)
    else:
        ax = fig.add_subplot()
    x = np.arange(len(p.values))
    mean = _pct([r.stats.utilization_mean for r in results])
    half = _pct([r.stats.utilization_half_width for r in results])
    ax.errorbar(x, mean, yerr=half, fmt="o", color="C0", capsize=6,
                label=_ci_label(half, "simulated mean, 95% confidence interval"))
    _unfinished(ax, x, mean, results)
    model_points = _model_points(results, cost)
    if model_points is not None:
        ax.plot(x, model_points[0], "x", color="C1", ms=9, label=model_points[1])
    else:
        ax.plot([], [], " ", label=_wrapped(_no_model(results)))
    ax.set_xticks(x, [str(v) for v in p.values])
    ax.set_xlim(-0.5, len(x) - 0.5)
    (cax if cost else ax).set_xlabel(axis_label(p))
    ax.set_ylabel(UTILIZATION_LABEL)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    ax.set_title(_title(meta), fontsize="medium")
    if cost:
        mean, half = _ratios(results)
        cax.errorbar(x, mean, yerr=half, fmt="o", color="C4", capsize=6,
                     label=_ci_label(half, "simulated mean, 95% confidence interval", unit=""))
        cax.set_ylabel(COST_LABEL)
        cax.grid(True, axis="y", alpha=0.3)
        cax.legend(loc="best", fontsize="small")
        _money_axis(cax, results, x)


def _heatmap(fig: Figure, rows: Param, cols: Param, results: list[PointResult], meta: dict) -> None:
    shape = (len(rows.values), len(cols.values))
    if has_cost(results):
        ax, cax = fig.subplots(1, 2)
        mean, half = (a.reshape(shape) for a in _ratios(results))
        _heat(fig, cax, rows, cols, mean, half, f"mean {COST_LABEL}", "viridis_r", (4, 4))
        best = cost_optimum([rows, cols], results)
        if best is not None:  # the cell of the lowest cost, outlined
            i, j = rows.values.index(best["params"][rows.key]), cols.values.index(best["params"][cols.key])
            cax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", lw=2))
        cax.set_title("cells: mean +- 95% CI half-width (GPU-hours); red: the lowest", fontsize="medium")
    else:
        ax = fig.add_subplot()
    mean = _pct([r.stats.utilization_mean for r in results]).reshape(shape)  # the first param varies slowest
    half = _pct([r.stats.utilization_half_width for r in results]).reshape(shape)
    _heat(fig, ax, rows, cols, mean, half, f"mean {UTILIZATION_LABEL}", "viridis", (1, 2))
    ax.set_title(_title(meta) + "\ncells: mean +- 95% CI half-width (percentage points)", fontsize="medium")
    _mark_optimum(ax, rows, cols, results)
    out = [(rows.values.index(r.point.values[0]), cols.values.index(r.point.values[1])) for r in results
           if r.stats.unfinished]
    if out:  # in the cell's upper right corner, clear of its label and of the optimum's star
        ax.plot([j + 0.32 for _, j in out], [i + 0.28 for i, _ in out], marker="$!$", ms=10, color="red", ls="none",
                label=UNFINISHED_CELL)
    if not _two_level_optimum(ax, rows, cols, results):
        _model_optima(ax, rows, cols, results)
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        legend = fig.legend(handles, labels, loc="outside lower center", fontsize="small", ncols=2)
        # the two-level model's label is long: two columns of it run off a one-panel figure's edges, then one
        if legend.get_window_extent(fig.canvas.get_renderer()).width > fig.bbox.width:
            legend.remove()
            fig.legend(handles, labels, loc="outside lower center", fontsize="small", ncols=1)


def _cell(rows: Param, cols: Param, params: dict) -> tuple[int, int]:
    return rows.values.index(params[rows.key]), cols.values.index(params[cols.key])


def _mark_optimum(ax, rows: Param, cols: Param, results: list[PointResult]) -> None:
    """A star on the cell of the highest mean utilization, hatched outlines on the cells the paired 95% interval
    of the difference (same seeds) cannot tell from it."""
    best = utilization_optimum([rows, cols], results)
    if best is None:
        return
    i, j = _cell(rows, cols, best["params"])
    # in the cell's upper left corner, clear of its label
    ax.plot([j - 0.32], [i + 0.28], marker="*", ms=14, color="red", mec="white", mew=1, ls="none",
            label=f"highest mean: {best['utilization_mean']:.2%}")
    for n, near in enumerate(best["within_noise"]):
        i, j = _cell(rows, cols, near)
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", hatch="//", lw=1.5,
                               label="not told apart from it (paired 95% CI of the difference)" if n == 0 else None))


def _model_optima(ax, rows: Param, cols: Param, results: list[PointResult]) -> None:
    """With ``checkpoint.interval_steps`` on an axis, the first-order optimum interval for each value of the other
    parameter, placed between the grid's intervals (linearly, or in log on a log-spaced axis) where it falls
    inside them."""
    if INTERVAL_KEY not in (rows.key, cols.key) or not rows.numeric or not cols.numeric:
        return
    on_rows = rows.key == INTERVAL_KEY
    interval, other = (rows, cols) if on_rows else (cols, rows)
    grid = np.array(interval.values, dtype=float)
    scale = np.log if interval.log else (lambda v: v)
    optima, waits = ([], []), ([], [])
    written = False
    for k in range(len(other.values)):
        # the scenario of a point with this value of the other parameter (its interval does not enter the model)
        r = results[k if on_rows else k * len(cols.values)]
        model = first_order(r.point.scenario)
        if model is None:
            continue
        written |= model.write_seconds > 0
        for steps, (xs, ys) in ((model.young_steps, optima), (model.wait_below_steps, waits)):
            if grid[0] <= steps <= grid[-1]:
                pos = float(np.interp(scale(steps), scale(grid), np.arange(len(grid))))
                xs.append(k if on_rows else pos)
                ys.append(pos if on_rows else k)
    if optima[0]:
        ax.plot(*optima, "o--", color="white", mec="black", ms=6, lw=1.5,
                label="first-order optimum (Young on C_eff = b + W(1 - 1/s))" if written
                else "first-order optimum (Young sqrt(2CM))")
    if waits[0]:
        ax.plot(*waits, "v:", color="orange", mec="black", ms=6, lw=1.5,
                label="W / s: below it every save waits for the write before it")


def _grid_position(p: Param, steps: float) -> float | None:
    """Where ``steps`` falls between the grid's values of ``p`` in cell units (linearly, or in log on a log-spaced
    axis); None outside the grid."""
    grid = np.array(p.values, dtype=float)
    if not grid[0] <= steps <= grid[-1]:
        return None
    scale = np.log if p.log else (lambda v: v)
    return float(np.interp(scale(steps), scale(grid), np.arange(len(grid))))


def _two_level_optimum(ax, rows: Param, cols: Param, results: list[PointResult]) -> bool:
    """With the persistent interval and a memory tier's on the axes, the two-level model's optimum (the tier's
    interval optimum and Young's on the failures that lose the tier: simd.models.analytic.TwoLevel), a white
    diamond where it falls inside the grid, else named in the legend with the axis it leaves. False for other
    axes (nothing drawn)."""
    keys = (rows.key, cols.key)
    tier_key = next((k for k in keys if k in TIER_INTERVAL_KEYS), None)
    if INTERVAL_KEY not in keys or tier_key is None:
        return False
    model = two_level(results[0].point.scenario)  # the intervals do not enter the optima: one point for the grid
    if model is None:
        return True
    persistent = dict(model.optimal_interval_steps).get("young")
    tier = model.tier_optimum_steps
    if persistent is None or tier is None:
        ax.plot([], [], "D", color="white", mec="black", ms=8, ls="none",
                label="two-level model: no optimum (no failure " + ("loses the tier)" if persistent is None
                                                                    else "the tier recovers)"))
        return True
    at = {INTERVAL_KEY: persistent, tier_key: tier}
    pos = {p.key: _grid_position(p, at[p.key]) for p in (rows, cols)}
    text = f"two-level model's optimum: tier {tier:.0f}, persistent {persistent:.0f} steps"
    outside = [p.key.rsplit(".", 2)[-2] if p.key != INTERVAL_KEY else "persistent"
               for p in (rows, cols) if pos[p.key] is None]
    if outside:
        ax.plot([], [], "D", color="white", mec="black", ms=8, ls="none",
                label=text + f" (outside the grid: {', '.join(outside)})")
        return True
    ax.plot([pos[cols.key]], [pos[rows.key]], "D", color="white", mec="black", ms=8, ls="none",
            label=text + " (Benoit et al. 2017 per level; docs/checkpoints.md, section 6)")
    return True


def _heat(fig: Figure, ax, rows: Param, cols: Param, mean, half, label: str, cmap: str,
          digits: tuple[int, int]) -> None:
    """A heat map of ``mean`` (rows x cols) on ``ax``, each cell labelled mean +- half when they fit, with
    ``digits`` decimals for each."""
    shape = mean.shape
    im = ax.imshow(mean, origin="lower", aspect="auto", cmap=cmap)
    fig.colorbar(im, ax=ax, label=label)
    ticks = [f"{v:.4g}" if isinstance(v, float) else str(v) for v in cols.values]
    # long names side by side (a group key's scenario names) would run into each other: slanted then
    if shape[1] > 8:
        ax.set_xticks(np.arange(shape[1]), ticks, rotation=45)
    elif shape[1] > 2 and max(map(len, ticks)) > 12:
        ax.set_xticks(np.arange(shape[1]), ticks, rotation=20, ha="right", rotation_mode="anchor")
    else:
        ax.set_xticks(np.arange(shape[1]), ticks)
    ax.set_yticks(np.arange(shape[0]), [f"{v:.4g}" if isinstance(v, float) else str(v) for v in rows.values])
    ax.set_xlabel(axis_label(cols))
    ax.set_ylabel(axis_label(rows))
    if max(shape) <= MAX_LABELLED_CELLS:
        middle = np.nanmean(mean) if np.isfinite(mean).any() else 0.0
        for i in range(shape[0]):
            for j in range(shape[1]):
                light = mean[i, j] > middle if cmap == "viridis" else mean[i, j] < middle
                ax.text(j, i, f"{mean[i, j]:.{digits[0]}f}\n+-{half[i, j]:.{digits[1]}f}", ha="center", va="center",
                        fontsize="x-small", color="black" if light else "white")


def render(params: list[Param], results: list[PointResult], meta: dict) -> Figure:
    """The figure for a sweep of one or two params (``results`` in grid order)."""
    cost = has_cost(results)
    size = (9, 6) if not cost else (16, 6) if len(params) == 2 else (9, 11) if params[0].numeric else (9, 9)
    fig = Figure(figsize=size, layout="constrained")
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
