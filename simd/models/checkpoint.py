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
