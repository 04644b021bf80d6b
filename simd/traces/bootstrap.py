"""A parametric bootstrap of the intervals of the regimes joined with the lifetimes (docs/traces.md, "The joint
fit's intervals by a parametric bootstrap": `simd trace fit --joint-regimes --bootstrap N`).

The joint fit's own intervals (simd.traces.joint: Louis' identity for the lifetimes, the approximating MMPP's
curvature for the regimes) are narrow for the regimes: the model's information in them is not the MMPP's, and the
Monte Carlo EM's fixed point moves from log to log more than its iterates show (docs/traces.md, "Why the shape's
and the calm days' intervals are narrow, measured"). The bootstrap sizes all of it at once: N logs drawn from the
fitted model (simd.traces.synth, the fitted model's servers, span, repairs and bursts, a fixed seed: a log's
bootstrap is a function of the log), each fitted back with the same family (simd.traces.fit's ``like``: the renewal
family, the schedule's months, the relapses, the regimes joined, whatever the AIC says), the whole fit as `simd
trace fit` runs it from each log's own renewal, MMPP and relapse optima.

Each parameter's interval is on the scale its own interval is (log for the scale, shape, frailty, the relapses'
mean, the durations, the schedule's multipliers and the rate per server-day, logit for the relapses' share, log(r -
1) for the ratio): the estimate +- t x the refits' standard deviation there, t Student's 97.5% quantile with N - 1
degrees of freedom (the deviation is estimated from N refits; docs/traces.md gives the coverage measured). The
estimates stay the fit's; the regimes' multipliers' intervals follow the ratio's (fit._regime_estimates); the
rate's is its own spread (the shape's uncertainty in it, which fit._rate leaves out). A refit at the frailty's
bound (no over-dispersion the log can tell from none: None) makes the frailty's spread no spread: its interval
then reaches the bound, its low end from the refits below it. A refit the log cannot hold (fit's ValueError: no
regime chain found, no repair for relapses to follow, a schedule's pieces without faults), or whose log passes the
goodness of fit's budget (a fitted model far from its log), is counted and left out; the intervals need at least
two refits. The logs are drawn here; the refits run on an executor (simd.executors: worker processes, a dask
cluster), put back in the logs' order, so the result is the same whichever ran them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
from scipy import special, stats

from simd.executors import Serial
from simd.traces import fit as fit_module
from simd.traces.fit import Estimate, Fit
from simd.traces.scenario import budget
from simd.traces.synth import OverBudget, generate

SEED = 20_242  # the bootstrap logs' draws: a log's bootstrap is a function of the log and N
MIN_REFITS = 2  # refits an interval needs (a standard deviation)
FEW_REFITS = 10  # below it the command line warns: an SD of fewer refits is itself rough (t's wide quantile)
# the frailty's log shape at its bound (fit: no over-dispersion the log can tell from none), written as None
FRAILTY_BOUND = math.log(fit_module.GAMMA_SHAPE_MAX)


def _logit(v: float) -> float:
    return math.log(v / (1.0 - v))


# (field, to the interval's scale, back); the ratio's on log(r - 1)
_SCALES: dict[str, tuple[Callable[[float], float], Callable[[float], float]]] = {
    "lifetime_scale_days": (math.log, math.exp),
    "lifetime_shape": (math.log, math.exp),
    "gamma_shape": (math.log, math.exp),
    "relapse_probability": (_logit, lambda y: float(special.expit(y))),
    "relapse_mean_days": (math.log, math.exp),
    "regime_ratio": (lambda r: math.log(r - 1.0), lambda y: 1.0 + math.exp(y)),
}


def values(f: Fit, like: Fit) -> np.ndarray:
    """``f``'s estimates on the intervals' scales, in ``like``'s order: its fields above that ``like`` has, the
    calm and the stormy days, the schedule's multipliers, the log rate per server-day (a frailty at its bound at
    the bound, FRAILTY_BOUND)."""
    out = []
    for name, (to, _) in _SCALES.items():
        if getattr(like, name) is None:
            continue
        e = getattr(f, name)
        out.append(FRAILTY_BOUND if e is None else to(e.value))
    (_, calm), (_, stormy) = f.regimes
    out += [math.log(calm.value), math.log(stormy.value)]
    out += [math.log(m.value) for _, m in f.rate_schedule]
    out.append(math.log(f.rate_per_server_day.value))  # (fit._rate's, from the scale and shape)
    return np.array(out)


def refits(f: Fit, n: int, seed: int = SEED, progress: Callable[[int, int], None] | None = None,
           execute=None) -> tuple[np.ndarray, tuple[str, ...]]:
    """(the estimates of each of ``n`` logs of ``f``'s fitted model, over its servers and span, fitted back with its
    family, on the intervals' scales (:func:`values`: a row a refit, in the logs' order), why each refit left out
    was, in the logs' order); ``progress(done, n)`` after each refit. The logs are drawn here, one after another
    from ``seed``; ``execute`` (simd.executors: None, this process) fits them back, in any order: the
    result is the same whichever executor ran them."""
    if f.regimes is None or f.regimes_family == "regimes":
        raise ValueError("the bootstrap is of the regimes joined with the lifetimes (simd trace fit --joint-regimes)")
    model = f.model()
    rng = np.random.default_rng(seed)
    cap = budget(f.faults)  # the goodness of fit's: a fitted model far from its log stops at so many faults
    why: dict[int, str] = {}
    jobs = []
    for i in range(n):
        try:
            jobs.append((i, (generate(model, f.servers, f.span_days, rng, cap), f)))
        except OverBudget:
            why[i] = f"its log passed {cap} faults (the fitted model makes far more than the log)"
    done = len(why)
    if progress is not None and done:
        progress(done, n)
    got: dict[int, np.ndarray] = {}
    for i, (row, reason) in (execute or Serial())(fit_back, jobs):
        if row is None:
            why[i] = reason
        else:
            got[i] = row
        done += 1
        if progress is not None:
            progress(done, n)
    rows = [got[i] for i in sorted(got)]
    return (np.array(rows) if rows else np.zeros((0, len(values(f, f))))), tuple(why[i] for i in sorted(why))


def fit_back(log, f: Fit) -> tuple[np.ndarray | None, str]:
    """A bootstrap log fitted back with ``f``'s family: (its :func:`values`, "") or (None, why the log cannot hold
    the family: fit's ValueError). Numerical errors are raised, never counted as a refit left out."""
    try:
        refit = fit_module.fit(log, f.servers, f.burst_seconds, like=f)
    except np.linalg.LinAlgError:
        raise
    except ValueError as exc:  # (the log cannot hold the family: fit's own reasons)
        return None, str(exc)
    return values(refit, f), ""


def bootstrap(f: Fit, n: int, seed: int = SEED, progress: Callable[[int, int], None] | None = None,
              execute=None) -> Fit:
    """``f`` (a fit of the regimes joined with the lifetimes) with its intervals from ``n`` logs of its fitted
    model fitted back (module docstring, :func:`refits`: ``execute`` fits them back), and ``bootstrap_refits`` and
    ``bootstrap_failures`` saying so; ``progress(done, n)`` after each refit."""
    if n < MIN_REFITS:
        raise ValueError(f"a bootstrap needs at least {MIN_REFITS} refits")
    got, failed = refits(f, n, seed, progress, execute)
    if len(got) < MIN_REFITS:
        raise ValueError(f"{len(failed)} of the {n} bootstrap logs could not be fitted back with the family "
                         f"(the first: {failed[0]}): no interval")
    present = [name for name in _SCALES if getattr(f, name) is not None]  # values' first columns
    frailty = present.index("gamma_shape") if "gamma_shape" in present else None
    ends = intervals(values(f, f), got, frailty)
    done = iter(ends)

    def widened(e: Estimate, back: Callable[[float], float]) -> Estimate:
        low, high = next(done)
        return Estimate(e.value, back(low), back(high))

    fields = {}
    for name, (_, back) in _SCALES.items():
        e = getattr(f, name)
        if e is not None:
            fields[name] = widened(e, back)
    (_, calm), (_, stormy) = f.regimes
    calm, stormy = widened(calm, math.exp), widened(stormy, math.exp)
    ratio = fields["regime_ratio"]
    fields["regimes"] = fit_module._regime_estimates(ratio, calm, stormy, calm.value, stormy.value)
    fields["rate_schedule"] = tuple((day, widened(m, math.exp)) for day, m in f.rate_schedule)
    fields["rate_per_server_day"] = widened(f.rate_per_server_day, math.exp)
    return dataclasses.replace(f, **fields, bootstrap_refits=len(got), bootstrap_failures=failed)


def intervals(centre: np.ndarray, got: np.ndarray, frailty: int | None) -> np.ndarray:
    """The intervals' ends on their scales (a row a parameter: low, high) about the estimates ``centre`` from the
    refits' ``got`` (a row a refit), ``frailty`` the frailty's column (None: none): +- :func:`half_widths`; where a
    refit's frailty is at its bound, the frailty's interval up to the bound, its low end from the refits below it
    (at least MIN_REFITS; else the fit's lower bound)."""
    half = half_widths(got)
    ends = np.stack([centre - half, centre + half], axis=1)
    if frailty is not None:
        at_bound = got[:, frailty] >= FRAILTY_BOUND - 1e-6
        if at_bound.any():
            # the SD of a value that stops at the bound is no spread: the interval reaches it (none not excluded)
            below = got[~at_bound, frailty]
            low = centre[frailty] - half_widths(below[:, None])[0] if len(below) >= MIN_REFITS else -math.inf
            ends[frailty] = (max(low, fit_module.LOG_GAMMA_SHAPE_MIN), FRAILTY_BOUND)
    return ends


def half_widths(got: np.ndarray) -> np.ndarray:
    """The intervals' half widths on their scales from the refits' estimates ``got`` (a row a refit): Student's
    97.5% quantile with one fewer degrees of freedom than refits times their standard deviation."""
    return float(stats.t.ppf(0.975, len(got) - 1)) * np.std(got, axis=0, ddof=1)
