"""Every simd_* name the dashboard, the rules and the rule tests use is one the exporter declares
(docs/design.md 3.9; kubernetes-mixin's check that every metric a rule or panel uses exists).

The declared names come from tests/support/metric_names.py: the metric table (simd.metrics.table), which the exporter
is built from (tests/metrics/test_collector.py checks that the exposition has exactly the table's families).
"""

from __future__ import annotations

import re
from pathlib import Path

from support import metric_names

ROOT = Path(__file__).resolve().parents[2]
ASSET_DIRS = [ROOT / "grafana", ROOT / "prometheus"]
# a simd_* name that is not part of a recording rule name (level:simd_x:operation) nor of a file name
NAME = re.compile(r"(?<![\w:.-])simd_[a-z0-9_]+(?![\w:]|\.(?:ya?ml|json)\b)")
RECORD = re.compile(r"\b[a-z][a-z0-9_]*:simd_[a-z0-9_]+:[a-z0-9_]+\b")


def asset_files() -> list[Path]:
    return sorted(p for d in ASSET_DIRS for p in d.rglob("*") if p.suffix in (".yml", ".yaml", ".json"))


def used_names() -> dict[str, set[str]]:
    used: dict[str, set[str]] = {}
    for f in asset_files():
        text = RECORD.sub(" ", f.read_text())
        for name in NAME.findall(text):
            used.setdefault(name, set()).add(str(f.relative_to(ROOT)))
    return used


def test_the_assets_use_simd_names():
    used = used_names()
    assert len(used) >= 20
    assert "simd_scenario_simulated_seconds_total" in used
    # recording-rule names are not taken for metric names
    assert not any(n.startswith("simd_goodput:") for n in used)


def test_the_regex_separates_metrics_from_recording_rules_and_files():
    text = ('scenario:simd_goodput:ratio_10m / simd_bucket_seconds_total{bucket="x"} '
            "- ../rules/simd_alerts.yml simd-prometheus sum(simd_step_duration_seconds_bucket[5m])")
    assert NAME.findall(RECORD.sub(" ", text)) == ["simd_bucket_seconds_total", "simd_step_duration_seconds_bucket"]


def test_every_used_name_is_declared_by_the_exporter():
    declared = metric_names.declared()
    missing = {n: sorted(files) for n, files in used_names().items() if n not in declared}
    assert not missing, "not in simd.metrics.table: " + "; ".join(f"{n} (used in {', '.join(f)})"
                                                                for n, f in sorted(missing.items()))


def test_declared_names_are_the_tables_exposed_names():
    declared = metric_names.declared()
    assert {"simd_ticks_total", "simd_step_duration_seconds_bucket", "simd_speedup"} <= declared
    assert "simd_ticks" not in declared and "simd_step_duration_seconds" not in declared
