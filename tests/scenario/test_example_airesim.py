"""docs/examples/airesim-defaults.yaml: AIReSim's default job as a simd scenario (docs/servers.md, the mapping).
It is a valid scenario file, and it is AIReSim's kind of job: no work lost on a failure beyond the 1 s step it
hits, no checkpoint or validation time, every failure paying the 20 min recovery."""

from pathlib import Path

from simd.engine import run_job
from simd.scenario import parse_config

FILE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "airesim-defaults.yaml"


def test_the_airesim_mapping_runs_as_airesim_models_a_job():
    (s,) = parse_config(FILE.read_text()).scenarios
    assert s.job_spec().servers.gpus_per_server == 1
    job = run_job(s.job_spec(7))
    b = job.bucket_seconds
    assert job.interruptions > 10_000  # 4,096 servers at 0.01 a day over ~410 days
    assert b["productive"] == 256 * 86400 and b["checkpoint"] == b["validation"] == b["detection"] == 0
    assert b["rollback"] <= job.interruptions * 1.0  # at most the failing 1 s step each
    assert b["restart"] == job.interruptions * 1200.0
    assert job.repairs["manual"] / job.repairs["started"] < 0.4  # 0.32: escalated only when automatic failed


def test_the_airesim_mapping_expresses_its_rescheduling_policy():
    """AIReSim's policy: once its 16 standbys run out, the job restarts with the job and its standbys staffed after a
    3 min host selection. Here the 48 idle servers are spares taken at once, so every re-scheduling (a spare taken)
    costs the host selection alone, and the job never waits for a repair (AIReSim's report: no stall)."""
    (s,) = parse_config(FILE.read_text()).scenarios
    sv = s.job_spec().servers
    assert (sv.warm_standbys, sv.gang, sv.host_selection_seconds) == (16, True, 180.0)
    job = run_job(s.job_spec(7))
    assert job.replacements["spare"] > 5 and job.replacements["waited"] == 0
    assert job.bucket_seconds["waiting"] == 180.0 * job.replacements["spare"]
