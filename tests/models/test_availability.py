"""Scenario 1 models: job MTBF, availability, the Llama 3 calibration (seed 001's printed values)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as hst

from simd.models import availability as av

# Seed 001, scenario 1, as printed: GPUs -> (job MTBF h, availability cold 60 min, hot swap 5 min).
SEED_ROWS = {
    128: ("63.200", "98.44%", "99.87%"),
    1024: ("7.900", "88.76%", "98.96%"),
    8192: ("0.988", "49.69%", "92.22%"),
    16384: ("0.494", "33.05%", "85.56%"),
    32768: ("0.247", "19.80%", "74.76%"),
    131072: ("0.062", "5.81%", "42.55%"),
}


def _pct(x):
    return f"{100 * x:.2f}%"


def test_node_mtbf_is_the_seed_calibration():
    node = av.node_mtbf_hours(av.KOKOLIS_JOB_MTTF_HOURS, av.KOKOLIS_JOB_GPUS)
    assert f"{node:.1f}" == "8089.6"
    assert node == pytest.approx(7.9 * 1024, rel=1e-15)


def test_scale_table_reproduces_the_seed_rows():
    node = av.node_mtbf_hours(av.KOKOLIS_JOB_MTTF_HOURS, av.KOKOLIS_JOB_GPUS)
    rows = av.scale_table(node, av.SCALE_TABLE_GPUS, av.COLD_MTTR_MINUTES / 60, av.HOT_SWAP_MTTR_MINUTES / 60)
    assert [r.n_gpus for r in rows] == list(SEED_ROWS)
    for r in rows:
        assert (f"{r.job_mtbf_hours:.3f}", _pct(r.availability_cold), _pct(r.availability_hot)) == SEED_ROWS[
            r.n_gpus
        ]


def test_llama3_line():
    interval = av.mean_interval_hours(av.LLAMA3_INTERRUPTIONS, av.LLAMA3_DAYS)
    assert interval == pytest.approx(54 * 24 / 466)
    assert f"{interval:.2f}" == "2.78"
    years = av.implied_gpu_mtbf_years(interval, av.LLAMA3_GPUS)
    assert years == pytest.approx(interval * 16384 / 8760)
    assert f"{years:.2f}" == "5.20"


def test_model_returns_its_anchor():
    node = av.node_mtbf_hours(av.KOKOLIS_JOB_MTTF_HOURS, av.KOKOLIS_JOB_GPUS)
    assert f"{av.job_mtbf_hours(node, av.KOKOLIS_JOB_GPUS):.2f}" == "7.90"


def test_availability_closed_form():
    assert av.availability(9.0, 1.0) == 0.9
    assert av.availability(5.0, 0.0) == 1.0


@pytest.mark.parametrize(
    "call",
    [
        lambda: av.availability(0.0, 1.0),
        lambda: av.availability(1.0, -1.0),
        lambda: av.job_mtbf_hours(1.0, 0),
        lambda: av.node_mtbf_hours(-1.0, 8),
        lambda: av.mean_interval_hours(0, 54),
    ],
)
def test_invalid_inputs_raise(call):
    with pytest.raises(ValueError):
        call()


@given(
    node=hst.floats(1.0, 1e6),
    n=hst.integers(1, 10**6),
    mttr=hst.floats(0.0, 100.0),
)
def test_availability_is_a_probability_and_falls_with_size(node, n, mttr):
    a_n = av.availability(av.job_mtbf_hours(node, n), mttr)
    a_2n = av.availability(av.job_mtbf_hours(node, 2 * n), mttr)
    assert 0.0 < a_n <= 1.0
    assert a_2n <= a_n
    assert math.isclose(av.job_mtbf_hours(node, n) * n, node, rel_tol=1e-12)
