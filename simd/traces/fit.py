"""``simd trace fit``: the server model fitted to a fault log by maximum likelihood (scipy.optimize; the
quantiles from scipy.special), each parameter with a 95% interval (docs/traces.md, "The fit").

The model (simd.traces.synth generates it):

- **bursts**: faults whose starts are at most ``burst_seconds`` apart (default 0: the same instant), two or more,
  are one burst (simd.traces.stats.bursts, the one definition); bursts are a Poisson process over the cluster
  (rate: count / span, exact Poisson interval) and a burst's size is 2 + a geometric count (its mean is the MLE;
  Wald interval); with a window, the groups it makes by chance are taken out (:func:`_chance_joins`);
- **independent faults** (the others): each server an alternating renewal process, up for a lifetime, down for
  its repair; a lifetime is Weibull (shape k, scale theta) divided by the server's frailty w ~ Gamma(a, 1/a) (mean
  1): scale ``theta / w``, the engine's model (simd.engine.servers: a server's gamma multiplies its rate, its
  lifetime's scale divides by it), so the server's cumulative hazard is ``w**k`` times the baseline's. A server's
  likelihood integrates over w: ``prod_j h0(x_j) * E[w**(k n) exp(-w**k H)]`` with ``h0`` the baseline hazard,
  ``H`` the server's summed baseline cumulative hazard over its up intervals (the last one censored at the log's
  end; an interval cut by a burst censored there too) and ``n`` its independent faults; the expectation is
  :func:`log_frailty` (closed form for k = 1: ``Gamma(a + n) / Gamma(a) * a**a / (a + H)**(a + n)``, counts
  negative binomial; Gauss-Legendre quadrature otherwise). Exponential lifetimes are k = 1; Weibull is kept when
  it lowers the AIC. Every server starts new at the log's start (as the engine's). The likelihood's gradient is
  analytic (:func:`likelihood`: L-BFGS-B's jac); intervals: Wald on the logarithms of the parameters, from the
  central differences of that gradient at the optimum (the Hessian);
- **repairs**: lognormal (median, sigma: closed-form MLE, intervals from the t and chi-square laws), exponential
  (mean; chi-square interval) or a mixture of 2 or 3 lognormal kinds of repair (simd.traces.mixture: EM, each
  component's weight, median and sigma with Wald intervals), the lowest AIC; zero-length repairs are left out of
  the lognormal and the mixtures (and of the exponential when there are some: every law on the same repairs);
- **causes**: the classes' shares of all faults; those under 2% go to ``other``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, special

from simd.traces import mixture, regimes
from simd.traces.log import DAY, MAX_DAYS, FaultLog
from simd.traces.stats import bursts
from simd.traces.synth import Model

Z = special.ndtri(0.975)  # the normal's 97.5% quantile


# The quantiles as scipy.stats computes them (its chi2 and t distributions' ppf), from scipy.special: importing
# scipy.stats costs a fresh `simd trace fit` process a third of a second, more than the fit of most logs
def _chi2_ppf(q: float, df: float) -> float:
    return 2.0 * special.gammaincinv(df / 2.0, q)


def _t_ppf(q: float, df: float) -> float:
    return special.stdtrit(df, q)

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
    joined_by_chance: float = 0.0  # with a burst window: the independent faults its groups hold (_chance_joins)
    # repair "mixture": per lognormal component (weight, median days, sigma), by median
    repair_mixture: tuple[tuple[Estimate, Estimate, Estimate], ...] = ()
    # faults clustered in time (simd.traces.regimes), when their AIC is the lowest: the calm and stormy regimes'
    # multipliers (a stationary mean of 1) and mean durations in days; lifetimes then exponential, no frailty
    regimes: tuple[tuple[Estimate, Estimate], tuple[Estimate, Estimate]] | None = None
    regime_ratio: Estimate | None = None  # the stormy regime's rate over the calm one's (their intervals' source)

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
            classes=dict(self.causes) or {"fault": 1.0},
            regimes=tuple((m.value, d.value) for m, d in self.regimes) if self.regimes else ())


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
    chance = _chance_joins(len(starts), len(sizes), int(in_burst.sum()), burst_seconds / DAY, span)
    n_b, m, joined = chance
    burst_rate = burst_size = None
    if n_b > 0:
        # the exact Poisson interval of the groups counted, scaled to the bursts they hold (the same at window 0)
        scale = n_b / len(sizes)
        lo = _chi2_ppf(0.025, 2 * len(sizes)) / 2 / span * scale
        hi = _chi2_ppf(0.975, 2 * len(sizes) + 2) / 2 / span * scale
        burst_rate = Estimate(n_b / span, lo, hi)
        se = math.sqrt(max((m - 2.0) * (m - 1.0), 0.0) / n_b)
        burst_size = Estimate(m, max(2.0, m - Z * se), m + Z * se)
    # a fault in a group is independent with the share the chance joins take of the groups' faults (0 at window 0)
    grouped = int(in_burst.sum())
    weight = np.where(in_burst, joined / grouped if grouped else 0.0, 1.0)
    life = _lifetimes(log, servers, weight)
    life.update(_regimes(log, servers, weight, life))
    repairs = np.array([f.repair_seconds / DAY for f in log.faults if f.end is not None])
    rep = _repairs(repairs)
    return Fit(servers=servers, span_days=span, faults=len(log.faults),
               independent_faults=int(len(log.faults) - in_burst.sum()), **life, bursts=len(sizes),
               burst_per_day=burst_rate, burst_mean_size=burst_size, **rep, causes=_causes(log),
               burst_seconds=burst_seconds, joined_by_chance=joined)


def _chance_joins(faults: int, groups: int, grouped: int, window: float, span: float) -> tuple[float, float, float]:
    """The bursts behind the groups a burst window makes: (bursts, their mean size, independent faults the groups
    hold). With a window w > 0, independent faults and bursts (events, E of them over the span) also join a group
    by chance when one starts within w of the one before: with events a Poisson process, each gap between events
    is within w with probability p = 1 - exp(-E w / span). Then the runs of faults (the groups, and the faults in
    none) number E (1 - p) + p, an independent fault stays alone with probability (1 - p)**2, and the bursts are
    the events that are not independent faults; solved for E, the rest follows. At w = 0, p = 0: the groups are
    the bursts, their mean size the mean size, no independent fault in a group."""
    alone = faults - grouped
    runs = alone + groups
    if window <= 0 or groups == 0:
        return float(groups), grouped / groups if groups else 2.0, 0.0

    def p_of(e: float) -> float:
        return -math.expm1(-e * window / span)

    def excess(e: float) -> float:
        return e * (1 - p_of(e)) + p_of(e) - runs

    if runs >= faults or excess(faults + 1.0) <= 0:
        # (no group, or a window so long against the span that chance alone chains more than the log's groups:
        # no burst can be told from chance, every fault is independent)
        return 0.0, 2.0, float(grouped)
    events = optimize.brentq(excess, runs, faults + 1.0)
    p = p_of(events)
    independent = min(alone / (1 - p) ** 2, float(faults))
    n_b = max(events - independent, 0.0)
    if n_b < 1e-9:
        return 0.0, 2.0, float(grouped)
    return n_b, max(2.0, (faults - independent) / n_b), max(independent - alone, 0.0)


def _intervals(log: FaultLog, servers: int, weight: np.ndarray) -> list[tuple[np.ndarray, np.ndarray,
                                                                             np.ndarray]]:
    """Per server: its up intervals (days) that ended in a fault, each with the weight of its fault being
    independent (1; a fault in a burst group: its chance of being an independent fault joined by chance, 0 at
    window 0), and those censored by the log's end."""
    per: list[list[tuple[float, float, float]]] = [[] for _ in range(servers)]
    for f, w in zip(log.faults, weight.tolist(), strict=True):
        per[f.server].append((f.start / DAY, (f.end / DAY) if f.end is not None else math.inf, w))
    span = log.span_days
    out = []
    for faults in per:
        ended, weights, cut, up = [], [], [], 0.0
        for start, end, w in faults:  # by start; overlapping faults: the server is down until the last end
            if start >= up:
                ended.append(start - up)
                weights.append(w)
            up = max(up, end)
        if up < span:
            cut.append(span - up)
        out.append((np.array(ended), np.array(weights), np.array(cut)))
    return out


def likelihood(per: list[tuple[np.ndarray, np.ndarray, np.ndarray]], servers: int):
    """The lifetimes' negative log-likelihood ``nll(params, weibull, grad=False)`` over the servers' up intervals
    ``per`` (:func:`_intervals`): params are log theta, log k (Weibull only) and log a; with ``grad`` it returns
    the value and its gradient (tests/traces/test_fit_model.py checks it against finite differences)."""
    n = np.array([w.sum() for _, w, _ in per], dtype=float)
    ended = np.concatenate([d for d, _, _ in per]) if per else np.zeros(0)
    weights = np.concatenate([w for _, w, _ in per]) if per else np.zeros(0)
    positive = (ended > 0) & (weights > 0)
    counted = weights[positive].sum()  # (zero-length intervals: ties; their density term is left out)
    log_done_sum = (weights[positive] * np.log(ended[positive])).sum()
    every = np.concatenate([np.concatenate([d, c]) for d, _, c in per])  # every up interval, and its server
    owner = np.concatenate([np.full(len(d) + len(c), i) for i, (d, _, c) in enumerate(per)])

    # log of every up interval (zero-length ones: -inf, their terms of the shape's derivative left out: 0 log 0 = 0)
    with np.errstate(divide="ignore"):
        log_every = np.log(every)
    positive_every = every > 0

    def nll(params: np.ndarray, weibull: bool, grad: bool = False):
        """The negative log-likelihood at ``params`` (log theta, log k if Weibull, log a); with ``grad``, also its
        gradient: through each server's cumulative hazard h (dh/dlog theta = -k h, dh/dlog k = k sum z log z
        with z = x / theta the interval in the scale's units), the density terms, and :func:`log_frailty`'s
        partial derivatives."""
        theta = math.exp(params[0])
        k = math.exp(params[1]) if weibull else 1.0
        a = math.exp(params[-1])
        z = (every / theta) ** k
        h = np.bincount(owner, weights=z, minlength=servers)
        try:
            log_density = math.log(k / theta ** k)
        except (ZeroDivisionError, OverflowError):  # theta ** k past a float (up times of 1e-70 s): in log space
            log_density = math.log(k) - k * math.log(theta)
        ll = counted * log_density + (k - 1.0) * log_done_sum
        if not grad:
            return -(ll + log_frailty(n, h, a, k).sum())
        lf, dh, dk, da = log_frailty(n, h, a, k, grad=True)
        g = [-counted * k - k * float(dh @ h)]
        if weibull:
            with np.errstate(invalid="ignore"):
                zlog = np.where(positive_every, z * (log_every - params[0]), 0.0)
            q = np.bincount(owner, weights=zlog, minlength=servers)
            g.append(counted * (1.0 - k * params[0]) + k * log_done_sum + k * float(dk.sum() + dh @ q))
        g.append(a * float(da.sum()))
        return -(ll + lf.sum()), -np.array(g)

    return nll


def _lifetimes(log: FaultLog, servers: int, weight: np.ndarray) -> dict:
    per = _intervals(log, servers, weight)
    n = np.array([w.sum() for _, w, _ in per], dtype=float)
    nll = likelihood(per, servers)
    total_up = sum(d.sum() + c.sum() for d, _, c in per)
    if not total_up > 0:
        raise ValueError("the servers are never up in the log (each in repair from time 0 to the log's end): no "
                         "lifetime to fit")
    theta0 = total_up / max(n.sum(), 1.0)
    results = {}
    for name, weibull in (("exponential", False), ("weibull", True)):
        x0 = np.array([math.log(theta0), 0.0, 0.0] if weibull else [math.log(theta0), 0.0])
        bounds = [(math.log(theta0) - 10, math.log(theta0) + 10)] + ([(-3.0, 3.0)] if weibull else []) + \
            [(-8.0, math.log(GAMMA_SHAPE_MAX))]
        r = optimize.minimize(nll, x0, args=(weibull, True), jac=True, method="L-BFGS-B", bounds=bounds)
        results[name] = (r.x, r.fun, weibull)
    aic = {name: 2 * fun + 2 * len(x) for name, (x, fun, _) in results.items()}
    best = min(aic, key=aic.get)
    x, _, weibull = results[best]
    se = _wald(lambda p: nll(p, weibull, True)[1], x)
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


def _regimes(log: FaultLog, servers: int, weight: np.ndarray, life: dict) -> dict:
    """The regimes' family (simd.traces.regimes) beside the renewal ones: its AIC in ``aic["regimes"]``, and when it
    is the lowest, the lifetime fields it implies (exponential at the mean rate, no frailty) and its estimates."""
    p = regimes.pieces(log, servers, weight)
    r = regimes.fit(p, log.span_days)
    if r is None:
        return {}
    aic = {**life["aic"], "regimes": 2 * r.nll + 2 * regimes.PARAMS}
    if aic["regimes"] >= min(life["aic"].values()):
        return {"aic": aic}
    se = _wald(regimes.nll_gradient(p), r.x)
    rate = _est(r.x[0], se[0])
    above = _est(r.x[1], se[1])  # r - 1
    ratio = Estimate(1 + above.value, 1 + above.low, 1 + above.high)
    calm, stormy = _est(r.x[2], se[2]), _est(r.x[3], se[3])

    def normalised(x: float) -> tuple[float, float]:  # the multipliers at ratio x, the durations at their estimates
        e = (r.calm_days + x * r.stormy_days) / (r.calm_days + r.stormy_days)
        return 1 / e, x / e

    (mc, ms), (mc_hi, ms_lo), (mc_lo, ms_hi) = normalised(ratio.value), normalised(ratio.low), normalised(ratio.high)
    return dict(aic=aic, lifetime="exponential", lifetime_shape=None, gamma_shape=None, rate_per_server_day=rate,
                lifetime_scale_days=Estimate(1 / rate.value, 1 / rate.high, 1 / rate.low if rate.low > 0 else math.inf),
                regimes=((Estimate(mc, mc_lo, mc_hi), calm), (Estimate(ms, ms_lo, ms_hi), stormy)), regime_ratio=ratio)


# The frailty's integral by quadrature (log_frailty): in u = log w the integrand is exp(g(u)) with g concave (a
# log-gamma density times the likelihood), so it has one mode and falls monotonically on each side. Each side is
# cut in PANELS panels where g has fallen from its mode by DROP * (j / PANELS)**2 (Newton's method, which converges
# monotonically on a concave function), each panel integrated by Gauss-Legendre of NODES nodes; beyond a fall of
# DROP (e**-46 ~ 1e-20 of the mode) the rest is left out, except on the left where g becomes linear (u below LINEAR:
# both exponential terms under 1e-12), whose tail integrates in closed form. Against scipy.integrate.quad
# (tests/traces/test_fit_model.py): within 1e-9 for frailty shapes 0.1 to 700, Weibull shapes 0.2 to 3, 0 to 30
# faults (8 panels of 10 nodes: 1e-11, at 1.6 times the time; the fit's optimizer needs a smooth function, which
# the nodes moving with the parameters keep, more than the last digits).
PANELS, NODES, DROP, LINEAR = 6, 8, 46.0, 1e-12
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(NODES)
_FALLS = (np.arange(1, PANELS + 1) / PANELS) ** 2  # of DROP


def log_frailty(n: np.ndarray, h: np.ndarray, a: float, k: float, grad: bool = False):
    """Per server, ``log E[w**(k n) exp(-w**k h)]`` for w ~ Gamma(a, 1/a): the frailty integrated out of a server's
    likelihood of ``n`` faults and baseline cumulative hazard ``h`` (arrays), Weibull shape ``k``.

    With ``grad``: that array and its partial derivatives in ``h``, ``k`` and ``a``, each an expectation over w's
    posterior (the integrand normalised): ``-E[w**k]``, ``E[(n - h w**k) log w]`` and ``log a + 1 - digamma(a) +
    E[log w - w]`` (for k = 1 w's posterior is Gamma(a + n, rate a + h): closed forms; otherwise the same
    quadrature's nodes weigh each expectation's term)."""
    n, h = np.asarray(n, dtype=float), np.asarray(h, dtype=float)
    if k == 1.0:
        value = special.gammaln(a + n) - special.gammaln(a) + a * math.log(a) - (a + n) * np.log(a + h)
        if not grad:
            return value
        mean, log_rate = (a + n) / (a + h), np.log(a + h)  # E[w], and E[log w] = digamma(a + n) - log_rate
        e_log = special.digamma(a + n) - log_rate
        e_w_log = mean * (special.digamma(a + n + 1.0) - log_rate)
        return (value, -mean, n * e_log - h * e_w_log,
                math.log(a) + 1.0 - special.digamma(a) + e_log - mean)
    (n, h), back = np.unique(np.stack([n, h]), axis=1, return_inverse=True)  # (servers without a fault: alike)
    r = a + k * n

    def g(x, r=r, h=h):
        return r * x - a * np.exp(x) - h * np.exp(k * x)

    def dg(x, r=r, h=h):
        return r - a * np.exp(x) - k * h * np.exp(k * x)

    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        # the mode: g' = 0, decreasing and concave, so Newton from its right (the lesser of each term's own root)
        u = np.minimum(np.log(r / a), np.log(r / (h * k)) / k)
        for _ in range(100):
            eu, eku = a * np.exp(u), h * np.exp(k * u)
            step = (r - eu - k * eku) / (eu + k * k * eku)
            u = u + step
            if np.all(np.abs(step) <= 1e-14 * np.maximum(1.0, np.abs(u))):
                break
        top = g(u)
        sigma = 1.0 / np.sqrt(a * np.exp(u) + k * k * h * np.exp(k * u))  # the mode's width
        linear = np.minimum(np.minimum(np.log(LINEAR / (2 * a)), np.log(LINEAR / (2 * h)) / k), u)
        big = 2.0 * (np.abs(top) + DROP + r * (np.abs(u) + 50.0) + 1.0)
        right_of_roots = np.maximum(np.minimum(np.log(big / a), np.log(big / h) / k), u)
        reach = np.minimum(DROP, top - g(linear))  # the fall on the left down to where g is linear
        total = np.zeros(len(r))
        # with grad: the integrals of the integrand times log w, w, w**k and w**k log w (same scale as total's)
        moments = np.zeros((4, len(r))) if grad else None
        for side, fall in ((-1.0, reach[:, None] * _FALLS), (1.0, DROP * _FALLS)):
            target = top[:, None] - fall
            rr, hh, uu = r[:, None], h[:, None], u[:, None]
            # start: the width's guess, past every root on the right (g'' only steepens there)
            x = uu + side * np.sqrt(2.0 * fall) * sigma[:, None]
            x = np.minimum(x, right_of_roots[:, None]) if side > 0 else np.maximum(x, linear[:, None] - 1.0)
            for _ in range(100):
                step = (g(x, rr, hh) - target) / dg(x, rr, hh)
                x = x - step
                if side < 0:
                    x = np.maximum(x, linear[:, None] - 1.0)
                if np.all(np.abs(step) <= 1e-11 * np.maximum(1.0, np.abs(x))):
                    break
            if side < 0:
                x = np.maximum(x, linear[:, None])
            edges = np.concatenate([uu, x], axis=1)
            mid, half = (edges[:, 1:] + edges[:, :-1]) / 2, np.abs(edges[:, 1:] - edges[:, :-1]) / 2
            at = mid[..., None] + half[..., None] * _NODES
            f = np.exp(g(at, rr[..., None], hh[..., None]) - top[:, None, None])
            total += ((f @ _WEIGHTS) * half).sum(axis=1)
            if grad:
                e, ek = np.exp(at), np.exp(k * at)
                for i, term in enumerate((at, e, ek, ek * at)):
                    moments[i] += (((f * term) @ _WEIGHTS) * half).sum(axis=1)
            if side < 0:  # the linear tail, in closed form
                lo = x[:, -1]
                edge, slope = np.exp(g(lo) - top), dg(lo)
                total += edge / slope
                if grad:  # the same tail (g linear of slope s) times u, e**u, e**(k u) and u e**(k u)
                    moments[0] += edge / slope * (lo - 1.0 / slope)
                    moments[1] += edge * np.exp(lo) / (slope + 1.0)
                    moments[2] += edge * np.exp(k * lo) / (slope + k)
                    moments[3] += edge * np.exp(k * lo) / (slope + k) * (lo - 1.0 / (slope + k))
    value = (a * math.log(a) - special.gammaln(a) + top + np.log(total))[back.reshape(-1)]
    if not grad:
        return value
    e_log, e_w, e_wk, e_wk_log = (moments / total)[:, back.reshape(-1)]
    n, h = n[back.reshape(-1)], h[back.reshape(-1)]
    return value, -e_wk, n * e_log - h * e_wk_log, math.log(a) + 1.0 - special.digamma(a) + e_log - e_w


def _wald(grad, x: np.ndarray) -> np.ndarray:
    """Standard errors from the inverse of the Hessian at ``x`` by central differences of the analytic gradient
    ``grad`` (mixture._covariance: 2p evaluations for p parameters; nan where singular)."""
    return np.sqrt(np.clip(np.diag(mixture._covariance(grad, x)), 0, None))


def _est(log_value: float, se: float) -> Estimate:
    se = se if math.isfinite(se) else math.inf
    return Estimate(math.exp(log_value), math.exp(log_value - Z * se), math.exp(min(log_value + Z * se, 700)))


def _repairs(days: np.ndarray) -> dict:
    n = len(days)
    mean = float(days.mean()) if n else 0.0
    exp_ci = Estimate(mean, 2 * n * mean / _chi2_ppf(0.975, 2 * n), 2 * n * mean / _chi2_ppf(0.025, 2 * n)) \
        if n else Estimate(0.0, 0.0, 0.0)
    aic = {"exponential": 2 * (n * math.log(mean) + n) + 2 if n and mean > 0 else math.inf}
    positive = np.log(days[days > 0])
    m = len(positive)
    median = sigma = None
    if m >= 2 and positive.std() > 0:  # (repairs all of one length: no lognormal's likelihood is finite)
        mu, s = float(positive.mean()), float(positive.std())  # MLE (ddof 0)
        tq = _t_ppf(0.975, m - 1) * positive.std(ddof=1) / math.sqrt(m)
        # (the interval's end capped as _est's: repairs from a subnormal to a second have a tq past a float's range)
        median = Estimate(math.exp(mu), math.exp(mu - tq), math.exp(min(mu + tq, 700)))
        sigma = Estimate(s, math.sqrt(m * s * s / _chi2_ppf(0.975, m - 1)),
                         math.sqrt(m * s * s / _chi2_ppf(0.025, m - 1)))
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
