"""The whole suite: Prometheus' tools fetched by scripts/fetch-tools.sh on PATH, and the shared helpers
(tests/support) importable as ``support``. Markers come from where a test lives: each folder's conftest.py
says what its tests are (tests/engine/statistical: ``slow``); ``integration`` marks each test that starts a
real process or server.

Hypothesis runs under the profile tests/support/examples.py selects: ``ci`` (CI=true: every test's full count,
derandomized, no example database) or ``dev`` (a fifth). Under ``dev`` its example database (.hypothesis/ under
the working directory) is shared by pytest-xdist's workers as it is: hypothesis writes one file per example
under a temporary name and renames it into place, so two workers saving at once leave whole files."""

import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

# OpenBLAS on one thread, as the `simd` command has it (simd/cli/__init__.py says why), here for the tests that
# call the fit in process and every process they start; set before anything imports numpy (a test module's first
# import), and pytest-xdist's workers inherit it
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
TOOLS_BIN = ROOT / ".cache" / "tools" / "usr" / "bin"
if TOOLS_BIN.is_dir():
    os.environ["PATH"] = f"{TOOLS_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
sys.path.insert(0, str(ROOT / "tests"))

from support import examples, suitekernels  # noqa: E402  (importable once tests/ is on sys.path)

examples.register()


# The xdist groups whose tests start with work that needs none of this checkout's kernels (the image's install):
# they start while the kernels compile, and wait for them themselves (support.suitekernels.wait)
WITHOUT_KERNELS = ("image",)
# The modules whose tests call none of the engine's kernels (the compile's) and start no Python process, measured
# (numba's compiles recorded per module): the fuzz of the command line (its work stubbed), the fit's recoveries on
# synthetic logs (simd.traces: kernels of their own, not the compile's), promtool's checks of the rules. Handed out
# right after the long groups (pytest_collection_modifyitems), they run while the controller compiles, on the
# core the image's install leaves idle once it ends; should one of them call an engine kernel after all, it waits
# for the compile there (_gate_engine_kernels) instead of compiling the kernel beside it.
EARLY = ("cli/test_cli_fuzz.py", "traces/statistical/test_fit_recovery.py",
         "traces/statistical/test_regimes_recovery.py", "traces/statistical/test_schedule_recovery.py",
         "assets/test_alerting.py", "scenario/test_fuzz.py")
_compiling: list[tuple[subprocess.Popen, threading.Thread]] = []


def pytest_configure(config):
    """The kernels compiled into the cache by the controller of a run with pytest-xdist's workers (`simd compile`:
    one core's work, ``crn`` after ``loop``, simd.engine.kernels.NEEDS), while the workers start and collect and the
    groups of WITHOUT_KERNELS and the modules of EARLY begin; every other test waits for the compile's end
    (pytest_runtest_setup), so that no worker compiles a kernel the cache is about to hold. A failure of the compile
    is left to the tests that use the kernels to report. Meanwhile the controller rewrites the test modules'
    assertions once for every worker (rewrite_ahead). Every run first compiles simd's modules to bytecode once
    (compile_ahead)."""
    if hasattr(config, "workerinput"):
        return
    compile_ahead()
    if not config.getoption("numprocesses", default=None):
        return
    ready = Path(tempfile.mkdtemp(prefix="simd-test-kernels-")) / "ready"
    os.environ[suitekernels.READY] = str(ready)  # before the workers start: they inherit it
    proc = subprocess.Popen([sys.executable, "-m", "simd", "compile"], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)

    def wait() -> None:
        _, err = proc.communicate()
        if proc.returncode != 0:
            print(f"simd compile exited with {proc.returncode}: {err.strip()[-500:]}", file=sys.stderr)
        ready.write_text(str(proc.returncode))

    thread = threading.Thread(target=wait, name="simd-test-compile", daemon=True)
    thread.start()
    _compiling.append((proc, thread))
    rewrite_ahead(config)


def pytest_unconfigure(config):
    """The controller's compile stopped (a run interrupted before its end) and its marker removed."""
    for proc, thread in _compiling:
        if proc.poll() is None:
            proc.kill()
        thread.join()
        ready = Path(os.environ.pop(suitekernels.READY))
        ready.unlink(missing_ok=True)
        ready.parent.rmdir()
    _compiling.clear()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """In a pytest-xdist worker, before a test's fixtures: the controller's compile ended (pytest_configure), unless
    the test is in a group of WITHOUT_KERNELS or in a module of EARLY (whose engine kernels, if any, wait)."""
    if not hasattr(item.config, "workerinput") or _groups(item) & set(WITHOUT_KERNELS):
        return
    if _early(item):
        _gate_engine_kernels()
        return
    suitekernels.wait()


def _early(item) -> bool:
    return item.path.relative_to(ROOT / "tests").as_posix() in EARLY


def _gate_engine_kernels() -> None:
    """From now on in this worker, an engine kernel's first use (numba's Dispatcher.compile: a load from the cache,
    else a compile) waits for the controller's compile first; once it has ended, the wait returns at once."""
    from numba.core.dispatcher import Dispatcher

    if getattr(Dispatcher.compile, "gated", False):
        return
    compile_ = Dispatcher.compile

    def gated(self, sig):
        if self.py_func.__module__.startswith("simd.engine"):
            suitekernels.wait()
        return compile_(self, sig)

    gated.gated = True
    Dispatcher.compile = gated


def _groups(item) -> set:
    return {m.args[0] if m.args else m.kwargs.get("name") for m in item.iter_markers("xdist_group")}


def compile_ahead() -> None:
    """simd's modules and the tests' shared helpers (tests/support) compiled to bytecode once, into their __pycache__,
    before the workers, the compile and the processes the tests start import them: with bytecode writing off
    (PYTHONDONTWRITEBYTECODE, as in this machine's environment) every process compiled each of them it imports from
    its source again (~0.2 s of CPU for all of simd, in each of the many processes the suite starts). Python checks
    a pyc against its source's mtime and size, so a module edited after this is compiled again, in memory, by each
    process that imports it, as before."""
    import compileall

    for path in (ROOT / "simd", ROOT / "tests" / "support"):
        compileall.compile_dir(path, quiet=1)


def rewrite_ahead(config) -> None:
    """pytest rewrites the assertions of each test module (and conftest.py) as it imports it and caches the result in
    __pycache__, unless bytecode writing is off (PYTHONDONTWRITEBYTECODE, as in this machine's environment). So on
    a fresh clone, and always with writing off, every pytest-xdist worker rewrites every module at its collection
    (~3 s of CPU each, most of a collection's). Written here once, before the workers start, with pytest's own
    functions, into the cache its import hook reads whatever the setting (a pyc checked against the source's mtime
    and size: a stale one is rewritten by the worker). pytest's internals (pinned below 9.2 in pyproject.toml): any
    surprise leaves the rewriting to the workers."""
    if config.getoption("assertmode", default="rewrite") != "rewrite":
        return
    try:
        from _pytest.assertion.rewrite import PYC_TAIL, _rewrite_test, _write_pyc, assertstate_key, get_cache_dir

        state = config.stash[assertstate_key]
    except Exception:  # noqa: BLE001 (an optimisation: the workers rewrite what is missing)
        return
    for fn in sorted((ROOT / "tests").rglob("*.py")):
        if not (fn.name == "conftest.py" or fn.name.startswith("test_")):
            continue  # what pytest rewrites here: python_files' default pattern and conftest.py
        try:
            cache = get_cache_dir(fn)
            cache.mkdir(exist_ok=True)
            source_stat, co = _rewrite_test(fn, config)
            _write_pyc(state, co, source_stat, cache / (fn.name[:-3] + PYC_TAIL))
        except Exception:  # noqa: BLE001 (a module that does not compile: its worker's collection reports it)
            continue


# The xdist groups that hold their worker longest: the image's install and cold compiles (about two minutes on
# an idle machine), the drill stack's alerts (about 100 s, mostly waiting on Prometheus)
LONG_GROUPS = ("image", "drills-stack")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """In a pytest-xdist worker, the order scripts/test.sh's run hands the tests out in (--dist loadgroup
    --no-loadscope-reorder: the groups and the other tests, one at a time, in collection order): the two long
    groups first, each on a worker from the start; then the modules of EARLY, which run while the kernels compile;
    then the statistical checks (``slow``: seconds of CPU each),
    which keep the cores busy while those groups wait on Prometheus and on the image's install, and cannot end the
    run as one long check on one worker (in collection order tests/traces/statistical comes near the end); then
    the rest in collection order, where the tests that wait on the processes they start (``integration``, the
    Prometheus stack's group among them) stay spread among short ones that keep the cores busy meanwhile. Every
    worker collects the same order (a stable sort); a run without workers keeps pytest's."""
    if not hasattr(config, "workerinput"):
        return

    def key(item):
        return (not _groups(item) & set(LONG_GROUPS), not _early(item), item.get_closest_marker("slow") is None)

    items.sort(key=key)
