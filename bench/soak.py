"""Load and soak run of ``simd run`` (not a test): prints measured numbers next to their targets.

Starts ``python -m simd run`` on the embedded configuration at speedup 3600 (a tick every second), waits for
its first tick and a warm-up, then runs three phases against it from this process (the load generator
shares the machine's cores with the daemon, as in the issue's measurements):

1. soak: ``--scrapers`` (50) concurrent scrapers, each on its own keep-alive connection, each scraping
   ``/metrics`` (gzip, as Prometheus asks) every ``--scrape-every`` (1 s) for ``--seconds`` (600);
2. burst: ``--burst-scrapers`` (200) scrapers as fast as they can for ``--burst-seconds`` (30);
3. half-open: ``--half-open`` (1000) connections held open (half of them with an unfinished request; any the
   daemon closes are reopened at once) for ``--half-open-seconds`` (30), with one scraper a second;
4. query flood: ``--flood-clients`` (20) clients back to back on ``/metrics`` with a query never asked before
   (``?u=<n>``, and every other one a new ``name[]`` selection) for ``--flood-seconds`` (30), from a process
   of their own, with one real scraper every ``--flood-scrape-every`` (0.1 s: 300 scrapes, so that the p99 is
   not simply the slowest of 30);
5. slowloris: ``--slowloris`` (1200) connections, more than the daemon's connection limit (its file
   descriptors are capped at ``--fd-limit``, 1100, so the limit is 1036), each sending one byte of a never
   ending header every 0.3 s and reopened as soon as the daemon closes it, for ``--slowloris-seconds`` (30),
   with one real scraper a second.

Throughout, a prober asks ``/healthz`` every 0.5 s, and the daemon's RSS (``/proc/<pid>/status``) is sampled
every 5 s. Per phase: scrape errors, p50/p99 scrape latency (request to last byte), the daemon's ticks,
overruns (``simd_tick_overruns_total``: slow and missed) and the ticks expected in the phase's wall time,
/healthz answers other than 200. At the end: RSS growth over the soak after the warm-up.

Targets: zero scrape errors, p99 under 100 ms and overruns under 1% of ticks in the soak, RSS
growth under 10% after warm-up; no missed tick and /healthz 200 throughout in the burst and half-open phases;
the real scraper's p99 under 50 ms and /healthz 200 throughout the query flood; under slowloris, /healthz
answering at least 95% of the probes (a probe can meet the limit just before a connection is closed).

Usage: python bench/soak.py [--seconds 600] [--warmup 30] [--burst-seconds 30] [--half-open-seconds 30]
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import multiprocessing
import os
import re
import resource
import select
import socket
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from procs import free_port, rss_bytes

ROOT = Path(__file__).resolve().parents[1]
P99_TARGET_SECONDS = 0.100
OVERRUN_TARGET = 0.01  # of ticks
RSS_GROWTH_TARGET = 0.10
FLOOD_P99_TARGET_SECONDS = 0.050


def counters(port: int) -> dict[str, float]:
    """The daemon's tick counters, from its own /metrics."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/metrics")  # the whole exposition: a name[] selection can meet the flood's 429
        body = conn.getresponse().read().decode()
    finally:
        conn.close()
    out = {"ticks": 0.0, "slow": 0.0, "missed": 0.0}
    for line in body.splitlines():
        if m := re.fullmatch(r'simd_ticks_total (\S+)', line):
            out["ticks"] = float(m.group(1))
        elif m := re.fullmatch(r'simd_tick_overruns_total\{kind="(slow|missed)"\} (\S+)', line):
            out[m.group(1)] = float(m.group(2))
    return out


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, seconds: float | None) -> None:
        with self.lock:
            if seconds is None:
                self.errors += 1
            else:
                self.latencies.append(seconds)


def scraper(port: int, until: float, every: float, tally: Tally, start_delay: float = 0.0) -> None:
    """Scrape /metrics on one keep-alive connection every ``every`` seconds (0: back to back) until ``until``."""
    time.sleep(start_delay)
    conn = None
    next_at = time.monotonic()
    while time.monotonic() < until:
        if conn is None:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        t0 = time.monotonic()
        try:
            conn.request("GET", "/metrics", headers={"Accept-Encoding": "gzip"})
            r = conn.getresponse()
            body = r.read()
            ok = r.status == 200 and gzip.decompress(body).startswith(b"# HELP")
            tally.add(time.monotonic() - t0 if ok else None)
        except (OSError, http.client.HTTPException, EOFError):
            tally.add(None)
            conn.close()
            conn = None
        if every:
            next_at += every
            time.sleep(max(0.0, next_at - time.monotonic()))
    if conn is not None:
        conn.close()


class Prober:
    """/healthz every 0.5 s on a fresh connection (as Docker's health check does): counts what is not 200."""

    def __init__(self, port: int):
        self.port, self.bad, self.total, self._stop = port, 0, 0, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=3)
            try:
                conn.request("GET", "/healthz")
                status = conn.getresponse().status
            except (OSError, http.client.HTTPException):
                status = 0
            finally:
                conn.close()
            self.total += 1
            self.bad += status != 200

    def count(self) -> tuple[int, int]:
        return self.bad, self.total


class RssSampler(threading.Thread):
    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.samples, self._stop = pid, [], threading.Event()

    def run(self) -> None:
        while not self._stop.wait(5.0):
            self.samples.append((time.monotonic(), rss_bytes(self.pid)))

    def stop(self) -> None:
        self._stop.set()


def half_open(port: int, n: int, until: float) -> int:
    """Hold ``n`` connections open until ``until``: half idle, half with an unfinished request; reopen every one
    the daemon closes. Returns how many were reopened."""
    def opened(i: int) -> socket.socket:
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        if i % 2:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        return s

    socks = {}
    poller = select.poll()  # not select(): it cannot watch descriptors above 1023
    for i in range(n):
        s = opened(i)
        socks[s.fileno()] = (i, s)
        poller.register(s, select.POLLIN)
    reopened = 0
    while time.monotonic() < until:
        for fd, _ in poller.poll(500):  # readable: the daemon closed it (or answered): reopen
            i, s = socks.pop(fd)
            poller.unregister(fd)
            s.close()
            s = opened(i)
            socks[s.fileno()] = (i, s)
            poller.register(s, select.POLLIN)
            reopened += 1
    for _, s in socks.values():
        s.close()
    return reopened


def flood(port: int, clients: int, until: float) -> int:
    """``clients`` threads back to back on /metrics, each request with a query string never used before (every
    other one a new name[] selection), in a process of their own; returns how many requests they made.

    The attackers are a separate process, as they are outside a benchmark: sharing this process's interpreter
    lock, 20 busy client threads delay the real scraper's thread here (a thread waits its turn behind them, 5 ms
    a switch), and that client-side wait was counted as the daemon's latency."""
    ctx = multiprocessing.get_context("spawn")
    made = ctx.Value("q", 0)
    proc = ctx.Process(target=_flood_clients, args=(port, clients, until, made), daemon=True)
    proc.start()
    proc.join(timeout=max(0.0, until - time.monotonic()) + 60)
    if proc.is_alive():
        proc.kill()
    return made.value


def _flood_clients(port: int, clients: int, until: float, total) -> None:
    """The flood's process: ``time.monotonic`` is the system's monotonic clock, so ``until`` holds here too."""
    made = [0] * clients

    def client(k: int) -> None:
        conn, i = None, 0
        while time.monotonic() < until:
            i += 1
            query = f"u={k}-{i}" if i % 2 else f"name[]=simd_x{k}_{i}"
            try:
                conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                conn.request("GET", f"/metrics?{query}")
                conn.getresponse().read()
                made[k] += 1
            except (OSError, http.client.HTTPException):
                if conn is not None:
                    conn.close()
                conn = None
        if conn is not None:
            conn.close()

    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(0.0, until - time.monotonic()) + 30)
    total.value = sum(made)


def slowloris(port: int, n: int, until: float) -> int:
    """``n`` connections each sending one byte of an endless header every 0.3 s; any the daemon closes is
    reopened at once. Returns how many were reopened."""
    line = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100_000
    socks: list[tuple[socket.socket | None, int]] = [(None, 0)] * n
    reopened = 0
    while time.monotonic() < until:
        for i, (s, at) in enumerate(socks):
            try:
                if s is None:
                    s = socket.create_connection(("127.0.0.1", port), timeout=2)
                    s.setblocking(False)
                    at = 0
                s.send(line[at:at + 1])
                socks[i] = (s, at + 1)
            except OSError:  # closed by the daemon, or the connect timed out at its limit: reopen next round
                if s is not None:
                    s.close()
                    reopened += 1
                socks[i] = (None, 0)
        time.sleep(0.3)
    for s, _ in socks:
        if s is not None:
            s.close()
    return reopened


def run_phase(name: str, port: int, seconds: float, scrapers: int, every: float, prober: Prober,
              holders: int = 0, attack=None) -> dict:
    before, (bad0, total0) = counters(port), prober.count()
    tally, t0 = Tally(), time.monotonic()
    until = t0 + seconds
    threads = [threading.Thread(target=scraper, args=(port, until, every, tally, every * i / max(scrapers, 1)),
                                daemon=True) for i in range(scrapers)]
    for t in threads:
        t.start()
    reopened = half_open(port, holders, until) if holders else attack(until) if attack else 0
    for t in threads:
        t.join(timeout=seconds + 30)
    wall = time.monotonic() - t0
    after, (bad1, total1) = counters(port), prober.count()
    lat = sorted(tally.latencies)
    ticks = after["ticks"] - before["ticks"]
    return {
        "phase": name, "seconds": wall, "scrapes": len(lat), "errors": tally.errors,
        "p50_ms": 1000 * statistics.median(lat) if lat else float("nan"),
        "p99_ms": 1000 * lat[min(len(lat) - 1, int(0.99 * len(lat)))] if lat else float("nan"),
        "ticks": ticks, "slow": after["slow"] - before["slow"], "missed": after["missed"] - before["missed"],
        "healthz_bad": bad1 - bad0, "healthz_total": total1 - total0, "reopened": reopened,
    }


def report(r: dict, tick_seconds: float) -> str:
    expected = r["seconds"] / tick_seconds
    over = r["slow"] + r["missed"]
    return (f"{r['phase']:<10} {r['seconds']:7.0f} s  scrapes {r['scrapes']:7d}  errors {r['errors']:3d}  "
            f"p50 {r['p50_ms']:6.1f} ms  p99 {r['p99_ms']:6.1f} ms  ticks {r['ticks']:5.0f} (of ~{expected:.0f})  "
            f"overruns {over:3.0f} (slow {r['slow']:.0f}, missed {r['missed']:.0f}; {over / max(r['ticks'], 1):.2%})  "
            f"/healthz not 200: {r['healthz_bad']} of {r['healthz_total']}"
            + (f"  reopened {r['reopened']}" if r["reopened"] else ""))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=600.0, help="soak duration (default 600)")
    p.add_argument("--warmup", type=float, default=30.0, help="seconds of scraping before the RSS baseline")
    p.add_argument("--scrapers", type=int, default=50)
    p.add_argument("--scrape-every", type=float, default=1.0, help="each soak scraper's interval, seconds")
    p.add_argument("--burst-scrapers", type=int, default=200)
    p.add_argument("--burst-seconds", type=float, default=30.0)
    p.add_argument("--half-open", type=int, default=1000)
    p.add_argument("--half-open-seconds", type=float, default=30.0)
    p.add_argument("--flood-clients", type=int, default=20)
    p.add_argument("--flood-seconds", type=float, default=30.0)
    p.add_argument("--flood-scrape-every", type=float, default=0.1, help="the real scraper's interval in the flood")
    p.add_argument("--slowloris", type=int, default=1200)
    p.add_argument("--slowloris-seconds", type=float, default=30.0)
    p.add_argument("--fd-limit", type=int, default=1100, help="the daemon's file descriptors (its connection "
                   "limit is this less 64)")
    p.add_argument("--speedup", type=float, default=3600.0)
    args = p.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, args.half_open + 512)), hard))
    port = free_port()
    cmd = [sys.executable, "-m", "simd", "run", "--listen", f"127.0.0.1:{port}", "--speedup", f"{args.speedup:g}"]
    log = open(os.devnull, "w")  # noqa: SIM115 (the daemon's log is not part of the measurement)
    limit = args.fd_limit

    def capped() -> None:  # the daemon's descriptors, so that slowloris can reach its connection limit
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log, preexec_fn=capped)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if counters(port)["ticks"] >= 1:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("simd run did not start")
            time.sleep(0.2)
        prober = Prober(port)
        prober.thread.start()
        rss = RssSampler(proc.pid)
        rss.start()
        tick = 1.0  # the embedded configuration's tick_seconds
        print(f"simd run pid {proc.pid}, speedup {args.speedup:g}, a tick every {tick:g} s; {os.cpu_count()} cores "
              f"shared with this load generator", flush=True)
        warm = run_phase("warm-up", port, args.warmup, args.scrapers, args.scrape_every, prober)
        print(report(warm, tick), flush=True)
        baseline = rss_bytes(proc.pid)
        soak = run_phase("soak", port, args.seconds, args.scrapers, args.scrape_every, prober)
        final = rss_bytes(proc.pid)
        print(report(soak, tick), flush=True)
        burst = run_phase("burst", port, args.burst_seconds, args.burst_scrapers, 0.0, prober)
        print(report(burst, tick), flush=True)
        held = run_phase("half-open", port, args.half_open_seconds, 1, 1.0, prober, holders=args.half_open)
        print(report(held, tick), flush=True)
        made = []
        flooded = run_phase("flood", port, args.flood_seconds, 1, args.flood_scrape_every, prober,
                            attack=lambda until: made.append(flood(port, args.flood_clients, until)) or 0)
        print(report(flooded, tick) + f"  flood requests {made[0]}", flush=True)
        loris = run_phase("slowloris", port, args.slowloris_seconds, 1, 1.0, prober,
                          attack=lambda until: slowloris(port, args.slowloris, until))
        print(report(loris, tick), flush=True)
        rss.stop()
        peak = max(b for _, b in rss.samples) if rss.samples else final
        growth = (final - baseline) / baseline
        print(f"RSS after warm-up {baseline / 2**20:.1f} MiB, after the soak {final / 2**20:.1f} MiB "
              f"(growth {growth:+.1%}), peak {peak / 2**20:.1f} MiB over all phases")
        overruns = (soak["slow"] + soak["missed"]) / max(soak["ticks"], 1)
        checks = [
            ("soak: zero scrape errors", soak["errors"] == 0),
            (f"soak: p99 under {P99_TARGET_SECONDS * 1000:.0f} ms", soak["p99_ms"] < P99_TARGET_SECONDS * 1000),
            (f"soak: overruns under {OVERRUN_TARGET:.0%} of ticks", overruns < OVERRUN_TARGET),
            (f"soak: RSS growth under {RSS_GROWTH_TARGET:.0%} after warm-up", growth < RSS_GROWTH_TARGET),
            ("burst: no missed tick", burst["missed"] == 0),
            ("half-open: no missed tick", held["missed"] == 0),
            ("/healthz 200 throughout", all(r["healthz_bad"] == 0 for r in (soak, burst, held))),
            (f"flood: the scraper's p99 under {FLOOD_P99_TARGET_SECONDS * 1000:.0f} ms",
             flooded["p99_ms"] < FLOOD_P99_TARGET_SECONDS * 1000),
            ("flood: /healthz 200 throughout", flooded["healthz_bad"] == 0),
            ("slowloris: /healthz 200 for 95% of the probes",
             loris["healthz_bad"] <= 0.05 * max(loris["healthz_total"], 1)),
        ]
        for what, ok in checks:
            print(f"{'ok  ' if ok else 'FAIL'} {what}")
        return 0 if all(ok for _, ok in checks) else 1
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


if __name__ == "__main__":
    sys.exit(main())
