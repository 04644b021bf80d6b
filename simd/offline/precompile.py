"""Compiling the engine's kernels ahead of use (simd.engine.kernels names the units and their workloads).

:func:`warm` compiles units in this process; when the kernels are cached (simd.kernelcache) and several units
are not in the cache yet, those of them but the first that need none of the others (kernels.NEEDS) are compiled
in child processes, side by side with this one, which then loads them from the cache; a unit that needs another
is compiled here after it (its own kernels then take seconds).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Iterable, Sequence

from simd import kernelcache
from simd.engine import kernels

log = logging.getLogger("simd.kernels")

_compiled: set[str] = set()
_lock = threading.Lock()


def compiled(units: Iterable[str]) -> bool:
    """Whether every unit is compiled (or loaded from the cache) in this process."""
    return all(u in _compiled for u in units)


def compile_unit(unit: str) -> float:
    """Compile ``unit`` here (or load it from the cache); the wall seconds it took (0 if it was done)."""
    with _lock:
        if unit in _compiled:
            return 0.0
        if not kernels.compiled():  # NUMBA_DISABLE_JIT=1: the kernels are Python, nothing to compile
            _compiled.add(unit)
            return 0.0
        t0 = time.perf_counter()
        kernels.run_unit(unit)
        _compiled.add(unit)
        return time.perf_counter() - t0


def in_cache(unit: str) -> bool:
    """Whether numba's cache holds ``unit``'s entry points compiled for this CPU and these sources (its index,
    read as numba reads it; numba's internals, pinned to 0.68: any surprise answers False, which only costs
    a child process)."""
    import importlib

    try:
        for module, name in kernels.ENTRY_POINTS[unit]:
            dispatcher = getattr(importlib.import_module(f"simd.engine.{module}"), name)
            index = dispatcher._cache._cache_file._load_index()
            magic = dispatcher.targetctx.codegen().magic_tuple()
            if not any(key[1] == magic for key in index):
                return False
        return True
    except Exception:  # noqa: BLE001 (a heuristic: compile side by side when unsure)
        return False


def _init_numba() -> None:
    """numba's one-time set-up of its compiler (its typing and target contexts: ~0.25 s measured here), done by
    compiling a trivial function (uncached)."""
    import numba

    numba.njit(lambda: 0)()


def _child(unit: str) -> None:
    """A child process' work: compile ``unit`` into the cache, then exit."""
    kernels.run_unit(unit)


def warm(units: Sequence[str], parallel: bool = True) -> dict[str, float]:
    """Compile ``units`` in this process; for each, the wall seconds from the call until it was ready. When the
    kernels are cached (simd.kernelcache) and several units are not in the cache yet (:func:`in_cache`), each
    of those but the first that needs none of the others (kernels.NEEDS) is compiled in a child process (this
    process compiles the first and the units that need it meanwhile, then loads the cached ones), then loaded here
    from the cache the child filled."""
    todo = [u for u in dict.fromkeys(units) if u not in _compiled]
    for u in todo:
        if u not in kernels.UNITS:
            raise ValueError(f"no kernel unit {u!r} (known: {', '.join(kernels.UNITS)})")
    children = []
    if (parallel and len(todo) > 1 and kernels.compiled() and kernelcache.current().enabled
            and (os.cpu_count() or 1) > 1):
        # the cold units in kernels.UNITS order (a unit after those it needs); the others load in a fraction of
        # a second
        cold = [u for u in kernels.UNITS if u in todo and not in_cache(u)]
        todo = cold + [u for u in todo if u not in cold]
        # in child processes: the cold units but the first that need no other cold unit (one that does is compiled
        # here after it, calling its kernels: a child would compile those again)
        apart = [u for u in cold[1:] if not set(kernels.NEEDS.get(u, ())) & set(cold)]
    else:
        apart = []
    if apart:
        # fork is cheap (no second import) but unsafe beside other threads (a lock held in one stays held in
        # the child): spawn then
        method = "fork" if threading.active_count() == 1 else "spawn"
        if method == "fork":
            _init_numba()  # once, before the fork: the children inherit it
        ctx = multiprocessing.get_context(method)
        for u in apart:
            p = ctx.Process(target=_child, args=(u,), name=f"simd-compile-{u}", daemon=True)
            p.start()
            children.append((u, p))
    seconds = {}
    t0 = time.perf_counter()
    in_children = {u for u, _ in children}
    for u in [u for u in todo if u not in in_children]:  # the first cold unit, then those in the cache
        compile_unit(u)
        seconds[u] = time.perf_counter() - t0
    for u, p in children:
        p.join()
        if p.exitcode != 0:  # compiled here instead (the cause is in the child's stderr)
            log.warning("compiling the %s kernels in a child process failed (exit %s): compiling them here", u,
                        p.exitcode)
        compile_unit(u)  # loaded from the cache the child filled
        seconds[u] = time.perf_counter() - t0
    return seconds


def prepare(specs, state_dir: str | None = None, prog: str = "simd", extra: Iterable[str] = ()) -> None:
    """Choose the kernel cache (simd.kernelcache) and compile the units ``specs`` run on (and ``extra``), in
    parallel when it helps, before worker processes start (they then load them from the cache). Says so on
    stderr before compiling a unit the cache does not hold (a minute of silence reads as a hang), when the cache
    is not kept between runs, and when compiling took long enough to be noticed (a first run on this machine):
    silent on an ordinary run."""
    if not kernels.compiled():
        print(f"{prog}: the engine's kernels run as Python (NUMBA_DISABLE_JIT=1): the same results, far slower",
              file=sys.stderr)
        return
    choice = kernelcache.configure(state_dir)
    units = sorted({u for spec in specs for u in kernels.units_for(spec)} | set(extra), key=kernels.UNITS.index)
    cold = [u for u in units if not in_cache(u)]  # a slow load from the cache (a busy machine) is no compile
    kept = choice.source not in ("tmp", "off", "off-by-switch")
    if cold:  # a silent minute reads as a hang: said before it starts (the loop's cold compile: 61.5 s on the
        # project's 2-core machine, `NUMBA_CACHE_DIR=$(mktemp -d) simd simulate --seeds 2`)
        print(f"{prog}: compiling the engine's kernels ({', '.join(cold)}): a minute or so, "
              + ("once per machine" if kept else "in every run (the kernel cache is not kept)"), file=sys.stderr,
              flush=True)
    seconds = warm(units)
    took = max(seconds.values(), default=0.0)
    if not kept:
        print(f"{prog}: kernel cache: {choice.describe()}", file=sys.stderr)
    elif cold and took >= NOTICEABLE_COMPILE_SECONDS:
        print(f"{prog}: compiled the engine's kernels ({', '.join(units)}) in {took:.1f} s, once per machine: "
              f"cached in {choice.describe()}", file=sys.stderr)


# Loading every kernel from the cache takes ~0.3 s; compiling any takes seconds (simd.engine.kernels).
NOTICEABLE_COMPILE_SECONDS = 1.0


def compile_all(units: Sequence[str] | None = None, state_dir: str | None = None) -> int:
    """``simd compile``: compile ``units`` (None: every unit) into the cache (the image runs it at build time),
    print where and how long each took; exit status 2 for an unknown unit, 1 when there is no cache to compile
    into."""
    units = list(dict.fromkeys(units or kernels.UNITS))
    unknown = [u for u in units if u not in kernels.UNITS]
    if unknown:
        print(f"simd compile: error: --unit: no unit {unknown[0]!r} (known: {', '.join(kernels.UNITS)})",
              file=sys.stderr)
        return 2
    if not kernels.compiled():
        print("simd compile: error: NUMBA_DISABLE_JIT=1 runs the kernels as Python: there is nothing to compile",
              file=sys.stderr)
        return 1
    choice = kernelcache.configure(state_dir)
    if not choice.enabled:
        print(f"simd compile: error: no kernel cache: {choice.describe()}", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    seconds = warm(units)
    for u in units:
        print(f"{u:10s} {seconds.get(u, 0.0):6.1f} s  (ready after, from the start)")
    print(f"{len(units)} kernel units ready in {time.perf_counter() - t0:.1f} s; cache: {choice.describe()}")
    return 0
