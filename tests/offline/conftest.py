"""The offline tools' tests (simd.offline: simulate, demo, precompile, the sweep). The sweep tests share the
small job of support.scenarios.SWEEP_SMALL, as a scenario and as a file."""

import pytest
from support.scenarios import SWEEP_SMALL

from simd.scenario import parse_config


@pytest.fixture(scope="module")
def small():
    """SWEEP_SMALL's scenario: a job of a few milliseconds in which every bucket gets time."""
    return parse_config(SWEEP_SMALL).scenario("small")


@pytest.fixture
def small_file(tmp_path):
    """SWEEP_SMALL written to a file, for the command line."""
    p = tmp_path / "small.yaml"
    p.write_text(SWEEP_SMALL)
    return p
