"""Test helpers: a real ``simd run`` process and a real Prometheus, each on a free loopback port.

    with SimdDaemon(["--speedup", "36000", "--tick-seconds", "0.2"]) as simd, \\
            Prometheus(tmp_path, [simd.target], scrape_interval="1s") as prom:
        prom.wait_for("simd_ticks_total > 0")
        prom.query("simd_effective_utilization_ratio")

Prometheus gets its own ``--storage.tsdb.path`` under the given directory and a generated prometheus.yml.
Both are stopped on exit (SIGTERM, then SIGKILL after a timeout), whatever happened inside.

The binaries come from PATH (tests/conftest.py puts scripts/fetch-tools.sh's .cache/tools/usr/bin first).
:func:`require_tool` skips a test when one is missing, except in CI (``CI=true``), where a missing tool is a
failure (docs/design.md section 6).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from mixin.config import JOB

ROOT = Path(__file__).resolve().parents[2]


def require_tool(name: str) -> str:
    """The path of binary ``name``; pytest.skip without it (pytest.fail when CI=true)."""
    path = shutil.which(name)
    if path is None:
        msg = f"{name} not found on PATH (run scripts/fetch-tools.sh)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    return path


def free_port() -> int:
    """A loopback port that was free a moment ago (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url: str, timeout: float = 5.0, method: str = "GET") -> tuple[int, bytes]:
    """(status, body) of a request; HTTP errors are returned, not raised."""
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _stop(proc: subprocess.Popen, timeout: float) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class SimdDaemon:
    """``python -m simd run --listen 127.0.0.1:<free port> <args>`` as a subprocess (stderr captured)."""

    def __init__(self, args: list[str] = (), port: int | None = None):
        self.port = port or free_port()
        self.target = f"127.0.0.1:{self.port}"
        self.url = f"http://{self.target}"
        self.cmd = [sys.executable, "-m", "simd", "run", "--listen", self.target, *args]
        self.proc: subprocess.Popen | None = None
        self._stderr = None  # a temporary file: a pipe nobody reads could fill up and block the daemon

    def start(self, timeout: float = 120.0) -> SimdDaemon:
        """Start and wait until /-/ready answers 200: every scenario's kernels are compiled (seconds on a machine's
        first run, then loaded from the cache) and every scenario runs on the shared clock."""
        self._stderr = tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen(self.cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=self._stderr,
                                     text=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"simd run exited with {self.proc.returncode}: {self.stderr()}")
            try:
                if http_get(self.url + "/-/ready", timeout=1.0)[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("simd run did not become ready in time")

    def stop(self, timeout: float = 10.0) -> str:
        """SIGTERM (SIGKILL after ``timeout``); returns what it wrote on stderr."""
        if self.proc is not None:
            _stop(self.proc, timeout)
        err = self.stderr()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        return err

    def stderr(self) -> str:
        """What the daemon wrote on stderr so far."""
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read()

    def __enter__(self) -> SimdDaemon:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class Prometheus:
    """A real Prometheus scraping ``targets`` (``host:port`` of /metrics endpoints)."""

    def __init__(self, workdir: Path, targets: list[str], scrape_interval: str = "1s",
                 rule_files: list[str] = ()):
        self.binary = require_tool("prometheus")
        self.workdir = Path(workdir)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.targets, self.scrape_interval, self.rule_files = list(targets), scrape_interval, list(rule_files)
        self.proc: subprocess.Popen | None = None
        self.log_path = self.workdir / "prometheus.log"

    def config(self) -> dict:
        return {
            "global": {"scrape_interval": self.scrape_interval, "evaluation_interval": self.scrape_interval},
            "rule_files": self.rule_files,
            # the job the mixin's rules select (mixin/config.py), as in prometheus/prometheus.yml
            "scrape_configs": [{"job_name": JOB, "static_configs": [{"targets": self.targets}]}],
        }

    def start(self, timeout: float = 30.0) -> Prometheus:
        self.workdir.mkdir(parents=True, exist_ok=True)
        cfg = self.workdir / "prometheus.yml"
        cfg.write_text(json.dumps(self.config(), indent=2))  # JSON is YAML
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(
                [self.binary, f"--config.file={cfg}", f"--storage.tsdb.path={self.workdir / 'data'}",
                 f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
                stdout=log, stderr=subprocess.STDOUT, cwd=self.workdir)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"prometheus exited with {self.proc.returncode}: {self.log_path.read_text()}")
            try:
                if http_get(self.url + "/-/ready", timeout=1.0)[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("prometheus did not become ready in time")

    def stop(self, timeout: float = 10.0) -> None:
        if self.proc is not None:
            _stop(self.proc, timeout)

    def __enter__(self) -> Prometheus:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def api(self, path: str, **params) -> object:
        """GET /api/v1/<path>; returns ``data`` or raises AssertionError with Prometheus' error."""
        url = f"{self.url}/api/v1/{path}?{urllib.parse.urlencode(params)}"
        status, body = http_get(url)
        doc = json.loads(body)
        if status != 200 or doc.get("status") != "success":
            raise AssertionError(f"{path} {params}: HTTP {status}: {doc.get('error', body[:200])}")
        return doc["data"]

    def query(self, expr: str, time_: float | None = None) -> list[dict]:
        """Instant query: the result list (vector: [{metric, value: [t, "v"]}], matrix: [{metric, values}])."""
        params = {"query": expr}
        if time_ is not None:
            params["time"] = f"{time_:.3f}"
        return self.api("query", **params)["result"]

    def wait_for(self, expr: str, timeout: float = 30.0, min_results: int = 1) -> list[dict]:
        """Poll ``expr`` until it returns at least ``min_results`` series."""
        deadline = time.monotonic() + timeout
        while True:
            result = self.query(expr)
            if len(result) >= min_results:
                return result
            if time.monotonic() > deadline:
                raise AssertionError(f"{expr!r} returned {len(result)} series after {timeout} s")
            time.sleep(0.2)
