"""The state directory against a hostile operator: what is planted in it (FIFOs, directories, symbolic links,
deeply nested or sparse files, a removed lock) is refused or moved aside, never followed and never blocking,
and a state file with a valid checksum is still checked field by field before the engine continues from it."""

from __future__ import annotations

import errno
import logging
import os
import threading
import tracemalloc

import pytest
from support.daemon import FakeClock
from support.scenarios import SMALL_YAML

from simd.engine.hazard import NEVER
from simd.live import persist
from simd.live.persist import StateDir, StateDirBusy, decode, document, encode, resume
from simd.live.ticker import Ticker
from simd.scenario import parse_config

START = 1000.0


def ticked() -> Ticker:
    clock = FakeClock(START)
    t = Ticker(parse_config(SMALL_YAML), clock=clock, wall=lambda: 1.7e9)
    clock.t = START + 2.0
    t.tick()
    return t


def saved(t: Ticker) -> bytes:
    return encode(*t.saved(), wall=1.7e9)


def load_within(d: StateDir, seconds: float = 10.0):
    """d.load() in a thread: what it returned, or a failure if it blocked (a FIFO opened for reading waits for a
    writer forever)."""
    out: list = []
    thread = threading.Thread(target=lambda: out.append(d.load()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "loading the state blocked"
    return out[0]


@pytest.fixture
def state_dir(tmp_path):
    d = StateDir(tmp_path / "state").open()
    yield d
    d.close()


def _moved_aside(d: StateDir, caplog, why: str) -> None:
    with caplog.at_level(logging.WARNING, logger="simd.live.persist"):
        assert load_within(d) is None
    assert not os.path.lexists(d.file)
    assert len(list(d.path.glob("state.json.bad-*"))) == 1
    assert why in caplog.text and "starting fresh" in caplog.text


def test_a_fifo_as_the_state_file_is_moved_aside_without_blocking(state_dir, caplog):
    os.mkfifo(state_dir.file)
    _moved_aside(state_dir, caplog, "not a regular file (a FIFO)")


def test_a_directory_as_the_state_file_is_moved_aside(state_dir, caplog):
    state_dir.file.mkdir()
    (state_dir.file / "x").write_text("x")
    _moved_aside(state_dir, caplog, "not a regular file (a directory)")


def test_a_deeply_nested_state_file_is_moved_aside(state_dir, caplog):
    state_dir.file.write_bytes(b"[" * 200_000 + b"]" * 200_000)
    _moved_aside(state_dir, caplog, "not JSON (RecursionError")


def test_a_symlinked_state_file_is_moved_aside_and_its_target_untouched(state_dir, tmp_path, caplog):
    target = tmp_path / "elsewhere.json"
    target.write_bytes(saved(ticked()))
    before = target.read_bytes()
    state_dir.file.symlink_to(target)
    _moved_aside(state_dir, caplog, "a symbolic link")
    assert target.read_bytes() == before


def test_a_sparse_gigabyte_state_file_is_refused_unread(state_dir, caplog):
    with open(state_dir.file, "wb") as f:
        f.truncate(1 << 30)
    tracemalloc.start()
    try:
        _moved_aside(state_dir, caplog, f"larger than {persist.MAX_STATE_BYTES} bytes")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 << 20  # nothing of the gigabyte was read


def test_a_symlinked_lock_file_leaves_its_target_unchanged(tmp_path):
    target = tmp_path / "precious"
    target.write_text("do not overwrite\n")
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "lock").symlink_to(target)
    d = StateDir(tmp_path / "state").open()
    try:
        assert target.read_text() == "do not overwrite\n"
        assert not (tmp_path / "state" / "lock").is_symlink()
        assert (tmp_path / "state" / "lock").read_text() == f"{os.getpid()}\n"
    finally:
        d.close()


def test_a_symlink_planted_as_the_temporary_file_receives_nothing(state_dir, tmp_path):
    target = tmp_path / "precious"
    target.write_text("do not overwrite\n")
    for name in (f".state.json.tmp-{os.getpid()}", ".state.json.tmp-1", ".state.json.tmp-x"):
        (state_dir.path / name).symlink_to(target)  # the names a predictable scheme would use
    state_dir.save(saved(ticked()))
    assert target.read_text() == "do not overwrite\n"
    assert decode(state_dir.file.read_bytes())["simulated_us"] > 0
    state_dir.close()
    StateDir(state_dir.path).open().close()  # the next start removes the links (never their target)
    assert target.read_text() == "do not overwrite\n"
    assert sorted(p.name for p in state_dir.path.iterdir()) == ["lock", "state.json"]


def test_removing_the_lock_file_admits_no_second_daemon(state_dir):
    (state_dir.path / "lock").unlink()
    with pytest.raises(StateDirBusy, match="in use by another simd run"):
        StateDir(state_dir.path).open()


def test_a_failed_save_leaves_the_previous_state_and_no_partial_file(state_dir, monkeypatch):
    t = ticked()
    state_dir.save(saved(t))
    before = state_dir.file.read_bytes()

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(persist.os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        state_dir.save(saved(t) + b" " * 100)
    assert state_dir.file.read_bytes() == before
    assert sorted(p.name for p in state_dir.path.iterdir()) == ["lock", "state.json"]


# --- a valid checksum is not enough ------------------------------------------------------------------------

def _payload():
    t = ticked()
    return t, decode(saved(t))


def test_a_histogram_of_another_length_starts_that_scenario_fresh(caplog):
    t, payload = _payload()
    lane = payload["lanes"][0]
    lane["state"]["totals"]["step_hist"] = [h + [0] for h in lane["state"]["totals"]["step_hist"]]
    with caplog.at_level(logging.WARNING, logger="simd.live.persist"):
        lanes = resume(decode(document(payload)), parse_config(SMALL_YAML)).lanes
    assert lanes[0].states[0].clock == 0 and lanes[1].states == t.lanes[1].states
    assert "totals.step_hist has" in caplog.text
    r = Ticker(parse_config(SMALL_YAML), clock=FakeClock(0.0), wall=lambda: 1.7e9, lanes=lanes,
               at_us=t.snapshot.simulated_us)
    r.tick()  # and ticks go on: nothing the engine or the metrics cannot use was loaded


@pytest.mark.parametrize("field, value, why", [
    ("clock", -5, "outside 0..the snapshot's time"),
    ("clock", 10**24, "outside 0..the snapshot's time"),
    ("g", -1, "outside 0.."),
    ("job_start_g", NEVER + 1, f"outside 0..{NEVER}"),
])
def test_a_replica_outside_the_engine_s_ranges_starts_that_scenario_fresh(caplog, field, value, why):
    t, payload = _payload()
    column = payload["lanes"][0]["state"][field]
    column[0] = value
    with caplog.at_level(logging.WARNING, logger="simd.live.persist"):
        lanes = resume(decode(document(payload)), parse_config(SMALL_YAML)).lanes
    assert lanes[0].states[0].clock == 0 and lanes[1].states == t.lanes[1].states
    assert why in caplog.text


@pytest.mark.parametrize("value", [-1, 10**24, 1.5, "0"])
def test_a_shared_clock_outside_its_range_is_refused(value):
    _, payload = _payload()
    payload["simulated_us"] = value
    with pytest.raises(persist.StateError, match="simulated_us must be an integer"):
        resume(decode(document(payload)), parse_config(SMALL_YAML))


@pytest.mark.parametrize("damage, why", [
    (lambda lane: lane["state"]["clock"].__setitem__(0, True), "State.clock.0: Input should be a valid integer"),
    (lambda lane: lane["state"]["totals"]["checkpoints"].__setitem__(1, 2.0), "State.totals.checkpoints.1: Input "
                                                                             "should be a valid integer"),
    (lambda lane: lane["state"]["hard"].__setitem__(0, [1, 2, 3]), "State.hard.0: Tuple should have at most 2"),
    (lambda lane: lane["state"].__setitem__("planted_" + "x" * 300, [0] * len(lane["seeds"])),
     "State: a field the engine does not declare"),
    (lambda lane: lane["state"].pop("g"), "State.g: Field required"),
    (lambda lane: lane["state"]["t"].pop(), "State: expected 3 values per field"),
    (lambda lane: lane["spec"].__setitem__("n_gpus", "1024"), "spec.n_gpus: Input should be a valid integer"),
    (lambda lane: lane["spec"].__setitem__("causes", [{"name": "x"}]), "spec.causes.0.share: Field required"),
])
def test_a_field_of_the_wrong_type_starts_that_scenario_fresh_saying_where(caplog, damage, why):
    """The typed decoding (pydantic over the engine's declarations) refuses what does not fit, in one line that
    says where and never repeats what the file holds."""
    t, payload = _payload()
    lane = payload["lanes"][3]  # sw-10: three replicas
    assert len(lane["seeds"]) == 3
    damage(lane)
    with caplog.at_level(logging.WARNING, logger="simd.live.persist"):
        lanes = resume(decode(document(payload)), parse_config(SMALL_YAML)).lanes
    assert lanes[3].states[0].clock == 0 and lanes[0].states == t.lanes[0].states
    (line,) = [r.getMessage() for r in caplog.records if "cannot be resumed" in r.getMessage()]
    assert why in line and "xxx" not in line and "1024" not in line
