"""The tests of seed 001's closed-form models (simd.models): the seed's printed numbers, exactly where they are closed
form.

Nothing here but this note: the folder's tests use the shared helpers of tests/support. `slow` comes only from
tests/engine/statistical; `integration` marks each test that starts a real process or server."""
