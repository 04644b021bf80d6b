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
ticks. The kernel keeps the window as two numbers of the State (``hyper_end``, ``hyper_anchor``): loop.py.
"""
