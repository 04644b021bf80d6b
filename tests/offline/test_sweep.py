"""The sweep's core: run_point, the statistics, the order-independence of the executors, the adaptive stopping
rule, the files, and the command's refusals."""

import contextlib
import csv
import io
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import simd
from support.scenarios import SWEEP_SMALL as SMALL

from simd import cli
from simd.engine import BUCKETS
from simd.executors import LocalPool, Serial
from simd.offline.simulate import simulate
from simd.offline.sweep import outputs as sweepout
from simd.offline.sweep import run as sweep
from simd.offline.sweep.grid import grid, parse_params
from simd.offline.sweep.run import ReplicaResult, Runner, adaptive_sweep, fixed_sweep, next_count, run_point
from simd.offline.sweep.stats import mean_ci, summarize, t_quantile
from simd.scenario import parse_config

# ---- run_point and the statistics


def test_run_point_is_simulate_per_seed_in_order(small):
    results = run_point(small, [5, 3, 9])
    assert [r.seed for r in results] == [5, 3, 9]
    for r in results:
        j = simulate(small, r.seed).job
        assert r.completed and r.effective_utilization == j.effective_utilization
        assert r.bucket_shares == tuple(j.bucket_seconds[b] / j.wall_seconds for b in BUCKETS)
        assert math.fsum(r.bucket_shares) == pytest.approx(1.0, abs=1e-12)  # every second in one bucket
        assert (r.interruptions, r.sdc_detected, r.sdc_baked) == (j.interruptions, j.sdc_detected, j.sdc_baked)


@pytest.mark.parametrize("df,t", [(1, 12.7062), (2, 4.3027), (5, 2.5706), (10, 2.2281), (29, 2.0452),
                                  (120, 1.9799), (1000, 1.9623), (5000, 1.9604)])
def test_t_quantile_matches_the_tables(df, t):
    # t(0.975, df) from Abramowitz & Stegun table 26.10 / NIST e-Handbook 1.3.6.7.2 (1000 and 5000 from the
    # expansion A&S 26.7.5, which the exact value at 1000 checks)
    assert t_quantile(df) == pytest.approx(t, abs=5e-5)


def test_mean_ci_small_samples():
    m, sd, half = mean_ci([1.0, 2.0, 3.0])
    assert (m, sd) == (2.0, 1.0) and half == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)
    assert mean_ci([0.5])[2] == math.inf
    assert mean_ci([0.5, 0.5]) == (0.5, 0.0, 0.0)


def test_summarize_leaves_unfinished_replicas_out():
    shares = (0.8, 0.1, 0.05, 0.05) + (0.0,) * (len(BUCKETS) - 4)  # productive, rollback, checkpoint, validation
    done = ReplicaResult(1, True, 0.8, shares, 3, 1, 0, 3600.0)
    undone = ReplicaResult(2, False, math.nan, (math.nan,) * len(BUCKETS), 0, 0, 0, 1e9)
    s = summarize([done, undone])
    assert (s.n, s.unfinished, s.utilization_mean, s.interruptions_mean, s.wall_hours_mean) == (1, 1, 0.8, 3, 1.0)
    assert s.shares["rollback"] == 0.1


# ---- executors: the same numbers whichever runs the tasks


def _points(small, *params):
    return grid(small, parse_params(list(params)))


class Reversed:
    """An executor that finishes the tasks in reverse order (as a cluster may)."""

    workers = 3

    def __call__(self, fn, jobs):
        for key, args in reversed(jobs):
            yield key, fn(*args)


def test_tasks_cover_each_point_in_runs_of_consecutive_seeds():
    tasks = sweep.plan_tasks({0: range(10, 27), 1: range(5, 9)}, workers=2)
    # 21 replicas on 2 workers: ceil(21 / 16) = 2 per task
    assert [t.seeds for t in tasks if t.points == (0,)] == [tuple(range(k, min(k + 2, 27))) for k in range(10, 27, 2)]
    assert [t.seeds for t in tasks if t.points == (1,)] == [(5, 6), (7, 8)]
    assert sweep.chunk_size(20_000, 2) == sweep.MAX_TASK_REPLICAS


def test_completion_order_does_not_change_the_results(small):
    points = _points(small, "checkpoint.interval_steps=20,80")
    a = fixed_sweep(Runner(points, Serial(), 1), 3, 9)
    b = fixed_sweep(Runner(points, Reversed(), Reversed.workers), 3, 9)
    assert a == b
    assert [r.seed for r in a[0].replicas] == list(range(3, 12))


def test_local_pool_equals_serial(small):
    points = _points(small, "checkpoint.interval_steps=20,80", "recovery.strategy=cold,warm")
    serial = fixed_sweep(Runner(points, Serial(), 1), 0, 7)
    pool = LocalPool(2)
    try:
        local = fixed_sweep(Runner(points, pool, pool.workers), 0, 7)
    finally:
        pool.close()
    assert local == serial  # every replica and every statistic, bit for bit
    assert len({r.stats.utilization_mean for r in serial}) == 4  # the points differ


def test_common_random_numbers_same_seeds_at_every_point(small):
    results = fixed_sweep(Runner(_points(small, "checkpoint.seconds=30,90"), Serial(), 1), 40, 4)
    assert [r.seed for r in results[0].replicas] == [r.seed for r in results[1].replicas] == [40, 41, 42, 43]


def test_progress_reports_planned_and_done(small):
    seen = []
    fixed_sweep(Runner(_points(small, "checkpoint.seconds=30,90"), Serial(), 1,
                       progress=lambda planned, done: seen.append((planned, done))), 0, 3)
    assert seen[0] == (6, 0) and seen[-1] == (6, 6) and len(seen) == 1 + len(sweep.plan_tasks(
        {0: range(3), 1: range(3)}, 1, [(0, 1)]))  # the two points share their step durations: one group


# ---- adaptive mode


def spread_point(scenario, seeds):
    """A fake run_point: utilization 0.5 + spread * u(seed), u a fixed pseudo-random pattern in [-1, 1] and
    spread = checkpoint seconds / 1000, so the points need different numbers of replicas."""
    spread = scenario.checkpoint.seconds / 1000.0
    u = [0.5 + spread * (((s * 7919) % 201) / 100.0 - 1.0) for s in seeds]
    return [ReplicaResult(s, True, x, (x,) + ((1 - x) / (len(BUCKETS) - 1),) * (len(BUCKETS) - 1), 0, 0, 0, 1.0)
            for s, x in zip(seeds, u, strict=True)]


def test_adaptive_stops_at_the_first_round_within_the_target(small):
    points = _points(small, "checkpoint.seconds=0,10,60")
    target = 0.002
    results = adaptive_sweep(Runner(points, Serial(), 1, fn=spread_point), 0, target, max_replicas=10_000)
    values = [[r.effective_utilization for r in spread_point(p.scenario, range(20_000))] for p in points]
    # zero spread: done after the first round of ADAPTIVE_START
    assert results[0].rounds == (sweep.ADAPTIVE_START,) and results[0].stats.utilization_half_width == 0.0
    for r, v in zip(results, values, strict=True):
        n = r.stats.n
        assert r.rounds[-1] == n and not r.hit_cap
        assert r.stats.utilization_half_width <= target
        for before, after in zip(r.rounds, r.rounds[1:], strict=False):  # every earlier round was short of it
            half = mean_ci(v[:before])[2]
            assert half > target
            assert after == next_count(before, half, target, 10_000)
        assert r.stats == summarize(spread_point(r.point.scenario, range(n)))  # seeds 0 .. n-1
    assert results[2].stats.n > results[1].stats.n > results[0].stats.n


def test_adaptive_reports_points_at_the_cap(small):
    points = _points(small, "checkpoint.seconds=0,60")
    results = adaptive_sweep(Runner(points, Serial(), 1, fn=spread_point), 0, 1e-6, max_replicas=50)
    assert [r.hit_cap for r in results] == [False, True]
    assert results[1].stats.n == 50 and results[1].rounds == (10, 20, 40, 50)


def test_next_count_rule():
    assert next_count(10, 0.001, 0.002, 100) == 10  # within the target
    assert next_count(100, 0.01, 0.002, 100) == 100  # at the cap
    assert next_count(10, 0.01, 0.002, 1000) == 20  # would need 250: at most doubling
    assert next_count(100, 0.00201, 0.002, 1000) == 110  # would need 101: at least a tenth more
    assert next_count(40, 0.003, 0.002, 1000) == 80 and next_count(80, 0.0022, 0.002, 1000) == 97
    assert next_count(1, math.inf, 0.002, 1000) == 2


def test_adaptive_on_the_engine_equals_a_fixed_sweep_of_the_same_size(small):
    points = _points(small, "checkpoint.interval_steps=20,200")
    adaptive = adaptive_sweep(Runner(points, Serial(), 1), 0, 0.02, max_replicas=400)
    for r in adaptive:
        assert r.stats.utilization_half_width <= 0.02 and not r.hit_cap
        fixed = fixed_sweep(Runner([r.point], Serial(), 1), 0, r.stats.n)[0]
        assert fixed.stats == r.stats and fixed.replicas == r.replicas


# ---- files and table


def test_csv_and_json_columns(small, tmp_path):
    params = parse_params(["checkpoint.interval_steps=20,80", "recovery.strategy=cold,warm"])
    results = fixed_sweep(Runner(grid(small, params), Serial(), 1), 0, 3)
    sweepout.write_csv(tmp_path / "s.csv", params, results)
    with open(tmp_path / "s.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["checkpoint.interval_steps", "recovery.strategy", "n", "unfinished", "utilization_mean",
                             "utilization_ci_low", "utilization_ci_high", "utilization_ci_half_width",
                             "utilization_sd", *(f"share_{b}" for b in BUCKETS), "interruptions_mean",
                             "sdc_detected_mean", "sdc_baked_mean", "wall_hours_mean", "analytic_efficiency",
                             "hit_cap"]
    assert {"share_productive", "share_rollback", "share_checkpoint", "share_validation", "share_restart",
            "share_detection", "share_straggler"} <= set(rows[0])
    assert [(r["checkpoint.interval_steps"], r["recovery.strategy"]) for r in rows] == \
        [("20", "cold"), ("20", "warm"), ("80", "cold"), ("80", "warm")]
    for r, res in zip(rows, results, strict=True):
        s = res.stats
        assert float(r["utilization_mean"]) == s.utilization_mean  # repr: no digits lost
        assert float(r["utilization_ci_low"]) == s.utilization_mean - s.utilization_half_width
        assert r["n"] == "3" and r["hit_cap"] == "False"
        assert math.fsum(float(r[f"share_{b}"]) for b in BUCKETS) == pytest.approx(1.0, abs=1e-12)
        assert 0 < float(r["analytic_efficiency"]) < 1
    meta = {"scenario": "small", "mode": "fixed", "replicas": 3, "seed_base": 0}
    sweepout.write_json(tmp_path / "s.json", meta, params, results)
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["scenario"] == "small" and doc["confidence"] == 0.95
    assert doc["params"][1] == {"key": "recovery.strategy", "kind": "choice", "values": ["cold", "warm"], "log": False}
    assert set(doc["first_order"]) == {"mtbf_seconds", "recovery_seconds", "young_interval_steps",
                                       "daly_interval_steps"}
    assert doc["points"][1]["params"] == {"checkpoint.interval_steps": 20, "recovery.strategy": "warm"}
    assert set(doc["points"][0]) == {"params", "rounds", *sweepout.STAT_COLUMNS}
    assert doc["points"][3]["utilization_mean"] == results[3].stats.utilization_mean


def test_json_has_no_nan(small, tmp_path):
    params = parse_params(["checkpoint.seconds=30"])
    results = fixed_sweep(Runner(grid(small, params), Serial(), 1), 0, 1)  # one replica: no interval
    sweepout.write_json(tmp_path / "s.json", {}, params, results)
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["points"][0]["utilization_ci_half_width"] is None and doc["points"][0]["utilization_sd"] is None


# ---- the command


def test_sweep_command_prints_the_table_and_writes_the_files(small_file, tmp_path):
    out = tmp_path / "out"
    r = simd("sweep", "--config", str(small_file), "--scenario", "small", "--param",
             "checkpoint.interval_steps=20:80:3", "--replicas", "4", "--workers", "1", "--out", str(out))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[:4] == ["checkpoint.interval_steps", "n", "util", "+-ci95"]
    assert [ln.split()[0] for ln in lines[1:4]] == ["20", "50", "80"] and lines[4] == sweepout.TABLE_NOTE
    assert all(ln.split()[1] == "4" for ln in lines[1:4])
    assert {p.name for p in out.iterdir()} == {"sweep.csv", "sweep.json", "sweep.png"}
    doc = json.loads((out / "sweep.json").read_text())
    assert (doc["mode"], doc["replicas"], doc["seed_base"]) == ("fixed", 4, 7)  # the scenario's seed
    assert "replica" not in r.stderr  # no progress bar when stderr is not a terminal


def test_sweep_command_writes_the_files_when_its_reader_goes_away(small_file, tmp_path):
    """`simd sweep --out DIR | head -2`: the table's reader closes the pipe; the sweep's files are still written."""
    class ClosedPipe(io.StringIO):
        def write(self, text):
            raise BrokenPipeError

    out = tmp_path / "out"
    err = io.StringIO()
    with contextlib.redirect_stdout(ClosedPipe()), contextlib.redirect_stderr(err):
        cli.main(["sweep", "--config", str(small_file), "--scenario", "small", "--param", "checkpoint.seconds=30,90",
                  "--replicas", "2", "--workers", "1", "--out", str(out)])
    assert {p.name for p in out.iterdir()} == {"sweep.csv", "sweep.json", "sweep.png"}
    assert json.loads((out / "sweep.json").read_text())["replicas"] == 2


def test_sweep_command_local_pool_equals_one_worker(small_file, tmp_path):
    args = ["sweep", "--config", str(small_file), "--scenario", "small", "--param", "checkpoint.seconds=30,90",
            "--replicas", "5", "--seed-base", "100"]
    one, two = simd(*args, "--workers", "1", "--out", str(tmp_path / "a")), simd(*args, "--out", str(tmp_path / "b"))
    assert one.returncode == two.returncode == 0
    assert one.stdout == two.stdout
    assert (tmp_path / "a" / "sweep.csv").read_text() == (tmp_path / "b" / "sweep.csv").read_text()


def test_sweep_command_adaptive(small_file):
    r = simd("sweep", "--config", str(small_file), "--scenario", "small", "--param", "checkpoint.seconds=30,90",
             "--ci", "1%", "--max-replicas", "12", "--workers", "1")
    assert r.returncode == 0
    # the small job spreads by ~2.5 points (sd): 12 replicas give a half-width of ~1.5 points, above 1 point
    assert sweepout.CAPPED_NOTE in r.stdout
    assert "simd sweep: warning: 2 point(s) stopped at --max-replicas 12 with the half-width above 0.01" in r.stderr


def test_progress_bar_on_a_terminal(small_file, monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    err = Tty()
    monkeypatch.setattr(sys, "stderr", err)
    args = ["sweep", "--config", str(small_file), "--scenario", "small", "--param", "checkpoint.seconds=30,90",
            "--replicas", "3", "--workers", "1"]
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli.main(args) == 0
    assert "6/6" in err.getvalue() and "replica" in err.getvalue()
    err.truncate(0)
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli.main(args + ["--quiet"]) == 0
    assert err.getvalue().strip("\0") == ""


@pytest.mark.parametrize("extra,message", [
    (["--param", "checkpoint.nope=1,2"], "simd sweep: error: --param checkpoint.nope: unknown key 'nope'"),
    (["--param", "n_gpus=a:b:3"], "simd sweep: error: --param n_gpus: 'a' is not a number"),
    (["--param", "checkpoint.interval_steps=0,5"],
     "simd sweep: error: --param checkpoint.interval_steps=0: scenario small refuses it"),
    (["--param", "n_gpus=1,2", "--param", "step_seconds=1,2", "--param", "checkpoint.seconds=1,2"],
     "simd sweep: error: --param: give one or two"),
    (["--param", "n_gpus=1,2", "--scenario", "nope"], "simd sweep: error: --scenario: no scenario named 'nope' "
                                                     "(known: small)"),
    (["--param", "n_gpus=1,2", "--replicas", "3", "--ci", "0.01"], "not allowed with argument"),
    (["--param", "n_gpus=1,2", "--ci", "2"], "--ci: must be between 0 and 1"),
    (["--param", "n_gpus=1,2", "--ci", "x"], "--ci: expected a number like 0.002 or 0.2%"),
    (["--param", "n_gpus=1,2", "--replicas", "0"], "--replicas: must be >= 1, got 0"),
    (["--param", "n_gpus=1,2", "--max-replicas", "5"], "--max-replicas applies to --ci only"),
    (["--param", "n_gpus=1,2", "--seed-base", "-1"], "--seed-base: must be 0 to 2^63 - 1"),
    (["--param", "n_gpus=1,2", "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"], "--workers is for local runs"),
])
def test_bad_input_exits_2_with_one_line(small_file, tmp_path, extra, message):
    args = ["sweep", "--config", str(small_file), "--scenario", "small", *extra]
    if "--scenario" in extra:
        args = ["sweep", "--config", str(small_file), *extra]
    r = simd(*args, "--out", str(tmp_path / "out"))
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""
    assert not (tmp_path / "out").exists()  # before any work


def test_bad_config_exits_2(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text(SMALL.replace("n_gpus: 512", "n_gpus: -1"))
    r = simd("sweep", "--config", str(p), "--scenario", "small", "--param", "n_gpus=1,2")
    assert r.returncode == 2 and "scenarios[0].n_gpus: must be > 0, got -1" in r.stderr


def test_scheduler_without_dask_says_how_to_install(small_file, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    r = simd("sweep", "--config", str(small_file), "--scenario", "small", "--param", "n_gpus=512",
             "--scheduler", "tcp://127.0.0.1:8786")
    assert r.returncode == 2
    assert r.stderr == "simd sweep: error: --scheduler needs dask.distributed: pip install 'dask[distributed]' " \
                       "(simd's dask extra)\n"


def test_importing_the_sweep_needs_no_dask():
    code = ("import sys, simd.cli, simd.offline.sweep.run, simd.offline.sweep.command, simd.executors, "
            "simd.offline.sweep.outputs; "
            "simd.cli.build_parser(); "
            "bad = [m for m in ('dask', 'distributed', 'tqdm', 'matplotlib') if m in sys.modules]; "
            "assert not bad, bad")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def test_points_that_can_bake_sdcs_are_warned_once(small_file):
    # the base (checkpoint 40, validation 20) is safe; 30 and 50 are not divisible by 20
    r = simd("sweep", "--config", str(small_file), "--scenario", "small", "--param",
             "checkpoint.interval_steps=30,40,50", "--replicas", "2", "--workers", "1")
    assert r.returncode == 0
    warnings = [ln for ln in r.stderr.splitlines() if ln.startswith("simd sweep: warning:")]
    assert warnings == ["simd sweep: warning: scenario small: validation every 20 steps does not divide checkpoint "
                        "every 30: SDCs can be baked into checkpoints (seed 000 erratum: only checkpoint_interval % "
                        "validation_interval == 0 prevents it) [deliberate? acknowledge: [sdc-baked]] (and 1 more of "
                        "the 3 points)"]


def test_replicas_that_never_finish_are_counted_and_exit_1(tmp_path):
    # a failure every ~5 steps (hazard 0.19 per step) and one checkpoint per 100-step job: a job finishes with
    # probability 0.81^100 ~ 1e-9 per attempt, so each replica stops at simulate's limit
    p = tmp_path / "hopeless.yaml"
    text = SMALL.replace("target_steps: 2000", "target_steps: 100").replace("hard_per_gpu_hour: 5.0e-4",
                                                                          "hard_per_gpu_hour: 5.0e-2")
    # ~10^4 failures each: on the engine's fast path (validation dividing the interval, no stragglers)
    text = text.replace("interval_steps: 20, seconds: 5", "interval_steps: 10, seconds: 5")
    p.write_text("\n".join(ln for ln in text.splitlines() if "stragglers" not in ln))
    r = simd("sweep", "--config", str(p), "--scenario", "small", "--param", "checkpoint.interval_steps=50,100",
             "--replicas", "2", "--workers", "1")
    assert r.returncode == 1
    assert "simd sweep: warning: 4 replica(s) did not finish within 1000x their failure-free duration" in r.stderr
    assert [ln.split()[1:3] for ln in r.stdout.splitlines()[1:3]] == [["0!", "-"], ["0!", "-"]]  # n, util
    assert sweepout.UNFINISHED_NOTE in r.stdout.splitlines()  # what the mark means, where the counts are
    points = grid(parse_config(p.read_text()).scenario("small"), parse_params(["checkpoint.interval_steps=100"]))
    (result,) = fixed_sweep(Runner(points, Serial(), 1), 0, 2)
    row = sweepout.row(parse_params(["checkpoint.interval_steps=100"]), result)
    assert (row["n"], row["unfinished"]) == (0, 2) and math.isnan(row["utilization_mean"])


@pytest.mark.parametrize("name", ["llama3-16k", "ckpt-sweep-125", "optimized"])
def test_first_order_model_is_the_daemons_gauge(name):
    """The PNG's and the CSV's model values are the ones the daemon exports for the same scenario."""
    from simd.engine import new_state
    from simd.metrics.snapshot import scenario_info
    from simd.scenario import default_config

    s = default_config().scenario(name)
    info = scenario_info(s, s, new_state(s.job_spec()))
    model = sweep.first_order(s)
    assert model.efficiency(s.checkpoint.interval_steps) == info.analytic_efficiency
    assert (("young", model.young_steps), ("daly", model.daly_steps)) == info.optimal_interval_steps


def test_no_hard_failures_no_model():
    from simd.scenario import default_config

    assert sweep.first_order(default_config().scenario("ideal")) is None


@pytest.mark.parametrize("extra, message", [
    (["--replicas", str(10**18)],
     "argument --replicas: must be at most 100000 (per grid point), got 1000000000000000000"),
    (["--ci", "0.01", "--max-replicas", str(10**9)],
     "argument --max-replicas: must be at most 100000 (per grid point)"),
    (["--workers", "100000"], "argument --workers: must be at most"),
    (["--ci", "0.01", "--max-replicas", "100000", "--param", "n_gpus=512:1024:100"],
     "at most 2000000 replicas in all (grid points x --max-replicas), got 200 x 100000 = 20000000"),
    (["--out", "/proc/self"], "--out /proc/self: cannot write there"),
])
def test_what_would_exhaust_the_machine_is_refused_before_any_work(small_file, extra, message):
    """--replicas 10^18 grew the parent by 300 MB/s, --workers 100000 tried to fork that many, --out on a
    directory that cannot be written gave a traceback after all the work."""
    r = simd("sweep", "--config", str(small_file), "--scenario", "small", "--param", "checkpoint.interval_steps=10,20",
             "--quiet", *extra)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and message in r.stderr, r.stderr


def test_a_write_that_fails_after_the_work_is_one_line_and_exit_1(small_file, tmp_path, monkeypatch):
    from simd.offline.sweep import outputs

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device", str(tmp_path / "out" / "sweep.csv"))

    monkeypatch.setattr(outputs, "write_csv", full)
    r = simd("sweep", "--config", str(small_file), "--scenario", "small", "--param", "checkpoint.interval_steps=10,20",
             "--replicas", "2", "--workers", "1", "--quiet", "--out", str(tmp_path / "out"))
    assert r.returncode == 1 and "cannot write sweep.csv: No space left on device" in r.stderr
    assert "Traceback" not in r.stderr and "checkpoint.interval_steps" in r.stdout  # the table was printed


def test_a_sweep_of_replicas_past_their_work_horizon_stops_them_as_simulate_does(monkeypatch):
    """Servers at their bounds (bursts of ~10,000 servers): every replica stops at the work horizon, the same
    simulated time as `simd simulate` stops its seed at, left out of the means with a warning that names the
    horizon (exit 1, as an unfinished replica)."""
    import simd.offline.simulate as simulate_mod
    from simd.scenario import load_config

    monkeypatch.setattr(simulate_mod, "HORIZON_WORK_US", 0.4e6)
    bounds = Path(__file__).resolve().parents[1] / "data" / "bounds-servers.yaml"
    scenario = load_config(bounds).scenarios[0]
    results = run_point(scenario, [5, 6])
    for r in results:
        alone = simulate(scenario, r.seed)
        assert alone.job is None and alone.horizon_seconds is not None and r.horizon and not r.completed
    r = simd("sweep", "--config", str(bounds), "--scenario", "bounds", "--param", "checkpoint.interval_steps=200,400",
             "--replicas", "2", "--workers", "1")
    assert r.returncode == 1
    assert "4 replica(s) stopped at the work horizon, 0.4 s of estimated engine work each" in r.stderr
