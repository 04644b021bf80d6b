"""Prometheus and Alertmanager assets (DESIGN.md 3.9): promtool and amtool accept them, every alert carries
severity, summary, description and a runbook anchor that exists, every recording rule is named
level:metric:operation and has an exact-value test, and every alert is tested one evaluation before its
``for:`` expires and at expiry.

promtool and amtool come from Debian's packages (scripts/fetch-tools.sh; tests/conftest.py puts them on
PATH). Locally a missing tool skips; in CI (CI=true) it fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PROM = ROOT / "prometheus"
RULE_FILES = sorted((PROM / "rules").glob("*.yml"))
TEST_FILES = sorted((PROM / "tests").glob("*_test.yml"))
RUNBOOK = ROOT / "docs" / "runbook.md"
RUNBOOK_URL = "https://github.com/simd/simd/blob/main/docs/runbook.md#"
SEVERITIES = {"critical", "warning", "info"}


def tool(name: str) -> str:
    path = shutil.which(name)
    if path:
        return path
    msg = f"{name} not found on PATH (run scripts/fetch-tools.sh)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(msg)
    pytest.skip(msg)


def run(*args: str | Path) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"{' '.join(map(str, args))} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def rules() -> list[dict]:
    out = []
    for f in RULE_FILES:
        for group in yaml.safe_load(f.read_text())["groups"]:
            out.extend(group["rules"])
    return out


ALERTS = [r for r in rules() if "alert" in r]
RECORDS = [r for r in rules() if "record" in r]

_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


def seconds(duration: str | int | float) -> float:
    """A Prometheus duration ("1h5m30s", "0m", "15s") in seconds."""
    text = str(duration)
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)", text)
    assert parts and "".join(n + u for n, u in parts) == text, f"not a duration: {text!r}"
    return sum(float(n) * _UNITS[u] for n, u in parts)


# --- the tools accept the files ----------------------------------------------------------------------------
def test_rule_and_test_files_exist():
    assert RULE_FILES and TEST_FILES
    assert ALERTS and RECORDS


def test_promtool_check_config(tmp_path):
    """prometheus.yml as the container sees it names /etc/prometheus/rules/*.yml; the check runs on a copy
    whose rule_files point at the repository's rules (promtool would otherwise check absent paths)."""
    promtool = tool("promtool")
    config = yaml.safe_load((PROM / "prometheus.yml").read_text())
    assert config["rule_files"] == ["/etc/prometheus/rules/*.yml"]
    config["rule_files"] = [str(PROM / "rules" / "*.yml")]
    copy = tmp_path / "prometheus.yml"
    copy.write_text(yaml.safe_dump(config))
    out = run(promtool, "check", "config", copy).stdout
    assert "SUCCESS" in out
    for f in RULE_FILES:  # the rules were found through the glob and checked too
        assert str(f) in out


def test_promtool_check_rules():
    run(tool("promtool"), "check", "rules", *RULE_FILES)


def test_promtool_test_rules():
    out = run(tool("promtool"), "test", "rules", *TEST_FILES).stdout
    assert out.count("SUCCESS") == len(TEST_FILES)


def test_amtool_check_config():
    run(tool("amtool"), "check-config", ROOT / "alertmanager" / "alertmanager.yml")


# --- prometheus.yml wiring --------------------------------------------------------------------------------
def test_prometheus_config_wiring():
    config = yaml.safe_load((PROM / "prometheus.yml").read_text())
    simd = [j for j in config["scrape_configs"] if j["job_name"] == "simd"]
    assert len(simd) == 1
    assert simd[0]["static_configs"][0]["targets"] == ["simd:9109"]
    assert seconds(simd[0].get("scrape_interval", config["global"]["scrape_interval"])) <= 15
    targets = config["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"]
    assert targets == ["alertmanager:9093"]


def test_unit_tests_use_the_production_evaluation_interval():
    """The for: boundary tests only mean something on the grid Prometheus really evaluates on."""
    production = seconds(yaml.safe_load((PROM / "prometheus.yml").read_text())["global"]["evaluation_interval"])
    for f in TEST_FILES:
        assert seconds(yaml.safe_load(f.read_text()).get("evaluation_interval", "1m")) == production, f.name


# --- alerts: names, labels, annotations, runbook --------------------------------------------------------
def github_anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def runbook_anchors() -> set[str]:
    return {github_anchor(m) for m in re.findall(r"^#{1,6} +(.+?) *$", RUNBOOK.read_text(), flags=re.M)}


def test_alert_names_are_unique_and_prefixed():
    names = [a["alert"] for a in ALERTS]
    assert len(names) == len(set(names))
    assert all(re.fullmatch(r"Simd[A-Z][A-Za-z0-9]+", n) for n in names), names
    expected = {"SimdGoodputBelowTarget", "SimdInterruptionRateHigh", "SimdSDCBakedIn", "SimdSDCDetectionsSpike",
                "SimdStragglerSlowingSteps", "SimdCheckpointIntervalFarFromOptimum", "SimdDown", "SimdTicksStalled"}
    assert expected <= set(names)


@pytest.mark.parametrize("alert", ALERTS, ids=lambda a: a["alert"])
def test_alert_has_severity_annotations_and_runbook_anchor(alert):
    assert alert.get("labels", {}).get("severity") in SEVERITIES
    ann = alert.get("annotations", {})
    for key in ("summary", "description", "runbook_url"):
        assert ann.get(key, "").strip(), f"{alert['alert']}: annotation {key} missing"
    url = ann["runbook_url"]
    assert url == RUNBOOK_URL + alert["alert"].lower()
    assert url.split("#", 1)[1] in runbook_anchors(), f"docs/runbook.md has no heading for {url}"
    assert seconds(alert.get("for", "0s")) > 0, "every alert has a for: so that its boundary is tested"


def test_every_runbook_section_is_an_alert():
    sections = set(re.findall(r"^## +(Simd\w+) *$", RUNBOOK.read_text(), flags=re.M))
    assert sections == {a["alert"] for a in ALERTS}


# --- recording rules ----------------------------------------------------------------------------------
def test_recording_rule_names_are_level_metric_operation():
    names = [r["record"] for r in RECORDS]
    assert len(names) == len(set(names))
    for n in names:
        assert re.fullmatch(r"[a-z][a-z0-9_]*:simd_[a-z0-9_]+:[a-z0-9_]+", n), n


def test_rates_are_per_simulated_time():
    """No rule uses rate()/irate(): simulated time runs `speedup` times faster than wall time."""
    for r in rules():
        assert not re.search(r"\b(i?rate)\s*\(", r["expr"]), r.get("record") or r.get("alert")


def load_tests() -> list[tuple[str, dict, float]]:
    out = []
    for f in TEST_FILES:
        doc = yaml.safe_load(f.read_text())
        interval = seconds(doc.get("evaluation_interval", "1m"))
        for group in doc["tests"]:
            out.append((f.name, group, interval))
    return out


def test_every_recording_rule_has_an_exact_value_test():
    tested = {}
    for _, group, _ in load_tests():
        for case in group.get("promql_expr_test", []):
            tested.setdefault(case["expr"].strip(), []).append(case)
    for r in RECORDS:
        cases = tested.get(r["record"])
        assert cases, f"no promql_expr_test of {r['record']}"
        assert any(c.get("exp_samples") for c in cases), f"{r['record']}: no expected samples"
        for c in cases:
            for s in c.get("exp_samples", []):
                assert isinstance(s["value"], int | float), f"{r['record']}: expected values are exact numbers"


def _pending_expr(name: str) -> re.Pattern:
    n = re.escape(name)
    return re.compile(rf'ALERTS\{{(alertname="{n}",alertstate="pending"|alertstate="pending",alertname="{n}")\}}')


@pytest.mark.parametrize("alert", ALERTS, ids=lambda a: a["alert"])
def test_alert_is_tested_before_and_at_its_for_boundary(alert):
    """In one test group: pending at T - for (ALERTS{alertstate="pending"}), not firing one evaluation
    before T (exp_alerts empty), firing at T with labels and annotations. Since evaluations fall on a
    grid, pending at T - for and not firing at T - interval pin the start of pending to exactly T - for,
    so the alert fires at T because its for: expired."""
    name, hold = alert["alert"], seconds(alert["for"])
    found = []
    for fname, group, interval in load_tests():
        cases = {}
        for c in group.get("alert_rule_test", []):
            if c["alertname"] == name:
                cases[seconds(c["eval_time"])] = c.get("exp_alerts") or []
        pending = {seconds(c["eval_time"]) for c in group.get("promql_expr_test", [])
                   if _pending_expr(name).fullmatch(c["expr"].strip()) and c.get("exp_samples")}
        for t, exp in cases.items():
            if not exp or t - interval not in cases or cases[t - interval]:
                continue
            if t - hold not in pending:
                continue
            for a in exp:
                assert a.get("exp_labels", {}).get("severity") == alert["labels"]["severity"]
                assert set(a.get("exp_annotations", {})) == set(alert["annotations"]), \
                    f"{fname}: {name} at {t}s: every annotation is checked exactly"
            found.append((fname, group.get("name"), t))
    assert found, f"{name}: no test group with pending at T - {alert['for']}, not firing at T - one evaluation " \
                  f"and firing at T"
