"""`simd simulate`'s table: columns never run together, whatever the width of a value."""

from simd.engine import JobResult
from simd.simulate import COLUMNS, HEADER, Outcome, mean_row, table_row

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
