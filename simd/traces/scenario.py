"""A fitted server model written as a scenario file (``simd trace fit --out``), and its goodness of fit.

The scenario: one job (flags or defaults: :class:`Job`) on servers with the fitted failure model, each fitted
value commented with its 95% interval. Mapping (docs/traces.md, "From the fit to the scenario"):

- ``failures.hard_per_gpu_hour``: the fitted rate of independent faults per server-day (1 / the mean lifetime at
  frailty 1) over 24 hours and the GPUs of a server; ``sdc_per_gpu_hour`` 0 (a fault log has no SDC);
- ``failures.causes``: the classes' shares (bursts' faults included), those under 2% as ``other``;
- ``servers.lifetime``: Weibull with the fitted shape when the AIC prefers it; ``servers.rates.gamma_shape``: the
  fitted frailty shape when there is one;
- ``servers.rate_schedule``: the fitted multipliers of the span's pieces (runs of months; a trend's log-linear in
  their index), from each piece's first day (the log's day taken as the job's day of compute; the last piece for
  good), when the fit writes one (its likelihood ratio test against a steady rate: simd.traces.fit.SCHEDULE_LEVEL);
- ``servers.bursts``: the cluster's burst rate scaled to the job's servers (a burst process over the cluster's
  N servers strikes a job of S of them S / N as often: per day of the log, taken as per day of compute) and the
  mean size;
- ``servers.repair.automatic``: the fitted repair-time law (no manual stage: a log does not tell them apart; a
  mixture as ``distribution: mixture`` with a lognormal time per component), with ``warm_standbys`` and ``spares``
  from flags.

A fitted value outside the range the scenario file accepts (``bounds``, which simd.cli.trace reads from the schema:
a frailty shape of 3,000 from three faults, a server failing every second) is written at the range's end, its
comment saying so, so that every file written is one `simd check-config` accepts.

The goodness of fit simulates the fitted model on the log's servers and span (simd.traces.synth) many times and
sets each statistic of the log beside the replicas' mean and their 2.5-97.5% range; each synthetic log within an
event budget (:data:`BUDGET_FACTOR`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from simd.traces.fit import Estimate, Fit
from simd.traces.log import DAY, FaultLog
from simd.traces.stats import Columns, stats
from simd.traces.synth import MAX_FAULTS, OverBudget, columns
from simd.traces.trend import MONTH_DAYS, months


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


# The keys of the written scenario whose values come from the fit (scenario_text's ``bounds``: the schema's range
# of each, as simd.cli.trace reads it from the schema).
FITTED_KEYS = ("failures.hard_per_gpu_hour", "servers.lifetime.shape", "servers.rates.gamma_shape",
               "servers.bursts.per_day", "servers.bursts.mean_size", "servers.repair.automatic.median_seconds",
               "servers.repair.automatic.sigma", "servers.repair.automatic.mean_seconds",
               "servers.repair.automatic.components[].weight",
               "servers.repair.automatic.components[].time.median_seconds",
               "servers.repair.automatic.components[].time.sigma", "servers.rate_schedule[].multiplier")


def scenario_text(f: Fit, job: Job, source: str, bounds: dict[str, tuple[float, float]] | None = None,
                  replay: dict | None = None) -> str:
    """The scenario file (YAML with comments). ``bounds``: the range the schema accepts for each of
    :data:`FITTED_KEYS`; a fitted value outside it is written at the bound, its comment saying so. ``replay``: the
    ``servers.replay`` that replays the log itself (its ``log`` path from the written file's folder, and the
    ``columns``, ``timezone`` and ``time_format`` it was read with), written as a comment to put in place of the
    fitted lifetimes."""
    bounds = bounds or {}

    def value(key: str, x: float, spec: str) -> tuple[str, str]:
        """(x as written, within the key's bounds; a comment when it was clamped)"""
        lo, hi = bounds.get(key, (-math.inf, math.inf))
        y = min(max(x, lo), hi)
        if y == x:
            return format(x, spec), ""
        return format(y, spec), f"the fit's {x:.4g}, clamped to the schema's {'lower' if y == lo else 'upper'} " \
                                f"bound {y:g}"

    def comment(*parts: str) -> str:
        said = "; ".join(p for p in parts if p)
        return f"   # {said}" if said else ""

    g = job.gpus_per_server
    n_gpus = job.n_gpus or f.servers * g
    job_servers = n_gpus // g
    standbys = job.warm_standbys if job.warm_standbys is not None else max(1, round(0.02 * job_servers))
    hard, hard_note = value("failures.hard_per_gpu_hour", f.rate_per_server_day.value / 24.0 / g, ".6g")
    lines = [
        f"# Fitted by `simd trace fit` to {source}: {f.faults} faults on a cluster of {f.servers} servers over "
        f"{f.span_days:.1f} days",
        "# (docs/traces.md: the model, the mapping, what it leaves out). Intervals are 95%" + (
            f"; the regimes joined with the lifetimes': a parametric bootstrap of {f.bootstrap_refits} refits."
            if f.bootstrap_refits else "."),
        "scenarios:",
        f"  - name: {job.name}",
        f"    n_gpus: {n_gpus}",
        f"    step_seconds: {job.step_seconds:g}",
        f"    target_steps: {job.target_steps}",
        "    failures:",
        f"      # independent faults: {f.rate_per_server_day.value:.4g} per server-day at frailty 1 "
        f"({_ci(f.rate_per_server_day)}), over 24 h and {g} GPUs",
        f"      hard_per_gpu_hour: {hard}" + comment(hard_note),
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
        shape, note = value("servers.lifetime.shape", f.lifetime_shape.value, ".4g")
        lines += [f"      # AIC {f.aic['weibull']:.1f} against the exponential's {f.aic['exponential']:.1f}",
                  f"      lifetime: {{distribution: weibull, shape: {shape}}}" + comment(_ci(f.lifetime_shape), note)]
    else:
        lines.append(f"      # exponential lifetimes: AIC {f.aic['exponential']:.1f}, Weibull's {f.aic['weibull']:.1f}")
    if f.regimes:
        (mc, dc), (ms, ds) = f.regimes
        renewal = min((v, k) for k, v in f.aic.items() if not k.endswith("regimes"))
        without = f"relapses' ({renewal[1]})" if renewal[1].endswith(", relapse") else "renewal lifetimes'"
        lines += [f"      # faults clustered in time ({f.regimes_family}): AIC {f.aic[f.regimes_family]:.1f}, the "
                  f"{without} {renewal[0]:.1f}; the stormy regime's rate "
                  f"{f.regime_ratio.value:.4g} times the calm one's ({_ci(f.regime_ratio)})",
                  f"      regimes:   # mean days calm {_ci(dc)}, stormy {_ci(ds)}",
                  f"        calm: {{multiplier: {mc.value:.6g}, mean_days: {dc.value:.6g}}}",
                  f"        stormy: {{multiplier: {ms.value:.6g}, mean_days: {ds.value:.6g}}}"]
    if f.rate_schedule:
        lines += [f"      # the rate over the log's span, {_pieces(f)}: AIC {f.aic[f.schedule_aic]:.1f} against "
                  f"{f.aic[f.lifetime]:.1f} without, likelihood ratio test p = {f.schedule_p:.2g};",
                  "      # each multiplies the servers' rates from its day of compute (the log's day), a time-weighted "
                  "mean of 1",
                  "      # over the log, the last for good",
                  "      rate_schedule:"]
        for day, m in f.rate_schedule:
            x, note = value("servers.rate_schedule[].multiplier", m.value, ".6g")
            lines.append(f"        - {{from_day: {day:.10g}, multiplier: {x}}}" + comment(_ci(m), note))
    if f.gamma_shape is not None:
        a, note = value("servers.rates.gamma_shape", f.gamma_shape.value, ".4g")
        lines += ["      # each server's frailty: gamma of mean 1 (over-dispersed faults per server)",
                  f"      rates: {{gamma_shape: {a}}}" + comment(_ci(f.gamma_shape), note)]
    if f.relapse_probability is not None:
        aic = f.relapse_aic
        p, mu = f.relapse_probability, f.relapse_mean_days
        lines += [f"      # repairs that do not hold{f' (AIC {aic:.1f})' if aic is not None else ''}: a share "
                  f"{p.value:.4g} ({_ci(p)}), then a short lifetime of mean {mu.value:.4g} days ({_ci(mu)})",
                  f"      relapse: {{probability: {f.relapse_probability.value:.6g}, "
                  f"mean_hours: {f.relapse_mean_days.value * 24:.6g}}}"]
    if f.burst_per_day is not None:
        scale = job_servers / f.servers
        per_day, note = value("servers.bursts.per_day", f.burst_per_day.value * scale, ".4g")
        size, size_note = value("servers.bursts.mean_size", max(2.0, f.burst_mean_size.value), ".4g")
        held = (f"{f.bursts} groups within {f.burst_seconds:g} s in the log ({f.burst_per_day.value * f.span_days:.1f} "
                f"bursts, {f.joined_by_chance:.1f} faults joined by chance)" if f.burst_seconds else
                f"{f.bursts} bursts in the log")
        lines += [f"      # {held}: {f.burst_per_day.value:.4g} a day over its {f.servers} "
                  f"servers ({_ci(f.burst_per_day)}), x {job_servers} / {f.servers} for the job's servers",
                  f"      bursts: {{per_day: {per_day}, mean_size: {size}}}"
                  + comment(f"mean size {_ci(f.burst_mean_size)}", note, size_note)]
    lines += [f"      warm_standbys: {standbys}"]
    if job.spares:
        lines.append(f"      spares: {{count: {job.spares}}}")
    if f.repair == "mixture":
        weights = _weights([w.value for w, _, _ in f.repair_mixture],
                           bounds.get("servers.repair.automatic.components[].weight", (0.0, 1.0))[0])
        lines += [f"      # repairs: a mixture of {len(f.repair_mixture)} lognormal kinds (AIC "
                  + ", ".join(f"{k} {v:.1f}" for k, v in f.repair_aic.items()) + "); 95% intervals of the weight, "
                  "median (days) and sigma in each comment",
                  "      repair:",
                  "        automatic:",
                  "          distribution: mixture",
                  "          components:"]
        for wt, (w, m, sg) in zip(weights, f.repair_mixture, strict=True):
            median, note = value("servers.repair.automatic.components[].time.median_seconds", m.value * 86400, ".6g")
            sigma, sigma_note = value("servers.repair.automatic.components[].time.sigma", max(sg.value, 0.0), ".4g")
            lines.append(f"            - {{weight: {wt}, time: {{distribution: lognormal, median_seconds: {median}, "
                         f"sigma: {sigma}}}}}" + comment(f"weight {_ci(w)}; median {m.value:.4g} days, {_ci(m)}; "
                                                          f"sigma {_ci(sg)}", note, sigma_note))
    elif f.repair == "lognormal":
        median, note = value("servers.repair.automatic.median_seconds", f.repair_median_days.value * 86400, ".6g")
        sigma, sigma_note = value("servers.repair.automatic.sigma", max(f.repair_sigma.value, 0.0), ".4g")
        lines += [f"      # repairs: lognormal (AIC {f.repair_aic['lognormal']:.1f}, exponential's "
                  f"{f.repair_aic['exponential']:.1f}); median {_ci(f.repair_median_days)} days, sigma "
                  f"{_ci(f.repair_sigma)}",
                  "      repair:",
                  f"        automatic: {{distribution: lognormal, median_seconds: {median}, sigma: {sigma}}}"
                  + comment(note, sigma_note)]
    else:
        mean, note = value("servers.repair.automatic.mean_seconds", f.repair_mean_days.value * 86400, ".6g")
        lines += [f"      # repairs: exponential, mean {_ci(f.repair_mean_days)} days",
                  "      repair:",
                  f"        automatic: {{distribution: exponential, mean_seconds: {mean}}}" + comment(note)]
    if replay:
        lines += ["      # to replay the log itself instead (docs/traces.md, \"Replay\"): this line in place of "
                  "lifetime, regimes,",
                  "      # rate_schedule, rates and bursts (the log has its own), the log's path from this file's "
                  "folder:",
                  "      # replay: " + flow(replay)]
    return "\n".join(lines) + "\n"


def flow(value) -> str:
    """A value as YAML flow text: a mapping's keys plain (simd's names), its strings double-quoted as JSON (valid
    YAML, any character escaped)."""
    import json

    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {flow(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def _pieces(f: Fit) -> str:
    """The fitted schedule's pieces in words."""
    each = "a month" if f.schedule_months == 1 else f"{f.schedule_months} months"
    trend = (f", a trend: each piece's multiplier {f.schedule_trend.value:.4g} times the one before "
             f"({_ci(f.schedule_trend)})") if f.schedule_trend is not None else ""
    return f"{len(f.rate_schedule)} pieces of {each} (months of 30.44 days, the last cut at the log's end){trend}"


def job_text(job: Job, servers: int) -> str:
    """The scenario file :func:`scenario_text` writes for ``job`` on a cluster of ``servers``, with a model of no
    consequence (one exponential fault a year, exponential repairs): the keys the flags give, checkable before a
    fit."""
    one = Estimate(1.0, 1.0, 1.0)
    placeholder = Fit(servers=servers, span_days=365.0, faults=1, independent_faults=1, lifetime="exponential",
                      lifetime_scale_days=Estimate(365.0, 365.0, 365.0), lifetime_shape=None, gamma_shape=None,
                      rate_per_server_day=Estimate(1 / 365, 1 / 365, 1 / 365),
                      aic={"exponential": 0.0, "weibull": 0.0}, bursts=0, burst_per_day=None,
                      burst_mean_size=None, repair="exponential", repair_median_days=None, repair_sigma=None,
                      repair_mean_days=one, repair_aic={"exponential": 0.0}, causes={"fault": 1.0})
    return scenario_text(placeholder, job, "the flags")


def _weights(weights: list[float], least: float) -> list[str]:
    """A mixture's weights written to 6 decimals, each at least 10^-6 (and above the schema's ``least``), the
    largest taking the rounding so that the written weights sum to 1 (the schema's check, within 10^-6)."""
    out = [max(round(w, 6), 1e-6, least) for w in weights]
    top = max(range(len(out)), key=out.__getitem__)
    out[top] = round(1.0 - math.fsum(out[:top] + out[top + 1:]), 6)
    return [f"{w:.6f}" for w in out]


def _rounded(shares: dict[str, float]) -> dict[str, float]:
    """Shares rounded to 4 places, still summing to 1 (the largest takes the rounding); a share under 0.00005 (one
    fault of over 20,000 in ``other``) is written as 0.0001, a cause's share being > 0."""
    out = {k: max(round(v, 4), 0.0001) for k, v in shares.items()}
    top = max(out, key=out.get)
    out[top] = round(out[top] + 1.0 - sum(out.values()), 4)
    return out


# (the gaps within the burst window, the bursts' definition: the zero gaps at window 0, named so then)
STATISTICS = (("gap CV", lambda s: s.gap_cv), ("burst gaps", lambda s: s.burst_gaps),
              ("burst share", lambda s: s.burst_share), ("faults", lambda s: s.faults),
              ("servers without a fault", lambda s: s.per_server.get(0, 0)),
              ("servers with 6+ faults", lambda s: sum(v for k, v in s.per_server.items() if k >= 6)),
              ("dispersion index", lambda s: s.dispersion_index),
              ("repair median (days)", lambda s: s.repair_days_quantiles["0.5"] if s.repair_days_quantiles else 0.0),
              ("repair mean (days)", lambda s: s.repair_days_mean or 0.0))


# Rates over time (months of simd.traces.trend, as `simd trace stats` prints them; logs of two months or more):
# the months' counts against a constant rate, chi-square over its degrees of freedom (1 for a Poisson process of one
# rate; bursts and frailty raise it a little, a rate that changes over the months much more), and Laplace's
# trend statistic U (0 for a constant rate; > 0: the faults lean late)
TIME_STATISTICS = ("months' dispersion (chi2/df)", "trend U (Laplace)")


def _over_time(c: Columns) -> list[float] | None:
    """:data:`TIME_STATISTICS` of a log (None: shorter than two months, or without a fault)."""
    span = c.span_days
    n = len(c.start)
    if not n or span <= MONTH_DAYS:
        return None
    counts = np.array([m.faults for m in months(c.start / DAY, span, None)], dtype=float)
    days = np.diff(np.minimum(np.arange(len(counts) + 1) * MONTH_DAYS, span))
    expected = n * days / span
    chi2 = float(((counts - expected) ** 2 / expected).sum()) / (len(counts) - 1)
    u = (float((c.start / DAY / span).sum()) - n / 2) / math.sqrt(n / 12)
    return [chi2, u]


# The goodness of fit's event budget: a synthetic log holds at most this many times the log's faults (at least
# MIN_BUDGET, at most synth.MAX_FAULTS), so its time and memory are at most ~that many times the log's own. A fitted
# model that makes faults far beyond its log (a server failing every second, with its zero-length repairs, for a
# month) stops there; the replicas stopped are left out of the model's columns and counted in the output.
BUDGET_FACTOR = 10
MIN_BUDGET = 1000


@dataclass(frozen=True)
class Curve:
    """A curve of the log beside the fitted model's at the same points: the synthetic logs' median and 2.5-97.5%
    range point by point (``simd trace fit --plots``)."""

    x: np.ndarray
    log: np.ndarray
    low: np.ndarray
    median: np.ndarray
    high: np.ndarray


@dataclass(frozen=True)
class Goodness:
    rows: list[tuple[str, float, float, float, float]]  # (statistic, the log's, the model's mean, 2.5%, 97.5%)
    replicas: int
    budget: int  # faults per synthetic log
    stopped: int  # synthetic logs that reached the budget (left out of the rows)
    curves: dict[str, Curve] | None = None  # (goodness(curves=True)) by name: see CURVES
    # with a rate schedule fitted: each row's model mean, 2.5% and 97.5% without it (Fit.without_schedule), the
    # same number of synthetic logs: what the schedule buys
    without_schedule: list[tuple[float, float, float]] | None = None


def budget(faults: int) -> int:
    """A synthetic log's event budget for a log of ``faults`` faults (faults)."""
    return min(MAX_FAULTS, max(MIN_BUDGET, BUDGET_FACTOR * faults))


def _gap_survival(c: Columns, x: np.ndarray) -> np.ndarray:
    """The share of the gaps between consecutive fault starts at least ``x`` days long."""
    gaps = np.sort(np.diff(c.start)) / DAY
    return 1.0 - np.searchsorted(gaps, x, "left") / max(len(gaps), 1)


def _at_least(servers: int):
    def servers_at_least(c: Columns, k: np.ndarray) -> np.ndarray:
        """How many of the cluster's ``servers`` had at least ``k`` faults."""
        counts = np.sort(np.bincount(c.server, minlength=servers))
        return servers - np.searchsorted(counts, k, "left").astype(float)
    return servers_at_least


def _repair_cdf(c: Columns, x: np.ndarray) -> np.ndarray:
    """The share of the closed repairs done within ``x`` days."""
    closed = ~np.isnan(c.end)
    days = np.sort(c.end[closed] - c.start[closed]) / DAY
    return np.searchsorted(days, x, "right") / max(len(days), 1)


def _curves(log: Columns, servers: int) -> dict[str, tuple[np.ndarray, object]]:
    """The curves the PNGs draw, each (its points, the function of a log at them): the gaps' survival function
    (days, 0 to the log's longest gap), the servers with at least k faults (k from 0 to twice the log's most, so
    the model's longer tail shows) and the repair times' distribution (days, log-spaced over the log's positive
    repairs, half the shortest to twice the longest)."""
    out: dict[str, tuple[np.ndarray, object]] = {}
    gaps = np.diff(log.start) / DAY
    if len(gaps) and gaps.max() > 0:
        out["gaps"] = (np.linspace(0.0, gaps.max(), 200), _gap_survival)
    most = int(np.bincount(log.server, minlength=servers).max()) if len(log.server) else 0
    out["per_server"] = (np.arange(2 * most + 2), _at_least(servers))
    closed = ~np.isnan(log.end)
    repairs = (log.end[closed] - log.start[closed]) / DAY
    positive = repairs[repairs > 0]
    if len(positive):
        out["repairs"] = (np.geomspace(positive.min() / 2, positive.max() * 2, 200), _repair_cdf)
    return out


def _tail(c: Columns, seconds: float) -> Columns:
    """The part of a log's columns from ``seconds`` (since its start) to its end, its times from there: the faults
    starting there or later."""
    if not seconds:
        return c
    keep = c.start >= seconds
    return dataclasses.replace(c, server=c.server[keep], start=c.start[keep] - seconds, end=c.end[keep] - seconds,
                               cls=c.cls[keep], level=c.level[keep], span_days=c.span_days - seconds / DAY)


def _compare(model, observed: Columns, servers: int, span_days: float, burst_seconds: float, replicas: int,
             cap: int, rng, after: float = 0.0, drawn: dict | None = None):
    """(the statistics' names, the log's values, the synthetic logs' values (one list each), the logs stopped at the
    budget, the curves' points): ``replicas`` synthetic logs of ``model`` over ``span_days`` on ``servers``, each
    and the log read from ``after`` seconds on (:func:`_tail`); ``drawn``: the curves to evaluate (:func:`_curves`)."""
    seen = _tail(observed, after)
    timed = _over_time(seen) is not None
    names = [name for name, _ in STATISTICS] + (list(TIME_STATISTICS) if timed else [])

    def read_all(c: Columns) -> list[float]:
        s = stats(c, servers, burst_seconds)
        return [float(read(s) or 0.0) for _, read in STATISTICS] + ((_over_time(c) or [0.0, 0.0]) if timed else [])

    values, stopped = [], 0
    points: dict[str, list[np.ndarray]] = {name: [] for name in drawn or {}}
    for _ in range(replicas):
        try:
            synthetic = _tail(columns(model, servers, span_days, rng, cap), after)
        except OverBudget:
            stopped += 1
            continue
        values.append(read_all(synthetic))  # the numbers only: a log's memory goes
        for name, (x, curve) in (drawn or {}).items():
            points[name].append(curve(synthetic, x))
    return names, read_all(seen), values, stopped, points


def _summary(values: list[list[float]]) -> list[tuple[float, float, float]]:
    table = np.array(values, dtype=float)
    return [(float(v.mean()), float(np.quantile(v, 0.025)), float(np.quantile(v, 0.975))) for v in table.T]


def _named(name: str, burst_seconds: float) -> str:
    if name == "burst gaps":
        return "zero gaps" if burst_seconds == 0 else f"gaps <= {burst_seconds:g} s"
    return name


def goodness(f: Fit, log: FaultLog, replicas: int, seed: int = 0, curves: bool = False) -> Goodness:
    """Each statistic of the log beside the fitted model's mean, 2.5% and 97.5% over ``replicas`` synthetic logs
    (those within the event budget); with ``curves``, the log's curves beside the model's (:class:`Curve`)."""
    observed_columns = Columns.of(log)
    cap = budget(len(log.faults))
    drawn = _curves(observed_columns, f.servers) if curves else {}
    names, observed, values, stopped, points = _compare(f.model(), observed_columns, f.servers, f.span_days,
                                                        f.burst_seconds, replicas, cap, np.random.default_rng(seed),
                                                        drawn=drawn)
    rows = [(_named(name, f.burst_seconds), obs, mean, lo, hi)
            for name, obs, (mean, lo, hi) in zip(names, observed, _summary(values), strict=True)] if values else []
    without = None
    if f.rate_schedule and values:
        _, _, plain, _, _ = _compare(f.without_schedule().model(), observed_columns, f.servers, f.span_days,
                                     f.burst_seconds, replicas, cap, np.random.default_rng(seed + 1))
        without = _summary(plain) if plain else None
    out = None
    if curves and values:
        out = {}
        for name, (x, curve) in drawn.items():
            low, median, high = np.quantile(np.array(points[name]), (0.025, 0.5, 0.975), axis=0)
            out[name] = Curve(x, curve(observed_columns, x), low, median, high)
    return Goodness(rows, replicas, cap, stopped, out, without)


def check(model, log: FaultLog, servers: int, replicas: int, after: float = 0.0, burst_seconds: float = 0.0,
          seed: int = 0) -> Goodness:
    """The goodness of fit of any server model (:func:`model_of` a scenario's) against the part of ``log`` from
    ``after`` seconds on: ``replicas`` synthetic logs over the log's whole span (the servers new at its start, the
    schedule's days its days), each read from ``after`` on as the log is (``simd trace check``)."""
    cap = budget(len(log.faults))
    names, observed, values, stopped, _ = _compare(model, Columns.of(log), servers, log.span_days, burst_seconds,
                                                   replicas, cap, np.random.default_rng(seed), after)
    rows = [(_named(name, burst_seconds), obs, mean, lo, hi)
            for name, obs, (mean, lo, hi) in zip(names, observed, _summary(values), strict=True)] if values else []
    return Goodness(rows, replicas, cap, stopped)


def model_of(scenario, servers: int):
    """The server model of a scenario (simd.traces.synth's Model) on a cluster of ``servers`` servers, the inverse
    of :func:`scenario_text`'s mapping: the rate per server-day from failures.hard_per_gpu_hour (a server's GPUs,
    24 h), the Weibull scale of that mean, the frailty, regimes and schedule as they are, the job's bursts per
    day scaled to the cluster, the automatic repair, the causes' shares (ValueError, one line: what a synthetic log
    does not simulate)."""
    from simd.traces.synth import Model

    s = scenario.servers
    n_gpus = scenario.n_gpus
    if scenario.fleet is not None:  # (GPU types of their own rates: no servers' model to compare)
        raise ValueError(f"scenario {scenario.name}: fleet: not in the model a synthetic log simulates (the one simd "
                         "trace fit writes)")
    g = s.gpus_per_server if s is not None else 8
    rate = scenario.failures.hard_per_gpu_hour * g * 24.0  # per server-day
    if rate <= 0:
        raise ValueError("failures.hard_per_gpu_hour is 0: the scenario's servers never fail")
    if s is not None:
        unsupported = [k for k in ("replay", "lemons", "diagnosis", "retirement") if getattr(s, k) is not None]
        unsupported += ["lifetime lognormal"] if s.lifetime.distribution == "lognormal" else []
        if s.bursts is not None and s.bursts.domain_servers is not None:
            unsupported.append("bursts.domain_servers")
        rep = s.repair
        if rep is not None:
            unsupported += [f"repair.{k}" for k in ("manual", "false_success") if getattr(rep, k) is not None]
            times = [c.time for c in rep.automatic.components] if rep.automatic.distribution == "mixture" else \
                [rep.automatic]
            unsupported += ["a uniform repair"] if any(t.distribution == "uniform" for t in times) else []
            if len(times) > 1 and any(t.distribution != "lognormal" for t in times):
                unsupported.append("a mixture's component other than lognormal")
        if unsupported:
            raise ValueError(f"scenario {scenario.name}: servers.{', '.join(unsupported)}: not in the model a "
                             "synthetic log simulates (the one simd trace fit writes)")
    k = s.lifetime.shape if s is not None and s.lifetime.distribution == "weibull" else 1.0
    keys: dict = {"lifetime_scale_days": 1.0 / (rate * math.gamma(1.0 + 1.0 / k)), "lifetime_shape": k,
                  "repair": "exponential", "repair_mean_days": 0.0}  # (without pools a server is back at once)
    if s is not None:
        if s.rates is not None:
            keys["gamma_shape"] = s.rates.gamma_shape
        if s.bursts is not None:
            keys["burst_per_day"] = s.bursts.per_day * servers / (n_gpus // g)
            keys["burst_mean_size"] = s.bursts.mean_size or 2.0
        if s.regimes is not None:
            keys["regimes"] = ((s.regimes.calm.multiplier, s.regimes.calm.mean_days),
                               (s.regimes.stormy.multiplier, s.regimes.stormy.mean_days))
        if s.rate_schedule:
            keys["rate_schedule"] = tuple((p.from_day, p.multiplier) for p in s.rate_schedule)
        a = s.repair.automatic if s.repair is not None else None
        if a is not None and a.distribution == "mixture":
            keys.update(repair="mixture", repair_mixture=tuple(
                (c.weight, c.time.median_seconds / DAY, c.time.sigma) for c in a.components))
        elif a is not None and a.distribution == "lognormal":
            keys.update(repair="lognormal", repair_median_days=a.median_seconds / DAY, repair_sigma=a.sigma)
        elif a is not None:
            keys.update(repair="exponential", repair_mean_days=a.mean_seconds / DAY)
    keys["classes"] = scenario.failures.cause_shares() or {"fault": 1.0}
    return Model(**keys)


def budget_note(g: Goodness) -> str | None:
    """One line when synthetic logs reached the budget."""
    if not g.stopped:
        return None
    rest = f"the model's columns are of the other {g.replicas - g.stopped}" if g.rows else "no model column is left"
    return (f"{g.stopped} of {g.replicas} synthetic logs reached the budget of {g.budget} faults ({BUDGET_FACTOR} "
            f"times the log's, at least {MIN_BUDGET}) and were stopped: the fitted model makes far more faults than "
            f"the log; {rest}")


def goodness_table(rows, without: list[tuple[float, float, float]] | None = None,
                   label: str = "without the schedule") -> str:
    """The rows as text; ``without`` (Goodness.without_schedule): a column of the model's range without its rate
    schedule beside (``label``: its heading)."""
    out = [f"{'statistic':29s} {'log':>10s} {'model mean':>11s} {'model 95% range':>22s}  inside"
           + (f"  {label:>22s}  inside" if without else "")]
    for i, (name, obs, mean, lo, hi) in enumerate(rows):
        inside = "yes" if lo <= obs <= hi else "NO"
        line = f"{name:29s} {obs:10.4g} {mean:11.4g} {lo:10.4g} .. {hi:<10.4g}  {inside}"
        if without:
            _, wlo, whi = without[i]
            line += f"    {wlo:10.4g} .. {whi:<10.4g}  {'yes' if wlo <= obs <= whi else 'NO'}"
        out.append(line.rstrip())
    return "\n".join(out)
