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


# The loop with a trace buffer (advance(..., trace=True)): a signature of its own, which the engine's tests ask for
# and no kernel unit compiles (the daemon and the offline tools do not trace)
TRACED = ("from simd.engine import JobSpec, advance, new_state; "
          "advance(new_state(JobSpec(n_gpus=64, step_seconds=10.0, target_steps=400, hard_per_gpu_hour=0.05, "
          "sdc_per_gpu_hour=0.05, ckpt_interval_steps=20, ckpt_seconds=5.0, validation_interval_steps=10, "
          "validation_seconds=1.0, restart_seconds=5.0, seed=1)), 10**10, trace=True)")


def pytest_configure(config):
    """The kernels compiled into the cache by the controller of a run with pytest-xdist's workers (module
    docstring), the kernel units and the traced loop side by side; a failure here is left to the tests that use
    them to report."""
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", default=None):
        return
    procs = [subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for argv in ([sys.executable, "-m", "simd", "compile"], [sys.executable, "-c", TRACED])]
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            print(f"{' '.join(p.args[1:3])} exited with {p.returncode}: {err.strip()[-500:]}", file=sys.stderr)
