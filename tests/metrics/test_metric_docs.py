"""docs/metrics.md is generated from the metric table (simd.metrics.docs)."""

from __future__ import annotations

import re

import pytest

from simd.metrics import docs as metric_docs
from simd.metrics.table import METRICS, SECTIONS, Metric

REGENERATE = ".venv/bin/python -m simd.metrics.docs --write"


def test_the_committed_docs_are_the_generated_ones():
    assert metric_docs.DOC.read_text() == metric_docs.render(), \
        f"docs/metrics.md is not what simd/metrics/table.py generates: run `{REGENERATE}` and commit it"


def test_every_row_is_in_its_section_with_its_exposed_name_type_and_labels():
    text = metric_docs.render()
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert [h for h in headings if h in SECTIONS] == list(SECTIONS)
    rows = dict(re.findall(r"^\| `(simd_[a-z_]+)` \| (\w+) \|", text, flags=re.M))
    assert rows == {(m.name + "_total" if m.type == "counter" else m.name): m.type for m in METRICS}
    ticks = next(line for line in text.splitlines() if line.startswith("| `simd_tick_overruns_total`"))
    assert ticks.startswith("| `simd_tick_overruns_total` | counter | kind | `kind=\"slow\"`")


@pytest.mark.parametrize("bad", [{"type": "summary"}, {"labels": ("bucket",)}, {"scope": "health"},
                                 {"section": "Nowhere"}])
def test_a_row_is_checked_when_declared(bad):
    row = {"name": "simd_x", "type": "gauge", "help": "h", "labels": ("scenario",), "scope": "scenario",
           "source": lambda sc: (), "doc": "d", "section": SECTIONS[0]}
    with pytest.raises(ValueError, match="simd_x"):
        Metric(**(row | bad))


def test_main_prints_or_refuses(capsys):
    assert metric_docs.main([]) == 0
    assert capsys.readouterr().out == metric_docs.render()
    assert metric_docs.main(["--bogus"]) == 2
    assert "usage" in capsys.readouterr().err


def test_the_checkpoint_parts_name_a_memory_tiers_saves_and_writes():
    """A memory tier's saves block and its writes make saves wait in the `checkpoint` bucket too (docs/model.md,
    "Memory tiers"; runbook SimdCheckpointWritesBlocking reads part="wait" for them): the row says so."""
    (row,) = [m for m in METRICS if m.name == "simd_checkpoint_cost_seconds"]
    assert "checkpoint.tiers.*.seconds" in row.doc and "checkpoint.tiers.*.write_seconds" in row.doc, row.doc
