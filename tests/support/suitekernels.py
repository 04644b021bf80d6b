"""The suite's kernels, compiled by the controller of a run with pytest-xdist's workers (tests/conftest.py's
pytest_configure: ``simd compile`` into the suite's kernel cache) while the workers start: :func:`wait` returns once
that compile has ended, so that no test compiles a kernel the cache is about to hold, nor competes with it for the
cores."""

from __future__ import annotations

import os
import time

# Set by the controller for its workers: a file that exists once its compile has ended
READY = "SIMD_TEST_KERNELS_READY"
# How long to wait at most; then the tests compile what they need themselves
WAIT_SECONDS = 900.0
_ready = False


def wait() -> None:
    """Return once the controller's compile has ended (at once without one: no workers, or a worker started after)."""
    global _ready
    path = os.environ.get(READY)
    if _ready or not path:
        return
    deadline = time.monotonic() + WAIT_SECONDS
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.1)
    _ready = True
