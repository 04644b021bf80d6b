"""The same sweep on a dask.distributed cluster gives the same numbers as the local run."""

import os

import pytest
from support.cli import simd
from support.scenarios import SWEEP_SMALL as SMALL

from simd import executors as sweepexec
from simd.executors import DaskExecutor, LocalPool, Serial
from simd.offline.sweep.grid import grid, parse_params
from simd.offline.sweep.run import Runner, fixed_sweep

if os.environ.get("CI") == "true":  # CI installs the dev extra, which has dask: missing is a failure there
    import distributed
else:
    distributed = pytest.importorskip("distributed")

PARAMS = ["checkpoint.interval_steps=20,80", "recovery.strategy=cold,warm"]  # 4 points



def _local(points, replicas):
    pool = LocalPool(2)
    try:
        return fixed_sweep(Runner(points, pool, pool.workers), 0, replicas)
    finally:
        pool.close()


def test_sweep_on_a_local_cluster_equals_the_local_run(small):
    """Threads of one in-process worker (the local run's pool is itself checked against serial runs in
    tests/offline/test_sweep.py; serial here keeps the test to a couple of seconds)."""
    points = grid(small, parse_params(PARAMS))
    local = fixed_sweep(Runner(points, Serial(), 1), 0, 4)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as c, \
            distributed.Client(c) as client:
        executor = DaskExecutor(client=client)
        assert executor.workers == 2
        remote = fixed_sweep(Runner(points, executor, executor.workers), 0, 4)
    assert remote == local  # every replica and every statistic, bit for bit


@pytest.mark.integration
def test_sweep_command_with_scheduler_address(small, tmp_path):
    """``--scheduler ADDRESS``: the command connects its own client (here to an in-process scheduler)."""
    config = tmp_path / "small.yaml"
    config.write_text(SMALL)
    args = ["sweep", "--config", str(config), "--scenario", "small", "--param", PARAMS[0], "--replicas", "4"]
    local = simd(*args, "--out", str(tmp_path / "local"))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as c:
        remote = simd(*args, "--scheduler", c.scheduler_address, "--out", str(tmp_path / "dask"))
    assert remote.returncode == local.returncode == 0, remote.stderr
    assert remote.stdout == local.stdout
    assert (tmp_path / "dask" / "sweep.csv").read_text() == (tmp_path / "local" / "sweep.csv").read_text()


def test_unreachable_scheduler_is_one_line(monkeypatch):
    monkeypatch.setattr(sweepexec, "CONNECT_TIMEOUT_SECONDS", 0.5)
    r = simd("sweep", "--scenario", "ckpt-sweep", "--param", "checkpoint.interval_steps=100,200", "--replicas", "2",
             "--scheduler", "tcp://127.0.0.1:1")  # port 1: nothing listens
    assert r.returncode == 1
    assert r.stderr.startswith("simd sweep: error: --scheduler tcp://127.0.0.1:1: cannot connect:")
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("peer", ["banner", "silent"])
def test_a_peer_that_is_no_dask_scheduler_is_one_line(monkeypatch, peer):
    """What answers at the address is no scheduler: a service that speaks first (an SSH banner: dask read a frame
    length off it and raised a MemoryError of exbibytes, a traceback) or one that accepts and never answers (an
    HTTP port, the scheduler's dashboard: dask's own timeout did not cover it, and the command hung). Each is one
    line and exit 1, within the connect timeout and its grace."""
    import socket
    import threading
    import time

    monkeypatch.setattr(sweepexec, "CONNECT_TIMEOUT_SECONDS", 1.0)
    monkeypatch.setattr(sweepexec, "CONNECT_GRACE_SECONDS", 1.0)
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    held = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)
            if peer == "banner":
                conn.sendall(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n")

    threading.Thread(target=serve, daemon=True).start()
    try:
        t0 = time.monotonic()
        r = simd("sweep", "--scenario", "ckpt-sweep", "--param", "checkpoint.interval_steps=100,200",
                 "--replicas", "2", "--scheduler", f"tcp://127.0.0.1:{port}")
        took = time.monotonic() - t0
    finally:
        server.close()
        for conn in held:
            conn.close()
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert r.stderr.startswith(f"simd sweep: error: --scheduler tcp://127.0.0.1:{port}: "), r.stderr
    assert ("no dask scheduler" in r.stderr) if peer == "banner" else ("within 1 s" in r.stderr), r.stderr
    assert took < 10.0


def test_a_scheduler_without_workers_is_one_line():
    """Tasks sent to a scheduler with no worker would wait, silently, for one to come: refused at once instead."""
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None) as c:
        with pytest.raises(sweepexec.ExecutorError, match="the scheduler has no workers"):
            DaskExecutor(c.scheduler_address)


def test_a_local_worker_that_dies_is_one_line():
    """A worker process killed (as the out-of-memory killer would) is ExecutorError, which the commands print as
    one line, not a BrokenProcessPool traceback."""
    import signal

    pool = LocalPool(1)
    try:
        with pytest.raises(sweepexec.ExecutorError, match="a worker process ended abruptly"):
            list(pool(_die, [("key", (signal.SIGKILL,))]))
    finally:
        pool.close()


def _die(sig: int) -> None:
    os.kill(os.getpid(), sig)


@pytest.mark.integration
def test_sweep_on_worker_processes_equals_the_local_run(small):
    """Two worker processes over TCP, as `dask scheduler` / `dask worker` would be."""
    points = grid(small, parse_params(PARAMS))
    local = _local(points, 5)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        assert c.scheduler_address.startswith("tcp://")
        executor = DaskExecutor(c.scheduler_address)
        try:
            remote = fixed_sweep(Runner(points, executor, executor.workers), 0, 5)
        finally:
            executor.close()
    assert remote == local


def failing_point(scenario, seeds):
    raise ValueError("boom on the worker\nsecond line")


def test_a_task_failing_on_the_cluster_is_one_line(small):
    points = grid(small, parse_params(["checkpoint.seconds=30"]))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as c, \
            distributed.Client(c) as client:
        executor = DaskExecutor(client=client)
        with pytest.raises(sweepexec.ExecutorError) as err:
            fixed_sweep(Runner(points, executor, 1, fn=failing_point), 0, 2)
    assert str(err.value) == ("a task failed on the cluster: ValueError: boom on the worker (the scheduler and "
                              "workers need the same simd installed)")
