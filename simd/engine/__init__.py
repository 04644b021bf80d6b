"""The simulation core: pure and deterministic, numpy, numba and stdlib only (docs/design.md sections 3 and 4).

No clock, file, environment variable or global random generator is read here, and neither
prometheus_client nor apscheduler is imported (a test checks it).

This module is the engine's only import surface for the rest of simd (tests/test_layers.py checks it): what
is named here is the engine's API; its modules are its inside. The replicas' batch and the sweeps' common
random numbers load the compiled kernels (numba), so they are imported on first use (PEP 562), and reading a
scenario file stays light.
"""

from importlib import import_module

from simd.engine.core import advance, new_state, retarget, run_job
from simd.engine.fleet import Accelerator
from simd.engine.frozen import built
from simd.engine.hazard import NEVER, per_step_cluster_hazard
from simd.engine.results import Event, JobResult, bucket_seconds
from simd.engine.servers import JOB as JOB_ROLE
from simd.engine.servers import ROLES as SERVER_ROLES
from simd.engine.servers import STATES as SERVER_STATES
from simd.engine.servers import Servers, cluster_size
from simd.engine.shadow import Shadow, shadow_ranks
from simd.engine.spec import (
    US_PER_SECOND,
    Cause,
    CommittedSdc,
    Detector,
    Hyper,
    JobSpec,
    MemoryTier,
    Plan,
    Stragglers,
    compile_seeds,
    compile_spec,
    job_hazards,
    refused,
    refused_tiers,
    to_us,
    with_seed,
)
from simd.engine.state import BUCKETS, State, Totals
from simd.engine.stragglers import bucket_bounds

_ON_FIRST_USE = {
    "advance_replicas": "replicas", "new_replicas": "replicas", "on_kernel": "replicas",
    "retarget_replicas": "replicas", "run_jobs": "replicas", "state_columns": "replicas",
    "server_census": "replicas", "first_jobs": "replicas", "summed_totals": "replicas",
    "Shared": "crn", "duration_key": "crn",
    "kernels": None,  # the module: the compiled units, compiled ahead by `simd compile` and the daemon's warm-up
    "work": None,  # the module: the kernel's cost model and a job's expected work (the daemon's and the file's bound)
    "njit": "jit",  # numba.njit with simd's kernel cache: for compiled code outside the engine (simd.traces.regimes)
}

__all__ = [
    "BUCKETS", "JOB_ROLE", "NEVER", "SERVER_ROLES", "SERVER_STATES", "US_PER_SECOND", "Accelerator", "Cause",
    "CommittedSdc", "Detector",
    "Event", "Hyper", "JobResult", "JobSpec", "MemoryTier", "Plan", "Servers", "Shadow", "State", "Stragglers",
    "Totals", "advance",
    "bucket_bounds", "bucket_seconds", "built", "cluster_size", "compile_seeds", "compile_spec", "job_hazards",
    "new_state", "per_step_cluster_hazard", "refused", "refused_tiers", "retarget", "run_job", "shadow_ranks",
    "to_us", "with_seed",
    *_ON_FIRST_USE,
]


def __getattr__(name: str):
    if name in _ON_FIRST_USE:
        module = _ON_FIRST_USE[name]
        value = import_module(f"simd.engine.{name}") if module is None else \
            getattr(import_module(f"simd.engine.{module}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'simd.engine' has no attribute {name!r}")
