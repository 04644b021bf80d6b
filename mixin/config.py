"""The one configuration of simd's mixin (kubernetes-mixin's ``_config``): what every rule and panel shares.

Change a selector or the runbook location here and regenerate (``python -m mixin``); nothing else repeats
them.
"""

from __future__ import annotations

# The Prometheus job that scrapes simd (prometheus/prometheus.yml's job_name).
JOB = "simd"
JOB_SELECTOR = f'job="{JOB}"'
# Where the runbook lives: every alert's runbook_url is this plus "#" and the alert name in lower case
# (docs/runbook.md has one anchor per alert).
RUNBOOK_BASE_URL = "https://github.com/simd-project/simd/blob/main/docs/runbook.md"

# Recording rules (level:metric:operation), used by the alerts and by the dashboard's panels.
GOODPUT_10M = "scenario:simd_goodput:ratio_10m"
BUCKET_RATIO_10M = "scenario_bucket:simd_bucket_seconds:ratio_10m"
INTERRUPTIONS_PER_SIM_HOUR = "scenario:simd_interruptions:per_sim_hour_5m"
INTERRUPTIONS_BY_CAUSE_PER_SIM_HOUR = "scenario_cause:simd_interruptions:per_sim_hour_5m"
SDC_DETECTED_PER_SIM_HOUR = "scenario:simd_sdc_detected:per_sim_hour_5m"
SDC_BAKED_PER_SIM_HOUR = "scenario:simd_sdc_baked:per_sim_hour_5m"
# Per simulated hour of compute (simd_compute_seconds_total: executed steps x base step time), the exposure
# the hazards apply to and the unit of simd_expected_interruptions_per_hour / simd_expected_sdc_per_hour: the
# rates the alerts and the dashed "configured rate" lines compare with the configured ones.
INTERRUPTIONS_PER_COMPUTE_HOUR = "scenario:simd_interruptions:per_compute_hour_5m"
SDC_ONSETS_PER_COMPUTE_HOUR = "scenario:simd_sdc_onsets:per_compute_hour_5m"
SDC_DETECTED_PER_COMPUTE_HOUR = "scenario:simd_sdc_detected:per_compute_hour_5m"
# one series per quantile, with a ``quantile`` label ("0.5", "0.9", "0.99")
STEP_DURATION_QUANTILES = "scenario:simd_step_duration_seconds:quantile_5m"
STEP_QUANTILES = ("0.5", "0.9", "0.99")
INTERVAL_OVER_YOUNG = "scenario:simd_checkpoint_interval_steps:ratio_young"
# Servers with pools (docs/servers.md): servers in repair (both pipelines), GPUs held (every server but
# the retired ones, times its GPUs), and GPU-hours held per productive GPU-hour (the cost of a productive GPU-hour
# in GPU-hours: held over the job's, over the goodput of the last GOODPUT_WINDOW)
SERVERS_IN_REPAIR = "scenario:simd_servers_in_repair:sum"
GPUS_HELD = "scenario:simd_gpus_held:sum"
GPU_HOURS_PER_PRODUCTIVE = "scenario:simd_gpu_hours_held:per_productive_gpu_hour_10m"


def runbook_url(alert: str) -> str:
    return f"{RUNBOOK_BASE_URL}#{alert.lower()}"


# --- Rules (mixin/rules.py) ------------------------------------------------------------------------------
# Wall-clock windows of the recording rules. At the default speedup of 600, 5m of wall time is 50 simulated
# hours per replica and 10m is 100 (llama3-16k: ~18 and ~36 interruptions). The recording-rule names above
# carry these production windows; tests/daemon/test_drills_end_to_end.py builds a copy with shorter windows under the
# same names.
RATE_WINDOW = "5m"
GOODPUT_WINDOW = "10m"

# Alert thresholds.
# Interruptions and SDC detections per simulated hour of compute against the configured rate
# (simd_expected_interruptions_per_hour, simd_expected_sdc_per_hour, also per hour of compute): "high" is
# over 3x. At speedup 600,
# llama3-16k expects ~18 interruptions in 5 minutes, and Poisson(18) >= 54 does not happen by chance.
RATE_FACTOR = 3
# Fewest events in the rate window for a rate alert: at a low speedup a window holds little simulated time,
# and one or two events in it are no trend.
MIN_INTERRUPTIONS = 5
MIN_SDC_DETECTIONS = 4
# The slowest rank's relative score (nvidia-resiliency-ext style, 1 = healthy) below which a straggler is
# slowing the job: 90% of the best rank's speed.
STRAGGLER_SCORE = 0.9
# The checkpoint interval is "far" from Young's optimum beyond this factor either way.
INTERVAL_FACTOR = 3
# Wall seconds without a completed tick: 15 ticks at the default tick_seconds of 1.
STALL_SECONDS = 15
# Servers. The share of the simulated time the job stands still waiting for a server above which
# capacity is the problem: llama3-16k-servers waits 0.5-0.9% of its time for spares' preemptions (simd simulate,
# seeds 5-7), so 5% is several times that.
WAITING_SHARE = 0.05
# Hangs. The share of the simulated time the job stands still until its failures are noticed (the detection
# bucket: a hang's watchdog timeout, a failure's detection latency) above which hangs are the problem: Llama 3's
# causes take 0.07-0.08% of the time (seconds each), the recovery family (llama3-16k-cold, -hot, -migrate,
# -inprocess), 5% of whose failures are hangs found after NCCL's 10 min timeout, 0.32-0.33% (simd simulate, 200
# seeds); a 10m window (100 simulated hours at the default speedup, ~1.8 hangs expected) reaches 2% with 12 hangs.
# The hang-storm drill (hangs 20x) puts it at ~6%.
HANG_TIME_SHARE = 0.02
# The share of a scenario's replicas with neither a standby nor a spare to take (one replica: that replica).
POOLS_EXHAUSTED_SHARE = 0.5
# A repair backlog is growing when more servers are in repair than REPAIR_BACKLOG_FACTOR times as many as
# REPAIR_BACKLOG_WINDOW ago, and at least REPAIR_BACKLOG_MIN of them. llama3-16k-servers keeps ~14 servers in
# repair per replica in steady state (0.36 failures/h x 40 h mean repair), Poisson-like (sd ~4): twice as many
# within 10 wall minutes (100 simulated hours) is no fluctuation; its repair-slowdown drill (repairs 10x slower)
# doubles it within ~75 simulated hours.
REPAIR_BACKLOG_FACTOR = 2
REPAIR_BACKLOG_MIN = 10
REPAIR_BACKLOG_WINDOW = "10m"
# Checkpoint saves (docs/model.md, "Asynchronous saves"; simd_checkpoint_saves_total). No public per-save failure
# rate exists (docs/checkpoints.md, section 9): a fifth of the persistent saves failing over the rate window is
# far above any steady rate a storage system would be run at, and each failure leaves the rollback target a save
# older; at least MIN_FAILED_SAVES failures, so one failure in a window of few saves (a low speedup) is no trend.
SAVE_FAILURE_SHARE = 0.2
MIN_FAILED_SAVES = 3
# No persistent save became durable over the rate window although at least this many were attempted (failed or
# aborted by rollbacks): the job's rollback target stands still while it trains on.
MIN_SAVES_NONE_DURABLE = 3
# Loads that found their checkpoint corrupt (checkpoint.corrupt_on_load) in the rate window: one is a recovery
# that cost a second load; at least this many is a pattern (a bad storage target, a bad replica assembly:
# Megatron-LM#5281's 44 identical restarts on one corrupt checkpoint).
MIN_CORRUPT_LOADS = 2
# Interruptions that lost a memory tier (checkpoint.tiers: every holder of some shard failed together) in the rate
# window: Gemini's group placement loses it to a burst with probability ~1e-3 at 2,048 servers (docs/model.md), so
# two in one window is a correlated pattern (a rack or power feed taking whole groups: groups inside one domain).
MIN_TIER_LOSSES = 2
# Checkpoint writes the job waits for (simd_checkpoint_cost_seconds_total{part="wait"}: a save due while the one
# before still writes, persistent or memory tier) as a share of its simulated time over the goodput window. A write
# shorter than the time between saves never makes one wait: the default scenarios wait 0% of their time, except
# llama3-16k-async's 0.003% (a save after a short stretch of steps; simd simulate, 200 seeds). A twentieth is a
# write that outlasts the interval between saves (every save waits): the slow-peer-network drill's 240 s peer copy
# against 120 s between peer saves waits about half the time.
CHECKPOINT_WAIT_SHARE = 0.05
# Crash loops escalated to a manual intervention (recovery.crash_loop: every one of max_attempts restarts failed) in
# the rate window: one is already a job whose automatic retries gave up and that waits for a person (Kokolis et al.,
# HPCA'25: a crash loop of 35 requeues), so one is enough.
MIN_ESCALATIONS = 1
# Elastic replica groups (recovery.elastic): the share of a scenario's simulated time in the degraded bucket over the
# goodput window (the capacity the groups out would have given, and the fault-tolerant mode's overhead on every
# step). A tenth is two groups of 16 out the whole window, or one of 8 most of it: groups that do not rejoin (a
# heal that never ends, replacements that do not come) rather than the few percent of overhead a mode costs:
# llama3-16k-elastic spends 1.7% there (simd simulate, 200 seeds), nearly all its 2% overhead; its drill
# elastic-no-rejoin passes 20%.
DEGRADED_SHARE = 0.1

# How long each condition must hold before its alert fires (Prometheus evaluates rules every 15 s,
# prometheus/prometheus.yml). The checkpoint interval is static configuration, so 10m only keeps it quiet
# through restarts; SimdMetricsAbsent waits as long as SimdDown, the other "no simd metrics" alert.
FOR = {
    "SimdGoodputBelowTarget": "3m",
    "SimdInterruptionRateHigh": "2m",
    "SimdSDCBakedIn": "1m",
    "SimdSDCDetectionsSpike": "2m",
    "SimdStragglerSlowingSteps": "3m",
    "SimdCheckpointIntervalFarFromOptimum": "10m",
    "SimdDown": "1m",
    "SimdMetricsAbsent": "1m",
    "SimdTicksStalled": "30s",
    "SimdConfigReloadFailed": "1m",
    "SimdScenarioQuarantined": "1m",
    # a first start on a machine compiles the kernels for ~10 s (a minute on a loaded host), then scenarios
    # catch up: 5m is well past that
    "SimdNotReady": "5m",
    # saves run every 10 ticks (10 s at the defaults): a minute of failures is six in a row, not one hiccup
    "SimdStateSaveFailing": "1m",
    # servers: waiting is averaged over the 10m goodput window already; an exhausted pool and a growing
    # backlog must last a few evaluations of a scrape-to-scrape quantity
    "SimdJobWaitingForCapacity": "3m",
    "SimdSparePoolExhausted": "5m",
    "SimdRepairBacklogGrowing": "5m",
    # saves: both are over the 5m rate window already; a share or an absence that lasts a few evaluations
    "SimdCheckpointSavesFailing": "2m",
    "SimdNoDurableCheckpoint": "2m",
    "SimdCheckpointLoadsCorrupt": "1m",
    "SimdMemoryTierLost": "1m",
    # averaged over the 10m goodput window already, as the hang share
    "SimdCheckpointWritesBlocking": "3m",
    # an escalation stays in the 5m rate window for 5 minutes: 1m confirms it is not a reset's artefact
    "SimdCrashLoopEscalated": "1m",
    # averaged over the 10m goodput window already, as the waiting share
    "SimdHangTimeHigh": "3m",
    # over the 10m goodput window already: 5m more is groups out a quarter of an hour, not one heal in progress
    "SimdRunningDegraded": "5m",
}

# Scenarios that are far from the checkpoint optimum on purpose and opt out of
# SimdCheckpointIntervalFarFromOptimum (the exporter has no label that marks them). The default
# configuration's `naive` checkpoints every 200 steps against Young's optimum of 54 (3.7x) to show what a
# badly chosen interval costs; without the opt-out it fires for as long as simd runs. Sweep points
# (simd_scenario_info{sweep!=""}) are left out by the rule itself. Names are scenario names ([a-z0-9_-]+).
INTERVAL_ALERT_EXCLUDED_SCENARIOS = ("naive",)
