"""A fitted server model written as a scenario file (``simd trace fit --out``), and its goodness of fit.

The scenario: one job (flags or defaults: :class:`Job`) on servers with the fitted failure model, each fitted
value commented with its 95% interval. Mapping (docs/traces.md, "From the fit to the scenario"):

- ``failures.hard_per_gpu_hour``: the fitted rate of independent faults per server-day (1 / the mean lifetime at
  frailty 1) over 24 hours and the GPUs of a server; ``sdc_per_gpu_hour`` 0 (a fault log has no SDC);
- ``failures.causes``: the classes' shares (bursts' faults included), those under 2% as ``other``;
- ``servers.lifetime``: Weibull with the fitted shape when the AIC prefers it; ``servers.rates.gamma_shape``: the
  fitted frailty shape when there is one;
- ``servers.bursts``: the cluster's burst rate scaled to the job's servers (a burst process over the cluster's
  N servers strikes a job of S of them S / N as often: per day of the log, taken as per day of compute) and the
  mean size;
- ``servers.repair.automatic``: the fitted repair-time law (no manual stage: a log does not tell them apart), with
  ``warm_standbys`` and ``spares`` from flags.

The goodness of fit simulates the fitted model on the log's servers and span (simd.traces.synth) many times and
sets each statistic of the log beside the replicas' mean and their 2.5-97.5% range.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simd.traces.fit import Fit
from simd.traces.log import FaultLog
from simd.traces.stats import stats
from simd.traces.synth import generate


@dataclass(frozen=True)
class Job:
    """The job of the written scenario."""

    name: str = "fitted"
    gpus_per_server: int = 8
    n_gpus: int | None = None  # default: the log's cluster, every server
    step_seconds: float = 60.0
    target_steps: int = 10_000
    checkpoint_steps: int = 100
    checkpoint_seconds: float = 60.0
    restart_seconds: float = 600.0
    warm_standbys: int | None = None  # default: 2% of the job's servers, at least 1
    spares: int = 0


def _ci(e) -> str:
    return f"95%: {e.low:.4g} .. {e.high:.4g}"


def scenario_text(f: Fit, job: Job, source: str) -> str:
    """The scenario file (YAML with comments)."""
    g = job.gpus_per_server
    n_gpus = job.n_gpus or f.servers * g
    job_servers = n_gpus // g
    standbys = job.warm_standbys if job.warm_standbys is not None else max(1, round(0.02 * job_servers))
    hard = f.rate_per_server_day.value / 24.0 / g
    lines = [
        f"# Fitted by `simd trace fit` to {source}: {f.faults} faults on a cluster of {f.servers} servers over "
        f"{f.span_days:.1f} days",
        "# (docs/traces.md: the model, the mapping, what it leaves out). Intervals are 95%.",
        "scenarios:",
        f"  - name: {job.name}",
        f"    n_gpus: {n_gpus}",
        f"    step_seconds: {job.step_seconds:g}",
        f"    target_steps: {job.target_steps}",
        "    failures:",
        f"      # independent faults: {f.rate_per_server_day.value:.4g} per server-day at frailty 1 "
        f"({_ci(f.rate_per_server_day)}), over 24 h and {g} GPUs",
        f"      hard_per_gpu_hour: {hard:.6g}",
        "      sdc_per_gpu_hour: 0.0   # a fault log has no silent data corruption",
        "      # the classes' shares of the log's faults (under 2%: other)",
        "      causes: {" + ", ".join(f"{k}: {v:.4f}" for k, v in _rounded(f.causes).items()) + "}",
        f"    checkpoint: {{interval_steps: {job.checkpoint_steps}, seconds: {job.checkpoint_seconds:g}}}",
        "    validation: {interval_steps: 0, seconds: 0}",
        f"    restart_seconds: {job.restart_seconds:g}",
        "    servers:",
        f"      gpus_per_server: {g}",
    ]
    if f.lifetime == "weibull":
        lines += [f"      # AIC {f.aic['weibull']:.1f} against the exponential's {f.aic['exponential']:.1f}",
                  f"      lifetime: {{distribution: weibull, shape: {_clip(f.lifetime_shape.value, 0.1, 10):.4g}}}"
                  f"   # {_ci(f.lifetime_shape)}"]
    else:
        lines.append(f"      # exponential lifetimes: AIC {f.aic['exponential']:.1f}, Weibull's {f.aic['weibull']:.1f}")
    if f.gamma_shape is not None:
        lines += ["      # each server's frailty: gamma of mean 1 (over-dispersed faults per server)",
                  f"      rates: {{gamma_shape: {_clip(f.gamma_shape.value, 0.05, 1e4):.4g}}}   # {_ci(f.gamma_shape)}"]
    if f.burst_per_day is not None:
        scale = job_servers / f.servers
        lines += [f"      # {f.bursts} bursts in the log: {f.burst_per_day.value:.4g} a day over its {f.servers} "
                  f"servers ({_ci(f.burst_per_day)}), x {job_servers} / {f.servers} for the job's servers",
                  f"      bursts: {{per_day: {f.burst_per_day.value * scale:.4g}, mean_size: "
                  f"{max(2.0, f.burst_mean_size.value):.4g}}}   # mean size {_ci(f.burst_mean_size)}"]
    lines += [f"      warm_standbys: {standbys}"]
    if job.spares:
        lines.append(f"      spares: {{count: {job.spares}}}")
    if f.repair == "lognormal":
        lines += [f"      # repairs: lognormal (AIC {f.repair_aic['lognormal']:.1f}, exponential's "
                  f"{f.repair_aic['exponential']:.1f}); median {_ci(f.repair_median_days)} days, sigma "
                  f"{_ci(f.repair_sigma)}",
                  "      repair:",
                  f"        automatic: {{distribution: lognormal, median_seconds: "
                  f"{f.repair_median_days.value * 86400:.6g}, sigma: {_clip(f.repair_sigma.value, 0, 10):.4g}}}"]
    else:
        lines += [f"      # repairs: exponential, mean {_ci(f.repair_mean_days)} days",
                  "      repair:",
                  f"        automatic: {{distribution: exponential, mean_seconds: "
                  f"{f.repair_mean_days.value * 86400:.6g}}}"]
    return "\n".join(lines) + "\n"


def _clip(x: float, lo: float, hi: float) -> float:
    return min(max(x, lo), hi)


def _rounded(shares: dict[str, float]) -> dict[str, float]:
    """Shares rounded to 4 places, still summing to 1 (the largest takes the rounding)."""
    out = {k: round(v, 4) for k, v in shares.items()}
    top = max(out, key=out.get)
    out[top] = round(out[top] + 1.0 - sum(out.values()), 4)
    return out


STATISTICS = (("gap CV", lambda s: s.gap_cv), ("zero gaps", lambda s: s.zero_gaps),
              ("burst share", lambda s: s.burst_share), ("faults", lambda s: s.faults),
              ("servers without a fault", lambda s: s.per_server.get(0, 0)),
              ("servers with 6+ faults", lambda s: sum(v for k, v in s.per_server.items() if k >= 6)),
              ("dispersion index", lambda s: s.dispersion_index),
              ("repair median (days)", lambda s: s.repair_days_quantiles["0.5"] if s.repair_days_quantiles else 0.0),
              ("repair mean (days)", lambda s: s.repair_days_mean or 0.0))


def goodness(f: Fit, log: FaultLog, replicas: int, seed: int = 0) -> list[tuple[str, float, float, float, float]]:
    """(statistic, the log's, the fitted model's mean, 2.5%, 97.5%) over ``replicas`` synthetic logs."""
    observed = stats(log, f.servers, f.burst_seconds)
    rng = np.random.default_rng(seed)
    model = f.model()
    sims = [stats(generate(model, f.servers, f.span_days, rng), f.servers, f.burst_seconds) for _ in range(replicas)]
    rows = []
    for name, read in STATISTICS:
        values = np.array([read(s) or 0.0 for s in sims], dtype=float)
        rows.append((name, float(read(observed) or 0.0), float(values.mean()), float(np.quantile(values, 0.025)),
                     float(np.quantile(values, 0.975))))
    return rows


def goodness_table(rows) -> str:
    out = [f"{'statistic':26s} {'log':>10s} {'model mean':>11s} {'model 95% range':>22s}  inside"]
    for name, obs, mean, lo, hi in rows:
        inside = "yes" if lo <= obs <= hi else "NO"
        out.append(f"{name:26s} {obs:10.4g} {mean:11.4g} {lo:10.4g} .. {hi:<10.4g}  {inside}")
    return "\n".join(out)
