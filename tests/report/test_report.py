"""`simd report`: seed 001's scenarios 1 and 2 printed exactly, from the models; determinism; saved output.

To refresh the saved outputs after an intended change: SIMD_UPDATE_SAVED_OUTPUT=1 python3 -m pytest
tests/report/test_report.py, then review the diff of tests/data/report_{text.txt,markdown.md,json.json}.
"""

import json
import os
import re
from dataclasses import FrozenInstanceError, fields
from pathlib import Path

import pytest

from simd import report
from simd.cli import build_parser
from simd.models import availability, checkpoint, recovery, straggler
from simd.report.compute import in_json

ROOT = Path(__file__).resolve().parents[2]
SAVED = {fmt: ROOT / "tests" / "data" / name
         for fmt, name in (("text", "report_text.txt"), ("markdown", "report_markdown.md"),
                           ("json", "report_json.json"))}

# Seed 001 as printed. Scenario 1: GPUs, job MTBF (h), cold 60 min, hot swap 5 min availability.
SEED_S1_ROWS = [
    ("128", "63.200", "98.44%", "99.87%"),
    ("1024", "7.900", "88.76%", "98.96%"),
    ("8192", "0.988", "49.69%", "92.22%"),
    ("16384", "0.494", "33.05%", "85.56%"),
    ("32768", "0.247", "19.80%", "74.76%"),
    ("131072", "0.062", "5.81%", "42.55%"),
]
SEED_NODE_MTBF = "8089.6"
SEED_LLAMA3 = ("2.78 h", "5.20 years")
SEED_MODEL_ANCHOR = "7.90 h"
# Scenario 2.
SEED_NO_CHECKPOINT = "27.38%"
SEED_DALY_STEPS = "123 steps"
SEED_OPTIMUM = ("123 steps", "87.45%")
SEED_DIFFERENTIAL = ("67 steps", "92.18%")
SEED_S2_ROWS = [
    ("300", "83.43%", "84.75%"),
    ("600", "74.44%", "74.96%"),
    ("900", "66.79%", "67.07%"),
    ("1200", "60.49%", "60.66%"),
    ("1500", "55.24%", "55.36%"),
    ("1800", "50.83%", "50.91%"),
    ("2100", "47.06%", "47.12%"),
    ("2400", "43.81%", "43.85%"),
    ("2700", "40.97%", "41.01%"),
    ("3000", "38.48%", "38.51%"),
    ("3300", "36.28%", "36.30%"),
    ("3600", "34.31%", "34.33%"),
    ("3900", "32.55%", "32.56%"),
    ("4200", "30.95%", "30.97%"),
    ("4500", "29.51%", "29.52%"),
    ("4800", "28.19%", "28.20%"),
]
# Literals of the seed's scenario 1-3 output that must never be stored in simd/ (they must be computed).
SEED_LITERALS = (
    [SEED_NODE_MTBF, "2.78", "5.20", "27.38", "87.45", "92.18", "12.204", "92.74", "10.724", "93.62"]
    + [c.rstrip("%") for row in SEED_S1_ROWS for c in row[1:]]
    + [c.rstrip("%") for row in SEED_S2_ROWS for c in row[1:]]
)


def _args(argv):
    return build_parser().parse_args(["report", *argv])


def _run(capsys, argv=()):
    assert report.run(_args(list(argv))) == 0
    return capsys.readouterr().out


def _rows(text, ncols):
    """Table rows of the text format: lines of ncols whitespace-separated cells starting with a number."""
    return [
        tuple(line.split())
        for line in text.splitlines()
        if re.match(r"^\s*\d+\s", line) and len(line.split()) == ncols
    ]


@pytest.fixture(scope="module")
def closed_form_text():
    return report.render(report.build([1, 2], report.DEFAULT_SEED), "text")


def test_scenario_1_prints_the_seed_numbers(closed_form_text):
    s1 = closed_form_text.split("Scenario 2:")[0]
    assert _rows(s1, 4) == SEED_S1_ROWS
    assert f"node MTBF = {SEED_NODE_MTBF} h" in s1
    assert f"every {SEED_LLAMA3[0]}" in s1 and f"MTBF {SEED_LLAMA3[1]}" in s1
    assert f"model MTBF = {SEED_MODEL_ANCHOR}" in s1


def test_scenario_2_prints_the_seed_numbers(closed_form_text):
    s2 = closed_form_text.split("Scenario 2:")[1]
    assert _rows(s2, 3) == SEED_S2_ROWS
    assert f"No checkpoint: long-run efficiency {SEED_NO_CHECKPOINT}" in s2
    assert f'"Daly approximation" optimum interval: {SEED_DALY_STEPS}' in s2
    assert "Young 1974's sqrt(2CM)" in s2
    assert f"Exact grid optimum: {SEED_OPTIMUM[0]}, efficiency {SEED_OPTIMUM[1]}" in s2
    assert f"optimum: {SEED_DIFFERENTIAL[0]}, efficiency {SEED_DIFFERENTIAL[1]}" in s2
    assert "Daly 2006 higher-order estimate" in s2 and "118 steps" in s2


def test_markdown_and_json_carry_the_same_numbers(capsys):
    md = _run(capsys, ["--format", "markdown", "--scenario", "1", "--scenario", "2"])
    for row in SEED_S1_ROWS + SEED_S2_ROWS:
        assert "| " + " | ".join(row) + " |" in md
    doc = json.loads(_run(capsys, ["--format", "json", "--scenario", "1", "--scenario", "2"]))
    s1, s2 = doc["scenarios"]
    assert f"{s1['node_mtbf_hours']:.1f}" == SEED_NODE_MTBF
    assert [
        (
            str(r["n_gpus"]),
            f"{r['job_mtbf_hours']:.3f}",
            f"{100 * r['availability_cold']:.2f}%",
            f"{100 * r['availability_hot_swap']:.2f}%",
        )
        for r in s1["rows"]
    ] == SEED_S1_ROWS
    assert [
        (
            str(r["interval_steps"]),
            f"{100 * r['full_efficiency']:.2f}%",
            f"{100 * r['differential_efficiency']:.2f}%",
        )
        for r in s2["table"]
    ] == SEED_S2_ROWS
    assert (s2["grid_optimum_steps"], f"{100 * s2['grid_optimum_efficiency']:.2f}%") == (123, "87.45%")
    assert (s2["differential_optimum_steps"], f"{100 * s2['differential_optimum_efficiency']:.2f}%") == (
        67,
        "92.18%",
    )


@pytest.mark.parametrize(
    "module,name,value,gone",
    [
        (availability, "KOKOLIS_JOB_MTTF_HOURS", 8.0, SEED_NODE_MTBF),
        (availability, "COLD_MTTR_MINUTES", 30.0, "98.44%"),
        (availability, "LLAMA3_INTERRUPTIONS", 419, SEED_LLAMA3[0]),
        (checkpoint, "FULL_CHECKPOINT_SECONDS", 300.0, SEED_OPTIMUM[1]),
        (checkpoint, "DIFFERENTIAL_COST_FACTOR", 0.5, SEED_DIFFERENTIAL[1]),
        (checkpoint, "RESTART_SECONDS", 388.0, "83.43%"),
        (checkpoint, "MTBF_SECONDS", 7.0 * 3600, SEED_NO_CHECKPOINT),
        (checkpoint, "RUN_STEPS", 4000, SEED_NO_CHECKPOINT),
    ],
)
def test_output_follows_the_model_constants(monkeypatch, closed_form_text, module, name, value, gone):
    assert gone in closed_form_text
    monkeypatch.setattr(module, name, value)
    changed = report.render(report.build([1, 2], report.DEFAULT_SEED), "text")
    assert gone not in changed


def test_scenario_3_follows_the_recovery_constants(monkeypatch, capsys):
    before = _run(capsys, ["--scenario", "3"])
    monkeypatch.setattr(recovery, "WARM_SWAP_SECONDS", 120.0)
    assert _run(capsys, ["--scenario", "3"]) != before


def test_no_seed_output_literal_in_the_code():
    sources = [*(ROOT / "simd" / "models").glob("*.py"), *(ROOT / "simd" / "report").glob("*.py")]
    assert len(sources) > len(list((ROOT / "simd" / "models").glob("*.py")))
    for path in sources:
        text = path.read_text()
        for literal in SEED_LITERALS:
            assert not re.search(r"(?<![\d.])" + re.escape(literal) + r"(?![\d])", text), (path.name, literal)
        for steps in ("123", "67"):
            assert not re.search(rf"(?<![\d.]){steps}(?![\d.])", text), (path.name, steps)


def test_scenario_3_output(capsys):
    out = _run(capsys, ["--scenario", "3"])
    doc = json.loads(_run(capsys, ["--scenario", "3", "--format", "json"]))["scenarios"][0]
    n = len(doc["failures"])
    assert f"{n} failures injected" in out
    assert sum(doc["counts"].values()) == n
    cold, warm = doc["strategies"]["cold"], doc["strategies"]["warm"]
    assert cold["ettr"] == pytest.approx(1 - cold["lost_hours"] / 168)
    assert warm["lost_hours"] <= cold["lost_hours"]
    assert "0.52 + reschedule 1.50 + checkpoint load 1.56 + nccl init 1.09 + warmup 1.80) = 388.2 s" in out
    assert "6.47 min" in out and "hot update 55 s" in out


def test_scenario_4_and_5_output(capsys):
    doc = json.loads(_run(capsys, ["--scenario", "4", "--scenario", "5", "--format", "json"]))
    s4, s5 = doc["scenarios"]
    assert s4["detected"] == [straggler.SLOW_RANK] and (s4["precision"], s4["recall"]) == (1.0, 1.0)
    assert s4["trials"] >= 1000 and (s4["trial_precision"], s4["trial_recall"]) == (1.0, 1.0)
    assert s4["jitter_false_positive_rate"] == 0.0
    assert abs(s4["mean_step_seconds"] - s4["expected_max_step_seconds"]) < 4 * s4["mean_step_standard_error"]
    assert s4["step_seconds_after_replacement"] < s4["step_seconds_with_straggler"]
    assert s5["fingerprint_located"] == s5["corrupted_ranks"] and s5["fingerprint_exact"]
    assert s5["dual_run_caught"] == len(s5["corrupted_ranks"]) and s5["dual_run_false_positives"] == 0
    assert s5["clean_dual_run_false_positives"] == 0
    assert s5["spike_guard_hits"] == [s5["spike_step"]] and s5["clean_curve_false_alarms"] == 0


def test_deterministic_per_seed(capsys):
    a = _run(capsys, ["--scenario", "3", "--scenario", "4", "--scenario", "5", "--seed", "11"])
    b = _run(capsys, ["--scenario", "3", "--scenario", "4", "--scenario", "5", "--seed", "11"])
    c = _run(capsys, ["--scenario", "3", "--scenario", "4", "--scenario", "5", "--seed", "12"])
    assert a == b != c


@pytest.mark.parametrize("fmt", sorted(SAVED))
def test_saved_output(capsys, fmt):
    out = _run(capsys, ["--format", fmt])
    if os.environ.get("SIMD_UPDATE_SAVED_OUTPUT"):
        SAVED[fmt].write_text(out)
    assert out == SAVED[fmt].read_text()


def test_json_is_each_results_json_fields():
    """The numbers are held once, in the frozen results; the JSON document is their JSON fields, in order."""
    for result in report.build(list(report.SCENARIOS), report.DEFAULT_SEED):
        doc = json.loads(report.render([result], "json"))["scenarios"][0]
        assert list(doc) == ["scenario", "title", *(f.name for f in fields(result) if in_json(f))]
        with pytest.raises(FrozenInstanceError):
            result.seed = 0


def test_parser():
    args = _args([])
    assert (args.scenario, args.format, args.seed) == (None, "text", report.DEFAULT_SEED)
    args = _args(["--scenario", "5", "--scenario", "2", "--format", "json", "--seed", "3"])
    assert (args.scenario, args.format, args.seed) == ([5, 2], "json", 3)
    for bad in (["--scenario", "6"], ["--format", "xml"], ["--seed", "x"]):
        with pytest.raises(SystemExit) as e:
            _args(bad)
        assert e.value.code == 2


def test_selection_order_and_bad_seed(capsys):
    out = _run(capsys, ["--scenario", "2", "--scenario", "1", "--scenario", "2"])
    assert out.index("Scenario 1:") < out.index("Scenario 2:") and out.count("Scenario 2:") == 1
    assert "Scenario 3:" not in out
    assert report.run(_args(["--seed", "-1"])) == 2
    assert "--seed must be >= 0" in capsys.readouterr().err
