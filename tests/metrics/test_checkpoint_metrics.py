"""Asynchronous and failing saves as the daemon exports them (simd_checkpoint_saves_total,
simd_checkpoint_cost_seconds_total, simd_checkpoint_writes_in_flight) and the drills that rehearse them (a storage
outage: every save fails; slow storage: writes 4x longer): the samples against the engine's own counters, the
parts of the checkpoint bucket summing to it, and the drills' effects seen in the scrape."""

from __future__ import annotations

import pytest
from support.daemon import FakeClock
from support.scenarios import job, scenario_file

from simd.daemon.process import assemble
from simd.scenario.errors import ConfigError
from simd.scenario.load import parse_config

_RATES = {"hard_per_gpu_hour": 2.0e-4, "sdc_per_gpu_hour": 0.0}
_WRITING = {"interval_steps": 20, "seconds": 5, "write_seconds": 240, "write_slowdown": 1.2,
            "save_failure": {"probability": 0.05}}
_JOB = {"step_seconds": 60, "target_steps": 100000, "failures": _RATES, "validation": None}


def _config(drill_scenario: str = "async") -> str:
    """Two scenarios, one saving asynchronously (4 replicas) and one blocking; a storage outage and a slow-writes
    drill on ``drill_scenario``."""
    return scenario_file(
        job("async", seed=11, replicas=4, n_gpus=4096, checkpoint=_WRITING, **_JOB),
        job("blocking", seed=12, n_gpus=1024, checkpoint={"interval_steps": 20, "seconds": 60}, **_JOB),
        speedup=600,
        drills=({"name": "storage-outage", "description": "every save fails", "duration_seconds": 36000,
                 "scenarios": [drill_scenario], "effects": {"save_failure_probability": 1.0}},
                {"name": "slow-writes", "description": "writes 4x longer", "duration_seconds": 36000,
                 "scenarios": [drill_scenario], "effects": {"write_seconds_factor": 4}}))


def _value(registry, name, **labels):
    v = registry.get_sample_value(name, labels)
    assert v is not None, f"no sample {name}{labels}"
    return v


def _saves(registry, scenario):
    return {o: _value(registry, "simd_checkpoint_saves_total", scenario=scenario, tier="persistent", outcome=o)
            for o in ("durable", "failed", "aborted")}


@pytest.fixture()
def daemon():
    clock = FakeClock(0.0)
    ticker, _ = assemble(parse_config(_config()), clock=clock, wall=lambda: 1.7e9)
    return clock, ticker


def test_saves_and_the_checkpoint_buckets_parts_are_the_engines_counters(daemon):
    clock, ticker = daemon
    clock.t = 600.0  # 100 simulated hours
    ticker.tick()
    r = ticker.registry
    for name in ("async", "blocking"):
        parts = {p: _value(r, "simd_checkpoint_cost_seconds_total", scenario=name, part=p)
                 for p in ("blocking", "wait", "slowdown")}
        bucket = _value(r, "simd_bucket_seconds_total", scenario=name, bucket="checkpoint")
        assert sum(parts.values()) == pytest.approx(bucket, rel=1e-12)
        saves = _saves(r, name)
        assert saves["durable"] > 0
    a, b = _saves(r, "async"), _saves(r, "blocking")
    assert a["failed"] > 0 and a["aborted"] > 0  # 5% fail; failures land in writes of 240 s
    assert b["failed"] == b["aborted"] == 0
    assert _value(r, "simd_checkpoint_cost_seconds_total", scenario="async", part="slowdown") > 0
    assert _value(r, "simd_checkpoint_cost_seconds_total", scenario="blocking", part="slowdown") == 0
    assert 0 <= _value(r, "simd_checkpoint_writes_in_flight", scenario="async", tier="persistent") <= 4
    assert _value(r, "simd_checkpoint_writes_in_flight", scenario="blocking", tier="persistent") == 0


def test_a_storage_outage_fails_every_save_and_slow_storage_lengthens_the_writes(daemon):
    clock, ticker = daemon
    clock.t = 60.0
    ticker.tick()
    before = _saves(ticker.registry, "async")
    normal = _value(ticker.registry, "simd_checkpoint_cost_seconds_total", scenario="async", part="slowdown")
    ticker.start_drill("storage-outage", None)
    clock.t = 120.0  # 10 simulated hours of outage: ~30 saves per replica, all failing
    ticker.tick()
    during = _saves(ticker.registry, "async")
    # at most the one save per replica whose write was in flight when the drill started becomes durable
    assert during["durable"] - before["durable"] <= 4
    assert during["failed"] - before["failed"] > 50
    ticker.start_drill("slow-writes", None)  # the outage over: 10 simulated hours of writes 4x longer
    start = _value(ticker.registry, "simd_checkpoint_cost_seconds_total", scenario="async", part="slowdown")
    clock.t = 180.0
    ticker.tick()
    slowed = _value(ticker.registry, "simd_checkpoint_cost_seconds_total", scenario="async", part="slowdown") - start
    # a write of 960 s spans 14 slowed steps of 72 s where one of 240 s spans 4: over the same 10 simulated hours
    # the steps lose more than twice as much to writes
    assert slowed > 2 * normal


def test_a_write_factor_needs_asynchronous_saves():
    with pytest.raises(ConfigError, match="write_seconds_factor needs checkpoint.write_seconds"):
        parse_config(_config(drill_scenario="blocking"))


def test_a_memory_tiers_saves_recoveries_and_losses_are_the_engines_counters():
    """A peer tier on 8-GPU servers struck by bursts: its saves under tier="peer", its recoveries by tier and its
    losses, equal to the engine's counters summed over the replicas; a scenario without a tier has none. Just-in-time
    saves under outcome="just_in_time", for the scenario that has them only."""
    tiered = {"interval_steps": 20, "seconds": 5, "load_seconds": 93.6,
              "tiers": {"peer": {"interval_steps": 5, "seconds": 0.5, "load_seconds": 10, "copies": 2}}}
    config = scenario_file(
        job("tiered", seed=13, replicas=3, n_gpus=128, checkpoint=tiered,
            servers={"gpus_per_server": 8, "bursts": {"per_day": 4.0, "mean_size": 3}},
            **{**_JOB, "failures": {"hard_per_gpu_hour": 2.0e-3, "sdc_per_gpu_hour": 0.0}}),
        job("blocking", seed=12, n_gpus=1024, checkpoint={"interval_steps": 20, "seconds": 60}, **_JOB),
        job("jit", seed=14, n_gpus=4096, checkpoint={"interval_steps": 20, "seconds": 60,
                                                     "just_in_time": {"causes": ["hardware"], "seconds": 30}}, **_JOB),
        speedup=600)
    clock = FakeClock(0.0)
    ticker, _ = assemble(parse_config(config), clock=clock, wall=lambda: 1.7e9)
    clock.t = 600.0  # 100 simulated hours
    ticker.tick()
    r = ticker.registry
    sc = ticker.snapshot.scenarios[0]
    totals = sc.totals
    assert sc.info.name == "tiered"
    assert _value(r, "simd_checkpoint_saves_total", scenario="tiered", tier="peer", outcome="durable") \
        == totals.tier_saves > 0
    recoveries = {k: _value(r, "simd_checkpoint_recoveries_total", scenario="tiered", tier=k)
                  for k in ("peer", "persistent", "start")}
    assert recoveries == {"peer": totals.recoveries_tier, "persistent": totals.recoveries_persistent,
                          "start": totals.recoveries_start}
    assert recoveries["peer"] > 0 and recoveries["persistent"] > 0
    assert _value(r, "simd_checkpoint_tier_losses_total", scenario="tiered", tier="peer") == totals.tier_losses > 0
    assert r.get_sample_value("simd_checkpoint_recoveries_total", {"scenario": "blocking", "tier": "persistent"}) \
        is None
    assert r.get_sample_value("simd_checkpoint_saves_total", {"scenario": "blocking", "tier": "peer",
                                                             "outcome": "durable"}) is None
    jit = ticker.snapshot.scenarios[2].totals.jit_saves
    assert _value(r, "simd_checkpoint_saves_total", scenario="jit", tier="persistent", outcome="just_in_time") \
        == jit > 0
    assert r.get_sample_value("simd_checkpoint_saves_total", {"scenario": "blocking", "tier": "persistent",
                                                             "outcome": "just_in_time"}) is None


def test_rack_outages_take_a_peer_tier_whose_groups_sit_in_one_rack():
    """A drill of domain bursts (racks of 4 servers) on a peer tier of neighbouring pairs: every burst takes a
    group, so the tier losses grow by the bursts; outside the drill (random bursts of mean 3) they are rare."""
    tiered = {"interval_steps": 20, "seconds": 5, "load_seconds": 93.6,
              "tiers": {"peer": {"interval_steps": 5, "seconds": 0.5, "load_seconds": 10, "copies": 2}}}
    config = scenario_file(
        job("tiered", seed=13, replicas=2, n_gpus=256, checkpoint=tiered,
            servers={"gpus_per_server": 8, "bursts": {"per_day": 1.0, "mean_size": 3}},
            **{**_JOB, "failures": {"hard_per_gpu_hour": 1.0e-4, "sdc_per_gpu_hour": 0.0}}),
        speedup=600,
        drills=({"name": "rack-outages", "description": "racks fail whole", "duration_seconds": 36000,
                 "scenarios": ["tiered"], "effects": {"bursts": {"per_day": 24, "domain_servers": 4}}},))
    clock = FakeClock(0.0)
    ticker, _ = assemble(parse_config(config), clock=clock, wall=lambda: 1.7e9)
    clock.t = 60.0
    ticker.tick()
    losses = _value(ticker.registry, "simd_checkpoint_tier_losses_total", scenario="tiered", tier="peer")
    bursts = ticker.snapshot.scenarios[0].totals.burst_events
    ticker.start_drill("rack-outages", None)
    clock.t = 120.0  # 10 simulated hours of rack outages: ~10 per replica
    ticker.tick()
    during = ticker.snapshot.scenarios[0].totals
    assert during.burst_events - bursts >= 8
    assert _value(ticker.registry, "simd_checkpoint_tier_losses_total", scenario="tiered", tier="peer") - losses \
        == during.burst_events - bursts


_PEER_WRITING = {"interval_steps": 20, "seconds": 5, "load_seconds": 93.6,
                 "tiers": {"peer": {"interval_steps": 5, "seconds": 0.5, "write_seconds": 30, "load_seconds": 10,
                                    "copies": 2}}}


def _slow_peers(factor: float = 40) -> str:
    """A peer tier saving every 5 steps of 60 s and replicating for 30 s; a drill that multiplies that write."""
    return scenario_file(
        job("peers", seed=13, replicas=2, n_gpus=256, checkpoint=_PEER_WRITING,
            servers={"gpus_per_server": 8}, **_JOB),
        job("blocking", seed=12, n_gpus=1024, checkpoint={"interval_steps": 20, "seconds": 60}, **_JOB),
        speedup=600,
        drills=({"name": "slow-peer-network", "description": "peer copies 40x slower", "duration_seconds": 36000,
                 "scenarios": ["peers"], "effects": {"tier_write_seconds_factor": factor}},))


def test_a_slow_peer_network_makes_every_tier_save_wait_for_the_one_before():
    """A memory tier's writes are what a slow network to the peers slows: 30 s of replication fit in the 300 s
    between peer saves and no save waits; 40x slower (1,200 s) every save waits for the one before, most of the
    drill's time in the checkpoint bucket's wait part (another scenario's untouched)."""
    clock = FakeClock(0.0)
    ticker, _ = assemble(parse_config(_slow_peers()), clock=clock, wall=lambda: 1.7e9)
    clock.t = 60.0  # 10 simulated hours
    ticker.tick()
    r = ticker.registry

    def wait():
        return _value(r, "simd_checkpoint_cost_seconds_total", scenario="peers", part="wait")

    assert wait() == 0
    ticker.start_drill("slow-peer-network", None)
    clock.t = 120.0  # 10 simulated hours of the drill, on 2 replicas
    ticker.tick()
    # each cycle is a 1,200 s write of which the 300 s of steps between saves hide a quarter
    assert wait() > 0.5 * 2 * 36000
    assert _value(r, "simd_checkpoint_cost_seconds_total", scenario="blocking", part="wait") == 0


def test_a_tier_write_factor_needs_a_memory_tier_that_writes():
    for checkpoint in ({**_PEER_WRITING, "tiers": {"peer": {**_PEER_WRITING["tiers"]["peer"], "write_seconds": 0}}},
                       {"interval_steps": 20, "seconds": 60}):
        config = scenario_file(job("peers", n_gpus=256, checkpoint=checkpoint, servers={"gpus_per_server": 8},
                                   **_JOB), drills=(
            {"name": "slow-peer-network", "description": "x", "duration_seconds": 60, "scenarios": ["peers"],
             "effects": {"tier_write_seconds_factor": 40}},))
        with pytest.raises(ConfigError, match=r"tier_write_seconds_factor needs a memory tier that writes "
                                              r"\(checkpoint.tiers.peer.write_seconds"):
            parse_config(config)


def test_a_corrupt_checkpoints_drill_makes_loads_find_them_corrupt():
    """Before the drill no load is corrupt (corrupt_on_load 1e-6: the job keeps its checkpoints for a fallback, as
    a drill needs); during it half of them are."""
    kept = {**_WRITING, "retention_checkpoints": 3, "load_seconds": 93.6, "corrupt_on_load": 1e-6}
    config = scenario_file(
        job("async", seed=11, replicas=4, n_gpus=4096, checkpoint=kept, **_JOB), speedup=600,
        drills=({"name": "corrupt-checkpoints", "description": "half the loads corrupt", "duration_seconds": 36000,
                 "scenarios": ["async"], "effects": {"corrupt_on_load": 0.5}},))
    clock = FakeClock(0.0)
    ticker, _ = assemble(parse_config(config), clock=clock, wall=lambda: 1.7e9)
    clock.t = 60.0
    ticker.tick()
    assert _value(ticker.registry, "simd_checkpoint_corrupt_loads_total", scenario="async", tier="persistent") == 0
    ticker.start_drill("corrupt-checkpoints", None)
    clock.t = 120.0  # 10 simulated hours: ~12 recoveries over the 4 replicas
    ticker.tick()
    assert _value(ticker.registry, "simd_checkpoint_corrupt_loads_total", scenario="async", tier="persistent") >= 2


def test_a_corrupt_checkpoints_drill_needs_kept_checkpoints():
    config = scenario_file(job("async", checkpoint=_WRITING, **_JOB), drills=(
        {"name": "c", "description": "x", "duration_seconds": 60, "scenarios": ["async"],
         "effects": {"corrupt_on_load": 0.5}},))
    with pytest.raises(ConfigError, match="corrupt_on_load needs checkpoint.retention_checkpoints"):
        parse_config(config)


def test_the_checkpoint_age_is_the_steps_since_the_newest_durable_checkpoint_the_most_of_any_replica():
    """simd_checkpoint_age_steps: per tier, the job steps since the newest durable checkpoint (persistent; with a
    memory tier also the newest of either), the largest over the replicas, the same from the replicas' arrays (the
    daemon's path) and from their States."""
    from simd.engine import new_state
    from simd.engine.replicas import advance_replicas
    from simd.metrics.snapshot import scenario_info, scenario_snapshot, state_checkpoint_age_steps
    from simd.metrics.table import _age

    loaded = parse_config(scenario_file(job(
        "tiered", seed=3, replicas=6, n_gpus=1024, step_seconds=60, target_steps=100000, failures=_RATES,
        validation=None, checkpoint={"interval_steps": 25, "seconds": 5,
                                     "tiers": {"local": {"interval_steps": 5, "seconds": 1, "load_seconds": 10}}})))
    s = loaded.scenarios[0]
    info = scenario_info(s, s, new_state(s.job_spec()))
    states = advance_replicas([new_state(s.job_spec(seed)) for seed in range(6)], 40 * 3600 * 10**6)
    ages = [state_checkpoint_age_steps(x) for x in states]
    for x, (persistent, upper, newest) in zip(states, ages, strict=True):
        assert persistent == x.step - x.persist_last and upper == newest == x.step - x.last_ckpt
        assert 0 <= newest <= min(persistent, 4) and persistent < 25
    assert len(set(ages)) > 1  # the replicas differ: the most of them is exported
    want = ((("persistent",), max(a for a, _, _ in ages)), (("local",), max(c for _, _, c in ages)))
    assert _age(scenario_snapshot(info, states)) == _age(scenario_snapshot(info, tuple(states))) == want


def test_with_two_tiers_each_tiers_age_is_its_own_newest_copy_or_one_above_it():
    """A local tier under a peer tier: tier="peer" the steps since the peer tier's newest copy or the persistent
    checkpoint when newer (what a recovery that lost the local tier redoes), tier="local" since the newest of any;
    the same from the replicas' arrays (the daemon's path) as from their States, and the two differ."""
    from simd.engine import new_state
    from simd.engine.replicas import advance_replicas
    from simd.metrics.snapshot import scenario_info, scenario_snapshot, state_checkpoint_age_steps
    from simd.metrics.table import _age

    loaded = parse_config(scenario_file(job(
        "two", seed=4, replicas=8, n_gpus=1024, step_seconds=60, target_steps=100000, failures=_RATES,
        validation=None, checkpoint={"interval_steps": 60, "seconds": 5, "tiers": {
            "peer": {"interval_steps": 20, "seconds": 1, "load_seconds": 10, "copies": 2},
            "local": {"interval_steps": 4, "seconds": 0.2, "load_seconds": 3}}})))
    s = loaded.scenarios[0]
    info = scenario_info(s, s, new_state(s.job_spec()))
    until = 13 * 3600 * 10**6 + 7 * 60 * 10**6
    states = advance_replicas([new_state(s.job_spec(seed)) for seed in range(8)], until)
    ages = [state_checkpoint_age_steps(x) for x in states]
    for x, (persistent, upper, newest) in zip(states, ages, strict=True):
        peer = max([x.persist_last, *x.tier_ckpts[-1:]])
        assert (persistent, upper, newest) == (x.step - x.persist_last, x.step - peer, x.step - x.last_ckpt)
        assert 0 <= newest <= min(upper, 3) and upper <= min(persistent, 19) and persistent < 60
    assert max(a[1] for a in ages) > max(a[2] for a in ages)  # the local tier's copies newer than the peer tier's
    want = ((("persistent",), max(a[0] for a in ages)), (("peer",), max(a[1] for a in ages)),
            (("local",), max(a[2] for a in ages)))
    assert _age(scenario_snapshot(info, states)) == _age(scenario_snapshot(info, tuple(states))) == want


def test_a_memory_tiers_writes_are_series_of_their_own():
    """A local tier whose saves write for 200 s (checkpoint.tiers.local.write_seconds): its aborted saves and its
    writes in flight under tier="local", equal to the engine's counters; a tier without writes has neither series."""
    def tier(**kw):
        return {"interval_steps": 20, "seconds": 5,
                "tiers": {"local": {"interval_steps": 5, "seconds": 0.5, "load_seconds": 10, **kw}}}
    config = scenario_file(job("writing", seed=14, replicas=3, n_gpus=128, checkpoint=tier(write_seconds=200), **_JOB),
                           job("blocking", seed=15, n_gpus=128, checkpoint=tier(), **_JOB), speedup=600)
    clock = FakeClock(0.0)
    ticker, _ = assemble(parse_config(config), clock=clock, wall=lambda: 1.7e9)
    clock.t = 600.0
    ticker.tick()
    r = ticker.registry
    totals = ticker.snapshot.scenarios[0].totals
    aborted = _value(r, "simd_checkpoint_saves_total", scenario="writing", tier="local", outcome="aborted")
    assert aborted == totals.tier_saves_aborted
    assert aborted > 0 and _value(r, "simd_checkpoint_saves_total", scenario="writing", tier="local",
                                  outcome="durable") > 100 * aborted
    assert 0 <= _value(r, "simd_checkpoint_writes_in_flight", scenario="writing", tier="local") <= 3
    assert r.get_sample_value("simd_checkpoint_saves_total", {"scenario": "blocking", "tier": "local",
                                                              "outcome": "aborted"}) is None
    assert r.get_sample_value("simd_checkpoint_writes_in_flight", {"scenario": "blocking", "tier": "local"}) is None


def test_two_tiers_have_series_of_their_own():
    """A local tier under a peer tier (docs/model.md, "Two memory tiers") on 8-GPU servers struck by bursts, software
    faults keeping their servers' memory, the local tier's saves writing for 100 s: each tier's saves, recoveries,
    losses, aborted saves and writes in flight under its own label, the local tier's the engine's local counts
    (Totals.low_*), the peer tier's the rest."""
    tiers = {"interval_steps": 20, "seconds": 5, "load_seconds": 93.6,
             "tiers": {"peer": {"interval_steps": 10, "seconds": 0.5, "load_seconds": 10, "copies": 2},
                       "local": {"interval_steps": 2, "seconds": 0.2, "load_seconds": 3, "write_seconds": 100}}}
    config = scenario_file(job("two", seed=16, replicas=3, n_gpus=128, checkpoint=tiers,
                               servers={"gpus_per_server": 8, "bursts": {"per_day": 4.0, "mean_size": 3}},
                               **{**_JOB, "failures": {"hard_per_gpu_hour": 2.0e-3, "sdc_per_gpu_hour": 0.0,
                                                       "causes": {"hardware": 0.6,
                                                                  "software": {"share": 0.4, "server_down": False}}}}),
                           speedup=600)
    clock = FakeClock(0.0)
    ticker, _ = assemble(parse_config(config), clock=clock, wall=lambda: 1.7e9)
    clock.t = 600.0
    ticker.tick()
    r = ticker.registry
    t = ticker.snapshot.scenarios[0].totals
    for name, outcome, total, local in (("saves", "durable", t.tier_saves, t.low_saves),
                                        ("saves", "aborted", t.tier_saves_aborted, t.low_saves_aborted),
                                        ("recoveries", None, t.recoveries_tier, t.low_recoveries),
                                        ("tier_losses", None, t.tier_losses, t.low_losses)):
        extra = {"outcome": outcome} if outcome else {}
        got = {k: _value(r, f"simd_checkpoint_{name}_total", scenario="two", tier=k, **extra)
               for k in ("peer", "local")}
        assert got == {"peer": total - local, "local": local} and local > 0, (name, outcome)
    assert got["peer"] > 0  # (a peer tier's losses: a burst takes a whole group)
    assert _value(r, "simd_checkpoint_recoveries_total", scenario="two", tier="peer") > 0
    assert 0 <= _value(r, "simd_checkpoint_writes_in_flight", scenario="two", tier="local") <= 3
    assert _value(r, "simd_checkpoint_writes_in_flight", scenario="two", tier="peer") == 0
