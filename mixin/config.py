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
# one series per quantile, with a ``quantile`` label ("0.5", "0.9", "0.99")
STEP_DURATION_QUANTILES = "scenario:simd_step_duration_seconds:quantile_5m"
STEP_QUANTILES = ("0.5", "0.9", "0.99")
INTERVAL_OVER_YOUNG = "scenario:simd_checkpoint_interval_steps:ratio_young"


def runbook_url(alert: str) -> str:
    return f"{RUNBOOK_BASE_URL}#{alert.lower()}"
