"""`simd trace` as a user meets it: the faults-per-server table elided past its tail (every count is in --json),
`simd trace fit FILE > my.yaml` giving a scenario file (the tables on standard error), and the goodness of fit as
PNGs (`--plots`: the log's curves beside the fitted model's range)."""

import json
import subprocess
import sys

import numpy as np
import pytest
from support.cli import simd

from simd.traces.fit import fit
from simd.traces.log import load, parse
from simd.traces.scenario import goodness
from simd.traces.stats import per_server_rows, stats, table
from simd.traces.synth import Model, OverBudget, columns, generate


def _skewed_log() -> str:
    """Server a fails 110 times, b 3 times, c and d once, on a cluster of 50: counts 0, 1, 3 and 110."""
    rows = ["time,server,event,class"]
    t = 0
    for server, n in (("a", 110), ("b", 3), ("c", 1), ("d", 1)):
        for _ in range(n):
            rows += [f"{t},{server},start,GPU", f"{t + 5},{server},end,GPU"]
            t += 10
    return "\n".join(rows) + "\n"


def test_the_faults_per_server_table_elides_the_empty_tail_and_json_keeps_every_count():
    s = stats(parse(_skewed_log()), servers=50)
    assert len(s.per_server) == 111 and s.per_server[110] == 1 and s.per_server[50] == 0  # the full data
    text = table(s)
    body = [line for line in text.splitlines() if line.startswith("  ") and "k faults" not in line]
    assert len(body) < 15, text
    rows = {label: (servers, expected) for label, servers, expected in per_server_rows(s)}
    # every row holding servers, or an expected count of at least half a server, is shown
    assert rows["0"][0] == 46 and rows["1"][0] == 2 and rows["3"][0] == 1 and rows["110"][0] == 1
    assert "50" not in rows and "    ..." in text
    assert sum(v for v, _ in rows.values()) == 50
    js = json.loads(json.dumps(s.as_json()))
    assert js["per_server"]["50"] == 0 and len(js["per_server"]) == 111


def test_the_gaps_pngs_title_counts_the_bursts_of_the_window_the_text_does():
    """With --burst-seconds the bursts are the gaps within the window (one definition): gaps.png's title says
    so, as the text's gaps line does, not only the zero gaps."""
    from simd.traces.plots import gaps_title
    rows = ["time,server,event,class"] + [f"{t},s{i},start,GPU" for i, t in enumerate((0, 0, 100, 5000, 9000))]
    log = parse("\n".join(rows) + "\n")
    assert gaps_title(stats(log, servers=10)).endswith("1 of 4 are zero (bursts)")
    windowed = stats(log, servers=10, burst_seconds=600)
    assert windowed.burst_gaps == 2
    assert gaps_title(windowed).endswith("1 of 4 are zero, 2 within the burst window (600 s)")
    assert "2 within the burst window (600 s)" in table(windowed)


def test_a_class_with_control_characters_is_printed_escaped_never_raw():
    """A log's class is its own text: an escape sequence in it (setting a terminal's title here) is shown escaped
    in trace stats' classes line, as errors quote values; printable names as they are."""
    log = parse("start,end,server,class\n100,150,n1,GPU\x1b]0;pwned\x07\n200,300,n2,GPU\n")
    text = table(stats(log))
    assert "\x1b" not in text and "\x07" not in text
    assert "classes: 'GPU\\x1b]0;pwned\\x07' 1 (50%), GPU 1 (50%)" in text


def test_a_long_tail_of_counts_ends_in_one_row_summing_it():
    """40 servers, each with its own count 1..40 (and 10 with none): more rows than the table holds; the last
    row sums every count from its k to the most, servers and expected alike."""
    rows, t = ["time,server,event,class"], 0
    for i in range(1, 41):
        for _ in range(i):
            rows += [f"{t},s{i},start,GPU", f"{t + 1},s{i},end,GPU"]
            t += 2
    s = stats(parse("\n".join(rows) + "\n"), servers=50)
    shown = per_server_rows(s)
    label, servers, expected = shown[-1]
    lo, hi = (int(x) for x in label.split("-"))
    assert hi == 40 and servers == sum(v for k, v in s.per_server.items() if k >= lo)
    assert expected == pytest.approx(sum(v for k, v in s.per_server_poisson.items() if k >= lo))
    assert sum(v for _, v, _ in shown) == 50 and len(shown) <= 16
    assert f"  {label:>8s}" in table(s)


def test_the_stats_command_prints_the_elided_table(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text(_skewed_log())
    r = simd("trace", "stats", str(log), "--servers", "50")
    assert r.returncode == 0 and len(r.stdout.splitlines()) < 20, r.stdout


@pytest.mark.integration
def test_fit_to_standard_output_is_a_scenario_file_check_config_accepts(tmp_path, infinitehbd):
    """`simd trace fit FILE > my.yaml` as a shell runs it: standard output a file, the fit's tables on standard
    error; the file is one `simd check-config` accepts."""
    out = tmp_path / "my.yaml"
    with out.open("w") as f:
        r = subprocess.run([sys.executable, "-m", "simd", "trace", "fit", str(infinitehbd), "--servers", "400",
                            "--replicas", "5"], stdout=f, stderr=subprocess.PIPE, text=True, timeout=300)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "lifetimes: weibull" in r.stderr and "inside" in r.stderr  # the fit's table and the goodness of fit
    assert out.read_text().startswith("# Fitted by `simd trace fit`")
    check = subprocess.run([sys.executable, "-m", "simd", "check-config", str(out)],
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_goodness_of_fits_curves_are_the_logs_beside_the_models(infinitehbd):
    log = load(infinitehbd)
    f = fit(log, 400)
    g = goodness(f, log, 30, curves=True)
    assert g.rows == goodness(f, log, 30).rows  # the curves draw nothing from the replicas' random numbers
    assert set(g.curves) == {"gaps", "per_server", "repairs"}
    per = g.curves["per_server"]
    assert [per.log[k] for k in (0, 1, 6, 14, 15)] == [400, 231, 23, 1, 0] and per.x[-1] == 2 * 14 + 1
    gaps = g.curves["gaps"]
    times = sorted(e["event_time"] for e in json.loads(infinitehbd.read_text()) if e["event_type"] == "fault_start")
    longer = [sum(b - a >= x for a, b in zip(times, times[1:], strict=False)) / 583 for x in gaps.x[[0, 1, 50]]]
    assert gaps.log[0] == 1.0 and list(gaps.log[[0, 1, 50]]) == pytest.approx(longer, abs=1e-9)
    repairs = g.curves["repairs"]
    assert repairs.log[-1] == 1.0 and repairs.log[np.searchsorted(repairs.x, 0.8496)] == pytest.approx(0.5, abs=0.01)
    for c in g.curves.values():
        assert len(c.x) == len(c.log) == len(c.low) == len(c.high) and (c.low <= c.median).all() \
            and (c.median <= c.high).all()
    # the model's: every synthetic log has its cluster's 400 servers, and most have a server of 0 faults
    assert per.low[0] == per.high[0] == 400 and 140 <= per.median[0] - per.median[1] <= 185


def test_fit_plots_writes_three_pngs(tmp_path, infinitehbd):
    r = simd("trace", "fit", str(infinitehbd), "--servers", "400", "--replicas", "10", "--plots",
             str(tmp_path / "pngs"))
    assert r.returncode == 0, r.stderr
    names = {"fit-gaps.png", "fit-faults-per-server.png", "fit-repair-times.png"}
    assert {p.name for p in (tmp_path / "pngs").iterdir()} == names
    for name in names:
        assert (tmp_path / "pngs" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"wrote {tmp_path / 'pngs' / name}" in r.stderr
    assert r.stdout.startswith("# Fitted by")


def test_fit_plots_refused_in_one_line_before_any_work(tmp_path, infinitehbd):
    r = simd("trace", "fit", str(infinitehbd), "--servers", "400", "--replicas", "0", "--plots", str(tmp_path))
    assert (r.returncode, r.stdout) == (2, "") and r.stderr.count("\n") == 1 and "--replicas 0" in r.stderr
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = simd("trace", "fit", str(infinitehbd), "--servers", "400", "--plots", str(blocker))
    assert (r.returncode, r.stdout) == (2, "") and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"simd trace fit: error: --plots {blocker}: cannot write there")


def test_synthetic_logs_as_arrays_are_the_logs_generate_gives():
    """The goodness of fit reads synth.columns' arrays; the fit's recovery tests synth.generate's FaultLog: the same
    draws, the same faults and statistics."""
    m = Model(lifetime_scale_days=20.0, lifetime_shape=0.6, gamma_shape=1.2, repair_median_days=2.0, repair_sigma=1.0,
              burst_per_day=0.3, burst_mean_size=3.0, classes={"gpu": 0.7, "nic": 0.3})
    c = columns(m, 50, 100.0, np.random.default_rng(7))
    log = generate(m, 50, 100.0, np.random.default_rng(7))
    assert len(log.faults) == len(c.start) > 100 and c.end[np.isnan(c.end)].size > 0  # some repairs still open
    assert [(f.server, f.start, f.end) for f in log.faults] == \
        [(s, t, None if np.isnan(e) else e) for s, t, e in zip(c.server.tolist(), c.start.tolist(), c.end.tolist(),
                                                                 strict=True)]
    assert stats(c, 50, 60.0) == stats(log, 50, 60.0)
    # a server's faults never overlap: each starts after the one before ends (a strike in repair misses it)
    for s in range(50):
        mine = [f for f in log.faults if f.server == s]
        assert all(b.start >= a.end for a, b in zip(mine, mine[1:], strict=False))
    with pytest.raises(OverBudget):
        columns(m, 50, 100.0, np.random.default_rng(7), budget=len(log.faults) - 1)
