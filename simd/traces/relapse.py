"""A repair that does not hold (the engine's ``servers.relapse``; docs/traces.md, "Repairs that do not hold"): the
renewal fit's lifetimes with, after each repair, a two-part mixture.

A server's up intervals: the first, from the log's start, of its law (Weibull of shape k and scale theta divided by
its frailty w ~ Gamma(a, 1/a), as simd.traces.fit); each later one, after a repair, with probability p a short
lifetime, exponential of mean mu divided by w (the engine's: its short lifetime's scale divided by the server's gamma
multiplier), else of the law. Given w the intervals are independent, so a server's likelihood is

    E_w[ prod_{first} f(x | w)^d S(x | w)^(1 - d) prod_{after a repair} (p f_mu(x | w)^d S_mu(x | w)^(1 - d)
                                                                      + (1 - p) f(x | w)^d S(x | w)^(1 - d)) ]

(d: the interval ended in a fault, 1; censored by the log's end or a burst, 0; the burst window's chance weights in
between), a product of sums the label patterns of which number 2^n for a server of n repairs. The expectation is
taken over w by quadrature in u = log w instead, server by server (:func:`_integrals`): a coarse grid over the
prior's range and the server's own mode finds where the integrand lies within e^-45 of its peak, Gauss-Legendre
panels there integrate it; its log's gradient in the parameters is the posterior expectation of the integrand's
log's gradient on the same nodes (analytic, per interval: which part of the mixture the interval belongs to is a
posterior share). With a rate schedule each interval's length is its operational length and each fault's density
carries its piece's multiplier, as the engine's time change; its pieces' log multipliers are fitted with the rest
(from the schedule's optimum without relapses), their gradient through the intervals' lengths.

Parameters (L-BFGS-B over them): log theta, log k (Weibull only), log a, logit p, log mu, then a schedule's pieces'
log multipliers over the first's; intervals Wald on those scales from the Hessian (central differences of the
gradient)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

COARSE = 160  # the coarse grid's nodes per server
PANELS, NODES = 3, 24  # Gauss-Legendre panels over where the integrand matters, and nodes each
FALL = 45.0  # the integrand's fall from its peak left out (e**-45 ~ 3e-20)
_GL, _GW = np.polynomial.legendre.leggauss(NODES)
P_BOUNDS = (-12.0, 4.0)  # logit p: 6e-6 .. 0.98
MU_MIN_DAYS = 1.0 / 1440  # a minute
MU_MAX_DAYS = 2.0  # a short lifetime is hours, not the law's days


@dataclass(frozen=True)
class Intervals:
    """Every server's up intervals: lengths (days, operational with a schedule), the weight of the fault ending
    each (0: censored), whether it follows a repair, its server (intervals sorted by server, each server at least
    one), the log's multiplier term of the faults' densities (a schedule's: sum of done log m; 0 without)."""

    x: np.ndarray
    done: np.ndarray
    after: np.ndarray
    owner: np.ndarray
    servers: int
    # a rate schedule: each interval's overlap with each piece (intervals x pieces; None: none), the pieces' shares of
    # the span and their faults (weighted); its log multipliers are then free parameters, last
    overlap: np.ndarray | None = None
    share: np.ndarray | None = None
    counts: np.ndarray | None = None


def intervals(spans: tuple[np.ndarray, ...], servers: int, edges: np.ndarray | None = None,
              logs: np.ndarray | None = None) -> Intervals:
    """The up intervals of simd.traces.fit._spans (owner, start, end, done, n), in operational time under the
    schedule of pieces ``edges`` and log multipliers ``logs`` over the first's (None: none)."""
    owner, start, end, done, _ = spans
    order = np.lexsort((start, owner))
    owner, start, end, done = owner[order], start[order], end[order], done[order]
    first = np.ones(len(owner), dtype=bool)
    first[1:] = owner[1:] != owner[:-1]
    x = end - start
    done = np.where(x > 0, done, 0.0)  # (a zero-length interval: a tie, its density left out as the fit does)
    if edges is None or len(edges) <= 2:
        return Intervals(x=x, done=done, after=~first, owner=owner, servers=servers)
    overlap = np.clip(np.minimum(end[:, None], edges[None, 1:]) - np.maximum(start[:, None], edges[None, :-1]),
                      0.0, None)
    piece = np.clip(np.searchsorted(edges, end, "left") - 1, 0, len(edges) - 2)
    counts = np.bincount(piece, weights=done, minlength=len(edges) - 1)
    return Intervals(x=x, done=done, after=~first, owner=owner, servers=servers, overlap=overlap,
                     share=np.diff(edges) / (edges[-1] - edges[0]), counts=counts)


def multipliers(iv: Intervals, logs: np.ndarray) -> np.ndarray:
    """The schedule's multipliers from the pieces' log multipliers over the first's: a time-weighted mean of 1."""
    eb = np.exp(np.concatenate([[0.0], logs]))
    return eb / (iv.share @ eb)


def _terms(u: np.ndarray, iv: Intervals, theta: float, k: float, p: float, mu: float, grad: bool):
    """Per interval and node ``u`` (intervals x nodes): the log term of the likelihood, and with ``grad`` its
    derivatives in log theta, log k, logit p and log mu."""
    x, d = iv.x[:, None], iv.done[:, None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        logx = np.log(np.where(x > 0, x, 1.0))
        v = k * (u + logx - math.log(theta))  # log of (w x / theta)**k
        e = np.where(x > 0, np.exp(v), 0.0)
        o = d * (math.log(k) + v - np.where(x > 0, logx, 0.0)) - e  # log f**d S**(1 - d) of the law
        ew = np.exp(u)
        s = d * (u - math.log(mu)) - ew * x / mu  # ... of the short exponential
        after = iv.after[:, None]
        lo, ls = o + math.log1p(-p), s + math.log(p)
        t = np.where(after, np.logaddexp(lo, ls), o)
        if not grad:
            return t, None
        r = np.where(after, np.exp(ls - t), 0.0)  # the posterior share of the short part
        do_L = -k * d + k * e
        do_K = d * (1.0 + v) - e * v
        do_K = np.where(x > 0, do_K, 0.0)
        g_L, g_K = (1 - r) * do_L, (1 - r) * do_K
        g_P = np.where(after, r - p, 0.0)
        g_M = r * (-d + ew * x / mu)
        safe = np.where(x > 0, x, 1.0)
        g_X = np.where(x > 0, (1 - r) * (d * (k - 1.0) - k * e) / safe, 0.0) - r * ew / mu  # in the length
    return t, (g_L, g_K, g_P, g_M, g_X)


def _prior(u: np.ndarray, a: float):
    """log of Gamma(a, 1/a)'s density in u = log w, and its derivative in log a."""
    ew = np.exp(u)
    value = a * math.log(a) - special.gammaln(a) + a * u - a * ew
    return value, a * (math.log(a) + 1.0 - special.digamma(a) + u - ew)


def _by_server(values: np.ndarray, iv: Intervals) -> np.ndarray:
    """Per server (rows) the sum of its intervals' rows."""
    starts = np.flatnonzero(np.concatenate([[True], iv.owner[1:] != iv.owner[:-1]]))
    return np.add.reduceat(values, starts, axis=0)


def _integrals(params: np.ndarray, iv: Intervals, weibull: bool, grad: bool):
    """The negative log-likelihood at ``params`` (module docstring), and with ``grad`` its gradient."""
    base = 5 if weibull else 4
    theta = math.exp(params[0])
    k = math.exp(params[1]) if weibull else 1.0
    a = math.exp(params[base - 3])
    p = float(special.expit(params[base - 2]))
    mu = math.exp(params[base - 1])
    log_m, m = 0.0, None
    if iv.overlap is not None:  # the schedule: operational lengths, the faults' densities times their multipliers
        m = multipliers(iv, params[base:])
        iv = Intervals(x=iv.overlap @ m, done=iv.done, after=iv.after, owner=iv.owner, servers=iv.servers,
                       overlap=iv.overlap, share=iv.share, counts=iv.counts)
        log_m = float(iv.counts @ np.log(m))
    # the coarse range: the prior's 1e-12 .. 1 - 1e-12 quantiles, widened to each server's mode of the law alone
    q_lo, q_hi = special.gammaincinv(a, 1e-12) / a, special.gammaincinv(a, 1.0 - 1e-12) / a
    u_lo = max(math.log(q_lo) if q_lo > 0 else -60.0, -60.0)
    u_hi = math.log(q_hi)
    n = _by_server(iv.done[:, None], iv)[:, 0]
    with np.errstate(divide="ignore"):
        h = _by_server(np.where(iv.x > 0, (iv.x / theta) ** k, 0.0)[:, None], iv)[:, 0]
    r = a + k * n
    mode = np.log(r / a)
    for _ in range(60):  # Newton on r - a e**u - k h e**(k u) = 0 (concave: from the right)
        eu, eku = a * np.exp(mode), h * np.exp(k * mode)
        mode = mode - (r - eu - k * eku) / (-(eu + k * k * eku))
    lo = np.minimum(u_lo, mode - 8.0)
    hi = np.maximum(np.maximum(u_hi, mode + 8.0), 8.0)
    grid = lo[:, None] + (hi - lo)[:, None] * np.linspace(0.0, 1.0, COARSE)[None, :]
    t, _ = _terms(grid[iv.owner], iv, theta, k, p, mu, False)
    g = _by_server(t, iv) + _prior(grid, a)[0]
    peak = g.max(axis=1)
    above = g >= (peak - FALL)[:, None]
    i0 = np.argmax(above, axis=1)
    i1 = COARSE - 1 - np.argmax(above[:, ::-1], axis=1)
    step = (hi - lo) / (COARSE - 1)
    left, right = lo + np.maximum(i0 - 1, 0) * step, lo + np.minimum(i1 + 1, COARSE - 1) * step
    # Gauss-Legendre panels over [left, right]
    width = (right - left) / PANELS
    mids = left[:, None] + width[:, None] * (np.arange(PANELS) + 0.5)[None, :]
    nodes = (mids[:, :, None] + width[:, None, None] / 2 * _GL[None, None, :]).reshape(len(left), -1)
    weights = (width[:, None, None] / 2 * np.broadcast_to(_GW, (PANELS, NODES))[None]).reshape(len(left), -1)
    t, parts = _terms(nodes[iv.owner], iv, theta, k, p, mu, grad)
    prior, d_a = _prior(nodes, a)
    g = _by_server(t, iv) + prior
    top = g.max(axis=1)
    f = np.exp(g - top[:, None]) * weights
    total = f.sum(axis=1)
    nll = -(float((top + np.log(total)).sum()) + log_m)
    if not grad:
        return nll
    post = f / total[:, None]
    out = [float((post * _by_server(parts[0], iv)).sum())]
    if weibull:
        out.append(float((post * _by_server(parts[1], iv)).sum()))
    out.append(float((post * d_a).sum()))
    out.append(float((post * _by_server(parts[2], iv)).sum()))
    out.append(float((post * _by_server(parts[3], iv)).sum()))
    if m is not None:  # the pieces' log multipliers, through each interval's length (fit.schedule_likelihood's rule)
        d_x = -(post[iv.owner] * parts[4]).sum(axis=1)
        c = iv.counts
        gb = m * (d_x @ iv.overlap) - iv.share * m * float(d_x @ iv.x) - (c - c.sum() * iv.share * m)
        return nll, np.concatenate([-np.array(out), gb[1:]])
    return nll, -np.array(out)


@dataclass(frozen=True)
class Result:
    x: np.ndarray  # log theta, (log k,) log a, logit p, log mu, (the schedule's log multipliers)
    nll: float
    cov: np.ndarray


def fit(iv: Intervals, weibull: bool, start: np.ndarray, bounds: list, logs: np.ndarray | None = None,
        log_bounds: tuple[float, float] = (-12.0, 12.0)) -> Result:
    """The relapse family fitted from the renewal family's optimum ``start`` (log theta, (log k,) log a; with a
    schedule its pieces' log multipliers ``logs``, free again within ``log_bounds``) and its ``bounds``: L-BFGS-B
    from p = 5% and mu = an hour, and from p = 20% and mu = 6 hours, the better kept; the covariance from the
    Hessian (mixture.hessian of the analytic gradient)."""
    from simd.traces import mixture

    logs = np.zeros(0) if logs is None else logs
    best = None
    b = list(bounds) + [P_BOUNDS, (math.log(MU_MIN_DAYS), math.log(MU_MAX_DAYS))] + [log_bounds] * len(logs)
    for p0, mu0 in ((0.05, 1.0 / 24), (0.2, 0.25)):
        x0 = np.concatenate([start, [special.logit(p0), math.log(mu0)], logs])
        r = optimize.minimize(_integrals, x0, args=(iv, weibull, True), jac=True, method="L-BFGS-B", bounds=b)
        if best is None or r.fun < best.fun:
            best = r
    try:
        cov = np.linalg.inv(mixture.hessian(lambda q: _integrals(q, iv, weibull, True)[1], best.x))
    except np.linalg.LinAlgError:
        cov = np.full((len(best.x), len(best.x)), np.nan)
    return Result(x=best.x, nll=float(best.fun), cov=cov)


def nll(params: np.ndarray, iv: Intervals, weibull: bool, grad: bool = False):
    """The negative log-likelihood (and with ``grad`` its gradient) at ``params``."""
    return _integrals(params, iv, weibull, grad)
