import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLS_BIN = ROOT / ".cache" / "tools" / "usr" / "bin"
if TOOLS_BIN.is_dir():
    os.environ["PATH"] = f"{TOOLS_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
sys.path.insert(0, str(ROOT / "tests"))


def pytest_collection_modifyitems(config, items):
    """The engine's statistical and property checks are ``slow``: per-step oracle comparisons over hundreds of
    seeds and hypothesis runs over many generated jobs take seconds each (about 60 s of the suite). The inner
    loop, ``pytest -m "not integration and not slow"``, leaves them (and the real processes) to CI."""
    import pytest

    for item in items:
        module = getattr(item, "module", None)
        if module is None or not module.__name__.startswith("test_engine"):
            continue
        if getattr(getattr(item, "obj", None), "is_hypothesis_test", False) or "per_step" in item.name:
            item.add_marker(pytest.mark.slow)
