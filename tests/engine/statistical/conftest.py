"""The engine's statistical and property checks: per-step oracle comparisons over hundreds of seeds and
hypothesis runs over many generated jobs, seconds each (about 60 s of the suite). Every test here is ``slow``:
the inner loop, ``pytest -m "not integration and not slow"``, leaves them to CI."""

import pytest


def pytest_collection_modifyitems(config, items):
    here = __file__.rsplit("/", 1)[0]
    for item in items:
        if str(item.path).startswith(here + "/"):
            item.add_marker(pytest.mark.slow)
