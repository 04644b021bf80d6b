"""`simd trace stats` and `simd trace fit` at the edges of what they accept: a server with hundreds of faults (the
Poisson column in log space), logs the fit cannot use (faults all at time 0, a span outside the documented
range), `--out` paths that cannot be written, a fitted model far from its log (the goodness of fit's event budget,
under an address-space limit), and every file `trace fit` writes accepted by the real `simd check-config`. The
tests with a limit (setrlimit: address space, file size) run `python -m simd` as a process (integration).
Bad input is exit 2 with one line `simd trace ...: error: ...`; a write that fails after the work, exit 1."""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from support.cli import simd
from support.examples import examples

from simd.traces.fit import MAX_SPAN_DAYS
from simd.traces.log import parse
from simd.traces.stats import stats

DAY = 86400


def csv_log(path: Path, faults) -> Path:
    """A CSV log of (server, start seconds, end seconds or None)."""
    rows = ["time,server,event,class"]
    for server, start, end in faults:
        rows.append(f"{start},{server},start,GPU")
        if end is not None:
            rows.append(f"{end},{server},end,GPU")
    path.write_text("\n".join(rows) + "\n")
    return path


def one_line_error(r, prog: str, code: int = 2) -> str:
    """The refusal's message: one line per error found (a log with several bad lines names each, up to the
    parser's cap), each the program's error line; no traceback."""
    assert r.returncode == code, (r.returncode, r.stderr)
    lines = r.stderr.splitlines()
    assert "Traceback" not in r.stderr and lines and r.stderr.endswith("\n"), r.stderr
    assert all(line.startswith(f"simd trace {prog}: error: ") for line in lines), r.stderr
    return r.stderr


def process(*argv: str, address_space: int | None = None, file_size: int | None = None, timeout: float = 300):
    """``python -m simd ARGV`` in a subprocess under an address-space and a file-size limit (setrlimit)."""

    def limit():
        if address_space is not None:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
        if file_size is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "simd", *argv], capture_output=True, text=True, timeout=timeout,
                          preexec_fn=limit, env=env, cwd=Path(__file__).resolve().parents[2])


# --- item 8: the Poisson column in log space; logs the fit cannot use -------------------------------------------

def test_a_server_with_hundreds_of_faults_has_its_poisson_column(tmp_path):
    """171 faults on one server: mean ** k / factorial(k) overflowed a float."""
    log = csv_log(tmp_path / "many.csv", [("a", 10 * i, 10 * i + 5) for i in range(300)] + [("b", 7, 8)])
    s = stats(parse(log.read_text()), servers=4)
    mean = 301 / 4
    assert s.per_server[300] == 1 and len(s.per_server_poisson) == 301
    for k, v in s.per_server_poisson.items():
        assert v == pytest.approx(4 * sps.poisson.pmf(k, mean), rel=1e-9, abs=1e-300)
    r = simd("trace", "stats", str(log), "--servers", "4")
    assert r.returncode == 0 and "300         1" in r.stdout, r.stderr
    r = simd("trace", "stats", str(log), "--servers", "4", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["per_server"]["300"] == 1


def test_the_pngs_of_a_log_whose_faults_all_start_at_one_instant(tmp_path):
    """Every gap zero: the gaps' plot formatted a coefficient of variation that does not exist."""
    log = csv_log(tmp_path / "burst.csv", [("a", 0, 0), ("b", 0, 60), ("c", 0, None)])
    r = simd("trace", "stats", str(log), "--servers", "4", "--out", str(tmp_path / "pngs"))
    assert r.returncode == 0 and all(line.startswith("wrote ") for line in r.stderr.splitlines()), r.stderr
    assert sorted(p.name for p in (tmp_path / "pngs").iterdir()) == ["faults-per-server.png", "gaps.png",
                                                                      "repair-times.png"]


@pytest.mark.parametrize("faults, what", [
    ([("a", 0, 0), ("b", 0, 0)], "time 0"),  # every event at time 0: no span to fit a rate over
    ([("a", 0, None)], "time 0"),  # one fault at time 0, never repaired: said "math domain error"
    ([("a", 0, 50), ("b", 0, 50)], "never up"),  # every server in repair from time 0 to the log's end
])
def test_a_log_the_fit_cannot_use_is_one_line(tmp_path, faults, what):
    log = csv_log(tmp_path / "log.csv", faults)
    r = simd("trace", "fit", str(log), "--servers", str(len(faults)), "--replicas", "0")
    err = one_line_error(r, "fit")
    assert what in err and "math domain" not in err and r.stdout == ""


# --- item 9: --out --------------------------------------------------------------------------------------------

@pytest.fixture
def small_log(tmp_path) -> Path:
    return csv_log(tmp_path / "small.csv", [("a", 3600, 7200), ("b", 50_000, 60_000), ("a", 200_000, 210_000),
                                            ("c", 400_000, 500_000)])


@pytest.mark.parametrize("where", ["missing/fitted.yaml", ".", "/dev/full"])
def test_fit_out_that_cannot_be_written_is_refused_before_the_fit(small_log, tmp_path, where):
    out = where if where.startswith("/") else str(tmp_path / where)
    before = sorted(p.name for p in tmp_path.iterdir())
    r = simd("trace", "fit", str(small_log), "--servers", "4", "--replicas", "0", "--out", out)
    err = one_line_error(r, "fit")
    assert f"--out {out}: " in err and r.stdout == ""  # before the fit: nothing printed
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.integration
def test_fit_out_that_fails_while_writing_is_exit_1_and_leaves_the_file(small_log, tmp_path):
    out = tmp_path / "fitted.yaml"
    out.write_text("kept\n")
    r = process("trace", "fit", str(small_log), "--servers", "4", "--replicas", "0", "--out", str(out),
                file_size=200)  # the scenario is ~1.5 kB: its write fails with EFBIG
    err = one_line_error(r, "fit", code=1)
    assert f"--out {out}: " in err and "File too large" in err and "lifetimes:" in r.stdout
    assert out.read_text() == "kept\n" and sorted(p.name for p in tmp_path.iterdir()) == ["fitted.yaml", "small.csv"]


@pytest.mark.parametrize("where", ["file", "/proc/simd-trace-out"])
def test_stats_out_that_cannot_be_written_is_refused_before_the_statistics(small_log, tmp_path, where):
    (tmp_path / "file").write_text("a regular file\n")
    out = where if where.startswith("/") else str(tmp_path / where)
    r = simd("trace", "stats", str(small_log), "--servers", "4", "--out", out)
    err = one_line_error(r, "stats")
    assert f"--out {out}: " in err and r.stdout == ""
    assert (tmp_path / "file").read_text() == "a regular file\n"


@pytest.mark.integration
def test_stats_out_that_fails_while_writing_is_exit_1(small_log, tmp_path):
    r = process("trace", "stats", str(small_log), "--servers", "4", "--out", str(tmp_path / "pngs"), file_size=2000)
    err = one_line_error(r, "stats", code=1)
    assert "File too large" in err and "faults 4 on 3 servers" in r.stdout


# --- item 10: the goodness of fit bounded; spans outside the documented range -----------------------------------

@pytest.mark.integration
def test_a_model_far_from_its_log_stops_at_the_event_budget_under_an_address_space_limit(tmp_path):
    """One server failing 100 times within 100 s with zero-length repairs, another once a month later: the fitted
    model's synthetic logs ran for minutes past 1.8 GB and died with MemoryError."""
    log = csv_log(tmp_path / "storm.csv", [("a", i, i) for i in range(1, 101)] + [("b", 30 * DAY, 30 * DAY)])
    r = process("trace", "fit", str(log), "--servers", "4", "--replicas", "20", address_space=1 << 30)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "reached the budget of" in r.stderr, r.stderr  # the fit's report: standard error
    r = process("trace", "fit", str(log), "--servers", "4", "--replicas", "20", "--json", address_space=1 << 30)
    assert r.returncode == 0, r.stderr[-2000:]
    budget = json.loads(r.stdout)["goodness_budget"]
    assert budget["faults_per_log"] >= 101 and 0 < budget["logs_stopped"] <= 20


@pytest.mark.parametrize("days", [1e300, MAX_SPAN_DAYS * 1.01])
def test_a_span_outside_the_documented_range_is_refused(tmp_path, days):
    """A log spanning 1e300 days wrote `hard_per_gpu_hour: 0` and a 300-digit span with --replicas 0."""
    log = tmp_path / "long.json"
    ft = {"Level": "L", "Class": "GPU", "Desc": "d"}
    log.write_text(json.dumps([{"node_id": "a", "event_time": t, "event_type": kind, "fault_type": ft}
                               for t, kind in ((1.0, "fault_start"), (2.0, "fault_end"), (days, "fault_start"))]))
    out = tmp_path / "fitted.yaml"
    r = simd("trace", "fit", str(log), "--servers", "4", "--replicas", "0", "--out", str(out))
    err = one_line_error(r, "fit")
    assert "days" in err and not out.exists() and len(err) < 300


# --- item 11: every file trace fit writes is accepted by check-config --------------------------------------------

def fit_and_check(log: Path, out: Path, *flags: str) -> str:
    r = simd("trace", "fit", str(log), "--replicas", "0", "--out", str(out), *flags)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    c = simd("check-config", str(out))
    assert c.returncode == 0, (c.stderr, out.read_text())
    return out.read_text()


def test_an_estimate_at_a_bound_is_clamped_to_the_schemas_and_says_so(tmp_path):
    """A frailty shape past the schema's largest (1000) is written as 1000 and says so: four servers of 87, 100, 100
    and 116 faults at uniform times are barely over-dispersed (variance 105.7 over a mean of 100.75: the negative
    binomial's shape mean^2 / (variance - mean) ~ 2050, the fit's 2046)."""
    rng = np.random.default_rng(0)
    faults = [(server, t, t + 30) for server, count in zip("abcd", (87, 100, 100, 116), strict=True)
              for t in np.sort(rng.uniform(1, 1e7, count)).round().astype(int).tolist()]
    weak = csv_log(tmp_path / "weak.csv", sorted(faults, key=lambda f: f[1]))
    text = fit_and_check(weak, tmp_path / "weak.yaml", "--servers", "4")
    (line,) = [x for x in text.splitlines() if "gamma_shape" in x]
    assert "gamma_shape: 1000}" in line and "clamped" in line
    storm = csv_log(tmp_path / "storm.csv", [("a", i, i + 0.5) for i in range(1, 101)] + [("b", 100, 100.5)])
    text = fit_and_check(storm, tmp_path / "storm.yaml", "--servers", "4")
    hard = [x for x in text.splitlines() if "hard_per_gpu_hour" in x]
    assert hard[0].strip().startswith("hard_per_gpu_hour: 60 ") and "clamped" in hard[0]  # 1 per GPU-step of 60 s


@pytest.mark.parametrize("name", ["", "café", "Upper", "a" * 65])
def test_names_the_schema_refuses_are_refused_before_the_fit(small_log, tmp_path, name):
    r = simd("trace", "fit", str(small_log), "--servers", "4", "--name", name, "--out", str(tmp_path / "f.yaml"))
    err = one_line_error(r, "fit")
    assert "argument --name: " in err and r.stdout == "" and not (tmp_path / "f.yaml").exists()


def test_a_job_the_schema_refuses_is_refused_before_the_fit(small_log, tmp_path):
    """--servers 200000 makes a job of 200,000 servers by default: more than a scenario's cluster may hold."""
    r = simd("trace", "fit", str(small_log), "--servers", "200000", "--replicas", "0")
    err = one_line_error(r, "fit")
    assert "--n-gpus" in err and r.stdout == ""


def _subset(events: list[dict], days: float) -> list[dict]:
    return [e for e in events if e["event_time"] <= days]


def test_fitted_files_of_several_logs_pass_check_config(tmp_path, infinitehbd):
    events = json.loads(infinitehbd.read_text())
    logs = {"full": events, "first-60-days": _subset(events, 60), "first-10-days": _subset(events, 10)}
    for name, evs in logs.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(evs))
        fit_and_check(path, tmp_path / f"{name}.yaml", "--servers", "400")
        fit_and_check(path, tmp_path / f"{name}-small.yaml", "--servers", "400", "--n-gpus", "64", "--burst-seconds",
                      "3600", "--name", f"{name}-small")
    hand = {"one": [("a", 100, 200)], "open": [("a", 100, None), ("b", 300, 400)],
            "equal-repairs": [("a", 100, 160), ("b", 1000, 1060), ("c", 5000, 5060)],
            "one-second": [("a", 0.25, 0.5), ("b", 0.5, 1.0)],
            "long-repairs": [("a", 10, 3000 * DAY), ("b", 20, 20)]}
    for name, faults in hand.items():
        fit_and_check(csv_log(tmp_path / f"{name}.csv", faults), tmp_path / f"{name}.yaml", "--servers", "3")


TIMES = st.one_of(st.integers(0, 10), st.floats(0, MAX_SPAN_DAYS * DAY, allow_nan=False),
                  st.sampled_from([0.0, 1e-300, 0.5, 1.0, 60.0, MAX_SPAN_DAYS * DAY]))
FAULT = st.tuples(st.sampled_from("abcd"), TIMES, st.one_of(st.none(), st.floats(0, 10 * DAY)))


@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(faults=st.lists(FAULT, min_size=1, max_size=12), servers=st.integers(4, 6))
def test_fuzzed_logs_fit_or_are_refused_in_one_line_and_every_written_file_passes_check_config(tmp_path, faults,
                                                                                               servers):
    """Small logs with times anywhere in the range (0, subnormal, a second, a century), open and zero-length
    repairs: a fit whose file check-config accepts, or one line and exit 2; never a traceback."""
    by_server: dict[str, float] = {}
    rows = []
    for server, start, repair in sorted(faults, key=lambda f: f[1]):
        if start < by_server.get(server, 0.0):
            continue  # one fault of a type open at a time per server
        end = None if repair is None else start + repair
        rows.append((server, repr(float(start)), None if end is None else repr(end)))
        by_server[server] = math.inf if end is None else end
    log = csv_log(tmp_path / "fuzz.csv", rows)
    out = tmp_path / "fuzz.yaml"
    out.unlink(missing_ok=True)
    r = simd("trace", "fit", str(log), "--servers", str(servers), "--replicas", "2", "--out", str(out))
    assert "Traceback" not in r.stderr and r.returncode in (0, 2), r.stderr
    if r.returncode == 2:
        one_line_error(r, "fit")
        assert not out.exists()
    else:
        c = simd("check-config", str(out))
        assert c.returncode == 0, (c.stderr, out.read_text())
