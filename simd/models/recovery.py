"""Failure causes, detection and recovery paths, and the week's ETTR (seed 001, scenario 3).

Model. Over a window of ``hours`` (a week, 168 h), a job on 1024 GPUs fails as a Poisson process with mean
interval ``mtbf_hours`` (7.9 h, Kokolis HPCA'25). Each failure gets a cause drawn from the Llama 3 shares.
Each failure costs

    lost = detection[cause] + restart(cause, strategy) + rollback

- detection: time until the job notices the failure, by class (seed 001: GPU 10 s, NIC 30 s, OS 2 s);
- restart: the cold path (TrainMover's measured timeline, 6.47 min) or the warm path (ByteRobust's hot
  update from a warm standby, 55 s); software and "other" failures cannot be fixed by swapping a machine and
  always take the cold path;
- rollback: work since the last checkpoint, recomputed. simd charges its expectation, half the checkpoint
  interval (failures fall uniformly within an interval), with a 1-hour interval: 1800 s per failure.

and ``ETTR = 1 - lost / hours`` (effective training time ratio).

The 1-hour interval and the detection times of the software and "other" classes are not printed by the seed;
they are the values under which the seed's printed week (its list of failures by cause, and its lost hours
and ETTR for both strategies) follows exactly from this arithmetic; tests/models/test_recovery.py checks
that reproduction. The failure draws themselves come from an unknown
generator in the seed; simd reproduces their distribution, not the draws.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

# The cause classes, in the order of the Llama 3 breakdown.
CAUSES = ("gpu", "network", "host", "software", "other")

# Llama 3 (Dubey et al. 2024, "The Llama 3 Herd of Models", table 5: root causes of unexpected interruptions),
# as seed 001 groups them: GPU 58.7%, network 8.4%, host 10%, software 14.5%, other 8.4%. They sum to 100%
# (to float rounding; sampling normalizes).
LLAMA3_CAUSE_SHARES: dict[str, float] = {
    "gpu": 0.587,
    "network": 0.084,
    "host": 0.10,
    "software": 0.145,
    "other": 0.084,
}

# Detection latency by class, seconds (seed 001: "GPU 10s / NIC 30s / OS 2s"). NIC -> network. OS -> host:
# host failures (kernel panic, CPU, memory) are seen by the OS. Software crashes and "other" are seen the
# same way, by the OS reporting the process exit: 2 s (simd's mapping; it is the one that reproduces the
# seed's printed week, see the module docstring).
DETECTION_SECONDS: dict[str, float] = {
    "gpu": 10.0,
    "network": 30.0,
    "host": 2.0,
    "software": 2.0,
    "other": 2.0,
}

# TrainMover (8,192-GPU cold restart, measured; seed 001), minutes per phase: stop the job, reschedule,
# load the checkpoint, rebuild NCCL communicators, warm up.
TRAINMOVER_COLD_RESTART_MINUTES: dict[str, float] = {
    "stop": 0.52,
    "reschedule": 1.50,
    "checkpoint_load": 1.56,
    "nccl_init": 1.09,
    "warmup": 1.80,
}
SECONDS_PER_MINUTE = 60.0
# The sum of the phases: 6.47 min. Rounded to 0.1 s (the phases' own resolution is 0.01 min = 0.6 s) so that
# the constant is the exact decimal and not 388.20000000000005 from the float sum.
COLD_RESTART_MINUTES = round(math.fsum(TRAINMOVER_COLD_RESTART_MINUTES.values()), 2)
COLD_RESTART_SECONDS = round(COLD_RESTART_MINUTES * SECONDS_PER_MINUTE, 1)

# ByteRobust (seed 001): hot update onto a warm standby, 55 s (measured 46-65 s).
WARM_SWAP_SECONDS = 55.0
WARM_SWAP_MEASURED_RANGE_SECONDS = (46.0, 65.0)

# Seed 001: "software/other failures cannot be saved by the warm standby (need a full restart)".
WARM_CAPABLE_CAUSES: frozenset[str] = frozenset({"gpu", "network", "host"})

# Seed 001, scenario 3: one week on 1024 GPUs, job MTBF 7.9 h (Kokolis HPCA'25, as scenario 1).
WEEK_HOURS = 168.0
SCENARIO_GPUS = 1024
SCENARIO_MTBF_HOURS = 7.9
# Not printed by the seed (see the module docstring): checkpoint interval of the week, seconds. The expected
# rollback per failure is half of it.
SCENARIO_CHECKPOINT_INTERVAL_SECONDS = 3600.0

STRATEGIES = ("cold", "warm")
SECONDS_PER_HOUR = 3600.0


def restart_seconds(cause: str, strategy: str) -> float:
    """Restart time of one failure: warm swap only for warm-capable causes under the warm strategy."""
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    if cause not in DETECTION_SECONDS:
        raise ValueError(f"unknown cause {cause!r}")
    if strategy == "warm" and cause in WARM_CAPABLE_CAUSES:
        return WARM_SWAP_SECONDS
    return COLD_RESTART_SECONDS


def expected_rollback_seconds(checkpoint_interval_seconds: float) -> float:
    """Expected work lost per failure: half the checkpoint interval (failure uniform in the interval)."""
    return checkpoint_interval_seconds / 2.0


@dataclass(frozen=True)
class LostTime:
    """Time lost over a window, by component, seconds."""

    detection_seconds: float
    restart_seconds: float
    rollback_seconds: float

    @property
    def total_seconds(self) -> float:
        return self.detection_seconds + self.restart_seconds + self.rollback_seconds

    @property
    def total_hours(self) -> float:
        return self.total_seconds / SECONDS_PER_HOUR


def lost_time(causes: Iterable[str], strategy: str, rollback_seconds_per_failure: float) -> LostTime:
    """Sum of detection, restart and rollback over a list of failures (by cause)."""
    causes = list(causes)
    return LostTime(
        math.fsum(DETECTION_SECONDS[c] for c in causes),
        math.fsum(restart_seconds(c, strategy) for c in causes),
        rollback_seconds_per_failure * len(causes),
    )


def ettr(lost_hours: float, window_hours: float) -> float:
    """Effective training time ratio: ``1 - lost / window``."""
    if window_hours <= 0:
        raise ValueError("window_hours must be > 0")
    return 1.0 - lost_hours / window_hours


def sample_failures(
    rng: np.random.Generator, window_hours: float, mtbf_hours: float, shares: Mapping[str, float]
) -> list[tuple[float, str]]:
    """A Poisson stream of failures over ``[0, window_hours)``: (time in hours, cause), in time order.

    The count is Poisson(window / mtbf); given the count, the times are uniform (the order statistics of a
    Poisson process) and the causes independent draws from ``shares`` (normalized).
    """
    if window_hours <= 0 or mtbf_hours <= 0:
        raise ValueError("window_hours and mtbf_hours must be > 0")
    names = list(shares)
    p = np.array([shares[c] for c in names], dtype=float)
    p = p / p.sum()
    n = int(rng.poisson(window_hours / mtbf_hours))
    times = np.sort(rng.uniform(0.0, window_hours, size=n))
    causes = rng.choice(len(names), size=n, p=p)
    return [(float(t), names[int(c)]) for t, c in zip(times, causes, strict=True)]


def count_by_cause(causes: Iterable[str]) -> dict[str, int]:
    """Counts per cause, in ``CAUSES`` order, zeros included."""
    counts = dict.fromkeys(CAUSES, 0)
    for c in causes:
        counts[c] += 1
    return counts


def expected_lost_seconds_per_failure(
    strategy: str, shares: Mapping[str, float], rollback_seconds_per_failure: float
) -> float:
    """Mean lost time of one failure whose cause is drawn from ``shares`` (normalized)."""
    total = math.fsum(shares.values())
    return math.fsum(
        share / total * (DETECTION_SECONDS[c] + restart_seconds(c, strategy) + rollback_seconds_per_failure)
        for c, share in shares.items()
    )


# The restart's phases as simd names them (docs/model.md, "Restart phases"): the scenario's recovery.phases, the
# checkpoint's load (checkpoint.load_seconds) and a warm standby's swap; without recovery.phases the cold restarts
# are one part, "restart".
RESTART_PHASES = ("stop", "reschedule", "checkpoint_load", "communicator_init", "warmup", "warm_swap")

# NCCL's communicator initialization against the job's size, a power law through two measurements: TrainMover's
# 8,192-GPU cold restart (1.09 min = 65.4 s, TRAINMOVER_COLD_RESTART_MINUTES) and stock NCCL's ~265 s at 96K =
# 98,304 GPUs (NCCLX, Si et al., arXiv 2510.20171). Two points give the exponent exactly:
# log(265 / 65.4) / log(98304 / 8192) = 0.563 (docs/model.md: the fit, and why TrainMover's start-up figures at
# 32 and 1,024 GPUs give no law).
NCCL_INIT_AT_GPUS, NCCL_INIT_SECONDS = 8192, 65.4
NCCL_INIT_EXPONENT = round(math.log(265.0 / 65.4) / math.log(98304 / 8192), 3)


def restart_by_phase(phases_us: Mapping[str, int] | None, cause_restart_us: Iterable[int],
                     cause_warm: Iterable[bool], interruptions: Iterable[int], restart_us: int,
                     load_us: int, attempts: Iterable[int] = (), in_process_us: int | None = None,
                     escalation_us: int | None = None, migration_us: int | None = None) -> dict[str, int]:
    """The restart bucket (``restart_us``) split by phase, exactly (the parts sum to it): the checkpoints' loads
    (``load_us``, the engine's count: ``checkpoint_load``), the warm standby's swaps (the restarts of the causes
    ``cause_warm`` marks, each its restart ``cause_restart_us``: ``warm_swap``) and the cold restarts. Without
    ``phases_us`` the cold restarts are one part, ``restart``; with them, each cold restart (a hard failure's or an
    SDC rollback's: their sum is every cold restart) pays each phase, and the cold restarts are the cold causes'
    restarts plus the SDC rollbacks, which are what the bucket holds beyond the hard failures' restarts, the loads
    and the parts below.

    A cause's restarts are its interruptions, or with in-process restarts and crash loops the engine's count
    ``attempts`` (Totals.restart_attempts: a crash loop's failed attempts each pay the cause's restart, an
    in-process restart that succeeded pays none); the in-process restarts' time (``in_process_us``: their count
    times their seconds), the escalations' (``escalation_us``) and the live migrations' (``migration_us``) are parts
    of their own, ``in_process``, ``escalation`` and ``migration`` (None: not a part, the scenario has no such
    mechanism)."""
    counts = list(attempts) or list(interruptions)
    restarts = list(zip(cause_restart_us, cause_warm, counts, strict=True))
    own = {k: v for k, v in (("in_process", in_process_us), ("escalation", escalation_us),
                             ("migration", migration_us)) if v is not None}
    rest = restart_us - load_us - sum(own.values())
    warm = sum(r * n for r, w, n in restarts if w)
    if phases_us is None:
        return {"restart": rest - warm, "checkpoint_load": load_us, "warm_swap": warm, **own}
    cold = sum(phases_us.values())
    hard = sum(r * n for r, _, n in restarts)
    sdc = (rest - hard) // cold if cold else 0
    n_cold = sdc + sum(n for _, w, n in restarts if not w)
    out = dict.fromkeys(RESTART_PHASES, 0)
    out.update({k: n_cold * v for k, v in phases_us.items()})
    out["checkpoint_load"], out["warm_swap"] = load_us, warm
    out.update(own)
    return out


def expected_restart_us(restart_us: int, in_process: bool, loops: bool, in_process_us: int, success: float,
                        failure: float, attempts: int, escalation_us: int) -> float:
    """The mean restart of one interruption of a cause whose restart is ``restart_us`` (docs/model.md, "In-process
    restarts", "Crash loops"): with ``in_process`` an in-process restart of ``in_process_us`` first, which succeeds
    with ``success``; unless it did, the cause's restart, which with ``loops`` fails with ``failure`` per attempt,
    at most ``attempts`` attempts (their mean number ``(1 - f^K) / (1 - f)``), then an escalation of
    ``escalation_us`` with probability ``f^K``. Without either: ``restart_us`` itself (the same number)."""
    if not in_process and not loops:
        return restart_us
    full = float(restart_us)
    if loops and failure > 0.0:
        mean_attempts = attempts if failure >= 1.0 else (1.0 - failure ** attempts) / (1.0 - failure)
        full = restart_us * mean_attempts + escalation_us * failure ** attempts
    return in_process_us + (1.0 - success) * full if in_process else full


def expected_restarts_us(plan) -> list[float]:
    """Per cause of a compiled plan (simd.engine.spec.Plan: its ``cause_restart_us``, ``cause_recovery`` bits,
    in-process and crash-loop fields), the mean restart of one interruption (:func:`expected_restart_us`)."""
    bits = plan.cause_recovery or (0,) * len(plan.cause_restart_us)
    return [expected_restart_us(r, bool(b & 1), bool(b & 2), plan.inproc_us, plan.inproc_ok, plan.restart_fail,
                                plan.restart_limit, plan.escalation_us) for r, b in zip(plan.cause_restart_us, bits,
                                                                                        strict=True)]


def migrated_first_order(hazard: float, shares: Sequence[float], recovery: Sequence[float],
                         predicted: Sequence[float], migration: float) -> tuple[float, float]:
    """The first-order model's hazard and mean recovery with live migration (docs/model.md, "Predicted failures
    migrated live"), a standby taken to be there: a share ``p_c`` of cause c's failures (its share ``s_c``) is
    migrated, a pause ``migration`` with no rollback, the rest are interruptions. The loss rate
    ``h sum s_c (1 - p_c) (R_c + rollback) + h sum s_c p_c P`` is the model's with the hazard ``h sum s_c (1 - p_c)``
    and the mean recovery ``(sum s_c (1 - p_c) R_c + sum s_c p_c P) / sum s_c (1 - p_c)``: the pauses charged to the
    interruptions. Every failure migrated: (0, 0)."""
    kept = math.fsum(s * (1.0 - p) for s, p in zip(shares, predicted, strict=True))
    if kept <= 0.0:
        return 0.0, 0.0
    cost = math.fsum(s * (1.0 - p) * r + s * p * migration
                     for s, p, r in zip(shares, predicted, recovery, strict=True))
    return hazard * kept, cost / kept
