"""The work of advancing the engine: what each kind of work of the compiled loop costs (a cost model, measured),
what a job does per executed step in expectation (:class:`Load`, from its JobSpec), and from both the expected
work of advancing replicas over a stretch of simulated time. One formula for the daemon's chunks and work
limit (simd.live.lane) and for the scenario file's bound on a tick (simd.scenario: check-config and every load).

The loop counts its own work by these weights as it goes (loop.py, "Work"; :func:`budget`), so what a call did is
known exactly, every mechanism included; the expectation here sizes the calls before they run.

Load is an upper bound of the work per simulated second: it counts the time of an executed step as the step,
its share of checkpoints and validations and the cheapest restart per interruption, and nothing of what
stretches it more (waits for servers, detection, slow steps, rollbacks add time, not work per step).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simd.engine.servers import cluster as cluster_of
from simd.engine.servers import count as servers_of
from simd.engine.servers import replay_period
from simd.engine.shadow import shadow_ranks
from simd.engine.spec import JobSpec

# Four standard deviations of a stretch's work (its events are Poisson) are kept in reserve when it is sized, so it
# overshoots the budget left only with a vanishing (Poisson-tail) probability.
TAIL_SDS = 4.0


@dataclass(frozen=True)
class Costs:
    """Estimated CPU microseconds of one path of the engine: per unit with an event, per straggler-drawn step, per
    replica per call, per server event (a server's failure with its replacement, a burst's pick, a repair's end)
    and per server of a pass over the cluster (a call's trees over a replica's servers, a burst's count of the
    job's servers)."""

    per_event_us: float
    per_step_us: float
    per_call_us: float
    per_server_us: float = 0.0
    per_cluster_server_us: float = 0.0


# The compiled batch over replicas (simd.engine.replicas), measured on this 2-core machine (bench/daemon.py
# --costs measures the first three again): 0.08-0.49 us per event (1,000 replicas of a failure every ~2 steps,
# 100-1,000 simulated s per call); 17.7-20.9 ns per executed step of llama3-16k under stragglers, its events
# included (2,000-10,000 replicas, 3,600 simulated s per call); 0.65-0.83 us per replica per call (mostly its
# streams' jumps to their current draws) and ~0.2 us in the arrays' copies. Servers
# (tests/data/bounds-servers.yaml, 58 replicas of a 131,072-server cluster with bursts of mean size 10,000 and
# retirement after one failure, 600 simulated s per call): 1.4-1.9 us per struck server (its pick, its failure,
# its retirement or repair, its replacement: two server events), 3.4-19 ms per replica per call that crosses no
# event (13-70 ns per server of the job's table and of the cluster's: the trees' builds, the aux row's copy).
KERNEL = Costs(per_event_us=0.5, per_step_us=0.02, per_call_us=1.0, per_server_us=0.75, per_cluster_server_us=0.015)


@dataclass(frozen=True)
class Load:
    """What a job does per executed step, in expectation, and what a call passes over per replica."""

    step_us: float  # simulated us per executed step, at least (module docstring)
    events: float  # units with an event (an interruption, an SDC verdict, a job's end) per executed step
    drawn: bool  # each step's duration drawn (stragglers)
    servers: float  # server events per executed step outside bursts
    bursts: float  # bursts per executed step
    burst_servers: float  # server events of one burst
    table: int  # the servers a call and a burst pass over (the job's table, the cluster with pools)


def load_of(spec: JobSpec) -> Load:
    """The expected work of ``spec`` per executed step (rates per GPU-hour as the engine's: shadow ranks fail too,
    lemons at their multiple; a replayed log's faults at its rate)."""
    step_s = spec.step_seconds * (1.0 + (spec.shadow.overhead if spec.shadow else 0.0))
    if spec.fleet:
        hard_gpu_h = sum(a.count * a.hard_per_gpu_hour for a in spec.fleet)
        sdc_gpu_h = sum(a.count * a.sdc_per_gpu_hour for a in spec.fleet)
    else:
        hard_gpu_h, sdc_gpu_h = spec.n_gpus * spec.hard_per_gpu_hour, spec.n_gpus * spec.sdc_per_gpu_hour
    ranks = 1.0 + shadow_ranks(spec.n_gpus, spec.shadow) / max(1, spec.n_gpus) if spec.shadow else 1.0
    s = spec.servers
    table = servers = bursts = burst_servers = 0.0
    if s is not None:
        n = servers_of(spec.n_gpus, s)
        table = cluster_of(spec.n_gpus, s)
        if s.lemon_multiplier != 1.0:
            hard_gpu_h *= 1.0 - s.lemon_fraction + s.lemon_fraction * s.lemon_multiplier
        if s.replay:  # the log's faults (at most one per server and step) over the period it repeats with
            copies = -(-table // len(s.replay))
            faults = sum(len(t) for t in s.replay) * copies / replay_period(s, spec.step_seconds)  # an upper bound
            hard_gpu_h = faults * 3600.0 / spec.step_seconds
        per_failure = 2.0 if s.capacity else 1.0  # its failure (with the replacement), and with pools its repair's end
        servers = hard_gpu_h * step_s / 3600.0 * per_failure
        if s.burst_per_day > 0:
            bursts = -math.expm1(-s.burst_per_day * spec.step_seconds / 86400.0)
            size = min(float(n), s.burst_domain or s.burst_mean_size)
            burst_servers = size * (1.0 + per_failure)  # its pick too
    hard = hard_gpu_h * ranks * spec.step_seconds / 3600.0
    interrupted = min(1.0, hard + bursts)
    events = min(1.0, hard + bursts + sdc_gpu_h * ranks * spec.step_seconds / 3600.0) + 1.0 / spec.target_steps
    restarts = [c.detection_seconds + c.restart_seconds for c in spec.causes] or [spec.restart_seconds]
    per_step_s = step_s + interrupted * min(restarts)
    per_step_s += spec.ckpt_seconds / spec.ckpt_interval_steps
    if spec.validation_interval_steps:
        per_step_s += spec.validation_seconds / spec.validation_interval_steps
    return Load(step_us=per_step_s * 1e6, events=events, drawn=spec.stragglers is not None, servers=servers,
                bursts=bursts, burst_servers=burst_servers, table=int(table))


def call_us(costs: Costs, load: Load, replicas: int) -> float:
    """The cost of one call over ``replicas`` replicas, whatever it crosses."""
    return replicas * (costs.per_call_us + 2 * load.table * costs.per_cluster_server_us)


def per_us(costs: Costs, load: Load, replicas: int) -> tuple[float, float]:
    """(the expected work per simulated us over ``replicas`` replicas, its variance per us): events and bursts as
    Poisson processes over the executed steps."""
    burst = load.burst_servers * costs.per_server_us + load.table * costs.per_cluster_server_us
    mean = (load.events * costs.per_event_us + load.servers * costs.per_server_us + load.bursts * burst
            + (costs.per_step_us if load.drawn else 0.0))
    var = load.events * costs.per_event_us ** 2 + load.bursts * burst ** 2 + load.servers * costs.per_server_us ** 2
    return mean * replicas / load.step_us, var * replicas / load.step_us


def expected_us(costs: Costs, load: Load, replicas: int, stretch_us: float) -> float:
    """The expected work of one call that advances ``replicas`` replicas by ``stretch_us`` simulated us."""
    return call_us(costs, load, replicas) + per_us(costs, load, replicas)[0] * stretch_us


def chunk_us(costs: Costs, load: Load, replicas: int, budget_us: float, tail_sds: float = TAIL_SDS) -> float:
    """The longest stretch of simulated microseconds whose expected work plus ``tail_sds`` standard deviations
    fits ``budget_us`` (at least one step; when the call's cost alone exceeds it, the stretch whose expected work
    besides it fits it): c + a * x + tail_sds * sqrt(v * x) with c the call's cost, a and v per_us'."""
    a, v = per_us(costs, load, replicas)
    left = budget_us - call_us(costs, load, replicas)
    if left <= 0:  # the call alone costs more than the budget: one call pays it, so spend the budget on progress
        left = budget_us  # (one step per call would pay it every step and fall ever further behind)
    if a <= 0:
        return math.inf
    b = tail_sds * math.sqrt(v)
    y = (-b + math.sqrt(b * b + 4 * a * left)) / (2 * a)  # a y^2 + b y = left, y = sqrt(x)
    return max(load.step_us, y * y)


def budget(costs: Costs, limit_us: float) -> np.ndarray:
    """loop.advance_all's ``budget`` (loop.BUDGET_FIELDS) in nanoseconds: a replica's limit (``limit_us``;
    negative: none) and ``costs`` as the weights of each kind of work."""
    ns = [limit_us, costs.per_call_us, costs.per_cluster_server_us, costs.per_event_us, costs.per_server_us,
          costs.per_step_us]
    return np.array([-1 if limit_us < 0 else max(0, math.floor(ns[0] * 1000))]
                    + [max(0, round(c * 1000)) for c in ns[1:]], dtype=np.int64)


def counted_us(costs: Costs, load: Load, totals) -> float:
    """The estimated work of what a replica's ``totals`` (a State's Totals) count, calls apart: its units with an
    event, its server events (failures, bursts' strikes, repairs) with each burst's pass over the servers, and
    its straggler-drawn steps. A function of the totals only, so the same whatever cut of time reached them."""
    ev = sum(totals.interruptions) + totals.sdc_detected + totals.sdc_baked + totals.jobs_completed
    w = costs.per_event_us * ev + costs.per_server_us * (totals.server_failures + totals.burst_servers
                                                         + totals.repairs_started)
    w += costs.per_cluster_server_us * load.table * totals.burst_events
    if load.drawn:
        w += costs.per_step_us * totals.steps_executed
    return w
