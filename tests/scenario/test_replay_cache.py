"""The parsed replay logs kept between validations (simd.scenario.schema): bounded by bytes, not by count (a
cache of 16 parsed 1M-event logs held ~5 GB), holding only what a scenario uses of a log (its servers' fault
start and repair times), and a scenario keeps its own table whatever the cache drops."""

from __future__ import annotations

from support.scenarios import job, scenario_file

from simd.scenario import parse_config, schema


def write_log(path, faults: int, shift: int = 0) -> None:
    path.write_text("time,server,event,class\n" + "".join(
        f"{t},s{t % 13},start,GPU\n{t + 1},s{t % 13},end,GPU\n" for t in range(shift, shift + 4 * faults, 4)))


def replayed(log) -> str:
    return scenario_file(job("r", seed=1, n_gpus=64, failures={"hard_per_gpu_hour": 0.01, "sdc_per_gpu_hour": 0.0},
                             servers={"replay": {"log": str(log)}}))


def test_the_cache_is_bounded_by_bytes_and_a_scenario_keeps_its_table(tmp_path, monkeypatch):
    schema.forget_replay_logs()
    monkeypatch.setattr(schema, "REPLAY_CACHE_BYTES", 200_000)  # ~6,000 faults of table
    configs = []
    for i in range(4):
        log = tmp_path / f"log{i}.csv"
        write_log(log, 2000, shift=i)
        configs.append((parse_config(replayed(log)), log))
        assert schema.replay_cache_bytes() <= 200_000
    assert len(schema.replay_cache_keys()) < 4  # the oldest went out
    schema.forget_replay_logs()
    for config, log in configs:
        log.unlink()  # the scenario's own table: neither the cache nor the file is read again
        times, span = config.all_scenarios[0].servers.replay.times()
        assert sum(map(len, times)) == 2000 and span > 0
        assert config.all_scenarios[0].job_spec().servers.replay == times


def test_a_log_larger_than_the_cache_is_not_kept(tmp_path, monkeypatch):
    schema.forget_replay_logs()
    monkeypatch.setattr(schema, "REPLAY_CACHE_BYTES", 10_000)
    log = tmp_path / "big.csv"
    write_log(log, 2000)
    parse_config(replayed(log))
    assert schema.replay_cache_bytes() == 0
