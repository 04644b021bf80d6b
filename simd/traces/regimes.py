"""Faults clustered in time, fitted: the regimes of simd.engine.servers (a hidden calm and stormy regime common to
the cluster's servers, each multiplying their rates while it holds) as a Markov-modulated Poisson process over
the log's independent faults (docs/traces.md, "Regimes").

What is fitted is what is simulated: the servers' lifetimes exponential (rate ``lambda`` per up-day) in operational
time, no frailty, the regime a two-state continuous-time Markov chain over the log's time (mean durations ``d_c``,
``d_s`` days; the engine's per-step chain with geometric stretches of those means in days of compute, and
simd.traces.synth's path), stationary at the log's start. Given the path, a server up over ``(u, t]`` fails at
``t`` with density ``lambda m(t) exp(-lambda (tau(t) - tau(u)))``, so the log's likelihood is the cluster's: the
intensity ``lambda m(t)`` per server up, ``N(t)`` servers up (from the log's repairs), and the path integrated out by
the forward algorithm over the pieces between events and changes of ``N``: per piece ``exp((Q - N lambda M) dt)``
(closed form for 2 x 2), per fault ``lambda M`` (its weight as the exponent: a fault a burst window groups counts
by its chance of being independent, as the renewal fit's). The frailty and Weibull lifetimes are not combined with
the regimes (with either the servers' histories do not factor given the path; the renewal fit has them): the fit
compares this family with the renewal ones by AIC on the same data and writes the one chosen.

Parameters: the mean rate ``lambda_bar`` (per server up-day, over the stationary regime), the stormy regime's
multiplier over the calm one's ``r >= 1``, ``d_c``, ``d_s``; the written multipliers are normalised to a stationary
mean of 1 (``m_c = 1 / E``, ``m_s = r / E``, ``E = (d_c + r d_s) / (d_c + d_s)``), so the scenario's rate is the
long-run rate. Intervals: Wald on the logarithms (``r - 1`` for the ratio) from a finite-difference Hessian.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from simd.engine import njit
from simd.traces.log import DAY, FaultLog

PARAMS = 4
# the optimizer's starts: (the ratio, each regime's mean duration as a share of the span); one, a long storm:
# InfiniteHBD's optimum and the recovery's are reached from it (a second start, short storms, found the same
# optimum on both at twice the time)
STARTS = ((5.0, 0.2, 0.02),)


@dataclass(frozen=True)
class Pieces:
    """The log as the forward algorithm reads it: per piece its length (days) and servers up, then the weight of the
    fault that ends it (0: none)."""

    dt: np.ndarray
    up: np.ndarray
    fault: np.ndarray
    exposure: float  # server up-days
    faults: float  # the weighted independent faults


def pieces(log: FaultLog, servers: int, weight: np.ndarray, frailty: np.ndarray | None = None) -> Pieces:
    """The pieces of ``log`` on ``servers`` servers: each server up from the log's start or a repair's end until
    its next fault (fit._intervals' rule: overlapping faults keep it down until the last end), its faults weighted
    by ``weight`` (1: independent). ``frailty``: each server's rate multiplier, known (the servers up then count
    by it: ``N`` their sum; scripts/regimes_frailty.py's plug-in of the frailties' posterior means); None: 1 each."""
    span = log.span_days
    per: list[list[tuple[float, float, float]]] = [[] for _ in range(servers)]
    for f, w in zip(log.faults, weight.tolist(), strict=True):
        per[f.server].append((f.start / DAY, (f.end / DAY) if f.end is not None else math.inf, w))
    times, change, fw = [0.0, span], [0, 0], [0.0, 0.0]
    for i, faults in enumerate(per):
        up = 0.0
        x = 1.0 if frailty is None else float(frailty[i])
        for start, end, w in faults:
            if start >= up:
                times += [up, start]
                change += [x, -x]
                fw += [0.0, w]
            up = max(up, end)
        if up < span:
            times += [up, span]
            change += [x, -x]
            fw += [0.0, 0.0]
    t, c, w = np.array(times), np.array(change, dtype=float), np.array(fw)
    order = np.lexsort((-c, t))  # at one instant: the ends (-1, and their faults) after the starts
    t, c, w = t[order], c[order], w[order]
    n_up = np.cumsum(c)
    dt = np.diff(t)
    # piece i: (t[i], t[i + 1]] with n_up[i] servers up, ended by event i + 1 (its fault's weight)
    keep = (dt > 0) | (w[1:] > 0)
    exposure = float((dt * n_up[:-1]).sum())
    return Pieces(dt[keep], n_up[:-1][keep].astype(float), w[1:][keep], exposure, float(w.sum()))


@njit()
def _forward(a11, a12, a21, a22, logs, fault, rc, rs, pc):
    """log-likelihood: the forward pass over the pieces' matrices (a, scaled by exp(logs)), each fault's weight
    ``w`` multiplying by (rate in each regime) ** w; from the stationary law (pc, 1 - pc)."""
    x, y = pc, 1.0 - pc
    ll = 0.0
    lrc, lrs = math.log(rc), math.log(rs)
    for i in range(len(a11)):
        x, y = x * a11[i] + y * a21[i], x * a12[i] + y * a22[i]
        ll += logs[i]
        w = fault[i]
        if w > 0.0:
            x *= math.exp(w * lrc)
            y *= math.exp(w * lrs)
        s = x + y
        if not s > 0.0:
            return -math.inf
        x /= s
        y /= s
        ll += math.log(s)
    return ll


def loglik(p: Pieces, rate_c: float, rate_s: float, leave_c: float, leave_s: float) -> float:
    """The log-likelihood of the pieces: per-server rates in each regime (per day), rates of leaving each (per
    day)."""
    # A = Q - N diag(rates): [[-lc - N rc, lc], [ls, -ls - N rs]]; exp(A dt) by its eigenvalues s +- delta
    a = -leave_c - p.up * rate_c
    d = -leave_s - p.up * rate_s
    s = (a + d) / 2
    delta = np.sqrt(((a - d) / 2) ** 2 + leave_c * leave_s)
    e2 = np.exp(-2 * delta * p.dt)
    c0 = (1 + e2) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        c1 = np.where(delta > 0, -np.expm1(-2 * delta * p.dt) / np.where(delta > 0, 2 * delta, 1.0), p.dt)
    # exp(A dt) = exp((s + delta) dt) [c0 I + c1 (A - s I)]
    a11, a22 = c0 + c1 * (a - s), c0 + c1 * (d - s)
    a12, a21 = c1 * leave_c, c1 * leave_s
    return float(_forward(a11, a12, a21, a22, (s + delta) * p.dt, p.fault, rate_c, rate_s,
                          leave_s / (leave_c + leave_s)))


def _rates(x: np.ndarray) -> tuple[float, float, float, float]:
    """(rate calm, rate stormy, leave calm, leave stormy) from the parameters (log mean rate, log(r - 1), log d_c,
    log d_s)."""
    mean, r, dc, ds = math.exp(x[0]), 1.0 + math.exp(x[1]), math.exp(x[2]), math.exp(x[3])
    e = (dc + r * ds) / (dc + ds)
    return mean / e, mean * r / e, 1.0 / dc, 1.0 / ds


@dataclass(frozen=True)
class RegimeFit:
    nll: float
    x: np.ndarray  # the optimum (module docstring's parameters, logs)
    rate: float  # lambda_bar, per server up-day
    ratio: float  # r
    calm_days: float
    stormy_days: float

    @property
    def multipliers(self) -> tuple[float, float]:
        """(calm, stormy), normalised to a stationary mean of 1."""
        e = (self.calm_days + self.ratio * self.stormy_days) / (self.calm_days + self.stormy_days)
        return 1.0 / e, self.ratio / e


def fit(p: Pieces, span_days: float) -> RegimeFit | None:
    """The regimes' maximum likelihood over the pieces (None: no fault, or no exposure)."""
    if not p.faults > 0 or not p.exposure > 0:
        return None
    lam = p.faults / p.exposure

    def nll(x: np.ndarray) -> float:
        v = loglik(p, *_rates(x))
        return -v if math.isfinite(v) else 1e300

    bounds = [(math.log(lam) - 10, math.log(lam) + 10), (-6.0, math.log(1e4)),
              (math.log(span_days) - 12, math.log(span_days) + 3), (math.log(span_days) - 12, math.log(span_days) + 3)]
    best = None
    for r0, dc0, ds0 in STARTS:
        x0 = np.array([math.log(lam), math.log(r0 - 1), math.log(dc0 * span_days), math.log(ds0 * span_days)])
        r = optimize.minimize(nll, x0, method="L-BFGS-B", bounds=bounds)
        if best is None or r.fun < best.fun:
            best = r
    x = best.x
    return RegimeFit(float(best.fun), x, math.exp(x[0]), 1.0 + math.exp(x[1]), math.exp(x[2]), math.exp(x[3]))


def profile_ends(p: Pieces, r: RegimeFit, i: int, se: float, z: float) -> tuple[float, float]:
    """Parameter ``i``'s interval (on its logarithm, as ``r.x``) from its profile likelihood, in one step from the
    Wald interval's ends ``r.x[i] -+ z se``: at each end the others re-optimized, the signed root of the deviance
    taken as linear in the parameter between the optimum and that end and solved for ``z`` (exact when the profile
    is a parabola on that side, as Wald's; the rate's is skewed over a log's few storms: a Wald interval covered the
    mean rate in 87-92% of logs, scripts/engine_recovery.py). An end whose re-optimization fails keeps Wald's."""
    f = nll_function(p)
    grad = nll_gradient(p)
    rest = np.delete(np.arange(PARAMS), i)
    out = []
    for sign in (-1.0, 1.0):
        at = r.x[i] + sign * z * se

        def nll(y: np.ndarray, at=at) -> float:
            v = f(np.insert(y, i, at))
            return v if math.isfinite(v) else 1e300

        def jac(y: np.ndarray, at=at) -> np.ndarray:
            return grad(np.insert(y, i, at))[rest]

        o = optimize.minimize(nll, r.x[rest], jac=jac, method="L-BFGS-B")
        deviance = 2.0 * (o.fun - r.nll)
        out.append(r.x[i] + sign * z * se * z / math.sqrt(deviance) if o.success and deviance > 0 else at)
    return out[0], out[1]


def nll_function(p: Pieces):
    """The negative log-likelihood of the parameters."""
    return lambda x: -loglik(p, *_rates(x))


def nll_gradient(p: Pieces, h: float = 1e-4):
    """The gradient of nll_function by central differences of step ``h`` (the intervals' Hessian is its central
    differences in turn: fit._wald); the forward algorithm has no analytic one here."""
    f = nll_function(p)

    def grad(x: np.ndarray) -> np.ndarray:
        e = np.eye(len(x)) * h
        return np.array([(f(x + e[i]) - f(x - e[i])) / (2 * h) for i in range(len(x))])

    return grad
