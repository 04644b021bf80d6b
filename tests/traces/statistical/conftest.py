"""The fit's recovery over many synthetic logs (tens of seconds): every test here is ``slow``, as in
tests/engine/statistical: the inner loop leaves them to CI."""

import pytest


def pytest_collection_modifyitems(config, items):
    here = __file__.rsplit("/", 1)[0]
    for item in items:
        if str(item.path).startswith(here + "/"):
            item.add_marker(pytest.mark.slow)
