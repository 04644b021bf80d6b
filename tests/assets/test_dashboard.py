"""The Grafana assets (docs/design.md 3.9). grafana/dashboards/simd.json is generated (mixin/dashboard.py, with
grafana-foundation-sdk) and committed: the committed file must equal what the code generates. It validates
against Grafana's dashboard JSON schema (../shared/schemas, from grafana/grafana-foundation-sdk), every panel
carries a pluginVersion of at least 11.1 (below it Grafana migrates the XY chart's options destructively),
the XY chart's options round-trip through the SDK's XY chart types, and every query parses with promtool.
The rest checks what a person sees: axis scales and units, the series each panel shows, the dashed
configured rates, the variables' defaults. (Running every panel query against a real Prometheus scraping a
real daemon is the end-to-end test's job.)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import xychart as sdk_xychart

from mixin import config
from mixin import dashboard as generator
from mixin.dashboard import X_FIELDS, field_config

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = Path(__file__).resolve().parents[3] / "shared" / "schemas" / "grafana-dashboard.jsonschema.json"
DASHBOARD = ROOT / "grafana" / "dashboards" / "simd.json"
DATASOURCES = ROOT / "grafana" / "provisioning" / "datasources"
PROVIDERS = ROOT / "grafana" / "provisioning" / "dashboards"
UID = "simd-overview"
DS_UID = "simd-prometheus"
# Grafana >= 11.1 reads the XY chart's current options format; below, it migrates them from the old one.
MIN_PLUGIN_VERSION = (11, 1, 0)


def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text())


def panels(d: dict | None = None) -> list[dict]:
    """Every panel that is not a row, rows' nested panels included."""
    out = []
    for p in (d or dashboard())["panels"]:
        if p["type"] == "row":
            out.extend(p.get("panels", []))
        else:
            out.append(p)
    return out


def panel(title_start: str) -> dict:
    (p,) = [p for p in panels() if p["title"].startswith(title_start)]
    return p


def variables() -> dict[str, dict]:
    return {v["name"]: v for v in dashboard()["templating"]["list"]}


def substitute(expr: str) -> str:
    """The expression as Grafana sends it with the variables at their defaults."""
    for name, v in variables().items():
        expr = expr.replace(f"${{{name}}}", f"${name}").replace(f"${name}", v["current"]["value"])
    return expr


def all_exprs(d: dict | None = None) -> list[tuple[str, str]]:
    d = d or dashboard()
    out = [(p["title"], t["expr"]) for p in panels(d) for t in p["targets"]]
    return out + [(f"annotation {a['name']}", a["expr"]) for a in d["annotations"]["list"] if a.get("expr")]


def require(path: Path | None = None, tool: str | None = None) -> str | None:
    """Skip (fail in CI) when a file or tool is missing."""
    found = shutil.which(tool) if tool else (path if path.is_file() else None)
    if not found:
        msg = f"{tool} not found on PATH (run scripts/fetch-tools.sh)" if tool else \
            f"{path} is missing (../shared beside the clone)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    return found


# --- generated, valid, not migrated -----------------------------------------------------------------------
def test_committed_dashboard_is_the_generated_one():
    assert DASHBOARD.read_text() == generator.render(generator.dashboard()), \
        "grafana/dashboards/simd.json differs from mixin/dashboard.py's output: run `python -m mixin`"


def test_dashboard_validates_against_grafanas_schema():
    """Grafana's schema, with one correction: the generator of the schema turned CUE's "any" (``_``) into
    "object" for a matcher's options and an override property's value (dashboard.cue declares
    ``options?: _`` and ``value?: _``). Grafana's own matchers take a string (byName, byRegexp,
    byFrameRefID) and properties take strings and numbers (unit, decimals), as the SDK writes them."""
    require(SCHEMA)
    schema = json.loads(SCHEMA.read_text())
    jsonschema.validators.validator_for(schema).check_schema(schema)
    defs = schema["definitions"]
    assert defs["MatcherConfig"]["properties"]["options"]["type"] == "object"  # the correction still needed
    defs["MatcherConfig"]["properties"]["options"] = {}
    defs["DynamicConfigValue"]["properties"]["value"] = {}
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(dashboard()), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message[:300]}" for e in errors)


def version(text: str) -> tuple[int, ...]:
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", text)
    assert m, f"not a version: {text!r}"
    return tuple(int(g) for g in m.groups())


def compose_grafana_version() -> tuple[int, ...]:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return version(compose["services"]["grafana"]["image"].split(":")[1])


def plugin_version_problems(d: dict) -> list[str]:
    """Panels without a pluginVersion, below 11.1 (Grafana would migrate their XY chart options from the
    pre-11.1 format and lose the series) or above the stack's Grafana (a version that never saved them)."""
    stack = compose_grafana_version()
    out = []
    for p in panels(d):
        if "pluginVersion" not in p:
            out.append(f"{p['title']}: no pluginVersion")
        elif not MIN_PLUGIN_VERSION <= version(p["pluginVersion"]) <= stack:
            out.append(f"{p['title']}: pluginVersion {p['pluginVersion']}")
    return out


def test_every_panel_carries_a_plugin_version_from_11_1_to_the_stacks_grafana():
    assert not plugin_version_problems(dashboard())


def test_plugin_version_check_catches_old_and_missing_versions():
    d = dashboard()
    first, second = panels(d)[:2]
    first["pluginVersion"] = "11.0.9"
    del second["pluginVersion"]
    assert plugin_version_problems(d) == [f"{first['title']}: pluginVersion 11.0.9",
                                          f"{second['title']}: no pluginVersion"]


def xy() -> dict:
    (p,) = [p for p in panels() if p["type"] == "xychart"]
    return p


def encode(obj) -> object:
    return json.loads(json.dumps(obj, cls=JSONEncoder))


def xychart_type_problems(p: dict) -> list[str]:
    """The XY chart's options and field config, read into grafana-foundation-sdk's xychart types and written
    back, must come out unchanged: a key the types do not know (the pre-11.1 ``seriesMapping``/``dims``) is
    dropped, a value of the wrong shape (a series' ``x`` as a plain string) is replaced, and a required
    option left out comes back with the types' default."""
    out = []
    if encode(sdk_xychart.Options.from_json(p["options"])) != p["options"]:
        out.append("options")
    custom = p["fieldConfig"]["defaults"]["custom"]
    if encode(sdk_xychart.FieldConfig.from_json(custom)) != custom:
        out.append("fieldConfig.defaults.custom")
    for o in p["fieldConfig"]["overrides"]:
        for prop in o["properties"]:
            if prop["id"].startswith("custom."):
                key = prop["id"].removeprefix("custom.")
                if encode(sdk_xychart.FieldConfig.from_json({key: prop["value"]})).get(key) != prop["value"]:
                    out.append(f"override {o['matcher']['options']} {prop['id']}")
    return out


def test_xychart_options_round_trip_through_the_sdks_types():
    assert not xychart_type_problems(xy())


def test_xychart_type_check_catches_the_old_format_and_unknown_keys():
    p = xy()
    old = json.loads(json.dumps(p))
    old["options"] = {"seriesMapping": "manual", "dims": {"frame": 0},
                      "series": [{"x": "interval_steps", "y": "simulated"}], "legend": p["options"]["legend"],
                      "tooltip": p["options"]["tooltip"]}
    old["fieldConfig"]["defaults"]["custom"]["pointColor"] = {"fixed": "red"}  # not an XY chart v2 option
    (x_override,) = [o for o in old["fieldConfig"]["overrides"] if o["matcher"]["options"] == X_FIELDS]
    x_override["properties"].append({"id": "custom.showPoints", "value": "never"})  # a timeseries option
    assert xychart_type_problems(old) == ["options", "fieldConfig.defaults.custom",
                                          f"override {X_FIELDS} custom.showPoints"]


# --- what a person sees: the headline chart --------------------------------------------------------------
def columns(p: dict) -> set[str]:
    """The field names after the panel's transformations (renamed value columns, calculated fields)."""
    out = set()
    for t in p["transformations"]:
        if t["id"] == "organize":
            out |= set(t["options"]["renameByName"].values())
        if t["id"] == "calculateField":
            out.add(t["options"]["alias"])
    return out


def test_utilization_against_checkpoint_interval_series():
    """One point per sweep scenario: instant table queries of the sweep joined on the scenario (merge),
    renamed, sorted numerically by interval; the simulated utilization, the analytic curve and the Young and
    Daly optima as vertical lines whose y column is computed from the analytic one (no duplicated query)."""
    p = xy()
    exprs = [t["expr"] for t in p["targets"]]
    assert len(exprs) == len(set(exprs)), "a query is repeated"
    assert all(t.get("instant") and t.get("format") == "table" for t in p["targets"])
    assert all('sweep="$sweep"' in e for e in exprs)
    for name in ("simd_effective_utilization_ratio", "simd_checkpoint_interval_steps",
                 "simd_analytic_efficiency_ratio", 'simd_checkpoint_interval_optimal_steps{job="simd",method="young"}',
                 'simd_checkpoint_interval_optimal_steps{job="simd",method="daly"}'):
        assert sum(name in e for e in exprs) == 1, name
    assert not any(re.search(r"\d\s*\*", e) for e in exprs), "ratios are shown as they are (unit percentunit)"
    ids = [t["id"] for t in p["transformations"]]
    assert ids[0] == "merge" and ids[-1] == "sortBy"
    (organize,) = [t for t in p["transformations"] if t["id"] == "organize"]
    assert set(organize["options"]["renameByName"]) == {f"Value #{t['refId']}" for t in p["targets"]}
    (sort,) = p["transformations"][-1]["options"]["sort"]
    assert sort == {"field": "interval_steps", "desc": False}
    for t in p["transformations"]:
        if t["id"] == "calculateField":
            assert t["options"]["reduce"]["include"] == ["analytic"]
    opts = p["options"]
    assert opts["mapping"] == "manual"
    series = {s["name"]["fixed"]: (s["x"]["matcher"]["options"], s["y"]["matcher"]["options"]) for s in opts["series"]}
    assert series == {"simulated utilization": ("interval_steps", "simulated"),
                      "analytic model": ("interval_steps", "analytic"),
                      "Young optimum": ("young_steps", "young_marker"),
                      "Daly optimum": ("daly_steps", "daly_marker")}
    assert {f for xy_ in series.values() for f in xy_} <= columns(p)


def test_utilization_against_checkpoint_interval_axes():
    """Utilization: one linear axis from 0 to 1 in percent for every y field. Interval: log2 for the x fields
    (all three, so they share one axis), in plain steps, without the y axis's limits."""
    p = xy()
    ys = {s["y"]["matcher"]["options"] for s in p["options"]["series"]}
    xs = {s["x"]["matcher"]["options"] for s in p["options"]["series"]}
    for f in ys:
        cfg = field_config(p, f)
        assert cfg["unit"] == "percentunit" and cfg["min"] == 0 and cfg["max"] == 1, f
        assert cfg["custom"]["scaleDistribution"] == {"type": "linear"}, f
    for f in xs:
        cfg = field_config(p, f)
        assert cfg["custom"]["scaleDistribution"] == {"type": "log", "log": 2}, f
        assert cfg["unit"] == "none" and cfg["custom"]["axisLabel"] == "checkpoint interval (steps)", f
        assert "min" not in cfg and "max" not in cfg, f"{f}: the x axis must hold 5..1000 steps"
    assert field_config(p, "analytic")["custom"]["lineStyle"]["fill"] == "dash"
    marker_colors = {field_config(p, f)["color"]["fixedColor"] for f in ("young_marker", "daly_marker")}
    assert len(marker_colors) == 2


def test_sweep_points_table_in_percent():
    p = panel("Sweep points")
    assert not any(re.search(r"\d\s*\*", t["expr"]) for t in p["targets"])
    assert field_config(p, "simulated utilization")["unit"] == "percentunit"
    assert field_config(p, "analytic model")["unit"] == "percentunit"
    assert field_config(p, "interval (steps)")["unit"] == "none"


# --- what a person sees: the other panels ----------------------------------------------------------------
RATIO = re.compile(r"_ratio\b|:ratio_|simd_slowest_rank_score")


def test_every_timeseries_has_a_unit_and_ratios_are_percent():
    for p in [p for p in panels() if p["type"] == "timeseries"]:
        unit = p["fieldConfig"]["defaults"].get("unit")
        assert unit, f"{p['title']}: no unit"
        if all(RATIO.search(t["expr"]) for t in p["targets"]):
            assert unit == "percentunit" and p["fieldConfig"]["defaults"]["min"] == 0, p["title"]
        for t in p["targets"]:
            if "per_sim_hour" in t["expr"] or "* 3600" in t["expr"]:
                assert p["fieldConfig"]["defaults"]["custom"]["axisLabel"] == "per simulated hour", p["title"]


def legends(p: dict) -> dict[str, str]:
    return {t.get("legendFormat", ""): t["expr"] for t in p["targets"]}


def dashed_refs(p: dict) -> set[str]:
    return {o["matcher"]["options"] for o in p["fieldConfig"]["overrides"]
            if o["matcher"]["id"] == "byFrameRefID" and any(
                prop["id"] == "custom.lineStyle" and prop["value"]["fill"] == "dash" for prop in o["properties"])}


def test_interruptions_panel_shows_causes_total_and_the_dashed_configured_rate():
    """README: during failure-storm the interruption panel of llama3-16k climbs far above its dashed
    configured rate."""
    p = panel("Interruptions per simulated hour by cause")
    lg = legends(p)
    # measured per hour of compute, the unit of the configured rate (not per elapsed hour)
    assert "simd_compute_seconds_total" in lg["{{cause}}"] and "simd_interruptions_total" in lg["{{cause}}"]
    assert lg["all causes"] == f'{config.INTERRUPTIONS_PER_COMPUTE_HOUR}{{scenario="$scenario"}}'
    assert "simd_scenario_simulated_seconds_total" not in lg["{{cause}}"]
    assert "simd_expected_interruptions_per_hour" in lg["configured rate"]
    threshold = lg[f"alert threshold ({config.RATE_FACTOR}x configured)"]
    assert threshold == f"{config.RATE_FACTOR} * {lg['configured rate']}"
    (configured,) = [t["refId"] for t in p["targets"] if t["legendFormat"] == "configured rate"]
    assert configured in dashed_refs(p)
    assert field_config(p, ref_id=configured)["custom"]["fillOpacity"] == 0
    measured = [t["refId"] for t in p["targets"]
                if "per_compute_hour" in t["expr"] or "simd_compute_seconds" in t["expr"]]
    assert measured and not set(measured) & dashed_refs(p)


def test_sdc_panel_and_goodput_targets_are_dashed_too():
    sdc = panel("SDC detected vs baked in")
    lg = legends(sdc)
    assert set(lg) == {"onsets", "detected", "baked in", "configured rate"}
    # per hour of compute, as the dashed configured rate and SimdSDCDetectionsSpike
    assert lg["onsets"].startswith(config.SDC_ONSETS_PER_COMPUTE_HOUR)
    assert lg["detected"].startswith(config.SDC_DETECTED_PER_COMPUTE_HOUR)
    assert "simd_compute_seconds_total" in lg["baked in"] and "simd_sdc_baked_total" in lg["baked in"]
    (ref,) = [t["refId"] for t in sdc["targets"] if "simd_expected_sdc_per_hour" in t["expr"]]
    assert dashed_refs(sdc) == {ref}
    util = panel("Effective utilization by scenario")
    (ref,) = [t["refId"] for t in util["targets"] if "simd_goodput_target_ratio" in t["expr"]]
    assert dashed_refs(util) == {ref}


def test_panels_use_the_recording_rules():
    """Every recording rule of mixin/config.py is shown by a panel, and every rule a panel queries is one the
    shipped rules record."""
    used = " ".join(e for _, e in all_exprs())
    # (the per_sim_hour rates are recorded for queries per elapsed hour; the panels compare like with like,
    # per compute hour)
    names = [config.GOODPUT_10M, config.BUCKET_RATIO_10M, config.INTERRUPTIONS_PER_COMPUTE_HOUR,
             config.SDC_ONSETS_PER_COMPUTE_HOUR, config.SDC_DETECTED_PER_COMPUTE_HOUR,
             config.STEP_DURATION_QUANTILES, config.INTERVAL_OVER_YOUNG]
    for name in names:
        assert name in used, name
    recorded = {r["record"] for f in (ROOT / "prometheus" / "rules").glob("*.yml")
                for g in yaml.safe_load(f.read_text())["groups"] for r in g["rules"] if "record" in r}
    queried = set(re.findall(r"\b[a-z_]+:[a-z0-9_]+:[a-z0-9_]+\b", used))
    assert queried <= recorded, queried - recorded


def test_step_time_quantiles_are_one_query_by_quantile_label():
    p = panel("Step time quantiles")
    (t,) = p["targets"]
    assert t["expr"] == f'{config.STEP_DURATION_QUANTILES}{{scenario="$scenario"}}'
    assert "{{quantile}}" in t["legendFormat"]
    assert p["fieldConfig"]["defaults"]["unit"] == "s"


def test_every_raw_selector_carries_the_job_selector():
    """Every simd_* and process_* series and up{} is selected with the mixin's job selector; recording rules
    (level:metric:operation, aggregated to the scenario) carry no job label and are selected by scenario."""
    metric = re.compile(r"(?<![\w:])(simd_[a-z0-9_]+|process_[a-z0-9_]+|up)\b(\{[^}]*\})?")
    for title, expr in all_exprs():
        for m in metric.finditer(expr):
            assert m.group(2) and config.JOB_SELECTOR in m.group(2), f"{title}: {m.group(0)}"


def test_queries_never_rate_simulated_counters():
    """Per-scenario counters advance in simulated time: rate() would scale with the speedup. Only the
    daemon's own wall-time counters may be rate()d."""
    for title, expr in all_exprs():
        for m in re.finditer(r"\brate\((\w+)", expr):
            assert m.group(1) in {"simd_ticks_total", "simd_tick_duration_seconds_bucket",
                                  "process_cpu_seconds_total"}, title


def test_no_panel_repeats_a_query():
    for p in panels():
        exprs = [t["expr"] for t in p["targets"]]
        assert len(exprs) == len(set(exprs)), p["title"]


# --- variables, annotation, data source -------------------------------------------------------------------
def default_config() -> dict:
    return yaml.safe_load((ROOT / "simd" / "scenario" / "default.yaml").read_text())


def test_scenario_variable_lists_scenarios_outside_sweeps_and_defaults_to_one():
    v = variables()["scenario"]
    assert v["type"] == "query" and v["datasource"]["uid"] == DS_UID
    assert v["query"] == f'label_values(simd_scenario_info{{{config.JOB_SELECTOR},sweep=""}}, scenario)'
    names = {s["name"] for s in default_config()["scenarios"]}
    assert v["current"]["value"] in names


def test_sweep_variable_defaults_to_the_sweep_that_exists():
    v = variables()["sweep"]
    assert v["type"] == "query" and v["datasource"]["uid"] == DS_UID
    assert v["query"] == f'label_values(simd_scenario_info{{{config.JOB_SELECTOR},sweep!=""}}, sweep)'
    sweeps = [s["name"] for s in default_config()["sweeps"]]
    assert v["current"] == {"text": sweeps[0], "value": sweeps[0]}


def test_default_sweep_is_read_from_the_file(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump({"scenarios": [], "sweeps": [{"name": "other"}]}))
    assert generator.default_sweep(f) == "other"
    f.write_text(yaml.safe_dump({"scenarios": []}))
    with pytest.raises(ValueError, match="no sweep"):
        generator.default_sweep(f)


def test_drill_annotation():
    (ann,) = [a for a in dashboard()["annotations"]["list"] if "simd_drill_active" in a.get("expr", "")]
    assert ann["enable"] and ann["datasource"]["uid"] == DS_UID
    assert ann["expr"] == f"max by (drill) (simd_drill_active{{{config.JOB_SELECTOR}}}) == 1"
    assert ann["titleFormat"] == "drill {{drill}}"


def test_uid_schema_version_and_title():
    d = dashboard()
    assert d["uid"] == UID
    assert 8 <= len(d["uid"]) <= 40
    assert d["schemaVersion"] >= 39
    assert d["title"]


def test_every_panel_queries_the_provisioned_datasource():
    ps = panels()
    assert len(ps) >= 10
    for p in ps:
        assert p.get("datasource", {}).get("uid") == DS_UID, p["title"]
        targets = p.get("targets", [])
        assert targets, f"{p['title']}: no target"
        for t in targets:
            assert t.get("expr", "").strip(), f"{p['title']} {t.get('refId')}: empty expression"
            assert t.get("datasource", {}).get("uid", DS_UID) == DS_UID
        refs = [t["refId"] for t in targets]
        assert len(refs) == len(set(refs)), p["title"]


def test_panel_ids_unique_and_grid_does_not_overlap():
    d = dashboard()
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids))
    cells = {}
    for p in d["panels"]:
        g = p["gridPos"]
        assert g["x"] + g["w"] <= 24, p.get("title")
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                assert (x, y) not in cells, f"{p.get('title')} overlaps {cells[(x, y)]}"
                cells[(x, y)] = p.get("title")


def test_panel_types_cover_the_issue():
    types = {p["type"] for p in panels()}
    assert {"timeseries", "stat", "xychart", "barchart", "table"} <= types


def test_daemon_health_panels():
    exprs = " ".join(e for _, e in all_exprs())
    for name in ("simd_ticks_total", "simd_tick_duration_seconds_bucket", "simd_tick_overruns_total",
                 "simd_last_tick_timestamp_seconds", f"up{{{config.JOB_SELECTOR}}}", "process_cpu_seconds_total",
                 "process_resident_memory_bytes"):
        assert name in exprs


def test_every_query_parses_with_prometheus(tmp_path):
    """Each panel and annotation expression (variables at their defaults) as a recording rule: promtool check
    rules runs Prometheus's own PromQL parser on it."""
    promtool = require(tool="promtool")
    exprs = [substitute(e) for _, e in all_exprs()]
    assert not any("$" in e for e in exprs)
    group = {"name": "dashboard", "rules": [{"record": f"dashboard:query:q{i}", "expr": e}
                                            for i, e in enumerate(exprs)]}
    f = tmp_path / "dashboard_queries.yml"
    f.write_text(yaml.safe_dump({"groups": [group]}))
    proc = subprocess.run([promtool, "check", "rules", str(f)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# --- provisioning ------------------------------------------------------------------------------------------
def test_datasource_provisioning():
    (f,) = sorted(DATASOURCES.glob("*.yml"))
    doc = yaml.safe_load(f.read_text())
    assert doc["apiVersion"] == 1
    (ds,) = doc["datasources"]
    assert ds["uid"] == DS_UID == generator.DATASOURCE.uid
    assert ds["type"] == "prometheus" and ds["url"] == "http://prometheus:9090"


def compose_mounts(service: str) -> dict[str, Path]:
    """container path -> host path of the service's bind mounts."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    out = {}
    for v in compose["services"][service].get("volumes", []):
        host, container = v.split(":")[:2]
        if host.startswith("."):
            out[container] = (ROOT / host).resolve()
    return out


def test_dashboard_provider_loads_the_mounted_dashboards():
    (f,) = sorted(PROVIDERS.glob("*.yml"))
    (provider,) = yaml.safe_load(f.read_text())["providers"]
    assert provider["type"] == "file"
    mounts = compose_mounts("grafana")
    assert mounts[provider["options"]["path"]] == DASHBOARD.parent
    assert mounts["/etc/grafana/provisioning"] == (ROOT / "grafana" / "provisioning")


def test_home_dashboard_is_the_mounted_file():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    env = compose["services"]["grafana"]["environment"]
    home = Path(env["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"])
    assert compose_mounts("grafana")[str(home.parent)] / home.name == DASHBOARD


def test_the_recovery_row_plots_the_elastic_groups_running_and_the_degraded_share():
    """The recovery row has the elastic groups running (only for scenarios with elastic groups: those with a degraded
    bucket) and the degraded share against SimdRunningDegraded's dashed threshold."""
    row, in_row = None, {}
    for p in dashboard()["panels"]:
        if p["type"] == "row":
            row = p["title"]
            for nested in p.get("panels", []):
                in_row[nested["title"]] = row
        else:
            in_row[p["title"]] = row
    groups, degraded = panel("Elastic replica groups running"), panel("Running degraded")
    paths = panel("Hard failures by recovery path")
    assert in_row[groups["title"]] == in_row[degraded["title"]] == in_row[paths["title"]] == "Recovery paths"
    (expr,) = [t["expr"] for t in groups["targets"]]
    assert "simd_elastic_groups_running" in expr and 'bucket="degraded"' in expr
    (expr,) = [t["expr"] for t in degraded["targets"]]
    assert expr == f'{config.BUCKET_RATIO_10M}{{bucket="degraded"}}'
    steps = degraded["fieldConfig"]["defaults"]["thresholds"]["steps"]
    assert [s["value"] for s in steps] == [None, config.DEGRADED_SHARE]
    assert degraded["fieldConfig"]["defaults"]["custom"]["thresholdsStyle"]["mode"] == "dashed"
