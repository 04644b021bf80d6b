"""Running ``simd`` as its users do: in-process (the fast inner loop) or as a real ``python -m simd`` process."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys

from simd import cli


def simd(*args: str) -> subprocess.CompletedProcess:
    """``simd ARGS`` in-process: the exit code, stdout and stderr as a CompletedProcess."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(list(args))
        except SystemExit as exc:  # argparse's usage errors, --version
            code = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(["simd", *args], code, out.getvalue(), err.getvalue())


def simd_process(*args: str) -> subprocess.CompletedProcess:
    """``python -m simd ARGS`` as a real subprocess; never a traceback."""
    r = subprocess.run([sys.executable, "-m", "simd", *args], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in r.stderr, r.stderr
    return r
