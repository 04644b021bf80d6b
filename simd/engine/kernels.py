"""The engine's compiled kernels, in units that compile together, and compiling them ahead of use.

numba compiles a kernel for each combination of argument types on its first call, so a fresh machine waits
for the compiler before the first result (simd.kernelcache keeps what it compiled). A *unit* is what one path
of the engine compiles; its *workload* runs tiny jobs through that path's public entry points, so it compiles
exactly the signatures real runs use (tests/offline/test_precompile.py checks that nothing else is compiled afterwards):

- ``loop``: loop.advance_all, the engine's one compiled loop over replicas (core.advance's compiled path for
  one replica, simd.engine.replicas for a lane's many), with its callees (pcg, stepkernel): every mechanism,
  with or without stragglers;
- ``crn``: crn.py's shared step windows (simd sweep's common random numbers): their fill and the call of the
  loop on a window (loop.advance_all with the same signature as the lanes' calls: a window without steps there,
  loopcall.NO_PREFIX), so ``crn`` needs ``loop`` (NEEDS) and, once ``loop`` is compiled, costs seconds.

:func:`units_for` names the units a job uses (the same tests of the plan as core.advance's dispatch);
:func:`run_unit` runs a unit's workload. Compiling them ahead of use, in parallel processes, timed, is
simd.offline.precompile's (this package reads no clock and starts no process).

Why compiling takes what it takes, and what was cut: docs/engine.md, "Compiling the kernels".
"""

from __future__ import annotations

from dataclasses import replace

from simd.engine.spec import CommittedSdc, Detector, Hyper, JobSpec, Plan, Stragglers

UNITS = ("loop", "crn")
# The units whose kernels call another unit's: compiled after it, in the same process (in parallel, each would
# compile the other's kernels again)
NEEDS = {"crn": ("loop",)}


def compiled() -> bool:
    """Whether the kernels are compiled: not under ``NUMBA_DISABLE_JIT=1``, which runs the same kernel source as
    Python (for a debugger or a print; the results are the same, far slower: tests/engine/test_nojit.py), and
    leaves nothing to compile."""
    from numba import config

    return not config.DISABLE_JIT

# A small job: 64 GPUs, 10 s steps, 400 steps, rates that give a few failures and SDCs per job (so the paths
# that handle them run); every number only has to make a valid, quick job.
_BASE = JobSpec(n_gpus=64, step_seconds=10.0, target_steps=400, hard_per_gpu_hour=0.05, sdc_per_gpu_hour=0.05,
                ckpt_interval_steps=20, ckpt_seconds=5.0, validation_interval_steps=10, validation_seconds=1.0,
                restart_seconds=5.0, seed=1)
# no jitter: the step-time tables are then constant (built in microseconds; with jitter their quantile tables take
# ~0.5 s), and the kernels' argument types are the same
_STRAGGLERS = Stragglers(jitter_seconds=0.0, slow_ranks=1, slowdown=1.3, replace_after_steps=100)
_HYPER = Hyper(interval_steps=5, window_steps=50)
_COMMITTED = CommittedSdc(detectors=(Detector("scan", "uniform", 600.0), Detector("canary", "lognormal", 60.0, 0.5),
                                     Detector("audit", "exponential", 300.0, coverage=0.5)), retention_checkpoints=4)


def _loop() -> None:
    import numpy as np

    from simd.engine.core import run_job
    from simd.engine.replicas import advance_replicas, new_replicas, retarget_replicas
    from simd.engine.stepkernel import erfc_into

    run_job(_BASE)
    run_job(replace(_BASE, stragglers=_STRAGGLERS))
    run_job(replace(_BASE, hyper=_HYPER))
    run_job(replace(_BASE, validation_interval_steps=0, committed_sdc=_COMMITTED))
    lane = advance_replicas(new_replicas(_BASE, (1, 2)), 1_000_000_000)
    lane = retarget_replicas(lane, replace(_BASE, stragglers=_STRAGGLERS))
    advance_replicas(lane, 2_000_000_000)
    erfc_into(np.zeros(2), np.empty(2))  # the straggler tables' tails (jitter builds them; _STRAGGLERS has none)


def _crn() -> None:
    from simd.engine.crn import Shared

    specs = [replace(_BASE, stragglers=_STRAGGLERS, ckpt_interval_steps=c) for c in (20, 40)]
    Shared(specs).run(1, [10**12, 10**12])


_WORKLOADS = {"loop": _loop, "crn": _crn}
# The kernels each workload calls from Python (module, function): whether they are in numba's cache says
# whether the unit is (simd.offline.precompile compiles only the others side by side).
ENTRY_POINTS = {"loop": (("loop", "advance_all"), ("stepkernel", "erfc_into")),
                "crn": (("crn", "_run"), ("crn", "_fill"))}


def run_unit(unit: str) -> None:
    """Run ``unit``'s workload: compiles its kernels (or loads them from numba's cache) in this process."""
    if unit not in _WORKLOADS:
        raise ValueError(f"no kernel unit {unit!r} (known: {', '.join(UNITS)})")
    _WORKLOADS[unit]()


def units_for(spec: JobSpec) -> tuple[str, ...]:
    """The units a job of ``spec`` runs on: the one kernel, whatever its mechanisms (nothing to compile the spec
    for; the sweeps' windows, ``crn``, are asked for by simd sweep)."""
    return ("loop",)


def units_of(plan: Plan) -> tuple[str, ...]:
    """units_for, for a compiled ``plan``."""
    return units_for(plan.spec)
