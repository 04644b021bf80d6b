"""The Grafana assets (DESIGN.md 3.9): the dashboard validates against Grafana's dashboard JSON schema
(../shared/schemas, from grafana/grafana-foundation-sdk), has a fixed uid, schemaVersion >= 39 and the
scenario variable, every panel queries the provisioned Prometheus data source (fixed uid) with a non-empty
expression that Prometheus's parser accepts, and the provisioning files point where docker-compose.yml
mounts things. (Running every panel query against a real Prometheus scraping a real daemon is the
end-to-end test's job.)
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

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = Path(__file__).resolve().parents[2] / "shared" / "schemas" / "grafana-dashboard.jsonschema.json"
DASHBOARD = ROOT / "grafana" / "dashboards" / "simd.json"
DATASOURCES = ROOT / "grafana" / "provisioning" / "datasources"
PROVIDERS = ROOT / "grafana" / "provisioning" / "dashboards"
UID = "simd-overview"
DS_UID = "simd-prometheus"


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


def test_dashboard_validates_against_grafanas_schema():
    if not SCHEMA.is_file():
        msg = f"{SCHEMA} is missing (../shared beside the clone)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    schema = json.loads(SCHEMA.read_text())
    jsonschema.validators.validator_for(schema).check_schema(schema)
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(dashboard()), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message[:300]}" for e in errors)


def test_uid_schema_version_and_title():
    d = dashboard()
    assert d["uid"] == UID
    assert 8 <= len(d["uid"]) <= 40
    assert d["schemaVersion"] >= 39
    assert d["title"]


def test_scenario_variable():
    variables = {v["name"]: v for v in dashboard()["templating"]["list"]}
    v = variables["scenario"]
    assert v["type"] == "query"
    assert v["datasource"]["uid"] == DS_UID
    assert re.fullmatch(r"label_values\(simd_scenario_info(\{[^}]*\})?, *scenario\)", v["query"])


def test_every_panel_queries_the_provisioned_datasource():
    ps = panels()
    assert len(ps) >= 10
    for p in ps:
        assert p.get("datasource", {}).get("uid") == DS_UID, p["title"]
        targets = p.get("targets", [])
        assert targets, f"{p['title']}: no target"
        assert any(t.get("expr", "").strip() for t in targets), f"{p['title']}: no expression"
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


def test_utilization_against_checkpoint_interval_chart():
    """An XY chart of the sweep: instant table queries joined on the scenario (merge), the value columns
    renamed, sorted numerically by interval; the analytic curve and the Young/Daly optima as series."""
    (xy,) = [p for p in panels() if p["type"] == "xychart"]
    exprs = " ".join(t["expr"] for t in xy["targets"])
    for name in ("simd_effective_utilization_ratio", "simd_checkpoint_interval_steps",
                 "simd_analytic_efficiency_ratio", "simd_checkpoint_interval_optimal_steps"):
        assert name in exprs
    assert all(t.get("instant") and t.get("format") == "table" for t in xy["targets"])
    assert all('sweep="$sweep"' in t["expr"] for t in xy["targets"])
    ids = [t["id"] for t in xy["transformations"]]
    assert ids[0] == "merge" and ids[-1] == "sortBy"
    renames = {}
    for t in xy["transformations"]:
        if t["id"] == "organize":
            renames.update(t["options"]["renameByName"])
    assert set(renames) == {f"Value #{t['refId']}" for t in xy["targets"]}
    (sort,) = xy["transformations"][-1]["options"]["sort"]
    assert sort["field"] == "interval_steps" and not sort.get("desc")
    series = xy["options"]["series"]
    assert xy["options"]["mapping"] == "manual" and len(series) >= 3
    fields = set(renames.values())
    for s in series:
        assert s["x"]["matcher"]["options"] in fields and s["y"]["matcher"]["options"] in fields
    assert {s["x"]["matcher"]["options"] for s in series} >= {"interval_steps", "young_steps", "daly_steps"}
    assert xy["pluginVersion"], "without a pluginVersion Grafana would migrate the options as pre-10.4 ones"


def test_drill_annotation():
    (ann,) = [a for a in dashboard()["annotations"]["list"] if "simd_drill_active" in a.get("expr", "")]
    assert ann["enable"] and ann["datasource"]["uid"] == DS_UID
    assert re.search(r"simd_drill_active\)? *== *1", ann["expr"])


def test_daemon_health_panels():
    exprs = " ".join(t["expr"] for p in panels() for t in p["targets"])
    for name in ("simd_ticks_total", "simd_tick_duration_seconds_bucket", "simd_tick_overruns_total",
                 "simd_last_tick_timestamp_seconds", 'up{job="simd"}'):
        assert name in exprs


def test_queries_never_rate_simulated_counters():
    """Per-scenario counters advance in simulated time: rate() would scale with the speedup. Only the
    daemon's own wall-time counters may be rate()d."""
    for p in panels():
        for t in p["targets"]:
            for m in re.finditer(r"\brate\((\w+)", t["expr"]):
                assert m.group(1) in {"simd_ticks_total", "simd_tick_duration_seconds_bucket"}, p["title"]


def substitute(expr: str) -> str:
    return expr.replace("$scenario", "llama3-16k").replace("$sweep", "interval")


def test_every_query_parses_with_prometheus(tmp_path):
    """Each panel and annotation expression (variables substituted) as a recording rule: promtool check
    rules runs Prometheus's own PromQL parser on it."""
    promtool = shutil.which("promtool")
    if not promtool:
        msg = "promtool not found on PATH (run scripts/fetch-tools.sh)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    d = dashboard()
    exprs = [t["expr"] for p in panels(d) for t in p["targets"]]
    exprs += [a["expr"] for a in d["annotations"]["list"] if a.get("expr")]
    assert not any("$" in substitute(e) for e in exprs)
    group = {"name": "dashboard", "rules": [{"record": f"dashboard:query:q{i}", "expr": substitute(e)}
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
    assert ds["uid"] == DS_UID and ds["type"] == "prometheus" and ds["url"] == "http://prometheus:9090"


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
