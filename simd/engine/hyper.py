"""Hyper-checkpointing (seed 000, exercise 2): after an SDC detection, checkpoint at a shorter interval for a while.

Where the hyper checkpoints fall. An SDC *detection* (a validation catching it; a checkpoint baking it in under
seed 000's reference semantics, which rolls it back there; a detector finding it under committed SDCs, late.py;
not the end of a job) rolls the job back to a checkpoint at job step L and opens a window: the next
``window_steps`` executed steps (recomputed steps and steps that fail included) put their checkpoints on the
lattice L + k * ``interval_steps`` instead of the multiples of the normal interval. A rollback inside the window
(a hard failure, another detection) returns to a point of that lattice, so the lattice stays the same; a
detection inside the window opens it again for ``window_steps`` from there (anchored at its rollback point).
After the window, checkpoints are again at the multiples of the normal interval (the last one may lie off them:
the next is the next multiple). A job's end closes the window: the next job starts on the normal interval.

Validation keeps its points (the multiples of ``validation_interval_steps``). A hyper checkpoint that is not a
validation point can bake an SDC in: no SDC is baked in only if validation divides both the normal and the hyper
interval (then every anchor, a rollback point, is a validation point too); config.py warns otherwise.

Counted: activations (detections that open a window while none is open) and executed steps under hyper.

Every position is an executed-step index or a job step, so the windows do not depend on how time is cut into
ticks. Such plans run on the extended walk (xwalk.py).
"""

from __future__ import annotations

from simd.engine.hazard import NEVER
from simd.engine.spec import Plan


def lattice(p: Plan, hyper_end: int, anchor: int, g: int) -> tuple[int, int, int]:
    """(period, offset, last executed step of this piece) of the checkpoint lattice for executed steps g + 1 on:
    the hyper lattice until ``hyper_end``, else the normal one (to no end)."""
    if p.hyper_every and g < hyper_end:
        return p.hyper_every, anchor % p.hyper_every, hyper_end
    return p.ckpt_every, 0, NEVER


def points(a: int, b: int, period: int, offset: int) -> int:
    """How many job steps q in (a, b] are on the lattice offset + k * period."""
    return (b - offset) // period - (a - offset) // period


def next_point(q: int, period: int, offset: int) -> int:
    """The first lattice point after job step q."""
    return offset + ((q - offset) // period + 1) * period


def on_lattice(q: int, period: int, offset: int) -> bool:
    return (q - offset) % period == 0


def newest_points(a: int, b: int, period: int, offset: int, k: int) -> list[int]:
    """The newest (at most k) lattice points in (a, b], oldest first."""
    last = offset + ((b - offset) // period) * period
    n = min(k, points(a, b, period, offset))
    return [last - i * period for i in range(n - 1, -1, -1)]


def open_window(p: Plan, totals: dict, hyper_end: int, g: int, rollback_to: int) -> tuple[int, int]:
    """An SDC detection at executed step ``g`` rolled back to job step ``rollback_to``: the new (hyper_end,
    anchor). Counts an activation when no window was open."""
    if g >= hyper_end:
        totals["hyper_activations"] += 1
    return g + p.hyper_window, rollback_to
