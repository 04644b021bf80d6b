"""A sweep's results as rows: the CSV and JSON files and the table ``simd sweep`` prints.

One row per grid point: the parameter values (one column per key), the replicas (``n`` finished,
``unfinished``), the mean effective utilization with its 95% confidence interval, the mean share of wall time
of each bucket, the mean interruptions and SDCs per job, and seed 001's first-order efficiency at the point
(with a memory tier the two-level model's, where it reaches: the daemon's gauge).
Ratios are fractions of 1 (the table shows percent). Under the table and in the JSON: the grid point of the
highest mean utilization and the points a paired comparison (same seeds) cannot tell from it
(:func:`utilization_optimum`).

Scenarios with elastic replica groups (``recovery.elastic``) add the degraded bucket's share (``share_degraded``,
the table's ``degraded``).

Scenarios with server pools (``servers.warm_standbys`` or ``servers.spares``) add what capacity cost
(:data:`COST_COLUMNS`): the mean GPU-hours held per job by the job and by its pools, and the cost of a productive
GPU-hour in GPU-hours held with its 95% interval (and in money with ``servers.price_per_gpu_hour``:
:data:`MONEY_COLUMNS`), and the grid point where that cost is lowest (:func:`cost_optimum`). Without pools the
rows, the table and the files are what they were.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from simd.engine import BUCKETS
from simd.offline.sweep.grid import Param
from simd.offline.sweep.run import PointResult, analytic_efficiency, first_order, two_level
from simd.offline.sweep.stats import Interval, paired_difference

STAT_COLUMNS = ("n", "unfinished", "utilization_mean", "utilization_ci_low", "utilization_ci_high",
                "utilization_ci_half_width", "utilization_sd", *(f"share_{b}" for b in BUCKETS),
                "interruptions_mean", "sdc_detected_mean", "sdc_baked_mean", "wall_hours_mean",
                "analytic_efficiency", "hit_cap")
RATIO = "gpu_hours_per_productive_gpu_hour"  # simd simulate --json's names
MONEY = "cost_per_productive_gpu_hour"
_INTERVAL = ("mean", "ci_low", "ci_high", "ci_half_width", "sd")
COST_COLUMNS = ("gpu_hours_job_mean", "gpu_hours_pools_mean", *(f"{RATIO}_{c}" for c in _INTERVAL))
MONEY_COLUMNS = tuple(f"{MONEY}_{c}" for c in _INTERVAL)


def has_cost(results: list[PointResult]) -> bool:
    """The grid's scenario has server pools: the rows say what capacity cost."""
    return any(r.stats.cost is not None for r in results)


def has_degraded(results: list[PointResult]) -> bool:
    """The grid's scenario has elastic replica groups: the rows have the degraded bucket's share."""
    return any(r.stats.degraded_share is not None for r in results)


def has_money(results: list[PointResult]) -> bool:
    """... and a price per GPU-hour."""
    return any(r.stats.cost is not None and r.stats.cost.cost_per_productive is not None for r in results)


def columns(params: list[Param], results: list[PointResult]) -> list[str]:
    """The CSV's columns: the params, STAT_COLUMNS, then COST_COLUMNS and MONEY_COLUMNS where they apply."""
    stats = list(STAT_COLUMNS)
    if has_degraded(results):  # elastic replica groups: their bucket too
        stats.insert(stats.index(f"share_{BUCKETS[-1]}") + 1, "share_degraded")
    return ([p.key for p in params] + stats + (list(COST_COLUMNS) if has_cost(results) else [])
            + (list(MONEY_COLUMNS) if has_money(results) else []))


def _interval(prefix: str, i: Interval | None) -> dict:
    nan = float("nan")
    return dict(zip((f"{prefix}_{c}" for c in _INTERVAL),
                    (nan,) * 5 if i is None else (i.mean, i.ci_low, i.ci_high, i.half_width, i.sd), strict=True))


def _cost(r: PointResult, money: bool) -> dict:
    c = r.stats.cost
    nan = float("nan")
    out = {"gpu_hours_job_mean": nan if c is None else c.gpu_hours_job_mean,
           "gpu_hours_pools_mean": nan if c is None else c.gpu_hours_pools_mean,
           **_interval(RATIO, None if c is None else c.gpu_hours_per_productive)}
    if money:
        out.update(_interval(MONEY, None if c is None else c.cost_per_productive))
    return out


def _finite(x):
    """JSON has no NaN or Infinity: an undefined statistic (no finished replica, one replica) is null."""
    return x if not isinstance(x, float) or math.isfinite(x) else None


def row(params: list[Param], r: PointResult, cost: bool = False, money: bool = False) -> dict:
    """One point's row: the params and STAT_COLUMNS, then with ``cost`` COST_COLUMNS and with ``money``
    MONEY_COLUMNS (:func:`has_cost`, :func:`has_money` of the sweep's results)."""
    s = r.stats
    values = {p.key: v for p, v in zip(params, r.point.values, strict=True)}
    return {
        **values,
        "n": s.n,
        "unfinished": s.unfinished,
        "utilization_mean": s.utilization_mean,
        "utilization_ci_low": s.ci_low,
        "utilization_ci_high": s.ci_high,
        "utilization_ci_half_width": s.utilization_half_width,
        "utilization_sd": s.utilization_sd,
        **{f"share_{b}": s.shares[b] for b in BUCKETS},
        **({"share_degraded": s.degraded_share} if s.degraded_share is not None else {}),
        "interruptions_mean": s.interruptions_mean,
        "sdc_detected_mean": s.sdc_detected_mean,
        "sdc_baked_mean": s.sdc_baked_mean,
        "wall_hours_mean": s.wall_hours_mean,
        "analytic_efficiency": analytic_efficiency(r.point.scenario),
        "hit_cap": r.hit_cap,
        **(_cost(r, money) if cost else {}),
    }


def _at(params: list[Param], r: PointResult) -> dict:
    return {p.key: v for p, v in zip(params, r.point.values, strict=True)}


def _within_noise(params: list[Param], scored: list[PointResult], best: PointResult, value) -> list[dict]:
    """The points of ``scored`` that common random numbers cannot tell from ``best``: the paired 95% interval of
    the mean difference of ``value`` (same seeds) contains 0, or there is no interval (too few common seeds)."""
    near = []
    for r in scored:
        if r is best:
            continue
        d, half, _ = paired_difference(r.replicas, best.replicas, value)
        if not abs(d) > half:
            near.append(_at(params, r))
    return near


def utilization_optimum(params: list[Param], results: list[PointResult]) -> dict | None:
    """The grid point of the highest mean effective utilization, with the points that common random numbers
    cannot tell from it (every point runs the same seeds): those whose paired 95% interval of the mean
    difference of utilization, seed by seed, contains 0. None when no point has a finished replica."""
    scored = [r for r in results if math.isfinite(r.stats.utilization_mean)]
    if not scored:
        return None
    best = max(scored, key=lambda r: r.stats.utilization_mean)  # the first of equal means
    return {"params": _at(params, best), "utilization_mean": best.stats.utilization_mean,
            "utilization_ci_half_width": best.stats.utilization_half_width,
            "within_noise": _within_noise(params, scored, best, lambda x: x.effective_utilization)}


def cost_optimum(params: list[Param], results: list[PointResult]) -> dict | None:
    """The grid point of the lowest mean GPU-hours held per productive GPU-hour (the same point as the lowest
    money per productive GPU-hour unless the price itself is swept), with the points that common random numbers
    cannot tell from it: those whose paired 95% interval of the difference (same seeds) contains 0. None without
    pools. (The ratio is in GPU-hours so the optimum does not depend on a price.)"""
    scored = [r for r in results if r.stats.cost is not None
              and math.isfinite(r.stats.cost.gpu_hours_per_productive.mean)]
    if not scored:
        return None
    best = min(scored, key=lambda r: r.stats.cost.gpu_hours_per_productive.mean)  # the first of equal means
    ratio = best.stats.cost.gpu_hours_per_productive
    return {"params": _at(params, best), f"{RATIO}_mean": ratio.mean, f"{RATIO}_ci_half_width": ratio.half_width,
            "within_noise": _within_noise(params, scored, best, lambda x: x.gpu_hours_per_productive)}


def write_csv(path: Path, params: list[Param], results: list[PointResult]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=columns(params, results))
        w.writeheader()
        cost, money = has_cost(results), has_money(results)
        for r in results:
            w.writerow({k: ("" if v is None else repr(v) if isinstance(v, float) else v)
                        for k, v in row(params, r, cost, money).items()})


def document(meta: dict, params: list[Param], results: list[PointResult]) -> dict:
    """The JSON file: ``meta`` (scenario, mode, seeds, ...), the params, and one object per point."""
    base = first_order(results[0].point.scenario) if results else None
    levels = two_level(results[0].point.scenario) if results else None
    points = []
    cost, money = has_cost(results), has_money(results)
    for r in results:
        d = row(params, r, cost, money)
        points.append({"params": {p.key: d.pop(p.key) for p in params},
                       **{k: _finite(v) for k, v in d.items()}, "rounds": list(r.rounds)})
    return {
        **meta,
        "confidence": 0.95,
        "params": [{"key": p.key, "kind": p.kind, "values": list(p.values), "log": p.log} for p in params],
        "first_order": None if base is None else _finite_tree({
            "mtbf_seconds": base.mtbf_seconds, "recovery_seconds": base.recovery_seconds,
            "young_interval_steps": base.young_steps, "daly_interval_steps": base.daly_steps,
            **({} if base.write_seconds == 0 else {"save_cost_seconds": base.save_cost_seconds,
                                                   "wait_below_interval_steps": base.wait_below_steps}),
            # the failures saved just in time (the MTBF and the optima above are those of the others: null when
            # every failure is saved)
            **({} if base.jit_rate == 0 else {"jit_rate_per_second": base.jit_rate,
                                              "jit_recovery_seconds": base.jit_recovery_seconds})}),
        **({} if levels is None else {"two_level": _two_level(levels)}),
        "points": points,
        "utilization_optimum": _finite_tree(utilization_optimum(params, results)),
        **({"cost_optimum": _finite_tree(cost_optimum(params, results))} if cost else {}),
    }


def _two_level(m) -> dict:
    """The two-level model's rates and optima (simd.models.analytic.TwoLevel) for the JSON file: those of the
    sweep's first point (the same at every point of a sweep of the intervals, which do not enter them)."""
    optima = dict(m.optimal_interval_steps)
    return {"rate_tier_per_second": m.rate_tier, "rate_persistent_per_second": m.rate_persistent,
            "tier_interval_optimal_steps": m.tier_optimum_steps,
            "young_interval_steps": optima.get("young"), "daly_interval_steps": optima.get("daly"),
            **({} if m.jit_rate == 0 else {"jit_rate_per_second": m.jit_rate})}


def _finite_tree(d: dict | None):
    return None if d is None else {k: _finite(v) for k, v in d.items()}


def write_json(path: Path, meta: dict, params: list[Param], results: list[PointResult]) -> None:
    Path(path).write_text(json.dumps(document(meta, params, results), indent=1, allow_nan=False) + "\n",
                          encoding="utf-8")


def _value(v) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def _pct(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{x:.1%}"


TABLE = (("n", 6), ("util", 7), ("+-ci95", 7), ("rollback", 8), ("ckpt", 6), ("valid", 6), ("restart", 7),
         ("detect", 6), ("strag", 6), ("interr", 8), ("sdc det", 7), ("baked", 6))


# With elastic replica groups: the degraded bucket's share (the CSV's share_degraded), after the other shares.
DEGRADED_TABLE = (("degraded", 8),)
# With pools: the waiting share, then GPU-hours held per productive GPU-hour, then (with a price) money per
# productive GPU-hour, each with its 95% half-width.
COST_TABLE = (("wait", 6), ("GPUh/pGPUh", 10), ("+-ci95", 7))
MONEY_TABLE = (("price/pGPUh", 11), ("+-ci95", 7))


def _number(x: float, digits: int) -> str:
    return "-" if not math.isfinite(x) else f"{x:.{digits}f}"


def _cost_cells(r: PointResult, money: bool) -> list[str]:
    s, c = r.stats, r.stats.cost
    cells = [_pct(s.shares["waiting"])]
    ratio = c.gpu_hours_per_productive if c is not None else Interval(math.nan, math.nan, math.nan)
    cells += [_number(ratio.mean, 4), _number(ratio.half_width, 4)]
    if money:
        m = c.cost_per_productive if c is not None and c.cost_per_productive is not None \
            else Interval(math.nan, math.nan, math.nan)
        cells += [_number(m.mean, 4), _number(m.half_width, 4)]
    return cells


def table(params: list[Param], results: list[PointResult]) -> str:
    """A fixed-width table (cells joined by a space, as ``simd simulate``'s); with elastic replica groups,
    DEGRADED_TABLE's column after the other shares; with pools, COST_TABLE's columns (and MONEY_TABLE's with a
    price) after TABLE's."""
    widths = [max(len(p.key), *(len(_value(r.point.values[i])) for r in results)) for i, p in enumerate(params)]
    cost, money, degraded = has_cost(results), has_money(results), has_degraded(results)
    strag = [t for t, _ in TABLE].index("strag") + 1
    columns = TABLE[:strag] + (DEGRADED_TABLE if degraded else ()) + TABLE[strag:] \
        + (COST_TABLE if cost else ()) + (MONEY_TABLE if money else ())
    head = [p.key.rjust(w) for p, w in zip(params, widths, strict=True)] + [t.rjust(w) for t, w in columns]
    lines = [" ".join(head)]
    for r in results:
        s = r.stats
        half = "-" if not math.isfinite(s.utilization_half_width) else f"{s.utilization_half_width * 100:.2f}"
        cells = [_value(v).rjust(w) for v, w in zip(r.point.values, widths, strict=True)]
        stats = [f"{s.n}" + ("*" if r.hit_cap else "") + ("!" if s.unfinished else ""), _pct(s.utilization_mean), half,
                 *(_pct(s.shares[b]) for b in ("rollback", "checkpoint", "validation", "restart", "detection",
                                               "straggler")),
                 *([_pct(math.nan if s.degraded_share is None else s.degraded_share)] if degraded else []),
                 f"{s.interruptions_mean:.2f}", f"{s.sdc_detected_mean:.2f}", f"{s.sdc_baked_mean:.2f}"]
        if cost:
            stats += _cost_cells(r, money)
        lines.append(" ".join(cells + [c.rjust(w) for c, (_, w) in zip(stats, columns, strict=True)]))
    return "\n".join(lines)


def optimum_notes(params: list[Param], results: list[PointResult]) -> list[str]:
    """The line under the table that says where utilization is highest and which points the paired interval
    cannot tell from it; none for a single point or when no replica finished."""
    best = utilization_optimum(params, results) if len(results) > 1 else None
    if best is None:
        return []
    at = ", ".join(f"{k}={_value(v)}" for k, v in best["params"].items())
    near = "; ".join(", ".join(f"{k}={_value(v)}" for k, v in p.items()) for p in best["within_noise"])
    half = best["utilization_ci_half_width"]
    return [f"highest util: {at} ({_pct(best['utilization_mean'])} +- "
            f"{'-' if not math.isfinite(half) else f'{half * 100:.2f}'}); "
            + (f"not told apart from it by the paired 95% interval of the difference (same seeds): {near}"
               if near else "every other point is lower by the paired 95% interval of the difference (same seeds)")]


def cost_notes(params: list[Param], results: list[PointResult]) -> list[str]:
    """The lines under the table that say what the cost columns are and where the cost is lowest; none
    without pools."""
    if not has_cost(results):
        return []
    lines = ["wait: mean share of wall time waiting for a server; GPUh/pGPUh: mean GPU-hours held by the job and "
             "its pools (standbys, spares, in repair) per productive GPU-hour, +-ci95 its 95% half-width"
             + ("; price/pGPUh: the same in money (servers.price_per_gpu_hour per GPU-hour held)"
                if has_money(results) else "")]
    best = cost_optimum(params, results)
    if best is not None:
        at = ", ".join(f"{k}={_value(v)}" for k, v in best["params"].items())
        near = "; ".join(", ".join(f"{k}={_value(v)}" for k, v in p.items()) for p in best["within_noise"])
        lines.append(f"lowest GPUh/pGPUh: {at} ({best[f'{RATIO}_mean']:.4f} +- "
                     f"{_number(best[f'{RATIO}_ci_half_width'], 4)}); "
                     + (f"not told apart from it by the paired 95% interval of the difference (same seeds): {near}"
                        if near else "every other point is higher by the paired 95% interval of the difference "
                        "(same seeds)"))
    return lines


TABLE_NOTE = ("util: mean effective utilization; +-ci95: half-width of its 95% confidence interval, percentage "
              "points; rollback .. strag: mean share of wall time; interr, sdc det, baked: mean per job")
DEGRADED_NOTE = ("degraded: mean share of wall time in the degraded bucket (the capacity of the replica groups out "
                 "and the fault-tolerant mode's overhead)")
CAPPED_NOTE = "*: stopped at the replica cap before reaching the target half-width"
UNFINISHED_NOTE = ("!: some of the point's replicas did not finish and are left out of its means (n counts those that "
                   "did; how many did not: the column unfinished of sweep.csv and sweep.json)")
