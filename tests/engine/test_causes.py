"""Failure causes and recovery strategies in the engine."""

import math
from dataclasses import replace

from specs import llama3_causes, spec

from simd.engine import US_PER_SECOND, advance, new_state, run_job
from simd.models import recovery


def test_cause_shares_match_their_configuration():
    s = spec(n_gpus=16384, hard_per_gpu_hour=1e-4, sdc_per_gpu_hour=0.0, causes=llama3_causes())
    state, _ = advance(new_state(s), 300 * 24 * 3600 * US_PER_SECOND)
    counts = dict(zip(state.plan.cause_names, state.totals.interruptions, strict=True))
    n = sum(counts.values())
    assert n > 5000
    for name, share in recovery.LLAMA3_CAUSE_SHARES.items():
        se = math.sqrt(n * share * (1 - share))
        assert abs(counts[name] - n * share) < 4 * se, (name, counts[name], n * share)


def test_detection_and_restart_follow_the_cause():
    s = spec(n_gpus=16384, hard_per_gpu_hour=1e-4, sdc_per_gpu_hour=0.0, causes=llama3_causes("warm"))
    state, _ = advance(new_state(s), 200 * 24 * 3600 * US_PER_SECOND)
    t = state.totals
    by = dict(zip(state.plan.cause_names, t.interruptions, strict=True))
    detect = sum(by[c] * recovery.DETECTION_SECONDS[c] for c in by)
    restart = sum(by[c] * (recovery.WARM_SWAP_SECONDS if c in recovery.WARM_CAPABLE_CAUSES
                           else recovery.COLD_RESTART_SECONDS) for c in by)
    assert t.detection_us == round(detect * US_PER_SECOND)
    assert t.restart_us == round(restart * US_PER_SECOND)  # no SDC: every restart is a failure's


def test_warm_standby_lowers_wall_time_against_cold():
    cold = spec(causes=llama3_causes("cold"))
    warm = spec(causes=llama3_causes("warm"))
    seeds = range(100)
    wall_cold = sum(run_job(replace(cold, seed=k)).wall_seconds for k in seeds)
    wall_warm = sum(run_job(replace(warm, seed=k)).wall_seconds for k in seeds)
    # the same seeds draw the same failures and causes: warm saves restart time on gpu/network/host
    assert wall_warm < wall_cold
    j_cold, j_warm = run_job(replace(cold, seed=1)), run_job(replace(warm, seed=1))
    assert j_cold.interruptions_by_cause == j_warm.interruptions_by_cause
    assert j_warm.restart_seconds < j_cold.restart_seconds
