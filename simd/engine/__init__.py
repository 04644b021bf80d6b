"""The simulation core: pure and deterministic, numpy, numba and stdlib only (docs/design.md sections 3 and 4).

No clock, file, environment variable or global random generator is read here, and neither
prometheus_client nor apscheduler is imported (a test checks it).
"""

from simd.engine.core import advance, new_state, retarget, run_job
from simd.engine.fleet import Accelerator
from simd.engine.hazard import per_step_cluster_hazard
from simd.engine.results import Event, JobResult, bucket_seconds
from simd.engine.shadow import Shadow
from simd.engine.spec import US_PER_SECOND, Cause, JobSpec, Stragglers, job_hazards, to_us
from simd.engine.state import BUCKETS, State, Totals

__all__ = [
    "BUCKETS", "US_PER_SECOND", "Accelerator", "Cause", "Shadow", "Stragglers", "Event", "JobResult", "JobSpec",
    "State", "Totals", "advance", "bucket_seconds", "job_hazards", "new_state", "per_step_cluster_hazard", "retarget",
    "run_job", "to_us",
]
