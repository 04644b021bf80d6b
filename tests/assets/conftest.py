"""The tests of the shipped assets: the Prometheus rules (promtool), the Grafana dashboard, the compose file, the
metric names they use, and the links of the docs.

Nothing here but this note: the folder's tests use the shared helpers of tests/support. `slow` comes only from
tests/engine/statistical; `integration` marks each test that starts a real process or server."""
