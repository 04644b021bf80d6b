"""simd's Grafana dashboard, built with grafana-foundation-sdk (the SDK's Python builders and types).

:func:`dashboard` returns it as a dict, :func:`write` writes ``grafana/dashboards/simd.json`` (what
provisioning loads; ``python -m mixin`` calls it). Every selector carries the mixin's job selector
(:mod:`mixin.config`); the per-simulated-hour rates, goodput, bucket shares, step-time quantiles and the
interval over Young's optimum come from the recording rules named there, so a panel shows the numbers the
alerts judge.

Two things are written without the SDK, each for a reason given where it is done: the Prometheus options
of the drill annotation (:class:`_PromAnnotation`) and the ``pluginVersion`` of the panels
(:func:`_versioned`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from grafana_foundation_sdk.builders import barchart, stat, table, timeseries, xychart
from grafana_foundation_sdk.builders import common as cb
from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.builders import prometheus as prom
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models import dashboard as dm
from grafana_foundation_sdk.models import prometheus as pm
from grafana_foundation_sdk.models import xychart as xm

from . import config as c

ROOT = Path(__file__).resolve().parents[1]
PATH = ROOT / "grafana" / "dashboards" / "simd.json"

UID = "simd-overview"
# grafana/provisioning/datasources/prometheus.yml provisions the stack's Prometheus with this uid.
DATASOURCE = dm.DataSourceRef(type_val="prometheus", uid="simd-prometheus")
# docker-compose.yml runs grafana/grafana:11.4.0. Grafana migrates a panel's options by its pluginVersion
# (the Grafana version that saved it): the XY chart's from the pre-11.1 format whenever pluginVersion is
# below 11.1 or missing, which would throw away the series below. Every panel says the version it is for.
PLUGIN_VERSION = "11.4.0"
# The dashboard schema of Grafana 11.4 (what grafana-foundation-sdk's 11.4 branch writes). The SDK pinned
# here is its 11.6 branch (its XY chart types are the >= 11.1 format that 11.4 runs; the 11.4 branch still
# has the old ones) and writes 41 by default, a schema that Grafana 11.4 does not know.
SCHEMA_VERSION = 39

# The variables' defaults, from simd/scenario/default.yaml: llama3-16k has every feature a panel shows (interruption
# causes, stragglers, a goodput target, SDC); the sweep is the file's first (ckpt-sweep).
DEFAULT_CONFIG = ROOT / "simd" / "scenario" / "default.yaml"
DEFAULT_SCENARIO = "llama3-16k"

W = c.RATE_WINDOW  # the recording rules' rate window (increase() of raw counters uses the same)
HOUR = 3600  # seconds per simulated hour: rates are per simulated hour of one replica


# --- PromQL -----------------------------------------------------------------------------------------------
def sel(**labels: str) -> str:
    """A selector with the job selector first: sel(scenario="$scenario") -> {job="simd",scenario="$scenario"}."""
    return "{" + ",".join([c.JOB_SELECTOR, *(f'{k}="{v}"' for k, v in labels.items())]) + "}"


def rule(name: str, **labels: str) -> str:
    """A recording rule's series. The rules aggregate to the scenario (sum by (scenario)), which drops the
    job label, so they are selected by scenario only."""
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return f"{name}{{{inner}}}" if inner else name


def per_compute_hour(counter: str, by: str = "", **labels: str) -> str:
    """Increase of a per-scenario counter per simulated hour of compute of one replica (over
    simd_compute_seconds_total, as the per_compute_hour recording rules compute it), optionally ``by`` a
    label, for counters that have no rule."""
    agg, join = (f"sum by ({by})", f"/ ignoring ({by}) group_left") if by else ("sum", "/")
    return (f"{agg} (increase({counter}{sel(**labels)}[{W}]))\n  {join}\n"
            f"sum(increase(simd_compute_seconds_total{sel(**labels)}[{W}])) * {HOUR}")


def outside_sweeps(expr: str) -> str:
    return f'max by (scenario) ({expr} and on (scenario) simd_scenario_info{sel(sweep="")})'


def in_sweep(expr: str) -> str:
    return f'max by (scenario) ({expr} and on (scenario) simd_scenario_info{sel(sweep="$sweep")})'


def query(ref: str, expr: str, legend: str | None = None) -> prom.Dataquery:
    """A range query (time series)."""
    q = prom.Dataquery().ref_id(ref).expr(expr).range().datasource(DATASOURCE)
    return q.legend_format(legend) if legend else q


def instant(ref: str, expr: str, legend: str | None = None, table_format: bool = False) -> prom.Dataquery:
    q = prom.Dataquery().ref_id(ref).expr(expr).instant().datasource(DATASOURCE)
    if legend:
        q = q.legend_format(legend)
    return q.format(pm.PromQueryFormat.TABLE) if table_format else q


# --- panel pieces -----------------------------------------------------------------------------------------
def thresholds(*steps: tuple[float | None, str]) -> db.ThresholdsConfig:
    return (db.ThresholdsConfig().mode(dm.ThresholdsMode.ABSOLUTE)
            .steps([dm.Threshold(value=v, color=col) for v, col in steps]))


def legend(placement: cm.LegendPlacement = cm.LegendPlacement.BOTTOM, calcs: list[str] = ()) -> cb.VizLegendOptions:
    mode = cm.LegendDisplayMode.TABLE if calcs else cm.LegendDisplayMode.LIST
    return cb.VizLegendOptions().show_legend(True).display_mode(mode).placement(placement).calcs(list(calcs))


def dashed(dash: list[float], color: str | None = None) -> list[dm.DynamicConfigValue]:
    props = [dm.DynamicConfigValue(id_val="custom.lineStyle", value={"fill": "dash", "dash": dash}),
             dm.DynamicConfigValue(id_val="custom.fillOpacity", value=0)]
    if color:
        props.append(dm.DynamicConfigValue(id_val="color", value={"mode": "fixed", "fixedColor": color}))
    return props


def ts(title: str, description: str, unit: str, h: int, w: int) -> timeseries.Panel:
    """A line chart of range queries, multi-series tooltip."""
    return (timeseries.Panel().title(title).description(description).datasource(DATASOURCE).unit(unit)
            .height(h).span(w).line_width(2).fill_opacity(10).show_points(cm.VisibilityMode.NEVER)
            .span_nulls(True).legend(legend())
            .tooltip(cb.VizTooltipOptions().mode(cm.TooltipDisplayMode.MULTI).sort(cm.SortOrder.DESCENDING)))


def single(title: str, description: str, unit: str, h: int, w: int, steps=((None, "green"),),
           names: bool = True) -> stat.Panel:
    """A stat of instant queries, the last value of each."""
    text = cm.BigValueTextMode.VALUE_AND_NAME if names else cm.BigValueTextMode.AUTO
    return (stat.Panel().title(title).description(description).datasource(DATASOURCE).unit(unit)
            .height(h).span(w).thresholds(thresholds(*steps))
            .reduce_options(cb.ReduceDataOptions().values(False).calcs(["lastNotNull"]))
            .text_mode(text).color_mode(cm.BigValueColorMode.VALUE).graph_mode(cm.BigValueGraphMode.NONE))


def merged_table(title: str, description: str, h: int, w: int, renames: dict[str, str],
                 sort_by: str | None = None) -> table.Panel:
    """A table of instant table queries joined on their labels (merge), value columns renamed."""
    transformations = [dm.DataTransformerConfig(id_val="merge", options={}), organize(renames, ["Time"])]
    if sort_by:
        transformations.append(sort_by_field(sort_by))
    return (table.Panel().title(title).description(description).datasource(DATASOURCE)
            .height(h).span(w).transformations(transformations))


def organize(renames: dict[str, str], exclude: list[str]) -> dm.DataTransformerConfig:
    return dm.DataTransformerConfig(id_val="organize", options={
        "excludeByName": {name: True for name in exclude}, "indexByName": {}, "renameByName": renames})


def sort_by_field(field: str) -> dm.DataTransformerConfig:
    return dm.DataTransformerConfig(id_val="sortBy", options={"fields": {}, "sort": [{"field": field, "desc": False}]})


def value_columns(names: list[str]) -> dict[str, str]:
    """organize's renames for instant table queries A, B, ...: Grafana names their columns "Value #<refId>"."""
    return {f"Value #{chr(ord('A') + i)}": name for i, name in enumerate(names)}


# --- rows -------------------------------------------------------------------------------------------------
def goodput_row() -> list:
    util = ts("Effective utilization by scenario (cumulative)",
              "Productive over elapsed simulated time since the daemon started (simd_effective_utilization_ratio),"
              " every scenario outside sweeps; dashed \"<scenario> target\": the goodput SLO "
              "(simd_goodput_target_ratio) of the scenarios that configure one.", "percentunit", 8, 12)
    util = (util.min(0).max(1).legend(legend(cm.LegendPlacement.RIGHT, ["lastNotNull"]))
            .with_target(query("A", outside_sweeps(f"simd_effective_utilization_ratio{sel()}"), "{{scenario}}"))
            .with_target(query("B", f"max by (scenario) (simd_goodput_target_ratio{sel()})", "{{scenario}} target"))
            .override_by_query("B", dashed([10, 10])))
    now = (single("Effective utilization: $scenario",
                  f"Since the daemon started (simd_effective_utilization_ratio), over the last {c.GOODPUT_WINDOW}"
                  f" ({c.GOODPUT_10M}, what SimdGoodputBelowTarget compares) and the goodput target if the "
                  "scenario has one.", "percentunit", 8, 6, ((None, "red"), (0.6, "orange"), (0.8, "green")))
           .with_target(instant("A", f'max(simd_effective_utilization_ratio{sel(scenario="$scenario")})',
                                "since start"))
           .with_target(instant("B", rule(c.GOODPUT_10M, scenario="$scenario"), f"last {c.GOODPUT_WINDOW}"))
           .with_target(instant("C", f'max(simd_goodput_target_ratio{sel(scenario="$scenario")})', "target")))
    waste = (single("Rollback waste and checkpoint overhead: $scenario",
                    "Share of the elapsed simulated time lost to recomputed work (rollback) and spent blocking on "
                    "checkpoints, cumulative.", "percentunit", 8, 6,
                    ((None, "green"), (0.1, "orange"), (0.3, "red")))
             .with_target(instant("A", f'max(simd_rollback_waste_ratio{sel(scenario="$scenario")})',
                                  "rollback waste"))
             .with_target(instant("B", f'max(simd_checkpoint_overhead_ratio{sel(scenario="$scenario")})',
                                  "checkpoint overhead")))
    return [db.Row("Goodput"), util, now, waste]


def badput_row() -> list:
    buckets = (ts("Goodput and badput by bucket: $scenario",
                  f"Where the simulated time of the last {c.GOODPUT_WINDOW} went ({c.BUCKET_RATIO_10M}: increase of "
                  "simd_bucket_seconds_total per bucket over the increase of the scenario's simulated seconds; "
                  "stacked, the gap to 100% is work in flight, not yet committed).", "percentunit", 9, 12)
               .min(0).max(1).fill_opacity(60)
               .stacking(cb.StackingConfig().mode(cm.StackingMode.NORMAL).group("A"))
               .with_target(query("A", rule(c.BUCKET_RATIO_10M, scenario="$scenario"), "{{bucket}}")))
    rollback = (ts("Rollback waste by scenario (cumulative)",
                   "Recomputed work lost to rollbacks over elapsed simulated time (simd_rollback_waste_ratio).",
                   "percentunit", 9, 6).min(0)
                .with_target(query("A", outside_sweeps(f"simd_rollback_waste_ratio{sel()}"), "{{scenario}}")))
    overhead = (ts("Checkpoint overhead by scenario (cumulative)",
                   "Blocking checkpoint time over elapsed simulated time (simd_checkpoint_overhead_ratio).",
                   "percentunit", 9, 6).min(0)
                .with_target(query("A", outside_sweeps(f"simd_checkpoint_overhead_ratio{sel()}"), "{{scenario}}")))
    return [db.Row("Badput"), buckets, rollback, overhead]


def events_row() -> list:
    configured = f'max(simd_expected_interruptions_per_hour{sel(scenario="$scenario")})'
    interruptions = (
        ts("Interruptions per simulated hour by cause: $scenario",
           f"Interruptions in the last {W} per simulated hour of compute of one replica (by cause, and all causes: "
           f"{c.INTERRUPTIONS_PER_COMPUTE_HOUR}), the same at any speedup: over simd_compute_seconds_total "
           "(executed steps x base step time), the exposure the hazards apply to, the denominator of the dashed "
           "line too. Dashed: the configured (calibrated) rate, simd_expected_interruptions_per_hour; dotted: "
           f"{c.RATE_FACTOR}x that, above which SimdInterruptionRateHigh fires. Per hour of elapsed time "
           f"({c.INTERRUPTIONS_PER_SIM_HOUR}) the rate reads lower: checkpoints and recovery add time without "
           "failures.", "short", 8, 12).min(0).axis_label("per simulated hour")
        .with_target(query("A", per_compute_hour("simd_interruptions_total", "cause", scenario="$scenario"),
                           "{{cause}}"))
        .with_target(query("B", rule(c.INTERRUPTIONS_PER_COMPUTE_HOUR, scenario="$scenario"), "all causes"))
        .with_target(query("C", configured, "configured rate"))
        .with_target(query("D", f"{c.RATE_FACTOR} * {configured}", f"alert threshold ({c.RATE_FACTOR}x configured)"))
        .override_by_query("C", dashed([10, 10]))
        .override_by_query("D", dashed([2, 6], "red")))
    sdc = (ts("SDC detected vs baked in, per simulated hour: $scenario",
              "Silent data corruptions that set in "
              f"({c.SDC_ONSETS_PER_COMPUTE_HOUR}), that a validation caught before a checkpoint "
              f"({c.SDC_DETECTED_PER_COMPUTE_HOUR}), and that a checkpoint baked in, per simulated hour of "
              f"compute of one replica over the last {W} (over simd_compute_seconds_total, the exposure the "
              "hazards apply to, as the dashed line). Dashed: the configured SDC rate "
              "(simd_expected_sdc_per_hour) that SimdSDCDetectionsSpike compares detections against.",
              "short", 8, 12).min(0).axis_label("per simulated hour")
           .with_target(query("A", rule(c.SDC_ONSETS_PER_COMPUTE_HOUR, scenario="$scenario"), "onsets"))
           .with_target(query("B", rule(c.SDC_DETECTED_PER_COMPUTE_HOUR, scenario="$scenario"), "detected"))
           .with_target(query("C", per_compute_hour("simd_sdc_baked_total", scenario="$scenario"), "baked in"))
           .with_target(query("D", f'max(simd_expected_sdc_per_hour{sel(scenario="$scenario")})', "configured rate"))
           .override_by_query("D", dashed([10, 10])))
    counters = ["simd_sdc_onsets_total", "simd_sdc_detected_total", "simd_sdc_baked_total", "simd_validations_total"]
    totals = merged_table("SDC totals by scenario",
                          "Counters since the daemon started, every scenario outside sweeps. A scenario without "
                          "validation (naive) bakes every SDC in.", 7, 24,
                          value_columns(["SDC onsets", "detected", "baked in", "validations"])).unit("short")
    for i, name in enumerate(counters):
        totals = totals.with_target(instant(chr(ord("A") + i), outside_sweeps(f"{name}{sel()}"), table_format=True))
    return [db.Row("Interruptions and silent data corruption"), interruptions, sdc, totals]


def by_scenario_per_sim_hour(counter: str, by: str = "scenario") -> str:
    """Increase of a counter per simulated hour of one replica, by ``by`` (scenario and more labels): each
    scenario's increase over the increase of its own simulated seconds."""
    return (f"sum by ({by}) (increase({counter}{sel()}[{W}]))\n  / on (scenario) group_left\n"
            f"sum by (scenario) (increase(simd_scenario_simulated_seconds_total{sel()}[{W}])) * {HOUR}")


def shadow_fleet_row() -> list:
    """Seed 000's exercises 3 and 4: shadow-rank dual execution and mixed fleets, for the scenarios
    that have them (every scenario outside sweeps with `shadow` or `fleet`)."""
    shadowed = f"on (scenario) simd_shadow_ranks{sel()}"
    found = (ts("SDCs found by shadow ranks and by validation, per simulated hour",
                f"Scenarios with shadow ranks (simd_shadow_ranks): SDCs found by a disagreement of a shadowed rank's "
                f"two copies at the end of their step (simd_shadow_detected_total), by a validation (the rest of "
                f"simd_sdc_detected_total) and baked into a checkpoint (simd_sdc_baked_total), per simulated hour "
                f"of one replica over the last {W}.", "short", 8, 12).min(0).axis_label("per simulated hour")
             .with_target(query("A", f"({by_scenario_per_sim_hour('simd_shadow_detected_total')}) and {shadowed}",
                                "{{scenario}} shadow"))
             .with_target(query("B", f"(({by_scenario_per_sim_hour('simd_sdc_detected_total')}) - "
                                     f"({by_scenario_per_sim_hour('simd_shadow_detected_total')})) and {shadowed}",
                                "{{scenario}} validation"))
             .with_target(query("C", f"({by_scenario_per_sim_hour('simd_sdc_baked_total')}) and {shadowed}",
                                "{{scenario}} baked in")))
    cost = (merged_table("Shadow ranks: what they cost and found",
                         "Scenarios with shadow ranks, since the daemon started: shadowed ranks (each one more GPU), "
                         "effective utilization, the share of the elapsed time in the shadow bucket (the step "
                         "overhead), SDCs found by disagreement and SDCs baked in.", 8, 12,
                         value_columns(["shadow ranks", "utilization", "shadow overhead", "found by shadow",
                                        "baked in"]))
            .unit("short").override_by_name("utilization", [dm.DynamicConfigValue(id_val="unit", value="percentunit")])
            .override_by_name("shadow overhead", [dm.DynamicConfigValue(id_val="unit", value="percentunit")]))
    for i, expr in enumerate([f"simd_shadow_ranks{sel()}", f"simd_effective_utilization_ratio{sel()}",
                              f'simd_bucket_seconds_total{sel(bucket="shadow")}\n  / ignoring (bucket)\n'
                              f"simd_scenario_simulated_seconds_total{sel()}",
                              f"simd_shadow_detected_total{sel()}", f"simd_sdc_baked_total{sel()}"]):
        cost = cost.with_target(instant(chr(ord("A") + i), f"max by (scenario) ({expr}) and {shadowed}",
                                        table_format=True))
    interruptions = (
        ts("Interruptions per simulated hour by accelerator type",
           f"Scenarios with a fleet: hard-failure interruptions charged to the accelerator type of the GPU that "
           f"failed first (simd_interruptions_by_accelerator_total), per simulated hour of one replica over the "
           f"last {W}.", "short", 8, 8).min(0).axis_label("per simulated hour")
        .with_target(query("A", by_scenario_per_sim_hour("simd_interruptions_by_accelerator_total",
                                                         "scenario, accelerator"), "{{scenario}} {{accelerator}}")))
    onsets = (
        ts("SDC onsets per simulated hour by accelerator type",
           f"Scenarios with a fleet: SDC onsets charged to an accelerator type as interruptions are "
           f"(simd_sdc_onsets_by_accelerator_total), per simulated hour of one replica over the last {W}.",
           "short", 8, 8).min(0).axis_label("per simulated hour")
        .with_target(query("A", by_scenario_per_sim_hour("simd_sdc_onsets_by_accelerator_total",
                                                         "scenario, accelerator"), "{{scenario}} {{accelerator}}")))
    fleet = merged_table("Fleet by accelerator type",
                         "Scenarios with a fleet, since the daemon started: GPUs of each type (simd_accelerator_gpus),"
                         " interruptions and SDC onsets charged to it, summed over replicas.", 8, 8,
                         value_columns(["GPUs", "interruptions", "SDC onsets"])).unit("short")
    for i, name in enumerate(["simd_accelerator_gpus", "simd_interruptions_by_accelerator_total",
                              "simd_sdc_onsets_by_accelerator_total"]):
        fleet = fleet.with_target(instant(chr(ord("A") + i), f"max by (scenario, accelerator) ({name}{sel()})",
                                          table_format=True))
    return [db.Row("Shadow ranks and mixed fleets"), found, cost, interruptions, onsets, fleet]


def hyper_late_sdc_row() -> list:
    """Seed 000's exercise 2 and the seeds' named extension: hyper-checkpointing and committed SDCs
    found late by layered detectors, for the scenarios that have them (simd_checkpoint_hyper_interval_steps,
    simd_checkpoint_retention mark them)."""
    hyper = f"on (scenario) simd_checkpoint_hyper_interval_steps{sel()}"
    committed = f"on (scenario) simd_checkpoint_retention{sel()}"
    share = (ts("Hyper-checkpointing: share of executed steps under it",
                f"Scenarios with checkpoint.hyper: executed steps inside a hyper-checkpointing window "
                f"(simd_hyper_steps_total) over all executed steps (simd_steps_executed_total), last {W}: how much "
                "of the time the shorter interval was on.", "percentunit", 8, 8).min(0).max(1)
             .with_target(query("A", f"(sum by (scenario) (increase(simd_hyper_steps_total{sel()}[{W}]))\n  /\n"
                                     f"sum by (scenario) (increase(simd_steps_executed_total{sel()}[{W}])))"
                                     f" and {hyper}", "{{scenario}}")))
    windows = (ts("Hyper-checkpointing windows opened per simulated hour",
                  f"Scenarios with checkpoint.hyper: SDC detections that opened a window while none was open "
                  f"(simd_hyper_activations_total), per simulated hour of one replica over the last {W}; dashed: "
                  "all SDC detections (simd_sdc_detected_total + simd_sdc_baked_total; a detection inside an open "
                  "window extends it).", "short", 8, 8).min(0).axis_label("per simulated hour")
               .with_target(query("A", f"({by_scenario_per_sim_hour('simd_hyper_activations_total')}) and {hyper}",
                                  "{{scenario}} windows"))
               .with_target(query("B", f"(({by_scenario_per_sim_hour('simd_sdc_detected_total')}) + "
                                       f"({by_scenario_per_sim_hour('simd_sdc_baked_total')})) and {hyper}",
                                  "{{scenario}} detections"))
               .override_by_query("B", dashed([10, 10])))
    late = (ts("Committed SDCs found late, unrecoverable, checkpoints lost, per simulated hour",
               f"Scenarios with sdc.semantics committed: committed SDCs a detector found later "
               f"(simd_sdc_late_found_total), those older than every retained checkpoint "
               f"(simd_sdc_unrecoverable_total) and the committed checkpoints their rollbacks discarded "
               f"(simd_checkpoints_lost_total), per simulated hour of one replica over the last {W}.", "short", 8, 8)
            .min(0).axis_label("per simulated hour")
            .with_target(query("A", f"({by_scenario_per_sim_hour('simd_sdc_late_found_total')}) and {committed}",
                               "{{scenario}} found late"))
            .with_target(query("B", f"({by_scenario_per_sim_hour('simd_sdc_unrecoverable_total')}) and {committed}",
                               "{{scenario}} unrecoverable"))
            .with_target(query("C", f"({by_scenario_per_sim_hour('simd_checkpoints_lost_total')}) and {committed}",
                               "{{scenario}} checkpoints lost")))
    finds = (ts("SDCs found per simulated hour by detector",
                f"Scenarios with sdc.detectors: SDCs each detection layer found, before a checkpoint took them or "
                f"after (simd_sdc_detector_finds_total), per simulated hour of one replica over the last {W}.",
                "short", 8, 12).min(0).axis_label("per simulated hour")
             .with_target(query("A", by_scenario_per_sim_hour("simd_sdc_detector_finds_total", "scenario, detector"),
                                "{{scenario}} {{detector}}")))
    columns = ["hyper interval", "hyper window", "windows opened", "steps under hyper", "retention",
               "SDC committed", "found late", "unrecoverable", "checkpoints lost"]
    totals = merged_table("Hyper-checkpointing and committed SDCs since the start",
                          "Scenarios with checkpoint.hyper or sdc.semantics committed, counters summed over replicas "
                          "since the daemon started. Under committed SDCs, \"SDC committed\" is simd_sdc_baked_total "
                          "(SDCs kept in a checkpoint).", 8, 12, value_columns(columns)).unit("short")
    exprs = ["simd_checkpoint_hyper_interval_steps", "simd_checkpoint_hyper_window_steps",
             "simd_hyper_activations_total", "simd_hyper_steps_total", "simd_checkpoint_retention",
             "simd_sdc_baked_total", "simd_sdc_late_found_total", "simd_sdc_unrecoverable_total",
             "simd_checkpoints_lost_total"]
    marked = (f"on (scenario) (simd_checkpoint_hyper_interval_steps{sel()} or "
              f"simd_checkpoint_retention{sel()})")
    for i, name in enumerate(exprs):
        totals = totals.with_target(instant(chr(ord("A") + i), f"max by (scenario) ({name}{sel()}) and {marked}",
                                            table_format=True))
    return [db.Row("Hyper-checkpointing and late SDC detection"), share, windows, late, finds, totals]


def servers_row() -> list:
    """Servers with pools (docs/servers.md), for the scenarios that have them (simd_servers marks them):
    where the pools stand, what waiting for servers costs, the repair backlog, the cost of a productive
    GPU-hour, and the events that move servers."""
    pooled = f"on (scenario) simd_gpus_per_server{sel()}"
    pools = (ts("Pools by state",
                "Scenarios with server pools: the servers of the cluster outside the job, by state (simd_servers, "
                "summed over replicas): warm standbys, spares the job may take, spares withheld (lent to other "
                "work), in a repair that ends with the automatic stage, in one escalated to the manual stage, "
                "retired. The job's own servers (state job) are constant and left out.", "short", 8, 12).min(0)
             .axis_label("servers")
             .with_target(query("A", f'sum by (scenario, state) (simd_servers{{{c.JOB_SELECTOR},state!="job"}})',
                                "{{scenario}} {{state}}")))
    waiting = (ts("Waiting for servers: share of simulated time",
                  f"Scenarios with server pools: the share of the elapsed simulated time in the waiting bucket over "
                  f"the last {c.GOODPUT_WINDOW} (every standby and spare taken, the job waits for a server back "
                  f"from repair, or a spare's preemption). SimdJobWaitingForCapacity fires above "
                  f"{c.WAITING_SHARE:.0%} (dashed).", "percentunit", 8, 12).min(0)
               .thresholds(thresholds((None, "green"), (c.WAITING_SHARE, "red")))
               .thresholds_style(cb.GraphThresholdsStyleConfig().mode(cm.GraphThresholdsStyleMode.DASHED))
               .with_target(query("A", f"max by (scenario) ({rule(c.BUCKET_RATIO_10M, bucket='waiting')} and "
                                       f"{pooled})", "{{scenario}}")))
    backlog = (ts("Servers in repair",
                  f"Scenarios with server pools: servers in repair, both pipelines, summed over replicas "
                  f"({c.SERVERS_IN_REPAIR}). SimdRepairBacklogGrowing fires when it is more than "
                  f"{c.REPAIR_BACKLOG_FACTOR}x its value {c.REPAIR_BACKLOG_WINDOW} before (and at least "
                  f"{c.REPAIR_BACKLOG_MIN}).", "short", 8, 8).min(0).axis_label("servers")
               .with_target(query("A", c.SERVERS_IN_REPAIR, "{{scenario}}")))
    cost = (ts("GPU-hours held per productive GPU-hour",
               f"Scenarios with server pools: GPU-hours the job and its pools hold (every server but the retired "
               f"ones) per productive GPU-hour, over the goodput of the last {c.GOODPUT_WINDOW} "
               f"({c.GPU_HOURS_PER_PRODUCTIVE}). 1 is a job without pools that never loses a second; times a price "
               "per GPU-hour, the cost of a productive GPU-hour.", "none", 8, 8).min(1)
            .axis_label("GPU-h per productive GPU-h")
            .with_target(query("A", c.GPU_HOURS_PER_PRODUCTIVE, "{{scenario}}")))
    events = (ts("Replacements, repairs, misdiagnoses and retirements per simulated hour",
                 f"Scenarios with server pools, per simulated hour of one replica over the last {W}: failed servers "
                 "replaced by source (simd_server_replacements_total), repairs started by pipeline and outcome "
                 "(simd_server_repairs_total), misdiagnoses by kind (simd_server_misdiagnoses_total) and "
                 "retirements (simd_server_retirements_total).", "short", 8, 8).min(0)
              .axis_label("per simulated hour")
              .with_target(query("A", by_scenario_per_sim_hour("simd_server_replacements_total", "scenario, source"),
                                 "{{scenario}} replaced from {{source}}"))
              .with_target(query("B", by_scenario_per_sim_hour("simd_server_repairs_total",
                                                               "scenario, pipeline, outcome"),
                                 "{{scenario}} repair {{pipeline}} {{outcome}}"))
              .with_target(query("C", by_scenario_per_sim_hour("simd_server_misdiagnoses_total", "scenario, kind"),
                                 "{{scenario}} {{kind}}"))
              .with_target(query("D", by_scenario_per_sim_hour("simd_server_retirements_total"),
                                 "{{scenario}} retired")))
    return [db.Row("Servers, pools and repairs"), pools, waiting, backlog, cost, events]


def saves_row() -> list:
    """Checkpoint saves (docs/model.md, "Asynchronous saves"): how saves end, what the checkpoint bucket holds, and
    the saves still writing and the loads found corrupt."""
    outcomes = (ts("Checkpoint saves per simulated hour by tier and outcome",
                   f"Saves per simulated hour of one replica over the last {W} "
                   "(simd_checkpoint_saves_total), by tier (persistent; peer or local: a memory tier, "
                   "checkpoint.tiers) and outcome: durable (a rollback target), failed (checkpoint.save_failure or "
                   "a storage-outage drill), aborted (a rollback came while the save wrote). "
                   f"SimdCheckpointSavesFailing fires above {c.SAVE_FAILURE_SHARE:.0%} failed, "
                   "SimdNoDurableCheckpoint when none is durable.", "short", 8, 8).min(0)
                .axis_label("per simulated hour")
                .with_target(query("A", by_scenario_per_sim_hour("simd_checkpoint_saves_total",
                                                                 "scenario, tier, outcome"),
                                   "{{scenario}} {{tier}} {{outcome}}")))
    parts = (ts("Checkpoint time by part: share of simulated time",
                f"The checkpoint bucket over the last {W} by part (simd_checkpoint_cost_seconds_total over the "
                "simulated seconds): blocking (the save, or an asynchronous save's snapshot), wait (for a write: "
                "a save due while one writes, the job's end), slowdown (steps overlapping a write, "
                "checkpoint.write_slowdown).", "percentunit", 8, 8).min(0)
             .with_target(query("A", "sum by (scenario, part) (increase(simd_checkpoint_cost_seconds_total"
                                     f"{sel()}[{W}]))\n  / on (scenario) group_left\nsum by (scenario) "
                                     f"(increase(simd_scenario_simulated_seconds_total{sel()}[{W}]))",
                                "{{scenario}} {{part}}")))
    flight = (ts("Saves writing",
                 "Replicas with a save writing (simd_checkpoint_writes_in_flight, checkpoint.write_seconds): its "
                 "work is no rollback target yet. Always 0 for synchronous saves.", "short", 8, 4).min(0)
              .axis_label("replicas")
              .with_target(query("A", f"sum by (scenario) (simd_checkpoint_writes_in_flight{sel()})",
                                 "{{scenario}}")))
    corrupt = (ts("Corrupt loads per simulated hour",
                  f"Per simulated hour of one replica over the last {W}: loads that found their checkpoint corrupt "
                  "(simd_checkpoint_corrupt_loads_total, checkpoint.corrupt_on_load; SimdCheckpointLoadsCorrupt) "
                  "and recoveries that found every kept checkpoint corrupt and started the job over "
                  "(simd_checkpoint_fallbacks_to_start_total).", "short", 8, 4).min(0)
               .axis_label("per simulated hour")
               .with_target(query("A", by_scenario_per_sim_hour("simd_checkpoint_corrupt_loads_total"),
                                  "{{scenario}} corrupt loads"))
               .with_target(query("B", by_scenario_per_sim_hour("simd_checkpoint_fallbacks_to_start_total"),
                                  "{{scenario}} fallbacks to start")))
    recoveries = (ts("Recoveries per simulated hour by the tier they loaded",
                     f"With a memory tier (checkpoint.tiers), per simulated hour of one replica over the last {W}: "
                     "rollbacks by where they recovered from (simd_checkpoint_recoveries_total: the tier, "
                     "persistent, start) and the interruptions that lost the tier "
                     "(simd_checkpoint_tier_losses_total; SimdMemoryTierLost). A recovery from persistent storage "
                     "loses the work since the persistent checkpoint and pays its load.", "short", 24, 8).min(0)
                  .axis_label("per simulated hour")
                  .with_target(query("A", by_scenario_per_sim_hour("simd_checkpoint_recoveries_total",
                                                                   "scenario, tier"),
                                     "{{scenario}} from {{tier}}"))
                  .with_target(query("B", by_scenario_per_sim_hour("simd_checkpoint_tier_losses_total"),
                                     "{{scenario}} tier lost")))
    age = (ts("Work at risk: steps since the newest durable checkpoint",
              "The job steps since the newest durable checkpoint, the most of any replica "
              "(simd_checkpoint_age_steps): what a rollback to it would recompute, by tier (persistent; with a memory "
              "tier, the newest of either). It falls to 0 at each durable save and each rollback; failing saves and "
              "writes in flight let it climb past the interval (the dashed line).", "short", 8, 8).min(0)
           .axis_label("job steps")
           .with_target(query("A", f"max by (scenario, tier) (simd_checkpoint_age_steps{sel()})",
                              "{{scenario}} {{tier}}"))
           .with_target(query("B", f"max by (scenario) (simd_checkpoint_interval_steps{sel()})",
                              "{{scenario}} interval"))
           .override_by_query("B", dashed([10, 10])))
    return [db.Row("Checkpoint saves"), outcomes, parts, flight, corrupt, recoveries, age]


def recovery_row() -> list:
    """How jobs recover (docs/model.md, "Restart phases", "In-process restarts", "Crash loops", "Predicted failures
    migrated live", "Elastic replica groups"): the restart time by phase, the outcomes of in-process restarts and live
    migrations, the restarts per interruption with the crash loops' escalations, and the hard failures by the path
    that recovered them."""
    phases = (ts("Restart time by phase: share of simulated time",
                 f"The restart bucket over the last {W} by phase (simd_restart_seconds_total over the simulated "
                 "seconds): the cold restarts (one part, restart, or recovery.phases' timeline), checkpoint_load, "
                 "warm_swap, and with their mechanisms in_process, escalation (crash loops given up on) and "
                 "migration (live migrations' pauses). The parts sum to the restart bucket.", "percentunit", 8, 8)
              .min(0)
              .with_target(query("A", "sum by (scenario, phase) (increase(simd_restart_seconds_total"
                                      f"{sel()}[{W}]))\n  / on (scenario) group_left\nsum by (scenario) "
                                      f"(increase(simd_scenario_simulated_seconds_total{sel()}[{W}]))",
                                 "{{scenario}} {{phase}}")))
    outcomes = (ts("In-process restarts, live migrations and escalations per simulated hour",
                   f"Per simulated hour of one replica over the last {W}: in-process restarts "
                   "(simd_in_process_restarts_total, recovery.in_process: succeeded, or failed and followed by the "
                   "cause's restart), failures flagged ahead (simd_migrations_total, recovery.migration: migrated "
                   "to warm standbys with no rollback, or no standby there) and crash loops escalated to a manual "
                   "intervention (simd_restart_escalations_total, recovery.crash_loop; SimdCrashLoopEscalated). "
                   "Always 0 without them.", "short", 8, 8)
                .min(0).axis_label("per simulated hour")
                .with_target(query("A", by_scenario_per_sim_hour("simd_in_process_restarts_total",
                                                                 "scenario, outcome"),
                                   "{{scenario}} in process {{outcome}}"))
                .with_target(query("B", by_scenario_per_sim_hour("simd_migrations_total", "scenario, outcome"),
                                   "{{scenario}} flagged {{outcome}}"))
                .with_target(query("C", by_scenario_per_sim_hour("simd_restart_escalations_total"),
                                   "{{scenario}} escalated")))
    loops = (ts("Restarts per interruption by cause: $scenario",
                f"Over the last {W}, the causes' restarts attempted per interruption (simd_restart_attempts_total "
                "over simd_interruptions_total): 1 without crash loops, more when restarts fail and are tried again "
                "(recovery.crash_loop), less when in-process restarts recover (recovery.in_process).",
                "short", 8, 8).min(0).axis_label("restarts per interruption")
             .with_target(query("A", "sum by (cause) (increase(simd_restart_attempts_total"
                                     f"{sel(scenario='$scenario')}[{W}]))\n  / sum by (cause) "
                                     f"(increase(simd_interruptions_total{sel(scenario='$scenario')}[{W}]))",
                                "{{cause}}")))
    hangs = (ts("Time until failures are noticed (hangs): share of simulated time",
                f"The detection bucket's share of the elapsed simulated time over the last {c.GOODPUT_WINDOW}: a "
                "failure that raises an error is noticed in seconds, a hang only when a watchdog's timeout ends it "
                "(failures.causes.NAME.detection_seconds), so above a few tenths of a percent it is hangs. "
                f"SimdHangTimeHigh fires above {c.HANG_TIME_SHARE:.0%} (dashed); the hang-storm drill rehearses it.",
                "percentunit", 8, 12).min(0)
             .thresholds(thresholds((None, "green"), (c.HANG_TIME_SHARE, "red")))
             .thresholds_style(cb.GraphThresholdsStyleConfig().mode(cm.GraphThresholdsStyleMode.DASHED))
             .with_target(query("A", f"{rule(c.BUCKET_RATIO_10M, bucket='detection')} > 0", "{{scenario}}")))
    paths = (ts("Hard failures by recovery path per simulated hour",
                f"Per simulated hour of one replica over the last {W}, the hard failures by the path that recovered "
                "the job (simd_recoveries_total): restart (the cause's restart and rollback), in_process, migration "
                "(moved live before the failure) and elastic (the failing replica group dropped, the job going on "
                "without rollback: recovery.elastic; SimdRunningDegraded watches the capacity lost while groups are "
                "out). Each path 0 without its mechanism.", "short", 8, 12)
             .min(0).axis_label("per simulated hour")
             .with_target(query("A", by_scenario_per_sim_hour("simd_recoveries_total", "scenario, path"),
                                "{{scenario}} {{path}}")))
    elastic = f'on (scenario) simd_bucket_seconds_total{{{c.JOB_SELECTOR},bucket="degraded"}}'  # its scenarios
    groups = (ts("Elastic replica groups running",
                 "Scenarios with elastic replica groups (recovery.elastic): the data-parallel groups training, summed "
                 "over replicas (simd_elastic_groups_running: recovery.elastic.groups x replicas less the groups "
                 "dropped by failures and not yet rejoined after replace_seconds + heal_seconds). Falling steps are "
                 "drops, rising ones rejoins; a restart of the job (below min_groups, or a cause that does not drop "
                 "its group) brings every group back at once.", "short", 8, 12).min(0).axis_label("groups")
              .with_target(query("A", f"max by (scenario) (simd_elastic_groups_running{sel()} and {elastic})",
                                 "{{scenario}}")))
    degraded = (ts("Running degraded: share of simulated time",
                   f"Scenarios with elastic replica groups: the degraded bucket's share of the elapsed simulated time "
                   f"over the last {c.GOODPUT_WINDOW} (the capacity of the groups out, and the fault-tolerant mode's "
                   f"overhead on every step). SimdRunningDegraded fires above {c.DEGRADED_SHARE:.0%} (dashed); the "
                   "elastic-no-rejoin drill rehearses it.", "percentunit", 8, 12).min(0)
                .thresholds(thresholds((None, "green"), (c.DEGRADED_SHARE, "red")))
                .thresholds_style(cb.GraphThresholdsStyleConfig().mode(cm.GraphThresholdsStyleMode.DASHED))
                .with_target(query("A", rule(c.BUCKET_RATIO_10M, bucket="degraded"), "{{scenario}}")))
    return [db.Row("Recovery paths"), phases, outcomes, loops, hangs, paths, groups, degraded]


def stragglers_row() -> list:
    quantiles = (ts("Step time quantiles (simulated): $scenario",
                    f"Quantiles {', '.join(c.STEP_QUANTILES)} of the simulated step time over the last {W} "
                    f"({c.STEP_DURATION_QUANTILES}, from simd_step_duration_seconds_bucket, le at 1.0, 1.01, ... "
                    "2.0 x the base step time): a synchronous step lasts as long as its slowest rank.", "s", 8, 12)
                 .with_target(query("A", rule(c.STEP_DURATION_QUANTILES, scenario="$scenario"),
                                    "quantile {{quantile}}")))
    score = (ts("Slowest rank score",
                "Relative performance of the slowest rank (NVIDIA nvidia-resiliency-ext style, 1 = healthy), for the"
                f" scenarios with stragglers. SimdStragglerSlowingSteps fires below {c.STRAGGLER_SCORE} (dashed).",
                "percentunit", 8, 8).min(0).max(1)
             .thresholds(thresholds((None, "red"), (c.STRAGGLER_SCORE, "green")))
             .thresholds_style(cb.GraphThresholdsStyleConfig().mode(cm.GraphThresholdsStyleMode.DASHED))
             .with_target(query("A", f"min by (scenario) (simd_slowest_rank_score{sel()})", "{{scenario}}")))
    replaced = (single("Stragglers replaced: $scenario",
                       "Slow ranks the median detector flagged and replaced since the daemon started (summed over "
                       "replicas).", "short", 8, 4, names=False)
                .with_target(instant("A", f'max(simd_stragglers_replaced_total{sel(scenario="$scenario")})',
                                     "replaced")))
    return [db.Row("Stragglers"), quantiles, score, replaced]


# The sweep chart's columns, in query order (A, B, ...): the x fields end in _steps.
SWEEP_COLUMNS = ["interval_steps", "simulated", "analytic", "young_steps", "daly_steps"]
MARKERS = {"young_marker": ("Young optimum", "purple"), "daly_marker": ("Daly optimum", "orange")}
X_FIELDS = r"^(interval|young|daly)_steps$"
Y_FIELDS = f"^(simulated|analytic|{'|'.join(MARKERS)})$"


def sweep_queries(refs: int) -> list[prom.Dataquery]:
    exprs = [f"simd_checkpoint_interval_steps{sel()}", f"simd_effective_utilization_ratio{sel()}",
             f"simd_analytic_efficiency_ratio{sel()}",
             f'simd_checkpoint_interval_optimal_steps{sel(method="young")}',
             f'simd_checkpoint_interval_optimal_steps{sel(method="daly")}'][:refs]
    return [instant(chr(ord("A") + i), in_sweep(e), table_format=True) for i, e in enumerate(exprs)]


def xy_series(name: str, x: str, y: str) -> xychart.XYSeriesConfig:
    def by_name(field: str) -> xychart.MatcherConfig:
        return xychart.MatcherConfig().id("byName").options(field)
    return (xychart.XYSeriesConfig().name(xychart.XychartXYSeriesConfigName().fixed(name))
            .frame(xychart.XychartXYSeriesConfigFrame().matcher(xychart.MatcherConfig().id("byIndex").options(0)))
            .x(xychart.XychartXYSeriesConfigX().matcher(by_name(x)))
            .y(xychart.XychartXYSeriesConfigY().matcher(by_name(y))))


def utilization_against_interval() -> xychart.Panel:
    """The headline chart. One point per sweep scenario: instant table queries joined on the scenario
    (merge), sorted by interval. The Young and Daly markers are vertical lines: their x column is the same
    optimum on every row, their y column a copy of the analytic curve made by a transformation (no second
    query of it).

    Axes: utilization (y) linear from 0 to 1 in percent, because differences of a few points are what the
    chart is for and a log scale squeezes them; interval (x) log2, because the sweep spans 5 to 1000 steps
    (200x) and its points are nearly geometric, so on a linear axis the rise and the optimum (5..180) would
    take the left sixth of the chart; log2 spaces them evenly with a tick per doubling.
    """
    transformations = [
        dm.DataTransformerConfig(id_val="merge", options={}),
        organize(value_columns(SWEEP_COLUMNS), ["Time", "scenario"]),
        *(dm.DataTransformerConfig(id_val="calculateField", options={
            "mode": "reduceRow", "reduce": {"include": ["analytic"], "reducer": "max"}, "alias": marker,
            "replaceFields": False, "timeSeries": False}) for marker in MARKERS),
        sort_by_field("interval_steps"),
    ]
    # Each axis is configured on its own fields: an XY chart's x axis takes its scale, limits and unit from
    # the x field, so defaults shared by both (min/max 0..1) would squeeze the intervals into 0..1 steps.
    y_axis = [dm.DynamicConfigValue(id_val="unit", value="percentunit"),
              dm.DynamicConfigValue(id_val="min", value=0), dm.DynamicConfigValue(id_val="max", value=1),
              dm.DynamicConfigValue(id_val="custom.axisLabel", value="effective utilization")]
    x_axis = [dm.DynamicConfigValue(id_val="unit", value="none"),
              dm.DynamicConfigValue(id_val="decimals", value=0),
              dm.DynamicConfigValue(id_val="custom.scaleDistribution", value={"type": "log", "log": 2}),
              dm.DynamicConfigValue(id_val="custom.axisLabel", value="checkpoint interval (steps)")]
    panel = (xychart.Panel().title("Effective utilization against checkpoint interval: sweep $sweep")
             .description("One point per sweep scenario (instant queries joined on the scenario label, sorted by "
                          "interval): the simulated effective utilization (all replicas, since the daemon started) "
                          "and seed 001's first-order model (simd_analytic_efficiency_ratio, dashed). The two "
                          "vertical lines mark the analytic optima of simd_checkpoint_interval_optimal_steps: Young "
                          "sqrt(2CM) and Daly. The interval axis is log2 (the sweep spans 5 to 1000 steps).")
             .datasource(DATASOURCE).height(12).span(16).targets(sweep_queries(len(SWEEP_COLUMNS)))
             .transformations(transformations)
             .scale_distribution(cb.ScaleDistributionConfig().type(cm.ScaleDistribution.LINEAR))
             .axis_placement(cm.AxisPlacement.AUTO)
             .show(xm.XYShowMode.POINTS_AND_LINES).point_size(xychart.XychartFieldConfigPointSize().fixed(7))
             .line_width(2).color_scheme(db.FieldColor().mode(dm.FieldColorModeId.PALETTE_CLASSIC))
             .mapping(xm.SeriesMapping.MANUAL)
             .series([xy_series("simulated utilization", "interval_steps", "simulated"),
                      xy_series("analytic model", "interval_steps", "analytic"),
                      *(xy_series(name, marker.replace("_marker", "_steps"), marker)
                        for marker, (name, _) in MARKERS.items())])
             .legend(legend())
             .tooltip(cb.VizTooltipOptions().mode(cm.TooltipDisplayMode.SINGLE).sort(cm.SortOrder.NONE))
             .override_by_regexp(Y_FIELDS, y_axis)
             .override_by_regexp(X_FIELDS, x_axis)
             .override_by_name("analytic", [
                 dm.DynamicConfigValue(id_val="custom.show", value=xm.XYShowMode.LINES),
                 dm.DynamicConfigValue(id_val="custom.lineStyle", value={"fill": "dash", "dash": [10, 10]})]))
    for marker, (_, color) in MARKERS.items():
        panel = panel.override_by_name(marker, [
            dm.DynamicConfigValue(id_val="custom.show", value=xm.XYShowMode.LINES),
            dm.DynamicConfigValue(id_val="custom.lineStyle", value={"fill": "dash", "dash": [4, 4]}),
            dm.DynamicConfigValue(id_val="color", value={"mode": "fixed", "fixedColor": color})])
    return panel


def checkpoint_row() -> list:
    points = merged_table("Sweep points: $sweep", "The points of the chart on the left, ordered by interval.", 12, 8,
                          value_columns(["interval (steps)", "simulated utilization", "analytic model"]),
                          sort_by="interval (steps)")
    for q in sweep_queries(3):
        points = points.with_target(q)
    percent = [dm.DynamicConfigValue(id_val="unit", value="percentunit"),
               dm.DynamicConfigValue(id_val="decimals", value=1)]
    points = (points.unit("none").override_by_name("simulated utilization", percent)
              .override_by_name("analytic model", percent))
    configured = (barchart.Panel().title("Configured checkpoint interval against the optimum (steps)")
                  .description("Every scenario outside sweeps: the configured interval "
                               "(simd_checkpoint_interval_steps) next to Young's and Daly's optima.")
                  .datasource(DATASOURCE).height(8).span(12).unit("short").x_field("scenario")
                  .show_value(cm.VisibilityMode.AUTO).stacking(cm.StackingMode.NONE).legend(legend())
                  .transformations([dm.DataTransformerConfig(id_val="merge", options={}),
                                    organize(value_columns(["configured", "Young optimum", "Daly optimum"]),
                                             ["Time"])])
                  .with_target(instant("A", outside_sweeps(f"simd_checkpoint_interval_steps{sel()}"),
                                       table_format=True))
                  .with_target(instant("B", outside_sweeps(
                      f'simd_checkpoint_interval_optimal_steps{sel(method="young")}'), table_format=True))
                  .with_target(instant("C", outside_sweeps(
                      f'simd_checkpoint_interval_optimal_steps{sel(method="daly")}'), table_format=True)))
    f = c.INTERVAL_FACTOR
    ratio = (single("Interval over Young's optimum",
                    f"Configured checkpoint interval over Young's optimum ({c.INTERVAL_OVER_YOUNG}), every scenario "
                    f"outside sweeps. SimdCheckpointIntervalFarFromOptimum fires beyond {f}x or below 1/{f} "
                    "(naive is far on purpose and opts out).", "none", 8, 6,
                    ((None, "red"), (1 / f, "green"), (f, "red")))
             .decimals(2)
             .with_target(instant("A", f'{c.INTERVAL_OVER_YOUNG} and on (scenario) simd_scenario_info{sel(sweep="")}',
                                  "{{scenario}}")))
    optimum = (single("Analytic optimum interval: sweep $sweep",
                      "Young (sqrt(2 C M)) and Daly (2006) optimal checkpoint intervals, in steps, of the sweep's "
                      "job.", "short", 8, 6, ((None, "blue"),))
               .with_target(instant("A", f'max by (method) (simd_checkpoint_interval_optimal_steps{sel()} '
                                         f'and on (scenario) simd_scenario_info{sel(sweep="$sweep")})', "{{method}}")))
    return [db.Row("Checkpoint interval"), utilization_against_interval(), points, configured, ratio, optimum]


def daemon_row() -> list:
    up = (single("simd up", f"Prometheus's scrape of simd (up{sel()}); SimdDown fires after a minute at 0.",
                 "none", 6, 3, ((None, "red"), (1, "green")), names=False)
          .color_scheme(db.FieldColor().mode(dm.FieldColorModeId.THRESHOLDS))
          .with_target(instant("A", f"min(up{sel()})", "up")))
    since = (single("Time since last tick",
                    "Wall seconds since simd completed a tick (time() - simd_last_tick_timestamp_seconds); "
                    f"SimdTicksStalled fires beyond {c.STALL_SECONDS} s.", "s", 6, 4,
                    ((None, "green"), (c.STALL_SECONDS / 3, "orange"), (c.STALL_SECONDS, "red")), names=False)
             .color_scheme(db.FieldColor().mode(dm.FieldColorModeId.THRESHOLDS))
             .with_target(instant("A", f"time() - max(simd_last_tick_timestamp_seconds{sel()})", "since last tick")))
    clock = (single("Speedup and simulated time",
                    "Simulated seconds per wall second (simd_speedup) and the simulated clock "
                    "(simd_simulated_seconds_total).", "none", 6, 5)
             .with_target(instant("A", f"max(simd_speedup{sel()})", "speedup"))
             .with_target(instant("B", f"max(simd_simulated_seconds_total{sel()})", "simulated time"))
             .override_by_query("B", [dm.DynamicConfigValue(id_val="unit", value="s")]))
    ticks = (ts("Ticks per second (wall)",
                "Completed ticks per wall second: the daemon's own health is wall time, so rate() is right here.",
                "short", 6, 4).min(0)
             .with_target(query("A", f"sum(rate(simd_ticks_total{sel()}[1m]))", "ticks/s")))
    duration = (ts("Tick duration (wall)",
                   "Quantiles of the wall time a tick takes (simd_tick_duration_seconds_bucket).",
                   "s", 6, 4).min(0)
                .with_target(query("A", "histogram_quantile(0.5, sum by (le) "
                                        f"(rate(simd_tick_duration_seconds_bucket{sel()}[1m])))", "p50"))
                .with_target(query("B", "histogram_quantile(0.99, sum by (le) "
                                        f"(rate(simd_tick_duration_seconds_bucket{sel()}[1m])))", "p99")))
    overruns = (ts("Tick overruns",
                   f"Ticks slower than tick_seconds (slow) and scheduled ticks that did not run (missed), last {W}.",
                   "short", 6, 4).min(0).draw_style(cm.GraphDrawStyle.BARS).fill_opacity(80)
                .with_target(query("A", f"sum by (kind) (increase(simd_tick_overruns_total{sel()}[{W}]))", "{{kind}}")))
    build = (table.Panel().title("Build").description("simd_build_info: the version of simd and of the Python "
                                                       "running it.")
             .datasource(DATASOURCE).height(6).span(5)
             .transformations([organize({}, ["Time", "Value"])])
             .with_target(instant("A", f"max by (version, python) (simd_build_info{sel()})", table_format=True)))
    ready = (single("simd ready", f"simd_ready{sel()}: 1 once the engine's kernels are compiled (or loaded from the "
                    "cache) and every scenario has reached the shared clock (GET /-/ready); 0 meanwhile, as on a "
                    "machine's first start. SimdNotReady fires after 5 minutes at 0.", "none", 6, 3,
                    ((None, "red"), (1, "green")), names=False)
             .color_scheme(db.FieldColor().mode(dm.FieldColorModeId.THRESHOLDS))
             .with_target(instant("A", f"min(simd_ready{sel()})", "ready")))
    replicas = (single("Replicas: $scenario", "Independent replicas whose counters the scenario's metrics sum "
                                              "(simd_scenario_replicas).", "short", 6, 4, names=False)
                .with_target(instant("A", f'max(simd_scenario_replicas{sel(scenario="$scenario")})', "replicas")))
    # prometheus-client's process collector (simd/metrics/collector.py): wall-time counters, so rate() is right
    cpu = (ts("Daemon CPU (wall)", "CPU seconds the simd process uses per wall second (rate of "
                                   "process_cpu_seconds_total): 100% is one core.", "percentunit", 6, 6).min(0)
           .with_target(query("A", f"sum(rate(process_cpu_seconds_total{sel()}[1m]))", "CPU")))
    memory = (ts("Daemon memory", "Resident memory of the simd process (process_resident_memory_bytes).",
                 "bytes", 6, 6).min(0)
              .with_target(query("A", f"max(process_resident_memory_bytes{sel()})", "resident")))
    return [db.Row("Daemon"), up, since, clock, ticks, duration, overruns, build, ready, replicas, cpu, memory]


# --- the dashboard ----------------------------------------------------------------------------------------
class _PromAnnotation(dm.AnnotationQuery):
    """An annotation query with the Prometheus data source's options (step, title and text format, tag
    keys), which Grafana's dashboard schema has (../shared/schemas) and the SDK's AnnotationQuery type lacks."""

    def __init__(self, prom_options: dict[str, object], **kwargs) -> None:
        super().__init__(**kwargs)
        self.prom_options = prom_options

    def to_json(self) -> dict[str, object]:
        return super().to_json() | self.prom_options


class _Built:
    """A finished model in the builder protocol (``build()``), for the dashboard builder's adders."""

    def __init__(self, model) -> None:
        self.model = model

    def build(self):
        return self.model


def drill_annotation() -> _Built:
    return _Built(_PromAnnotation(
        {"step": "15s", "titleFormat": "drill {{drill}}", "textFormat": "drill {{drill}} active",
         "tagKeys": "drill", "useValueForTime": False},
        name="Drills", datasource=DATASOURCE, enable=True, hide=False, icon_color="orange",
        expr=f"max by (drill) (simd_drill_active{sel()}) == 1"))


def default_sweep(path: Path = DEFAULT_CONFIG) -> str:
    sweeps = yaml.safe_load(path.read_text()).get("sweeps") or []
    if not sweeps:
        raise ValueError(f"{path}: no sweep, so the dashboard's $sweep has no default")
    return sweeps[0]["name"]


def variable(name: str, selector: str, default: str) -> db.QueryVariable:
    q = f"label_values(simd_scenario_info{selector}, {name})"
    return (db.QueryVariable(name).label(name).datasource(DATASOURCE).query(q)
            .current(dm.VariableOption(text=default, value=default))
            .refresh(dm.VariableRefresh.ON_TIME_RANGE_CHANGED).sort(dm.VariableSort.ALPHABETICAL_ASC)
            .multi(False).include_all(False))


def _versioned(panel):
    """The SDK's panel builders have no pluginVersion setter (only its generic dashboard.Panel has one):
    set it on the built model, which build() returns again to the dashboard builder."""
    model = panel.build()
    if model.type_val != "row":
        model.plugin_version = PLUGIN_VERSION
    return panel


def dashboard() -> dict:
    """The dashboard as the JSON object Grafana provisions."""
    d = (db.Dashboard("simd: training-job reliability").uid(UID)
         .description("Goodput, badput, interruptions, SDC and stragglers of the simulated training jobs, the "
                      "checkpoint-interval sweep against the analytic optimum, and the daemon's health. Rates are "
                      "per simulated hour (increase over increase of simulated seconds), so they read the same at "
                      "any speedup.")
         .tags(["simd", "reliability", "goodput"]).readonly().tooltip(dm.DashboardCursorSync.CROSSHAIR)
         .timezone("browser").time("now-30m", "now").refresh("10s").version(1)
         .with_variable(variable("scenario", sel(sweep=""), DEFAULT_SCENARIO))
         .with_variable(variable("sweep", f'{{{c.JOB_SELECTOR},sweep!=""}}', default_sweep()))
         .annotation(drill_annotation()))
    for row in (goodput_row(), badput_row(), events_row(), shadow_fleet_row(), hyper_late_sdc_row(),
                servers_row(), saves_row(), recovery_row(), stragglers_row(), checkpoint_row(), daemon_row()):
        d = d.with_row(row[0])
        for panel in row[1:]:
            d = d.with_panel(_versioned(panel))
    model = d.build()
    model.schema_version = SCHEMA_VERSION
    for i, panel in enumerate(model.panels, start=1):
        panel.id_val = i
    return json.loads(json.dumps(model, cls=JSONEncoder))


def field_config(panel: dict, field: str = "", ref_id: str | None = None) -> dict:
    """How Grafana resolves the config of one field of a generated panel (a dict): the defaults with every
    matching override applied in order ("custom.x" sets custom["x"]). ``field`` is the field's display
    name, ``ref_id`` the query it came from. The tests and scripts/render_panels.py read panels with it."""
    cfg = json.loads(json.dumps(panel["fieldConfig"]["defaults"]))
    for o in panel["fieldConfig"]["overrides"]:
        kind, opt = o["matcher"]["id"], o["matcher"].get("options")
        if kind == "byName":
            hit = field == opt
        elif kind == "byRegexp":
            hit = re.search(opt, field) is not None
        elif kind == "byFrameRefID":
            hit = ref_id == opt
        else:
            raise ValueError(f"{panel.get('title')}: matcher {kind!r} is not one field_config resolves")
        for prop in o["properties"] if hit else ():
            if prop["id"].startswith("custom."):
                cfg.setdefault("custom", {})[prop["id"].removeprefix("custom.")] = prop["value"]
            else:
                cfg[prop["id"]] = prop["value"]
    return cfg


def render(d: dict) -> str:
    return json.dumps(d, indent=2, ensure_ascii=False) + "\n"


def write(path: Path = PATH) -> Path:
    """Write the dashboard to ``path`` (default grafana/dashboards/simd.json)."""
    path.write_text(render(dashboard()))
    return path
