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

from support import examples  # noqa: E402  (importable once tests/ is on sys.path)

examples.register()


def pytest_configure(config):
    """The kernels compiled into the cache by the controller of a run with pytest-xdist's workers (module
    docstring; traced calls of the loop share the untraced calls' signature, loopcall.call); a failure here is left
    to the tests that use them to report. Meanwhile the controller rewrites the test modules' assertions once for
    every worker (rewrite_ahead)."""
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", default=None):
        return
    procs = [subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for argv in ([sys.executable, "-m", "simd", "compile"],)]
    rewrite_ahead(config)
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            print(f"{' '.join(p.args[1:3])} exited with {p.returncode}: {err.strip()[-500:]}", file=sys.stderr)


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
    groups first, each on a worker from the start; then the statistical checks (``slow``: seconds of CPU each),
    which keep the cores busy while those groups wait on Prometheus and on the image's install, and cannot end the
    run as one long check on one worker (in collection order tests/traces/statistical comes near the end); then
    the rest in collection order, where the tests that wait on the processes they start (``integration``, the
    Prometheus stack's group among them) stay spread among short ones that keep the cores busy meanwhile. Every
    worker collects the same order (a stable sort); a run without workers keeps pytest's."""
    if not hasattr(config, "workerinput"):
        return

    def key(item):
        groups = {m.args[0] if m.args else m.kwargs.get("name") for m in item.iter_markers("xdist_group")}
        return (not groups & set(LONG_GROUPS), item.get_closest_marker("slow") is None)

    items.sort(key=key)
