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

ROOT = Path(__file__).resolve().parents[1]
TOOLS_BIN = ROOT / ".cache" / "tools" / "usr" / "bin"
if TOOLS_BIN.is_dir():
    os.environ["PATH"] = f"{TOOLS_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
sys.path.insert(0, str(ROOT / "tests"))

from support import examples  # noqa: E402  (importable once tests/ is on sys.path)

examples.register()


def pytest_configure(config):
    """The kernels compiled into the cache by the controller of a run with pytest-xdist's workers (module
    docstring); a failure here is left to the tests that use them to report."""
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", default=None):
        return
    r = subprocess.run([sys.executable, "-m", "simd", "compile"], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"simd compile exited with {r.returncode}: {r.stderr.strip()[-500:]}", file=sys.stderr)

