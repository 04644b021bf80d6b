"""The tests of fault logs (simd.traces, issue 22): reading and validating a log, its statistics against counts
written here, `simd trace stats` as a user runs it.

The public InfiniteHBD trace is read from the workspace's shared folder (../shared/traces, never copied into the
repository): `infinitehbd` skips without it, except in CI (CI=true), where it fails."""

import os
from pathlib import Path

import pytest

TRACE = Path(__file__).resolve().parents[3] / "shared" / "traces" / "infinitehbd" / "fault_trace.json"


@pytest.fixture
def infinitehbd() -> Path:
    if not TRACE.is_file():
        msg = f"the InfiniteHBD trace is not at {TRACE}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    return TRACE
