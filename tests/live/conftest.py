"""The tests of the live simulation (simd.live): ticks on an injected clock, lanes and their bounds, drills,
persistence, reload; in process, except the reload against a real daemon (integration).

Nothing here but this note: the folder's tests use the shared helpers of tests/support. `slow` comes only from
tests/engine/statistical; `integration` marks each test that starts a real process or server."""
