"""`simd report`: seed 001's five scenarios, computed from ``simd.models``.

Every number is computed when the report runs, from the models and their module-level constants (read at
call time, so changing a constant changes the report); none is stored here. Scenarios 1 and 2 are closed
form and match the seed's printed numbers exactly; scenarios 3 to 5 draw random numbers from ``--seed``
(one independent stream per scenario), so their output is deterministic for a given seed.

Interface for the CLI: ``configure_parser(parser)`` and ``run(args) -> exit code``.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field

import numpy as np

from simd.models import availability as av
from simd.models import checkpoint as ck
from simd.models import recovery as rc
from simd.models import sdc
from simd.models import straggler as st

DEFAULT_SEED = 7  # the seed the seed-001 demo prints its sampled scenarios with
SCENARIOS = (1, 2, 3, 4, 5)
FORMATS = ("text", "markdown", "json")
STRAGGLER_TRIALS = 1000  # independent steps for the detection statistics of scenario 4
NVRX_WINDOWS = 10  # scenario 4's NVRx scores: reporting windows ...
NVRX_WINDOW_STEPS = 100  # ... of this many steps; the straggler turns slow at the middle window
SECONDS_PER_HOUR = 3600.0
MINUTES_PER_HOUR = 60.0


# --- output blocks ------------------------------------------------------------------------------------------
@dataclass
class Section:
    """One scenario: a title, then blocks in order, plus the raw values for ``--format json``."""

    number: int
    title: str
    blocks: list[tuple] = field(default_factory=list)
    data: dict = field(default_factory=dict)

    def line(self, text: str) -> None:
        self.blocks.append(("line", text))

    def bullets(self, items: list[str]) -> None:
        self.blocks.append(("bullets", items))

    def table(self, headers: list[str], rows: list[list[str]]) -> None:
        self.blocks.append(("table", headers, rows))


def _pct(x: float) -> str:
    return f"{100.0 * x:.2f}%"


def _rng(seed: int, scenario: int) -> np.random.Generator:
    """The scenario's own stream: scenarios do not share draws, so one never shifts another."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(scenario,)))


# --- scenario 1 ---------------------------------------------------------------------------------------------
def scenario_availability() -> Section:
    s = Section(1, "Scenario 1: availability vs cluster size (MTBF/MTTR model)")
    node = av.node_mtbf_hours(av.KOKOLIS_JOB_MTTF_HOURS, av.KOKOLIS_JOB_GPUS)
    cold_h = av.COLD_MTTR_MINUTES / MINUTES_PER_HOUR
    hot_h = av.HOT_SWAP_MTTR_MINUTES / MINUTES_PER_HOUR
    rows = av.scale_table(node, tuple(av.SCALE_TABLE_GPUS), cold_h, hot_h)
    llama_h = av.mean_interval_hours(av.LLAMA3_INTERRUPTIONS, av.LLAMA3_DAYS)
    llama_years = av.implied_gpu_mtbf_years(llama_h, av.LLAMA3_GPUS)
    model_anchor = av.job_mtbf_hours(node, av.KOKOLIS_JOB_GPUS)

    s.line(
        f"Calibration: node MTBF = {node:.1f} h (Kokolis HPCA'25: a {av.KOKOLIS_JOB_GPUS}-GPU job fails "
        "every "
        f"{av.KOKOLIS_JOB_MTTF_HOURS:g} h; node MTBF = {av.KOKOLIS_JOB_MTTF_HOURS:g} h x "
        f"{av.KOKOLIS_JOB_GPUS}; job MTBF = node MTBF / N; availability = MTBF / (MTBF + MTTR))"
    )
    s.table(
        [
            "GPUs",
            "job MTBF (h)",
            f"cold repair MTTR={av.COLD_MTTR_MINUTES:g}min availability",
            f"hot swap MTTR={av.HOT_SWAP_MTTR_MINUTES:g}min availability",
        ],
        [
            [str(r.n_gpus), f"{r.job_mtbf_hours:.3f}", _pct(r.availability_cold), _pct(r.availability_hot)]
            for r in rows
        ],
    )
    s.line(
        f"Llama 3 calibration: {av.LLAMA3_GPUS:,} GPUs, one interruption every {llama_h:.2f} h measured "
        f"({av.LLAMA3_INTERRUPTIONS} in {av.LLAMA3_DAYS} days; implied per-GPU MTBF {llama_years:.2f} years)"
    )
    s.line(
        f"{av.KOKOLIS_JOB_GPUS}-GPU model MTBF = {model_anchor:.2f} h "
        f"(measured anchor {av.KOKOLIS_JOB_MTTF_HOURS:g} h, Kokolis HPCA'25)"
    )
    below = [r.n_gpus for r in rows if r.availability_cold < 0.5]
    if below:
        biggest = rows[-1]
        s.line(
            f"Cold repair falls below 50% availability from {below[0]} GPUs; at {biggest.n_gpus} GPUs even a "
            f"{av.HOT_SWAP_MTTR_MINUTES:g}-minute hot swap keeps only {_pct(biggest.availability_hot)}."
        )
    s.data = {
        "node_mtbf_hours": node,
        "rows": [
            {
                "n_gpus": r.n_gpus,
                "job_mtbf_hours": r.job_mtbf_hours,
                "availability_cold": r.availability_cold,
                "availability_hot_swap": r.availability_hot,
            }
            for r in rows
        ],
        "cold_mttr_minutes": av.COLD_MTTR_MINUTES,
        "hot_swap_mttr_minutes": av.HOT_SWAP_MTTR_MINUTES,
        "llama3_interval_hours": llama_h,
        "llama3_implied_gpu_mtbf_years": llama_years,
        "model_mtbf_hours_at_anchor": model_anchor,
    }
    return s


# --- scenario 2 ---------------------------------------------------------------------------------------------
def scenario_checkpoint() -> Section:
    s = Section(2, "Scenario 2: checkpoint interval optimization")
    step, full = ck.STEP_SECONDS, ck.FULL_CHECKPOINT_SECONDS
    diff = full * ck.DIFFERENTIAL_COST_FACTOR
    m, r, run = ck.MTBF_SECONDS, ck.RESTART_SECONDS, ck.RUN_STEPS

    def eff(n, c):
        return ck.efficiency(n, step, c, m, r)

    no_ckpt = eff(run, full)
    young_s = ck.young_interval_seconds(full, m)
    young_n = ck.seconds_to_steps(young_s, step)
    daly_s = ck.daly_interval_seconds(full, m)
    daly_n = ck.seconds_to_steps(daly_s, step)
    grid_n, grid_e = ck.optimal_interval_grid(run, step, full, m, r)
    diff_n, diff_e = ck.optimal_interval_grid(run, step, diff, m, r)
    diff_young_n = ck.seconds_to_steps(ck.young_interval_seconds(diff, m), step)
    diff_daly_n = ck.seconds_to_steps(ck.daly_interval_seconds(diff, m), step)
    steps = np.arange(1, run + 1)
    renewal = ck.renewal_efficiency(steps, step, full, m, r)
    ren_i = int(np.argmax(renewal))
    table_steps = list(range(ck.TABLE_STRIDE_STEPS, run + 1, ck.TABLE_STRIDE_STEPS))

    s.line(
        f"Parameters: step={step:g}s, blocking full checkpoint {full:g}s, MTBF={m / SECONDS_PER_HOUR:g} h "
        f"({av.KOKOLIS_JOB_GPUS}-GPU job), cold restart {r:g}s (TrainMover 8,192-GPU breakdown)"
    )
    s.line(
        "Long-run efficiency (first-order model): 1 / (1 + C/W + W/(2M) + R/M), W = interval x step: "
        "checkpoint cost C per segment, failures at rate 1/M during compute, each losing half a segment plus "
        "the restart R"
    )
    s.bullets(
        [
            f"No checkpoint: long-run efficiency {_pct(no_ckpt)} (a failure loses all progress: one "
            "checkpoint at "
            f"the end of a {run}-step run)",
            f'"Daly approximation" optimum interval: {young_n} steps (the seed\'s name; the formula is '
            "Young 1974's "
            f"sqrt(2CM) = {young_s:.1f} s)",
            f"Daly 2006 higher-order estimate: {daly_s:.1f} s = {daly_n} steps, efficiency "
            f"{_pct(eff(daly_n, full))} "
            f"(it targets the exact exponential-failure model, whose grid optimum is {int(steps[ren_i])} "
            "steps at "
            f"{_pct(float(renewal[ren_i]))} in that model)",
            f"Exact grid optimum: {grid_n} steps, efficiency {_pct(grid_e)}",
            f"Differential checkpoint (cost x{ck.DIFFERENTIAL_COST_FACTOR:g}) optimum: {diff_n} steps, "
            "efficiency "
            f"{_pct(diff_e)} (Young: {diff_young_n} steps, Daly 2006: {diff_daly_n} steps)",
        ]
    )
    s.line(
        "Young's sqrt(2CM) is the exact optimum of this first-order model, so it and the grid agree by "
        "construction; Daly's higher-order estimate lands on a shorter interval and a slightly lower "
        "efficiency."
    )
    s.line("Interval-efficiency curve (excerpt):")
    s.table(
        ["interval (steps)", "full efficiency", "differential efficiency"],
        [[str(n), _pct(eff(n, full)), _pct(eff(n, diff))] for n in table_steps],
    )
    s.data = {
        "step_seconds": step,
        "checkpoint_seconds": full,
        "differential_checkpoint_seconds": diff,
        "mtbf_seconds": m,
        "restart_seconds": r,
        "run_steps": run,
        "no_checkpoint_efficiency": no_ckpt,
        "young_interval_seconds": young_s,
        "young_interval_steps": young_n,
        "daly_interval_seconds": daly_s,
        "daly_interval_steps": daly_n,
        "daly_efficiency": eff(daly_n, full),
        "grid_optimum_steps": grid_n,
        "grid_optimum_efficiency": grid_e,
        "differential_optimum_steps": diff_n,
        "differential_optimum_efficiency": diff_e,
        "renewal_optimum_steps": int(steps[ren_i]),
        "renewal_optimum_efficiency": float(renewal[ren_i]),
        "table": [
            {"interval_steps": n, "full_efficiency": eff(n, full), "differential_efficiency": eff(n, diff)}
            for n in table_steps
        ],
    }
    return s


# --- scenario 3 ---------------------------------------------------------------------------------------------
def scenario_recovery(seed: int) -> Section:
    hours = rc.WEEK_HOURS
    s = Section(
        3,
        f"Scenario 3: failure injection and elastic recovery ({hours / 24:g} days, {rc.SCENARIO_GPUS} GPUs)",
    )
    failures = rc.sample_failures(_rng(seed, 3), hours, rc.SCENARIO_MTBF_HOURS, rc.LLAMA3_CAUSE_SHARES)
    causes = [c for _, c in failures]
    counts = rc.count_by_cause(causes)
    rollback = rc.expected_rollback_seconds(rc.SCENARIO_CHECKPOINT_INTERVAL_SECONDS)
    parts = " + ".join(
        f"{k.replace('_', ' ')} {v:.2f}" for k, v in rc.TRAINMOVER_COLD_RESTART_MINUTES.items()
    )
    lost = {strategy: rc.lost_time(causes, strategy, rollback) for strategy in rc.STRATEGIES}
    expected_n = hours / rc.SCENARIO_MTBF_HOURS
    expected_lost = {
        strategy: expected_n
        * rc.expected_lost_seconds_per_failure(strategy, rc.LLAMA3_CAUSE_SHARES, rollback)
        / SECONDS_PER_HOUR
        for strategy in rc.STRATEGIES
    }
    lo, hi = rc.WARM_SWAP_MEASURED_RANGE_SECONDS
    det = rc.DETECTION_SECONDS

    s.line(
        f"Recovery timeline constants: TrainMover 8,192-GPU cold restart {rc.COLD_RESTART_MINUTES:.2f} min "
        f"({parts}) = {rc.COLD_RESTART_SECONDS:g} s; ByteRobust warm standby hot update "
        f"{rc.WARM_SWAP_SECONDS:g} s (measured {lo:g}-{hi:g} s); detection GPU {det['gpu']:g}s / NIC "
        f"(network) {det['network']:g}s / OS (host, software, other) {det['host']:g}s"
    )
    shares = " / ".join(f"{c} {100 * v:g}%" for c, v in rc.LLAMA3_CAUSE_SHARES.items())
    s.line(f"Causes drawn by the Llama 3 shares: {shares}")
    s.line(
        f"Seed {seed}: {len(causes)} failures injected, by cause: "
        + ", ".join(f"{c} {n}" for c, n in counts.items())
    )
    s.line(
        f"Lost time per failure = detection + restart + rollback ({rollback:g} s: half the "
        f"{rc.SCENARIO_CHECKPOINT_INTERVAL_SECONDS:g} s checkpoint interval); ETTR = 1 - lost / {hours:g} h"
    )
    names = {"cold": "cold restart (full requeue)", "warm": "warm standby"}
    s.table(
        ["strategy", "detection (s)", "restart (s)", "rollback (s)", "lost hours (h)", "ETTR"],
        [
            [
                names[k],
                f"{v.detection_seconds:g}",
                f"{v.restart_seconds:.1f}",
                f"{v.rollback_seconds:g}",
                f"{v.total_hours:.3f}",
                _pct(rc.ettr(v.total_hours, hours)),
            ]
            for k, v in lost.items()
        ],
    )
    cold_only = sorted(set(rc.CAUSES) - set(rc.WARM_CAPABLE_CAUSES), key=rc.CAUSES.index)
    n_cold_only = sum(counts[c] for c in cold_only)
    s.line(
        f"{'/'.join(cold_only)} failures always take the cold path (a standby replaces hardware, not a bug): "
        f"{n_cold_only} of {len(causes)} this week."
    )
    saved = lost["cold"].total_hours - lost["warm"].total_hours
    s.line(
        f"{len(causes)} failures vs the expected {hours:g} h / {rc.SCENARIO_MTBF_HOURS:g} h = "
        f"{expected_n:.1f}; "
        f"warm standby saves {saved:.2f} h this week. Expected over many weeks: lost "
        f"{expected_lost['cold']:.3f} h (ETTR {_pct(rc.ettr(expected_lost['cold'], hours))}) cold, "
        f"{expected_lost['warm']:.3f} h (ETTR {_pct(rc.ettr(expected_lost['warm'], hours))}) warm."
    )
    s.data = {
        "seed": seed,
        "window_hours": hours,
        "failures": [{"hour": t, "cause": c} for t, c in failures],
        "counts": counts,
        "rollback_seconds_per_failure": rollback,
        "cold_restart_seconds": rc.COLD_RESTART_SECONDS,
        "warm_swap_seconds": rc.WARM_SWAP_SECONDS,
        "strategies": {
            k: {
                "detection_seconds": v.detection_seconds,
                "restart_seconds": v.restart_seconds,
                "rollback_seconds": v.rollback_seconds,
                "lost_hours": v.total_hours,
                "ettr": rc.ettr(v.total_hours, hours),
                "expected_lost_hours": expected_lost[k],
                "expected_ettr": rc.ettr(expected_lost[k], hours),
            }
            for k, v in lost.items()
        },
        "expected_failures": expected_n,
    }
    return s


# --- scenario 4 ---------------------------------------------------------------------------------------------
def scenario_straggler(seed: int) -> Section:
    n, base, sigma = st.SCENARIO_RANKS, st.BASE_STEP_SECONDS, st.JITTER_SIGMA_SECONDS
    slow = {st.SLOW_RANK: st.SLOWDOWN}
    pct_slow = 100.0 * (st.SLOWDOWN - 1.0)
    s = Section(
        4,
        f"Scenario 4: straggler detection and mitigation ({n} GPUs, rank {st.SLOW_RANK} {pct_slow:g}% slow)",
    )
    rng = _rng(seed, 4)
    truth = np.zeros(n, dtype=bool)
    truth[list(slow)] = True

    # One step, shown in full. The replacement takes the slot's jitter draw (common random numbers), so the
    # step after replacement is the baseline step exactly.
    healthy = st.rank_step_seconds(rng, (n,), base, sigma)
    slowed = st.apply_slowdown(healthy, slow)
    flagged = st.detect_stragglers(slowed)
    precision, recall = st.precision_recall(flagged, truth)
    step_slow = st.synchronous_step_seconds(slowed)
    step_healthy = st.synchronous_step_seconds(healthy)
    fp_one = int(np.sum(st.detect_stragglers(healthy)))

    # Many independent steps: detection statistics and the mean step time.
    trials = st.rank_step_seconds(rng, (STRAGGLER_TRIALS, n), base, sigma)
    trials_slow = st.apply_slowdown(trials, slow)
    t_flag = st.detect_stragglers(trials_slow)
    t_precision, t_recall = st.precision_recall(t_flag, np.broadcast_to(truth, t_flag.shape))
    exact_trials = int(np.sum(np.all(t_flag == truth, axis=-1)))
    fp_jitter = int(np.sum(st.detect_stragglers(trials)))
    fp_rate = fp_jitter / trials.size
    steps_healthy = st.synchronous_step_seconds(trials)
    mean_step = float(np.mean(steps_healthy))
    se_step = float(np.std(steps_healthy, ddof=1) / np.sqrt(STRAGGLER_TRIALS))
    expected_step = st.expected_max_normal(n, base, sigma)
    mean_step_slow = float(np.mean(st.synchronous_step_seconds(trials_slow)))

    # NVRx-style scores over reporting windows; the straggler turns slow at the middle window.
    window_times = st.rank_step_seconds(rng, (NVRX_WINDOWS, NVRX_WINDOW_STEPS, n), base, sigma)
    onset = NVRX_WINDOWS // 2
    window_times[onset:] = st.apply_slowdown(window_times[onset:], slow)
    medians = np.median(window_times, axis=1)
    rel = st.relative_scores(medians[-1])
    ind = st.individual_scores(medians)
    healthy_mask = ~truth
    rel_flag = [int(i) for i in np.flatnonzero(rel < st.NVRX_SCORE_THRESHOLD)]
    ind_flag = [int(i) for i in np.flatnonzero(ind < st.NVRX_SCORE_THRESHOLD)]
    rel_flag_sim = [int(i) for i in np.flatnonzero(rel < st.SCORE_THRESHOLD)]
    ind_flag_sim = [int(i) for i in np.flatnonzero(ind < st.SCORE_THRESHOLD)]

    detected = [int(i) for i in np.flatnonzero(flagged)]
    s.bullets(
        [
            f"Synchronous step = max(rank times): {step_slow:.2f} s (base {base:g} s, straggler "
            f"+{pct_slow:g}%)",
            f"Median detection (threshold median x {1 + st.DETECTION_THRESHOLD:g}): {detected} "
            f"(precision={precision:.2f}, recall={recall:.2f})",
            f"Step after replacement: {step_healthy:.2f} s (back to the no-straggler baseline; the "
            "replacement "
            f"rank reuses the slot's jitter draw)",
        ]
    )
    s.line(f"Control (no straggler, sigma={sigma:g}s jitter):")
    s.bullets([f"step = {step_healthy:.2f} s, false positives {fp_one}"])
    s.line(f"Over {STRAGGLER_TRIALS} independent steps:")
    s.bullets(
        [
            f"straggler found with precision {t_precision:.3f}, recall {t_recall:.3f} "
            f"(exactly the straggler flagged in {exact_trials}/{STRAGGLER_TRIALS} steps)",
            f"jitter alone: {fp_jitter} false positives in {trials.size:,} rank-steps (rate {fp_rate:.2e}"
            + (f"; 95% upper bound 3/n = {3.0 / trials.size:.2e})" if fp_jitter == 0 else ")"),
            f"mean step without straggler {mean_step:.3f} s +- {se_step:.3f} (1 s.e.); expected maximum of "
            f"{n} "
            f"normal draws: {expected_step:.3f} s",
            f"mean step with the straggler {mean_step_slow:.3f} s: until replaced it costs "
            f"{_pct(1.0 - mean_step / mean_step_slow)} of the healthy cluster's throughput "
            f"(against the jitter-free base: 1 - 1/{st.SLOWDOWN:g} = {_pct(1.0 - 1.0 / st.SLOWDOWN)})",
        ]
    )
    s.line(
        f"NVRx-style scores (nvidia-resiliency-ext; medians over {NVRX_WINDOWS} windows of "
        f"{NVRX_WINDOW_STEPS} "
        f"steps, rank {st.SLOW_RANK} slow from window {onset}):"
    )
    s.bullets(
        [
            f"rank {st.SLOW_RANK}: relative score {rel[st.SLOW_RANK]:.3f} (vs the best rank), individual "
            "score "
            f"{ind[st.SLOW_RANK]:.3f} (vs its own best); healthy ranks: relative >= "
            f"{float(np.min(rel[healthy_mask])):.3f}, individual >= {float(np.min(ind[healthy_mask])):.3f}",
            f"flagged below the NVRx default {st.NVRX_SCORE_THRESHOLD:g}: relative {rel_flag}, individual "
            f"{ind_flag}; below {st.SCORE_THRESHOLD:g}: relative {rel_flag_sim}, individual {ind_flag_sim}",
        ]
    )
    s.data = {
        "seed": seed,
        "n_ranks": n,
        "slow_rank": st.SLOW_RANK,
        "slowdown": st.SLOWDOWN,
        "step_seconds_with_straggler": step_slow,
        "detected": detected,
        "precision": precision,
        "recall": recall,
        "step_seconds_after_replacement": step_healthy,
        "baseline_false_positives": fp_one,
        "trials": STRAGGLER_TRIALS,
        "trial_precision": t_precision,
        "trial_recall": t_recall,
        "trial_exact": exact_trials,
        "jitter_false_positives": fp_jitter,
        "jitter_false_positive_rate": fp_rate,
        "mean_step_seconds": mean_step,
        "mean_step_standard_error": se_step,
        "expected_max_step_seconds": expected_step,
        "mean_step_seconds_with_straggler": mean_step_slow,
        "relative_score_slow_rank": float(rel[st.SLOW_RANK]),
        "individual_score_slow_rank": float(ind[st.SLOW_RANK]),
        "relative_score_min_healthy": float(np.min(rel[healthy_mask])),
        "individual_score_min_healthy": float(np.min(ind[healthy_mask])),
        "flagged_nvrx_default": {"relative": rel_flag, "individual": ind_flag},
        "flagged_simd_threshold": {"relative": rel_flag_sim, "individual": ind_flag_sim},
    }
    return s


# --- scenario 5 ---------------------------------------------------------------------------------------------
def scenario_sdc(seed: int) -> Section:
    n, dim = sdc.SCENARIO_RANKS, sdc.GRADIENT_DIM
    s = Section(5, f"Scenario 5: SDC detection by dual run ({n} ranks x {dim}-dim gradients)")
    rng = _rng(seed, 5)
    grad_seed = int(rng.integers(2**63))
    clean = sdc.make_gradients(grad_seed, n, dim)
    primary, ranks, flips = sdc.inject_bit_flips(clean, rng, sdc.CORRUPTED_RANKS)
    shadow = sdc.make_gradients(grad_seed, n, dim)  # the re-run: same seed, same bits
    located = sdc.locate_mismatches(sdc.shard_fingerprints(primary), sdc.shard_fingerprints(shadow))
    mismatch = sdc.bitwise_mismatch(primary, shadow)
    corrupted = np.zeros(n, dtype=bool)
    corrupted[ranks] = True
    caught = int(np.sum(mismatch & corrupted))
    dual_fp = int(np.sum(mismatch & ~corrupted))
    clean_fp = int(np.sum(sdc.bitwise_mismatch(sdc.make_gradients(grad_seed, n, dim), shadow)))
    loss = sdc.loss_curve(rng, sdc.LOSS_STEPS)
    spiked = sdc.inject_spike(loss, sdc.SPIKE_STEP, sdc.INJECTED_SPIKE_MULTIPLIER)
    hits = sdc.spike_guard(spiked)
    clean_alarms = sdc.spike_guard(loss)

    s.bullets(
        [
            f"Bit flips injected into ranks {ranks} (1-{sdc.MAX_BITS_PER_RANK} bits per rank, {len(flips)} "
            "in all)",
            f"Shard fingerprints locate {len(located)} ranks: {located} (exact match = {located == ranks})",
            f"Bitwise dual run over all {n} ranks: caught {caught}/{len(ranks)}, false positives {dual_fp}",
            f"Dual run on clean data: false positives {clean_fp}",
            f"Loss-spike guard ({sdc.SPIKE_FACTOR:g}x rolling median of {sdc.SPIKE_WINDOW_STEPS} steps): "
            "steps "
            f"{hits} (injected at step {sdc.SPIKE_STEP}, loss x{sdc.INJECTED_SPIKE_MULTIPLIER:g}); clean "
            "curve: "
            f"{len(clean_alarms)} false alarms",
        ]
    )
    s.line(
        "Fingerprints are compared rank by rank (n_ranks comparisons); production systems fold this into the "
        "communication stack. Dual run: no misses, twice the compute; fingerprints: cheap, see only "
        "disagreement between copies; loss spikes: after the fact."
    )
    s.data = {
        "seed": seed,
        "corrupted_ranks": ranks,
        "bit_flips": [{"rank": r, "index": i, "bit": b} for r, i, b in flips],
        "fingerprint_located": located,
        "fingerprint_exact": located == ranks,
        "dual_run_caught": caught,
        "dual_run_false_positives": dual_fp,
        "clean_dual_run_false_positives": clean_fp,
        "spike_guard_hits": hits,
        "spike_step": sdc.SPIKE_STEP,
        "clean_curve_false_alarms": len(clean_alarms),
    }
    return s


# --- rendering ----------------------------------------------------------------------------------------------
def build(scenarios: list[int], seed: int) -> list[Section]:
    """The selected scenarios, in order."""
    makers = {
        1: scenario_availability,
        2: scenario_checkpoint,
        3: lambda: scenario_recovery(seed),
        4: lambda: scenario_straggler(seed),
        5: lambda: scenario_sdc(seed),
    }
    return [makers[k]() for k in scenarios]


def _text_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    # Columns of text (the strategies of scenario 3) are left-aligned, columns of numbers right-aligned.
    left = [not (rows and rows[0][i][:1].isdigit()) for i in range(len(headers))]

    def fmt(cells):
        return "  ".join(
            c.ljust(w) if lft else c.rjust(w) for c, w, lft in zip(cells, widths, left, strict=True)
        ).rstrip()

    return [fmt(headers), "  ".join("-" * w for w in widths), *(fmt(r) for r in rows)]


def _md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---" for _ in headers) + "|",
        *("| " + " | ".join(r) + " |" for r in rows),
    ]


def render(sections: list[Section], fmt: str) -> str:
    """The report as text, markdown or JSON (one document)."""
    if fmt == "json":
        doc = {"scenarios": [{"scenario": s.number, "title": s.title, **s.data} for s in sections]}
        return json.dumps(doc, indent=2, sort_keys=False) + "\n"
    out: list[str] = []
    for s in sections:
        if out:
            out.append("")
        if fmt == "markdown":
            out += [f"## {s.title}", ""]
        else:
            out += [s.title, "=" * len(s.title), ""]
        for block in s.blocks:
            kind = block[0]
            if kind == "line":
                out += [block[1], ""]
            elif kind == "bullets":
                out += [f"- {b}" for b in block[1]] + [""]
            else:
                out += (_md_table if fmt == "markdown" else _text_table)(block[1], block[2]) + [""]
        while out and out[-1] == "":
            out.pop()
    return "\n".join(out) + "\n"


# --- CLI interface ------------------------------------------------------------------------------------------
def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Add `simd report`'s options to ``parser``."""
    parser.add_argument(
        "--scenario",
        type=int,
        choices=SCENARIOS,
        action="append",
        metavar="{1..5}",
        help="scenario to print (repeatable; default: all five)",
    )
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    parser.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        help=f"random seed of scenarios 3-5 (default: {DEFAULT_SEED}); scenarios 1-2 are closed form",
    )


def run(args: argparse.Namespace) -> int:
    """Print the report to stdout; exit code 0 (2 for an invalid seed)."""
    seed = getattr(args, "seed", DEFAULT_SEED)
    if seed is None:
        seed = DEFAULT_SEED
    if seed < 0:
        print(f"simd report: --seed must be >= 0, got {seed}", file=sys.stderr)
        return 2
    selected = sorted(set(getattr(args, "scenario", None) or SCENARIOS))
    fmt = getattr(args, "format", "text") or "text"
    sys.stdout.write(render(build(selected, seed), fmt))
    return 0
