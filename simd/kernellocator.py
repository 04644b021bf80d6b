"""numba's cache locator for simd's kernels: an entry is fresh only if none of the engine's sources changed.

numba keys a cached function to its own source file (a hash of its content) and no other, so a kernel compiled
with a function it calls from another file stays "fresh" after that file changes, and runs the old code: the
loop (loop.py) calls pcg.py, stepkernel.py and kernel/*.py. This locator is numba's own for a
``NUMBA_CACHE_DIR`` (simd.kernelcache always gives numba one) with one change: the stamp an entry is checked
against also holds a digest of every source file of ``simd.engine``, so editing any of them recompiles every
kernel once. simd.kernelcache names it to numba (``NUMBA_CACHE_LOCATOR_CLASSES``, numba 0.68's setting for
this) unless the environment names another; numba imports this module only when it first looks for a cache.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from numba.core.caching import UserProvidedCacheLocator

ENGINE = Path(__file__).resolve().parent / "engine"


@functools.lru_cache(maxsize=1)
def engine_digest() -> str:
    """sha256 over the engine's source files (their paths under simd/engine and their bytes), once a process."""
    h = hashlib.sha256()
    for path in sorted(ENGINE.rglob("*.py")):
        h.update(str(path.relative_to(ENGINE)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


class EngineCacheLocator(UserProvidedCacheLocator):
    """numba's locator for NUMBA_CACHE_DIR, its entries stamped with the function's file and the engine's
    sources as a whole (module docstring)."""

    def get_source_stamp(self):
        return super().get_source_stamp(), engine_digest()
