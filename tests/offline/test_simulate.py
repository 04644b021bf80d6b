"""`simd simulate`'s table: columns never run together, whatever the width of a value."""

import json
import re
import sys
from pathlib import Path

import pytest
from support.cli import simd

import simd.offline.simulate as simulate_mod
from simd.engine import JobResult
from simd.offline.simulate import COLUMNS, HEADER, Outcome, mean_row, parse_seeds, table_row
from simd.scenario import load_config

BUCKETS = {"productive": 1.0e7, "rollback": 2.0e7, "checkpoint": 0.0, "validation": 0.0, "restart": 7.0e6,
           "detection": 0.0, "straggler": 0.0}


def outcome(name: str, interruptions: int, wall: float, counts: int = 98765432, seed: int = 12345678) -> Outcome:
    job = JobResult(job=0, target_steps=100, step_seconds=60.0, recompute_steps=123456789,
                    interruptions=interruptions, interruptions_by_cause={"hardware": interruptions},
                    sdc_detected=counts, sdc_baked=counts // 80, checkpoints=4, wall_seconds=wall,
                    bucket_seconds=BUCKETS)
    return Outcome(name, seed, 100, job, 1e9)


def test_every_cell_stays_separate_with_wide_values():
    rows = [table_row(outcome("a-scenario-name-longer-than-its-column", 10505, 3.7e7)),
            table_row(outcome("s", 3, 60.0)), mean_row("s", [outcome("s", 10**9, 3.6e10)] * 2)]
    for row in rows:
        assert len(row.split()) == len(COLUMNS), row
    assert rows[0].split()[5:8] == ["10505", "98765432", "1234567"]


def test_rows_align_while_values_fit():
    row = table_row(outcome("s", 3, 3.7e7, counts=80, seed=7))
    assert len(row) == len(HEADER) and row.split() == ["s", "7", "27.0%", "54.1%", "0.0%", "3", "80", "1", "10277.78"]


def test_the_scenario_column_widens_to_the_longest_name_run():
    """A name longer than the column's 15 characters (docs/examples/two-tiers.yaml's peer-and-local-software-kept):
    every row, the mean's too, stays under the header's columns, as the command prints them."""
    from simd.offline.simulate import MeanRow, header, name_width

    names = ["peer-only", "peer-and-local-software-kept"]
    width = name_width(names)
    assert width == 28 and name_width(["s"]) == COLUMNS[0][1]
    mean = MeanRow(names[1], width)
    mean.add(outcome(names[1], 3, 3.7e7, counts=80))
    rows = [table_row(outcome(n, 3, 3.7e7, counts=80, seed=7), width) for n in names] + [mean.row()]
    head = header(width)
    ends = [width + sum(w + 1 for _, w in COLUMNS[1:k + 1]) for k in range(1, len(COLUMNS))]
    assert all(head[e - 1] != " " for e in ends)  # each title ends where its column does
    for row in rows:
        assert len(row) == len(head), row
        assert all(row[e - 1] != " " for e in ends), row  # ... and each cell under it


def test_seed_ranges_are_lazy_and_bounded():
    seeds = parse_seeds("100000000")
    assert len(seeds) == 10**8 and seeds[-1] == 10**8 - 1 and sys.getsizeof(seeds) < 100
    assert parse_seeds("3..5") == range(3, 6)
    for bad, msg in (("0", "N must be in 1..2^63"), ("5..2", "A <= B"), ("1..9223372036854775808", "B must be < 2^63"),
                     ("1" * 25, "expected N or A..B")):
        with pytest.raises(ValueError, match=re.escape(msg)) as exc:
            parse_seeds(bad)
        assert len(str(exc.value)) < 120


def test_the_running_mean_row_is_the_mean_of_the_rows():
    outcomes = [outcome("s", k, 3.7e7 + k * 3600.0, counts=80 + k, seed=k) for k in range(5)]
    assert mean_row("s", outcomes).split() == ["s", "mean", "27.0%", "54.0%", "0.0%", "2.00", "82.00", "1.00",
                                               "10279.78"]


BOUNDS = Path(__file__).resolve().parents[1] / "data" / "bounds-servers.yaml"


def test_a_job_past_its_work_horizon_stops_with_a_clear_line_whatever_the_ticks(monkeypatch):
    """Servers at their bounds (bursts of ~10,000 servers): a job that would run for days of CPU stops at the
    documented work horizon, reported unfinished with a line that says so, at the same simulated time with or
    without --tick-seconds; the warning names the horizon and the exit code is 1 (an unfinished job)."""
    monkeypatch.setattr(simulate_mod, "HORIZON_WORK_US", 0.5e6)  # 0.5 s of estimated engine work: a quick test
    rows = [simd("simulate", "--config", str(BOUNDS), "--json", *tick) for tick in ((), ("--tick-seconds", "3000"))]
    for r in rows:
        assert r.returncode == 1
        assert "stopped at the work horizon, 0.5 s of estimated engine work each, unfinished" in r.stderr
        line = json.loads(r.stdout)
        assert line["completed"] is False and line["stopped"] == "work horizon"
        assert 0 < line["wall_seconds"] < simulate_mod.simulation_limit_us(load_config(BOUNDS).scenarios[0]) / 1e6
    assert rows[0].stdout == rows[1].stdout
    table = simd("simulate", "--config", str(BOUNDS)).stdout.splitlines()[1]
    assert re.search(r"stopped at the work horizon \(0.5 s of estimated engine work\) at simulated hour \d+", table)


class _Clock:
    def __init__(self, step: float):
        self.t, self.step = 0.0, step

    def __call__(self) -> float:
        self.t += self.step
        return self.t


@pytest.mark.parametrize("tty", [False, True])
def test_long_work_shows_progress_on_stderr_and_quick_work_none(monkeypatch, tty):
    """Progress of a long job on stderr: on a terminal a line rewritten in place, otherwise a line every ten
    seconds once a job has run for ten (a clock that moves 3 s per call here); a quick run (a clock that does
    not move) prints nothing."""
    import io

    from simd.cli import progress

    monkeypatch.setattr(simulate_mod, "HORIZON_WORK_US", 0.3e6)

    class Err(io.StringIO):
        def isatty(self):
            return tty

    for step, shown in ((3.0, True), (0.0, False)):
        err = Err()
        monkeypatch.setattr(progress.sys, "stderr", err)
        monkeypatch.setattr(progress.time, "monotonic", _Clock(step))
        config = load_config(BOUNDS)
        line = progress.ProgressLine(clock=_Clock(step))
        out = list(simulate_mod.run_all(config, None, None, None, line))
        line.clear()
        assert out[0].horizon_seconds is not None
        text = err.getvalue()
        assert ("simd simulate: bounds seed 5: simulated hour" in text) == shown, text
        assert ("% of the work horizon" in text) == shown
        if shown and tty:
            assert "\r" in text and text.endswith("\r\x1b[K")
        if shown and not tty:
            assert text.count("\n") >= 2 and "\r" not in text
