"""A sweep's results as rows: the CSV and JSON files and the table ``simd sweep`` prints.

One row per grid point: the parameter values (one column per key), the replicas (``n`` finished,
``unfinished``), the mean effective utilization with its 95% confidence interval, the mean share of wall time
of each bucket, the mean interruptions and SDCs per job, and seed 001's first-order efficiency at the point.
Ratios are fractions of 1 (the table shows percent).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from simd.engine import BUCKETS
from simd.offline.sweep.grid import Param
from simd.offline.sweep.run import PointResult, first_order

STAT_COLUMNS = ("n", "unfinished", "utilization_mean", "utilization_ci_low", "utilization_ci_high",
                "utilization_ci_half_width", "utilization_sd", *(f"share_{b}" for b in BUCKETS),
                "interruptions_mean", "sdc_detected_mean", "sdc_baked_mean", "wall_hours_mean",
                "analytic_efficiency", "hit_cap")


def _finite(x):
    """JSON has no NaN or Infinity: an undefined statistic (no finished replica, one replica) is null."""
    return x if not isinstance(x, float) or math.isfinite(x) else None


def row(params: list[Param], r: PointResult) -> dict:
    s = r.stats
    model = first_order(r.point.scenario)
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
        "interruptions_mean": s.interruptions_mean,
        "sdc_detected_mean": s.sdc_detected_mean,
        "sdc_baked_mean": s.sdc_baked_mean,
        "wall_hours_mean": s.wall_hours_mean,
        "analytic_efficiency": None if model is None
        else model.efficiency(r.point.scenario.checkpoint.interval_steps),
        "hit_cap": r.hit_cap,
    }


def write_csv(path: Path, params: list[Param], results: list[PointResult]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=[p.key for p in params] + list(STAT_COLUMNS))
        w.writeheader()
        for r in results:
            w.writerow({k: ("" if v is None else repr(v) if isinstance(v, float) else v)
                        for k, v in row(params, r).items()})


def document(meta: dict, params: list[Param], results: list[PointResult]) -> dict:
    """The JSON file: ``meta`` (scenario, mode, seeds, ...), the params, and one object per point."""
    base = first_order(results[0].point.scenario) if results else None
    points = []
    for r in results:
        d = row(params, r)
        points.append({"params": {p.key: d.pop(p.key) for p in params},
                       **{k: _finite(v) for k, v in d.items()}, "rounds": list(r.rounds)})
    return {
        **meta,
        "confidence": 0.95,
        "params": [{"key": p.key, "kind": p.kind, "values": list(p.values), "log": p.log} for p in params],
        "first_order": None if base is None else {
            "mtbf_seconds": base.mtbf_seconds, "recovery_seconds": base.recovery_seconds,
            "young_interval_steps": base.young_steps, "daly_interval_steps": base.daly_steps},
        "points": points,
    }


def write_json(path: Path, meta: dict, params: list[Param], results: list[PointResult]) -> None:
    Path(path).write_text(json.dumps(document(meta, params, results), indent=1, allow_nan=False) + "\n",
                          encoding="utf-8")


def _value(v) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def _pct(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{x:.1%}"


TABLE = (("n", 6), ("util", 7), ("+-ci95", 7), ("rollback", 8), ("ckpt", 6), ("valid", 6), ("restart", 7),
         ("detect", 6), ("strag", 6), ("interr", 8), ("sdc det", 7), ("baked", 6))


def table(params: list[Param], results: list[PointResult]) -> str:
    """A fixed-width table (cells joined by a space, as ``simd simulate``'s)."""
    widths = [max(len(p.key), *(len(_value(r.point.values[i])) for r in results)) for i, p in enumerate(params)]
    head = [p.key.rjust(w) for p, w in zip(params, widths, strict=True)] + [t.rjust(w) for t, w in TABLE]
    lines = [" ".join(head)]
    for r in results:
        s = r.stats
        half = "-" if not math.isfinite(s.utilization_half_width) else f"{s.utilization_half_width * 100:.2f}"
        cells = [_value(v).rjust(w) for v, w in zip(r.point.values, widths, strict=True)]
        stats = [f"{s.n}" + ("*" if r.hit_cap else ""), _pct(s.utilization_mean), half,
                 *(_pct(s.shares[b]) for b in ("rollback", "checkpoint", "validation", "restart", "detection",
                                               "straggler")),
                 f"{s.interruptions_mean:.2f}", f"{s.sdc_detected_mean:.2f}", f"{s.sdc_baked_mean:.2f}"]
        lines.append(" ".join(cells + [c.rjust(w) for c, (_, w) in zip(stats, TABLE, strict=True)]))
    return "\n".join(lines)


TABLE_NOTE = ("util: mean effective utilization; +-ci95: half-width of its 95% confidence interval, percentage "
              "points; rollback .. strag: mean share of wall time; interr, sdc det, baked: mean per job")
CAPPED_NOTE = "*: stopped at the replica cap before reaching the target half-width"
