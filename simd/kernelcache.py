"""Where the engine's compiled kernels are cached: chosen once per process, before numba needs a place; and how
hard LLVM optimises them.

numba's ``cache=True`` looks for a writable directory beside the source (``__pycache__``) or under the user's
home, and raises ``RuntimeError: cannot cache function ...: no locator available`` when it finds neither (a
package installed into a root-owned prefix, run by a user whose HOME does not exist: the container's case;
numba/numba#4908). So simd chooses the directory itself, in this order, and hands it to numba as its
``NUMBA_CACHE_DIR``:

1. ``NUMBA_CACHE_DIR`` when it is set and writable (the image sets it to the cache it compiled at build time);
2. ``<state dir>/kernel-cache`` (``simd run --state-dir``): kept with the simulation's state, across restarts;
3. ``$XDG_CACHE_HOME/simd/kernels`` (``~/.cache/simd/kernels`` by default);
4. a private temporary directory (mode 0700, removed when the process that made it exits);
5. none: the kernels are compiled in every process and nothing is cached (logged once).

A directory counts as writable when a file can be created in it (numba's own test). A ``NUMBA_CACHE_DIR`` that
is set but read-only (the image's cache on a read-only root file system) is used as a *seed*: its files are
copied into the first writable choice (a file newer than the copy already there replaces it), because numba
cannot even load from a directory it cannot write. Without one, a state directory's cache is seeded the same way
from the XDG cache directory when there is one (what `simd simulate` or `simd sweep` compiled on this machine): a
daemon's first start with ``--state-dir`` then loads what the user's earlier commands compiled. numba keys each
entry to the CPU and the source's content, so a seed compiled on another CPU model, or for another version of
simd, is recompiled into the writable copy.

The choice is published in the environment (``NUMBA_CACHE_DIR``, or ``SIMD_KERNEL_CACHE=off``), so worker
processes (simd sweep's pool, its dask workers on this machine) use the same directory without choosing
again. ``SIMD_KERNEL_CACHE=off`` is also a user's switch: compile in each process, write nothing.

numba checks an entry against its own source file only; simd.kernellocator (named to numba in
``NUMBA_CACHE_LOCATOR_CLASSES``) checks it against every source of the engine, so an edit to a kernel's callee
in another file does not leave the kernel's old code in the cache.

LLVM optimises the kernels at level 1 (``NUMBA_OPT=1``, set when this module is imported; numba reads it again at
every compile), not numba's default 3, unless the environment sets ``NUMBA_OPT``: measured on the project's 2-core
machine, the loop compiles from cold ~1.8 s faster at level 1 (most of a first ``simd simulate``) and the kernels
run as fast (every row of ``python bench/engine.py --repeat 3`` within noise at both levels, and ``simd sweep`` of
llama3-16k: bench/README.md has the numbers). Child processes (a sweep's workers) inherit it.
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace

log = logging.getLogger("simd.kernels")

OPT_LEVEL = "1"  # LLVM's optimisation level for the kernels (module docstring)
os.environ.setdefault("NUMBA_OPT", OPT_LEVEL)

ENV_DIR = "NUMBA_CACHE_DIR"
ENV_SWITCH = "SIMD_KERNEL_CACHE"  # "off": no cache at all
ENV_LOCATOR = "NUMBA_CACHE_LOCATOR_CLASSES"
LOCATOR = "simd.kernellocator.EngineCacheLocator"


@dataclass(frozen=True)
class Choice:
    """Where the kernels are cached: ``source`` (env, state-dir, xdg, tmp or off) and ``path`` (None when off);
    ``seeded_from``: the read-only NUMBA_CACHE_DIR copied into ``path``, if any, or the XDG cache directory
    (``seeded_from_xdg``) copied into a state directory's."""

    source: str
    path: str | None
    seeded_from: str | None = None
    seeded_from_xdg: bool = False

    @property
    def enabled(self) -> bool:
        return self.path is not None

    def describe(self) -> str:
        if self.path is None:
            return ("off: no writable directory (NUMBA_CACHE_DIR, the state directory, the XDG cache directory, "
                    "a temporary directory): the kernels are compiled in every process" if self.source == "off"
                    else "off (SIMD_KERNEL_CACHE=off): the kernels are compiled in every process")
        where = {"env": "NUMBA_CACHE_DIR", "state-dir": "under --state-dir", "xdg": "the XDG cache directory",
                 "tmp": "a private temporary directory, removed at exit"}[self.source]
        seeded = "" if not self.seeded_from else f"; seeded from {self.seeded_from}, the XDG cache directory" \
            if self.seeded_from_xdg else f"; seeded from the read-only {self.seeded_from}"
        return f"{self.path} ({where}{seeded})"


_choice: Choice | None = None


def writable(path: str) -> bool:
    """Whether a file can be created in ``path`` (made if missing, mode 0700), as numba checks it."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
        return True
    except OSError:
        return False


def xdg_cache_home(env=os.environ) -> str:
    """``$XDG_CACHE_HOME``, else ``~/.cache`` (the XDG base directory specification's default)."""
    return env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")


def choose(state_dir: str | None = None, env=os.environ) -> Choice:
    """The choice for this process (see the module docstring); makes the directory, copies a seed; no global
    state changes (``configure`` publishes it)."""
    if env.get(ENV_SWITCH, "").strip().lower() == "off":
        return Choice("off-by-switch", None)
    given = env.get(ENV_DIR) or None
    if given and writable(given):
        return Choice("env", given)
    seed = given if given and os.path.isdir(given) else None
    xdg = os.path.join(xdg_cache_home(env), "simd", "kernels")
    candidates = []
    if state_dir is not None:
        candidates.append(("state-dir", os.path.join(state_dir, "kernel-cache")))
    candidates.append(("xdg", xdg))
    for source, path in candidates:
        if writable(path):
            if seed is None and source == "state-dir" and os.path.isdir(xdg):
                return replace(_seeded(Choice(source, path), xdg), seeded_from_xdg=True)
            return _seeded(Choice(source, path), seed)
    try:
        path = tempfile.mkdtemp(prefix="simd-kernels-")
    except OSError:
        return Choice("off", None)
    pid = os.getpid()
    atexit.register(lambda: os.getpid() == pid and shutil.rmtree(path, ignore_errors=True))
    return _seeded(Choice("tmp", path), seed)


def _seeded(choice: Choice, seed: str | None) -> Choice:
    """Copy the read-only cache ``seed`` into ``choice.path``: files missing there, or older there."""
    if seed is None:
        return choice
    copied = 0
    for top, _dirs, files in os.walk(seed):
        rel = os.path.relpath(top, seed)
        dest_dir = os.path.normpath(os.path.join(choice.path, rel))
        for name in files:
            src, dest = os.path.join(top, name), os.path.join(dest_dir, name)
            try:
                if os.path.exists(dest) and os.stat(dest).st_mtime >= os.stat(src).st_mtime:
                    continue
                os.makedirs(dest_dir, mode=0o700, exist_ok=True)
                shutil.copy2(src, dest)
                copied += 1
            except OSError as exc:  # an unreadable seed file: that kernel is compiled again, nothing worse
                log.debug("kernel cache: not copied %s: %s", src, exc)
    log.debug("kernel cache: %d files copied from %s", copied, seed)
    return Choice(choice.source, choice.path, seeded_from=seed)


def configure(state_dir: str | None = None) -> Choice:
    """Choose once per process and tell numba (and this process' children, through the environment). Later
    calls return the first choice: the kernels already defined were cached there."""
    global _choice
    if _choice is not None:
        return _choice
    _choice = choice = choose(state_dir)
    if choice.enabled:
        os.environ[ENV_DIR] = choice.path
        os.environ.pop(ENV_SWITCH, None)
        # an entry fresh only if no engine source changed (simd.kernellocator), unless the user names a locator
        os.environ.setdefault(ENV_LOCATOR, LOCATOR)
    else:
        os.environ[ENV_SWITCH] = "off"
    numba_config = sys.modules.get("numba.core.config")
    if numba_config is not None:  # numba read its environment at import: tell it too
        numba_config.CACHE_DIR = choice.path or ""
        numba_config.CACHE_LOCATOR_CLASSES = os.environ.get(ENV_LOCATOR, "")
    preload_blas()
    return choice


BLAS_MODULE = "scipy.linalg.cython_blas"


def preload_blas() -> bool:
    """Load scipy's BLAS module by itself, before numba's first compile or cache load; whether it did.

    numba's CPU target, when it is first used, imports ``scipy.linalg.cython_blas`` to learn whether BLAS is
    there (numba.np.arraymath; then, from scipy.__config__, its integer width). The ordinary import runs the
    package ``scipy.linalg`` first, and with it much of scipy and numpy (numpy.f2py, numpy.testing, unittest):
    ~0.17 s of a warm ``simd simulate`` (python -X importtime), for a module that loads alone in ~1 ms. Loaded
    here under its own name from scipy's own file, it is the very module numba's import returns (the same BLAS
    functions, the same answer), without the package; ``import scipy.linalg`` later still runs the package,
    which finds it loaded (``import scipy.linalg.cython_blas`` and ``from scipy.linalg import cython_blas`` give
    it; the package has no attribute of that name then, which nothing here reads). Anything unexpected (no scipy,
    another layout, numba already set up) leaves the import to numba."""
    if BLAS_MODULE in sys.modules or "scipy.linalg" in sys.modules or "numba.np.arraymath" in sys.modules:
        return False
    import importlib.machinery
    import importlib.util

    try:
        scipy = importlib.util.find_spec("scipy")
        if scipy is None or not scipy.submodule_search_locations:
            return False
        linalg = os.path.join(list(scipy.submodule_search_locations)[0], "linalg")
        loaders = [(importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES)]
        found = importlib.machinery.FileFinder(linalg, *loaders).find_spec("cython_blas")
        if found is None or not isinstance(found.loader, importlib.machinery.ExtensionFileLoader):
            return False
        spec = importlib.util.spec_from_file_location(BLAS_MODULE, found.origin)
        module = importlib.util.module_from_spec(spec)
        sys.modules[BLAS_MODULE] = module
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 (numba imports it the ordinary way then)
        sys.modules.pop(BLAS_MODULE, None)
        log.debug("kernel cache: scipy's BLAS module not preloaded: %s", exc)
        return False
    return True


def current() -> Choice:
    """The choice made (with the defaults, if nobody chose before the first kernel was defined)."""
    return _choice if _choice is not None else configure()


def log_choice() -> None:
    """One log line saying where the kernels are cached (a warning when they are not)."""
    choice = current()
    (log.info if choice.enabled else log.warning)("kernel cache: %s", choice.describe())
