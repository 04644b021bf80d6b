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
- **causes**: the classes' shares of all faults; those under 2% go to ``other``;
- **a rate over the log's span** (:func:`schedule_likelihood`): the engine's rate schedule, a time change of the
  servers' ages (a piece's multiplier per day of it), which the Weibull lifetimes and the frailty compose with
  exactly: an up interval's length is its operational length and each fault's density has the multiplier of its
  piece; pieces of 1, 3, 6 or 12 months with the family chosen above, the one of least p-value in a likelihood
  ratio test against the family without a schedule written when that p is below 5% over the candidates tried
  (Bonferroni; AIC would write one on a fifth of steady logs); the bursts stay a homogeneous Poisson process, as
  the engine keeps them.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, special

from simd.engine import njit
from simd.traces import mixture, regimes
from simd.traces.log import DAY, MAX_DAYS, FaultLog
from simd.traces.stats import bursts
from simd.traces.synth import Model
from simd.traces.trend import MONTH_DAYS

Z = special.ndtri(0.975)  # the normal's 97.5% quantile


# The quantiles as scipy.stats computes them (its chi2 and t distributions' ppf), from scipy.special: importing
# scipy.stats costs a fresh `simd trace fit` process a third of a second, more than the fit of most logs
def _chi2_ppf(q: float, df: float) -> float:
    return 2.0 * special.gammaincinv(df / 2.0, q)


def _burst_size(n: float, m: float) -> Estimate:
    """The bursts' mean size ``m`` over ``n`` bursts, each 2 + a geometric count (failures before a success of
    probability q = 1 / (m - 1)), with its exact interval: the n bursts' extra servers X = n (m - 2) are negative
    binomial (n successes), P(X <= x; q) = I_q(n, x + 1), so q's 95% interval is [I^-1(0.025; n, x + 1),
    I^-1(0.975; n, x)] (1 when x = 0) and the size's is 1 + 1 / q at its ends. (A Wald interval, m -+ 1.96 sd, covered
    the mean size in 87% of logs of ten bursts: scripts/engine_recovery.py.)"""
    x = max(n * (m - 2.0), 0.0)
    q_low = special.betaincinv(n, x + 1.0, 0.025)
    q_high = special.betaincinv(n, x, 0.975) if x > 0 else 1.0
    return Estimate(m, 1.0 + 1.0 / q_high, 1.0 + 1.0 / q_low if q_low > 0 else math.inf)


def _t_ppf(q: float, df: float) -> float:
    return special.stdtrit(df, q)

# The spans a fit takes (docs/traces.md, "The fit"): at least a second (a log whose events are all at one
# instant has no time to fit a rate over) and at most the parser's range of times, a century (every log it reads;
# the bound keeps every time, rate and scale the fit and its synthetic logs compute far from a float's range: a
# scale of span x servers x e^10 days stays below 1e15).
MIN_SPAN_SECONDS = 1.0
MAX_SPAN_DAYS = MAX_DAYS
GAMMA_SHAPE_MAX = 1e4  # a above this: no over-dispersion the log can tell from none (reported as None)
LOG_GAMMA_SHAPE_MIN = -8.0  # log a's lower bound in the fit (a frailty's variance 1 / a of ~3,000)
OTHER_SHARE = 0.02
MIXTURE_COMPONENTS = (2, 3)  # the repair mixtures tried (a reboot, a part swap, a vendor's replacement)
# The rate schedule's candidates (docs/traces.md, "Rates over the log's span"): pieces of SCHEDULE_MONTHS months
# each (`simd trace stats`' months of 365.25 / 12 days from the log's start, the last piece cut at its end), at
# least two and at most SCHEDULE_MAX_PIECES of them, holding SCHEDULE_MIN_FAULTS independent faults each on average
# (a piece's multiplier from fewer has an interval wider than the changes a log shows: 20 faults give about x0.6 ..
# x1.5). A piece's log multiplier is kept within SCHEDULE_LOG_BOUNDS of the first's (a piece without a fault would
# take it to 0).
SCHEDULE_MONTHS = (1, 3, 6, 12)
SCHEDULE_MAX_PIECES = 36
SCHEDULE_MIN_FAULTS = 20.0
SCHEDULE_LOG_BOUNDS = (-12.0, 12.0)
# A schedule is written when the likelihood ratio test against the same family without one rejects a steady rate
# at SCHEDULE_LEVEL over all the candidates tried (Bonferroni: the least p-value below SCHEDULE_LEVEL / their
# count), not by AIC, which writes one on a fifth of steady logs (scripts/schedule_selection.py: docs/traces.md,
# "Rates over the log's span", the rates measured)
SCHEDULE_LEVEL = 0.05


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
    # the regimes' family in ``aic``: "regimes" (the MMPP: exponential lifetimes, no frailty), or the renewal family
    # joined with them (simd.traces.joint: "weibull, by month, regimes"), whose Monte Carlo fit's importance
    # weights' effective count and log-likelihood's standard error are given
    regimes_family: str = "regimes"
    regimes_ess: float | None = None
    regimes_nll_error: float | None = None
    # a rate that varies over the log's span, when its AIC is the lowest: (from day, multiplier) per piece, the
    # multipliers of a time-weighted mean of 1 over the span (the rate is the span's mean); the engine's
    # servers.rate_schedule. With it, the same family's estimates without the schedule (scale, shape, frailty)
    rate_schedule: tuple[tuple[float, Estimate], ...] = ()
    unscheduled: tuple[Estimate, Estimate | None, Estimate | None] | None = None
    schedule_months: int = 0  # the months of each piece (the last one cut at the span's end)
    # a trend: the schedule's pieces log-linear in their index, each piece's multiplier this factor times the one
    # before (None: the pieces free)
    schedule_trend: Estimate | None = None
    # the least p-value of the schedules' likelihood ratio tests against the family without one (None: none tried),
    # and the schedules tried: a schedule is written when p < SCHEDULE_LEVEL / schedule_tests
    schedule_p: float | None = None
    schedule_tests: int = 0
    # a repair that does not hold (the engine's servers.relapse), when its AIC is the lowest: the share of lifetimes
    # after a repair that are short, and their mean days (exponential, divided by the frailty); None: not written
    relapse_probability: Estimate | None = None
    relapse_mean_days: Estimate | None = None
    # the regimes joined with the lifetimes: their intervals from a parametric bootstrap of so many refits
    # (simd.traces.bootstrap; 0: the fit's own), and why each refit left out was
    bootstrap_refits: int = 0
    bootstrap_failures: tuple[str, ...] = ()

    @property
    def schedule_aic(self) -> str:
        """The schedule's name in ``aic`` ("" without one)."""
        return f"{self.lifetime}, {schedule_name(self.schedule_months, self.schedule_trend is not None)}" \
            if self.rate_schedule else ""

    @property
    def relapse_aic(self) -> float | None:
        """The AIC of the family whose relapses are written (the regimes joined with them, or the relapse family
        alone; None: no relapse written)."""
        if self.relapse_probability is None:
            return None
        if self.regimes and ", relapse," in self.regimes_family:
            return self.aic[self.regimes_family]
        return next((v for k, v in self.aic.items() if k.endswith(", relapse")), None)

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
            regimes=tuple((m.value, d.value) for m, d in self.regimes) if self.regimes else (),
            rate_schedule=tuple((day, m.value) for day, m in self.rate_schedule),
            relapse_probability=self.relapse_probability.value if self.relapse_probability else 0.0,
            relapse_mean_days=self.relapse_mean_days.value if self.relapse_mean_days else 0.0)

    def without_schedule(self) -> Fit:
        """The same family fitted without the rate schedule (itself when it has none): what the schedule buys."""
        if not self.rate_schedule:
            return self
        theta, k, a = self.unscheduled
        # (the joint family's: the renewal family without its schedule, the regimes with it)
        # (with relapses: the renewal family without them too, whose estimates ``unscheduled`` are)
        return dataclasses.replace(self, lifetime_scale_days=theta, lifetime_shape=k, gamma_shape=a,
                                   rate_per_server_day=_rate(theta, k), rate_schedule=(), unscheduled=None,
                                   schedule_months=0, schedule_trend=None, regimes=None, regime_ratio=None,
                                   relapse_probability=None, relapse_mean_days=None)


def fit(log: FaultLog, servers: int, burst_seconds: float = 0.0,
        schedules: tuple[int, ...] = SCHEDULE_MONTHS, joint_regimes: bool = False, relapse: bool = False,
        like: Fit | None = None) -> Fit:
    """The model fitted to ``log`` on a cluster of ``servers`` servers; ``schedules``: the rate schedules tried
    (pieces of so many months each; () none: the renewal families and the regimes only); ``joint_regimes``: the
    regimes joined with the lifetimes written (simd.traces.joint, seconds more) tried too; ``relapse``: repairs
    that do not hold (simd.traces.relapse, seconds more) tried on the renewal family written.

    ``like``: a fit of the regimes joined with the lifetimes (simd.traces.joint) whose family is written whatever
    the AIC says, the flags and schedules taken from it (a parametric bootstrap's refit, simd.traces.bootstrap):
    its renewal family, its schedule's months (the pieces free, as the joint fit frees them), its relapses, the
    regimes joined; a ValueError when the log cannot hold that family (a schedule's pieces without their faults,
    no repair for relapses to follow, no regime chain found)."""
    if like is not None:
        if like.regimes is None or like.regimes_family == "regimes":
            raise ValueError("like: a fit of the regimes joined with the lifetimes")
        schedules = (like.schedule_months,) if like.rate_schedule else ()
        joint_regimes, relapse = True, like.relapse_probability is not None
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
        burst_size = _burst_size(n_b, m)
    # a fault in a group is independent with the share the chance joins take of the groups' faults (0 at window 0)
    grouped = int(in_burst.sum())
    weight = np.where(in_burst, joined / grouped if grouped else 0.0, 1.0)
    life = _lifetimes(log, servers, weight, schedules, like)
    optimum = life.pop("optimum")
    written, unscheduled = _written(life), life.get("unscheduled")
    renewal = dict(life)
    rel = _relapse(log, servers, weight, optimum) if relapse else None
    mmpp = _regimes(log, servers, weight, life, forced=like is not None)
    start = mmpp.pop("start", None)
    life.update(mmpp)
    if rel is not None:  # written when its AIC is the lowest (the regimes' included)
        aic_rel, fields, rel_x = rel
        name = f"{written}, relapse"
        aic = {**life["aic"], name: aic_rel}
        if aic_rel < min(aic[written], aic.get("regimes", math.inf)):
            life.update(renewal)
            life.update(fields, regimes=None, regime_ratio=None, regimes_family="regimes")
        life["aic"] = aic
    if like is not None and (start is None or relapse and rel is None):
        raise ValueError("the log holds no " + ("regime chain" if start is None else "repair for relapses to follow"))
    if joint_regimes and start is not None:
        if like is None or rel is None:
            life.update(_joint(log, servers, weight, life["aic"], written, optimum, start, unscheduled,
                               forced=like is not None))
        if rel is not None:  # both flags: the relapses inside the joint regimes too (simd.traces.joint.RelapseJoint)
            life.update(_joint(log, servers, weight, life["aic"], written, optimum, start, unscheduled, rel_x,
                               forced=like is not None))
    repairs = np.array([f.repair_seconds / DAY for f in log.faults if f.end is not None])
    rep = _repairs(repairs, np.array([span - f.start / DAY for f in log.faults if f.end is None]))
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
    every = np.concatenate([np.concatenate([d, c]) for d, _, c in per])  # every up interval, and its server
    owner = np.concatenate([np.full(len(d) + len(c), i) for i, (d, _, c) in enumerate(per)])
    # each interval's fault as the density counts it: its weight if it ended in one after a positive time (a
    # zero-length interval is a tie: its density term left out), else 0
    done = np.concatenate([np.concatenate([np.where(d > 0, w, 0.0), np.zeros(len(c))]) for d, w, c in per])

    def nll(params: np.ndarray, weibull: bool, grad: bool = False):
        return _nll(params, weibull, grad, every, owner, done, n, servers)

    return nll


def _nll(params: np.ndarray, weibull: bool, grad: bool, every: np.ndarray, owner: np.ndarray, done: np.ndarray,
         n: np.ndarray, servers: int, by_interval: bool = False):
    """The negative log-likelihood at ``params`` (log theta, log k if Weibull, log a) of the up intervals ``every``
    (their servers ``owner``, the weight of the fault ending each in the density ``done``, each server's faults
    ``n``); with ``grad``, also its gradient: through each server's cumulative hazard h (dh/dlog theta = -k h,
    dh/dlog k = k sum z log z with z = x / theta the interval in the scale's units), the density terms, and
    :func:`log_frailty`'s partial derivatives; with ``by_interval`` too, its derivative in each interval's length
    (the rate schedule's chain rule: :func:`schedule_likelihood`)."""
    theta = math.exp(params[0])
    k = math.exp(params[1]) if weibull else 1.0
    a = math.exp(params[-1])
    counted_at = done > 0
    counted = done[counted_at].sum()
    # log of every up interval (zero-length ones: -inf, their terms of the shape's derivative left out: 0 log 0 = 0)
    with np.errstate(divide="ignore"):
        log_every = np.log(every)
    log_done_sum = (done[counted_at] * log_every[counted_at]).sum()
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
            zlog = np.where(every > 0, z * (log_every - params[0]), 0.0)
        q = np.bincount(owner, weights=zlog, minlength=servers)
        g.append(counted * (1.0 - k * params[0]) + k * log_done_sum + k * float(dk.sum() + dh @ q))
    g.append(a * float(da.sum()))
    if not by_interval:
        return -(ll + lf.sum()), -np.array(g)
    positive = every > 0
    safe = np.where(positive, every, 1.0)
    d_every = np.where(positive, -((k - 1.0) * done + dh[owner] * k * z) / safe, 0.0)
    return -(ll + lf.sum()), -np.array(g), d_every


def _spans(log: FaultLog, servers: int, weight: np.ndarray) -> tuple[np.ndarray, ...]:
    """Every up interval of every server (:func:`_intervals`' rule) as arrays: its server, its start and end (days),
    the weight of the fault ending it as the density counts it (0: censored at the log's end, or of zero length)
    and each server's faults (weighted)."""
    span = log.span_days
    owner, start, end, done = [], [], [], []
    n = np.zeros(servers)
    by: list[list[tuple[float, float, float]]] = [[] for _ in range(servers)]
    for f, w in zip(log.faults, weight.tolist(), strict=True):
        by[f.server].append((f.start / DAY, (f.end / DAY) if f.end is not None else math.inf, w))
    for i, faults in enumerate(by):
        up = 0.0
        for s, e, w in faults:  # by start; overlapping faults: the server is down until the last end
            if s >= up:
                owner.append(i)
                start.append(up)
                end.append(s)
                done.append(w if s > up else 0.0)
                n[i] += w
            up = max(up, e)
        if up < span:
            owner.append(i)
            start.append(up)
            end.append(span)
            done.append(0.0)
    return (np.array(owner, dtype=np.int64), np.array(start), np.array(end), np.array(done), n)


def schedule_likelihood(spans: tuple[np.ndarray, ...], servers: int, edges: np.ndarray, trend: bool = False):
    """The lifetimes' negative log-likelihood under a rate schedule of pieces ``edges`` (days; the span's first and
    last included): ``nll(params, weibull, grad=False)``, params those of :func:`likelihood` then ``b_2 .. b_J``,
    the pieces' log multipliers over the first's. The engine's time change (simd.engine.servers, "Operational
    time"): a server ages ``m_j`` per day of piece j, so an up interval's lifetime is its operational length
    ``sum_j m_j overlap_j`` and a fault at t has the density ``f(A) m(t)``. The multipliers are normalised to a
    time-weighted mean of 1 over the span, ``m_j = e**b_j / sum_i (len_i / span) e**b_i``, so theta is the scale at
    the span's mean rate. The gradient in b by the chain rule through each interval's length (:func:`_nll`'s
    ``by_interval``). With ``trend`` the pieces' log multipliers are ``b_j = beta (j - 1)``: params end with beta
    alone. ``nll.free``: the free parameters of the multipliers; ``nll.logs``: (b_2 .. b_J) of them, ``nll.dlogs``
    its Jacobian."""
    owner, start, end, done, n = spans
    lengths = np.diff(edges)
    share = lengths / (edges[-1] - edges[0])
    overlap = np.clip(np.minimum(end[:, None], edges[None, 1:]) - np.maximum(start[:, None], edges[None, :-1]),
                      0.0, None)
    # a fault at t is in the piece (e_j, e_(j+1)] (the engine's: piece k covers steps (s_k, s_(k+1)])
    piece = np.clip(np.searchsorted(edges, end, "left") - 1, 0, len(lengths) - 1)
    counted = done > 0
    c = np.bincount(piece[counted], weights=done[counted], minlength=len(lengths))
    total = c.sum()

    def multipliers(b: np.ndarray) -> np.ndarray:
        eb = np.exp(np.concatenate([[0.0], b]))
        return eb / (share @ eb)

    index = np.arange(1.0, len(lengths))
    dlogs = index[:, None] if trend else np.eye(len(lengths) - 1)
    free = dlogs.shape[1]

    def logs(params: np.ndarray) -> np.ndarray:
        return dlogs @ params

    def nll(params: np.ndarray, weibull: bool, grad: bool = False):
        base, m = params[:len(params) - free], multipliers(logs(params[len(params) - free:]))
        every = overlap @ m
        log_m = float(c @ np.log(m))
        if not grad:
            return _nll(base, weibull, False, every, owner, done, n, servers) - log_m
        value, g, d_every = _nll(base, weibull, True, every, owner, done, n, servers, by_interval=True)
        gb = m * (d_every @ overlap) - share * m * float(d_every @ every) - (c - total * share * m)
        return value - log_m, np.concatenate([g, gb[1:] @ dlogs])

    # the optimizer's start: each piece's faults over its up-days, against the first's (a trend: their slope)
    up = overlap.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rates = np.log(np.maximum(c, 0.5) / np.maximum(up, 1e-300))
    start = np.clip(rates[1:] - rates[0], *SCHEDULE_LOG_BOUNDS)
    slope = float(np.polyfit(np.arange(len(lengths)), rates, 1)[0]) if trend else 0.0
    nll.start = np.clip([slope], *(np.array(SCHEDULE_LOG_BOUNDS) / (len(lengths) - 1))) if trend else start
    nll.multipliers = multipliers
    nll.logs, nll.dlogs, nll.free = logs, dlogs, free
    return nll


def _lifetimes(log: FaultLog, servers: int, weight: np.ndarray, schedules: tuple[int, ...],
               like: Fit | None = None) -> dict:
    """The renewal families, each fitted, the AIC's choice written, then its rate schedules (``schedules``), one
    written when its test passes; ``like`` (fit's): its family and schedule written, whatever the AIC and the test
    say (only those fitted)."""
    per = _intervals(log, servers, weight)
    n = np.array([w.sum() for _, w, _ in per], dtype=float)
    nll = likelihood(per, servers)
    total_up = sum(d.sum() + c.sum() for d, _, c in per)
    if not total_up > 0:
        raise ValueError("the servers are never up in the log (each in repair from time 0 to the log's end): no "
                         "lifetime to fit")
    theta0 = total_up / max(n.sum(), 1.0)
    results, bounds = {}, {}
    for name, weibull in (("exponential", False), ("weibull", True)):
        if like is not None and name != like.lifetime:
            continue
        x0 = np.array([math.log(theta0), 0.0, 0.0] if weibull else [math.log(theta0), 0.0])
        bounds[name] = [(math.log(theta0) - 10, math.log(theta0) + 10)] + ([(-3.0, 3.0)] if weibull else []) + \
            [(LOG_GAMMA_SHAPE_MIN, math.log(GAMMA_SHAPE_MAX))]
        r = optimize.minimize(nll, x0, args=(weibull, True), jac=True, method="L-BFGS-B", bounds=bounds[name])
        results[name] = (r.x, r.fun, weibull)
    aic = {name: 2 * fun + 2 * len(x) for name, (x, fun, _) in results.items()}
    best = min(aic, key=aic.get)
    x, _, weibull = results[best]
    out = _lifetime_fields(x, _wald(lambda p: nll(p, weibull, True)[1], x), weibull)
    # the rate schedules: the family just chosen with its rate in pieces of so many months, the coarsest first
    span = log.span_days
    tried, spans = {}, None
    coarser = None  # the optimum of the last (coarser) schedule fitted, and its edges
    for months in sorted(schedules, reverse=True):
        edges = schedule_edges(span, months)
        pieces = len(edges) - 1
        if not 2 <= pieces <= SCHEDULE_MAX_PIECES or n.sum() / pieces < SCHEDULE_MIN_FAULTS:
            continue
        spans = spans or _spans(log, servers, weight)
        f = schedule_likelihood(spans, servers, edges)
        start = np.concatenate([x, f.start])
        if coarser is not None:  # its pieces hold these (months of 12, 6, 3, 1): start from its optimum
            xc, ec = coarser
            bc = np.concatenate([[0.0], xc[len(x):]])
            start = np.concatenate([xc[:len(x)], bc[np.searchsorted(ec, edges[1:-1], "right") - 1]])
        r = optimize.minimize(f, start, args=(weibull, True), jac=True,
                              method="L-BFGS-B", bounds=bounds[best] + [SCHEDULE_LOG_BOUNDS] * (pieces - 1))
        coarser = (r.x, edges)
        name = f"{best}, {schedule_name(months)}"
        aic[name] = 2 * r.fun + 2 * len(r.x)
        tried[name] = (r.x, f, edges, months)
    trend = _trend(log, servers, weight, schedules, n.sum(), x, weibull, bounds[best]) if like is None else None
    if trend is not None:
        spans = spans or _spans(log, servers, weight)
        xt, f, edges, months = trend(spans)
        name = f"{best}, {schedule_name(months, True)}"
        aic[name] = 2 * f(xt, weibull) + 2 * len(xt)
        tried[name] = (xt, f, edges, months)
    # the likelihood ratio test of each schedule against the family without one (chi-square of its free
    # parameters: J - 1, a trend's 1)
    p = {name: float(special.chdtrc(f.free, max(aic[best] - aic[name] + 2 * f.free, 0.0)))
         for name, (_, f, _, _) in tried.items()}
    chosen = min(p, key=p.get, default=None)
    out.update(lifetime=best, aic=aic, schedule_p=p[chosen] if chosen else None, schedule_tests=len(p),
               optimum=(x, np.zeros(0), bounds[best], weibull, np.array([0.0, span])))
    if like is not None and like.rate_schedule and chosen is None:
        raise ValueError(f"the log's faults do not fill the schedule's pieces of {like.schedule_months} months "
                         f"(at least {SCHEDULE_MIN_FAULTS:g} faults a piece)")
    if chosen is None or not (like is not None or p[chosen] < SCHEDULE_LEVEL / len(p)):
        return out
    xs, f, edges, months = tried[chosen]
    cov = mixture._covariance(lambda p: f(p, weibull, True)[1], xs)
    j = f.free  # the free parameters of the pieces' log multipliers, last in xs
    base = len(xs) - j
    scheduled = _lifetime_fields(xs[:base], np.sqrt(np.clip(np.diag(cov)[:base], 0, None)), weibull)
    multipliers = _multipliers(edges, f.multipliers(f.logs(xs[base:])), f.dlogs, cov[base:, base:])
    slope = _est(xs[-1], math.sqrt(max(cov[-1, -1], 0.0))) if "trend" in chosen else None  # e**beta
    return {**scheduled, "lifetime": best, "aic": aic, "rate_schedule": multipliers, "schedule_months": months,
            "schedule_p": p[chosen], "schedule_tests": len(p),
            "schedule_trend": slope,
            "unscheduled": (out["lifetime_scale_days"], out["lifetime_shape"], out["gamma_shape"]),
            "optimum": (xs[:base], f.logs(xs[base:]), bounds[best], weibull, edges)}


def _multipliers(edges: np.ndarray, m: np.ndarray, dlogs: np.ndarray, cov: np.ndarray) -> tuple:
    """A schedule's pieces (from day, multiplier with its interval) from the multipliers ``m``, the Jacobian of the
    pieces' log multipliers over the first's in the free parameters ``dlogs`` and those parameters' covariance."""
    share = np.diff(edges) / (edges[-1] - edges[0])
    multipliers = []
    for i in range(len(edges) - 1):
        # log m_i = b_i - log sum_l share_l e**b_l: its gradient in (b_2 .. b_J), through b's in the free
        # parameters (the identity; a trend's b_l = beta (l - 1)), then the delta method
        d = -share[1:] * m[1:]
        if i:
            d[i - 1] += 1.0
        d = dlogs.T @ d
        var = float(d @ cov @ d)
        multipliers.append((float(edges[i]), _est(math.log(m[i]), math.sqrt(var) if var >= 0 else math.nan)))
    return tuple(multipliers)


def _trend(log: FaultLog, servers: int, weight: np.ndarray, schedules: tuple[int, ...], faults: float,
           x: np.ndarray, weibull: bool, bounds: list):
    """The trend candidate (None: none tried): the rate schedule whose pieces' log multipliers are linear in their
    index, ``b_j = beta (j - 1)`` (a rate growing or falling by the factor ``e**beta`` a piece), one parameter; its
    pieces the finest of the months tried (``schedules``) that give 3 to SCHEDULE_MAX_PIECES, tried when the log has
    SCHEDULE_MIN_FAULTS independent faults for each of its two parameters. The engine runs it as it runs any
    schedule (a continuous log-linear rate it does not: its time change is constant within each piece). Returns a
    function of the log's spans giving (the optimum, the likelihood, the edges, the months)."""
    span = log.span_days
    months = next((mo for mo in sorted(schedules) if 3 <= len(schedule_edges(span, mo)) - 1 <= SCHEDULE_MAX_PIECES),
                  None)
    if months is None or faults / 2 < SCHEDULE_MIN_FAULTS:
        return None

    def run(spans):
        edges = schedule_edges(span, months)
        f = schedule_likelihood(spans, servers, edges, trend=True)
        lo, hi = SCHEDULE_LOG_BOUNDS
        r = optimize.minimize(f, np.concatenate([x, f.start]), args=(weibull, True), jac=True, method="L-BFGS-B",
                              bounds=bounds + [(lo / (len(edges) - 2), hi / (len(edges) - 2))])
        return r.x, f, edges, months

    return run


def schedule_edges(span_days: float, months: int) -> np.ndarray:
    """The edges (days) of a schedule of pieces of ``months`` months over a span, the last piece cut at its end
    (simd.traces.trend's months; a piece shorter than a thousandth of one is joined to the one before)."""
    size = months * MONTH_DAYS
    n = max(1, math.ceil(span_days / size - 1e-3))
    return np.append(np.arange(n) * size, span_days)


def schedule_name(months: int, trend: bool = False) -> str:
    """A schedule's name in the AIC's table (``trend``: its pieces log-linear)."""
    return ("trend " if trend else "") + ("by month" if months == 1 else f"by {months} months")


def _lifetime_fields(x: np.ndarray, se: np.ndarray, weibull: bool) -> dict:
    """The lifetimes' estimates from the optimum ``x`` (log theta, log k if Weibull, log a) and its standard
    errors."""
    theta = _est(x[0], se[0])
    k = _est(x[1], se[1]) if weibull else None
    at_bound = x[-1] >= math.log(GAMMA_SHAPE_MAX) - 1e-6
    a = None if at_bound else _est(x[-1], se[-1])
    return dict(lifetime_scale_days=theta, lifetime_shape=k, gamma_shape=a, rate_per_server_day=_rate(theta, k))


def _rate(theta: Estimate, k: Estimate | None) -> Estimate:
    """A server's rate per up-day at frailty 1, 1 / (theta Gamma(1 + 1/k)), its interval from theta's (k's
    uncertainty apart: a small part when k is near 1)."""
    g = math.gamma(1.0 + 1.0 / (k.value if k else 1.0))
    return Estimate(1.0 / (theta.value * g), 1.0 / (theta.high * g),
                    1.0 / (theta.low * g) if theta.low > 0 else math.inf)


def _regimes(log: FaultLog, servers: int, weight: np.ndarray, life: dict, forced: bool = False) -> dict:
    """The regimes' family (simd.traces.regimes) beside the renewal ones: its AIC in ``aic["regimes"]``, and when it
    is the lowest, the lifetime fields it implies (exponential at the mean rate, no frailty) and its estimates;
    ``start``: its optimum's (ratio, calm days, stormy days), the joint fit's start (None: no fit; ``forced``: the
    start whatever the likelihood ratio says, and the family never written)."""
    p = regimes.pieces(log, servers, weight)
    r = regimes.fit(p, log.span_days)
    if r is None:
        return {}
    # the joint fit's start, when the regimes find faults clustered in time: their likelihood ratio against their
    # family at one rate (exponential lifetimes, no frailty) past the chi-square's 95% of their 3 more parameters
    steady = -(p.faults * math.log(p.faults / p.exposure) - p.faults)
    clustered = forced or 2 * (steady - r.nll) > _chi2_ppf(0.95, 3)
    start = (r.ratio, r.calm_days, r.stormy_days) if clustered else None
    aic = {**life["aic"], "regimes": 2 * r.nll + 2 * regimes.PARAMS}
    if forced or aic["regimes"] >= life["aic"][_written(life)]:
        return {"aic": aic, "start": start}
    se = _wald(regimes.nll_gradient(p), r.x)
    low, high = regimes.profile_ends(p, r, 0, se[0], Z) if math.isfinite(se[0]) and se[0] > 0 else (-math.inf,
                                                                                                   math.inf)
    rate = Estimate(math.exp(r.x[0]), math.exp(low), math.exp(min(high, 700)))
    above = _est(r.x[1], se[1])  # r - 1
    ratio = Estimate(1 + above.value, 1 + above.low, 1 + above.high)
    calm, stormy = _est(r.x[2], se[2]), _est(r.x[3], se[3])
    return dict(aic=aic, start=start, lifetime="exponential", lifetime_shape=None, gamma_shape=None,
                rate_per_server_day=rate, rate_schedule=(), unscheduled=None, schedule_months=0, schedule_trend=None,
                lifetime_scale_days=Estimate(1 / rate.value, 1 / rate.high, 1 / rate.low if rate.low > 0 else math.inf),
                regimes=_regime_estimates(ratio, calm, stormy, r.calm_days, r.stormy_days), regime_ratio=ratio,
                regimes_family="regimes")


def _written(life: dict) -> str:
    """The name in ``aic`` of the renewal family written (its schedule's too)."""
    if life.get("rate_schedule"):
        return f"{life['lifetime']}, {schedule_name(life['schedule_months'], life.get('schedule_trend') is not None)}"
    return life["lifetime"]


def _relapse(log: FaultLog, servers: int, weight: np.ndarray, optimum: tuple) -> tuple[float, dict] | None:
    """Repairs that do not hold (simd.traces.relapse) on the renewal family written (``optimum``: its parameters,
    its schedule's log multipliers, bounds, Weibull or not, the schedule's edges; the schedule's pieces fitted again
    with them, a trend's free): (its AIC, its fields: the lifetimes' estimates, the relapse's, the schedule's; its
    optimum), None when no interval follows a repair."""
    from simd.traces import relapse

    x, b, bounds, weibull, edges = optimum
    iv = relapse.intervals(_spans(log, servers, weight), servers, edges if len(edges) > 2 else None)
    if not iv.after.any():
        return None
    got = relapse.fit(iv, weibull, x, bounds, b, SCHEDULE_LOG_BOUNDS)
    se = np.sqrt(np.where(np.diag(got.cov) > 0, np.diag(got.cov), np.nan))
    n = len(x)  # the lifetimes' parameters, then logit p, log mu, the schedule's
    fields = _lifetime_fields(got.x[:n], se[:n], weibull)
    p = float(special.expit(got.x[n]))
    half = Z * se[n] if math.isfinite(se[n]) else math.inf
    fields.update(relapse_probability=Estimate(p, float(special.expit(got.x[n] - half)),
                                               float(special.expit(got.x[n] + half))),
                  relapse_mean_days=_est(got.x[n + 1], se[n + 1]))
    if len(b):  # the schedule refitted with them
        fields["rate_schedule"] = _multipliers(edges, relapse.multipliers(iv, got.x[n + 2:]), np.eye(len(b)),
                                               got.cov[n + 2:, n + 2:])
        fields["schedule_trend"] = None  # (a trend's pieces free again)
    return 2 * got.nll + 2 * len(got.x), fields, got.x


def _regime_estimates(ratio: Estimate, calm: Estimate, stormy: Estimate, dc: float, ds: float):
    """The regimes as written: the multipliers normalised to a stationary mean of 1, their intervals from the
    ratio's at the durations' estimates; the durations."""
    def normalised(x: float) -> tuple[float, float]:
        e = (dc + x * ds) / (dc + ds)
        return 1 / e, x / e

    (mc, ms), (mc_hi, ms_lo), (mc_lo, ms_hi) = normalised(ratio.value), normalised(ratio.low), normalised(ratio.high)
    return (Estimate(mc, mc_lo, mc_hi), calm), (Estimate(ms, ms_lo, ms_hi), stormy)


def _joint(log: FaultLog, servers: int, weight: np.ndarray, aic: dict, written: str, optimum: tuple, start: tuple,
           unscheduled: tuple | None, relapse_x: np.ndarray | None = None, forced: bool = False) -> dict:
    """The regimes joined with the renewal family ``written`` (its optimum ``optimum``; its schedule's pieces free,
    a trend's too), by simd.traces.joint from the regimes' optimum ``start``: its AIC in ``aic`` (the family's name
    and ", regimes"), and when it is the lowest, its estimates (``unscheduled``: the renewal family's without its
    schedule, the goodness of fit's column). With ``relapse_x`` (the relapse family's optimum: the lifetimes', logit
    p, log mu, the schedule's) the relapses joined too, from there (", relapse, regimes"); ``forced``: its estimates
    whatever the AIC says."""
    from simd.traces import joint

    x, b, bounds, weibull, edges = optimum
    spans = _spans(log, servers, weight)
    if relapse_x is not None:
        from simd.traces import relapse

        nb = len(x) + 2  # the lifetimes' parameters, logit p, log mu
        x0 = relapse_x
        xb = list(bounds) + [relapse.P_BOUNDS, (math.log(relapse.MU_MIN_DAYS), math.log(relapse.MU_MAX_DAYS))]
    else:
        nb = len(x)
        x0 = np.concatenate([x, b])
        xb = list(bounds)
    got = joint.fit(spans, servers, log.span_days, edges, weibull, x0, xb + [SCHEDULE_LOG_BOUNDS] * len(b),
                    (max(start[0], 2.0), start[1], start[2]), relapse=relapse_x is not None)
    months = round((edges[1] - edges[0]) / MONTH_DAYS) if len(edges) > 2 else 0
    name = ("weibull" if weibull else "exponential") + (f", {schedule_name(months)}" if months else "") + (
        ", relapse" if relapse_x is not None else "") + ", regimes"
    # the lowest of the families the flags compare: the renewal one written, the regimes', the relapse's, the
    # regimes joined (the relapses' with them are compared with all of those)
    best = min(v for k, v in aic.items() if k in (written, "regimes") or k.endswith((", relapse", ", regimes")))
    aic = {**aic, name: 2 * got.nll + 2 * got.params}
    if aic[name] >= best and not forced:
        return {"aic": aic}
    se = np.sqrt(np.where(np.diag(got.cov) > 0, np.diag(got.cov), np.nan))
    lr, (ldc, lds) = got.x[nb], got.d
    r, dc, ds = 1.0 + math.exp(lr), math.exp(ldc), math.exp(lds)
    e = (dc + r * ds) / (dc + ds)
    # the times as written (theta, and the short mean mu with relapses): the calm units' over the stationary mean
    # e; log t_w = log t_c - log e, its variance by the delta method over (log t_c, log(r - 1), log d_c, log d_s)
    xw = got.x[:nb].copy()
    sew = se[:nb].copy()
    for i in (0, nb - 1) if relapse_x is not None else (0,):
        grad = np.zeros(len(got.cov))
        grad[i] = 1.0
        grad[nb] = -ds * (r - 1.0) / (dc + r * ds)
        grad[-2] = -(dc / (dc + r * ds) - dc / (dc + ds))
        grad[-1] = -(r * ds / (dc + r * ds) - ds / (dc + ds))
        var = float(grad @ got.cov @ grad)
        xw[i] -= math.log(e)
        sew[i] = math.sqrt(var) if var > 0 else math.nan
    nl = len(x)  # the lifetimes' parameters
    fields = _lifetime_fields(xw[:nl], sew[:nl], weibull)
    above = _est(lr, se[nb])
    ratio = Estimate(1 + above.value, 1 + above.low, 1 + above.high)
    calm, stormy = _est(ldc, se[-2]), _est(lds, se[-1])
    if relapse_x is not None:
        p = float(special.expit(xw[nl]))
        half = Z * sew[nl] if math.isfinite(sew[nl]) else math.inf
        rel = dict(relapse_probability=Estimate(p, float(special.expit(xw[nl] - half)),
                                                float(special.expit(xw[nl] + half))),
                   relapse_mean_days=_est(xw[nl + 1], sew[nl + 1]))
    else:
        rel = dict(relapse_probability=None, relapse_mean_days=None)
    out = dict(aic=aic, **fields, lifetime="weibull" if weibull else "exponential", **rel,
               regimes=_regime_estimates(ratio, calm, stormy, dc, ds), regime_ratio=ratio, regimes_family=name,
               regimes_ess=got.ess, regimes_nll_error=got.nll_error)
    if len(edges) > 2:
        j = len(edges) - 2
        bj = got.x[nb + 1:]
        eb = np.exp(np.concatenate([[0.0], bj]))
        m = eb / ((np.diff(edges) / (edges[-1] - edges[0])) @ eb)
        cov_b = got.cov[nb + 1:nb + 1 + j, nb + 1:nb + 1 + j]
        out.update(rate_schedule=_multipliers(edges, m, np.eye(j), cov_b), schedule_trend=None,
                   schedule_months=months, unscheduled=unscheduled)
    else:
        out.update(rate_schedule=(), schedule_trend=None, schedule_months=0, unscheduled=None)
    return out


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
    quadrature's nodes weigh each expectation's term). The quadrature (the comment above PANELS) runs compiled,
    server by server (:func:`_quadrature`); :func:`log_frailty_numpy` is the same in numpy over every server at
    once, whose Newton iterations and panels cost a numpy call each over the arrays."""
    n, h = np.asarray(n, dtype=float), np.asarray(h, dtype=float)
    if k == 1.0:
        return log_frailty_numpy(n, h, a, k, grad)
    n, h, back = _alike(n, h)  # (servers without a fault: alike)
    top, total, moments = _quadrature(n, h, a, k, grad, _NODES, _WEIGHTS, _FALLS)
    value = (a * math.log(a) - special.gammaln(a) + top + np.log(total))[back]
    if not grad:
        return value
    e_log, e_w, e_wk, e_wk_log = (moments / total)[:, back]
    n, h = n[back], h[back]
    return value, -e_wk, n * e_log - h * e_wk_log, math.log(a) + 1.0 - special.digamma(a) + e_log - e_w


def _alike(n: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct pairs (n, h) and each server's index among them (np.unique over the pairs, by a lexsort: its
    ``axis=1`` sorts the pairs as records, ten times slower on a cluster's 18,688 servers)."""
    order = np.lexsort((h, n))
    ns, hs = n[order], h[order]
    new = np.empty(len(ns), dtype=bool)
    new[:1] = True
    new[1:] = (ns[1:] != ns[:-1]) | (hs[1:] != hs[:-1])
    back = np.empty(len(ns), dtype=np.int64)
    back[order] = np.cumsum(new) - 1
    return ns[new], hs[new], back


@njit()
def _quadrature(n, h, a, k, grad, nodes, weights, falls):
    """:func:`log_frailty_numpy`'s quadrature, server by server: per server the integrand's log at its mode
    (``top``), the integral over exp(g - top) (``total``) and, with ``grad``, the integrals of it times log w, w,
    w**k and w**k log w (``moments``, 4 x servers)."""
    m = len(n)
    top_out = np.empty(m)
    total_out = np.empty(m)
    moments = np.zeros((4, m))
    edges = np.empty(PANELS)
    for i in range(m):
        r = a + k * n[i]
        hi = h[i]
        u = math.log(r / a)
        if hi > 0:
            u = min(u, math.log(r / (hi * k)) / k)
        for _ in range(100):
            eu = a * math.exp(u)
            eku = hi * math.exp(k * u)
            step = (r - eu - k * eku) / (eu + k * k * eku)
            u = u + step
            if abs(step) <= 1e-14 * max(1.0, abs(u)):
                break
        top = r * u - a * math.exp(u) - hi * math.exp(k * u)
        sigma = 1.0 / math.sqrt(a * math.exp(u) + k * k * hi * math.exp(k * u))
        linear = min(math.log(LINEAR / (2 * a)), u)
        if hi > 0:
            linear = min(linear, math.log(LINEAR / (2 * hi)) / k)
        big = 2.0 * (abs(top) + DROP + r * (abs(u) + 50.0) + 1.0)
        roots = math.log(big / a)
        if hi > 0:
            roots = min(roots, math.log(big / hi) / k)
        right_of_roots = max(roots, u)
        reach = min(DROP, top - (r * linear - a * math.exp(linear) - hi * math.exp(k * linear)))
        total = 0.0
        m0 = m1 = m2 = m3 = 0.0
        for side in (-1.0, 1.0):
            scale = reach if side < 0 else DROP
            for p in range(PANELS):
                fall = scale * falls[p]
                target = top - fall
                # the start: the width's guess for the first edge, then the last edge's distance from the mode
                # times (p + 1) / p (the guess's own growth: the falls go as the panel's index squared)
                x = u + side * math.sqrt(2.0 * fall) * sigma if p == 0 else u + (edges[p - 1] - u) * (p + 1) / p
                x = min(x, right_of_roots) if side > 0 else max(x, linear - 1.0)
                for _ in range(100):
                    ex, ekx = a * math.exp(x), hi * math.exp(k * x)
                    step = (r * x - ex - ekx - target) / (r - ex - k * ekx)
                    x = x - step
                    if side < 0:
                        x = max(x, linear - 1.0)
                    if abs(step) <= 1e-11 * max(1.0, abs(x)):
                        break
                if side < 0:
                    x = max(x, linear)
                edges[p] = x
            for p in range(PANELS):
                e0 = u if p == 0 else edges[p - 1]
                e1 = edges[p]
                mid = (e0 + e1) / 2
                half = abs(e1 - e0) / 2
                for q in range(len(nodes)):
                    at = mid + half * nodes[q]
                    e, ek = math.exp(at), math.exp(k * at)
                    f = math.exp(r * at - a * e - hi * ek - top) * weights[q] * half
                    total += f
                    if grad:
                        m0 += f * at
                        m1 += f * e
                        m2 += f * ek
                        m3 += f * ek * at
            if side < 0:  # the linear tail, in closed form
                lo = edges[PANELS - 1]
                edge = math.exp(r * lo - a * math.exp(lo) - hi * math.exp(k * lo) - top)
                slope = r - a * math.exp(lo) - k * hi * math.exp(k * lo)
                total += edge / slope
                if grad:
                    m0 += edge / slope * (lo - 1.0 / slope)
                    m1 += edge * math.exp(lo) / (slope + 1.0)
                    m2 += edge * math.exp(k * lo) / (slope + k)
                    m3 += edge * math.exp(k * lo) / (slope + k) * (lo - 1.0 / (slope + k))
        top_out[i] = top
        total_out[i] = total
        moments[0, i] = m0
        moments[1, i] = m1
        moments[2, i] = m2
        moments[3, i] = m3
    return top_out, total_out, moments


def log_frailty_numpy(n: np.ndarray, h: np.ndarray, a: float, k: float, grad: bool = False):
    """:func:`log_frailty` in numpy, every server at once (bench/trace.py times the two side by side; the
    tests check they agree).

    Per server, ``log E[w**(k n) exp(-w**k h)]`` for w ~ Gamma(a, 1/a): the frailty integrated out of a server's
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


def _repairs(days: np.ndarray, open_days: np.ndarray | None = None) -> dict:
    """The repair laws fitted to the closed repairs ``days`` and the repairs still open at the log's end
    (``open_days``: how long each has lasted), right-censored in each law's likelihood: the exponential's mean is
    the repairs' total time over the closed ones, the lognormal's a mixture of one kind (mixture.fit, Wald intervals;
    without an open repair its closed form, t and chi-square intervals), the mixtures' their censored likelihood. A
    repair left out of the fit would bias the laws to the short repairs, the long kind losing the share of its
    repairs that a log's end leaves open (its weight 6% low of itself with a mean of 24 days over a 350-day log)."""
    cens = open_days[open_days > 0] if open_days is not None else np.zeros(0)
    n = len(days)
    mean = float(days.sum() + cens.sum()) / n if n else 0.0
    exp_ci = Estimate(mean, 2 * n * mean / _chi2_ppf(0.975, 2 * n), 2 * n * mean / _chi2_ppf(0.025, 2 * n)) \
        if n else Estimate(0.0, 0.0, 0.0)
    aic = {"exponential": 2 * (n * math.log(mean) + n) + 2 if n and mean > 0 else math.inf}
    positive = np.log(days[days > 0])
    m = len(positive)
    median = sigma = None
    one = mixture.fit(days, 1, censored=cens) if len(cens) and m >= 2 and positive.std() > 0 else None
    if one is not None:
        median = Estimate(one.medians[0].value, one.medians[0].low, one.medians[0].high)
        sigma = Estimate(one.sigmas[0].value, one.sigmas[0].low, one.sigmas[0].high)
        aic["lognormal"] = one.aic
        if m < n:  # compare on the same repairs
            p_days = days[days > 0]
            aic["exponential"] = 2 * (m * math.log((p_days.sum() + cens.sum()) / m) + m) + 2
    elif m >= 2 and positive.std() > 0:  # (repairs all of one length: no lognormal's likelihood is finite)
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
            aic["exponential"] = 2 * (m * math.log((p_days.sum() + cens.sum()) / m) + m) + 2
    mixtures = {}
    if median is not None:  # (a lognormal to compare with: some repairs of different lengths)
        for k in MIXTURE_COMPONENTS:
            got = mixture.fit(days, k, censored=cens)
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
