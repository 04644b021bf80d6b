"""Seed 001's five scenarios computed from ``simd.models``: each into a frozen dataclass, every number once.

Every number is computed when the report runs, from the models and their module-level constants (read at
call time, so changing a constant changes the report); none is stored here. Scenarios 1 and 2 are closed
form; scenarios 3 to 5 draw random numbers from ``seed``, one independent stream per scenario.

A dataclass's fields are the scenario's JSON document, in order, under the same names (render.py); fields
made with ``quoted()`` are figures the sentences quote (model constants, derived shares) that the JSON
document does not carry. Sequences are tuples and mappings read-only, so a result cannot change after it
is computed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from simd.models import availability as av
from simd.models import checkpoint as ck
from simd.models import recovery as rc
from simd.models import sdc
from simd.models import straggler as st

STRAGGLER_TRIALS = 1000  # independent steps for the detection statistics of scenario 4
NVRX_WINDOWS = 10  # scenario 4's NVRx scores: reporting windows ...
NVRX_WINDOW_STEPS = 100  # ... of this many steps; the straggler turns slow at the middle window
HALF = 0.5  # scenario 1 names the cluster size from which cold-repair availability is below 50%
RULE_OF_THREE = 3.0  # zero events in n trials: the 95% upper bound of the rate is about 3/n (Hanley 1983)


def quoted() -> Any:
    """A field the text and markdown quote but the JSON document leaves out."""
    return field(metadata={"json": False})


def in_json(f) -> bool:
    """Whether a dataclass field is part of the JSON document."""
    return f.metadata.get("json", True)


def _frozen(mapping: Mapping) -> Mapping:
    return MappingProxyType(dict(mapping))


def _rng(seed: int, scenario: int) -> np.random.Generator:
    """The scenario's own stream: scenarios do not share draws, so one never shifts another."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(scenario,)))


# --- scenario 1 ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScaleRow:
    """One cluster size of scenario 1's table: job MTBF and availability under cold repair and hot swap."""

    n_gpus: int
    job_mtbf_hours: float
    availability_cold: float
    availability_hot_swap: float


@dataclass(frozen=True)
class Availability:
    """Scenario 1: availability against cluster size from a node MTBF calibrated on Kokolis HPCA'25."""

    number: ClassVar[int] = 1
    node_mtbf_hours: float
    rows: tuple[ScaleRow, ...]
    cold_mttr_minutes: float
    hot_swap_mttr_minutes: float
    llama3_interval_hours: float
    llama3_implied_gpu_mtbf_years: float
    model_mtbf_hours_at_anchor: float
    anchor_gpus: int = quoted()
    anchor_mttf_hours: float = quoted()
    llama3_gpus: int = quoted()
    llama3_interruptions: int = quoted()
    llama3_days: float = quoted()
    cold_below_half_from: int | None = quoted()  # the smallest cluster whose cold availability is < 50%


def availability() -> Availability:
    node = av.node_mtbf_hours(av.KOKOLIS_JOB_MTTF_HOURS, av.KOKOLIS_JOB_GPUS)
    cold_h = av.COLD_MTTR_MINUTES / av.MINUTES_PER_HOUR
    hot_h = av.HOT_SWAP_MTTR_MINUTES / av.MINUTES_PER_HOUR
    rows = av.scale_table(node, tuple(av.SCALE_TABLE_GPUS), cold_h, hot_h)
    llama_h = av.mean_interval_hours(av.LLAMA3_INTERRUPTIONS, av.LLAMA3_DAYS)
    below = [r.n_gpus for r in rows if r.availability_cold < HALF]
    return Availability(
        node_mtbf_hours=node,
        rows=tuple(ScaleRow(r.n_gpus, r.job_mtbf_hours, r.availability_cold, r.availability_hot) for r in rows),
        cold_mttr_minutes=av.COLD_MTTR_MINUTES,
        hot_swap_mttr_minutes=av.HOT_SWAP_MTTR_MINUTES,
        llama3_interval_hours=llama_h,
        llama3_implied_gpu_mtbf_years=av.implied_gpu_mtbf_years(llama_h, av.LLAMA3_GPUS),
        model_mtbf_hours_at_anchor=av.job_mtbf_hours(node, av.KOKOLIS_JOB_GPUS),
        anchor_gpus=av.KOKOLIS_JOB_GPUS,
        anchor_mttf_hours=av.KOKOLIS_JOB_MTTF_HOURS,
        llama3_gpus=av.LLAMA3_GPUS,
        llama3_interruptions=av.LLAMA3_INTERRUPTIONS,
        llama3_days=av.LLAMA3_DAYS,
        cold_below_half_from=below[0] if below else None,
    )


# --- scenario 2 ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class IntervalRow:
    """One checkpoint interval of scenario 2's curve: long-run efficiency with full and differential saves."""

    interval_steps: int
    full_efficiency: float
    differential_efficiency: float


@dataclass(frozen=True)
class Checkpoint:
    """Scenario 2: the checkpoint interval's optimum by Young, Daly 2006 and the exact grid."""

    number: ClassVar[int] = 2
    step_seconds: float
    checkpoint_seconds: float
    differential_checkpoint_seconds: float
    mtbf_seconds: float
    restart_seconds: float
    run_steps: int
    no_checkpoint_efficiency: float
    young_interval_seconds: float
    young_interval_steps: int
    daly_interval_seconds: float
    daly_interval_steps: int
    daly_efficiency: float
    grid_optimum_steps: int
    grid_optimum_efficiency: float
    differential_optimum_steps: int
    differential_optimum_efficiency: float
    renewal_optimum_steps: int
    renewal_optimum_efficiency: float
    table: tuple[IntervalRow, ...]
    mtbf_hours: float = quoted()
    anchor_gpus: int = quoted()
    differential_cost_factor: float = quoted()
    differential_young_steps: int = quoted()
    differential_daly_steps: int = quoted()


def checkpoint() -> Checkpoint:
    step, full = ck.STEP_SECONDS, ck.FULL_CHECKPOINT_SECONDS
    diff = full * ck.DIFFERENTIAL_COST_FACTOR
    m, r, run = ck.MTBF_SECONDS, ck.RESTART_SECONDS, ck.RUN_STEPS

    def eff(n, c):
        return ck.efficiency(n, step, c, m, r)

    young_s = ck.young_interval_seconds(full, m)
    daly_s = ck.daly_interval_seconds(full, m)
    daly_n = ck.seconds_to_steps(daly_s, step)
    grid_n, grid_e = ck.optimal_interval_grid(run, step, full, m, r)
    diff_n, diff_e = ck.optimal_interval_grid(run, step, diff, m, r)
    steps = np.arange(1, run + 1)
    renewal = ck.renewal_efficiency(steps, step, full, m, r)
    ren_i = int(np.argmax(renewal))
    return Checkpoint(
        step_seconds=step,
        checkpoint_seconds=full,
        differential_checkpoint_seconds=diff,
        mtbf_seconds=m,
        restart_seconds=r,
        run_steps=run,
        no_checkpoint_efficiency=eff(run, full),
        young_interval_seconds=young_s,
        young_interval_steps=ck.seconds_to_steps(young_s, step),
        daly_interval_seconds=daly_s,
        daly_interval_steps=daly_n,
        daly_efficiency=eff(daly_n, full),
        grid_optimum_steps=grid_n,
        grid_optimum_efficiency=grid_e,
        differential_optimum_steps=diff_n,
        differential_optimum_efficiency=diff_e,
        renewal_optimum_steps=int(steps[ren_i]),
        renewal_optimum_efficiency=float(renewal[ren_i]),
        table=tuple(IntervalRow(n, eff(n, full), eff(n, diff))
                    for n in range(ck.TABLE_STRIDE_STEPS, run + 1, ck.TABLE_STRIDE_STEPS)),
        mtbf_hours=m / rc.SECONDS_PER_HOUR,
        anchor_gpus=av.KOKOLIS_JOB_GPUS,
        differential_cost_factor=ck.DIFFERENTIAL_COST_FACTOR,
        differential_young_steps=ck.seconds_to_steps(ck.young_interval_seconds(diff, m), step),
        differential_daly_steps=ck.seconds_to_steps(ck.daly_interval_seconds(diff, m), step),
    )


# --- scenario 3 ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Failure:
    """One injected failure of scenario 3: when (hours into the window) and its cause."""

    hour: float
    cause: str


@dataclass(frozen=True)
class StrategyLoss:
    """Scenario 3's lost time for one recovery strategy: this window's draw and the long-run expectation."""

    detection_seconds: float
    restart_seconds: float
    rollback_seconds: float
    lost_hours: float
    ettr: float
    expected_lost_hours: float
    expected_ettr: float


@dataclass(frozen=True)
class Recovery:
    """Scenario 3: a week of Llama 3-like failures, recovered by cold restart or warm standby."""

    number: ClassVar[int] = 3
    seed: int
    window_hours: float
    failures: tuple[Failure, ...]
    counts: Mapping[str, int]
    rollback_seconds_per_failure: float
    cold_restart_seconds: float
    warm_swap_seconds: float
    strategies: Mapping[str, StrategyLoss]  # by rc.STRATEGIES
    expected_failures: float
    window_days: float = quoted()
    gpus: int = quoted()
    mtbf_hours: float = quoted()
    checkpoint_interval_seconds: float = quoted()
    cold_restart_minutes: float = quoted()
    cold_restart_parts_minutes: Mapping[str, float] = quoted()  # TrainMover's breakdown
    warm_swap_measured_seconds: tuple[float, float] = quoted()
    detection_seconds: Mapping[str, float] = quoted()  # by cause
    cause_shares: Mapping[str, float] = quoted()
    cold_only_causes: tuple[str, ...] = quoted()  # causes a warm standby cannot take
    cold_only_failures: int = quoted()
    warm_saves_hours: float = quoted()


def recovery(seed: int) -> Recovery:
    hours = rc.WEEK_HOURS
    failures = rc.sample_failures(_rng(seed, 3), hours, rc.SCENARIO_MTBF_HOURS, rc.LLAMA3_CAUSE_SHARES)
    causes = [c for _, c in failures]
    counts = rc.count_by_cause(causes)
    rollback = rc.expected_rollback_seconds(rc.SCENARIO_CHECKPOINT_INTERVAL_SECONDS)
    lost = {strategy: rc.lost_time(causes, strategy, rollback) for strategy in rc.STRATEGIES}
    expected_n = hours / rc.SCENARIO_MTBF_HOURS
    strategies = {}
    for k, v in lost.items():
        expected = expected_n * rc.expected_lost_seconds_per_failure(k, rc.LLAMA3_CAUSE_SHARES, rollback) \
            / rc.SECONDS_PER_HOUR
        strategies[k] = StrategyLoss(v.detection_seconds, v.restart_seconds, v.rollback_seconds, v.total_hours,
                                     rc.ettr(v.total_hours, hours), expected, rc.ettr(expected, hours))
    cold_only = tuple(sorted(set(rc.CAUSES) - set(rc.WARM_CAPABLE_CAUSES), key=rc.CAUSES.index))
    return Recovery(
        seed=seed,
        window_hours=hours,
        failures=tuple(Failure(t, c) for t, c in failures),
        counts=_frozen(counts),
        rollback_seconds_per_failure=rollback,
        cold_restart_seconds=rc.COLD_RESTART_SECONDS,
        warm_swap_seconds=rc.WARM_SWAP_SECONDS,
        strategies=_frozen(strategies),
        expected_failures=expected_n,
        window_days=hours / av.HOURS_PER_DAY,
        gpus=rc.SCENARIO_GPUS,
        mtbf_hours=rc.SCENARIO_MTBF_HOURS,
        checkpoint_interval_seconds=rc.SCENARIO_CHECKPOINT_INTERVAL_SECONDS,
        cold_restart_minutes=rc.COLD_RESTART_MINUTES,
        cold_restart_parts_minutes=_frozen(rc.TRAINMOVER_COLD_RESTART_MINUTES),
        warm_swap_measured_seconds=tuple(rc.WARM_SWAP_MEASURED_RANGE_SECONDS),
        detection_seconds=_frozen(rc.DETECTION_SECONDS),
        cause_shares=_frozen(rc.LLAMA3_CAUSE_SHARES),
        cold_only_causes=cold_only,
        cold_only_failures=sum(counts[c] for c in cold_only),
        warm_saves_hours=lost["cold"].total_hours - lost["warm"].total_hours,
    )


# --- scenario 4 ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Flagged:
    """Ranks whose NVRx-style score is below ``threshold``."""

    relative: tuple[int, ...]
    individual: tuple[int, ...]
    threshold: float = quoted()


@dataclass(frozen=True)
class Straggler:
    """Scenario 4: one slow rank, found by median detection and by NVRx-style scores."""

    number: ClassVar[int] = 4
    seed: int
    n_ranks: int
    slow_rank: int
    slowdown: float
    step_seconds_with_straggler: float
    detected: tuple[int, ...]
    precision: float
    recall: float
    step_seconds_after_replacement: float
    baseline_false_positives: int
    trials: int
    trial_precision: float
    trial_recall: float
    trial_exact: int
    jitter_false_positives: int
    jitter_false_positive_rate: float
    mean_step_seconds: float
    mean_step_standard_error: float
    expected_max_step_seconds: float
    mean_step_seconds_with_straggler: float
    relative_score_slow_rank: float
    individual_score_slow_rank: float
    relative_score_min_healthy: float
    individual_score_min_healthy: float
    flagged_nvrx_default: Flagged
    flagged_simd_threshold: Flagged
    base_step_seconds: float = quoted()
    jitter_sigma_seconds: float = quoted()
    slow_percent: float = quoted()
    detection_factor: float = quoted()  # flagged above median x this
    rank_steps: int = quoted()  # trials x ranks
    false_positive_rate_bound: float = quoted()  # 95% upper bound, shown when there are none
    straggler_cost: float = quoted()  # share of the healthy cluster's throughput lost until replaced
    jitter_free_cost: float = quoted()  # the same against the jitter-free base: 1 - 1/slowdown
    nvrx_windows: int = quoted()
    nvrx_window_steps: int = quoted()
    onset_window: int = quoted()


def _ranks(mask: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.flatnonzero(mask))


def straggler(seed: int) -> Straggler:
    n, base, sigma = st.SCENARIO_RANKS, st.BASE_STEP_SECONDS, st.JITTER_SIGMA_SECONDS
    slow = {st.SLOW_RANK: st.SLOWDOWN}
    rng = _rng(seed, 4)
    truth = np.zeros(n, dtype=bool)
    truth[list(slow)] = True

    # One step, shown in full. The replacement takes the slot's jitter draw (common random numbers), so the
    # step after replacement is the baseline step exactly.
    healthy = st.rank_step_seconds(rng, (n,), base, sigma)
    slowed = st.apply_slowdown(healthy, slow)
    flagged = st.detect_stragglers(slowed)
    precision, recall = st.precision_recall(flagged, truth)

    # Many independent steps: detection statistics and the mean step time.
    trials = st.rank_step_seconds(rng, (STRAGGLER_TRIALS, n), base, sigma)
    trials_slow = st.apply_slowdown(trials, slow)
    t_flag = st.detect_stragglers(trials_slow)
    t_precision, t_recall = st.precision_recall(t_flag, np.broadcast_to(truth, t_flag.shape))
    fp_jitter = int(np.sum(st.detect_stragglers(trials)))
    steps_healthy = st.synchronous_step_seconds(trials)
    mean_step = float(np.mean(steps_healthy))
    mean_step_slow = float(np.mean(st.synchronous_step_seconds(trials_slow)))

    # NVRx-style scores over reporting windows; the straggler turns slow at the middle window.
    window_times = st.rank_step_seconds(rng, (NVRX_WINDOWS, NVRX_WINDOW_STEPS, n), base, sigma)
    onset = NVRX_WINDOWS // 2
    window_times[onset:] = st.apply_slowdown(window_times[onset:], slow)
    medians = np.median(window_times, axis=1)
    rel = st.relative_scores(medians[-1])
    ind = st.individual_scores(medians)
    healthy_mask = ~truth
    return Straggler(
        seed=seed,
        n_ranks=n,
        slow_rank=st.SLOW_RANK,
        slowdown=st.SLOWDOWN,
        step_seconds_with_straggler=st.synchronous_step_seconds(slowed),
        detected=_ranks(flagged),
        precision=precision,
        recall=recall,
        step_seconds_after_replacement=st.synchronous_step_seconds(healthy),
        baseline_false_positives=int(np.sum(st.detect_stragglers(healthy))),
        trials=STRAGGLER_TRIALS,
        trial_precision=t_precision,
        trial_recall=t_recall,
        trial_exact=int(np.sum(np.all(t_flag == truth, axis=-1))),
        jitter_false_positives=fp_jitter,
        jitter_false_positive_rate=fp_jitter / trials.size,
        mean_step_seconds=mean_step,
        mean_step_standard_error=float(np.std(steps_healthy, ddof=1) / np.sqrt(STRAGGLER_TRIALS)),
        expected_max_step_seconds=st.expected_max_normal(n, base, sigma),
        mean_step_seconds_with_straggler=mean_step_slow,
        relative_score_slow_rank=float(rel[st.SLOW_RANK]),
        individual_score_slow_rank=float(ind[st.SLOW_RANK]),
        relative_score_min_healthy=float(np.min(rel[healthy_mask])),
        individual_score_min_healthy=float(np.min(ind[healthy_mask])),
        flagged_nvrx_default=Flagged(_ranks(rel < st.NVRX_SCORE_THRESHOLD), _ranks(ind < st.NVRX_SCORE_THRESHOLD),
                                     st.NVRX_SCORE_THRESHOLD),
        flagged_simd_threshold=Flagged(_ranks(rel < st.SCORE_THRESHOLD), _ranks(ind < st.SCORE_THRESHOLD),
                                       st.SCORE_THRESHOLD),
        base_step_seconds=base,
        jitter_sigma_seconds=sigma,
        slow_percent=100.0 * (st.SLOWDOWN - 1.0),
        detection_factor=1 + st.DETECTION_THRESHOLD,
        rank_steps=trials.size,
        false_positive_rate_bound=RULE_OF_THREE / trials.size,
        straggler_cost=1.0 - mean_step / mean_step_slow,
        jitter_free_cost=1.0 - 1.0 / st.SLOWDOWN,
        nvrx_windows=NVRX_WINDOWS,
        nvrx_window_steps=NVRX_WINDOW_STEPS,
        onset_window=onset,
    )


# --- scenario 5 ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BitFlip:
    """One flipped bit of scenario 5: which rank's gradient, which element, which bit."""

    rank: int
    index: int
    bit: int


@dataclass(frozen=True)
class Sdc:
    """Scenario 5: bit flips caught by shard fingerprints, a bitwise dual run and a loss-spike guard."""

    number: ClassVar[int] = 5
    seed: int
    corrupted_ranks: tuple[int, ...]
    bit_flips: tuple[BitFlip, ...]
    fingerprint_located: tuple[int, ...]
    fingerprint_exact: bool
    dual_run_caught: int
    dual_run_false_positives: int
    clean_dual_run_false_positives: int
    spike_guard_hits: tuple[int, ...]
    spike_step: int
    clean_curve_false_alarms: int
    n_ranks: int = quoted()
    gradient_dim: int = quoted()
    max_bits_per_rank: int = quoted()
    spike_factor: float = quoted()
    spike_window_steps: int = quoted()
    injected_spike_multiplier: float = quoted()


def sdc_detection(seed: int) -> Sdc:
    n, dim = sdc.SCENARIO_RANKS, sdc.GRADIENT_DIM
    rng = _rng(seed, 5)
    grad_seed = int(rng.integers(2**63))
    clean = sdc.make_gradients(grad_seed, n, dim)
    primary, ranks, flips = sdc.inject_bit_flips(clean, rng, sdc.CORRUPTED_RANKS)
    shadow = sdc.make_gradients(grad_seed, n, dim)  # the re-run: same seed, same bits
    located = sdc.locate_mismatches(sdc.shard_fingerprints(primary), sdc.shard_fingerprints(shadow))
    mismatch = sdc.bitwise_mismatch(primary, shadow)
    corrupted = np.zeros(n, dtype=bool)
    corrupted[ranks] = True
    loss = sdc.loss_curve(rng, sdc.LOSS_STEPS)
    spiked = sdc.inject_spike(loss, sdc.SPIKE_STEP, sdc.INJECTED_SPIKE_MULTIPLIER)
    return Sdc(
        seed=seed,
        corrupted_ranks=tuple(ranks),
        bit_flips=tuple(BitFlip(r, i, b) for r, i, b in flips),
        fingerprint_located=tuple(located),
        fingerprint_exact=located == ranks,
        dual_run_caught=int(np.sum(mismatch & corrupted)),
        dual_run_false_positives=int(np.sum(mismatch & ~corrupted)),
        clean_dual_run_false_positives=int(np.sum(sdc.bitwise_mismatch(sdc.make_gradients(grad_seed, n, dim),
                                                                       shadow))),
        spike_guard_hits=tuple(sdc.spike_guard(spiked)),
        spike_step=sdc.SPIKE_STEP,
        clean_curve_false_alarms=len(sdc.spike_guard(loss)),
        n_ranks=n,
        gradient_dim=dim,
        max_bits_per_rank=sdc.MAX_BITS_PER_RANK,
        spike_factor=sdc.SPIKE_FACTOR,
        spike_window_steps=sdc.SPIKE_WINDOW_STEPS,
        injected_spike_multiplier=sdc.INJECTED_SPIKE_MULTIPLIER,
    )


Result = Availability | Checkpoint | Recovery | Straggler | Sdc


# Scenario number -> its computation from the seed (scenarios 1 and 2 are closed form and ignore it).
_MAKERS = {1: lambda seed: availability(), 2: lambda seed: checkpoint(), 3: recovery, 4: straggler,
           5: sdc_detection}
SCENARIOS = tuple(_MAKERS)


def build(scenarios: list[int], seed: int) -> list[Result]:
    """The selected scenarios, in order."""
    return [_MAKERS[k](seed) for k in scenarios]
