"""`simd simulate`'s table: columns never run together, whatever the width of a value."""

import re
import sys

import pytest

from simd.engine import JobResult
from simd.offline.simulate import COLUMNS, HEADER, Outcome, mean_row, parse_seeds, table_row

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
