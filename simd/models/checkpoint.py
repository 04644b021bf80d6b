"""Checkpoint-interval optimization (seed 001, scenario 2): Young, Daly 2006, and the long-run efficiency.

The long-run efficiency (the function the seed's grid search maximizes)
-----------------------------------------------------------------------
Work is cut into segments of ``W = interval_steps * step_seconds`` seconds of compute, each followed by a
blocking checkpoint of ``C`` seconds. Failures arrive at rate ``1/M`` per second of *compute* (the first-order
model: neither the checkpoint nor the restart is exposed to failures, and at most one failure is counted per
unit of work). A failure costs the restart ``R`` plus, on average, half a segment of recomputed work. Per
segment the expected wall time is therefore

    E(W) = W + C + (W / M) * (W / 2 + R)

and the long-run efficiency (useful compute / wall time) is

    efficiency(W) = W / E(W) = 1 / (1 + C/W + W/(2M) + R/M).

This is the first-order waste model from which Young (1974) derives his interval: the terms that depend on
W are ``C/W + W/(2M)``, minimal at ``W* = sqrt(2 C M)``. So the grid optimum of this function *is* Young's
formula rounded to whole steps, which is why the seed finds its "Daly approximation" and its grid optimum
"completely in agreement". The seed's "Daly approximation T* ~ sqrt(2CM)" is Young's
formula; Daly's own (2006) higher-order estimate,

    T = sqrt(2CM) * (1 + sqrt(C/(2M))/3 + (C/(2M))/9) - C    (C < 2M; else T = M),

approximates the optimum of the exact exponential model (``renewal_efficiency`` below): with the seed's
inputs it lands within one step of that model's grid optimum, a few steps below Young's.

Reproduction. With step 30 s, C = 240 s (differential: x0.3), M = 7.9 h and R = TrainMover's 6.47 min, summed
exactly (the seed prints it rounded to whole seconds), ``efficiency`` reproduces every number the seed prints
for scenario 2 to the printed decimals: the 16 rows of the interval table (full and differential), both
optima and their efficiencies, and the no-checkpoint efficiency. "No checkpoint" is ``efficiency`` at an
interval equal to the whole run, ``RUN_STEPS``: one blocking checkpoint at the end, a failure losing
everything done so far. The run length is not printed by the seed: it is the upper bound of its grid (the
table stops at the last multiple of 300 below it), and the only length (to +-1 step) that gives the seed's
no-checkpoint figure. Rounding the restart to whole seconds, dropping the final checkpoint, or using the
exact exponential model each breaks some printed figures; docs/report.md lists by how much, and
tests/models/test_checkpoint.py holds the seed's values.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from simd.models import availability, recovery

# Seed 001, scenario 2 inputs.
STEP_SECONDS = 30.0  # one training step
FULL_CHECKPOINT_SECONDS = 240.0  # blocking full checkpoint
DIFFERENTIAL_COST_FACTOR = 0.3  # differential checkpoint costs 0.3 of a full one
# The job MTBF of a 1024-GPU job, 7.9 h (Kokolis HPCA'25), as in scenario 1.
MTBF_SECONDS = availability.KOKOLIS_JOB_MTTF_HOURS * 3600.0
# The cold restart, TrainMover's 6.47 min = 388.2 s (recovery.COLD_RESTART_SECONDS).
RESTART_SECONDS = recovery.COLD_RESTART_SECONDS
# The run of the grid search, steps: inferred (module docstring): the only length giving the seed's
# no-checkpoint efficiency.
RUN_STEPS = 5000
# The stride of the seed's interval-efficiency table, steps (rows 300, 600, ..., up to RUN_STEPS).
TABLE_STRIDE_STEPS = 300


def young_interval_seconds(checkpoint_seconds: float, mtbf_seconds: float) -> float:
    """Young (1974): ``sqrt(2 C M)``, the optimum of the first-order model (seed's "Daly approximation")."""
    if checkpoint_seconds < 0 or mtbf_seconds <= 0:
        raise ValueError("checkpoint_seconds must be >= 0 and mtbf_seconds > 0")
    return math.sqrt(2.0 * checkpoint_seconds * mtbf_seconds)


def daly_interval_seconds(checkpoint_seconds: float, mtbf_seconds: float) -> float:
    """Daly (2006), "A higher order estimate of the optimum checkpoint interval for restart dumps", FGCS 22.

    ``sqrt(2CM) * (1 + sqrt(C/(2M))/3 + (C/(2M))/9) - C`` for ``C < 2M``, else ``M``: the compute time
    between checkpoints. It approximates the optimum of the exponential-failure model.
    """
    if checkpoint_seconds < 0 or mtbf_seconds <= 0:
        raise ValueError("checkpoint_seconds must be >= 0 and mtbf_seconds > 0")
    c, m = checkpoint_seconds, mtbf_seconds
    if c >= 2.0 * m:
        return m
    x = c / (2.0 * m)
    return math.sqrt(2.0 * c * m) * (1.0 + math.sqrt(x) / 3.0 + x / 9.0) - c


def efficiency(interval_steps, step_seconds, checkpoint_seconds, mtbf_seconds, restart_seconds):
    """Long-run efficiency of checkpointing every ``interval_steps`` steps (first-order model, see module).

    ``1 / (1 + C/W + W/(2M) + R/M)`` with ``W = interval_steps * step_seconds``. Accepts scalars or numpy
    arrays of intervals (returns the same shape).
    """
    w = np.asarray(interval_steps, dtype=float) * step_seconds
    if np.any(w <= 0) or mtbf_seconds <= 0 or checkpoint_seconds < 0 or restart_seconds < 0:
        raise ValueError("interval and MTBF must be > 0, checkpoint and restart >= 0")
    eff = 1.0 / (1.0 + checkpoint_seconds / w + w / (2.0 * mtbf_seconds) + restart_seconds / mtbf_seconds)
    return float(eff) if eff.ndim == 0 else eff


def renewal_efficiency(interval_steps, step_seconds, checkpoint_seconds, mtbf_seconds, restart_seconds):
    """Long-run efficiency under the exact exponential model (for comparison; not the seed's function).

    A segment of ``W + C`` is retried until it runs without failure; a failure costs the time spent plus an
    uninterrupted restart ``R``: ``E = (M + R) * (exp((W + C)/M) - 1)``, efficiency ``W / E``.
    """
    w = np.asarray(interval_steps, dtype=float) * step_seconds
    if np.any(w <= 0) or mtbf_seconds <= 0 or checkpoint_seconds < 0 or restart_seconds < 0:
        raise ValueError("interval and MTBF must be > 0, checkpoint and restart >= 0")
    eff = w / ((mtbf_seconds + restart_seconds) * np.expm1((w + checkpoint_seconds) / mtbf_seconds))
    return float(eff) if eff.ndim == 0 else eff


def optimal_interval_grid(
    max_steps: int,
    step_seconds: float,
    checkpoint_seconds: float,
    mtbf_seconds: float,
    restart_seconds: float,
) -> tuple[int, float]:
    """The exact optimum of ``efficiency`` over the integer intervals ``1..max_steps``: (steps, efficiency).

    Ties (none occur in practice) go to the smallest interval.
    """
    if max_steps < 1:
        raise ValueError("max_steps must be >= 1")
    steps = np.arange(1, max_steps + 1)
    eff = efficiency(steps, step_seconds, checkpoint_seconds, mtbf_seconds, restart_seconds)
    i = int(np.argmax(eff))
    return int(steps[i]), float(eff[i])


def seconds_to_steps(seconds: float, step_seconds: float) -> int:
    """An interval in seconds as whole steps (nearest, at least 1)."""
    return max(1, round(seconds / step_seconds))


# Asynchronous saves (docs/model.md, "Asynchronous saves"; docs/checkpoints.md, section 6)
# --------------------------------------------------------------------------------------
# A save blocks for ``b`` (its snapshot), then writes for ``W`` seconds of wall time during which steps last ``s``
# times their compute. Over the write the job computes ``w = W / s`` instead of ``W``: the save costs
# ``C_eff = b + W (1 - 1/s)`` of compute, and it is a rollback target only once written. With ``T`` the compute
# between saves (``interval_steps * step_seconds``) and failures at rate ``1/M`` per second of compute, a failure
# ``u`` into an interval while the save before it writes (``u < w``) goes back to the save before that one: it
# loses ``T + u`` of compute, and the redo (the rollback aborts the write in flight, so the older interval runs
# unslowed) reaches the failure's state after ``T + b + s u``; a later one goes back to the newest save and redoes
# ``u`` unslowed. Averaged over ``u``, with the recovery ``R``:
#
#     L(T) = T/2 + w (1 + b/T) + (s - 1) w^2 / (2T) + R,
#
# and the first-order overhead per second of compute is
#
#     H(T) = C_eff / T + L(T) / M                     (T >= W / s).
#
# The next save is due after the steps of ``T`` have run, ``s T`` of wall time under the write: it waits for the
# write unless ``T >= W / s`` (equivalently, the wall time between two saves' starts, ``T + C_eff``, is at least
# ``b + W``). Below that every save waits: a save's cycle is ``b + W`` of wall time for ``T`` of compute, and the
# save at an interval's start is written only at the next one, so every failure goes back two saves: ``w = T`` in
# ``L``, which is then ``T + b + s T/2 + R`` (3T/2 + b + R without a slowdown), whatever ``W``:
#
#     H(T) = (b + W - T) / T + L(T) / M               (T < W / s),
#
# continuous with the first at ``T = W / s``. The write's latency hardly moves the optimum from Young's
# ``sqrt(2 C_eff M)``: ``L`` adds ``w/M`` whatever ``T`` is, and its other terms are small beside ``C_eff M``
# (Vaidya, "Impact of checkpoint latency on overhead ratio of a checkpointing scheme", IEEE TC 46(8), 1997: the
# optimal interval is "typically independent of checkpoint latency"). With a step length ``d`` given, the model
# takes simd's steps whole (docs/model.md): a step slows when it starts before the write's end and the save is
# durable after the step in which the write ends, so the write spans ``ceil(W / (s d))`` steps of compute in place
# of ``w`` and slows that many; the optimum stays the continuous model's.


def async_latency_seconds(interval_seconds, write_seconds: float, write_slowdown: float, step_seconds: float = 0.0):
    """``w``: the compute a save's write spans, ``W / s`` (with a step length ``d``, whole steps: ``ceil(W / (s d))
    d``), at most the interval ``T`` (every save waits beyond it). Scalars or numpy arrays of ``T``."""
    t = np.asarray(interval_seconds, dtype=float)
    if write_seconds == 0:
        w = np.zeros_like(t)
    elif step_seconds > 0:
        # the steps that start before the write's end (a hair's tolerance: a write of whole steps ends at a step)
        w = np.full_like(t, math.ceil(write_seconds / (write_slowdown * step_seconds) - 1e-9) * step_seconds)
    else:
        w = np.full_like(t, write_seconds / write_slowdown)
    w = np.minimum(w, t)
    return float(w) if w.ndim == 0 else w


def async_loss_seconds(interval_seconds, blocking_seconds: float, write_seconds: float, write_slowdown: float,
                       recovery_seconds: float, step_seconds: float = 0.0):
    """``L(T) = T/2 + w (1 + b/T) + (s - 1) w^2 / (2T) + R``: what one failure costs on average (the block comment
    above; ``w`` :func:`async_latency_seconds`), ``T/2 + R`` without a write. Scalars or numpy arrays of ``T``."""
    t = np.asarray(interval_seconds, dtype=float)
    w = np.asarray(async_latency_seconds(t, write_seconds, write_slowdown, step_seconds))
    loss = t / 2.0 + w * (1.0 + blocking_seconds / t) + (write_slowdown - 1.0) * w * w / (2.0 * t) + recovery_seconds
    return float(loss) if loss.ndim == 0 else loss


def async_save_cost_seconds(blocking_seconds: float, write_seconds: float, write_slowdown: float) -> float:
    """``C_eff = b + W (1 - 1/s)``: the compute one asynchronous save costs (its blocking, and what the steps
    slowed by ``s`` over the write's ``W`` seconds of wall time do not compute). ``b`` itself without a write."""
    if blocking_seconds < 0 or write_seconds < 0 or write_slowdown < 1:
        raise ValueError("blocking and write seconds must be >= 0 and the write slowdown >= 1")
    if write_seconds == 0:
        return blocking_seconds
    return blocking_seconds + write_seconds * (1.0 - 1.0 / write_slowdown)


def unwaited_interval_seconds(write_seconds: float, write_slowdown: float) -> float:
    """``W / s``: the shortest compute between saves for which no save waits for the write before it."""
    if write_seconds < 0 or write_slowdown < 1:
        raise ValueError("write seconds must be >= 0 and the write slowdown >= 1")
    return write_seconds / write_slowdown


def async_overhead(interval_seconds, blocking_seconds: float, write_seconds: float, write_slowdown: float,
                   mtbf_seconds: float, recovery_seconds: float, step_seconds: float = 0.0):
    """First-order overhead ``H(T)`` per second of compute of asynchronous saves every ``T`` seconds of compute
    (the two regimes of the block comment above; with ``step_seconds``, steps whole). Scalars or numpy arrays of
    ``T``."""
    t = np.asarray(interval_seconds, dtype=float)
    if np.any(t <= 0) or mtbf_seconds <= 0 or recovery_seconds < 0:
        raise ValueError("interval and MTBF must be > 0, recovery >= 0")
    loss = async_loss_seconds(t, blocking_seconds, write_seconds, write_slowdown, recovery_seconds,
                              step_seconds) / mtbf_seconds
    h = np.asarray(async_save_overhead(t, blocking_seconds, write_seconds, write_slowdown, step_seconds)) + loss
    return float(h) if h.ndim == 0 else h


def async_save_overhead(interval_seconds, blocking_seconds: float, write_seconds: float, write_slowdown: float,
                        step_seconds: float = 0.0):
    """What asynchronous saves every ``T`` of compute cost per second of compute, failures aside: ``C_eff / T``
    (the steps the write slows: :func:`async_latency_seconds`), or where every save waits (``T < W / s``) the
    cycle's ``(b + W - T) / T``. Scalars or numpy arrays of ``T``."""
    t = np.asarray(interval_seconds, dtype=float)
    w = np.asarray(async_latency_seconds(t, write_seconds, write_slowdown, step_seconds))
    c = blocking_seconds + (write_slowdown - 1.0) * w  # C_eff: the compute the steps slowed by the write do not do
    waits = t < unwaited_interval_seconds(write_seconds, write_slowdown)
    h = np.where(waits, (blocking_seconds + write_seconds - t) / t, c / t)
    return float(h) if h.ndim == 0 else h


def async_interval_seconds(blocking_seconds: float, write_seconds: float, write_slowdown: float,
                           mtbf_seconds: float) -> float:
    """The compute between saves that minimizes :func:`async_overhead` (steps not whole), Young's way: Young on
    ``C_eff``, ``sqrt(2 C_eff M)``, when no save waits there (the latency's terms that fall with ``T``, ``w b +
    (s - 1) w^2 / 2`` beside ``C_eff M``, left out: they move the minimum by well under 1% where a write is shorter
    than the interval); else the better of ``W / s`` and the waiting regime's ``sqrt(2 (b + W) M / (2 + s))``,
    which only a write longer than about the MTBF reaches. Without a write: :func:`young_interval_seconds`."""
    young = young_interval_seconds(async_save_cost_seconds(blocking_seconds, write_seconds, write_slowdown),
                                   mtbf_seconds)
    bound = unwaited_interval_seconds(write_seconds, write_slowdown)
    if young >= bound:
        return young
    return min(bound, math.sqrt(2.0 * (blocking_seconds + write_seconds) * mtbf_seconds / (2.0 + write_slowdown)))


def async_efficiency(interval_steps, step_seconds, blocking_seconds, write_seconds, write_slowdown, mtbf_seconds,
                     restart_seconds):
    """``1 / (1 + H(T))`` with ``T = interval_steps * step_seconds``: the long-run efficiency of
    :func:`efficiency` for asynchronous saves, steps whole (:func:`async_overhead` with ``step_seconds``). Without
    a write it *is* :func:`efficiency` (the same arithmetic, so the same numbers bit for bit)."""
    if write_seconds == 0:
        return efficiency(interval_steps, step_seconds, blocking_seconds, mtbf_seconds, restart_seconds)
    t = np.asarray(interval_steps, dtype=float) * step_seconds
    eff = 1.0 / (1.0 + np.asarray(async_overhead(t, blocking_seconds, write_seconds, write_slowdown, mtbf_seconds,
                                                 restart_seconds, step_seconds)))
    return float(eff) if eff.ndim == 0 else eff



# Just-in-time saves (docs/model.md, "Just-in-time saves"; docs/checkpoints.md, section 6). After a hard failure
# the survivors save the step before the failed one (blocking ``b_j``) and the recovery loads it: the failure loses
# the step in flight (the engine charges the failed step whole, ``d``), the save's blocking unless the newest durable
# checkpoint that survived is that step already (a failure in the step right after a save durable at once: 1 in
# ``n`` of them, ``n`` the interval in steps; a save still writing is not durable then), and its recovery ``R_j``.
# As every rollback, it aborts the write in flight, which spares what that write had left to cost: a failure ``u``
# into an interval while the save before it writes (``u < w``) runs the rest of the write's steps unslowed,
# ``(s - 1)(w - u)``, and where every save waits (``T < W / s``: ``w = T``) the next save waits for none, ``W - s T``.
# Averaged over ``u``, ``A(T) = (s - 1) w^2 / (2T) + (W - s T)+``. Only the ``1/n`` and ``A`` depend on the interval,
# so with a share ``f`` of the failures saved just in time the first-order overhead is
#
#     H(T) = S(T) + (1 - f) L(T) / M + f (d + b_j q + R_j - A(T)) / M,
#
# ``S`` the saves' overhead, ``L`` the loss of a failure that rolls back (the asynchronous one above, its own mean
# recovery), ``q = 1 - d/T`` (1 with a write); Young's optimum is that of the failures that roll back, at the rate
# ``(1 - f) / M``: ``sqrt(2 C_eff M / (1 - f))``, none when every failure is saved (``- f (b_j d + (s - 1) w^2 / 2)
# / (M T)`` beside ``C_eff / T``, at most a few percent of it, left out).


def jit_loss_seconds(step_seconds: float, jit_seconds: float, recovery_seconds: float, interval_steps=math.inf,
                     written: bool = False):
    """``d + b_j q + R_j``: what one failure saved just in time costs (the block comment above), the write it aborts
    aside (:func:`jit_abort_seconds`): the step in flight, the save's blocking unless the newest durable checkpoint
    is the step before the failure (1 in ``interval_steps`` failures; never when that checkpoint is ``written``
    after its blocking, as it is still writing then), the recovery. Scalars or numpy arrays of ``interval_steps``."""
    n = np.asarray(interval_steps, dtype=float)
    saved = np.ones_like(n) if written else 1.0 - 1.0 / n
    loss = step_seconds + jit_seconds * saved + recovery_seconds
    return float(loss) if loss.ndim == 0 else loss


def jit_abort_seconds(interval_seconds, write_seconds: float, write_slowdown: float, step_seconds: float = 0.0):
    """``A(T) = (s - 1) w^2 / (2T) + (W - s T)+``: what a failure saved just in time spares, on average, by aborting
    the write in flight (the block comment above; ``w`` :func:`async_latency_seconds`): the slowed steps it had left
    and, where every save waits, the next save's wait. 0 without a write. Scalars or numpy arrays of ``T``."""
    t = np.asarray(interval_seconds, dtype=float)
    w = np.asarray(async_latency_seconds(t, write_seconds, write_slowdown, step_seconds))
    spared = (write_slowdown - 1.0) * w * w / (2.0 * t) + np.maximum(write_seconds - write_slowdown * t, 0.0)
    return float(spared) if spared.ndim == 0 else spared


# Two-level checkpointing (docs/checkpoints.md, section 6)
# -------------------------------------------------------
# Benoit, Cavelan, Le Fevre, Robert, Sun, "Towards optimal multi-level checkpointing", IEEE TC 66(7), 2017: with
# failures of level l (those a checkpoint of level l, and none cheaper, recovers from) at rate lambda_l and a
# checkpoint of level l costing C_l, the first-order overhead is minimal at the sum over levels of
# sqrt(2 lambda_l C_l). In the terms of the asynchronous model above, level by level,
#     H = sum_l [C_l / T_l + lambda_l (T_l / 2 + W_l + R_l)]
# (each level's failures lose half that level's interval, its write latency and its recovery), so
# T_l* = sqrt(2 C_l / lambda_l) and H* = sum_l sqrt(2 lambda_l C_l) + sum_l lambda_l (W_l + R_l).


def two_level_intervals(costs_seconds, rates_per_second) -> tuple[float, ...]:
    """``T_l* = sqrt(2 C_l / lambda_l)`` for each level (seconds of compute between its checkpoints)."""
    costs, rates = tuple(costs_seconds), tuple(rates_per_second)
    if len(costs) != len(rates) or any(c < 0 for c in costs) or any(r <= 0 for r in rates):
        raise ValueError("one cost >= 0 and one rate > 0 per level")
    return tuple(math.sqrt(2.0 * c / r) for c, r in zip(costs, rates, strict=True))


def two_level_overhead(costs_seconds, rates_per_second, latencies_seconds, recoveries_seconds) -> float:
    """``H* = sum sqrt(2 lambda_l C_l) + sum lambda_l (W_l + R_l)``: the overhead per second of compute at the
    levels' optima (:func:`two_level_intervals`)."""
    costs, rates = tuple(costs_seconds), tuple(rates_per_second)
    lat, rec = tuple(latencies_seconds), tuple(recoveries_seconds)
    if not len(costs) == len(rates) == len(lat) == len(rec) or any(r <= 0 for r in rates) \
            or any(x < 0 for x in costs + lat + rec):
        raise ValueError("one cost, rate > 0, latency and recovery (all >= 0) per level")
    return math.fsum([*(math.sqrt(2.0 * r * c) for c, r in zip(costs, rates, strict=True)),
                      *(r * (w + x) for r, w, x in zip(rates, lat, rec, strict=True))])


def gemini_wasted_seconds(checkpoint_seconds: float, interval_seconds: float, load_seconds: float) -> float:
    """Gemini (Wang et al., SOSP'23, section 2.2): the time one failure wastes, ``t_ckpt + 1/(2f) + t_load``,
    with ``1/f`` the checkpoint interval, at least ``t_ckpt`` (one checkpoint at a time). Gemini's t_ckpt is the
    save's latency: the write ``W`` of the asynchronous model, whose loss (:func:`async_loss_seconds`) without a
    slowdown is this with the save's blocking redone, ``T/2 + W (1 + b/T) + R``."""
    if checkpoint_seconds < 0 or load_seconds < 0 or interval_seconds <= 0:
        raise ValueError("checkpoint and load seconds must be >= 0 and the interval > 0")
    if interval_seconds < checkpoint_seconds:
        raise ValueError("the interval 1/f must be at least t_ckpt (one checkpoint at a time)")
    return checkpoint_seconds + interval_seconds / 2.0 + load_seconds


# A memory tier under the persistent checkpoint (docs/model.md, "Memory tiers"; docs/checkpoints.md, sections 2
# and 6): a failure the tier survives recovers from it, the others (the rate lambda_2) from the persistent
# checkpoint, so the persistent interval's optimum is Young's on lambda_2 alone and the tier's on the rest. Gemini
# (Wang et al., SOSP'23, Corollary 1) bounds the loss of a peer tier of groups of m among n servers when k fail
# together uniformly by n C(n-m, k-m) / (m C(n, k)); inclusion-exclusion gives it exactly (equal for k < 2m).


def group_loss_probability(n: int, m: int, k: int) -> float:
    """P(every member of some group fails): ``n / m`` disjoint groups of ``m`` servers, ``k`` of the ``n`` failing
    together (a uniform k-subset); any partition into such groups gives the same (the jump between members does
    not matter). Exact by inclusion-exclusion."""
    if not 1 <= m <= n or k < 0:
        raise ValueError("need 1 <= m <= n and k >= 0")
    k = min(k, n)
    g = n // m
    # in integers, divided once: the terms' binomials outgrow a float long before the ratio does
    return sum((-1) ** (j + 1) * math.comb(g, j) * math.comb(n - j * m, k - j * m)
               for j in range(1, min(g, k // m) + 1)) / math.comb(n, k)


@functools.lru_cache(maxsize=64)
def burst_group_loss(n: int, m: int, q: float) -> float:
    """The share of bursts of ``2 + Geometric(q)`` servers (simd's burst size, capped at the ``n`` servers) that
    lose a peer tier of groups of ``m``. Bursts of large mean on many servers and copies cost seconds (exact
    binomials of hundreds of digits): cached, as the daemon asks again at every drill."""
    if not 0 < q <= 1:
        raise ValueError("need 0 < q <= 1")
    out, tail = 0.0, 1.0
    for k in range(2, n):
        p = q * (1 - q) ** (k - 2)
        lost = group_loss_probability(n, m, k)
        if lost > 1.0 - 1e-12:  # it grows with k: every larger burst loses it too
            return out + tail * lost
        out += p * lost
        tail -= p
        if tail < 1e-15:
            return out
    return out + max(tail, 0.0) * group_loss_probability(n, m, n)


def domain_group_loss(n: int, m: int, jump: int, domain: int) -> float:
    """The share of domain bursts (every server of the domain of a server drawn uniformly: domains of ``domain``
    consecutive servers) that take a whole group of a peer tier (groups of ``m`` at ``jump``, NVIDIA's clique
    rule on positions), with positions taken as the servers' indices (no pools)."""
    lost = set()
    span = m * jump
    for x in range(n):
        b = (x // span) * span + x % jump
        if x == b and len({(b + t * jump) // domain for t in range(m)}) == 1:
            lost.add(b // domain)
    return sum(min(domain, n - d * domain) for d in lost) / n


# A memory tier whose saves write after their blocking (``write_seconds`` W, no slowdown: docs/model.md, "Memory
# tiers"; the derivation in docs/checkpoints.md, section 6). Failures strike steps only, at rate lambda per second of
# compute; T is the compute between the tier's saves, b a save's blocking, R a recovery from the tier, T2 = n T the
# persistent interval, b2 the persistent save's blocking.
# - Saves: of the n points of a persistent interval the persistent save stands for the tier's at one, so n - 1 tier
#   saves cost b each. With T < W every tier save waits W - T for the write before it (which makes that one
#   durable), but the first after the persistent save, whose tier write started 2T + b2 before it: it waits
#   (W - 2T - b2)+. Per second of compute: ((n - 1) b + (n - 2)+ (W - T)+ + [n >= 2] (W - 2T - b2)+) / T2, which
#   is b / T + (W - T)+ / T for n -> infinity (a cycle of b + W wall seconds per T of compute).
# - Loss: with T >= W a failure u into an interval falls back one interval more while the save before it writes
#   (u < W), so it loses T/2 + W of work on average (Gemini's t_ckpt + 1/(2f): its t_ckpt is W, its 1/f >= t_ckpt),
#   and redoes that save's blocking with probability W/T: T/2 + W (1 + b/T) + R. With T < W the save at an
#   interval's start is still writing while the interval computes, so the newest durable checkpoint is the one
#   before: a failure u into the interval loses T + u of compute, and the redo reaches the failure's state (the
#   same write in flight, started u earlier) after T + b + u, because the rollback aborted the write in flight and
#   the redone save waits for none: 3T/2 + b + R. Both are T/2 + L (1 + b/T) + R, L = min(W, T), continuous at W.
# First order: at most one failure per interval and none in recoveries (lambda x loss << 1); a failure that loses
# the tier goes to the persistent level's terms; the steps a persistent write slows shorten the tier's waits (not
# counted), and the failures soon after a persistent save, whose tier copy is older, lose up to T more.


def tier_save_overhead(interval_seconds: float, blocking_seconds: float, write_seconds: float,
                       persistent_interval_seconds: float = math.inf,
                       persistent_blocking_seconds: float = 0.0) -> float:
    """What the memory tier's saves cost per second of compute, their waits for the write before them included
    (the block comment above); ``b / T`` without a write and without a persistent interval."""
    t, b, w, t2 = interval_seconds, blocking_seconds, write_seconds, persistent_interval_seconds
    if math.isinf(t2):
        return (b + w - t) / t if t < w else b / t
    n = t2 / t
    first = max(w - 2 * t - persistent_blocking_seconds, 0.0) if n >= 2 else 0.0
    waits = max(n - 2.0, 0.0) * max(w - t, 0.0) + first
    return ((n - 1.0) * b + waits) / t2


def tier_loss_seconds(interval_seconds: float, blocking_seconds: float, write_seconds: float,
                      recovery_seconds: float) -> float:
    """What one failure the memory tier recovers costs: ``T/2 + L (1 + b/T) + R``, ``L = min(W, T)`` (the block
    comment above); ``T/2 + R`` without a write."""
    lat = min(write_seconds, interval_seconds)
    if lat == 0:
        return interval_seconds / 2 + recovery_seconds
    return interval_seconds / 2 + lat * (1.0 + blocking_seconds / interval_seconds) + recovery_seconds


def tier_interval_seconds(blocking_seconds: float, write_seconds: float, rate: float,
                          recovery_seconds: float = 0.0) -> float:
    """The compute between the memory tier's saves that minimizes ``tier_save_overhead + rate * tier_loss`` (a
    persistent interval far longer): in the regime without waits ``sqrt(2 b (1 + rate W) / rate)`` (at least
    ``W``), in the waiting one ``sqrt(2 (b + W) / (3 rate))`` (at most ``W``), the better of the two. Without a
    write: Young's ``sqrt(2 b / rate)``. Needs ``rate > 0``."""
    if rate <= 0 or blocking_seconds < 0 or write_seconds < 0:
        raise ValueError("need rate > 0, blocking and write seconds >= 0")
    b, w = blocking_seconds, write_seconds
    free = max(math.sqrt(2.0 * b * (1.0 + rate * w) / rate), w)
    if w == 0:
        return free
    waiting = min(math.sqrt(2.0 * (b + w) / (3.0 * rate)), w)

    def h(t: float) -> float:
        return tier_save_overhead(t, b, w) + rate * tier_loss_seconds(t, b, w, recovery_seconds)
    return free if h(free) <= h(waiting) else waiting


# Copies kept and found corrupt (docs/model.md, "Memory tiers", "Copies kept"): a recovery loads the tier's copies
# newer than the newest persistent checkpoint, newest first, each found corrupt with probability p (then dropped,
# its load paid), and goes on to the persistent checkpoint when none is left. With n = T2 / T1 tier points to a
# persistent interval (the persistent save standing for the tier's at its own), a failure in the i-th tier
# interval after a persistent save (i = 0 .. n-1, each 1/n of the failures) finds j = min(i, k) of the k copies
# kept newer than it. Beside the loss of loading the newest copy (tier_loss_seconds: one tier load in R1):
# - the c-th copy good after c - 1 corrupt ones (probability p^(c-1) (1 - p)): c - 1 more loads L1 and c - 1 more
#   tier intervals redone, r each (T1, the save's blocking b1 and its wait for the write before, (W1 - T1)+);
# - all j corrupt (p^j): j loads L1 and the persistent load L2 in place of one L1, and the i tier intervals since
#   the persistent save redone, but not the tier write's latency (the persistent checkpoint is taken to be
#   durable): (j - 1) L1 + L2 + i r - l, l = min(W1, T1) (1 + b1/T1) the latency's part of tier_loss_seconds. With
#   i = 0 (no copy newer) this is L2 - L1 - l: the load of the persistent checkpoint in place of the tier's.
# First order as the rest: the persistent write's latency (its newest durable checkpoint the one before while it
# writes, so the copies of the interval before it count then) and the persistent checkpoint's own corrupt loads
# are left out.


def tier_fallback_seconds(points: int, kept: int, corrupt: float, tier_load_seconds: float,
                          persistent_load_seconds: float, redo_seconds: float, latency_seconds: float = 0.0) -> float:
    """What a failure the memory tier survives costs beyond loading its newest copy, on average over where it falls
    among the ``points`` tier intervals of a persistent one: the corrupt copies loaded before a good one, and the
    recoveries that find every copy newer than the persistent checkpoint corrupt (or none) and load that one (the
    block comment above). 0 with one point, nothing corrupt and the same loads."""
    n, k, p, l1, r = max(int(points), 1), max(int(kept), 1), corrupt, tier_load_seconds, redo_seconds
    l2 = persistent_load_seconds - latency_seconds  # (the latency counted with the newest copy not lost again)

    def good(j: int) -> float:  # the copies found corrupt before a good one among j
        return (1.0 - p) * (l1 + r) * math.fsum((c - 1) * p ** (c - 1) for c in range(2, j + 1))

    # i < k: fewer copies than kept newer than the persistent checkpoint
    total = math.fsum(good(i) + p ** i * ((i - 1) * l1 + l2 + i * r) for i in range(min(k, n)))
    if n > k:  # i = k .. n-1: all k copies newer
        m = n - k
        total += m * (good(k) + p ** k * ((k - 1) * l1 + l2)) + p ** k * r * m * (k + n - 1) / 2.0
    return total / n


def tiered_efficiency(tier_seconds: float, tier_interval_seconds: float, tier_write_seconds: float,
                      tier_recovery_seconds: float, blocking_seconds: float, interval_seconds: float,
                      write_seconds: float, write_slowdown: float, recovery_seconds: float, rate_survived: float,
                      rate_lost: float, corrupt: float = 0.0, kept: int = 1, tier_load_seconds: float = 0.0,
                      persistent_load_seconds: float = 0.0, step_seconds: float = 0.0) -> float:
    """``1 / (1 + H)``, H the two-level first-order overhead per second of compute at the configured intervals
    (Benoit et al.'s sum over levels): the tier's saves (:func:`tier_save_overhead`: blocking ``tier_seconds``,
    write ``tier_write_seconds``, none where the persistent save of blocking ``blocking_seconds`` stands for it),
    the persistent saves' (:func:`async_save_overhead`), the failures the tier survives (``rate_survived``): its
    :func:`tier_loss_seconds` and its copies found corrupt or older than the persistent checkpoint
    (:func:`tier_fallback_seconds`, ``corrupt`` p, ``kept`` k), and those that lose it (``rate_lost``):
    :func:`async_loss_seconds` of the persistent level, the work redone paying the tier's saves again (``1 + S``,
    ``S`` their overhead per second of compute), and its recovery. Rates per second of compute; with
    ``step_seconds``, the persistent write's steps whole."""
    t1, t2 = tier_interval_seconds, interval_seconds
    saves = tier_save_overhead(t1, tier_seconds, tier_write_seconds, t2, blocking_seconds)
    redo = t1 + tier_seconds + max(tier_write_seconds - t1, 0.0)
    latency = tier_loss_seconds(t1, tier_seconds, tier_write_seconds, 0.0) - t1 / 2
    fallback = tier_fallback_seconds(round(t2 / t1), kept, corrupt, tier_load_seconds, persistent_load_seconds,
                                     redo, latency)
    lost = async_loss_seconds(t2, blocking_seconds, write_seconds, write_slowdown, 0.0, step_seconds)
    h = (saves + async_save_overhead(t2, blocking_seconds, write_seconds, write_slowdown, step_seconds)
         + rate_survived * (tier_loss_seconds(t1, tier_seconds, tier_write_seconds, tier_recovery_seconds) + fallback)
         + rate_lost * (lost * (1.0 + saves) + recovery_seconds))
    return 1.0 / (1.0 + h)
