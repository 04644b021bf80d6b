"""Immutable snapshot -> Prometheus metric families, built at scrape time (docs/design.md 3.6 and 5.3).

:class:`SimdCollector` reads the latest snapshot once per scrape (one reference read) and builds the
families of simd.metrics.table's rows from it, so a scrape is always one whole tick. The daemon's registry
(:func:`new_registry`) is its own ``CollectorRegistry``, never prometheus_client's global one; it holds this
collector, prometheus_client's ``ProcessCollector`` (the daemon's CPU, memory, file descriptors) and, once
the tick loop registers them, the daemon-health metrics (simd.metrics.health). prometheus_client writes the
exposition (text 0.0.4 or OpenMetrics, gzip: simd.daemon.scrape).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import ProcessCollector
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

from simd.metrics.snapshot import Snapshot
from simd.metrics.table import METRICS
from simd.metrics.table import Metric as Row

_FAMILY = {"counter": CounterMetricFamily, "gauge": GaugeMetricFamily, "histogram": HistogramMetricFamily}
_OBJECTS: dict[str, Callable[[Snapshot], Iterator[tuple[tuple[str, ...], object]]]] = {
    "scenario": lambda snap: (((sc.info.name,), sc) for sc in snap.scenarios),
    "drill": lambda snap: (((d.name,), d) for d in snap.drills),
    "snapshot": lambda snap: iter((((), snap),)),
}


class SimdCollector(Collector):
    """Builds the families of ``rows`` (the metric table's, without the health ones) from ``source()``, the
    latest published snapshot."""

    def __init__(self, source: Callable[[], Snapshot], rows: tuple[Row, ...] = METRICS):
        self._source = source
        self._rows = tuple(r for r in rows if r.source is not None)

    def describe(self) -> Iterator[Metric]:
        """The families without samples: lets the registry check names and filter by ``name[]``."""
        for row in self._rows:
            yield _FAMILY[row.type](row.name, row.help, labels=row.labels)

    def collect(self) -> Iterator[Metric]:
        snap = self._source()
        for row in self._rows:
            family = _FAMILY[row.type](row.name, row.help, labels=row.labels)
            for key, obj in _OBJECTS[row.scope](snap):
                for labels, value in row.source(obj):
                    if row.type == "histogram":
                        family.add_metric(key + labels, *value)
                    else:
                        family.add_metric(key + labels, value)
            yield family


def new_registry(source: Callable[[], Snapshot], process: bool = True) -> CollectorRegistry:
    """A fresh registry (not prometheus_client's global one) with simd's collector on ``source`` and, unless
    ``process`` is False, prometheus_client's process collector."""
    registry = CollectorRegistry()
    registry.register(SimdCollector(source))
    if process:
        ProcessCollector(registry=registry)
    return registry
