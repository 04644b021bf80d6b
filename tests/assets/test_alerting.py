"""Prometheus and Alertmanager assets (docs/design.md 3.9): the committed rules are what mixin.rules generates,
promtool and amtool accept them, every alert carries severity, summary, description and a runbook anchor
that exists, every selector carries the mixin's job selector, every recording rule is named
level:metric:operation and has an exact-value test, and every alert is tested one evaluation before its
``for:`` expires and at expiry.

promtool and amtool come from Debian's packages (scripts/fetch-tools.sh; tests/conftest.py puts them on
PATH). Locally a missing tool skips; in CI (CI=true) it fails. The tests that run them start processes and
are marked ``integration``; the structural checks (generated = committed, coverage of every for: boundary,
runbook anchors) run in the inner loop.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from mixin import config as mixin_config
from mixin import rules as mixin_rules

ROOT = Path(__file__).resolve().parents[2]
PROM = ROOT / "prometheus"
RULE_FILES = sorted((PROM / "rules").glob("*.yml"))
TEST_FILES = sorted((PROM / "tests").glob("*_test.yml"))
RUNBOOK = ROOT / "docs" / "runbook.md"
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


# --- generated from mixin/ -------------------------------------------------------------------------------
def test_committed_rules_are_the_generated_ones():
    generated = mixin_rules.render()
    assert sorted(generated) == [f.name for f in RULE_FILES], "prometheus/rules/ holds exactly the generated files"
    for name, text in generated.items():
        assert (PROM / "rules" / name).read_text() == text, \
            f"prometheus/rules/{name} differs from mixin/rules.py's output: run `python -m mixin`"


def test_python_m_mixin_writes_and_checks_every_asset(tmp_path, monkeypatch, capsys):
    """`python -m mixin --check` names what is stale and exits 1; `python -m mixin` writes it; then the check
    passes. Pointed at a temporary directory, so the shared tree is not written."""
    import mixin.__main__ as main
    from mixin import dashboard

    monkeypatch.setattr(main, "RULES_DIR", tmp_path / "rules")
    monkeypatch.setattr(dashboard, "PATH", tmp_path / "simd.json")
    assert main.main(["--check"]) == 1
    stale = capsys.readouterr().err
    for name in (*mixin_rules.render(), "simd.json"):
        assert f"{name}: differs" in stale
    assert main.main([]) == 0
    assert main.main(["--check"]) == 0
    for name, text in mixin_rules.render().items():
        assert (tmp_path / "rules" / name).read_text() == text
    assert (tmp_path / "simd.json").read_text() == dashboard.render(dashboard.dashboard())


def test_generated_yaml_reads_back_as_the_rules():
    """The hand-rolled layout (comments, literal expressions, folded descriptions) loses nothing."""
    o = mixin_rules.Options()
    for name, built in ((mixin_rules.RECORDING_FILE, mixin_rules.recording_rules(o)),
                        (mixin_rules.ALERTS_FILE, mixin_rules.alerting_rules(o))):
        (group,) = yaml.safe_load(mixin_rules.render(o)[name])["groups"]
        assert group["rules"] == [json.loads(json.dumps(r.as_dict())) for r in built]
        for loaded, rule in zip(group["rules"], built, strict=True):
            assert "\n" not in loaded.get("annotations", {}).get("description", ""), "descriptions are one line"
            assert loaded["expr"].strip() == rule.expr.strip()


def test_runbook_base_url_and_job_selector_are_written_once():
    """kubernetes-mixin style: mixin/config.py is the only source of the runbook URL and the job selector."""
    for f in sorted((ROOT / "mixin").glob("*.py")):
        if f.name != "config.py":
            assert mixin_config.RUNBOOK_BASE_URL not in f.read_text(), f"{f.name} repeats mixin/config.py's runbook URL"
    assert 'job="' not in (ROOT / "mixin" / "rules.py").read_text(), "rules.py repeats the job selector"
    assert mixin_config.RUNBOOK_BASE_URL.endswith("/blob/main/docs/runbook.md"), "the URL names docs/runbook.md"


_METRIC = re.compile(r"(?<![\w:{,])(up|simd_[a-z0-9_]+)(?![\w:])(\{[^}]*\})?")


def test_every_selector_carries_the_job_selector():
    """Every metric in an expression or in an annotation's query, with the job selector first."""
    selectors = 0
    for r in rules():
        texts = [r["expr"], *r.get("annotations", {}).values()]
        for text in texts:
            text = re.sub(r"\b[a-z][a-z0-9_]*:simd_[a-z0-9_]+:[a-z0-9_]+(\{[^}]*\})?", " ", text)  # recorded names
            for name, matchers in _METRIC.findall(text):
                assert matchers.startswith("{" + mixin_config.JOB_SELECTOR), \
                    f"{r.get('alert') or r.get('record')}: {name}{matchers} lacks {mixin_config.JOB_SELECTOR}"
                selectors += 1
    assert selectors >= 25


def test_options_reject_bad_values():
    with pytest.raises(ValueError, match="rate_window: not a Prometheus duration"):
        mixin_rules.Options(rate_window="5 minutes")
    with pytest.raises(ValueError, match=r"interval_excluded: scenario names match \[a-z0-9_-\]\+, got 'a|b'"):
        mixin_rules.Options(interval_excluded=("a|b",))


def test_shortened_copy_changes_windows_and_for_only():
    """What tests/daemon/test_drills_end_to_end.py runs: the same rules and names, windows and for: shortened."""
    short = mixin_rules.Options(rate_window="8s", goodput_window="12s", hold="2s")
    base, copy = mixin_rules.Options(), short
    for make in (mixin_rules.recording_rules, mixin_rules.alerting_rules):
        a, b = make(base), make(copy)
        assert [(r.record, r.alert, dict(r.labels)) for r in a] == [(r.record, r.alert, dict(r.labels)) for r in b]
        for ra, rb in zip(a, b, strict=True):
            assert rb.expr == ra.expr.replace("[5m]", "[8s]").replace("[10m]", "[12s]")
            assert rb.for_ == ("2s" if ra.alert else "")


# --- the tools accept the files ----------------------------------------------------------------------------
def test_rule_and_test_files_exist():
    assert RULE_FILES and TEST_FILES
    assert ALERTS and RECORDS


@pytest.mark.integration  # runs promtool/amtool
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


@pytest.mark.integration  # runs promtool/amtool
def test_promtool_check_rules():
    run(tool("promtool"), "check", "rules", *RULE_FILES)


@pytest.mark.integration  # runs promtool/amtool
def test_promtool_test_rules():
    out = run(tool("promtool"), "test", "rules", *TEST_FILES).stdout
    assert out.count("SUCCESS") == len(TEST_FILES)


@pytest.mark.integration  # runs promtool/amtool
def test_amtool_check_config():
    run(tool("amtool"), "check-config", ROOT / "alertmanager" / "alertmanager.yml")


# --- prometheus.yml wiring --------------------------------------------------------------------------------
def test_prometheus_config_wiring():
    """The scrape job is the one the rules select (mixin/config.py)."""
    config = yaml.safe_load((PROM / "prometheus.yml").read_text())
    simd = [j for j in config["scrape_configs"] if j["job_name"] == mixin_config.JOB]
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
    for alert, hold in mixin_config.FOR.items():
        assert seconds(hold) % production == 0, f"{alert}: for: {hold} is not on the {production:g} s grid"


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
                "SimdStragglerSlowingSteps", "SimdCheckpointIntervalFarFromOptimum", "SimdDown", "SimdMetricsAbsent",
                "SimdTicksStalled"}
    assert expected <= set(names)
    assert set(mixin_config.FOR) == set(names), "mixin/config.py's FOR has exactly one for: per alert"


@pytest.mark.parametrize("alert", ALERTS, ids=lambda a: a["alert"])
def test_alert_has_severity_annotations_and_runbook_anchor(alert):
    assert alert.get("labels", {}).get("severity") in SEVERITIES
    ann = alert.get("annotations", {})
    for key in ("summary", "description", "runbook_url"):
        assert ann.get(key, "").strip(), f"{alert['alert']}: annotation {key} missing"
    url = ann["runbook_url"]
    assert url == mixin_config.RUNBOOK_BASE_URL + "#" + alert["alert"].lower()
    assert url.split("#", 1)[1] in runbook_anchors(), f"docs/runbook.md has no heading for {url}"
    assert seconds(alert.get("for", "0s")) > 0, "every alert has a for: so that its boundary is tested"


def test_every_runbook_section_is_an_alert():
    sections = set(re.findall(r"^## +(Simd\w+) *$", RUNBOOK.read_text(), flags=re.M))
    assert sections == {a["alert"] for a in ALERTS}


# --- recording rules ----------------------------------------------------------------------------------
def test_recording_rule_names_are_level_metric_operation():
    """Names are unique up to the rule's own labels (one name, one series per quantile)."""
    keys = [(r["record"], tuple(sorted(r.get("labels", {}).items()))) for r in RECORDS]
    assert len(keys) == len(set(keys))
    for n, _ in keys:
        assert re.fullmatch(r"[a-z][a-z0-9_]*:simd_[a-z0-9_]+:[a-z0-9_]+", n), n


def test_recording_rules_have_the_names_the_dashboard_queries():
    c = mixin_config
    names = {r["record"] for r in RECORDS}
    assert names == {c.GOODPUT_10M, c.BUCKET_RATIO_10M, c.INTERRUPTIONS_PER_SIM_HOUR,
                     c.INTERRUPTIONS_BY_CAUSE_PER_SIM_HOUR, c.SDC_DETECTED_PER_SIM_HOUR, c.SDC_BAKED_PER_SIM_HOUR,
                     c.INTERRUPTIONS_PER_COMPUTE_HOUR, c.SDC_ONSETS_PER_COMPUTE_HOUR, c.SDC_DETECTED_PER_COMPUTE_HOUR,
                     c.STEP_DURATION_QUANTILES, c.INTERVAL_OVER_YOUNG, c.SERVERS_IN_REPAIR, c.GPUS_HELD,
                     c.GPU_HOURS_PER_PRODUCTIVE}
    quantiles = [r.get("labels", {}).get("quantile") for r in RECORDS if r["record"] == c.STEP_DURATION_QUANTILES]
    assert quantiles == list(mixin_config.STEP_QUANTILES)


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
    """A test of the recorded name whose expected samples carry the rule's own labels (each quantile)."""
    tested = {}
    for _, group, _ in load_tests():
        for case in group.get("promql_expr_test", []):
            tested.setdefault(case["expr"].strip(), []).append(case)
    for r in RECORDS:
        cases = tested.get(r["record"])
        assert cases, f"no promql_expr_test of {r['record']}"
        own = {f'{k}="{v}"' for k, v in r.get("labels", {}).items()}
        samples = [s for c in cases for s in c.get("exp_samples", [])]
        assert any(own <= set(re.findall(r'\w+="[^"]*"', s["labels"])) for s in samples), \
            f"{r['record']} {own or ''}: no expected samples"
        for s in samples:
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


# --- the opt-out of SimdCheckpointIntervalFarFromOptimum ----------------------------------------------------
@pytest.mark.integration  # runs promtool/amtool
@pytest.mark.parametrize("excluded, firing", [((), {"naive", "wide"}), (("naive",), {"wide"}),
                                               (("naive", "wide"), set())])
def test_interval_alert_opt_out(tmp_path, excluded, firing):
    """Rules generated with another opt-out list: an excluded scenario never fires, any other still does
    (naive and wide both checkpoint at 4x their optimum)."""
    o = mixin_rules.Options(interval_excluded=excluded)
    for name, text in mixin_rules.render(o).items():
        (tmp_path / name).write_text(text)
    series = []
    for s in ("naive", "wide"):
        series += [{"series": f'simd_checkpoint_interval_steps{{scenario="{s}",{mixin_config.JOB_SELECTOR}}}',
                    "values": "200x60"},
                   {"series": f'simd_checkpoint_interval_optimal_steps{{scenario="{s}",method="young",'
                              f'{mixin_config.JOB_SELECTOR}}}', "values": "50x60"},
                   {"series": f'simd_scenario_info{{scenario="{s}",sweep="",{mixin_config.JOB_SELECTOR}}}',
                    "values": "1x60"}]
    alert = "SimdCheckpointIntervalFarFromOptimum"
    expected = [{"labels": f'ALERTS{{alertname="{alert}",alertstate="firing",scenario="{s}",severity="info"}}',
                 "value": 1} for s in sorted(firing)]
    doc = {"rule_files": [mixin_rules.RECORDING_FILE, mixin_rules.ALERTS_FILE], "evaluation_interval": "15s",
           "group_eval_order": ["simd-recording", "simd-alerts"],
           "tests": [{"interval": "15s", "input_series": series, "promql_expr_test": [
               {"expr": f'ALERTS{{alertname="{alert}"}}', "eval_time": mixin_config.FOR[alert],
                "exp_samples": expected}]}]}
    (tmp_path / "opt_out_test.yml").write_text(yaml.safe_dump(doc))
    run(tool("promtool"), "test", "rules", tmp_path / "opt_out_test.yml")
