"""The tests of seed 001's report (simd.report): the golden outputs in tests/data and the seed's values.

Nothing here but this note: the folder's tests use the shared helpers of tests/support. `slow` comes only from
tests/engine/statistical; `integration` marks each test that starts a real process or server."""
