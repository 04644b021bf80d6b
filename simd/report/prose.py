"""What the report says about each scenario: its title and its blocks (lines, bullets, tables), in order.

The sentences are written once here, for both the text and the markdown layout (render.py); they only
format the numbers of a scenario's dataclass (compute.py), none is computed here.
"""

from __future__ import annotations

from dataclasses import dataclass

from simd.report.compute import Availability, Checkpoint, Recovery, Result, Sdc, Straggler


@dataclass(frozen=True)
class Line:
    text: str


@dataclass(frozen=True)
class Bullets:
    items: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


Block = Line | Bullets | Table


def _pct(x: float) -> str:
    return f"{100.0 * x:.2f}%"


def _listed(xs: tuple[int, ...]) -> str:
    """Ranks or steps as the report has always printed them: a Python list."""
    return str(list(xs))


def title(r: Result) -> str:
    match r:
        case Availability():
            return "Scenario 1: availability vs cluster size (MTBF/MTTR model)"
        case Checkpoint():
            return "Scenario 2: checkpoint interval optimization"
        case Recovery():
            return f"Scenario 3: failure injection and elastic recovery ({r.window_days:g} days, {r.gpus} GPUs)"
        case Straggler():
            return (f"Scenario 4: straggler detection and mitigation ({r.n_ranks} GPUs, rank {r.slow_rank} "
                    f"{r.slow_percent:g}% slow)")
        case Sdc():
            return f"Scenario 5: SDC detection by dual run ({r.n_ranks} ranks x {r.gradient_dim}-dim gradients)"
    raise TypeError(f"not a scenario result: {type(r).__name__}")


def blocks(r: Result) -> list[Block]:
    return {Availability: _availability, Checkpoint: _checkpoint, Recovery: _recovery, Straggler: _straggler,
            Sdc: _sdc}[type(r)](r)


def _availability(r: Availability) -> list[Block]:
    out: list[Block] = [
        Line(f"Calibration: node MTBF = {r.node_mtbf_hours:.1f} h (Kokolis HPCA'25: a {r.anchor_gpus}-GPU job "
             f"fails every {r.anchor_mttf_hours:g} h; node MTBF = {r.anchor_mttf_hours:g} h x {r.anchor_gpus}; "
             "job MTBF = node MTBF / N; availability = MTBF / (MTBF + MTTR))"),
        Table(("GPUs", "job MTBF (h)", f"cold repair MTTR={r.cold_mttr_minutes:g}min availability",
               f"hot swap MTTR={r.hot_swap_mttr_minutes:g}min availability"),
              tuple((str(row.n_gpus), f"{row.job_mtbf_hours:.3f}", _pct(row.availability_cold),
                     _pct(row.availability_hot_swap)) for row in r.rows)),
        Line(f"Llama 3 calibration: {r.llama3_gpus:,} GPUs, one interruption every {r.llama3_interval_hours:.2f} h "
             f"measured ({r.llama3_interruptions} in {r.llama3_days} days; implied per-GPU MTBF "
             f"{r.llama3_implied_gpu_mtbf_years:.2f} years)"),
        Line(f"{r.anchor_gpus}-GPU model MTBF = {r.model_mtbf_hours_at_anchor:.2f} h "
             f"(measured anchor {r.anchor_mttf_hours:g} h, Kokolis HPCA'25)"),
    ]
    if r.cold_below_half_from is not None:
        biggest = r.rows[-1]
        out.append(Line(f"Cold repair falls below 50% availability from {r.cold_below_half_from} GPUs; at "
                        f"{biggest.n_gpus} GPUs even a {r.hot_swap_mttr_minutes:g}-minute hot swap keeps only "
                        f"{_pct(biggest.availability_hot_swap)}."))
    return out


def _checkpoint(r: Checkpoint) -> list[Block]:
    return [
        Line(f"Parameters: step={r.step_seconds:g}s, blocking full checkpoint {r.checkpoint_seconds:g}s, "
             f"MTBF={r.mtbf_hours:g} h ({r.anchor_gpus}-GPU job), cold restart {r.restart_seconds:g}s "
             "(TrainMover 8,192-GPU breakdown)"),
        Line("Long-run efficiency (first-order model): 1 / (1 + C/W + W/(2M) + R/M), W = interval x step: "
             "checkpoint cost C per segment, failures at rate 1/M during compute, each losing half a segment "
             "plus the restart R"),
        Bullets((
            f"No checkpoint: long-run efficiency {_pct(r.no_checkpoint_efficiency)} (a failure loses all "
            f"progress: one checkpoint at the end of a {r.run_steps}-step run)",
            f'"Daly approximation" optimum interval: {r.young_interval_steps} steps (the seed\'s name; the '
            f"formula is Young 1974's sqrt(2CM) = {r.young_interval_seconds:.1f} s)",
            f"Daly 2006 higher-order estimate: {r.daly_interval_seconds:.1f} s = {r.daly_interval_steps} steps, "
            f"efficiency {_pct(r.daly_efficiency)} (it targets the exact exponential-failure model, whose grid "
            f"optimum is {r.renewal_optimum_steps} steps at {_pct(r.renewal_optimum_efficiency)} in that model)",
            f"Exact grid optimum: {r.grid_optimum_steps} steps, efficiency {_pct(r.grid_optimum_efficiency)}",
            f"Differential checkpoint (cost x{r.differential_cost_factor:g}) optimum: "
            f"{r.differential_optimum_steps} steps, efficiency {_pct(r.differential_optimum_efficiency)} "
            f"(Young: {r.differential_young_steps} steps, Daly 2006: {r.differential_daly_steps} steps)",
        )),
        Line("Young's sqrt(2CM) is the exact optimum of this first-order model, so it and the grid agree by "
             "construction; Daly's higher-order estimate lands on a shorter interval and a slightly lower "
             "efficiency."),
        Line("Interval-efficiency curve (excerpt):"),
        Table(("interval (steps)", "full efficiency", "differential efficiency"),
              tuple((str(row.interval_steps), _pct(row.full_efficiency), _pct(row.differential_efficiency))
                    for row in r.table)),
    ]


_STRATEGY_NAMES = {"cold": "cold restart (full requeue)", "warm": "warm standby"}


def _recovery(r: Recovery) -> list[Block]:
    parts = " + ".join(f"{k.replace('_', ' ')} {v:.2f}" for k, v in r.cold_restart_parts_minutes.items())
    lo, hi = r.warm_swap_measured_seconds
    det = r.detection_seconds
    shares = " / ".join(f"{c} {100 * v:g}%" for c, v in r.cause_shares.items())
    n = len(r.failures)
    cold, warm = r.strategies["cold"], r.strategies["warm"]
    return [
        Line(f"Recovery timeline constants: TrainMover 8,192-GPU cold restart {r.cold_restart_minutes:.2f} min "
             f"({parts}) = {r.cold_restart_seconds:g} s; ByteRobust warm standby hot update "
             f"{r.warm_swap_seconds:g} s (measured {lo:g}-{hi:g} s); detection GPU {det['gpu']:g}s / NIC "
             f"(network) {det['network']:g}s / OS (host, software, other) {det['host']:g}s"),
        Line(f"Causes drawn by the Llama 3 shares: {shares}"),
        Line(f"Seed {r.seed}: {n} failures injected, by cause: "
             + ", ".join(f"{c} {k}" for c, k in r.counts.items())),
        Line(f"Lost time per failure = detection + restart + rollback ({r.rollback_seconds_per_failure:g} s: "
             f"half the {r.checkpoint_interval_seconds:g} s checkpoint interval); ETTR = 1 - lost / "
             f"{r.window_hours:g} h"),
        Table(("strategy", "detection (s)", "restart (s)", "rollback (s)", "lost hours (h)", "ETTR"),
              tuple((_STRATEGY_NAMES[k], f"{v.detection_seconds:g}", f"{v.restart_seconds:.1f}",
                     f"{v.rollback_seconds:g}", f"{v.lost_hours:.3f}", _pct(v.ettr))
                    for k, v in r.strategies.items())),
        Line(f"{'/'.join(r.cold_only_causes)} failures always take the cold path (a standby replaces "
             f"hardware, not a bug): {r.cold_only_failures} of {n} this week."),
        Line(f"{n} failures vs the expected {r.window_hours:g} h / {r.mtbf_hours:g} h = "
             f"{r.expected_failures:.1f}; warm standby saves {r.warm_saves_hours:.2f} h this week. Expected "
             f"over many weeks: lost {cold.expected_lost_hours:.3f} h (ETTR {_pct(cold.expected_ettr)}) cold, "
             f"{warm.expected_lost_hours:.3f} h (ETTR {_pct(warm.expected_ettr)}) warm."),
    ]


def _straggler(r: Straggler) -> list[Block]:
    bound = f"; 95% upper bound 3/n = {r.false_positive_rate_bound:.2e})" if r.jitter_false_positives == 0 else ")"
    nvrx, ours = r.flagged_nvrx_default, r.flagged_simd_threshold
    return [
        Bullets((
            f"Synchronous step = max(rank times): {r.step_seconds_with_straggler:.2f} s (base "
            f"{r.base_step_seconds:g} s, straggler +{r.slow_percent:g}%)",
            f"Median detection (threshold median x {r.detection_factor:g}): {_listed(r.detected)} "
            f"(precision={r.precision:.2f}, recall={r.recall:.2f})",
            f"Step after replacement: {r.step_seconds_after_replacement:.2f} s (back to the no-straggler "
            "baseline; the replacement rank reuses the slot's jitter draw)",
        )),
        Line(f"Control (no straggler, sigma={r.jitter_sigma_seconds:g}s jitter):"),
        Bullets((f"step = {r.step_seconds_after_replacement:.2f} s, false positives {r.baseline_false_positives}",)),
        Line(f"Over {r.trials} independent steps:"),
        Bullets((
            f"straggler found with precision {r.trial_precision:.3f}, recall {r.trial_recall:.3f} "
            f"(exactly the straggler flagged in {r.trial_exact}/{r.trials} steps)",
            f"jitter alone: {r.jitter_false_positives} false positives in {r.rank_steps:,} rank-steps (rate "
            f"{r.jitter_false_positive_rate:.2e}" + bound,
            f"mean step without straggler {r.mean_step_seconds:.3f} s +- {r.mean_step_standard_error:.3f} "
            f"(1 s.e.); expected maximum of {r.n_ranks} normal draws: {r.expected_max_step_seconds:.3f} s",
            f"mean step with the straggler {r.mean_step_seconds_with_straggler:.3f} s: until replaced it costs "
            f"{_pct(r.straggler_cost)} of the healthy cluster's throughput (against the jitter-free base: "
            f"1 - 1/{r.slowdown:g} = {_pct(r.jitter_free_cost)})",
        )),
        Line(f"NVRx-style scores (nvidia-resiliency-ext; medians over {r.nvrx_windows} windows of "
             f"{r.nvrx_window_steps} steps, rank {r.slow_rank} slow from window {r.onset_window}):"),
        Bullets((
            f"rank {r.slow_rank}: relative score {r.relative_score_slow_rank:.3f} (vs the best rank), "
            f"individual score {r.individual_score_slow_rank:.3f} (vs its own best); healthy ranks: relative >= "
            f"{r.relative_score_min_healthy:.3f}, individual >= {r.individual_score_min_healthy:.3f}",
            f"flagged below the NVRx default {nvrx.threshold:g}: relative {_listed(nvrx.relative)}, individual "
            f"{_listed(nvrx.individual)}; below {ours.threshold:g}: relative {_listed(ours.relative)}, individual "
            f"{_listed(ours.individual)}",
        )),
    ]


def _sdc(r: Sdc) -> list[Block]:
    located = r.fingerprint_located
    return [
        Bullets((
            f"Bit flips injected into ranks {_listed(r.corrupted_ranks)} (1-{r.max_bits_per_rank} bits per rank, "
            f"{len(r.bit_flips)} in all)",
            f"Shard fingerprints locate {len(located)} ranks: {_listed(located)} (exact match = "
            f"{r.fingerprint_exact})",
            f"Bitwise dual run over all {r.n_ranks} ranks: caught {r.dual_run_caught}/{len(r.corrupted_ranks)}, "
            f"false positives {r.dual_run_false_positives}",
            f"Dual run on clean data: false positives {r.clean_dual_run_false_positives}",
            f"Loss-spike guard ({r.spike_factor:g}x rolling median of {r.spike_window_steps} steps): steps "
            f"{_listed(r.spike_guard_hits)} (injected at step {r.spike_step}, loss x{r.injected_spike_multiplier:g}); "
            f"clean curve: {r.clean_curve_false_alarms} false alarms",
        )),
        Line("Fingerprints are compared rank by rank (n_ranks comparisons); production systems fold this into "
             "the communication stack. Dual run: no misses, twice the compute; fingerprints: cheap, see only "
             "disagreement between copies; loss spikes: after the fact."),
    ]
