"""The fit's recovery from the engine's own model, measured (docs/traces.md, "The fit on logs of known
parameters"): logs the engine itself makes (tests/support/engine_logs.py: a scenario of known parameters written
by the fit's own writer, run by simd.engine, each server's faults read from its state) fitted back by
simd.traces.fit, each parameter's 95% interval counted when it holds the truth, per family:

- regimes: the time-clustering mechanism (x0.5 for 20 days, x3.5 for 4 days), exponential lifetimes of 150 days,
  300 servers over 350 days of compute: the mean rate, the stormy over calm ratio and both mean durations;
- schedule: a rate schedule by three months (x0.5, x1.8, x0.8, x1.0) on Weibull 0.8 lifetimes (scale 120 days),
  a gamma frailty of shape 2 and bursts (0.05 a day, mean size 3), 200 servers over 350 days: the scale, shape,
  frailty, burst rate and each piece's multiplier (the truth's normalised as the fit's, to a time-weighted mean of
  1 over the span);
- trend: a rate schedule by month log-linear in the month (x1.083 a month, x2.4 over the year) on the schedule's
  lifetimes, frailty and bursts: the trend's factor a month, the scale, shape, frailty and burst rate;
- mixture: repairs of three lognormal kinds (weights 0.3, 0.5, 0.2, medians 0.02, 1 and 20 days, sigmas 0.8,
  0.7, 0.6; exponential lifetimes of 150 days) on a job of 300 servers with 300 warm standbys (the job never waits
  for a repair): each component's weight, median and sigma (the lifetimes of that log are not counted: a standby
  does not age, a log's server does);
- weibull: Weibull 0.6 lifetimes (scale 60 days), a gamma frailty of shape 1.5, bursts (0.05 a day, mean size 3),
  200 servers over 200 days (tests/traces/statistical/test_model_is_simulated.py's model): scale, shape, frailty,
  burst rate and mean size;
- joint: the regimes joined with Weibull lifetimes and a frailty (simd.traces.joint): Weibull 0.7 (scale 150
  days at the stationary mean), frailty 1.5, a storm 8 times the calm rate (calm 5 days, stormy 0.3 days), 300
  servers over 350 days: scale, shape, frailty, ratio and both mean durations;
- relapse: repairs that do not hold (servers.relapse; simd.traces.relapse, `trace fit --relapse`): the weibull
  family's lifetimes, frailty and bursts, 10% of the repairs not holding with a short lifetime of 0.05 days (1.2
  h): scale, shape, frailty, the probability and the short mean;
- relapse_regimes: both at once (simd.traces.joint.RelapseJoint, `trace fit --relapse --joint-regimes`): the
  relapse family's model without its bursts, with the joint family's regimes (x8, calm 5 days, stormy 0.3 days),
  200 servers over 200 days: scale, shape, frailty, the probability, the short mean, the ratio and both durations.

With it, per family, the share of logs that chose the family (the regimes by AIC; a schedule whose pieces hold
the truth's, by three months or by month; the trend; the mixture of 3 by AIC) and each interval's median width
(high over low). A true 95% coverage over LOGS logs falls within 95% +- 1.96 sqrt(0.95 * 0.05 / LOGS) but for 5% of
the time (+- 3.0% at 200 logs).

With ``--source synth`` the same fits of simd.traces.synth's logs of the same model (without pools, repairs of
1e-9 days: the engine's failed server is back at once; with them, the job's servers: as many repairs as the
engine's job makes): the two makers' coverage side by side.

    python scripts/engine_recovery.py [--logs 200] [--families regimes,schedule,trend,mixture,weibull,joint] [--seed 34]
        [--source engine|synth] [--part K/N] [--each]  (relapse, relapse_regimes: `--families relapse`, not among the
        default families)
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent.parent / "tests")]

from support.engine_logs import Unreadable, engine_log, spec_of  # noqa: E402

from simd.traces.fit import fit, schedule_edges  # noqa: E402
from simd.traces.synth import Model, generate  # noqa: E402

EDGES = schedule_edges(350.0, 3)
RAW = np.array([0.5, 1.8, 0.8, 1.0])
MEAN = float(np.diff(EDGES) @ RAW) / 350.0
MONTHS = schedule_edges(350.0, 1)
GROWTH = 0.08  # the trend's log multiplier a month
TREND = np.exp(GROWTH * np.arange(len(MONTHS) - 1))
TREND_MEAN = float(np.diff(MONTHS) @ TREND) / 350.0
# the joint family's regimes: a storm 8 times the calm rate, calm 5 days, stormy 0.3 days, normalised to a
# stationary mean of 1 (the fit's written multipliers)
JOINT_MEAN = (5.0 + 8.0 * 0.3) / 5.3
JOINT_REGIMES = ((1.0 / JOINT_MEAN, 5.0), (8.0 / JOINT_MEAN, 0.3))
FAMILIES = {
    "regimes": (Model(lifetime_scale_days=150.0, repair="exponential", repair_mean_days=2.0,
                      regimes=((0.5, 20.0), (3.5, 4.0))), 300, 350.0, False),
    "schedule": (Model(lifetime_scale_days=120.0, lifetime_shape=0.8, gamma_shape=2.0, repair="exponential",
                       repair_mean_days=2.0, burst_per_day=0.05, burst_mean_size=3.0,
                       rate_schedule=tuple(zip(EDGES[:-1].tolist(), RAW.tolist(), strict=True))), 200, 350.0, False),
    "trend": (Model(lifetime_scale_days=120.0, lifetime_shape=0.8, gamma_shape=2.0, repair="exponential",
                    repair_mean_days=2.0, burst_per_day=0.05, burst_mean_size=3.0,
                    rate_schedule=tuple(zip(MONTHS[:-1].tolist(), TREND.tolist(), strict=True))), 200, 350.0, False),
    "mixture": (Model(lifetime_scale_days=150.0, repair="mixture",
                      repair_mixture=((0.3, 0.02, 0.8), (0.5, 1.0, 0.7), (0.2, 20.0, 0.6))), 300, 350.0, True),
    "weibull": (Model(lifetime_scale_days=60.0, lifetime_shape=0.6, gamma_shape=1.5, repair="exponential",
                      repair_mean_days=1e-9, burst_per_day=0.05, burst_mean_size=3.0), 200, 200.0, False),
    "joint": (Model(lifetime_scale_days=150.0, lifetime_shape=0.7, gamma_shape=1.5, repair="exponential",
                    repair_mean_days=1e-9, regimes=JOINT_REGIMES), 300, 350.0, False),
}
RELAPSE = ("relapse", (replace(FAMILIES["weibull"][0], relapse_probability=0.1, relapse_mean_days=0.05), 200, 200.0,
                       False))
# both at once: the relapse family's model (without its bursts) with the joint family's regimes
RELAPSE_REGIMES = ("relapse_regimes", (replace(RELAPSE[1][0], burst_per_day=0.0, regimes=JOINT_REGIMES), 200, 200.0,
                                       False))


def truths_and_estimates(family: str, m: Model, f) -> tuple[bool, dict[str, tuple[float, object]]]:
    """(whether the fit chose the family, {parameter: (truth, its Estimate or None)})."""
    out: dict[str, tuple[float, object]] = {}
    if family == "joint":
        chosen = f.regimes is not None and f.regimes_family != "regimes"
        (mc, dc), (ms, ds) = m.regimes
        if chosen:
            (_, calm), (_, stormy) = f.regimes
            out = {"scale": (m.lifetime_scale_days, f.lifetime_scale_days), "shape": (m.lifetime_shape,
                                                                                   f.lifetime_shape),
                   "gamma": (m.gamma_shape, f.gamma_shape), "ratio": (ms / mc, f.regime_ratio),
                   "calm_days": (dc, calm), "stormy_days": (ds, stormy)}
        return chosen, out
    if family == "relapse_regimes":
        chosen = f.relapse_probability is not None and f.regimes is not None and ", relapse," in f.regimes_family
        (mc, dc), (ms, ds) = m.regimes
        if chosen:
            (_, calm), (_, stormy) = f.regimes
            out = {"scale": (m.lifetime_scale_days, f.lifetime_scale_days),
                   "shape": (m.lifetime_shape, f.lifetime_shape), "gamma": (m.gamma_shape, f.gamma_shape),
                   "p": (m.relapse_probability, f.relapse_probability),
                   "mu": (m.relapse_mean_days, f.relapse_mean_days),
                   "ratio": (ms / mc, f.regime_ratio), "calm_days": (dc, calm), "stormy_days": (ds, stormy)}
        return chosen, out
    if family == "relapse":
        chosen = f.relapse_probability is not None
        out = {"scale": (m.lifetime_scale_days, f.lifetime_scale_days), "shape": (m.lifetime_shape, f.lifetime_shape),
               "gamma": (m.gamma_shape, f.gamma_shape), "p": (m.relapse_probability, f.relapse_probability),
               "mu": (m.relapse_mean_days, f.relapse_mean_days)}
        return chosen, out
    if family == "regimes":
        chosen = f.regimes is not None
        (mc, dc), (ms, ds) = m.regimes
        if chosen:
            (_, calm), (_, stormy) = f.regimes
            out = {"rate": (1 / m.lifetime_scale_days, f.rate_per_server_day), "ratio": (ms / mc, f.regime_ratio),
                   "calm_days": (dc, calm), "stormy_days": (ds, stormy)}
        return chosen, out
    if family == "mixture":
        chosen = f.repair == "mixture" and len(f.repair_mixture) == len(m.repair_mixture)
        if chosen:
            for j, (fitted, true) in enumerate(zip(f.repair_mixture, m.repair_mixture, strict=True)):
                for name, est, value in zip(("weight", "median", "sigma"), fitted, true, strict=True):
                    out[f"{name}_{j}"] = (value, est)
        return chosen, out
    scale = m.lifetime_scale_days / {"schedule": MEAN, "trend": TREND_MEAN}.get(family, 1.0)
    out = {"scale": (scale, f.lifetime_scale_days), "shape": (m.lifetime_shape, f.lifetime_shape),
           "gamma": (m.gamma_shape, f.gamma_shape), "burst_rate": (m.burst_per_day, f.burst_per_day)}
    if family == "weibull":
        out["burst_size"] = (m.burst_mean_size, f.burst_mean_size)
        return f.lifetime == "weibull", out
    if family == "trend":
        chosen = f.schedule_trend is not None
        if chosen:
            out["factor"] = (math.exp(GROWTH), f.schedule_trend)
        return chosen, out
    chosen = f.schedule_months in (1, 3) and f.schedule_trend is None
    if chosen:
        starts = {round(day, 6): est for day, est in f.rate_schedule}
        for piece, day in enumerate(EDGES[:-1]):
            out[f"multiplier_{piece}"] = (float(RAW[piece]) / MEAN, starts[round(float(day), 6)])
    return chosen, out


def part(text: str) -> tuple[int, int]:
    """``--part K/N`` (an argparse type, the recovery scripts' alike): this process fits the logs i with
    i % N == K (K from 0 to N - 1), N processes side by side."""
    try:
        k, n = (int(v) for v in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"K/N expected (two integers), got {text!r}") from None
    if not 0 <= k < n:
        raise argparse.ArgumentTypeError(f"K/N with 0 <= K < N expected (the parts are 0 to N - 1), got {text!r}")
    return k, n


def run(family: str, logs: int, seed: int, source: str, parts: tuple[int, int] = (0, 1),
        each: bool = False) -> None:
    m, servers, span, pools = {**FAMILIES, RELAPSE[0]: RELAPSE[1], RELAPSE_REGIMES[0]: RELAPSE_REGIMES[1]}[family]
    spec = spec_of(m, servers, span, pools)
    rng = np.random.default_rng(seed)
    # synth's logs of the same model: without pools the engine's failed server is back at once
    same = m if pools else replace(m, repair="exponential", repair_mean_days=1e-9)
    hits: dict[str, int] = {}
    widths: dict[str, list[float]] = {}
    chosen = faults = skipped = 0
    t0 = time.time()
    for i in range(logs):
        if i % parts[1] != parts[0]:  # (another process's share: the log drawn all the same, the draws in order)
            if source == "engine":
                try:
                    engine_log(spec, span, seed * 100_000 + i, rng)
                except Unreadable:
                    engine_log(spec, span, seed * 100_000 + logs + skipped, rng)
                    skipped += 1
            else:
                generate(same, servers, span, rng)
            continue
        try:
            log = engine_log(spec, span, seed * 100_000 + i, rng) if source == "engine" else (
                generate(same, servers, span, rng))
        except Unreadable:  # (engine_logs.Unreadable: the next seed stands in for it)
            log = engine_log(spec, span, seed * 100_000 + logs + skipped, rng)
            skipped += 1
        faults += len(log.faults)
        f = fit(log, len(log.servers)) if family in ("schedule", "trend") else fit(
            log, len(log.servers), schedules=(), joint_regimes=family in ("joint", "relapse_regimes"),
            relapse=family in ("relapse", "relapse_regimes"))
        ok, est = truths_and_estimates(family, m, f)
        chosen += ok
        if each:  # (a line a log: its parameters covered, 1 or 0)
            print(f"  log {i}: " + " ".join(f"{k} {int(e is not None and e.low <= t <= e.high)}"
                                            for k, (t, e) in est.items()), flush=True)
        for k, (true, e) in est.items():
            hits[k] = hits.get(k, 0) + (e is not None and e.low <= true <= e.high)
            widths.setdefault(k, []).append(e.high / e.low if e is not None and e.low > 0 else math.inf)
    fitted = len(range(parts[0], logs, parts[1]))
    print(f"{family}: {fitted} of {logs} {source} logs of {servers} servers over {span:g} days, "
          f"{faults / fitted:.0f} faults a log; the family chosen on {chosen}; {time.time() - t0:.0f} s"
          + (f"; {skipped} unreadable logs replaced by the next seeds'" if skipped else ""))
    for k in hits:
        print(f"  {k:<14} covered {hits[k]:>4} of {fitted} ({hits[k] / fitted:.1%}), interval's median width "
              f"{np.median(widths[k]):.3g}x")
    sys.stdout.flush()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", type=int, default=200)
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--seed", type=int, default=34)
    ap.add_argument("--source", choices=("engine", "synth"), default="engine",
                    help="the logs' maker: the engine, or simd.traces.synth (the same model, for comparison)")
    ap.add_argument("--part", type=part, default=(0, 1), help="K/N: fit only the logs i with i %% N == K (N "
                    "processes side by side; every log is still drawn, in order)")
    ap.add_argument("--each", action="store_true", help="a line a log as it is fitted")
    a = ap.parse_args()
    for family in a.families.split(","):
        run(family, a.logs, a.seed, a.source, a.part, a.each)


if __name__ == "__main__":
    main()
