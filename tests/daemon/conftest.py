"""The tests of the daemon process (simd.daemon): the WSGI app in process, the server over real sockets, and real `simd
run` processes with Prometheus (those are `integration`), including the container's way of installing and running
it.

Nothing here but this note: the folder's tests use the shared helpers of tests/support. `slow` comes only from
tests/engine/statistical; `integration` marks each test that starts a real process or server."""
