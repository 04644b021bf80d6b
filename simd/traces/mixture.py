"""Repair times as a mixture of lognormal kinds (a reboot, a part swap, a vendor's replacement): ``simd trace
fit``'s repair law when its AIC beats the single lognormal's and the exponential's (docs/traces.md, "The fit").

A K-component lognormal mixture of the positive repair times is a K-component normal mixture of their
logarithms: weights w_j (summing to 1), medians exp(mu_j), log-sds sigma_j. Fitted by EM (Dempster, Laird and
Rubin 1977; the normal mixture's closed-form M step) from several starts (the log-times' quantiles, then draws
of a fixed seed, at most ITERATIONS steps each), the highest likelihood polished by L-BFGS-B (scipy.optimize, in
the unconstrained coordinates below); components ordered by median (the labels a mixture's likelihood
does not fix). Repairs still open at the log's end enter as right-censored (the mixture's survival function at how
long they have lasted) in the polish and the intervals. A component's sigma is held at least :data:`SIGMA_MIN`: a
log's repeated times (repairs logged to the second) would otherwise let one component shrink onto them with an
unbounded likelihood.

Intervals: Wald, from a central-difference Hessian of the negative log-likelihood at the optimum in unconstrained
coordinates (the weights' log-ratios to the first, the mus, the log-sigmas); a weight's interval on its logit
(delta method), a median's on mu, a sigma's on its logarithm, so each stays in its range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

Z = 1.959963984540054  # the normal's 97.5% quantile (scipy.stats.norm.ppf(0.975))
SIGMA_MIN = 0.05  # a component's least log-sd: 5% spread, below any kind of repair a log tells apart
STARTS = 5  # EM starts: the quantile start and draws of a fixed seed
ITERATIONS = 200  # EM steps at most per start (converged at a change of log-likelihood under TOLERANCE), the best
TOLERANCE = 1e-6  # start then polished by L-BFGS-B to its optimum (EM crawls where a component is barely there)


@dataclass(frozen=True)
class Interval:
    value: float
    low: float
    high: float


@dataclass(frozen=True)
class Mixture:
    """A fitted lognormal mixture: per component its weight, median (in the times' unit) and sigma, each with its
    95% interval, by median; the log-likelihood of the times (not of their logarithms)."""

    weights: tuple[Interval, ...]
    medians: tuple[Interval, ...]
    sigmas: tuple[Interval, ...]
    loglik: float

    @property
    def parameters(self) -> int:
        return 3 * len(self.weights) - 1

    @property
    def aic(self) -> float:
        return 2 * self.parameters - 2 * self.loglik


def _loglik_of_logs(y: np.ndarray, w: np.ndarray, mu: np.ndarray, s: np.ndarray) -> tuple[float, np.ndarray]:
    """The normal mixture's log-likelihood of ``y`` and the responsibilities, one row per component (rows of the
    points: numpy reduces across rows element by element, far faster than along a short axis)."""
    lp = (np.log(w) - np.log(s) - 0.5 * math.log(2 * math.pi))[:, None] - 0.5 * ((y - mu[:, None]) / s[:, None]) ** 2
    top = lp.max(axis=0)
    total = top + np.log(np.exp(lp - top).sum(axis=0))
    return float(total.sum()), np.exp(lp - total)


def _em(y: np.ndarray, w: np.ndarray, mu: np.ndarray, s: np.ndarray):
    ll_prev = -math.inf
    for _ in range(ITERATIONS):
        ll, r = _loglik_of_logs(y, w, mu, s)
        if ll - ll_prev < TOLERANCE * max(1.0, abs(ll)):
            break
        ll_prev = ll
        nk = r.sum(axis=1)
        if (nk < 1e-9).any():  # a component emptied: this start is spent
            return -math.inf, w, mu, s
        w = nk / len(y)
        mu = (r @ y) / nk
        s = np.maximum(np.sqrt((r * (y - mu[:, None]) ** 2).sum(axis=1) / nk), SIGMA_MIN)
    ll, _ = _loglik_of_logs(y, w, mu, s)
    return ll, w, mu, s


def fit(times: np.ndarray, k: int, seed: int = 0, censored: np.ndarray | None = None) -> Mixture | None:
    """The ``k``-component lognormal mixture of the positive ``times`` (None: too few distinct times for it, fewer
    than 3 per parameter, or no start converged). ``censored``: repairs still open at the log's end, each as long
    as it has lasted (the positive ones), right-censored: each counts the mixture's probability of lasting longer,
    the EM starts from the closed ones and the polish (and the intervals) takes them in."""
    y = np.log(times[times > 0])
    c = np.log(censored[censored > 0]) if censored is not None else np.zeros(0)
    n = len(y)
    if n < 3 * (3 * k - 1) or len(np.unique(y)) < 2 * k:
        return None
    rng = np.random.default_rng(seed)
    spread = max(float(y.std()), SIGMA_MIN)
    starts = [np.quantile(y, (np.arange(k) + 0.5) / k)]
    starts += [np.sort(rng.choice(y, size=k, replace=False)) for _ in range(STARTS - 1)]
    best = None
    for mu0 in starts:
        got = _em(y, np.full(k, 1.0 / k), np.array(mu0, dtype=float), np.full(k, spread / k))
        if math.isfinite(got[0]) and (best is None or got[0] > best[0]):
            best = got
    if best is None:
        return None
    _, w, mu, s = best

    def nll(p: np.ndarray) -> float:
        return _nll_grad(p, y, k, c)[0]

    x0 = np.concatenate([np.log(w[1:] / w[0]), mu, np.log(s)])
    bounds = [(-30.0, 30.0)] * (k - 1) + [(y.min() - 1.0, y.max() + 1.0)] * k + \
        [(math.log(SIGMA_MIN), math.log(10 * spread) + 1.0)] * k
    # polished to the optimum, whichever EM start it begins from (the default tolerances stop within 1e-3 of it)
    r = optimize.minimize(_nll_grad, x0, args=(y, k, c), jac=True, method="L-BFGS-B", bounds=bounds,
                          options={"ftol": 1e-15, "gtol": 1e-9, "maxiter": 2000})
    x = r.x if r.fun <= nll(x0) else x0
    eta = np.concatenate([[0.0], x[:k - 1]])
    w, mu, s = _softmax(eta), x[k - 1:2 * k - 1], np.exp(x[2 * k - 1:])
    order = np.argsort(mu)
    w, mu, s = w[order], mu[order], s[order]
    x = np.concatenate([np.log(w[1:] / w[0]), mu, np.log(s)])
    ll = -nll(x)

    cov = _covariance(lambda p: _nll_grad(p, y, k, c)[1], x)
    # the weights by the delta method through the softmax: dw_i / d eta_j = w_i (1[i = j] - w_j), eta_0 fixed at 0
    jac = (np.diag(w) - np.outer(w, w))[:, 1:]
    w_var = np.einsum("ij,jk,ik->i", jac, cov[:k - 1, :k - 1], jac) if k > 1 else np.zeros(k)
    weights = tuple(_logit_interval(float(wi), math.sqrt(max(v, 0.0)) if math.isfinite(v) else math.inf)
                    for wi, v in zip(w, w_var, strict=True))
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    medians = tuple(_exp_interval(float(mu[j]), float(se[k - 1 + j])) for j in range(k))
    sigmas = tuple(_exp_interval(math.log(s[j]), float(se[2 * k - 1 + j])) for j in range(k))
    # the times' likelihood: the log-times' less the Jacobian, sum(log t)
    return Mixture(weights, medians, sigmas, ll - float(y.sum()))


def _softmax(eta: np.ndarray) -> np.ndarray:
    """The weights of the log-ratios ``eta`` (k numbers: scipy.special.logsumexp's checks and broadcasting cost
    more than the sum, in the optimizer's every evaluation)."""
    e = np.exp(eta - eta.max())
    return e / e.sum()


def _nll_grad(p: np.ndarray, y: np.ndarray, k: int, c: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """The negative log-likelihood of the log-times ``y`` at ``p`` (the weights' log-ratios to the first, the mus,
    the log-sigmas) and its gradient: for the log-ratios sum_i (r_ij - w_j), the mus sum_i r_ij (y_i - mu_j) /
    s_j^2, the log-sigmas sum_i r_ij ((y_i - mu_j)^2 / s_j^2 - 1) (r the responsibilities), negated. With ``c``
    (censored log-times) each adds log sum_j w_j Q(z_ij), Q the normal's survival function, whose gradient is the
    same with r_ij = w_j Q_ij / sum_l w_l Q_il and the density's terms replaced by the inverse Mills ratio
    h = phi(z) / Q(z): h / s_j for the mus, h z for the log-sigmas."""
    eta = np.concatenate([[0.0], p[:k - 1]])
    w, mu, s = _softmax(eta), p[k - 1:2 * k - 1], np.exp(p[2 * k - 1:])
    ll, r = _loglik_of_logs(y, w, mu, s)
    z = (y - mu[:, None]) / s[:, None]
    g = np.concatenate([(r.sum(axis=1) - len(y) * w)[1:], (r * z).sum(axis=1) / s, (r * (z * z - 1)).sum(axis=1)])
    if c is not None and len(c):
        zc = (c - mu[:, None]) / s[:, None]
        lq = special.log_ndtr(-zc)
        lp = np.log(w)[:, None] + lq
        top = lp.max(axis=0)
        total = top + np.log(np.exp(lp - top).sum(axis=0))
        rc = np.exp(lp - total)
        h = np.exp(-0.5 * zc * zc - 0.5 * math.log(2 * math.pi) - lq)
        ll += float(total.sum())
        g += np.concatenate([(rc.sum(axis=1) - len(c) * w)[1:], (rc * h).sum(axis=1) / s, (rc * h * zc).sum(axis=1)])
    return -ll, -g


def hessian(grad, x: np.ndarray, h: float = 1e-4) -> np.ndarray:
    """The Hessian at ``x`` by central differences of step ``h`` of the analytic gradient ``grad``, symmetrized: 2 p
    evaluations for p parameters."""
    e = np.eye(len(x)) * h
    hess = np.array([(grad(x + e[i]) - grad(x - e[i])) / (2 * h) for i in range(len(x))])
    return (hess + hess.T) / 2


def _covariance(grad, x: np.ndarray, h: float = 1e-4) -> np.ndarray:
    """The inverse of :func:`hessian` (nan where it is singular)."""
    try:
        return np.linalg.inv(hessian(grad, x, h))
    except np.linalg.LinAlgError:
        return np.full((len(x), len(x)), np.nan)


def _exp_interval(log_value: float, se: float) -> Interval:
    se = se if math.isfinite(se) else math.inf
    return Interval(math.exp(log_value), math.exp(max(log_value - Z * se, -700)),
                    math.exp(min(log_value + Z * se, 700)))


def _logit_interval(w: float, se: float) -> Interval:
    """A weight's interval: Wald on its logit, se(logit w) = se(w) / (w (1 - w))."""
    if not 0 < w < 1 or not math.isfinite(se):
        return Interval(w, 0.0, 1.0)
    lo = special.logit(w) - Z * se / (w * (1 - w))
    hi = special.logit(w) + Z * se / (w * (1 - w))
    return Interval(w, float(special.expit(lo)), float(special.expit(hi)))
