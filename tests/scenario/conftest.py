"""The tests of the scenario file (simd.scenario): its schema and limits, one error line per problem, the bounded YAML
reader, hostile and fuzzed files, the generated reference.

Nothing here but this note: the folder's tests use the shared helpers of tests/support. `slow` comes only from
tests/engine/statistical; `integration` marks each test that starts a real process or server."""
