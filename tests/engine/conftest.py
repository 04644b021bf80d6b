"""The engine's tests: their job specifications and oracle helpers (specs, extended_specs, engine_stats, *_cases) are
importable from here and from tests/engine/statistical."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
