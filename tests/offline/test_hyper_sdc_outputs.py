"""Hyper-checkpointing and committed SDCs in `simd simulate --json` and `simd demo --extended` (default scenarios)."""

import json

from simd.offline import demo
from simd.offline.simulate import json_line, simulate
from simd.scenario import default_config

HYPER_KEYS = {"hyper_activations", "hyper_steps"}
LATE_KEYS = {"sdc_late_found", "sdc_unrecoverable", "checkpoints_lost", "sdc_found_by_detector"}


def test_json_lines_carry_the_mechanisms_counters_only_where_configured():
    c = default_config()
    lines = {name: json.loads(json_line(simulate(c.scenario(name), 5)))
             for name in ("optimized", "optimized-hyper", "optimized-layered-sdc")}
    assert not (HYPER_KEYS | LATE_KEYS) & set(lines["optimized"])
    assert HYPER_KEYS <= set(lines["optimized-hyper"]) and not LATE_KEYS & set(lines["optimized-hyper"])
    assert LATE_KEYS <= set(lines["optimized-layered-sdc"])
    assert set(lines["optimized-layered-sdc"]["sdc_found_by_detector"]) == {"loss_spike", "ripple", "fleetscanner"}


def test_ticks_do_not_change_the_results():
    c = default_config()
    for name in ("optimized-hyper", "optimized-layered-sdc"):
        for seed in range(3):
            whole = json_line(simulate(c.scenario(name), seed))
            assert json_line(simulate(c.scenario(name), seed, tick_seconds=977.0)) == whole, (name, seed)


def test_demo_extended_has_both_rows_against_the_baseline():
    rows = {r.name: r for r in demo.compute_extended(default_config(), list(range(30)))}
    base, hyper, layered = rows["optimized"], rows["optimized-hyper"], rows["optimized-layered-sdc"]
    assert "windows per job" in hyper.detail and "steps under it" in hyper.detail
    assert "found later" in layered.detail and "checkpoints lost per job (retention 10)" in layered.detail
    assert base.sdc_baked == 0 and hyper.sdc_baked > 0  # hyper checkpoints between validations bake SDCs in
    assert layered.sdc_unrecoverable > 0 and base.sdc_unrecoverable == 0
    text = demo.render_extended(list(rows.values()), 30)
    assert "+ hyper-checkpointing after SDC detections" in text and "+ layered late detection" in text
