"""Executors of independent tasks: in-process, a local process pool (the default), or a dask.distributed cluster.
`simd sweep` runs its seed ranges on them (simd.offline.sweep.run) and `simd trace fit --bootstrap` its refits
(simd.traces.bootstrap), both from the same flags (``--workers``, ``--scheduler``: :func:`choose`).

An executor is called as ``executor(fn, jobs)`` with ``jobs`` a list of ``(key, args)`` and yields ``(key,
fn(*args))`` in completion order; it decides nothing else (the caller puts the results back in its own order, so
they are the same whichever executor ran them). ``workers`` says how many tasks it runs at once, so a caller can
cut the work to keep them all busy.

dask is optional (simd's ``dask`` extra) and imported only by :class:`DaskExecutor`; the process pool's modules
only by :class:`LocalPool` (every command's parser reads this module's bounds for its flags' help).
"""

from __future__ import annotations

import os
import threading

DASK_HINT = "--scheduler needs dask.distributed: pip install 'dask[distributed]' (simd's dask extra)"
# How long to wait for the scheduler to answer before giving up with an error (dask's own default is 30 s). dask's
# own timeout does not cover a peer that accepts and then says nothing a scheduler would (an HTTP port, the
# scheduler's dashboard): the whole connection gets this long and a few seconds more (CONNECT_GRACE_SECONDS).
CONNECT_TIMEOUT_SECONDS = 10
CONNECT_GRACE_SECONDS = 5
# Local worker processes (--workers): more than the cores gains nothing; a few per core still helps when tasks are
# uneven.
WORKERS_PER_CORE = 4


class ExecutorError(RuntimeError):
    """The executor cannot run (scheduler unreachable): one line."""


class MissingDask(ExecutorError):
    """--scheduler without dask.distributed installed."""


class Serial:
    """Every task in this process, in order (tests, and --workers 1)."""

    workers = 1

    def __call__(self, fn, jobs):
        for key, args in jobs:
            yield key, fn(*args)

    def close(self) -> None:
        pass


def cpu_count() -> int:
    """The cores this process may run on (the affinity mask, as a container or taskset sets it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class LocalPool:
    """A pool of worker processes on this machine (default: one per core), kept for the whole command so each
    worker's caches (a sweep's straggler tables) serve every task it runs."""

    def __init__(self, workers: int | None = None, start: str | None = None):
        """``start``: multiprocessing's start method (None: Python's default for the platform)."""
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.workers = workers or cpu_count()
        context = multiprocessing.get_context(start) if start else None
        self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=context)

    def __call__(self, fn, jobs):
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        futures = {self._pool.submit(fn, *args): key for key, args in jobs}
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    try:
                        result = f.result()
                    except BrokenProcessPool:
                        raise ExecutorError("a worker process ended abruptly (killed: out of memory?); the work "
                                            "was not finished") from None
                    yield futures[f], result
        finally:
            for f in pending:
                f.cancel()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    """The same tasks submitted to a dask.distributed scheduler (``tcp://HOST:PORT``), or to a ``Client``
    the caller made (tests pass one on a LocalCluster). The workers must be able to import simd."""

    def __init__(self, address: str | None = None, client=None):
        try:
            from distributed import Client
        except ImportError:
            raise MissingDask(DASK_HINT) from None
        self._own = client is None
        if client is None:
            client = _connect(Client, address)
        threads = sum(client.nthreads().values())
        if self._own and not threads:
            client.close()
            raise ExecutorError(f"--scheduler {address}: the scheduler has no workers (start some: dask worker "
                                f"{address})")
        self.client = client
        self.workers = max(1, threads)

    def __call__(self, fn, jobs):
        from distributed import as_completed

        # pure=False: two tasks with equal arguments are still two tasks (never deduplicated by key)
        futures = {self.client.submit(fn, *args, pure=False): key for key, args in jobs}
        try:
            for f in as_completed(futures):
                try:
                    results = f.result()
                except Exception as exc:  # raised on a worker or the scheduler: one line, the cause's first
                    raise ExecutorError(f"a task failed on the cluster: {type(exc).__name__}: {_first_line(exc)} "
                                        "(the scheduler and workers need the same simd installed)") from exc
                yield futures[f], results
        finally:
            self.client.cancel([f for f in futures if not f.done()])

    def close(self) -> None:
        if self._own:
            self.client.close()


def _connect(client_class, address: str):
    """A dask Client of the scheduler at ``address``, or ExecutorError (one line) when none answers as one within
    CONNECT_TIMEOUT_SECONDS (read at call time: tests shorten it) and CONNECT_GRACE_SECONDS: whatever the peer
    does (refuses, says nothing, or sends what is no dask message: a MemoryError from a length read off another
    protocol's banner), in a thread of its own so that a peer that never answers cannot hold the command."""
    timeout = CONNECT_TIMEOUT_SECONDS
    got: dict = {}

    def attempt() -> None:
        try:
            got["client"] = client_class(address, timeout=timeout)
        except BaseException as exc:  # noqa: BLE001 (whatever the peer made dask raise: one line below)
            got["error"] = exc

    thread = threading.Thread(target=attempt, name="simd-dask-connect", daemon=True)
    thread.start()
    thread.join(timeout + CONNECT_GRACE_SECONDS)
    if thread.is_alive():
        raise ExecutorError(f"--scheduler {address}: no dask scheduler answered within {timeout:g} s (the "
                            "scheduler's port, not its dashboard's: 8786 by default)")
    if "error" in got:
        exc = got["error"]
        first = _first_line(exc) or type(exc).__name__
        if isinstance(exc, MemoryError):  # (a length dask read off bytes of another protocol)
            first = "what answered is no dask scheduler (its reply is not dask's protocol)"
        raise ExecutorError(f"--scheduler {address}: cannot connect: {first}") from None
    return got["client"]


def _first_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message ("" without one): what an error line quotes of it."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


def refused(scheduler: str | None, workers: int | None) -> str | None:
    """Why the flags cannot be given together (``--workers`` beside ``--scheduler``), else None: checked before
    any work, by every command that takes them."""
    if scheduler and workers:
        return "--workers is for local runs; the scheduler's workers are its own"
    return None


def choose(scheduler: str | None, workers: int | None):
    """The executor the flags ask for: ``--scheduler`` a dask cluster's (ExecutorError when it cannot be reached,
    MissingDask without dask), ``--workers 1`` this process, else a local pool of ``workers`` (None: one per
    core)."""
    if scheduler:
        return DaskExecutor(scheduler)
    if workers == 1:
        return Serial()
    return LocalPool(workers)
