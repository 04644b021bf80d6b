"""simd installed and run the way its container image does it, without Docker.

The image installs simd with ``pip install .`` (not editable) into a root-owned prefix and runs it as an
unprivileged user whose HOME does not exist, from ``/``, on a root file system that may be read-only. Here:

- a fresh virtual environment owned by root, made with Debian's own Python (the default ``python3`` of this
  machine lives in root's home, which the unprivileged user cannot read), and simd installed into it by
  ``scripts/image-install.sh install``, the Dockerfile's own step;
- every run inside bubblewrap with the whole file system bound read-only (``/tmp`` and ``/dev/shm`` fresh
  tmpfs, as a container has them; writable only the directories a test binds), as uid 65534 (setpriv),
  ``HOME=/nonexistent``, working directory ``/``, and a clean environment.

Checked: with no kernel cache anywhere, ``simd run`` answers ``/metrics`` within 3 s while its kernels still
compile, and becomes ready; a second start finds the cache under ``--state-dir`` and is ready within 3 s;
the image's build step (``scripts/image-install.sh compile`` into ``NUMBA_CACHE_DIR``) gives a cache that a
run on a read-only root file system uses as its seed (ready within 3 s); ``simd simulate`` and ``simd sweep``
with worker processes print the same numbers as this checkout's install; with nothing writable, not even /tmp, simd
says it has no kernel cache and compiles its kernels in the process.

Needs root (to drop to uid 65534), bubblewrap and Debian's python3 with venv; skipped without them, a
failure in CI (scripts/test.sh installs them). The install takes ~30 s (pip's cache helps), beside the suite's
own compile at its start; a cold compile of ``loop`` ~64 s of CPU (`simd compile --unit loop` into an empty
``NUMBA_CACHE_DIR``), which the suite (5 minutes on 2 cores) affords once here: the cold start's, the one this
module is about. The build step's would be the same compile of the same
installed package by the same user into the same kind of directory (a ``NUMBA_CACHE_DIR``): its directory starts as
a copy of the cold start's cache (``built``), so the build step loads ``loop``, compiles ``crn`` on top of it
(seconds, in one process as ever: simd.engine.kernels.NEEDS) and is checked for what it leaves, every unit under
NUMBA_CACHE_DIR (run without the cold start's test, it compiles everything itself). The run with nothing writable
compiles the fit's kernels (``simd trace fit``: a second) rather than the loop: what that case risks is numba's
``cache=True`` without a place to write (numba/numba#4908: a RuntimeError at the first compile of any kernel), not
the loop's compile itself, which the cold start makes.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from support import suitekernels
from support.promstack import ROOT, free_port, http_get, require_tool

from simd.engine import kernels

# the image's install and its build cache, made once: on one pytest-xdist worker (scripts/test.sh)
pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("image")]

SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's: readable by every user (the default python3 is under /root)
NOBODY = 65534
# The start's speed targets (/metrics within 3 s, ready within 3 s from the cache) are measured by
# bench/startup.py; here the facts behind them, which hold on a loaded machine too: the first answers come
# while the kernels compile (simd_ready 0), and a second start loads them from the cache (its log says so).
# The bounds below only stop a test that hangs.
FIRST_ANSWER_SECONDS = 60.0
# a cold compile takes ~64 s of CPU; the cold start's runs beside the suite's other tests, and the bound stays
# generous under load
READY_COLD_SECONDS = 300.0
LOADED = "(loaded from the kernel cache)"


def _require_root_and_tools() -> None:
    missing = []
    if os.geteuid() != 0:
        missing.append("root (to run simd as uid 65534)")
    if not Path(SYSTEM_PYTHON).exists() or subprocess.run([SYSTEM_PYTHON, "-c", "import ensurepip, venv"],
                                                          capture_output=True).returncode:
        missing.append(f"{SYSTEM_PYTHON} with venv (Debian's python3-venv)")
    if missing:
        msg = "the image-way test needs " + ", ".join(missing)
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    require_tool("bwrap")
    require_tool("setpriv")


class Image:
    """The image's install in ``base`` (root-owned, readable by all) and a way to run its simd as the image's user."""

    def __init__(self, base: Path):
        self.base = base
        self.venv = base / "venv"
        self.simd = str(self.venv / "bin" / "simd")
        # the script as the image has it (copied in, as the Dockerfile's COPY does): the checkout may be under
        # /tmp, which the sandbox replaces with its own
        self.script = str(base / "image-install.sh")
        self.compiled: Path | None = None  # the cold start's kernel cache, once its test has filled it (`built`)

    def writable_dir(self, name: str) -> Path:
        """A fresh directory the unprivileged user owns (a state directory, a kernel cache)."""
        d = self.base / name
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
        os.chown(d, NOBODY, NOBODY)
        return d

    def command(self, argv: list[str], writable: tuple[Path, ...] = (), env: dict | None = None,
                tmp: bool = True) -> list[str]:
        """``argv`` under bubblewrap (everything read-only but ``writable`` and a fresh /tmp; with ``tmp`` False,
        /tmp read-only too) as uid 65534, with HOME=/nonexistent, in /, with nothing in the environment but PATH,
        HOME and ``env``."""
        binds = [a for d in writable for a in ("--bind", str(d), str(d))]
        if tmp:
            binds = ["--perms", "1777", "--tmpfs", "/tmp", *binds]
        variables = [f"{k}={v}" for k, v in {"HOME": "/nonexistent", "PATH": "/usr/bin:/bin", **(env or {})}.items()]
        # /dev/shm as Docker gives every container one (multiprocessing's semaphores live there)
        return ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/dev/shm",
                "--proc", "/proc", *binds, "--chdir", "/", "--die-with-parent",
                "--",
                "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--",
                "env", "-i", *variables, *argv]

    def run(self, argv: list[str], writable=(), env=None, timeout: float = 300, tmp: bool = True
            ) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(argv, writable, env, tmp), capture_output=True, text=True,
                              timeout=timeout, cwd="/")


@pytest.fixture(scope="module")
def image():
    _require_root_and_tools()
    base = Path(tempfile.mkdtemp(prefix="simd-image-", dir="/var/tmp"))  # not /tmp: the sandbox's /tmp is its own
    try:
        base.chmod(0o755)
        shutil.copy(ROOT / "scripts" / "image-install.sh", base / "image-install.sh")
        subprocess.run([SYSTEM_PYTHON, "-m", "venv", str(base / "venv")], check=True, capture_output=True)
        r = subprocess.run(["sh", str(ROOT / "scripts" / "image-install.sh"), "install", str(base / "venv/bin/python"),
                            str(ROOT)], capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        # the install runs beside the suite's own compile of the kernels at its start (tests/conftest.py); the
        # image's cold compiles wait for its end: beside it they would slow it, and every other test waits for it
        suitekernels.wait()
        yield Image(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _samples(body: bytes) -> dict:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(body.decode()) for s in f.samples}


def _value(samples: dict, name: str) -> float:
    (v,) = [v for (n, _), v in samples.items() if n == name]
    return v


def _labels(samples: dict, name: str) -> dict:
    (labels,) = [dict(lab) for (n, lab) in samples if n == name]
    return labels


class Started:
    """``simd run`` in the sandbox, with the times its endpoints first answered."""

    def __init__(self, image: Image, args: list[str], writable=(), env=None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.TemporaryFile("w+")
        self.t0 = time.monotonic()
        argv = [image.simd, "run", "--listen", f"127.0.0.1:{self.port}", *args]
        self.proc = subprocess.Popen(image.command(argv, writable, env), stdout=subprocess.DEVNULL, stderr=self.log,
                                     text=True)

    def first_answer(self, path: str, timeout: float = 30.0) -> tuple[float, int, bytes]:
        """(seconds since the start, status, body) of the first answer on ``path``."""
        deadline = self.t0 + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"simd run exited with {self.proc.returncode}:\n{self.stderr()}"
            try:
                status, body = http_get(self.url + path, timeout=1.0)
                return time.monotonic() - self.t0, status, body
            except OSError:
                time.sleep(0.05)
        raise AssertionError(f"no answer on {path} within {timeout} s:\n{self.stderr()}")

    def ready_after(self, timeout: float) -> float:
        """Seconds since the start at which /-/ready first answered 200."""
        while time.monotonic() < self.t0 + timeout:
            assert self.proc.poll() is None, f"simd run exited with {self.proc.returncode}:\n{self.stderr()}"
            try:
                if http_get(self.url + "/-/ready", timeout=1.0)[0] == 200:
                    return time.monotonic() - self.t0
            except OSError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"not ready within {timeout} s:\n{self.stderr()}")

    def scrape_when(self, ok, timeout: float = 5.0) -> dict:
        """The samples of the first /metrics answer for which ``ok(samples)`` holds: /metrics may show the tick
        before the one /-/ready reported (a scrape during the rendering after a tick gets the previous one)."""
        deadline = time.monotonic() + timeout
        while True:
            samples = _samples(http_get(self.url + "/metrics")[1])
            if ok(samples) or time.monotonic() > deadline:
                return samples
            time.sleep(0.1)

    def simd_pid(self) -> int:
        """simd's own process: bubblewrap forks it and waits (and would die of a signal, not forward it)."""
        children = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                pid, rest = stat.read_text().split(" (", 1)
                children.setdefault(int(rest.rsplit(") ", 1)[1].split()[1]), []).append(int(pid))
            except (OSError, ValueError, IndexError):
                continue
        todo, found = [self.proc.pid], []
        while todo:
            pid = todo.pop()
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"run" in argv and b"--listen" in argv and not argv[0].endswith(b"bwrap"):
                found.append(pid)
            todo.extend(children.get(pid, []))
        assert found, "simd run's process not found"
        return found[-1]  # the deepest: setpriv and env exec into it

    def stop(self) -> str:
        """SIGTERM to simd; its exit code (bubblewrap's) must be 0. Returns the log."""
        if self.proc.poll() is None:
            os.kill(self.simd_pid(), signal.SIGTERM)
            try:
                rc = self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError(f"simd run did not stop on SIGTERM:\n{self.stderr()}") from None
            assert rc == 0, self.stderr()
        return self.stderr()

    def stderr(self) -> str:
        self.log.seek(0)
        return self.log.read()


def test_a_cold_start_answers_at_once_and_a_second_start_finds_the_cache(image):
    state = image.writable_dir("state")
    daemon = Started(image, ["--state-dir", str(state)], writable=(state,))
    try:
        took, status, body = daemon.first_answer("/metrics")
        assert status == 200 and took < FIRST_ANSWER_SECONDS, (took, status)
        samples = _samples(body)
        # answered while the kernels compile: not ready, the scenarios wait behind the clock
        assert _value(samples, "simd_ready") == 0.0
        assert _labels(samples, "simd_engine_kernel_cache_info") == {"source": "state-dir",
                                                                     "path": str(state / "kernel-cache")}
        for path in ("/-/healthy", "/healthz"):
            took, status, _ = daemon.first_answer(path)
            assert status == 200 and took < FIRST_ANSWER_SECONDS, (path, took, status)
        took, status, body = daemon.first_answer("/-/ready")
        assert status == 503 and b"kernels compiling" in body, (status, body)
        daemon.ready_after(READY_COLD_SECONDS)
        samples = daemon.scrape_when(lambda s: _value(s, "simd_ready") == 1.0)
        assert _value(samples, "simd_ready") == 1.0
        assert _value(samples, "simd_engine_compile_seconds") > 0.0
        assert all(v == 0.0 for (n, _), v in samples.items() if n == "simd_scenario_behind_seconds")
        assert _value(samples, "simd_ticks_total") > 0
    finally:
        log = daemon.stop()
    assert "Traceback" not in log, log
    assert "ready in" in log and "(compiled)" in log and LOADED not in log, log  # a first start compiles
    assert "kernel cache: " + str(state / "kernel-cache") in log
    assert any((state / "kernel-cache").rglob("*.nbi")), "no kernel cached under --state-dir"
    image.compiled = state / "kernel-cache"

    again = Started(image, ["--state-dir", str(state)], writable=(state,))
    try:
        again.ready_after(READY_COLD_SECONDS)
        samples = _samples(http_get(again.url + "/metrics")[1])
        assert _value(samples, "simd_engine_compile_seconds") > 0.0
    finally:
        log = again.stop()
    assert "resumed from" in log and "Traceback" not in log
    assert LOADED in log, log


@pytest.fixture(scope="module")
def built(image) -> Path:
    """The Dockerfile's build step: every kernel compiled into NUMBA_CACHE_DIR as the image's user, into a copy of the
    cold start's cache when its test made one (the module's docstring says why)."""
    built = image.writable_dir("kernels")
    if image.compiled is not None:
        shutil.copytree(image.compiled, built, dirs_exist_ok=True)
        for path in [built, *built.rglob("*")]:
            os.chown(path, NOBODY, NOBODY)
    r = image.run(["sh", image.script, "compile", image.simd], (built,), {"NUMBA_CACHE_DIR": str(built)}, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{len(kernels.UNITS)} kernel units ready" in r.stdout and str(built) in r.stdout
    return built


def test_the_image_build_cache_seeds_a_read_only_root(image, built):
    """At run time the image's cache is read-only (compose's read_only: true): simd copies it into --state-dir
    and is ready at once."""
    state = image.writable_dir("state-seeded")
    daemon = Started(image, ["--state-dir", str(state)], writable=(state,),  # `built` is read-only here
                     env={"NUMBA_CACHE_DIR": str(built)})
    try:
        took, status, _ = daemon.first_answer("/metrics")
        assert status == 200 and took < FIRST_ANSWER_SECONDS
        daemon.ready_after(READY_COLD_SECONDS)
        samples = _samples(http_get(daemon.url + "/metrics")[1])
        assert _labels(samples, "simd_engine_kernel_cache_info")["source"] == "state-dir"
    finally:
        log = daemon.stop()
    assert f"seeded from the read-only {built}" in log, log
    assert LOADED in log, log


@pytest.mark.parametrize("argv", [
    ["simulate", "--seeds", "2", "--scenario", "optimized", "--scenario", "llama3-16k", "--scenario",
     "optimized-hyper", "--json"],
    ["sweep", "--scenario", "llama3-16k", "--param", "checkpoint.interval_steps=100:300:3", "--replicas", "6",
     "--workers", "2", "--quiet"],
], ids=["simulate", "sweep"])
def test_offline_commands_give_the_same_numbers_as_this_checkout(image, built, argv):
    """No writable directory but the sandbox's /tmp, the image's cache read-only: the kernels go to a private
    temporary directory seeded from it (the sweep's worker processes use it too), and the numbers are this
    checkout's."""
    here = subprocess.run([sys.executable, "-m", "simd", *argv], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)
    assert here.returncode == 0, here.stderr
    there = image.run([image.simd, *argv], env={"NUMBA_CACHE_DIR": str(built)}, timeout=600)
    assert there.returncode == 0, there.stderr
    assert there.stdout == here.stdout
    assert "kernel cache: /tmp/simd-kernels-" in there.stderr and f"seeded from the read-only {built}" in there.stderr
    assert "Traceback" not in there.stderr


def test_no_writable_directory_at_all_compiles_in_the_process(image):
    """Not even /tmp is writable: simd says it has no kernel cache (``simd compile``, which has nothing to compile
    into), and a command that runs kernels compiles them in the process, slower, never a crash: ``simd trace fit``,
    whose kernels (simd.traces.fit) are simd's like the loop, defined with the same ``njit`` (simd.engine.jit)."""
    r = image.run([image.simd, "compile"], tmp=False)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith("simd compile: error: no kernel cache: off: no writable directory"), r.stderr
    assert "Traceback" not in r.stderr
    # a log of 40 servers, 8 faults each: enough for the fit's Weibull frailty (its compiled quadrature)
    log = image.base / "faults.csv"
    rows = ["time,server,event,class"]
    for server in range(40):
        t = 1000 + 3600 * server
        for k in range(8):
            t += 400_000 + 97_000 * ((server * 7 + k * 13) % 23)
            rows += [f"{t},s{server},start,GPU", f"{t + 900 + 60 * k},s{server},end,GPU"]
            t += 900 + 60 * k
    log.write_text("\n".join(rows) + "\n")
    log.chmod(0o644)
    r = image.run([image.simd, "trace", "fit", str(log), "--servers", "50"], tmp=False)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "kernel" not in r.stderr, r.stderr
    assert r.stdout.startswith("# Fitted by `simd trace fit` to faults.csv: 320 faults"), r.stdout[:300]
    assert "lifetime: {distribution: weibull" in r.stdout, r.stdout
