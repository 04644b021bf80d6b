"""Servers (docs/servers.md): a job's GPUs grouped in servers, each failing at its own rate, with
lifetimes that need not be memoryless.

A job runs on ``S = n_gpus / gpus_per_server`` servers. A server's GPUs fail at the scenario's per-GPU rate times
its multiplier: 1, or ``lemon_multiplier`` for ``floor(lemon_fraction * S + 1/2)`` lemons spread evenly over the
servers (server ``i`` is one when ``floor((i + 1) f + 1/2) > floor(i f + 1/2)``: AIReSim's systematic failures;
Kokolis et al., HPCA'25, "lemon nodes"). With ``rate_shape`` a > 0 each server's rate is further multiplied by
its own draw of a gamma distribution of mean 1 and shape a (variance 1/a), fixed for the simulation: a server's
failure count over a span is then negative binomial, over-dispersed as a fault log's per-server counts are
(``simd trace fit`` fits a). The gamma multiplies the rate of the server's lifetime (its scale divides by it).

A server ages while the job computes (seed 000's per-step hazard counts executed steps): its exponential
lifetime has rate ``lambda = -log(1 - p)`` per step, ``p = 1 - (1 - p_gpu * m) **
gpus_per_server`` its per-step probability, so that a step fails with seed 000's probability. Weibull (shape
``k``) and lognormal (log-sd ``sigma``) lifetimes have the same mean ``1 / lambda``. A lifetime ``L`` (steps,
continuous) that starts after executed step ``g0`` ends in step ``g0 + ceil(L)``; a server is as good as new
after each failure (a renewal process), every server new when the simulation (or a drill's epoch) starts.
Several servers failing in one step stop the job once (one interruption, its cause drawn as without servers);
each of them is renewed, and counted in ``Totals.server_failures``.

Identical servers with exponential lifetimes are seed 000's process exactly: ``compile_spec`` then gives the
plain plan (``Plan.servers == 0``), so such a scenario is bit-identical to the same scenario without servers.

The gamma multiplier of server ``i``: Marsaglia and Tsang's method (ACM TOMS 26(3), 2000; shape a < 1 by
``G(a) = G(a + 1) U**(1/a)``) on draws ``64 i ..`` of the stream "server-rate" (not renewed by a drill: a server's
rate is its own), normal deviates by the inverse CDF (kernel.late.inv_cdf); kept in ``State.srv_mult`` as a
fixed-point integer (units of 2**-32). The engine draws lifetime ``j`` of a replica (its
``State.lifetimes``-th) from uniform ``j`` of the stream "lifetime" by inverse transform (``kernel/servers.py``):
the servers' first lifetimes are draws 0 .. S - 1, in server order, and each failure's renewal the next, the
servers failing in one step in the order of their index. The per-step oracle (oracle.py) draws a Bernoulli per
server and step with the conditional hazard ``1 - Sv(a + 1) / Sv(a)`` of its age ``a`` (Sv the survival
function) instead: equal in distribution.

Operational time (faults clustered in time; rates that change over the job's time): with ``regimes`` or
``rate_schedule`` a server ages in operational time, executed step ``s`` adding ``m(s)`` to every server's age
instead of 1, ``m(s) = m_regime(s) * m_schedule(s)`` (a time change, ``tau(g) = m(1) + .. + m(g)``): a lifetime
``L`` drawn as above (operational steps) that starts after executed step ``g0`` ends in the first step ``g`` with
``tau(g) - tau(g0) >= L``. The regime is a two-state Markov chain over executed steps (calm, stormy: a
Markov-modulated rate), common to every server of the replica, so the failures of all its servers crowd into
the stormy stretches: a regime of mean ``d`` days lasts a geometric number of steps, ``ceil(-d' log u)`` with
``d'`` its mean in steps (the per-step chain's sojourn exactly: it leaves the regime with probability
``1 - exp(-1 / d')`` per step), the first regime stationary (stormy with probability ``q_c / (q_c + q_s)``, ``q``
the per-step probabilities of leaving). Draw 0 of the stream "regime" picks the first regime (stormy when
``u <= q_c / (q_c + q_s)``), draw ``j + 1`` the length of regime stretch ``j`` (the regimes alternate). The stream
is not renewed by a drill: the path is the replica's world, redrawn the same from its start when the servers start
new lifetimes. The schedule's piece ``k`` covers executed steps ``(s_k, s_(k + 1)]``, ``s_k = floor(day_k * 86400 /
step_seconds + 1/2)``. The engine keeps the replica's current regime stretch (State.regime) and walks the stretches
a lifetime spans (kernel.servers.operational_steps: O(the stretches it crosses) per lifetime); the oracle draws
the regime step by step and ages each server by ``m(s)`` with the conditional hazard ``1 - Sv(a + m) / Sv(a)``.
With regimes a lifetime that has not ended within REGIME_HORIZON = 2**31 executed steps of its start (68 years of
1 s steps; the walk stops at the first stretch's end past it), or could not even at the largest multiplier, never
ends, as any lifetime beyond 2**50 steps never does: a small gamma multiplier (a fitted frailty of shape ~0.4
draws some below 1e-8) would otherwise walk ~1e11 stretches for one lifetime. No job reaches it; the oracle's
jobs neither.

Relapses (a repair that does not hold; a fault log's server failing its own check within hours of its repair):
with ``relapse = (p, mu)`` each repair draws one uniform more of the stream "repair" (with pools, the fifth of its
draws, after the outcome; without pools, where a failed server is repaired at once, one per failed server that
goes down, in index order, when it is renewed), and with probability p the server's next lifetime (the one it
starts when it next joins the job) is exponential of mean ``mu`` hours of compute divided by its gamma multiplier
(as its law's scale is; a lemon's short lifetime is an ordinary server's), its uniform the lifetime stream's next
draw as any lifetime's, in operational time as any lifetime. The first lifetimes, a server that stays in the job
unrepaired (a missed diagnosis, a cause that takes no server down) and a lifetime after a short one are of the
law. The flag waits in State.srv_relapse (with pools: its repair, then the pools) until that lifetime starts.
``repair_fail`` (false_success) is another draw with another effect: a lemon whose repair fixes nothing stays a
lemon (its rate), where a relapse gives any server one short lifetime and then its law again. The per-step oracle
keeps which servers' current lifetime is short and gives them the exponential's hazard.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from simd.engine.fleet import per_gpu_step_probability

LIFETIMES = ("exponential", "weibull", "lognormal")  # as codes 0, 1, 2 in the kernel


@dataclass(frozen=True)
class Servers:
    """The job's servers: GPUs per server, the lemon servers, the lifetime distribution (``shape``: Weibull's k,
    lognormal's sigma; unused for exponential)."""

    gpus_per_server: int = 8
    lemon_fraction: float = 0.0
    lemon_multiplier: float = 1.0
    lifetime: str = "exponential"
    shape: float = 1.0
    rate_shape: float = 0.0  # the gamma shape of the servers' rate multipliers; 0: none
    # capacity (docs/servers.md): None = a failed server is repaired at once and rejoins (no pools)
    warm_standbys: int | None = None
    spares: int = 0
    spares_withheld: int = 0  # spares the job cannot take (lent to other work: a drill takes them away)
    preemption_seconds: float = 0.0  # taking a spare: the time to preempt the work that runs on it
    # re-scheduling the job on a new set of hosts: after an interruption that took a spare or waited for a repair
    # (the warm standbys ran out), the scheduler's host selection, once the last replacement is ready (AIReSim's
    # host_selection_time: 3 min when the standbys run out)
    host_selection_seconds: float = 0.0
    # the re-scheduling policy: False, the job restarts once its own servers are there; True ("gang", AIReSim's
    # host selection: a job starts only with its job_size + warm_standbys servers, airesim/params.py
    # total_servers_needed), a re-scheduling (the same interruptions as host_selection_seconds) also staffs the
    # warm standbys again, from the spares (each after its preemption) then from the repairs, and the restart waits
    # for the last of them
    gang: bool = False
    # a repair's duration: (distribution, scale seconds, sigma) as a late detector's latency (late.py: exponential
    # mean, lognormal median and sigma, uniform on [0, scale]); the automatic stage, escalated to a manual stage
    # with ``manual_probability`` (independent of the automatic stage's outcome, as AIReSim's paper model); each
    # stage reports success without fixing the fault with its probability (``repair_fail``: automatic, manual: the
    # last stage's counts). A true repair makes a lemon an ordinary server for good; a false one leaves it a lemon.
    repair: tuple[str, float, float] = ("exponential", 0.0, 0.0)
    # the automatic stage as a mixture (a fault log's repairs: a reboot, a part swap, a vendor's replacement; simd
    # trace fit): per component (weight, distribution, scale seconds, sigma) as ``repair``, the weights summing to
    # 1; non-empty, it replaces ``repair``. One uniform draws it (the same four draws per repair): the component
    # is the first whose cumulative weight reaches u, its time the inverse transform of u's place within it,
    # ``(u - W_{j-1}) / w_j``, uniform on (0, 1] given the component.
    repair_mixture: tuple[tuple[float, str, float, float], ...] = ()
    manual_probability: float = 0.0
    manual_repair: tuple[str, float, float] = ("exponential", 0.0, 0.0)
    repair_fail: tuple[float, float] = (0.0, 0.0)
    # diagnosis and retirement (pools only): a failing server is identified with probability ``diagnosis``
    # (else it stays in the job, no server goes to repair); an identified failure is pinned on another of the job's
    # servers, drawn at random, with probability ``misattribution`` (that healthy server goes to repair, the failing
    # one stays). A server blamed ``retire_after`` times (0: never retired) within ``retire_window_seconds``
    # (the blames' simulated times) is retired instead of repaired, unless the cluster would then hold fewer servers
    # than the job.
    diagnosis: float = 1.0
    misattribution: float = 0.0
    retire_after: int = 0
    retire_window_seconds: float = 0.0
    # correlated failures: bursts that strike several of the job's servers in one step, a Poisson
    # process of ``burst_per_day`` per day of the job's compute; a burst strikes 2 + a geometric number of servers
    # of mean ``burst_mean_size`` (chosen uniformly among the job's), or with ``burst_domain`` > 0 every job server
    # of one failure domain (servers i // burst_domain, the domain of a job server drawn uniformly: a rack, a
    # power feed). The struck servers fail in that step as if their lifetimes had ended (one interruption).
    burst_per_day: float = 0.0
    burst_mean_size: float = 2.0
    burst_domain: int = 0
    # replay: a fault log's faults instead of drawn lifetimes. Per log server, the start times (seconds
    # since the log's start, sorted) of its faults; ``replay_span_seconds`` the log's span (its period). The log's
    # clock is taken as the job's compute clock (lifetimes count executed steps): a fault at t strikes in executed
    # step ceil(t / step_seconds) (at least 1). Cluster server i replays log server i mod N, copy i // N of the log
    # shifted by (i // N) / C of its span (C copies: ceil(cluster / N)), and the log repeats with its span: a job
    # longer than the log, or with more servers, meets every fault once per repetition, spread in time. A fault
    # that falls while its server is not running (a standby, a spare, in repair) does not happen.
    replay: tuple[tuple[float, ...], ...] = ()
    replay_span_seconds: float = 0.0
    # the log's own repair times (with pools): per log server, each fault's repair in seconds (its end less its
    # start; nan: still open at the log's end), as ``replay``. A server a replayed fault sends to repair is back
    # that long after the end of its step, the longest of the faults of its step (the log's server is down until
    # the last of them ends), with no manual stage; a repair the log leaves open, a burst's server (a step without
    # a fault of its log) and a server blamed for another's failure are repaired by ``repair`` as drawn. () the
    # repair model for every repair.
    replay_repairs: tuple[tuple[float, ...], ...] = ()
    # faults clustered in time (module docstring, "Operational time"): the servers' rates times the multiplier of a
    # hidden regime, ((multiplier, mean days), ...) for the calm regime then the stormy one, each regime lasting a
    # geometric number of executed steps of that mean (days of the job's compute); () none
    regimes: tuple[tuple[float, float], ...] = ()
    # rates that change with the job's compute time: ((from day, multiplier), ...), the first from day 0, each
    # multiplier holding until the next piece's day (the last one for good); () none
    rate_schedule: tuple[tuple[float, float], ...] = ()
    # a repair that does not hold (module docstring, "Relapses"): (probability, mean hours of compute); with
    # probability p a repaired server's next lifetime is exponential of mean ``mean hours`` divided by its gamma
    # multiplier instead of its lifetime law; (0, 0) none
    relapse: tuple[float, float] = (0.0, 0.0)

    @property
    def capacity(self) -> bool:
        """Whether the cluster has pools: a failed server goes to repair and a standby or spare replaces it."""
        return self.warm_standbys is not None


def count(n_gpus: int, servers: Servers) -> int:
    """The job's servers (``n_gpus`` a multiple of ``gpus_per_server``: the scenario file checks it)."""
    return n_gpus // servers.gpus_per_server


def lemons(n_servers: int, servers: Servers) -> int:
    """How many of the servers are lemons (spread evenly: is_lemon)."""
    return math.floor(servers.lemon_fraction * n_servers + 0.5) if servers.lemon_multiplier != 1.0 else 0


def is_lemon(i: int, fraction: float) -> bool:
    """Whether server ``i`` is a lemon when a ``fraction`` of the servers are (the kernel's rule, kernel.servers)."""
    return math.floor((i + 1) * fraction + 0.5) > math.floor(i * fraction + 0.5)


MULT_ONE = 1 << 32  # State.srv_mult's unit: a multiplier of 1


def plain(servers: Servers | None, n_gpus: int) -> bool:
    """Whether a job's servers are seed 000's process: no servers, or identical ones (no lemon among them) with
    exponential lifetimes."""
    return servers is None or (servers.lifetime == "exponential" and lemons(count(n_gpus, servers), servers) == 0
                               and servers.rate_shape == 0.0 and not servers.capacity and servers.burst_per_day == 0
                               and not servers.replay and not servers.regimes and not servers.rate_schedule
                               and servers.relapse[0] == 0.0)


def imperfect_diagnosis(servers: Servers) -> bool:
    """Whether a failure's diagnosis can miss or blame the wrong server (the "diagnosis" stream's draws)."""
    return servers.capacity and (servers.diagnosis < 1.0 or servers.misattribution > 0.0)


def cluster_size(job: int, standbys: int, spares: int) -> int:
    """The cluster's servers: the job's, its warm standbys and its spares, laid out in that order (start_roles)."""
    return job + standbys + spares


def cluster(n_gpus: int, servers: Servers) -> int:
    """The cluster's servers of a job on ``servers``: the job's, and with capacity its standbys and spares."""
    n = count(n_gpus, servers)
    return cluster_size(n, servers.warm_standbys, servers.spares) if servers.capacity else n


def start_roles(job: int, standbys: int, n: int) -> np.ndarray:
    """Each of a cluster's ``n`` servers' role when it is laid out: servers 0 .. job - 1 in the job, the next
    ``standbys`` warm standbys, the rest spares (the loop's rule: kernel.servers.start_role)."""
    i = np.arange(n)
    return np.where(i < job, JOB, np.where(i < job + standbys, STANDBY, SPARE))


# A server's role in the cluster (State.srv_role; 0: not laid out yet): in the job, a warm standby, a spare, in a
# repair that ends with the automatic stage, retired, in a repair escalated to the manual stage
JOB, STANDBY, SPARE, REPAIR, RETIRED, REPAIR_MANUAL = 1, 2, 3, 4, 5, 6
IN_REPAIR = (REPAIR, REPAIR_MANUAL)
ROLES = frozenset((JOB, STANDBY, SPARE, REPAIR, RETIRED, REPAIR_MANUAL))  # every code of a laid-out server


def rate_per_step(hard_per_gpu_hour: float, multiplier: float, gpus: int, step_seconds: float) -> float:
    """A server's lifetime rate per executed step, ``-gpus * log1p(-p_gpu * multiplier)`` (inf: it fails in
    every step; 0: never)."""
    p = per_gpu_step_probability(hard_per_gpu_hour * multiplier, step_seconds)
    return math.inf if p == 1.0 else -(gpus * math.log1p(-p))


def scale(kind: str, shape: float, rate: float) -> float:
    """The lifetime's scale in steps, so that ``L = scale * F(u)`` with the kernel's unit transform ``F``
    (exponential ``-log u``, Weibull ``(-log u) ** (1 / k)``, lognormal ``exp(sigma * z)``) has mean
    ``1 / rate``; inf for rate 0 (never fails), 0 for an infinite rate (fails in its first step)."""
    if rate == 0.0:
        return math.inf
    if math.isinf(rate):
        return 0.0
    if kind == "exponential":
        return 1.0 / rate
    if kind == "weibull":
        return 1.0 / (rate * math.gamma(1.0 + 1.0 / shape))
    return math.exp(-math.log(rate) - shape * shape / 2.0)


def survival(kind: str, shape: float, scale_steps: float, x: float) -> float:
    """P(L > x) for a lifetime of this kind and scale (the oracle's conditional hazards)."""
    if x <= 0.0:
        return 1.0
    if math.isinf(scale_steps):
        return 1.0
    if scale_steps == 0.0:
        return 0.0
    if kind == "exponential":
        return math.exp(-x / scale_steps)
    if kind == "weibull":
        return math.exp(-((x / scale_steps) ** shape))
    return 1.0 - NormalDist().cdf(math.log(x / scale_steps) / shape)


# The states a census counts servers in (the metrics' simd_servers{state}): in the job, a warm standby, a spare the
# job may take, a spare withheld (lent elsewhere), in a repair that ends with the automatic stage, in one escalated
# to the manual stage, retired
STATES = ("job", "standby", "spare", "withheld", "repair_automatic", "repair_manual", "retired")


def census(standbys: int, job: int, roles: np.ndarray, repair_end: np.ndarray, clock: np.ndarray,
           withheld: int = 0) -> tuple[tuple[int, ...], int]:
    """Servers by STATES summed over replicas, and the replicas with neither a standby nor a spare left: ``roles``
    and ``repair_end`` (R x cluster: State.srv_role, srv_repair), each replica at its ``clock`` (us). A repair that
    has ended by the clock counts in the pools (the engine moves it there lazily, when the job next needs a server:
    the standbys up to ``standbys``, then the spares); a replica not laid out yet (roles 0) counts as laid out
    (the job's ``job`` servers, then the standbys, then the spares). Up to ``withheld`` spares are withheld."""
    roles = np.asarray(roles)
    fresh = roles[:, 0] == 0 if roles.shape[1] else np.zeros(len(roles), dtype=bool)
    n = roles.shape[1]
    laid = np.bincount(start_roles(job, standbys, n), minlength=SPARE + 1)  # a replica not laid out yet
    done = (repair_end <= clock[:, None]) & ((roles == REPAIR) | (roles == REPAIR_MANUAL))
    count = {r: (roles == r).sum(axis=1) for r in (JOB, STANDBY, SPARE, REPAIR, RETIRED, REPAIR_MANUAL)}
    back = done.sum(axis=1)
    standby = np.minimum(standbys, count[STANDBY] + back)
    spare = count[SPARE] + back - (standby - count[STANDBY])
    auto = count[REPAIR] - (done & (roles == REPAIR)).sum(axis=1)
    manual = count[REPAIR_MANUAL] - (done & (roles == REPAIR_MANUAL)).sum(axis=1)
    spare = np.where(fresh, laid[SPARE], spare)
    held = np.minimum(spare, withheld)
    rows = np.stack([np.where(fresh, laid[JOB], count[JOB]), np.where(fresh, laid[STANDBY], standby), spare - held,
                     held, np.where(fresh, 0, auto), np.where(fresh, 0, manual), np.where(fresh, 0, count[RETIRED])],
                    axis=1)
    exhausted = int(((rows[:, 1] + rows[:, 2]) == 0).sum())
    return tuple(int(x) for x in rows.sum(axis=0)), exhausted


def replay_period(servers: Servers, step_seconds: float) -> int:
    """The executed steps after which a replayed log repeats: ceil(span / step), at least its last fault's step
    and 1."""
    last = max((ts[-1] for ts in servers.replay if ts), default=0.0)
    return max(math.ceil(servers.replay_span_seconds / step_seconds), math.ceil(last / step_seconds), 1)


def replay_table(servers: Servers, step_seconds: float) -> tuple[tuple[int, ...], int]:
    """The replayed faults as executed steps (replay's CSR: N + 1 offsets, then each log server's sorted distinct
    fault steps in [1, period]) and the period in steps (ceil(span / step), at least the last fault's step)."""
    steps_of = [sorted({max(1, math.ceil(t / step_seconds)) for t in ts}) for ts in servers.replay]
    period = replay_period(servers, step_seconds)
    offsets = [0]
    for s in steps_of:
        offsets.append(offsets[-1] + len(s))
    return tuple(offsets) + tuple(x for s in steps_of for x in s), period


def replay_repair_table(servers: Servers, step_seconds: float) -> tuple[float, ...]:
    """The log's repair times (microseconds) of replay_table's fault steps, in its order: per distinct step of a
    log server, the longest repair of its faults there, -1 (the repair model's) if one of them is open."""
    out: list[float] = []
    for starts, repairs in zip(servers.replay, servers.replay_repairs, strict=True):
        by_step: dict[int, float] = {}
        for t, r in zip(starts, repairs, strict=True):
            k = max(1, math.ceil(t / step_seconds))
            us = -1.0 if math.isnan(r) or by_step.get(k) == -1.0 else max(by_step.get(k, 0.0), r * 1e6)
            by_step[k] = us
        out += [by_step[k] for k in sorted(by_step)]
    return tuple(out)

