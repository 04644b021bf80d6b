"""simd trace fit's speed (issue 22's target: under 10 s on the InfiniteHBD trace), measured in one run: the fit
alone, the goodness of fit's 200 synthetic logs, and the whole command as a user runs it (a fresh process).

    .venv/bin/python bench/trace.py [--trace PATH]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from simd.traces.fit import fit
from simd.traces.log import load
from simd.traces.scenario import goodness

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT.parent / "shared" / "traces" / "infinitehbd" / "fault_trace.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", type=Path, default=TRACE)
    args = ap.parse_args()
    t0 = time.perf_counter()
    log = load(args.trace)
    t1 = time.perf_counter()
    f = fit(log, 400)
    t2 = time.perf_counter()
    goodness(f, log, 200)
    t3 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "simd", "trace", "fit", str(args.trace), "--servers", "400"],
                   check=True, capture_output=True)
    t4 = time.perf_counter()
    print(f"read {t1 - t0:.3f} s, fit {t2 - t1:.3f} s, goodness of fit (200 logs) {t3 - t2:.2f} s; "
          f"`simd trace fit` in a fresh process {t4 - t3:.2f} s   (target < 10 s)")


if __name__ == "__main__":
    main()
