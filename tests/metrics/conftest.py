"""The tests of the metrics (simd.metrics): the collector's exact samples, the golden scrape in tests/data, the
generated reference.

Nothing here but this note: the folder's tests use the shared helpers of tests/support. `slow` comes only from
tests/engine/statistical; `integration` marks each test that starts a real process or server."""
