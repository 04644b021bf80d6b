"""The recovery paths compared by job size (docs/recovery.md): from a `simd sweep` over `n_gpus` and `recovery`
(the sweep's JSON), what each mechanism adds to the effective utilization of the path it builds on (hot spares to
cold restarts; live migration and in-process restarts to hot spares), against the share of the job's GPUs that the
warm standbys hold (what hot spares and live migration need and cold and in-process restarts do not).

    simd sweep --scenario llama3-16k-migrate --param n_gpus=1024,2048,4096,8192,16384,32768,65536,100000 \\
      --param recovery=llama3-16k-cold,llama3-16k-hot,llama3-16k-migrate,llama3-16k-inprocess \\
      --replicas 100 --out paths/
    python scripts/recovery_paths.py paths/sweep.json docs/img/recovery-paths.png

The interval of a gain is the two points' 95% half-widths combined as if independent (sqrt(h1^2 + h2^2)): the
points share their seeds, so the paired interval is narrower; this one is conservative.
"""

from __future__ import annotations

import argparse
import json
import math

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from simd.scenario import default_config

# (path, the path it builds on, label)
STEPS = (("llama3-16k-hot", "llama3-16k-cold", "hot spares (a 55 s swap) over cold restarts"),
         ("llama3-16k-migrate", "llama3-16k-hot", "live migration of predicted failures over hot spares"),
         ("llama3-16k-inprocess", "llama3-16k-hot", "in-process restarts (software, hangs) over hot spares"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweep_json")
    ap.add_argument("png")
    args = ap.parse_args()
    doc = json.load(open(args.sweep_json))
    points = {(p["params"]["n_gpus"], p["params"]["recovery"]): p for p in doc["points"]}
    sizes = sorted({n for n, _ in points})
    servers = default_config().scenario(doc["scenario"]).servers
    standby_gpus = servers.warm_standbys * servers.gpus_per_server
    fig = Figure(figsize=(9, 6.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for path, under, label in STEPS:
        gain = [100 * (points[n, path]["utilization_mean"] - points[n, under]["utilization_mean"]) for n in sizes]
        half = [100 * math.hypot(points[n, path]["utilization_ci_half_width"],
                                 points[n, under]["utilization_ci_half_width"]) for n in sizes]
        ax.errorbar(sizes, gain, yerr=half, marker="o", capsize=3, label=label)
        print(label, " ".join(f"{n}: {g:+.2f} +- {h:.2f}" for n, g, h in zip(sizes, gain, half, strict=True)))
    share = [100 * standby_gpus / n for n in sizes]
    ax.plot(sizes, share, "k--", label=f"GPUs the {servers.warm_standbys} warm standbys hold ({standby_gpus}), "
                                       "% of the job's")
    ax.set_xscale("log")
    ax.set_yscale("log")  # a gain below 0.005 points (or an interval reaching below it) is cut at the bottom
    ax.set_ylim(0.005, 12)
    ticks = [0.01, 0.03, 0.1, 0.3, 1, 3, 10]
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_xticks(sizes, [f"{n:,}" for n in sizes], rotation=30)
    ax.grid(True, which="major", alpha=0.3)
    ax.set_xlabel("job size (GPUs)")
    ax.set_ylabel("effective utilization gained (percentage points; GPUs held: % of the job's)")
    ax.set_title(f"{doc['scenario']}'s job by recovery path: {doc.get('replicas', '?')} replicas per point, "
                 "95% intervals", fontsize="medium")
    fig.legend(loc="outside lower center", fontsize="small", ncols=2)
    fig.savefig(args.png, dpi=100)


if __name__ == "__main__":
    main()
