"""``njit``: numba.njit with the kernel cache simd chose (simd.kernelcache), never numba's own fallbacks.

Every compiled function of the engine is defined with it. ``cache`` is not an option of the call site: it is
on when simd.kernelcache found a writable directory (the first definition makes the choice with the defaults
if no command made it before), off otherwise, so that numba never raises for want of a place to write.

LLVM's optimisation level is simd.kernelcache's choice too (NUMBA_OPT, set there before numba is imported).
"""

from __future__ import annotations  # noqa: I001  (kernelcache before numba: it sets NUMBA_OPT, read at import)

from simd import kernelcache
import numba


def njit(**options):
    """``@njit(nogil=True)``: numba.njit(**options, cache=<whether simd.kernelcache has a directory>)."""
    cache = kernelcache.current().enabled
    return numba.njit(cache=cache, **options)
