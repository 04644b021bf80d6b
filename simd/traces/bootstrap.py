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
mean, the durations and the schedule's multipliers, logit for the relapses' share, log(r - 1) for the ratio): the
estimate +- t x the refits' standard deviation there, t Student's 97.5% quantile with N - 1 degrees of freedom (the
deviation is estimated from N refits: with 1.96 in its place 20 refits covered the shape 72 and the ratio 72 of 80
engine logs, with t 75 and 74; scripts/bootstrap_coverage.py). The estimates stay the fit's; the regimes'
multipliers' intervals follow the ratio's (fit._regime_estimates), the rate's the scale's (fit._rate). A refit the
log cannot hold (fit's ValueError: no regime chain found, no repair for relapses to follow) is counted and left
out; the intervals need at least two refits. A frailty at its bound in a refit (no over-dispersion: None) counts
at the bound.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
from scipy import special, stats

from simd.traces import fit as fit_module
from simd.traces.fit import Estimate, Fit
from simd.traces.synth import generate

SEED = 20_242  # the bootstrap logs' draws: a log's bootstrap is a function of the log and N
MIN_REFITS = 2  # refits an interval needs (a standard deviation)


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
    calm and the stormy days, the schedule's multipliers (a frailty at its bound at the bound)."""
    out = []
    for name, (to, _) in _SCALES.items():
        if getattr(like, name) is None:
            continue
        e = getattr(f, name)
        out.append(math.log(fit_module.GAMMA_SHAPE_MAX) if e is None else to(e.value))
    (_, calm), (_, stormy) = f.regimes
    out += [math.log(calm.value), math.log(stormy.value)]
    out += [math.log(m.value) for _, m in f.rate_schedule]
    return np.array(out)


def refits(f: Fit, n: int, seed: int = SEED, progress: Callable[[int, int], None] | None = None) -> tuple[
        np.ndarray, tuple[str, ...]]:
    """(the estimates of each of ``n`` logs of ``f``'s fitted model, over its servers and span, fitted back with its
    family, on the intervals' scales (:func:`values`: a row a refit), why each refit left out was);
    ``progress(done, n)`` after each refit."""
    if f.regimes is None or f.regimes_family == "regimes":
        raise ValueError("the bootstrap is of the regimes joined with the lifetimes (simd trace fit --joint-regimes)")
    model = f.model()
    rng = np.random.default_rng(seed)
    got, failed = [], []
    for i in range(n):
        try:
            refit = fit_module.fit(generate(model, f.servers, f.span_days, rng), f.servers, f.burst_seconds, like=f)
            got.append(values(refit, f))
        except ValueError as exc:
            failed.append(str(exc))
        if progress is not None:
            progress(i + 1, n)
    return np.array(got).reshape(len(got), -1), tuple(failed)


def bootstrap(f: Fit, n: int, seed: int = SEED, progress: Callable[[int, int], None] | None = None) -> Fit:
    """``f`` (a fit of the regimes joined with the lifetimes) with its intervals from ``n`` logs of its fitted
    model fitted back (module docstring, :func:`refits`), and ``bootstrap_refits`` and ``bootstrap_failures``
    saying so; ``progress(done, n)`` after each refit."""
    if n < MIN_REFITS:
        raise ValueError(f"a bootstrap needs at least {MIN_REFITS} refits")
    got, failed = refits(f, n, seed, progress)
    if len(got) < MIN_REFITS:
        raise ValueError(f"{len(failed)} of the {n} bootstrap logs could not be fitted back with the family "
                         f"(the first: {failed[0]}): no interval")
    half = half_widths(got)
    centre = values(f, f)
    done = iter(zip(centre - half, centre + half, strict=True))

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
    fields["rate_per_server_day"] = fit_module._rate(fields["lifetime_scale_days"], fields.get("lifetime_shape"))
    fields["rate_schedule"] = tuple((day, widened(m, math.exp)) for day, m in f.rate_schedule)
    return dataclasses.replace(f, **fields, bootstrap_refits=len(got), bootstrap_failures=failed)


def half_widths(got: np.ndarray) -> np.ndarray:
    """The intervals' half widths on their scales from the refits' estimates ``got`` (a row a refit): Student's
    97.5% quantile with one fewer degrees of freedom than refits times their standard deviation."""
    return float(stats.t.ppf(0.975, len(got) - 1)) * np.std(got, axis=0, ddof=1)
