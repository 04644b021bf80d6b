"""The whole suite: Prometheus' tools fetched by scripts/fetch-tools.sh on PATH, and the shared helpers
(tests/support) importable as ``support``. Markers come from where a test lives: each folder's conftest.py
says what its tests are (tests/engine/statistical: ``slow``); ``integration`` marks each test that starts a
real process or server."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLS_BIN = ROOT / ".cache" / "tools" / "usr" / "bin"
if TOOLS_BIN.is_dir():
    os.environ["PATH"] = f"{TOOLS_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
sys.path.insert(0, str(ROOT / "tests"))
