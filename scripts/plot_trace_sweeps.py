"""docs/img/trace-checkpoint-sweep.png: docs/traces.md's worked example, three `simd sweep --out` directories
(yr-replay, yr-fitted, yr-memoryless: the commands are in docs/traces.md) drawn on one figure.

    .venv/bin/python scripts/plot_trace_sweeps.py OUT.png  (run in the directory holding the three sweeps)
"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

fig, (ax, bx) = plt.subplots(2, 1, figsize=(9, 8), sharex=True, layout="constrained")
styles = {"replay": ("the log replayed (10 replicas)", "tab:red", "-"),
          "fitted": ("the fitted model (40 replicas)", "tab:blue", "--"),
          "memoryless": ("memoryless at the log's mean rate (40 replicas)", "tab:green", ":")}
for name, (label, color, ls) in styles.items():
    d = json.load(open(f"yr-{name}/sweep.json"))
    x = [p["params"]["checkpoint.interval_steps"] for p in d["points"]]
    u = [100 * p["utilization_mean"] for p in d["points"]]
    lo = [100 * p["utilization_ci_low"] for p in d["points"]]
    hi = [100 * p["utilization_ci_high"] for p in d["points"]]
    ax.plot(x, u, ls, color=color, marker="o", ms=4, label=label)
    ax.fill_between(x, lo, hi, color=color, alpha=0.2)
    bx.plot(x, [p["interruptions_mean"] for p in d["points"]], ls, color=color, marker="o", ms=4, label=label)
ax.set_xscale("log")
ax.set_ylabel("effective utilization (%)")
ax.set_ylim(80, 96)
ax.set_title("A year of compute on InfiniteHBD's 400 servers (3,200 GPUs, 60 s steps, 60 s checkpoints):\n"
             "utilization against the checkpoint interval (95% bands)", fontsize=10)
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=8, loc="lower center")
bx.set_xscale("log")
bx.set_xlabel("checkpoint interval (steps of 60 s, log scale)")
bx.set_ylabel("interruptions per job")
bx.grid(True, which="both", alpha=0.3)
bx.legend(fontsize=8)
bx.set_title("Interruptions: the log's 584 faults are 512-540 interruptions (55 share an instant)", fontsize=10)
fig.savefig(sys.argv[1], dpi=85)
