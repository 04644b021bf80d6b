"""The ``simd_*`` sample names simd declares, for the asset tests (docs/design.md 3.9): read from the metric table
(simd.metrics.table), the one declaration that the exporter, the daemon-health metrics and docs/metrics.md
are built from.

A family becomes the names a query can use the way Prometheus stores them: counters as ``<name>_total``,
histograms as ``<name>_bucket``, ``<name>_count`` and ``<name>_sum``, gauges as is.
"""

from __future__ import annotations

from simd.metrics.table import METRICS


def declared() -> set[str]:
    """Every simd_* sample name of the metric table."""
    return {name for m in METRICS for name in m.samples}
