"""The sweep's grid: each --param syntax, the kinds of keys, and every refusal as one line naming the param."""

import pytest

from simd.offline.sweep.grid import GridError, field_kind, grid, parse_param, parse_params, variant
from simd.scenario import default_config


@pytest.fixture(scope="module")
def llama():
    return default_config().scenario("llama3-16k")


def test_linear_range_of_an_integer_key_is_rounded():
    p = parse_param("checkpoint.interval_steps=10:400:20")
    assert p.kind == "int" and not p.log and p.note == ""
    assert p.values[:4] == (10, 31, 51, 72) and p.values[-1] == 400 and len(p.values) == 20
    assert all(isinstance(v, int) for v in p.values)


def test_rounding_drops_duplicate_integers_and_says_so():
    p = parse_param("n_gpus=10:12:5")  # 10, 10.5, 11, 11.5, 12 -> rint (half to even) 10, 10, 11, 12, 12
    assert p.values == (10, 11, 12)
    assert p.note == "n_gpus=10:12:5: 3 distinct integers of the 5 points"


def test_linear_range_of_a_float_key_is_exact():
    p = parse_param("step_seconds=1:2:5")
    assert p.kind == "float" and p.values == (1.0, 1.25, 1.5, 1.75, 2.0)


def test_log_range():
    p = parse_param("failures.hard_per_gpu_hour=1e-5:1e-3:3log")
    assert p.log and p.values == pytest.approx((1e-5, 1e-4, 1e-3), rel=1e-12)
    q = parse_param("checkpoint.interval_steps=10:1000:3log")
    assert q.values == (10, 100, 1000) and q.log


def test_explicit_numbers_are_sorted():
    assert parse_param("n_gpus=4096, 1024,2048").values == (1024, 2048, 4096)
    assert parse_param("checkpoint.seconds=30,1e2").values == (30.0, 100.0)
    assert parse_param("n_gpus=1e3").values == (1000,)  # an integral float on an integer key


def test_categorical_keeps_its_order():
    p = parse_param("recovery.strategy=warm,cold")
    assert p.kind == "choice" and p.values == ("warm", "cold") and not p.numeric


def test_nested_optional_keys():
    assert field_kind("stragglers.slowdown") == ("float", ())
    assert field_kind("stragglers.mitigation.detect_after_steps") == ("int", ())
    assert field_kind("recovery.strategy") == ("choice", ("cold", "warm"))


def test_keys_of_a_union_of_groups():
    """servers.lifetime is one of three groups (by distribution): a key of any of them is found."""
    assert field_kind("servers.lifetime.shape") == ("float", ())
    assert field_kind("servers.lifetime.sigma") == ("float", ())
    assert field_kind("servers.lifetime.distribution") == ("choice", ("exponential",))  # (the first group's)
    assert field_kind("servers.lemons.multiplier") == ("float", ())
    with pytest.raises(GridError, match="unknown key 'k' in servers.lifetime \\(known: distribution, shape, sigma\\)"):
        field_kind("servers.lifetime.k")


@pytest.mark.parametrize("text,message", [
    ("checkpoint.intervl_steps=1,2", "--param checkpoint.intervl_steps: unknown key 'intervl_steps' in checkpoint "
                                     "(known: interval_steps, seconds"),
    ("gpus=1,2", "--param gpus: unknown key 'gpus' in a scenario"),
    ("checkpoint=1", "--param checkpoint: '1' is not a scenario of the file (checkpoint is a group of keys"),
    ("checkpoint.tiers.peer.save_failure=0,0.5", "each point takes; its numeric keys: "
                                                 "checkpoint.tiers.peer.save_failure.probability)"),
    ("recovery=cold:warm:2", "--param recovery: 'cold:warm:2' is not a scenario of the file"),
    ("recovery=" + "x" * 60, "--param recovery: '" + "x" * 48 + "...' is not a scenario"),
    ("failures.causes=llama3", "--param failures.causes: not a numeric or categorical key"),
    ("n_gpus.x=1", "--param n_gpus.x: n_gpus is a value, not a group of keys"),
    ("seed=1:5:5", "--param seed: not a sweep parameter (the sweep sets it: --seed-base)"),
    ("replicas=1,2", "--param replicas: not a sweep parameter (the sweep sets it: --replicas or --ci)"),
    ("n_gpus", "--param 'n_gpus': expected KEY=A:B:N, KEY=A:B:Nlog or KEY=a,b,c"),
    ("=1,2", "expected KEY=A:B:N"),
    ("Checkpoint.Seconds=1", "--param 'Checkpoint.Seconds': a key is a dotted path of scenario fields"),
    ("\x1b[31mfoo=1,2", "--param '\\x1b[31mfoo': a key is a dotted path"),  # a terminal escape, quoted
    ("n_gpus=x,2", "--param n_gpus: 'x' is not a number"),
    ("step_seconds=1:inf:3", "--param step_seconds: 'inf' is not a finite number"),
    ("checkpoint.interval_steps=1.5,2", "--param checkpoint.interval_steps: '1.5' is not an integer"),
    ("n_gpus=5:1:3", "--param n_gpus: A:B:N needs A < B, got '5:1:3'"),
    ("n_gpus=1:5:1", "--param n_gpus: N must be 2 to 1000, got 1"),
    ("n_gpus=1:5:1001", "N must be 2 to 1000, got 1001"),
    ("step_seconds=0:1:3log", "--param step_seconds: log spacing needs 0 < A"),
    ("n_gpus=1:5:3lin", "--param n_gpus: a range is A:B:N or A:B:Nlog with N a whole number"),
    ("n_gpus=1:5", "a range is A:B:N"),
    ("n_gpus=1,,2", "--param n_gpus: empty value in '1,,2'"),
    ("n_gpus=2,2", "--param n_gpus: duplicate values in '2,2'"),
    ("recovery.strategy=hot", "--param recovery.strategy: 'hot' is not one of cold, warm"),
    ("recovery.strategy=cold:warm:2", "a categorical key takes a list of cold, warm, not a range"),
])
def test_bad_params_are_one_line_naming_the_param(text, message):
    with pytest.raises(GridError) as err:
        parse_param(text)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_one_or_two_distinct_params():
    with pytest.raises(GridError, match="give one or two"):
        parse_params(["n_gpus=1,2", "step_seconds=1,2", "checkpoint.seconds=1,2"])
    with pytest.raises(GridError, match="--param n_gpus: given twice"):
        parse_params(["n_gpus=1,2", "n_gpus=3,4"])
    with pytest.raises(GridError, match="at most 10000 grid points, got 1000 x 11"):
        parse_params(["n_gpus=1:1000:1000", "step_seconds=1:2:11"])


def test_grid_is_the_product_first_param_slowest(llama):
    points = grid(llama, parse_params(["checkpoint.interval_steps=100,200", "recovery.strategy=cold,warm"]))
    assert [p.values for p in points] == [(100, "cold"), (100, "warm"), (200, "cold"), (200, "warm")]
    assert [(p.scenario.checkpoint.interval_steps, p.scenario.recovery.strategy) for p in points] == \
        [(100, "cold"), (100, "warm"), (200, "cold"), (200, "warm")]
    # everything else is the base scenario's
    assert points[3].scenario.model_dump(exclude={"checkpoint", "recovery"}) == \
        llama.model_dump(exclude={"checkpoint", "recovery"})


def test_float_key_given_integers_validates(llama):
    s = variant(llama, {"step_seconds": 3.0, "checkpoint.seconds": 10.0})
    assert s.step_seconds == 3.0 and s.checkpoint.seconds == 10.0


def test_absent_optional_group_gets_its_defaults():
    ideal = default_config().scenario("ideal")
    assert ideal.stragglers is None
    s = grid(ideal, parse_params(["stragglers.jitter_seconds=0.5"]))[0].scenario
    assert s.stragglers.jitter_seconds == 0.5 and s.stragglers.slow_ranks == 0


@pytest.mark.parametrize("params,message", [
    (["checkpoint.interval_steps=0,10"],
     "--param checkpoint.interval_steps=0: scenario llama3-16k refuses it: checkpoint.interval_steps: "
     "must be > 0, got 0"),
    (["failures.hard_per_gpu_hour=1000,2000"],
     "--param failures.hard_per_gpu_hour=1000.0: scenario llama3-16k refuses it: failures.hard_per_gpu_hour * "
     "step_seconds / 3600 is a probability per GPU-step and must be <= 1"),
    (["n_gpus=1024,2048", "stragglers.slow_ranks=1,2000"],
     "--param n_gpus=1024, stragglers.slow_ranks=2000: scenario llama3-16k refuses it: stragglers.slow_ranks must "
     "be <= n_gpus (1024), got 2000"),
    (["stragglers.slowdown=0.5,1"], "--param stragglers.slowdown=0.5: scenario llama3-16k refuses it: "
                                    "stragglers.slowdown: must be >= 1, got 0.5"),
    # a key of a group the scenario leaves out makes the group from that key alone: the error says so
    (["checkpoint.tiers.local.interval_steps=10,20"],
     "--param checkpoint.tiers.local.interval_steps=10: scenario llama3-16k refuses it: "
     "checkpoint.tiers.local.seconds: required key is missing (scenario llama3-16k has no checkpoint.tiers.local: "
     "the sweep made it from the swept key alone; give the group in the scenario file, then sweep its key)"),
])
def test_values_the_scenario_refuses_name_the_point(llama, params, message):
    with pytest.raises(GridError) as err:
        grid(llama, parse_params(params))
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_the_recovery_path_is_a_categorical_parameter_over_the_files_scenarios():
    config = default_config()
    scenarios = {s.name: s for s in config.all_scenarios}
    names = ["llama3-16k-cold", "llama3-16k-hot", "llama3-16k-migrate"]
    p = parse_param("recovery=" + ",".join(names), scenarios)
    assert (p.key, p.kind, p.values) == ("recovery", "choice", tuple(names))
    base = scenarios["llama3-16k-migrate"]  # its servers have the warm standbys a migration needs
    points = grid(base, [parse_param("n_gpus=1024,16384", scenarios), p])
    assert [pt.values for pt in points] == [(n, x) for n in (1024, 16384) for x in names]
    for pt in points:
        assert pt.scenario.recovery == scenarios[pt.values[1]].recovery
        assert pt.scenario.servers == base.servers and pt.scenario.n_gpus == pt.values[0]
    # the phases' law is evaluated at each point's size: the communicators' initialization grows with the job
    assert points[3].scenario.cold_restart_seconds > points[0].scenario.cold_restart_seconds
    with pytest.raises(GridError, match="scenario llama3-16k refuses it: .*recovery.migration needs servers"):
        grid(scenarios["llama3-16k"], [parse_param("recovery=llama3-16k-migrate", scenarios)])
    with pytest.raises(GridError, match="--param recovery: 'nope' is not a scenario of the file"):
        parse_params(["recovery=llama3-16k-cold,nope"], scenarios)


def test_a_named_scenario_without_the_group_gives_the_groups_defaults():
    """Each point takes the named scenario's group: one that leaves it out has its defaults (ideal restarts cold),
    not a refusal of a null group."""
    config = default_config()
    scenarios = {s.name: s for s in config.all_scenarios}
    assert "recovery" not in scenarios["ideal"].model_fields_set
    base = scenarios["llama3-16k-hot"]
    points = grid(base, [parse_param("recovery=llama3-16k-hot,ideal", scenarios)])
    assert points[0].scenario.recovery == base.recovery
    assert points[1].scenario.recovery == scenarios["ideal"].recovery
    assert points[1].scenario.recovery.strategy == "cold" and points[1].scenario.recovery.phases is None
    # an optional group the named scenario leaves out is left out of the point (llama3-16k has no servers)
    servers = grid(scenarios["llama3-16k-servers"], [parse_param("servers=llama3-16k", scenarios)])[0].scenario
    assert servers.servers is None


@pytest.mark.parametrize("key,values,read", [
    ("recovery.in_process.seconds", "10,60", lambda s: s.in_process_seconds),
    ("recovery.in_process.success_probability", "0.2,0.9", lambda s: s.in_process_success),
    ("recovery.crash_loop.failure_probability", "0,0.5", lambda s: s.restart_failure),
    ("recovery.crash_loop.max_attempts", "1,5", lambda s: s.restart_attempts),
    ("recovery.crash_loop.escalation_seconds", "600,7200", lambda s: s.escalation_seconds),
    ("recovery.migration.seconds", "5,60", lambda s: s.migration_seconds),
    ("recovery.migration.causes.gpu", "0.1,0.5", lambda s: s.cause_list[0].predicted),
    ("recovery.phases.stop", "10,60", lambda s: s.restart_seconds),
    ("recovery.phases.communicator_init", "30,90", lambda s: s.restart_seconds),
    ("recovery.phases.communicator_init.exponent", "0.2,1", lambda s: s.restart_seconds),
    ("recovery.phases.communicator_init.seconds", "30,90", lambda s: s.restart_seconds),
])
def test_every_numeric_key_of_the_recovery_paths_is_a_sweep_parameter(key, values, read):
    base = default_config().scenario("llama3-16k-migrate").model_copy(update={"recovery": None})
    recovery = {"strategy": "warm", "migration": {"seconds": 30, "causes": {"gpu": 0.2}},
                "in_process": {"causes": ["software"], "seconds": 30, "success_probability": 0.5},
                "crash_loop": {"failure_probability": 0.3, "max_attempts": 3, "escalation_seconds": 3600},
                "phases": {"stop": 30, "communicator_init": {"law": "power", "at_gpus": 8192, "seconds": 65.4,
                                                             "exponent": 0.5}}}
    base = variant(base, {"recovery": recovery})
    p = parse_param(f"{key}={values}")
    assert p.kind in ("int", "float")
    a, b = (read(pt.scenario.job_spec()) for pt in grid(base, [p]))
    assert a < b
