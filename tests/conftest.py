"""The whole suite: Prometheus' tools fetched by scripts/fetch-tools.sh on PATH, and the shared helpers
(tests/support) importable as ``support``. Markers come from where a test lives: each folder's conftest.py
says what its tests are (tests/engine/statistical: ``slow``); ``integration`` marks each test that starts a
real process or server.

Hypothesis runs under the profile tests/support/examples.py selects: ``ci`` (CI=true: every test's full count,
derandomized, no example database) or ``dev`` (a fifth). Under ``dev`` its example database (.hypothesis/ under
the working directory) is shared by pytest-xdist's workers as it is: hypothesis writes one file per example
under a temporary name and renames it into place, so two workers saving at once leave whole files."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLS_BIN = ROOT / ".cache" / "tools" / "usr" / "bin"
if TOOLS_BIN.is_dir():
    os.environ["PATH"] = f"{TOOLS_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
sys.path.insert(0, str(ROOT / "tests"))

from support import examples  # noqa: E402  (importable once tests/ is on sys.path)

examples.register()
