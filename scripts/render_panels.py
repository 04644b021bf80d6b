"""Draw three panels of the generated dashboard with matplotlib, from what their queries return from a real
Prometheus (the shipped rules loaded) scraping a real ``simd run`` on the default configuration.

    .venv/bin/python scripts/render_panels.py [--out docs/img/dashboard-panels.png] [--seconds 150]

The daemon runs at a high speedup so the sweep accumulates simulated time quickly; halfway through, the
``failure-storm`` drill starts, as in the README's "Rehearse an alert". Then, with the variables at their
defaults:

- the XY chart: every target as an instant query, joined on the scenario, through the panel's own
  transformations (merge, organize, calculateField, sortBy), each series drawn with its field's config
  (scale, min/max, unit, line style, colour) as Grafana resolves it (mixin.dashboard.field_config);
- "Interruptions per simulated hour by cause" and "Goodput and badput by bucket": range queries over the run,
  drawn with the panel's unit, stacking and per-query overrides.

With ``--servers`` (default out docs/img/dashboard-servers.png) it draws the servers row instead, with
the ``spares-taken`` drill started halfway on llama3-16k-servers: the pools, the waiting share,
the servers in repair and the GPU-hours held per productive GPU-hour.

It draws what the JSON says, not what Grafana's renderer would: a check of scales, units and series, not a
pixel-exact screenshot.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import urllib.request
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, PercentFormatter  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "support")]
from promstack import Prometheus, SimdDaemon  # noqa: E402

from mixin import dashboard as generator  # noqa: E402

# 20,000 simulated seconds per wall second: the sweep's 12 replicas per point gather ~5.5 simulated hours
# each per wall second, enough for a readable curve in a couple of wall minutes.
SPEEDUP = 20_000
TOKEN = "render-token"


def substitute(expr: str, d: dict) -> str:
    for v in d["templating"]["list"]:
        expr = expr.replace(f"${v['name']}", v["current"]["value"])
    return expr


def panel(d: dict, title_start: str) -> dict:
    (p,) = [p for p in d["panels"] if p.get("title", "").startswith(title_start)]
    return p


# --- the XY chart: instant table queries through the panel's transformations -----------------------------
def table_rows(prom: Prometheus, p: dict, d: dict) -> list[dict[str, float]]:
    """merge (join on the labels), organize (rename Value #<ref>, drop excluded), calculateField
    (reduceRow), sortBy: the frame Grafana would hand the XY chart, one dict per row."""
    rows: dict[tuple, dict] = defaultdict(dict)
    for t in p["targets"]:
        for s in prom.query(substitute(t["expr"], d)):
            key = tuple(sorted(s["metric"].items()))
            rows[key].update(dict(key))
            rows[key][f"Value #{t['refId']}"] = float(s["value"][1])
    out = list(rows.values())
    for tr in p["transformations"]:
        o = tr["options"]
        if tr["id"] == "organize":
            out = [{o["renameByName"].get(k, k): v for k, v in r.items() if not o["excludeByName"].get(k)}
                   for r in out]
        elif tr["id"] == "calculateField":
            assert o["mode"] == "reduceRow" and o["reduce"]["reducer"] == "max", tr
            for r in out:
                r[o["alias"]] = max(r[f] for f in o["reduce"]["include"])
        elif tr["id"] == "sortBy":
            (sort,) = o["sort"]
            out.sort(key=lambda r: r[sort["field"]], reverse=sort["desc"])
        elif tr["id"] != "merge":
            raise ValueError(f"transformation {tr['id']} not drawn by this script")
    return out


def axis(ax, which: str, cfg: dict) -> None:
    """Scale, limits, unit and label of one axis from a field config."""
    scale = cfg.get("custom", {}).get("scaleDistribution", {"type": "linear"})
    set_scale, set_lim, axis_ = ((ax.set_xscale, ax.set_xlim, ax.xaxis) if which == "x"
                                 else (ax.set_yscale, ax.set_ylim, ax.yaxis))
    if scale["type"] == "log":
        set_scale("log", base=scale["log"])
        axis_.set_major_locator(LogLocator(base=scale["log"]))
        axis_.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    if "min" in cfg or "max" in cfg:
        set_lim(cfg.get("min"), cfg.get("max"))
    if cfg.get("unit") == "percentunit":
        axis_.set_major_formatter(PercentFormatter(1.0))
    label = cfg.get("custom", {}).get("axisLabel")
    (ax.set_xlabel if which == "x" else ax.set_ylabel)(label or "")


def line_kwargs(cfg: dict, color: str | None = None) -> dict:
    custom = cfg.get("custom", {})
    show = custom.get("show", "points")
    style = custom.get("lineStyle", {"fill": "solid"})
    kw = {"linewidth": custom.get("lineWidth", 1) if show != "points" else 0,
          "marker": "o" if "points" in show else None,
          "markersize": custom.get("pointSize", {}).get("fixed", 5) * 0.8,
          "linestyle": (0, tuple(style["dash"])) if style["fill"] == "dash" else "-"}
    if cfg.get("color", {}).get("mode") == "fixed":
        kw["color"] = cfg["color"]["fixedColor"]
    elif color:
        kw["color"] = color
    return kw


def draw_xy(ax, prom: Prometheus, d: dict) -> list[dict]:
    (p,) = [p for p in d["panels"] if p["type"] == "xychart"]
    rows = table_rows(prom, p, d)
    for s in p["options"]["series"]:
        x, y = s["x"]["matcher"]["options"], s["y"]["matcher"]["options"]
        ycfg = generator.field_config(p, y)
        ax.plot([r[x] for r in rows], [r[y] for r in rows], label=s["name"]["fixed"], **line_kwargs(ycfg))
    first = p["options"]["series"][0]
    axis(ax, "x", generator.field_config(p, first["x"]["matcher"]["options"]))
    axis(ax, "y", generator.field_config(p, first["y"]["matcher"]["options"]))
    ax.set_title(substitute(p["title"], d), fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="lower center")
    return rows


# --- time series panels -----------------------------------------------------------------------------------
def legend_name(fmt: str, labels: dict) -> str:
    for k, v in labels.items():
        fmt = fmt.replace("{{" + k + "}}", v)
    return fmt


def draw_timeseries(ax, prom: Prometheus, d: dict, title_start: str, start: float, end: float,
                    events: dict[str, float]) -> dict[str, list[float]]:
    p = panel(d, title_start)
    stacked = p["fieldConfig"]["defaults"].get("custom", {}).get("stacking", {}).get("mode") == "normal"
    seen: dict[str, list[float]] = {}
    below = None
    for t in p["targets"]:
        result = prom.api("query_range", query=substitute(t["expr"], d), start=f"{start:.3f}", end=f"{end:.3f}",
                          step="2")["result"]
        cfg = generator.field_config(p, ref_id=t["refId"])
        for s in sorted(result, key=lambda s: sorted(s["metric"].items())):
            ts = [float(v[0]) - start for v in s["values"]]
            vs = [float(v[1]) for v in s["values"]]
            name = legend_name(t.get("legendFormat", ""), s["metric"])
            seen[name] = vs
            if stacked:
                base = below or {}
                top = [base.get(x, 0.0) + v for x, v in zip(ts, vs, strict=True)]
                ax.fill_between(ts, [base.get(x, 0.0) for x in ts], top, label=name, alpha=0.6)
                below = dict(zip(ts, top, strict=True))
            else:
                kw = line_kwargs(cfg | {"custom": {"show": "lines", **cfg.get("custom", {})}})
                kw["marker"] = None
                ax.plot(ts, vs, label=name, **kw)
    axis(ax, "y", p["fieldConfig"]["defaults"])
    ax.set_xlabel("wall seconds since the daemon started")
    for name, at in events.items():
        ax.axvline(at - start, color="orange", linewidth=1)
        ax.annotate(name, (at - start, 0.98), xycoords=("data", "axes fraction"), fontsize=7, color="orange",
                    ha="left", va="top")
    ax.set_title(substitute(p["title"], d), fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return seen


def start_drill(simd: SimdDaemon, name: str) -> None:
    req = urllib.request.Request(f"{simd.url}/api/v1/drills/{name}", method="POST", data=b"{}",
                                 headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(req, timeout=5) as r:
        r.read()


@contextmanager
def stack_run(seconds: float, drill: str):
    """A real `simd run` (the default configuration at SPEEDUP) scraped by a real Prometheus with the shipped
    rules, ``drill`` started halfway through ``seconds``: yields (prom, start, drill start, end) while both run."""
    rules = [str(p) for p in sorted((ROOT / "prometheus" / "rules").glob("*.yml"))]
    with tempfile.TemporaryDirectory() as tmp:
        token = Path(tmp) / "token"
        token.write_text(TOKEN)
        with SimdDaemon(["--speedup", str(SPEEDUP), "--tick-seconds", "0.5", "--api-token-file", str(token)]) \
                as simd, Prometheus(Path(tmp) / "prom", [simd.target], "1s", rules) as prom:
            start = time.time()
            prom.wait_for("simd_ticks_total > 0")
            time.sleep(seconds / 2)
            started = time.time()
            start_drill(simd, drill)
            time.sleep(seconds / 2)
            yield prom, start, started, time.time()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "dashboard-panels.png")
    ap.add_argument("--seconds", type=float, default=150, help="wall seconds the daemon runs (default 150)")
    ap.add_argument("--servers", action="store_true", help="draw the servers row (spares-taken drill halfway)")
    args = ap.parse_args(argv)
    d = generator.dashboard()
    if args.servers:
        return servers(d, args.out if args.out != ap.get_default("out") else ROOT / "docs" / "img" /
                       "dashboard-servers.png", args.seconds)
    with stack_run(args.seconds, "failure-storm") as (prom, start, storm, end):
        fig, axes = plt.subplots(3, 1, figsize=(10, 13), gridspec_kw={"height_ratios": [1.3, 1, 1]})
        rows = draw_xy(axes[0], prom, d)
        rates = draw_timeseries(axes[1], prom, d, "Interruptions per simulated hour by cause", start, end,
                                {"failure-storm starts": storm})
        draw_timeseries(axes[2], prom, d, "Goodput and badput by bucket", start, end,
                        {"failure-storm starts": storm})
    fig.suptitle(f"simd dashboard panels, from a real Prometheus and `simd run --speedup {SPEEDUP}` "
                 f"({args.seconds:.0f} wall s)", fontsize=11)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=80)
    print(json.dumps({"out": str(args.out), "bytes": args.out.stat().st_size,
                      "sweep_points": [{k: round(v, 4) for k, v in r.items()} for r in rows],
                      "interruption_series": {k: [round(v, 3) for v in vs[-1:]] for k, vs in rates.items()}},
                     indent=1))
    return 0


SERVERS_PANELS = ("Pools by state", "Waiting for servers", "Servers in repair", "GPU-hours held per productive")


def servers(d: dict, out: Path, seconds: float) -> int:
    """The servers row on llama3-16k-servers, the spares-taken drill started halfway."""
    with stack_run(seconds, "spares-taken") as (prom, start, drill, end):
        fig, axes = plt.subplots(len(SERVERS_PANELS), 1, figsize=(10, 16))
        seen = {title: draw_timeseries(ax, prom, d, title, start, end, {"spares-taken starts": drill})
                for ax, title in zip(axes, SERVERS_PANELS, strict=True)}
    fig.suptitle(f"simd dashboard, servers row, from a real Prometheus and `simd run --speedup {SPEEDUP}` "
                 f"({seconds:.0f} wall s)", fontsize=11)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=80)
    print(json.dumps({"out": str(out), "last": {t: {k: round(v[-1], 4) for k, v in s.items() if v}
                                               for t, s in seen.items()}}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
