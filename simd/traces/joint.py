"""Regimes joined with the renewal lifetimes, fitted jointly (docs/traces.md, "Regimes with the lifetimes"): the
engine's regimes (a calm and a stormy regime common to the cluster, a time change of every server's age), Weibull
lifetimes renewed at repair, the gamma frailty and the rate schedule, all at once, by Monte Carlo EM.

The model is the engine's (simd.engine.servers, "Operational time"): a server ages ``m(t) = m_regime(t) *
m_schedule(t)`` per day, its lifetime Weibull (scale theta, shape k) divided by its frailty w ~ Gamma(a, 1/a) in
that operational time. Given the regime path, the log's likelihood is the renewal fit's (fit._nll over each up
interval's operational length, each fault's density times ``m`` at it: what fit.schedule_likelihood computes for
a schedule); the path is integrated out by Monte Carlo. Why not the forward algorithm (regimes.py): a server's
frailty and its Weibull age tie its faults to its whole history, so the likelihood is no product over pieces of
time. Why Monte Carlo EM and not a composite likelihood: a composite (say the per-server likelihood with its own
path, or the regimes' MMPP beside the renewal fit) either loses the path's sharing across servers, the very
clustering, or counts the faults twice, and its intervals need a sandwich that its dependence makes unreliable;
EM keeps the exact likelihood and gets intervals by Louis' identity.

- **The path on a grid**: the log's span in :data:`STEPS` steps of ``h`` days, the regime constant within a step,
  the chain leaving calm and stormy with the per-step probabilities ``1 - exp(-h / d)`` (the engine's own chain
  is per step of compute: its geometric stretches of mean ``d``; the grid's ``h`` is 8 minutes on a year's log,
  small against the storms a log can tell, whose starts and ends it rounds by at most a step).
- **E-step**: paths drawn by forward filtering, backward sampling from a proposal: the regimes' MMPP whose intensity
  per step is the current model's without regimes (each server up adds its baseline cumulative hazard at its age
  in the schedule's time, times its frailty's posterior ``E[w**k]``), each path weighted by the exact
  likelihood over the proposal's (self-normalised importance weights; their effective count is reported).
- **M-step**: the lifetimes' parameters, the stormy over calm ratio ``r`` and the schedule's log multipliers by
  L-BFGS-B over the weighted paths (each path's intervals split into calm and stormy days per schedule piece: the
  operational length ``(O + (r - 1) S) @ m``, the analytic gradient of fit._nll through it), the mean durations by
  the weighted paths' transitions.
- **Likelihood** (for the AIC): the proposal's normaliser (the forward pass's) times the mean importance weight,
  an unbiased estimate of the likelihood (its log's Monte Carlo error reported); **intervals**: Louis' identity, the
  observed information as the weighted complete-data information less the covariance of the complete-data scores
  over the paths, Wald on the logarithms (``r - 1``'s for the ratio); with the relapses (RelapseJoint, more
  iterations: RELAPSE_ITERATIONS) plus the last iterate's Monte Carlo variance, the iterates' covariance over the
  second half of the iterations (:func:`fit`).

Parameters (logs): theta in the calm regime's units, k (Weibull), a, ``r - 1``, the schedule's ``b_2 .. b_J``, the
calm and stormy mean days. Written as the engine reads them: the regimes' multipliers normalised to a stationary
mean of 1 (``m_c = 1 / E``, ``m_s = r / E``, ``E = (d_c + r d_s) / (d_c + d_s)``) and theta at that mean, ``theta
/ E``, so the written rate is the long-run rate.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from simd.engine import njit
from simd.traces import mixture

STEPS = 1 << 16  # the grid's steps over the span (a year: 8 minutes each)
PATHS = 16  # paths an EM iteration draws
FINAL_PATHS = 256  # paths of the last E-step: the likelihood and the intervals
HESSIAN_PATHS = 32  # at most so many of them: the intervals' (_louis)
ITERATIONS = 6  # EM iterations
# EM iterations with the relapses (RelapseJoint): started at the MMPP's storms (short: a relapse's quick repeat looks
# like one), the durations drift towards the optimum for 15 to 20 iterations, each path's transitions moving them
# a little (the storms' boundaries are most of what the paths leave unknown); after 6 the stormy days were 29%
# short of the truth on average over 80 engine logs, after 16 16% (scripts/joint_intervals.py, docs/traces.md,
# "Relapses and regimes at once": a cost of 0.35 CPU s an iteration on InfiniteHBD)
RELAPSE_ITERATIONS = 16
M_STEP_ITERATIONS = 15  # L-BFGS-B's iterations in an M-step (from the last optimum)
RATIO_BOUNDS = (-6.0, math.log(1e3))  # log(r - 1)
SEED = 20_241  # the draws' seed: a log's fit is a function of the log


@njit()
def _ffbs(lam, lam_s, log_fault, p_cs, p_sc, pi_s, u):
    """The forward filter over the grid (emission ``exp(-lam)`` calm, ``exp(-lam_s + log_fault)`` stormy) and a
    backward sample per row of ``u`` (uniforms, one per step): (log normaliser, paths 0/1)."""
    g = len(lam)
    alpha = np.empty((g, 2))
    x, y = 1.0 - pi_s, pi_s
    log_z = 0.0
    for j in range(g):
        if j:
            x, y = x * (1.0 - p_cs) + y * p_sc, x * p_cs + y * (1.0 - p_sc)
        ec = -lam[j]
        es = -lam_s[j] + log_fault[j]
        top = max(ec, es)
        x *= math.exp(ec - top)
        y *= math.exp(es - top)
        s = x + y
        x /= s
        y /= s
        log_z += top + math.log(s)
        alpha[j, 0] = x
        alpha[j, 1] = y
    k = u.shape[0]
    paths = np.zeros((k, g), dtype=np.int8)
    for i in range(k):
        z = 1 if u[i, g - 1] < alpha[g - 1, 1] else 0
        paths[i, g - 1] = z
        for j in range(g - 2, -1, -1):
            if z == 1:
                pc, ps = alpha[j, 0] * p_cs, alpha[j, 1] * (1.0 - p_sc)
            else:
                pc, ps = alpha[j, 0] * (1.0 - p_cs), alpha[j, 1] * p_sc
            z = 1 if u[i, j] * (pc + ps) < ps else 0
            paths[i, j] = z
    return log_z, paths


@njit()
def _hazard(start, end, weight, clock, mean, h, theta, k, r, steps):
    """Per grid step, calm and stormy: the baseline cumulative hazard (scale ``theta``, shape ``k``) that the up
    intervals add in it, each times its ``weight``. Ages run on ``clock`` (its value at each grid point: the
    schedule's operational time times the regimes' stationary ``mean``, the storms expected), a step adding its
    clock length over ``mean`` when calm, ``r`` times that when stormy (the step's storm alone). An interval is
    walked in blocks of steps growing with its age (an eighth of it, at most 256 steps), a block's steps taken at
    its middle age: a Weibull hazard changes by a bounded factor over such a block, and the proposal needs no more
    (the importance weights are exact)."""
    calm = np.zeros(steps)
    stormy = np.zeros(steps)
    for i in range(len(start)):
        a, b = start[i], end[i]
        if not b > a:
            continue
        w = weight[i]
        ja = min(int(a / h), steps - 1)
        jb = min(int(b / h), steps - 1)
        ca = clock[ja] + (a / h - ja) * (clock[ja + 1] - clock[ja])
        prev_age = 0.0
        j = ja
        while j <= jb:
            j2 = min(j + min(max(1, (j - ja) // 8), 256), jb + 1)
            t = min(b, j2 * h)
            c = min(j2, steps - 1) if j2 * h < b else jb
            age = clock[c] + (t / h - c) * (clock[c + 1] - clock[c]) - ca
            n = j2 - j
            step_age = max(age - prev_age, 0.0) / n
            lo = prev_age + (n // 2) * step_age  # the block's middle step's age
            base = (lo / theta) ** k if lo > 0 else 0.0
            inc = w * (((lo + step_age / mean) / theta) ** k - base)
            storm = w * (((lo + r * step_age / mean) / theta) ** k - base)
            for q in range(j, j2):
                calm[q] += inc
                stormy[q] += storm
            prev_age = age
            j = j2
    return calm, stormy


@dataclass
class Paths:
    """What the M-step reads of K paths: per path the intervals' stormy days per schedule piece (K x intervals x
    pieces), the weighted faults in storms, the transitions' counts ((calm, stormy) at the start, calm-calm,
    calm-stormy, stormy-calm, stormy-stormy) and the proposal's log emission."""

    stormy: np.ndarray
    faults_stormy: np.ndarray
    counts: np.ndarray
    log_emission: np.ndarray
    log_z: float
    paths: np.ndarray  # K x steps, 0/1
    log_prior: np.ndarray  # each path's log prior at the draw's (d): the proposal's, q = prior emission / Z


class Joint:
    """The joint model on a log's up intervals (fit._spans) and a schedule's edges (the span alone: none)."""

    def __init__(self, spans, servers: int, span: float, edges: np.ndarray, weibull: bool, steps: int = STEPS):
        from simd.traces import fit as _fit

        self._nll_of = _fit._nll
        self.log_frailty = _fit.log_frailty
        self.owner, self.start, self.end, self.done, self.n = spans
        self.servers, self.span, self.edges, self.weibull = servers, span, edges, weibull
        self.steps = steps
        self.h = span / steps
        lengths = np.diff(edges)
        self.share = lengths / span
        lo = np.maximum(self.start[:, None], edges[None, :-1])
        hi = np.minimum(self.end[:, None], edges[None, 1:])
        self.lo, self.hi = lo, np.maximum(hi, lo)
        self.overlap = self.hi - self.lo
        counted = self.done > 0
        piece = np.clip(np.searchsorted(edges, self.end, "left") - 1, 0, len(lengths) - 1)
        self.c = np.bincount(piece[counted], weights=self.done[counted], minlength=len(lengths))
        self.fault_step = np.minimum((self.end[counted] / self.h).astype(np.int64), steps - 1)
        self.fault_weight = self.done[counted]
        self.fault_age = (self.end - self.start)[counted]  # clock days from the interval's start to its fault
        self.free = len(lengths) - 1
        self.last_d = None
        self.base = 3 if weibull else 2  # log theta, (log k), log a

    # the parameters: x = (base..., log(r - 1), b_2 .. b_J), d = (log d_c, log d_s)
    def multipliers(self, b: np.ndarray) -> np.ndarray:
        eb = np.exp(np.concatenate([[0.0], b]))
        return eb / (self.share @ eb)

    def hold(self, x: np.ndarray, p: Paths, rows) -> None:
        """Before evaluating the paths ``rows`` of ``p`` near ``x`` many times (an M-step, Louis' Hessian): what
        their likelihoods can keep from ``x`` (RelapseJoint: the quadrature's panels); ``()``: none kept."""

    def draw(self, x: np.ndarray, d: np.ndarray, k_paths: int, rng: np.random.Generator) -> Paths:
        """K paths from the proposal at (x, d)."""
        lam, lam_s, log_fault = self.emission = self.proposal(x, d)
        r = 1.0 + math.exp(x[self.base])
        dc, ds = math.exp(d[0]), math.exp(d[1])
        p_cs, p_sc = -math.expm1(-self.h / dc), -math.expm1(-self.h / ds)
        log_z, paths = _ffbs(lam, lam_s, log_fault, p_cs, p_sc, ds / (dc + ds),
                             rng.random((k_paths, self.steps)))
        return self._paths(paths, lam, lam_s, log_fault, log_z, r, d)

    def _at(self, x: np.ndarray, d: np.ndarray, mean: float | None):
        """A proposal's parameters at (x, d), its own and its subclass's: the lifetimes' (log scale) vector, the
        storm's ratio, the scale, the shape, the schedule's multipliers, the stormy regime's mean days, the clock's
        pace (``mean``, or the regimes' stationary mean multiplier at (x, d)) and the clock along it."""
        base, r = x[:self.base], 1.0 + math.exp(x[self.base])
        theta, k = math.exp(base[0]), (math.exp(base[1]) if self.weibull else 1.0)
        m = self.multipliers(x[self.base + 1:])
        dc, ds = math.exp(d[0]), math.exp(d[1])
        mean = (dc + r * ds) / (dc + ds) if mean is None else mean
        return base, r, theta, k, m, ds, mean, self.clock(m, mean)

    def proposal(self, x: np.ndarray, d: np.ndarray, mean: float | None = None) -> tuple[np.ndarray, np.ndarray,
                                                                                         np.ndarray]:
        """The proposal's emissions at (x, d), per step: the calm and stormy hazards, a storm's log factor of the
        faults in it (``mean``: the clock's pace, the regimes' stationary mean multiplier; None: at (x, d))."""
        base, r, theta, k, m, ds, mean, clock = self._at(x, d, mean)
        a = math.exp(base[-1])
        # each server's E[w**k] given its faults and its cumulative hazard along that clock
        every = (self.overlap @ m) * mean
        z = (every / theta) ** k
        hh = np.bincount(self.owner, weights=z, minlength=self.servers)
        _, dh, _, _ = self.log_frailty(self.n, hh, a, k, grad=True)
        # the intervals alike (a cluster's servers up the whole span without a fault) as one, their weights summed
        (lo, hi), back = np.unique(np.stack([self.start, self.end]), axis=1, return_inverse=True)
        lam, lam_s = _hazard(lo, hi, np.bincount(back.reshape(-1), weights=-dh[self.owner]), clock, mean, self.h,
                             theta, k, r, self.steps)
        # a fault in a storm: its density times r, and its age lengthened by the storm's part of it (taken as the
        # last min(age, d_s) of it, the rest at the expected clock's pace), the Weibull hazard's (k - 1) log of that
        longer = self.storm_ages(ds, r, mean)
        log_fault = np.bincount(self.fault_step, weights=self.fault_weight * (math.log(r) + (k - 1.0) * longer),
                                minlength=self.steps)
        return lam, lam_s, log_fault

    def clock(self, m: np.ndarray, mean: float) -> np.ndarray:
        """The operational clock at each grid point: the schedule's (multipliers ``m``) times the regimes'
        stationary ``mean`` multiplier (the storms expected; calm units)."""
        grid = np.arange(self.steps + 1) * self.h
        piece_clock = np.concatenate([[0.0], np.cumsum(np.diff(self.edges) * m)])
        j = np.clip(np.searchsorted(self.edges, grid, "right") - 1, 0, len(m) - 1)
        return (piece_clock[j] + (grid - self.edges[j]) * m[j]) * mean

    def storm_ages(self, ds: float, r: float, mean: float) -> np.ndarray:
        """Per fault, the log of how much a storm lengthens its interval's operational length: the storm's part
        taken as the interval's last min(age, d_s), the rest at the expected clock's pace."""
        ages = self.fault_age
        last = np.minimum(ages, ds)
        rest = mean * (ages - last)
        return np.log((rest + r * last) / np.maximum(rest + last, 1e-300))

    def _paths(self, paths, lam, lam_s, log_fault, log_z, r, d) -> Paths:
        """The M-step's reading of the paths drawn (0/1, K x steps) under the emissions given."""
        k_paths = len(paths)
        stormy_days = np.concatenate([np.zeros((k_paths, 1)), np.cumsum(paths, axis=1) * self.h], axis=1)

        def at(t: np.ndarray) -> np.ndarray:  # stormy days before t, per path (t: any shape)
            jj = np.minimum((t / self.h).astype(np.int64), self.steps - 1)
            return stormy_days[:, jj] + (t - jj * self.h)[None] * paths[:, jj]

        stormy = at(self.hi) - at(self.lo)
        in_storm = paths[:, self.fault_step].astype(float)
        faults_stormy = in_storm @ self.fault_weight
        first = paths[:, 0]
        trans = paths[:, :-1] * 2 + paths[:, 1:]
        counts = np.stack([1 - first, first] + [(trans == v).sum(axis=1) for v in range(4)], axis=1).astype(float)
        log_emission = -lam.sum() - paths @ (lam_s - lam) + paths @ log_fault
        return Paths(np.clip(stormy, 0.0, None), faults_stormy, counts, log_emission, log_z, paths,
                     self.path_prior(d, counts))

    def nll(self, x: np.ndarray, p: Paths, i: int, grad: bool = False):
        """Path i's negative complete-data log-likelihood of the lifetimes (the path's own prior apart)."""
        base, lr = x[:self.base], x[self.base]
        r = 1.0 + math.exp(lr)
        b = x[self.base + 1:]
        m = self.multipliers(b)
        w = self.overlap + (r - 1.0) * p.stormy[i]
        every = w @ m
        log_m = float(self.c @ np.log(m)) + p.faults_stormy[i] * math.log(r)
        if not grad:
            return self._nll_of(base, self.weibull, False, every, self.owner, self.done, self.n, self.servers) - log_m
        value, g, d_every = self._nll_of(base, self.weibull, True, every, self.owner, self.done, self.n,
                                         self.servers, by_interval=True)
        gr = (r - 1.0) * float(d_every @ (p.stormy[i] @ m)) - p.faults_stormy[i] * (r - 1.0) / r
        total = self.c.sum()
        gb = m * (d_every @ w) - self.share * m * float(d_every @ every) - (self.c - total * self.share * m)
        return value - log_m, np.concatenate([g, [gr], gb[1:]])

    def chain_nll(self, x: np.ndarray):
        """The proposal's negative log marginal likelihood (the forward pass's) as a function of (log(r - 1),
        log d_c, log d_s), the rest of ``x`` held: the regimes' observed information in the MMPP that approximates
        the model (the emissions recomputed for each ratio, the ages' clock held at the estimate's pace: the
        ratio moves the storms' hazard, the scale the calm one's)."""
        cache: dict[float, tuple] = {}
        d = self.last_d
        r = 1.0 + math.exp(x[self.base])
        mean = (math.exp(d[0]) + r * math.exp(d[1])) / (math.exp(d[0]) + math.exp(d[1]))

        def nll(v: np.ndarray) -> float:
            key = float(v[0])
            if key not in cache:
                y = x.copy()
                y[self.base] = key
                cache[key] = self.proposal(y, d, mean)
            dc, ds = math.exp(v[1]), math.exp(v[2])
            log_z, _ = _ffbs(*cache[key], -math.expm1(-self.h / dc), -math.expm1(-self.h / ds), ds / (dc + ds),
                             np.zeros((0, self.steps)))
            return -log_z

        return nll

    def path_prior(self, d: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Each path's log prior (counts: K x 6) at mean days exp(d)."""
        dc, ds = math.exp(d[0]), math.exp(d[1])
        p_cs, p_sc = -math.expm1(-self.h / dc), -math.expm1(-self.h / ds)
        logs = np.array([math.log(dc / (dc + ds)), math.log(ds / (dc + ds)), -self.h / dc, math.log(p_cs),
                         math.log(p_sc), -self.h / ds])
        return counts @ logs

    def weights(self, x: np.ndarray, p: Paths) -> tuple[np.ndarray, np.ndarray]:
        """(the paths' log importance weights, self-normalised weights)."""
        lw = np.array([-self.nll(x, p, i) for i in range(len(p.faults_stormy))]) - p.log_emission
        w = np.exp(lw - lw.max())
        return lw, w / w.sum()

    def m_step(self, x: np.ndarray, d: np.ndarray, p: Paths, omega: np.ndarray, bounds) -> tuple[np.ndarray,
                                                                                                 np.ndarray]:
        # the heaviest paths holding 99% of the weight, reweighted (the others' terms change the optimum by less
        # than the draws' own noise)
        order = np.argsort(-omega)
        heaviest = order[:int(np.searchsorted(np.cumsum(omega[order]), 0.99)) + 1]
        kept = np.zeros_like(omega)
        kept[heaviest] = omega[heaviest]
        omega = kept / kept.sum()
        self.hold(x, p, heaviest)

        def f(y):
            v, g = 0.0, np.zeros(len(y))
            for i in heaviest:
                vi, gi = self.nll(y, p, i, grad=True)
                v += omega[i] * vi
                g += omega[i] * gi
            return v, g

        x = optimize.minimize(f, x, jac=True, method="L-BFGS-B", bounds=bounds,
                              options={"maxiter": M_STEP_ITERATIONS}).x
        self.hold(x, p, ())
        counts = omega @ p.counts
        d = optimize.minimize(lambda e: -self.path_prior(e, counts[None])[0], d, method="L-BFGS-B",
                              bounds=[(math.log(self.h), math.log(self.span) + 3)] * 2).x
        return x, d


class RelapseJoint(Joint):
    """The joint model with repairs that do not hold (the engine's servers.relapse with its regimes; simd.traces.
    relapse): given the regime path, the relapse family's likelihood (relapse.quadrature) over each interval's
    operational length, each fault's density times its regime's and piece's multipliers; the short lifetimes in
    the same operational time as the law's (the engine's). Parameters: log theta, (log k,) log a, logit p, log mu
    (the short mean, calm units), log(r - 1), the schedule's b's; the intervals by server and start (the relapse
    family's order: a server's first is of the law)."""

    def __init__(self, spans, servers: int, span: float, edges: np.ndarray, weibull: bool, steps: int = STEPS):
        from simd.traces import relapse

        owner, start, end, done, n = spans
        order = np.lexsort((start, owner))
        super().__init__((owner[order], start[order], end[order], done[order], n), servers, span, edges, weibull,
                         steps)
        self.relapse = relapse
        self.base = 5 if weibull else 4  # log theta, (log k), log a, logit p, log mu
        first = np.ones(len(self.owner), dtype=bool)
        first[1:] = self.owner[1:] != self.owner[:-1]
        self.iv = relapse.Intervals(x=self.end - self.start, done=np.where(self.end > self.start, self.done, 0.0),
                                    after=~first, owner=self.owner, servers=servers)
        self.alike = np.unique(np.stack([self.start, self.end]), axis=1, return_inverse=True)
        self.held: dict[tuple[int, int], np.ndarray] = {}

    def hold(self, x: np.ndarray, p: Paths, rows) -> None:
        """The quadrature's panels of the paths ``rows`` at ``x``, kept for their calls until the next hold (the
        coarse grid that finds them is half of a call's time; within an M-step's or a Hessian's moves the
        integrand stays inside them; the importance weights and the likelihood find theirs anew)."""
        self.held = {(id(p), int(i)): self.relapse.panels(x[:self.base], self._lengths(x, p, i)[0], self.weibull)
                     for i in rows}

    def _lengths(self, x: np.ndarray, p: Paths, i: int):
        """(the intervals at path i's operational lengths, their days by piece with the storms', multipliers)."""
        r = 1.0 + math.exp(x[self.base])
        m = self.multipliers(x[self.base + 1:])
        w = self.overlap + (r - 1.0) * p.stormy[i]
        return dataclasses.replace(self.iv, x=w @ m), w, m

    def nll(self, x: np.ndarray, p: Paths, i: int, grad: bool = False):
        """Path i's negative complete-data log-likelihood (the path's own prior apart)."""
        base, r = x[:self.base], 1.0 + math.exp(x[self.base])
        iv, w, m = self._lengths(x, p, i)
        every = iv.x
        log_m = float(self.c @ np.log(m)) + p.faults_stormy[i] * math.log(r)
        held = self.held.get((id(p), int(i)))
        if not grad:
            return -self.relapse.quadrature(base, iv, self.weibull, False, held) - log_m
        value, g, d_every = self.relapse.quadrature(base, iv, self.weibull, True, held)
        gr = (r - 1.0) * float(d_every @ (p.stormy[i] @ m)) - p.faults_stormy[i] * (r - 1.0) / r
        total = self.c.sum()
        gb = m * (d_every @ w) - self.share * m * float(d_every @ every) - (self.c - total * self.share * m)
        return -value - log_m, np.concatenate([g, [gr], gb[1:]])

    def proposal(self, x: np.ndarray, d: np.ndarray, mean: float | None = None) -> tuple[np.ndarray, np.ndarray,
                                                                                         np.ndarray]:
        """The proposal's emissions (Joint.proposal's) with the relapses: each interval's expected hazard is its
        law's, weighted by ``E[(1 - s) w**k]``, plus its short part's (exponential of mean mu), weighted by
        ``E[s w]`` (relapse.hazard_weights: w its server's frailty, its posterior at the clock's expected pace; s
        the interval's posterior share of a short lifetime), a calm step's with s at the interval's calm length, a
        stormy step's with s at its stormy length; a fault in a storm lengthens its Weibull age by its law's
        share. And the chord: at each interval's last step, a storm's factor makes the interval wholly stormy
        against wholly calm what the model's mixture makes it (0 where the interval cannot be short: a law's
        alone is additive), where shares held at one value would make it the tangent at no storm of a
        log-mixture convex in the stormy time (docs/traces.md, "Relapses and regimes at once")."""
        base, r, theta, k, m, ds, mean, clock = self._at(x, d, mean)
        mu = math.exp(base[-1])
        calm = self.overlap @ m  # each interval's length wholly calm (calm units)
        (law_c, short_c, _, t_c), (law_s, short_s, s_s, t_s) = self.relapse.hazard_weights(
            base, dataclasses.replace(self.iv, x=calm * mean), self.weibull, np.stack([calm, r * calm]))
        (lo, hi), back = self.alike
        back = back.reshape(-1)

        def hazard(weights, scale, shape, stormy):
            return _hazard(lo, hi, np.bincount(back, weights=weights), clock, mean, self.h, scale, shape, r,
                           self.steps)[stormy]

        lam = hazard(law_c, theta, k, 0) + hazard(short_c, mu, 1.0, 0)
        lam_s = hazard(law_s, theta, k, 1) + hazard(short_s, mu, 1.0, 1)
        longer = self.storm_ages(ds, r, mean) * (1.0 - s_s[self.done > 0])
        log_fault = np.bincount(self.fault_step, weights=self.fault_weight * (math.log(r) + (k - 1.0) * longer),
                                minlength=self.steps)
        done = self.iv.done
        h_c = law_c * (calm / theta) ** k + short_c * calm / mu
        h_s = law_s * (r * calm / theta) ** k + short_s * r * calm / mu
        chord = t_s + done * math.log(r) - t_c + h_s - h_c - done * k * math.log(r)
        last = np.minimum((self.end / self.h).astype(np.int64), self.steps - 1)
        return lam, lam_s, log_fault + np.bincount(last, weights=chord, minlength=self.steps)


@dataclass(frozen=True)
class JointFit:
    nll: float  # the estimated negative log-likelihood at the optimum
    nll_error: float  # its Monte Carlo standard error
    x: np.ndarray
    d: np.ndarray
    cov: np.ndarray  # over (x, d)
    ess: float  # the final importance weights' effective count (of FINAL_PATHS)
    params: int


def fit(spans, servers: int, span: float, edges: np.ndarray, weibull: bool, x0: np.ndarray, bounds: list,
        start: tuple[float, float, float], iterations: int | None = None, paths: int = PATHS,
        final_paths: int = FINAL_PATHS, steps: int = STEPS, seed: int = SEED, relapse: bool = False) -> JointFit | None:
    """The joint maximum likelihood from the renewal fit's optimum ``x0`` (base parameters then the schedule's
    b's; ``bounds`` theirs) and the regimes' start (ratio, calm days, stormy days); ``relapse``: with repairs that
    do not hold (:class:`RelapseJoint`; ``x0`` the relapse family's, its logit p and log mu among the base).
    ``iterations``: the EM's (None: ITERATIONS, RELAPSE_ITERATIONS with ``relapse``).

    With ``relapse`` the covariance holds the estimate's Monte Carlo variance too: with an effective count of one
    to four paths an iteration, the EM's iterate is a stochastic EM's, which moves about the optimum from one
    iteration to the next; the estimate is the last iterate, and its Monte Carlo variance is the iterates'
    covariance over the second half of the iterations (it widens the ratio's and the durations' standard errors by
    3% to 4%, the lifetimes' by at most 3%: medians over 80 engine logs)."""
    iterations = (RELAPSE_ITERATIONS if relapse else ITERATIONS) if iterations is None else iterations
    j = (RelapseJoint if relapse else Joint)(spans, servers, span, edges, weibull, steps)
    ratio, dc, ds = start
    x = np.concatenate([x0[:j.base], [math.log(max(ratio - 1.0, 1e-2))], x0[j.base:]])
    # the start's times in the calm regime's units, as the model holds them: ``x0``'s are the renewal fit's, at the
    # long-run rate, the calm units' over the start's stationary mean multiplier (the written times' relation,
    # fit._joint); left at the long-run rate, the first E-step's proposal holds the calm rate that mean too high,
    # draws too few storms, and the EM's first iterate leans high in the ratio and the calm days, from where it
    # comes back over more iterations than it runs (docs/traces.md, "Why the ratio leaned high")
    mean = (dc + (1.0 + math.exp(x[j.base])) * ds) / (dc + ds)
    x[0] += math.log(mean)
    if relapse:
        x[j.base - 1] += math.log(mean)  # mu, the short mean
    xb = list(bounds[:j.base]) + [RATIO_BOUNDS] + list(bounds[j.base:])
    d = np.array([math.log(dc), math.log(ds)])
    rng = np.random.default_rng(seed)
    iterates = []
    for _ in range(iterations):
        p = j.draw(x, d, paths, rng)
        _, omega = j.weights(x, p)
        x, d = j.m_step(x, d, p, omega, xb)
        iterates.append(np.concatenate([x, d]))
    p = j.draw(x, d, final_paths, rng)
    lw, omega = j.weights(x, p)
    top = lw.max()
    mean_w = np.exp(lw - top).mean()
    log_l = p.log_z + top + math.log(mean_w)
    err = float(np.exp(lw - top).std(ddof=1) / math.sqrt(len(lw)) / mean_w)
    ess = float(1.0 / (omega ** 2).sum())
    info = _louis(j, x, d, p, omega)
    j.last_d = d
    curvature = _hessian(j.chain_nll(x), np.concatenate([[x[j.base]], d]))
    cov = covariance(info, curvature, j.base)
    if relapse and iterations >= 4:
        cov = cov + np.cov(np.array(iterates[iterations // 2:]), rowvar=False)
    return JointFit(-log_l, err, x, d, cov, ess, len(x) + 2)


def covariance(info: np.ndarray, curvature: np.ndarray, b: int) -> np.ndarray:
    """The covariance over (x, d) from Louis' observed information ``info`` and the curvature of the approximating
    MMPP's marginal likelihood in the regimes (``curvature``, over log(r - 1), log d_c, log d_s; ``x[b]`` is
    log(r - 1)): the information with its regimes' block the MMPP's, inverted whole, so that the regimes' variances
    are their marginal ones, the lifetimes' and the schedule's uncertainty in them through Louis' cross terms (the
    regimes' block alone is their variance given the lifetimes: a third too narrow over the engine's logs,
    docs/traces.md, "Regimes with the lifetimes"). Louis' own regimes' block is left out: the paths drawn do not
    hold enough storms of every length and strength for the regimes' missing information (it came out too narrow
    or indefinite), where the forward algorithm integrates every path. Where the whole is not positive definite,
    the two blocks apart (their covariance 0); where the curvature is not either (a log far from the model:
    InfiniteHBD's), the ratio's with the lifetimes from Louis' and the durations' from the curvature alone."""
    n = len(info)
    regime = np.array([b, n - 2, n - 1])
    rest = np.delete(np.arange(n), regime)
    whole = info.copy()
    whole[np.ix_(regime, regime)] = curvature
    cov = _inverse(whole)
    if np.all(np.isfinite(cov)):
        return cov
    cov = np.zeros((n, n))
    block = _inverse(curvature)
    if np.all(np.isfinite(block)):
        cov[np.ix_(rest, rest)] = _inverse(info[np.ix_(rest, rest)])
        cov[np.ix_(regime, regime)] = block
    else:
        cov[:n - 2, :n - 2] = _inverse(info[:n - 2, :n - 2])
        cov[n - 2:, n - 2:] = _inverse(curvature[1:, 1:])
    return cov


def _louis(j: Joint, x: np.ndarray, d: np.ndarray, p: Paths, omega: np.ndarray) -> np.ndarray:
    """The observed information of (x, d): minus the Hessian of the importance sampling
    estimate of the log-likelihood over the drawn paths, ``log sum_i exp(l_i(phi)) / q_i`` (l_i the path's
    complete-data log-likelihood, prior included), by central differences of its gradient, the weighted mean of the
    paths' complete-data scores with the weights at phi: Louis' identity, its two terms (the complete-data
    information and the scores' covariance) from the same paths, so that it is the Hessian of one function. The
    paths: the heaviest holding 99% of the weight, at most HESSIAN_PATHS (the rest are left out of the sum)."""
    nx = len(x)
    order = np.argsort(-omega)
    rows = order[:min(int(np.searchsorted(np.cumsum(omega[order]), 0.99)) + 1, HESSIAN_PATHS)]
    counts = p.counts[rows]
    j.hold(x, p, rows)

    def gradient(phi: np.ndarray) -> np.ndarray:
        y, e = phi[:nx], phi[nx:]
        values, scores = [], []
        for i in rows:
            v, g = j.nll(y, p, i, grad=True)
            values.append(-v)
            scores.append(-g)
        step = 1e-5
        prior = j.path_prior(e, counts)
        gd = np.stack([(j.path_prior(e + step * np.eye(2)[q], counts) - j.path_prior(e - step * np.eye(2)[q],
                                                                                    counts)) / (2 * step)
                       for q in range(2)], axis=1)
        lw = np.array(values) + prior - p.log_emission[rows] - p.log_prior[rows]
        w = np.exp(lw - lw.max())
        w /= w.sum()
        return w @ np.concatenate([np.array(scores), gd], axis=1)

    info = -mixture.hessian(gradient, np.concatenate([x, d]))
    j.hold(x, p, ())
    return info


def _hessian(f, x: np.ndarray, step: float = 1e-3) -> np.ndarray:
    """The Hessian of ``f`` at ``x`` by central differences."""
    n = len(x)
    e = np.eye(n) * step
    out = np.zeros((n, n))
    for i in range(n):
        for q in range(i, n):
            out[i, q] = out[q, i] = (f(x + e[i] + e[q]) - f(x + e[i] - e[q]) - f(x - e[i] + e[q])
                                     + f(x - e[i] - e[q])) / (4 * step * step)
    return out


def _inverse(info: np.ndarray) -> np.ndarray:
    """The covariance from an observed information (nan where it is not positive definite: no interval)."""
    try:
        np.linalg.cholesky(info)
        return np.linalg.inv(info)
    except np.linalg.LinAlgError:
        return np.full_like(info, np.nan)
