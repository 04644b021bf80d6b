"""Committed SDCs and late detectors (late.py, loop.py): the per-step oracle, tick-size invariance, retention."""

from dataclasses import replace

import pytest
from late_sdc_cases import CONFIGS
from specs import spec

from simd.engine import US_PER_SECOND, Cause, advance, new_state, run_job
from simd.engine.hazard import NEVER
from simd.engine.late import latency_us
from simd.engine.spec import CommittedSdc, Detector, MemoryTier

S = US_PER_SECOND


def test_configurations_exercise_what_they_claim():
    jobs = {name: [run_job(replace(s, seed=k)) for k in range(60)] for name, s in CONFIGS.items()}
    for name, js in jobs.items():
        assert sum(j.sdc_late_found for j in js) > 5, name
        assert sum(j.sdc_unrecoverable for j in js) > 0, name
    assert sum(j.checkpoints_lost for j in jobs["layers_no_validation"]) > 5
    assert sum(j.checkpoints_lost for j in jobs["nondividing_retention1"]) == 0  # retention 1: nothing to lose
    assert sum(j.sdc_late_found - j.sdc_unrecoverable for j in jobs["nondividing_retention1"]) == 0
    assert sum(j.hyper_activations for j in jobs["with_hyper_causes_stragglers"]) > 10
    finds = {d: sum(j.sdc_found_by_detector[d] for j in jobs["layers_no_validation"]) for d in
             ("loss_spike", "ripple", "fleetscanner")}
    assert all(v > 0 for v in finds.values()), finds


def test_latency_inverse_transforms():
    assert latency_us("exponential", 100.0, 0.0, 1.0) == 0
    assert latency_us("exponential", 1e6, 0.0, 0.5) == round(1e6 * 0.6931471805599453)
    assert latency_us("lognormal", 1e6, 1.0, 0.5) == 1_000_000  # the median
    assert latency_us("lognormal", 1e6, 0.0, 0.01) == 1_000_000  # sigma 0: a fixed latency
    assert latency_us("uniform", 1e6, 0.0, 0.25) == 250_000
    with pytest.raises(ValueError, match="unknown latency distribution"):
        latency_us("weibull", 1.0, 0.0, 0.5)


# Hand-placed: checkpoints every 25 steps (300 s), no validation, 60 s steps, restart 60 s; one SDC candidate
# on executed step 30; one detector with a fixed latency (lognormal, sigma 0). The onset step ends at
# 30 * 60 + 300 = 2100 s; the checkpoint at 50 commits the SDC (baked in).
def _placed(retention, latency_s, sdc=30, hard=NEVER, **over):
    detector = Detector("fixed", "lognormal", latency_s)
    fields = dict(hard_per_gpu_hour=1e-15 if hard < NEVER else 0.0, sdc_per_gpu_hour=1e-15, target_steps=1000,
                  ckpt_interval_steps=25, validation_interval_steps=0,
                  committed_sdc=CommittedSdc((detector,), retention))
    s = spec(**{**fields, **over})
    return replace(new_state(s), hard=(0, hard), sdc=(0, sdc))


def test_a_late_find_rolls_back_to_the_newest_checkpoint_older_than_the_onset():
    # found 3000 s after the onset step's end (5100 s): at the end of step 75 (75 * 60 + 2 * 300 = 5100 s)
    state, events = advance(_placed(retention=3, latency_s=3000.0), 5160 * S, trace=True)
    assert [(e.kind, e.t_us) for e in events] == [("sdc_baked", 3600 * S), ("sdc_late_found", 5160 * S)]
    assert events[1].cause == "fixed"
    t = state.totals
    assert (state.step, state.last_ckpt, state.corrupted) == (25, 25, False)
    assert (t.sdc_baked, t.sdc_late_found, t.sdc_unrecoverable, t.checkpoints_lost, t.detector_finds) == \
        (1, 1, 0, 1, (1,))
    assert (t.checkpoints, t.steps_committed, t.steps_recomputed) == (2, 25, 50)
    assert t.productive_us == 25 * 60 * S and t.rollback_us == 50 * 60 * S and state.pending_us == 0


def test_an_sdc_that_outlives_retention_is_unrecoverable():
    # retention 1: the only retained checkpoint (50) holds the SDC: back to it, the SDC accepted
    state, events = advance(_placed(retention=1, latency_s=3000.0), 5160 * S, trace=True)
    assert [e.kind for e in events] == ["sdc_baked", "sdc_unrecoverable"]
    t = state.totals
    assert (state.step, state.last_ckpt, state.corrupted) == (50, 50, False)
    assert (t.sdc_late_found, t.sdc_unrecoverable, t.checkpoints_lost) == (1, 1, 0)
    assert (t.steps_committed, t.steps_recomputed) == (50, 25)  # steps 26..50 kept, 51..75 lost
    # retention 2 with the SDC in checkpoints 50, 75, 100: back to 75, the oldest retained; 100 is lost
    # (found at the end of step 101: 2100 s + 5000 s = 7100 s falls in it, 6900 .. 7260 s with checkpoint 100)
    state, _ = advance(_placed(retention=2, latency_s=5000.0), 7320 * S)
    t = state.totals
    assert (t.sdc_unrecoverable, t.checkpoints_lost, t.steps_committed) == (1, 1, 75)


def test_validation_still_catches_an_sdc_before_a_checkpoint():
    state, events = advance(_placed(retention=3, latency_s=10**6, validation_interval_steps=10), 10**5 * S,
                            trace=True)
    assert [e.kind for e in events][:1] == ["sdc_detected"]  # at the validation of step 30
    assert state.totals.sdc_baked == 0 and state.totals.sdc_late_found == 0


def test_a_committed_sdc_survives_a_hard_failure():
    state = _placed(retention=3, latency_s=3000.0, hard=60)  # fails on step 60, after checkpoint 50
    # back to 50 (the SDC in it) at 4260 s; the deadline 5100 s is the end of job step 64: back to 25
    state, events = advance(state, 5160 * S, trace=True)
    assert [e.kind for e in events] == ["sdc_baked", "interruption", "sdc_late_found"]
    assert (state.step, state.last_ckpt, state.totals.steps_recomputed) == (25, 25, 10 + 39)


def test_an_sdc_present_at_the_end_of_the_job_is_baked_in_once_and_void_since_the_clean_checkpoint():
    state, events = advance(_placed(retention=3, latency_s=10**7, target_steps=60), 10**5 * S, max_jobs=1)
    job = events[-1].job
    assert job.sdc_baked == 1 and job.recompute_steps == 35 and job.checkpoints == 2
    assert job.bucket_seconds["productive"] == 25 * 60


def test_a_job_end_voiding_work_committed_once_takes_its_productive_credit_back():
    # checkpoint 25 commits 25 steps; a hard failure in step 30 finds it corrupt and the job starts over (25 steps
    # committed once: State.hw); the SDC sets in at job step 10 of the redo and is in checkpoints 25 and 50 when the
    # job ends at 60: void since the start, so none of the job's work is kept and every executed step is rollback
    state, events = advance(_placed(retention=3, latency_s=1e7, sdc=40, hard=30, target_steps=60,
                                    ckpt_corrupt_on_load=1.0), 10**5 * S, max_jobs=1, trace=True)
    assert [e.kind for e in events] == ["interruption", "sdc_baked", "job_end"]
    job, t = events[-1].job, state.totals
    assert job.recompute_steps == 30 + 60 and job.effective_utilization == 0.0
    assert job.bucket_seconds["productive"] == 0 and job.bucket_seconds["rollback"] == 90 * 60
    # the counters: the first 25 steps' credit stays in productive_us (counters do not go down), taken back here
    assert (t.steps_committed, t.productive_us, t.voided_us, t.rollback_us) == (25, 25 * 60 * S, 25 * 60 * S,
                                                                                65 * 60 * S)


@pytest.mark.parametrize("where", ["corrupt_loads", "tier", "jit_tail"])
def test_every_step_executed_and_not_kept_is_rollback(where):
    """Committed SDCs found late or never (coverage below 1) with recoveries that go below committed work (a
    corrupt load; a local tier's loss, which every hard failure is): in every job the rollback bucket holds the base
    compute of exactly the steps recomputed (their first execution's credit taken back when the job's end voids
    their redo), and the jobs where that happens are there. ``jit_tail``: just-in-time saves and failing saves, a
    target no multiple of the interval, so that the job's end also meets an SDC in no checkpoint below the work
    committed once (the end's second branch)."""
    detectors = (Detector("loss_spike", "exponential", 1800.0, coverage=0.6),
                 Detector("scanner", "uniform", 43200.0, coverage=0.9))
    over = {"corrupt_loads": dict(ckpt_corrupt_on_load=0.3),
            "tier": dict(tier=MemoryTier("local", 20, 2.0, load_seconds=10.0)),
            "jit_tail": dict(ckpt_corrupt_on_load=0.5, ckpt_save_failure=0.2, jit_seconds=20.0, target_steps=4190,
                             causes=(Cause("hardware", 1.0, 0.0, 120.0, jit=True),),
                             hard_per_gpu_hour=8e-3, sdc_per_gpu_hour=6e-3,
                             committed_sdc=CommittedSdc((Detector("scanner", "uniform", 43200.0, coverage=0.3),), 2))}[
        where]
    s = spec(**{**dict(n_gpus=128, step_seconds=10.0, target_steps=4000, hard_per_gpu_hour=5e-3,
                       sdc_per_gpu_hour=3e-3, ckpt_interval_steps=200, ckpt_seconds=30.0, ckpt_load_seconds=60.0,
                       validation_interval_steps=0, restart_seconds=120.0, committed_sdc=CommittedSdc(detectors, 2)),
                **over})
    voided = done = 0
    for seed in range(200):
        state, events = advance(new_state(replace(s, seed=seed)), 10**13, max_jobs=1)
        if not events:  # (not finished in 116 days: the stormiest jobs of jit_tail)
            continue
        done += 1
        job, t = events[-1].job, state.totals
        assert job.bucket_seconds["rollback"] == job.recompute_steps * 10, seed
        assert job.bucket_seconds["productive"] == (t.productive_us - t.voided_us) / S
        voided += t.voided_us > 0
    assert done > 150 and voided > 10


def test_with_every_load_corrupt_a_late_find_falls_back_past_the_clean_checkpoints_to_the_start():
    # retention 3 keeps 25 (clean) and 50 (holding the SDC): the find loads 25 (50 discarded, not loaded), finds it
    # corrupt, and the job starts over; the 25 steps committed are recomputed, not productive again
    state, events = advance(_placed(retention=3, latency_s=3000.0, ckpt_corrupt_on_load=1.0, ckpt_load_seconds=93.6),
                            (5160 + 94) * S, trace=True)
    assert [e.kind for e in events] == ["sdc_baked", "sdc_late_found"]
    t = state.totals
    assert (state.step, state.last_ckpt, state.corrupted) == (0, 0, False)
    assert (t.sdc_late_found, t.sdc_unrecoverable, t.checkpoints_lost, t.loads_corrupt, t.fallbacks_to_start) == \
        (1, 0, 1, 1, 1)
    assert t.restart_us == round((60 + 93.6) * S) and t.load_us == round(93.6 * S)
    assert (t.steps_committed, t.steps_recomputed, state.hw) == (25, 75, 25)


def test_with_every_load_corrupt_an_unrecoverable_find_falls_back_from_the_oldest_kept_to_the_start():
    # retention 1 keeps 50 only, holding the SDC: unrecoverable, its load found corrupt, the job starts over
    state, events = advance(_placed(retention=1, latency_s=3000.0, ckpt_corrupt_on_load=1.0, ckpt_load_seconds=93.6),
                            (5160 + 94) * S, trace=True)
    assert [e.kind for e in events] == ["sdc_baked", "sdc_unrecoverable"]
    t = state.totals
    assert (state.step, state.last_ckpt, state.corrupted) == (0, 0, False)
    assert (t.sdc_unrecoverable, t.checkpoints_lost, t.loads_corrupt, t.fallbacks_to_start) == (1, 0, 1, 1)


@pytest.mark.parametrize(("seed", "went_on_from"), [(17, 25), (0, 0)])
def test_a_checkpoint_found_corrupt_does_not_bring_the_start_back_into_the_ring(seed, went_on_from):
    """Retention 2: the SDC sets in at job step 10, checkpoints 25 and 50 hold it (the start out of the ring); a hard
    failure in step 60 finds 50 corrupt and goes back to 25, the SDC still there (the seeds where the "corrupt"
    stream draws so); the late find then has no clean checkpoint kept, the start not among them although one
    checkpoint is kept: unrecoverable, on from 25 with the SDC accepted, or (seed 0: 25 found corrupt too) the start,
    reached by a fallback and counted as one."""
    state, _ = advance(_placed(retention=2, latency_s=4400.0, sdc=10, hard=60, ckpt_corrupt_on_load=0.5,
                               ckpt_load_seconds=10.0, seed=seed), 4400 * S)
    assert (state.totals.loads_corrupt, state.last_ckpt, state.corrupted, state.corrupt_ckpts) == (1, 25, True, (25,))
    assert state.ring_filled
    state, events = advance(state, 5100 * S, trace=True)
    assert [e.kind for e in events] == ["sdc_unrecoverable"]
    t = state.totals
    assert (state.last_ckpt, state.corrupted, t.sdc_late_found, t.sdc_unrecoverable) == (went_on_from, False, 1, 1)
    assert (t.loads_corrupt, t.fallbacks_to_start) == ((1, 0) if went_on_from else (2, 1))


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_loads_that_are_never_corrupt_give_the_committed_jobs_results(name):
    """The committed SDCs' rules with corrupt loads (the ring of kept checkpoints holding clean ones and those
    holding the SDC, every checkpoint a unit, one draw per load) with a corruption that never happens are the
    committed rules: the same results."""
    for seed in range(4):
        s = replace(CONFIGS[name], seed=seed, ckpt_load_seconds=93.6)
        plain, kept = run_job(s), run_job(replace(s, ckpt_corrupt_on_load=1e-300))
        assert kept.loads == {"corrupt": 0, "fallbacks_to_start": 0}
        assert replace(kept, loads={}) == plain


def test_a_late_find_back_to_a_tier_copy_drops_the_kept_persistent_checkpoints_that_hold_the_sdc():
    """A local tier every step keeping 10 copies, checkpoints every 5 kept 3 at a time with corrupt loads that never
    happen: the SDC sets in at job step 12, the checkpoint at 15 takes it, the find (in step 17) goes back to the
    tier's clean copy of step 11, and the checkpoint at 15 goes with the SDC; a hard failure in job step 13 then
    (every failure loses the local tier) goes back to the persistent checkpoint at 10, not to 15."""
    tier = MemoryTier("local", 1, 1.0, retention_checkpoints=10)
    state, events = advance(_placed(retention=3, latency_s=560.0, sdc=12, hard=19, ckpt_interval_steps=5,
                                    ckpt_corrupt_on_load=1e-300, tier=tier), 10**4 * S, trace=True)
    assert [e.kind for e in events] == ["sdc_baked", "sdc_late_found", "interruption"]
    t = state.totals
    assert (t.recoveries_tier, t.recoveries_persistent, t.sdc_late_found, t.checkpoints_lost) == (1, 1, 1, 1)
    assert t.steps_recomputed == (17 - 11) + (13 - 10)
