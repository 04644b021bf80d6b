"""scripts/test.sh runs the suite with ``--dist loadgroup``: pytest-xdist keeps the tests of one xdist_group on one
worker, so a module fixture they share (a daemon and Prometheus, the image's install) is set up once. pytest-xdist
marks a grouped test by appending ``@<group>`` to its id; where it cannot (pytest-xdist 3.8 under pytest 9.2:
pytest-dev/pytest-xdist#1386, hence the pin in pyproject.toml's dev extra) the groups are silently spread over
the workers. This test fails then."""

import pytest


@pytest.mark.xdist_group("probe")
def test_a_grouped_test_carries_its_group(request):
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not a pytest-xdist worker of --dist loadgroup")
    assert request.node.nodeid.endswith("@probe"), f"{request.node.nodeid}: --dist loadgroup did not group it"
