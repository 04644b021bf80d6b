"""simd: a Prometheus-instrumented simulator of large synchronous training jobs."""

__version__ = "0.1.0"
