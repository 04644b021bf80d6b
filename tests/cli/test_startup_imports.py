"""What a command imports: only what it uses, so that it starts fast (bench/startup.py times it; nothing is timed
here). Each command runs in a fresh interpreter, which then lists the modules it loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from simd.scenario import default_config_text

HEAVY = ("numba", "scipy", "matplotlib", "prometheus_client", "waitress", "apscheduler", "dask")


def loaded_after(args: list[str], tmp_path, extra: str = "") -> set[str]:
    """The names in sys.modules after ``simd <args>`` ran in a fresh interpreter (``extra``: more checks there)."""
    code = ("import sys, json, contextlib, io\n"
            "from simd.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    status = main({args!r})\n"
            "assert status == 0, status\n"
            f"{extra}"
            "print(json.dumps(sorted(sys.modules)))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return set(json.loads(r.stdout.splitlines()[-1]))


def test_check_config_imports_no_compiler_scipy_plots_or_server(tmp_path):
    config = tmp_path / "d.yaml"
    config.write_text(default_config_text())
    # nor builds a step-time table (a jitter's costs ~0.2 s): the default has servers with stragglers
    extra = ("from simd.engine.stragglers import quantile_table\n"
             "assert quantile_table.cache_info().misses == 0, quantile_table.cache_info()\n")
    loaded = loaded_after(["check-config", str(config)], tmp_path, extra)
    assert "simd.scenario.schema" in loaded  # it did read the file
    assert not [m for m in HEAVY if m in loaded]
    # nor the process pool that --workers runs (its flags' help is on every parser: simd.executors)
    assert "concurrent.futures.process" not in loaded and "multiprocessing" not in loaded


def test_simulate_imports_no_plots_server_or_scipy_linalg(tmp_path):
    # numba's BLAS probe gets scipy's BLAS module alone (simd.kernelcache.preload_blas), with the same answer
    extra = ("from numba.np import arraymath\n"
             "assert arraymath._HAVE_BLAS\n"
             "import os, scipy\n"
             "origin = sys.modules['scipy.linalg.cython_blas'].__spec__.origin\n"
             "assert origin.startswith(os.path.dirname(scipy.__file__)), origin\n")
    loaded = loaded_after(["simulate", "--seeds", "1", "--scenario", "ideal"], tmp_path, extra)
    assert "numba" in loaded and "scipy.linalg.cython_blas" in loaded
    assert not [m for m in ("matplotlib", "prometheus_client", "waitress", "apscheduler", "dask", "scipy.linalg",
                            "numpy.f2py") if m in loaded]


def test_scipy_linalg_after_the_preloaded_blas_module_is_scipys_own(tmp_path):
    """scipy.linalg imported after the preload uses the one BLAS module, and numba's BLAS calls still work."""
    code = ("import sys\n"
            "from simd import kernelcache\n"
            "assert kernelcache.preload_blas()\n"
            "blas = sys.modules['scipy.linalg.cython_blas']\n"
            "import numpy as np, numba, scipy.linalg\n"
            "from scipy.linalg import cython_blas\n"
            "assert cython_blas is blas\n"
            "a, b = np.arange(12.0).reshape(3, 4), np.arange(8.0).reshape(4, 2)\n"
            "assert np.array_equal(numba.njit(lambda x, y: np.dot(x, y))(a, b), a @ b)\n"
            "assert np.allclose(scipy.linalg.solve(np.diag([2.0, 4.0]), np.ones(2)), [0.5, 0.25])\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                       env={**os.environ, "SIMD_KERNEL_CACHE": "off"})
    assert r.returncode == 0, r.stderr


def test_trace_fit_imports_no_scipy_stats_or_plots(tmp_path):
    """The fit's quantiles come from scipy.special (simd.traces.fit): scipy.stats is most of scipy's import time."""
    log = tmp_path / "log.csv"
    log.write_text("time,server,event,class\n" + "".join(
        f"{t},s{t % 5},start,GPU\n{t + 600},s{t % 5},end,GPU\n" for t in range(1000, 2_000_000, 37_000)))
    loaded = loaded_after(["trace", "fit", str(log), "--servers", "6"], tmp_path)
    assert "simd.traces.fit" in loaded and "scipy.optimize" in loaded  # it did fit
    assert not [m for m in ("scipy.stats", "matplotlib", "prometheus_client", "waitress", "dask") if m in loaded]
