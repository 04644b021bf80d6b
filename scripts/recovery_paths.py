"""The recovery paths compared by job size (docs/recovery.md): from a `simd sweep` over `n_gpus` and `recovery`
(the sweep's JSON), what each mechanism adds to the effective utilization of the path it builds on (hot spares to
cold restarts; live migration and in-process restarts to hot spares), against the share of the job's GPUs that the
warm standbys hold (what hot spares and live migration need and cold and in-process restarts do not).

    simd sweep --scenario llama3-16k-migrate --param n_gpus=1024,2048,4096,8192,16384,32768,65536,100000 \\
      --param recovery=llama3-16k-cold,llama3-16k-hot,llama3-16k-migrate,llama3-16k-inprocess \\
      --replicas 100 --out paths/
    python scripts/recovery_paths.py paths/sweep.json docs/img/recovery-paths.png

Elastic replica groups cannot run on that job (its servers: elastic groups beside servers are not modelled), and a
job of n GPUs has n / 128 groups of one model replica each (Llama 3's TP 8 x PP 16; 800 of 125 GPUs at 100,000),
so each size is a sweep of its own, of the elastic scenario's job without pools under hot spares and under elastic
groups, on the same seeds as the sweep above:

    python scripts/recovery_paths.py --elastic-config paths/elastic.yaml
    for n in 1024 2048 4096 8192 16384 32768 65536 100000; do
      simd sweep --config paths/elastic.yaml --scenario elastic-$n --param recovery=hot-$n,elastic-$n \
        --seed-base 10 --replicas 100 --out paths/elastic-$n/
    done
    python scripts/recovery_paths.py paths/sweep.json docs/img/recovery-paths.png --elastic paths/elastic-*/sweep.json

The interval of a gain is the two points' 95% half-widths combined as if independent (sqrt(h1^2 + h2^2)): the
points share their seeds, so the paired interval is narrower; this one is conservative.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import yaml
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from simd.scenario import default_config

# (path, the path it builds on, label)
STEPS = (("llama3-16k-hot", "llama3-16k-cold", "hot spares (a 55 s swap) over cold restarts"),
         ("llama3-16k-migrate", "llama3-16k-hot", "live migration of predicted failures over hot spares"),
         ("llama3-16k-inprocess", "llama3-16k-hot", "in-process restarts (software, hangs) over hot spares"))


SIZES = (1024, 2048, 4096, 8192, 16384, 32768, 65536, 100000)
REPLICA_GPUS = 128  # Llama 3's model replica at 16,384 GPUs: TP 8 x PP 16 (Dubey et al. 2024, table 4)


def groups_at(n: int) -> int:
    """The elastic groups of a job of ``n`` GPUs: one per model replica of 128 GPUs, or where 128 does not divide
    ``n`` the divisor of ``n`` nearest to ``n / 128`` (800 groups of 125 GPUs at 100,000)."""
    if n % REPLICA_GPUS == 0:
        return n // REPLICA_GPUS
    return min((g for g in range(1, n + 1) if n % g == 0), key=lambda g: abs(g - n / REPLICA_GPUS))


def elastic_config(out: Path) -> None:
    """A scenario file with, for each size, ``elastic-N`` (llama3-16k-elastic's job at N GPUs, its groups one per
    model replica, at least half of them running) and ``hot-N`` (its recovery group without elastic groups: hot
    spares, as llama3-16k-hot)."""
    default = yaml.safe_load((Path(__file__).resolve().parents[1] / "simd/scenario/default.yaml").read_text())
    (base,) = [s for s in default["scenarios"] if s["name"] == "llama3-16k-elastic"]
    scenarios = []
    for n in SIZES:
        g = groups_at(n)
        elastic = {**base["recovery"]["elastic"], "groups": g, "min_groups": g // 2}
        scenarios.append({**base, "name": f"elastic-{n}", "n_gpus": n,
                          "recovery": {**base["recovery"], "elastic": elastic}})
        hot = {k: v for k, v in base["recovery"].items() if k != "elastic"}
        scenarios.append({**base, "name": f"hot-{n}", "n_gpus": n, "recovery": hot})
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.dump({"scenarios": scenarios}, Dumper=_Plain, sort_keys=False))


class _Plain(yaml.SafeDumper):
    """YAML without anchors: each scenario spelled out."""

    def ignore_aliases(self, data) -> bool:
        return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweep_json", nargs="?")
    ap.add_argument("png", nargs="?")
    ap.add_argument("--elastic", nargs="*", default=[], help="the elastic sweeps' sweep.json, one per size")
    ap.add_argument("--elastic-config", type=Path, help="write the elastic sweeps' scenario file and stop")
    args = ap.parse_args()
    if args.elastic_config:
        elastic_config(args.elastic_config)
        return
    if not args.sweep_json or not args.png:
        ap.error("the sweep's JSON and the PNG to write are required")
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
    if args.elastic:  # the elastic groups' gain over hot spares on the same job without pools, by size
        el = {}
        for path in args.elastic:
            for p in json.load(open(path))["points"]:
                el[p["params"]["recovery"]] = p
        esizes = sorted(int(k.split("-")[1]) for k in el if k.startswith("elastic-"))
        gain = [100 * (el[f"elastic-{n}"]["utilization_mean"] - el[f"hot-{n}"]["utilization_mean"]) for n in esizes]
        half = [100 * math.hypot(el[f"elastic-{n}"]["utilization_ci_half_width"],
                                 el[f"hot-{n}"]["utilization_ci_half_width"]) for n in esizes]
        label = f"elastic replica groups ({REPLICA_GPUS} GPUs each) over hot spares, no pools"
        ax.errorbar(esizes, gain, yerr=half, marker="s", capsize=3, label=label)
        print(label, " ".join(f"{n}: {g:+.2f} +- {h:.2f}" for n, g, h in zip(esizes, gain, half, strict=True)))
        for n in esizes:
            print(f"  {n}: hot {100 * el[f'hot-{n}']['utilization_mean']:.2f}%, elastic "
                  f"{100 * el[f'elastic-{n}']['utilization_mean']:.2f}%")
    share = [100 * standby_gpus / n for n in sizes]
    ax.plot(sizes, share, "k--", label=f"GPUs the {servers.warm_standbys} warm standbys hold ({standby_gpus}), "
                                       "% of the job's")
    ax.set_xscale("log")
    # logarithmic beyond 0.01 points either way, linear within (elastic groups lose at small sizes)
    ax.set_yscale("symlog", linthresh=0.01, linscale=0.5)
    ax.set_ylim(-2 if args.elastic else 0, 40 if args.elastic else 12)
    ticks = ([-1, -0.1] if args.elastic else []) + [0, 0.01, 0.03, 0.1, 0.3, 1, 3, 10] + ([30] if args.elastic else [])
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
