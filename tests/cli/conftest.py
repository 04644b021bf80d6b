"""The tests of the command line (simd.cli) as users meet it: one line and exit 2 for bad input, help texts, in process
and as real processes (`integration`).

Nothing here but this note: the folder's tests use the shared helpers of tests/support. `slow` comes only from
tests/engine/statistical; `integration` marks each test that starts a real process or server."""
