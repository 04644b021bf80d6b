"""``simd trace fit``: the server model fitted to a fault log by maximum likelihood (scipy.stats and
scipy.optimize), each parameter with a 95% interval (docs/traces.md, "The fit").

The model (simd.traces.synth generates it):

- **bursts**: faults whose starts are at most ``burst_seconds`` apart (default 0: the same instant), two or more,
  are one burst; bursts are a Poisson process over the cluster (rate: count / span, exact Poisson interval) and
  a burst's size is 2 + a geometric count (its mean is the MLE; Wald interval);
- **independent faults** (the others): each server an alternating renewal process, up for a lifetime, down for
  its repair; a lifetime is Weibull (shape k, scale theta) with the server's frailty w ~ Gamma(a, 1/a)
  multiplying its cumulative hazard, so a server's likelihood integrates over w in closed form:
  ``prod_j f0(x_j) * Gamma(a + n) / Gamma(a) * a**a / (a + H)**(a + n)`` with ``H`` the server's summed baseline
  cumulative hazard over its up intervals (the last one censored at the log's end; an interval cut by a burst
  censored there too) and ``n`` its independent faults. Exponential lifetimes are k = 1 (then the counts are
  negative binomial); Weibull is kept when it lowers the AIC. Every server starts new at the log's start (as the
  engine's). Intervals: Wald on the logarithms of the parameters, from a finite-difference Hessian of the
  negative log-likelihood at the optimum (scipy.optimize.approx_fprime of its gradient);
- **repairs**: lognormal (median, sigma: closed-form MLE, intervals from the t and chi-square laws), exponential
  (mean; chi-square interval) or a mixture of 2 or 3 lognormal kinds of repair (simd.traces.mixture: EM, each
  component's weight, median and sigma with Wald intervals), the lowest AIC; zero-length repairs are left out of
  the lognormal and the mixtures (and of the exponential when there are some: every law on the same repairs);
- **causes**: the classes' shares of all faults; those under 2% go to ``other``.

The engine puts a server's gamma multiplier on its rate; the fit puts it on the cumulative hazard (what makes the
likelihood closed-form). The two are the same for exponential lifetimes; for Weibull k the engine's multiplier
is the fit's to the power 1/k, so a fitted scenario with Weibull lifetimes and gamma rates approximates the fitted
model (its ``gamma_shape`` is a's, documented as such).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, special, stats

from simd.traces import mixture
from simd.traces.log import DAY, MAX_DAYS, FaultLog
from simd.traces.stats import bursts
from simd.traces.synth import Model

Z = stats.norm.ppf(0.975)
# The spans a fit takes (docs/traces.md, "The fit"): at least a second (a log whose events are all at one
# instant has no time to fit a rate over) and at most the parser's range of times, a century (every log it reads;
# the bound keeps every time, rate and scale the fit and its synthetic logs compute far from a float's range: a
# scale of span x servers x e^10 days stays below 1e15).
MIN_SPAN_SECONDS = 1.0
MAX_SPAN_DAYS = MAX_DAYS
GAMMA_SHAPE_MAX = 1e4  # a above this: no over-dispersion the log can tell from none (reported as None)
OTHER_SHARE = 0.02
MIXTURE_COMPONENTS = (2, 3)  # the repair mixtures tried (a reboot, a part swap, a vendor's replacement)


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.value:.4g} (95%: {self.low:.4g} .. {self.high:.4g})"


@dataclass(frozen=True)
class Fit:
    servers: int
    span_days: float
    faults: int
    independent_faults: int
    lifetime: str  # "exponential" or "weibull"
    lifetime_scale_days: Estimate  # theta
    lifetime_shape: Estimate | None  # k (None: exponential)
    gamma_shape: Estimate | None  # a (None: no over-dispersion found)
    rate_per_server_day: Estimate  # 1 / (theta Gamma(1 + 1/k)): a server's independent faults per up-day (w = 1)
    aic: dict[str, float]
    bursts: int
    burst_per_day: Estimate | None  # over the cluster
    burst_mean_size: Estimate | None
    repair: str  # "lognormal", "exponential" or "mixture"
    repair_median_days: Estimate | None
    repair_sigma: Estimate | None
    repair_mean_days: Estimate
    repair_aic: dict[str, float]
    causes: dict[str, float] = field(default_factory=dict)
    burst_seconds: float = 0.0
    # repair "mixture": per lognormal component (weight, median days, sigma), by median
    repair_mixture: tuple[tuple[Estimate, Estimate, Estimate], ...] = ()

    def model(self) -> Model:
        """The fitted model at its estimates (simd.traces.synth)."""
        return Model(
            lifetime_scale_days=self.lifetime_scale_days.value,
            lifetime_shape=self.lifetime_shape.value if self.lifetime_shape else 1.0,
            gamma_shape=self.gamma_shape.value if self.gamma_shape else float("inf"),
            repair=self.repair,
            repair_median_days=self.repair_median_days.value if self.repair_median_days else 1.0,
            repair_sigma=self.repair_sigma.value if self.repair_sigma else 1.0,
            repair_mean_days=self.repair_mean_days.value,
            repair_mixture=tuple((w.value, m.value, sg.value) for w, m, sg in self.repair_mixture),
            burst_per_day=self.burst_per_day.value if self.burst_per_day else 0.0,
            burst_mean_size=self.burst_mean_size.value if self.burst_mean_size else 2.0,
            classes=dict(self.causes) or {"fault": 1.0})


def fit(log: FaultLog, servers: int, burst_seconds: float = 0.0) -> Fit:
    """The model fitted to ``log`` on a cluster of ``servers`` servers."""
    if servers < len(log.servers):
        raise ValueError(f"--servers {servers} is fewer than the {len(log.servers)} servers the log names")
    if not log.faults:
        raise ValueError("the log has no fault to fit")
    span = log.span_days
    if log.span_seconds == 0:
        raise ValueError("every event of the log is at time 0: a fit needs faults spread over time (a span of at "
                         f"least {MIN_SPAN_SECONDS:g} second)")
    if not MIN_SPAN_SECONDS <= log.span_seconds <= MAX_SPAN_DAYS * DAY:
        raise ValueError(f"the log spans {span:.4g} days: a fit takes a span from {MIN_SPAN_SECONDS:g} second to "
                         f"{MAX_SPAN_DAYS:g} days")
    starts = np.array([f.start for f in log.faults]) / DAY
    in_burst, sizes = bursts(starts, burst_seconds / DAY)
    n_b = len(sizes)
    burst_rate = burst_size = None
    if n_b:
        lo = stats.chi2.ppf(0.025, 2 * n_b) / 2 / span
        hi = stats.chi2.ppf(0.975, 2 * n_b + 2) / 2 / span
        burst_rate = Estimate(n_b / span, lo, hi)
        m = float(np.mean(sizes))
        se = math.sqrt(max((m - 2.0) * (m - 1.0), 0.0) / n_b)
        burst_size = Estimate(m, max(2.0, m - Z * se), m + Z * se)
    life = _lifetimes(log, servers, in_burst)
    repairs = np.array([f.repair_seconds / DAY for f in log.faults if f.end is not None])
    rep = _repairs(repairs)
    return Fit(servers=servers, span_days=span, faults=len(log.faults),
               independent_faults=int(len(log.faults) - in_burst.sum()), **life, bursts=n_b,
               burst_per_day=burst_rate, burst_mean_size=burst_size, **rep, causes=_causes(log),
               burst_seconds=burst_seconds)


def _intervals(log: FaultLog, servers: int, in_burst: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per server: its up intervals (days) that ended in an independent fault, and those censored (cut by a
    burst, or by the log's end)."""
    per: list[list[tuple[float, float, bool]]] = [[] for _ in range(servers)]
    for f, b in zip(log.faults, in_burst, strict=True):
        per[f.server].append((f.start / DAY, (f.end / DAY) if f.end is not None else math.inf, bool(b)))
    span = log.span_days
    out = []
    for faults in per:
        done, cut, up = [], [], 0.0
        for start, end, burst in faults:  # by start; overlapping faults: the server is down until the last end
            if start >= up:
                (cut if burst else done).append(start - up)
            up = max(up, end)
        if up < span:
            cut.append(span - up)
        out.append((np.array(done), np.array(cut)))
    return out


def _lifetimes(log: FaultLog, servers: int, in_burst: np.ndarray) -> dict:
    per = _intervals(log, servers, in_burst)
    n = np.array([len(d) for d, _ in per], dtype=float)
    done = np.concatenate([d for d, _ in per]) if per else np.zeros(0)
    positive = done[done > 0]
    log_done_sum = np.log(positive).sum()  # (zero-length intervals: ties; their density term is left out)
    every = np.concatenate([np.concatenate([d, c]) for d, c in per])  # every up interval, and its server
    owner = np.concatenate([np.full(len(d) + len(c), i) for i, (d, c) in enumerate(per)])

    def nll(params: np.ndarray, weibull: bool) -> float:
        theta = math.exp(params[0])
        k = math.exp(params[1]) if weibull else 1.0
        a = math.exp(params[-1])
        h = np.bincount(owner, weights=(every / theta) ** k, minlength=servers)
        try:
            log_density = math.log(k / theta ** k)
        except (ZeroDivisionError, OverflowError):  # theta ** k past a float (up times of 1e-70 s): in log space
            log_density = math.log(k) - k * math.log(theta)
        ll = len(positive) * log_density + (k - 1.0) * log_done_sum
        ll += (special.gammaln(a + n) - special.gammaln(a) + a * math.log(a) - (a + n) * np.log(a + h)).sum()
        return -ll

    total_up = sum(d.sum() + c.sum() for d, c in per)
    if not total_up > 0:
        raise ValueError("the servers are never up in the log (each in repair from time 0 to the log's end): no "
                         "lifetime to fit")
    theta0 = total_up / max(n.sum(), 1.0)
    results = {}
    for name, weibull in (("exponential", False), ("weibull", True)):
        x0 = np.array([math.log(theta0), 0.0, 0.0] if weibull else [math.log(theta0), 0.0])
        bounds = [(math.log(theta0) - 10, math.log(theta0) + 10)] + ([(-3.0, 3.0)] if weibull else []) + \
            [(-8.0, math.log(GAMMA_SHAPE_MAX))]
        r = optimize.minimize(nll, x0, args=(weibull,), method="L-BFGS-B", bounds=bounds)
        results[name] = (r.x, r.fun, weibull)
    aic = {name: 2 * fun + 2 * len(x) for name, (x, fun, _) in results.items()}
    best = min(aic, key=aic.get)
    x, _, weibull = results[best]
    se = _wald(lambda p: nll(p, weibull), x)
    theta = _est(x[0], se[0])
    k = _est(x[1], se[1]) if weibull else None
    at_bound = x[-1] >= math.log(GAMMA_SHAPE_MAX) - 1e-6
    a = None if at_bound else _est(x[-1], se[-1])
    kk = k.value if k else 1.0
    g = math.gamma(1.0 + 1.0 / kk)
    # the rate's interval from theta's (k's uncertainty apart: a small part when k is near 1)
    rate = Estimate(1.0 / (theta.value * g), 1.0 / (theta.high * g),
                    1.0 / (theta.low * g) if theta.low > 0 else math.inf)
    return dict(lifetime=best, lifetime_scale_days=theta, lifetime_shape=k, gamma_shape=a,
                rate_per_server_day=rate, aic=aic)


def _wald(f, x: np.ndarray) -> np.ndarray:
    """Standard errors from the inverse of a finite-difference Hessian of ``f`` at ``x`` (nan where singular)."""
    eps = 1e-4
    grad = lambda p: optimize.approx_fprime(p, f, eps)  # noqa: E731
    hess = np.array([optimize.approx_fprime(x, lambda p, i=i: grad(p)[i], eps) for i in range(len(x))])
    hess = (hess + hess.T) / 2
    try:
        cov = np.linalg.inv(hess)
    except np.linalg.LinAlgError:
        return np.full(len(x), np.nan)
    return np.sqrt(np.clip(np.diag(cov), 0, None))


def _est(log_value: float, se: float) -> Estimate:
    se = se if math.isfinite(se) else math.inf
    return Estimate(math.exp(log_value), math.exp(log_value - Z * se), math.exp(min(log_value + Z * se, 700)))


def _repairs(days: np.ndarray) -> dict:
    n = len(days)
    mean = float(days.mean()) if n else 0.0
    exp_ci = Estimate(mean, 2 * n * mean / stats.chi2.ppf(0.975, 2 * n), 2 * n * mean / stats.chi2.ppf(0.025, 2 * n)) \
        if n else Estimate(0.0, 0.0, 0.0)
    aic = {"exponential": 2 * (n * math.log(mean) + n) + 2 if n and mean > 0 else math.inf}
    positive = np.log(days[days > 0])
    m = len(positive)
    median = sigma = None
    if m >= 2 and positive.std() > 0:  # (repairs all of one length: no lognormal's likelihood is finite)
        mu, s = float(positive.mean()), float(positive.std())  # MLE (ddof 0)
        tq = stats.t.ppf(0.975, m - 1) * positive.std(ddof=1) / math.sqrt(m)
        # (the interval's end capped as _est's: repairs from a subnormal to a second have a tq past a float's range)
        median = Estimate(math.exp(mu), math.exp(mu - tq), math.exp(min(mu + tq, 700)))
        sigma = Estimate(s, math.sqrt(m * s * s / stats.chi2.ppf(0.975, m - 1)),
                         math.sqrt(m * s * s / stats.chi2.ppf(0.025, m - 1)))
        # lognormal log-likelihood of the positive repairs (the zero ones cannot be lognormal: left out of both)
        aic["lognormal"] = 2 * (m * math.log(s * math.sqrt(2 * math.pi)) + positive.sum() + m / 2) + 4
        if m < n:  # compare on the same repairs
            p_days = days[days > 0]
            aic["exponential"] = 2 * (m * math.log(p_days.mean()) + m) + 2
    mixtures = {}
    if median is not None:  # (a lognormal to compare with: some repairs of different lengths)
        for k in MIXTURE_COMPONENTS:
            got = mixture.fit(days, k)
            if got is not None:
                mixtures[k] = got
                aic[f"mixture of {k}"] = got.aic
    best = min(aic, key=aic.get)
    components = ()
    if best.startswith("mixture"):
        got = mixtures[int(best.rsplit(" ", 1)[1])]
        components = tuple((Estimate(w.value, w.low, w.high), Estimate(m.value, m.low, m.high),
                            Estimate(sg.value, sg.low, sg.high))
                           for w, m, sg in zip(got.weights, got.medians, got.sigmas, strict=True))
        best = "mixture"
    return dict(repair=best, repair_median_days=median, repair_sigma=sigma, repair_mean_days=exp_ci,
                repair_aic=aic, repair_mixture=components)


def _causes(log: FaultLog) -> dict[str, float]:
    counts: dict[str, int] = {}
    for f in log.faults:
        name = re.sub(r"[^a-z0-9]+", "_", f.cls.lower()).strip("_")[:32] or "unknown"
        counts[name] = counts.get(name, 0) + 1
    n = sum(counts.values())
    out, other = {}, 0
    for name, c in sorted(counts.items(), key=lambda kv: -kv[1]):
        if c / n < OTHER_SHARE or name == "other":
            other += c
        else:
            out[name] = c
    if other:
        out["other"] = other
    return {k: v / n for k, v in out.items()}
