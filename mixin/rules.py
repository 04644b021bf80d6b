"""simd's Prometheus rules, built from code (kubernetes-mixin style): ``render()`` returns the text of
``prometheus/rules/simd_recording.yml`` and ``simd_alerts.yml``.

Every metric selector carries :data:`mixin.config.JOB_SELECTOR`, every ``runbook_url`` is
:func:`mixin.config.runbook_url`, the recording rules are named from :mod:`mixin.config` (the dashboard
queries the same names), and thresholds, windows and ``for:`` durations come from there too. Each rule
carries the comment that says why it is built the way it is; the comment is written into the YAML above the
rule, so the committed file reads on its own. :class:`Options` changes only the windows, the ``for:``
durations and the opt-out list (tests/daemon/test_drills_end_to_end.py builds a copy with windows of seconds).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field

import yaml

from mixin import config as c

RECORDING_FILE = "simd_recording.yml"
ALERTS_FILE = "simd_alerts.yml"
WIDTH = 110  # columns of the generated YAML (comments and folded descriptions)

# The denominator of every rate per simulated hour: simulated seconds elapsed, summed over replicas.
ELAPSED = "simd_scenario_simulated_seconds_total"
# The denominator of every rate per simulated hour of compute: executed steps x base step time, summed over
# replicas: the exposure the per-step hazards apply to (no failure can happen during a checkpoint, a
# validation, detection or a restart), in which simd_expected_*_per_hour are given.
COMPUTE = "simd_compute_seconds_total"

_DURATION = re.compile(r"(?:\d+(?:ms|s|m|h|d|w|y))+")
_SCENARIO = re.compile(r"[a-z0-9_-]+")  # the scenario file's name contract (docs/design.md 5.1)
_THIS_SCENARIO = 'scenario="%s"'  # filled in by printf with the alert's scenario label
_3G, _0F = 'printf "%.3g"', 'printf "%.0f"'  # template pipelines of the reference values
_YOUNG = 'method="young"'
_IN_REPAIR, _HELD = 'state=~"repair_automatic|repair_manual"', 'state!="retired"'  # simd_servers' states
_UNIT_WORDS = {"ms": "millisecond", "s": "second", "m": "minute", "h": "hour", "d": "day", "w": "week", "y": "year"}


@dataclass(frozen=True)
class Options:
    """What may differ between the shipped rules and a test's copy of them."""

    rate_window: str = c.RATE_WINDOW
    goodput_window: str = c.GOODPUT_WINDOW
    hold: str | None = None  # one ``for:`` for every alert; None: mixin.config.FOR
    interval_excluded: tuple[str, ...] = c.INTERVAL_ALERT_EXCLUDED_SCENARIOS

    def __post_init__(self):
        for name in ("rate_window", "goodput_window", "hold"):
            value = getattr(self, name)
            if value is not None and not _DURATION.fullmatch(value):
                raise ValueError(f"Options.{name}: not a Prometheus duration (e.g. 5m, 30s), got {value!r}")
        for s in self.interval_excluded:
            if not _SCENARIO.fullmatch(s):
                raise ValueError(f"interval_excluded: scenario names match [a-z0-9_-]+, got {s!r}")

    def for_(self, alert: str) -> str:
        if self.hold is not None:
            return self.hold
        if alert not in c.FOR:
            raise ValueError(f"mixin.config.FOR has no for: duration for {alert}")
        return c.FOR[alert]


@dataclass(frozen=True)
class Rule:
    """One recording rule (``record``) or alerting rule (``alert``) and the comment written above it."""

    comment: str
    expr: str
    record: str = ""
    alert: str = ""
    for_: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict:
        out: dict = {"record": self.record} if self.record else {"alert": self.alert}
        out["expr"] = _Literal(self.expr.strip() + "\n")
        if self.for_:
            out["for"] = self.for_
        if self.labels:
            out["labels"] = dict(self.labels)
        if self.annotations:
            out["annotations"] = {k: _Folded(v) if k == "description" else v for k, v in self.annotations.items()}
        return out


# --- PromQL pieces --------------------------------------------------------------------------------------
def sel(metric: str, *matchers: str, **equal: str) -> str:
    """``metric{<JOB_SELECTOR>,k="v",...}``: the job selector first, then ``equal``, then raw ``matchers``."""
    parts = [c.JOB_SELECTOR, *(f'{k}="{v}"' for k, v in equal.items()), *matchers]
    return f"{metric}{{{','.join(parts)}}}"


def increase_by(by: str, metric: str, window: str, **equal: str) -> str:
    return f"sum by ({by}) (increase({sel(metric, **equal)}[{window}]))"


def over_elapsed(by: str, metric: str, window: str, per_hour: bool, denominator: str = ELAPSED,
                 **equal: str) -> str:
    """``increase(metric) / increase(elapsed simulated seconds)`` per scenario (per hour if ``per_hour``);
    ``denominator`` :data:`COMPUTE` for rates per hour of compute."""
    join = "/" if by == "scenario" else "/ on (scenario) group_left"
    expr = f"{increase_by(by, metric, window, **equal)}\n  {join}\n{increase_by('scenario', denominator, window)}"
    return expr + "\n  * 3600" if per_hour else expr


def _goodput(window: str) -> str:
    """Productive less voided (simd_productive_voided_seconds_total; none exposed: nothing voided) over elapsed."""
    num = increase_by("scenario", "simd_bucket_seconds_total", window, bucket="productive")
    voided = increase_by("scenario", "simd_productive_voided_seconds_total", window)
    return f"(\n{num}\n  - ({voided} or {num} * 0)\n)\n  /\n{increase_by('scenario', ELAPSED, window)}"


def lookup(metric: str, fmt: str, *matchers: str) -> str:
    """A Go template that prints ``max(metric{job, scenario=<the alert's scenario>, matchers})`` with
    ``fmt`` (a template pipeline such as ``humanizePercentage``): the reference an alert compares against."""
    query = f"max({sel(metric, _THIS_SCENARIO, *matchers)})"
    return f"{{{{ with printf `{query}` $labels.scenario | query }}}}{{{{ . | first | value | {fmt} }}}}{{{{ end }}}}"


def spoken(duration: str) -> str:
    """``"10m"`` -> ``"10 minutes"`` (one unit; the windows and ``for:`` durations in descriptions)."""
    m = re.fullmatch(r"(\d+)(ms|s|m|h|d|w|y)", duration)
    if m is None:
        raise ValueError(f"spoken: one number and one unit expected, got {duration!r}")
    n, unit = int(m[1]), _UNIT_WORDS[m[2]]
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


# --- the rules ------------------------------------------------------------------------------------------
def recording_rules(o: Options) -> list[Rule]:
    w, gw = o.rate_window, o.goodput_window
    quantiles = [
        Rule("" if i else
             f"Step-time quantiles (simulated seconds) of the steps executed in the last {spoken(w)} of wall "
             f"time: one recorded name, one series per quantile (label quantile: {', '.join(c.STEP_QUANTILES)}), "
             "as kubernetes-mixin records histogram_quantile. increase() rather than rate(): the quantile does "
             "not depend on the scale, and no rule uses rate().",
             f"histogram_quantile(\n  {q},\n"
             f"  sum by (scenario, le) (increase({sel('simd_step_duration_seconds_bucket')}[{w}]))\n)",
             record=c.STEP_DURATION_QUANTILES, labels={"quantile": q})
        for i, q in enumerate(c.STEP_QUANTILES)
    ]
    return [
        Rule(f"Goodput (effective utilization) over the last {spoken(gw)} of wall time: productive over elapsed "
             "simulated time, less the productive time a job's end voided after it was committed "
             "(simd_productive_voided_seconds_total: counters do not go down, so a window holding such a job's end "
             "can go below zero). simd_effective_utilization_ratio is the same ratio since the daemon started; "
             "this one moves.", _goodput(gw), record=c.GOODPUT_10M),
        Rule("Every bucket's share of the elapsed simulated time (goodput and the badput buckets), as the counters "
             "hold them (productive with the credit a job's end voided: the goodput rule takes it back). They sum "
             "to 1 minus the share still in flight (simd_in_flight_seconds: uncommitted compute and the unit in "
             "progress, not yet in a bucket).",
             over_elapsed("scenario, bucket", "simd_bucket_seconds_total", gw, False),
             record=c.BUCKET_RATIO_10M),
        Rule("Interruptions per simulated hour of one replica, all causes and by cause.",
             over_elapsed("scenario", "simd_interruptions_total", w, True),
             record=c.INTERRUPTIONS_PER_SIM_HOUR),
        Rule("", over_elapsed("scenario, cause", "simd_interruptions_total", w, True),
             record=c.INTERRUPTIONS_BY_CAUSE_PER_SIM_HOUR),
        Rule("SDCs per simulated hour: detected by a validation, and baked into a checkpoint.",
             over_elapsed("scenario", "simd_sdc_detected_total", w, True),
             record=c.SDC_DETECTED_PER_SIM_HOUR),
        Rule("", over_elapsed("scenario", "simd_sdc_baked_total", w, True), record=c.SDC_BAKED_PER_SIM_HOUR),
        Rule("Interruptions, SDC onsets and SDC detections per simulated hour of compute of one replica: over "
             f"{COMPUTE} (executed steps x base step time), the exposure the per-step hazards apply to, so "
             "the same unit as simd_expected_interruptions_per_hour and simd_expected_sdc_per_hour. The "
             "per_sim_hour rates above divide by the elapsed time, which adds checkpoints, validations, "
             "detection and restarts (no failure can happen in them), and sit below the configured rate.",
             over_elapsed("scenario", "simd_interruptions_total", w, True, COMPUTE),
             record=c.INTERRUPTIONS_PER_COMPUTE_HOUR),
        Rule("", over_elapsed("scenario", "simd_sdc_onsets_total", w, True, COMPUTE),
             record=c.SDC_ONSETS_PER_COMPUTE_HOUR),
        Rule("", over_elapsed("scenario", "simd_sdc_detected_total", w, True, COMPUTE),
             record=c.SDC_DETECTED_PER_COMPUTE_HOUR),
        *quantiles,
        Rule("The configured checkpoint interval over Young's optimum sqrt(2 C M) (1 = at the optimum). Absent "
             "for scenarios without hard failures: the exporter has no optimum for them. Both are configuration "
             "gauges, the same on every replica, hence max by (scenario).",
             f"max by (scenario) ({sel('simd_checkpoint_interval_steps')})\n  /\n"
             f"max by (scenario) ({sel('simd_checkpoint_interval_optimal_steps', method='young')})",
             record=c.INTERVAL_OVER_YOUNG),
        Rule("Servers (scenarios with server pools, docs/servers.md): the servers in repair, both pipelines, "
             "summed over replicas.",
             f"sum by (scenario) ({sel('simd_servers', _IN_REPAIR)})",
             record=c.SERVERS_IN_REPAIR),
        Rule("The GPUs the job's capacity holds: every server but the retired ones (the job's, its standbys and "
             "spares, those in repair), times its GPUs; times a price per GPU-hour, the cost per simulated hour.",
             f"sum by (scenario) ({sel('simd_servers', _HELD)})\n  * on (scenario)\n"
             f"max by (scenario) ({sel('simd_gpus_per_server')})",
             record=c.GPUS_HELD),
        Rule(f"GPU-hours held per productive GPU-hour: the held servers over the job's, over the goodput of the "
             f"last {spoken(gw)} ({c.GOODPUT_10M}). 1 would be a job with no pools that never loses a second; "
             "times a price per GPU-hour, the cost of a productive GPU-hour. The server counts are the current "
             "ones, the goodput a window's: a drill that changes the pools shows at once.",
             f"(\n  sum by (scenario) ({sel('simd_servers', _HELD)})\n    /\n"
             f"  sum by (scenario) ({sel('simd_servers', state='job')})\n)\n  / on (scenario)\n{c.GOODPUT_10M}",
             record=c.GPU_HOURS_PER_PRODUCTIVE),
    ]


def _alert(o: Options, name: str, comment: str, expr: str, severity: str, summary: str, description: str) -> Rule:
    return Rule(comment, expr, alert=name, for_=o.for_(name), labels={"severity": severity},
                annotations={"summary": summary, "description": description, "runbook_url": c.runbook_url(name)})


def alerting_rules(o: Options) -> list[Rule]:
    w, gw, k = o.rate_window, o.goodput_window, c.RATE_FACTOR
    excluded = [f'scenario!~"{"|".join(o.interval_excluded)}"'] if o.interval_excluded else []
    far = c.INTERVAL_FACTOR
    return [
        _alert(o, "SimdGoodputBelowTarget",
               "Only scenarios that configure a goodput SLO (slo.goodput_target) export "
               "simd_goodput_target_ratio, so the demo's naive scenario (42.6% by design, simd demo) has no "
               "target and never fires this.",
               f"{c.GOODPUT_10M}\n  < on (scenario)\nmax by (scenario) ({sel('simd_goodput_target_ratio')})",
               "warning",
               "Goodput of scenario {{ $labels.scenario }} is below its target",
               f"Over the last {spoken(gw)} scenario {{{{ $labels.scenario }}}} spent "
               "{{ $value | humanizePercentage }} of its simulated time on productive steps, below its goodput "
               f"target of {lookup('simd_goodput_target_ratio', 'humanizePercentage')}."),
        _alert(o, "SimdInterruptionRateHigh",
               f"More than {k}x the configured (calibrated) hard-failure rate, with at least "
               f"{c.MIN_INTERRUPTIONS} interruptions in the window, so that a single interruption in a short "
               "stretch of simulated time (low speedup) cannot fire it. Both sides are per simulated hour of "
               f"compute ({COMPUTE}: executed steps x base step time), the exposure the hazards apply to, so "
               f"{k}x means {k}x (per hour of elapsed time, which adds checkpoints and recovery, the measured rate "
               "would sit below the configured one).",
               f"(\n  {c.INTERRUPTIONS_PER_COMPUTE_HOUR}\n    > on (scenario)\n"
               f"  {k} * max by (scenario) ({sel('simd_expected_interruptions_per_hour')})\n)\n"
               f"and on (scenario)\n{increase_by('scenario', 'simd_interruptions_total', w)} "
               f">= {c.MIN_INTERRUPTIONS}",
               "warning",
               f"Interruption rate of scenario {{{{ $labels.scenario }}}} is over {k}x the expected rate",
               "Scenario {{ $labels.scenario }} was interrupted {{ printf \"%.3g\" $value }} times per "
               f"simulated hour of compute over the last {spoken(w)}, more than {k} times its configured rate of "
               f"{lookup('simd_expected_interruptions_per_hour', _3G)} per hour."),
        _alert(o, "SimdSDCBakedIn",
               "An SDC baked into a checkpoint in a scenario that validates. Scenarios without validation "
               "(naive: validation.interval_steps 0) bake SDCs in by design, continually; they are left to the "
               "dashboard. With validation, an SDC can only reach a checkpoint when the validation interval "
               "does not divide the checkpoint interval (seed 000 erratum): a configuration to fix, and a "
               "corrupt checkpoint to discard.",
               f"{increase_by('scenario', 'simd_sdc_baked_total', w)} > 0\nand on (scenario)\n"
               f"{increase_by('scenario', 'simd_validations_total', w)} > 0",
               "critical",
               "An SDC was baked into a checkpoint of scenario {{ $labels.scenario }}",
               "Scenario {{ $labels.scenario }} validates, yet {{ printf \"%.0f\" $value }} silent data "
               f"corruption(s) reached a checkpoint in the last {spoken(w)}: the checkpoint is corrupt and a "
               "restore from it trains on corrupted state."),
        _alert(o, "SimdSDCDetectionsSpike",
               f"SDC detections per simulated hour of compute over the last {spoken(w)} above {k}x the "
               "configured SDC rate (simd_expected_sdc_per_hour: onsets per hour of compute, which stays the "
               "configured one while a drill multiplies the real rate), with at least "
               f"{c.MIN_SDC_DETECTIONS} detections in the window (one or two rare detections in a low-rate "
               "scenario are not a spike). What is comparable: detections over the same exposure as the "
               f"configured onset rate, {COMPUTE} (onsets set in only during executed steps). Every detection "
               "is of an SDC that set in, so at the configured rate detections per compute hour are at most "
               f"about the configured onset rate, 1/{k} of the threshold.",
               f"(\n  {c.SDC_DETECTED_PER_COMPUTE_HOUR}\n    > on (scenario)\n"
               f"  {k} * max by (scenario) ({sel('simd_expected_sdc_per_hour')})\n)\n"
               f"and on (scenario)\n{increase_by('scenario', 'simd_sdc_detected_total', w)} "
               f">= {c.MIN_SDC_DETECTIONS}",
               "warning",
               "SDC detections of scenario {{ $labels.scenario }} spiked",
               "Validations of scenario {{ $labels.scenario }} caught {{ printf \"%.3g\" $value }} silent data "
               f"corruptions per simulated hour of compute over the last {spoken(w)}, more than {k} times its "
               f"configured SDC rate of {lookup('simd_expected_sdc_per_hour', _3G)} per hour."),
        _alert(o, "SimdStragglerSlowingSteps",
               f"The slowest rank runs at less than {c.STRAGGLER_SCORE:.0%} of the best rank's speed (NVIDIA "
               "nvidia-resiliency-ext style relative score): a synchronous job steps at the pace of its slowest "
               "rank. With mitigation on, the median detector replaces a slow rank long before the for: "
               "expires (llama3-16k: after 50 steps, half a wall second at speedup 600).",
               f"min by (scenario) ({sel('simd_slowest_rank_score')}) < {c.STRAGGLER_SCORE}",
               "warning",
               "A straggler is slowing the steps of scenario {{ $labels.scenario }}",
               "The slowest rank of scenario {{ $labels.scenario }} runs at {{ $value | humanizePercentage }} "
               "of the best rank's speed, and every synchronous step waits for it."),
        _alert(o, "SimdCheckpointIntervalFarFromOptimum",
               f"The configured checkpoint interval is more than {far}x or less than 1/{far} of Young's optimum. "
               "Sweep points (simd_scenario_info{sweep!=\"\"}) span bad intervals on purpose and are left out, "
               "and so are the scenarios of mixin.config.INTERVAL_ALERT_EXCLUDED_SCENARIOS "
               f"({', '.join(o.interval_excluded) or 'none'}): far from the optimum by design (the demo's "
               "naive checkpoints every 200 steps, 3.7x its optimum of 54).",
               f"(\n  {c.INTERVAL_OVER_YOUNG} > {far}\n  or\n  {c.INTERVAL_OVER_YOUNG} < 1 / {far}\n)\n"
               f"and on (scenario)\nmax by (scenario) ({sel('simd_scenario_info', *excluded, sweep='')})",
               "info",
               "Checkpoint interval of scenario {{ $labels.scenario }} is far from the optimum",
               "Scenario {{ $labels.scenario }} checkpoints every "
               f"{lookup('simd_checkpoint_interval_steps', _0F)} steps, "
               "{{ printf \"%.2g\" $value }} times Young's optimum of "
               f"{lookup('simd_checkpoint_interval_optimal_steps', _0F, _YOUNG)} "
               "steps."),
        _alert(o, "SimdJobWaitingForCapacity",
               f"The job stood still waiting for servers (the waiting bucket: every standby and spare taken, "
               f"waiting for one back from repair, or a spare's preemption) more than {c.WAITING_SHARE:.0%} of "
               f"its simulated time over the last {spoken(gw)}. llama3-16k-servers waits 0.5-0.9% of its time "
               "for spares' preemptions in normal operation.",
               c.BUCKET_RATIO_10M + '{bucket="waiting"} > ' + str(c.WAITING_SHARE),
               "warning",
               "Scenario {{ $labels.scenario }} is waiting for servers",
               f"Over the last {spoken(gw)} scenario {{{{ $labels.scenario }}}} stood still waiting for servers "
               "{{ $value | humanizePercentage }} of its simulated time: its warm standbys and spares do not "
               "cover the servers in repair."),
        _alert(o, "SimdSparePoolExhausted",
               f"At least {c.POOLS_EXHAUSTED_SHARE:.0%} of the scenario's replicas have neither a warm standby nor a "
               "spare to take (simd_pools_exhausted_replicas over simd_scenario_replicas): their next server "
               "failure makes the job wait for a repair. Both are per-scenario gauges, hence max by (scenario).",
               f"max by (scenario) ({sel('simd_pools_exhausted_replicas')})\n  / on (scenario)\n"
               f"max by (scenario) ({sel('simd_scenario_replicas')})\n  >= {c.POOLS_EXHAUSTED_SHARE}",
               "warning",
               "The spare pool of scenario {{ $labels.scenario }} is exhausted",
               "{{ $value | humanizePercentage }} of the replicas of scenario {{ $labels.scenario }} have no warm "
               "standby and no spare left: the next server failure waits for a repair."),
        _alert(o, "SimdRepairBacklogGrowing",
               f"More servers in repair than {c.REPAIR_BACKLOG_FACTOR}x as many as {c.REPAIR_BACKLOG_WINDOW} ago "
               f"(offset), and at least {c.REPAIR_BACKLOG_MIN}: repairs finish slower than servers fail, so the "
               "pools drain. Counts summed over replicas (a steady scenario's count is stable however many "
               "replicas); the minimum keeps a small cluster's fluctuations (2 -> 5) quiet.",
               f"{c.SERVERS_IN_REPAIR}\n  > {c.REPAIR_BACKLOG_FACTOR} * ({c.SERVERS_IN_REPAIR} offset "
               f"{c.REPAIR_BACKLOG_WINDOW})\nand\n{c.SERVERS_IN_REPAIR} >= {c.REPAIR_BACKLOG_MIN}",
               "warning",
               "The repair backlog of scenario {{ $labels.scenario }} is growing",
               "{{ $value | humanize }} servers of scenario {{ $labels.scenario }} are in repair, more than "
               f"{c.REPAIR_BACKLOG_FACTOR} times as many as {spoken(c.REPAIR_BACKLOG_WINDOW)} ago: repairs are not "
               "keeping pace with failures."),
        _alert(o, "SimdCheckpointSavesFailing",
               f"More than {c.SAVE_FAILURE_SHARE:.0%} of a scenario's persistent saves failed over the last "
               f"{spoken(w)} (checkpoint.save_failure, or a storage-outage drill), with at least "
               f"{c.MIN_FAILED_SAVES} failures in the window. Saves aborted by a rollback count among the saves "
               "(they were attempted) but not as failures: a high failure rate aborts writes without any storage "
               "problem.",
               f"(\n  {increase_by('scenario', 'simd_checkpoint_saves_total', w, tier='persistent', outcome='failed')}"
               f"\n    /\n  {increase_by('scenario', 'simd_checkpoint_saves_total', w, tier='persistent')}\n)"
               f" > {c.SAVE_FAILURE_SHARE}\nand on (scenario)\n"
               f"{increase_by('scenario', 'simd_checkpoint_saves_total', w, tier='persistent', outcome='failed')}"
               f" >= {c.MIN_FAILED_SAVES}",
               "warning",
               "Checkpoint saves of scenario {{ $labels.scenario }} are failing",
               f"Over the last {spoken(w)} {{{{ $value | humanizePercentage }}}} of the persistent saves of "
               "scenario {{ $labels.scenario }} failed: each leaves the job's rollback target a save older, and a "
               "failure then costs more recomputation."),
        _alert(o, "SimdNoDurableCheckpoint",
               f"No persistent save of a scenario became durable over the last {spoken(w)} although at least "
               f"{c.MIN_SAVES_NONE_DURABLE} were attempted (all failed, or rollbacks aborted them while they "
               "wrote): the rollback target stands still while the job trains on, and every interruption rolls "
               "back further. $value is the saves attempted. A scenario that attempts no save in the window (an "
               "interval longer than the window's simulated time) stays silent.",
               f"{increase_by('scenario', 'simd_checkpoint_saves_total', w, tier='persistent')}"
               f" >= {c.MIN_SAVES_NONE_DURABLE}\nunless on (scenario)\n"
               f"{increase_by('scenario', 'simd_checkpoint_saves_total', w, tier='persistent', outcome='durable')}"
               " > 0",
               "critical",
               "No checkpoint of scenario {{ $labels.scenario }} became durable",
               f"Scenario {{{{ $labels.scenario }}}} attempted {{{{ printf \"%.0f\" $value }}}} persistent saves "
               f"over the last {spoken(w)} and none became durable: its newest rollback target is older than the "
               "window."),
        _alert(o, "SimdCheckpointLoadsCorrupt",
               f"At least {c.MIN_CORRUPT_LOADS} recovery loads of a scenario found their checkpoint corrupt over the "
               f"last {spoken(w)}: each recovery paid the load and fell back to an older checkpoint (or to the job's "
               "start, simd_checkpoint_fallbacks_to_start_total). Counted over the window, not per load, so a "
               "single corrupt checkpoint met once stays quiet.",
               f"{increase_by('scenario', 'simd_checkpoint_corrupt_loads_total', w, tier='persistent')}"
               f" >= {c.MIN_CORRUPT_LOADS}",
               "warning",
               "Recoveries of scenario {{ $labels.scenario }} are falling back from corrupt checkpoints",
               f"{{{{ printf \"%.0f\" $value }}}} loads of scenario {{{{ $labels.scenario }}}} found their "
               f"checkpoint corrupt over the last {spoken(w)}: each recovery paid the load and rolled back further."),
        _alert(o, "SimdMemoryTierLost",
               f"At least {c.MIN_TIER_LOSSES} interruptions of a scenario lost its memory tier (checkpoint.tiers) "
               f"over the last {spoken(w)}: every server holding some shard failed together, so the recovery "
               "loaded the persistent checkpoint and recomputed the work since it. Correlated failures do that: "
               "a peer tier whose groups sit inside one rack or power feed (jump_servers below the failure "
               "domain), or a local tier (one copy).",
               f"{increase_by('scenario', 'simd_checkpoint_tier_losses_total', w)} >= {c.MIN_TIER_LOSSES}",
               "warning",
               "Scenario {{ $labels.scenario }} keeps losing its memory checkpoint tier",
               f"{{{{ printf \"%.0f\" $value }}}} interruptions of scenario {{{{ $labels.scenario }}}} lost its "
               f"memory tier over the last {spoken(w)}: their recoveries fell back to the persistent checkpoint."),
        _alert(o, "SimdCheckpointWritesBlocking",
               f"A scenario waited for checkpoint writes more than {c.CHECKPOINT_WAIT_SHARE:.0%} of its simulated "
               f"time over the last {spoken(gw)}: a save came due while the one before still wrote (the "
               "persistent tier's `checkpoint.write_seconds` or a memory tier's `checkpoint.tiers.*.write_seconds`), "
               "and the job stood still until that write ended (the checkpoint bucket's wait part). A write shorter "
               "than the time between saves never waits; one that outlasts it makes every save wait: slow storage, "
               "or a slow network to a peer tier's peers.",
               over_elapsed("scenario", "simd_checkpoint_cost_seconds_total", gw, False, part="wait")
               + f" > {c.CHECKPOINT_WAIT_SHARE}",
               "warning",
               "Scenario {{ $labels.scenario }} is waiting for checkpoint writes",
               f"Over the last {spoken(gw)} scenario {{{{ $labels.scenario }}}} stood still "
               "{{ $value | humanizePercentage }} of its simulated time waiting for a checkpoint write to end "
               "before it could save again: its writes outlast the interval between its saves."),
        _alert(o, "SimdCrashLoopEscalated",
               f"At least {c.MIN_ESCALATIONS} hard failure(s) of a scenario ended in a crash loop over the last "
               f"{spoken(w)}: every one of its restart attempts failed (recovery.crash_loop.max_attempts) and the "
               "job was escalated to a manual intervention (escalation_seconds, restart bucket): a bad node not "
               "isolated, a corrupt checkpoint, a fault that recurs at start-up.",
               f"{increase_by('scenario', 'simd_restart_escalations_total', w)} >= {c.MIN_ESCALATIONS}",
               "warning",
               "Restarts of scenario {{ $labels.scenario }} are crash-looping",
               f"{{{{ printf \"%.0f\" $value }}}} crash loop(s) of scenario {{{{ $labels.scenario }}}} exhausted "
               f"their restart attempts over the last {spoken(w)}: each waited for a manual intervention."),
        _alert(o, "SimdHangTimeHigh",
               f"The job stood still until its failures were noticed (the detection bucket) more than "
               f"{c.HANG_TIME_SHARE:.0%} of its simulated time over the last {spoken(gw)}. A failure that raises an "
               "error is noticed in seconds; a hang (a collective that never completes) only when a watchdog's "
               "timeout ends it (failures.causes.NAME.detection_seconds: NCCL's default is 10 minutes), so the "
               "bucket is the hangs' time. The recovery family's scenarios, 5% of whose failures hang, spend 0.33% "
               "there.",
               c.BUCKET_RATIO_10M + '{bucket="detection"} > ' + str(c.HANG_TIME_SHARE),
               "warning",
               "Scenario {{ $labels.scenario }} is losing time to hangs",
               f"Over the last {spoken(gw)} scenario {{{{ $labels.scenario }}}} stood still until its failures "
               "were noticed {{ $value | humanizePercentage }} of its simulated time: hangs waiting for a watchdog's "
               "timeout."),
        _alert(o, "SimdRunningDegraded",
               "A scenario with elastic replica groups (recovery.elastic) spent more than "
               f"{c.DEGRADED_SHARE:.0%} of its simulated time in the degraded bucket over the last "
               f"{spoken(gw)}: groups dropped by failures are not rejoining (their replacement or heal takes longer "
               "than the failures between drops), so the job trains on a fraction of its capacity. Scenarios "
               "without elastic groups have no degraded bucket and stay silent.",
               c.BUCKET_RATIO_10M + '{bucket="degraded"} > ' + str(c.DEGRADED_SHARE),
               "warning",
               "Scenario {{ $labels.scenario }} is running degraded",
               f"Over the last {spoken(gw)} scenario {{{{ $labels.scenario }}}} lost "
               "{{ $value | humanizePercentage }} of its capacity to replica groups out (and the fault-tolerant "
               "mode's overhead): its dropped groups are not rejoining."),
        _alert(o, "SimdDown",
               "Prometheus knows the target but cannot scrape it. A target that is not there at all has no up "
               "series, so this stays silent: that is SimdMetricsAbsent.",
               f"{sel('up')} == 0",
               "critical",
               "simd is down",
               "Prometheus could not scrape simd at {{ $labels.instance }} for "
               f"{spoken(o.for_('SimdDown'))}: no metrics, no alerts from the simulation."),
        _alert(o, "SimdMetricsAbsent",
               "No simd metrics reach Prometheus although no simd target is down: the target was never "
               "discovered or vanished from the configuration or service discovery (no up series, so SimdDown "
               "cannot fire), or it is scraped but is not simd (another process on the port), or the job "
               "selector of mixin.config no longer matches the scrape job. Every other simd alert is then "
               "silently empty. simd_build_info rather than up: it is always 1 on a simd, so it also catches a "
               "target that answers without simd's metrics. The unless leaves a target that is down to "
               "SimdDown (a failed scrape marks its series stale, so absent() alone would fire for it too).",
               f"absent({sel('simd_build_info')})\nunless on ()\n({sel('up')} == 0)",
               "critical",
               "No simd metrics in Prometheus",
               f"Prometheus has had no simd_build_info{{{c.JOB_SELECTOR}}} series for "
               f"{spoken(o.for_('SimdMetricsAbsent'))}, and no target of that job is down: no simd is scraped "
               "(the target is missing from the scrape configuration or service discovery, or the scrape job "
               f"is no longer {c.JOB_SELECTOR}), or the target is not simd. No other simd alert can fire."),
        _alert(o, "SimdTicksStalled",
               f"The daemon serves /metrics but its tick loop stopped: the simulated clock stands still. "
               f"{c.STALL_SECONDS} s is {c.STALL_SECONDS} ticks at the default tick_seconds of 1 (/healthz "
               "reports the stall after 3 ticks + 1 s).",
               f"time() - {sel('simd_last_tick_timestamp_seconds')} > {c.STALL_SECONDS}",
               "warning",
               "simd stopped ticking",
               "simd at {{ $labels.instance }} completed its last tick {{ $value | humanizeDuration }} ago: the "
               "simulation is not advancing."),
        _alert(o, "SimdConfigReloadFailed",
               "The last reload of the scenario file (SIGHUP or POST /-/reload) failed, so simd still runs the "
               "configuration it had: the file on disk and the simulation disagree until the file is fixed and "
               "reloaded (as Prometheus' own PrometheusBadConfig).",
               f"max by (instance) ({sel('simd_config_last_reload_successful')}) == 0",
               "warning",
               "simd could not reload its scenario file",
               "The last configuration reload of simd at {{ $labels.instance }} failed: it keeps running the "
               "previous configuration. Its log names every error."),
        _alert(o, "SimdScenarioQuarantined",
               "A tick of the scenario raised: simd logged the cause once and stopped advancing that scenario "
               "(its counters stay where they were) while the others go on. Its alerts and panels go quiet, "
               "which this makes visible.",
               f"max by (instance, scenario) ({sel('simd_scenario_failed')}) == 1",
               "warning",
               "Scenario {{ $labels.scenario }} is quarantined",
               "A tick of scenario {{ $labels.scenario }} on simd at {{ $labels.instance }} raised: the scenario no "
               "longer advances (the other scenarios do). The daemon's log has the cause."),
        _alert(o, "SimdNotReady",
               "simd serves /metrics from its first second, but its scenarios advance only once the engine's "
               "kernels are compiled (or loaded from the cache) and have reached the shared clock "
               "(/-/ready, simd_ready). Still not ready after minutes: the compile is stuck or starved, or a "
               "scenario cannot reach the clock.",
               f"max by (instance) ({sel('simd_ready')}) == 0",
               "warning",
               "simd is not ready",
               "simd at {{ $labels.instance }} has not been ready for "
               f"{spoken(o.for_('SimdNotReady'))}: its kernels are not compiled yet, or a scenario has not reached "
               "the simulated clock. GET /-/ready says which."),
        _alert(o, "SimdStateSaveFailing",
               "simd saves its state (--state-dir) every few ticks; saves are failing (a full disk, a permission, "
               "a read-only volume), so a restart would resume from the last good snapshot and lose everything "
               "since. simd_state_last_save_timestamp_seconds says when that was. Only a daemon with a state "
               "directory counts save errors.",
               f"sum by (instance) (increase({sel('simd_state_save_errors_total')}[{o.rate_window}])) > 0",
               "warning",
               "simd cannot save its state",
               "simd at {{ $labels.instance }} failed to save its state directory {{ $value | humanize }} times "
               f"in the last {spoken(o.rate_window)}: a restart would lose the simulation since its last good "
               "save. Its log names the error."),
    ]


def headers(o: Options) -> dict[str, list[str]]:
    generated = ("Generated by `python -m mixin` from mixin/rules.py and mixin/config.py: edit those and "
                 "regenerate; tests/assets/test_alerting.py checks that this file is what they generate.")
    return {
        RECORDING_FILE: [
            "Recording rules of the simd stack. Names follow level:metric:operation and come from mixin/config.py "
            "(the dashboard queries them).",
            generated,
            "Simulated time runs `speedup` times faster than wall time, so a rate per simulated hour is never "
            "rate(): it is increase(x[w]) / increase(simd_scenario_simulated_seconds_total[w]) * 3600, which "
            "means the same at any speedup (the wall window w only decides how much simulated time is averaged: "
            f"at speedup 600, {spoken(o.rate_window)} of wall time is "
            f"{_seconds(o.rate_window) * 600 / 3600:g} simulated hours of each replica). "
            "simd_scenario_simulated_seconds_total is summed over the scenario's replicas, as every "
            "per-scenario counter is, so the ratios are per replica-hour. The per_compute_hour rates divide by "
            f"{COMPUTE} instead (executed steps x base step time, also summed over replicas): the simulated "
            "compute the failure hazards apply to, the unit of simd_expected_interruptions_per_hour and "
            "simd_expected_sdc_per_hour.",
            "Every rule aggregates to the scenario level (sum by (scenario) of counters, max by (scenario) of "
            "configuration gauges): a second simd target (or a restart with a new instance label) adds up "
            "instead of producing duplicate series. Every selector carries the job selector "
            f"{c.JOB_SELECTOR}.",
        ],
        ALERTS_FILE: [
            "Alerting rules of the simd stack. Each alert has labels.severity and annotations summary, "
            f"description and runbook_url ({c.RUNBOOK_BASE_URL} plus the anchor of the alert's section). "
            "prometheus/tests/alerts_test.yml tests every alert pending when its condition starts, not firing "
            "one evaluation before its `for:` expires and firing at expiry (exact labels and annotations).",
            generated,
            "Rates are per simulated hour (see simd_recording.yml), so thresholds mean the same at any speedup. "
            "Thresholds, windows and `for:` durations are in mixin/config.py, with their sources.",
        ],
    }


def _seconds(duration: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    return sum(float(n) * units[u] for n, u in re.findall(r"(\d+)(ms|s|m|h|d|w|y)", duration))


# --- YAML -----------------------------------------------------------------------------------------------
class _Literal(str):
    """Written as a literal block (``|``): the expressions keep their lines."""


class _Folded(str):
    """Written as a folded block (``>-``): long descriptions wrapped at WIDTH, read back as one line."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Literal, lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", s, style="|"))
_Dumper.add_representer(_Folded, lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", s, style=">"))


def _comment(text: str, indent: str) -> list[str]:
    return [f"{indent}# {line}" for line in textwrap.wrap(text, WIDTH - len(indent) - 2)] if text else []


def _file(header: list[str], group: str, rules: list[Rule]) -> str:
    lines: list[str] = []
    for i, paragraph in enumerate(header):
        lines += (["#"] if i else []) + _comment(paragraph, "")
    lines += ["groups:", f"  - name: {group}", "    rules:"]
    indent = " " * 6
    for i, rule in enumerate(rules):
        if i and rule.comment:
            lines.append("")
        lines += _comment(rule.comment, indent)
        # PyYAML breaks a folded line after the first space past `width`; the descriptions sit 6 columns
        # deeper than the rule: 10 columns of slack keep most lines within WIDTH.
        block = yaml.dump([rule.as_dict()], Dumper=_Dumper, sort_keys=False, width=WIDTH - len(indent) - 10,
                          allow_unicode=True)
        lines += [indent + line if line else line for line in block.rstrip("\n").split("\n")]
    return "\n".join(lines) + "\n"


def render(o: Options | None = None) -> dict[str, str]:
    """File name (in prometheus/rules/) -> its text."""
    o = o or Options()
    h = headers(o)
    return {
        RECORDING_FILE: _file(h[RECORDING_FILE], "simd-recording", recording_rules(o)),
        ALERTS_FILE: _file(h[ALERTS_FILE], "simd-alerts", alerting_rules(o)),
    }
