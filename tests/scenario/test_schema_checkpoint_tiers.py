"""The scenario keys of a memory tier (checkpoint.tiers.peer | local) and of just-in-time saves
(checkpoint.just_in_time): what reaches the engine, check-config's line,
and the errors (one line each, naming the key)."""

import pytest
from support.scenarios import job, scenario_file

from simd.engine import run_job
from simd.engine.spec import MemoryTier
from simd.scenario import ConfigError, parse_config, summary

CKPT = {"interval_steps": 20, "seconds": 30}
PEER = {"interval_steps": 5, "seconds": 0.5, "load_seconds": 10}
SERVERS = {"gpus_per_server": 8}


def scenario(checkpoint: dict, **keys):
    """support.scenarios' small job with ``checkpoint`` (and other keys), as check-config reads it."""
    return parse_config(scenario_file(job("s", checkpoint=checkpoint, **keys))).scenarios[0]


def errors(checkpoint: dict, **keys) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        scenario(checkpoint, **keys)
    return exc.value.errors


def test_the_keys_reach_the_engine_and_check_configs_line():
    s = scenario({**CKPT, "tiers": {"peer": {**PEER, "copies": 2, "jump_servers": 2}}}, n_gpus=64, servers=SERVERS)
    assert s.job_spec().tier == MemoryTier("peer", 5, 0.5, 10.0, 2, 2)
    assert "a peer tier every 5 steps (0.5 s, load 10 s, each shard held by 2 servers, jump 2)" in summary(s)
    local = scenario({**CKPT, "tiers": {"local": PEER}})
    assert local.job_spec().tier == MemoryTier("local", 5, 0.5, 10.0, 1, 1)
    assert "a local tier every 5 steps (0.5 s, load 10 s, each shard held by its own server)" in summary(local)
    assert scenario(CKPT).job_spec().tier is None
    # a load left unset costs nothing and goes unsaid, as the persistent checkpoint's
    free = scenario({**CKPT, "tiers": {"local": {k: v for k, v in PEER.items() if k != "load_seconds"}}})
    assert "a local tier every 5 steps (0.5 s, each shard held by its own server)" in summary(free)


def test_the_copies_a_tier_keeps_reach_the_engine_and_check_configs_line():
    """checkpoint.tiers.*.retention_checkpoints (docs/model.md, "Memory tiers", "Copies kept"): absent, one."""
    s = scenario({**CKPT, "tiers": {"peer": {**PEER, "retention_checkpoints": 3}}}, n_gpus=64, servers=SERVERS)
    assert s.job_spec().tier.retention_checkpoints == 3
    assert ("a peer tier every 5 steps (0.5 s, load 10 s, each shard held by 2 servers, jump 1, the 3 newest saves "
            "kept)") in summary(s)
    one = scenario({**CKPT, "tiers": {"local": PEER}})
    assert one.job_spec().tier.retention_checkpoints == 1 and "kept" not in summary(one)


def test_check_configs_line_tells_a_peer_tiers_replication_from_its_retention():
    """A peer tier holds each save on ``copies`` servers and keeps its ``retention_checkpoints`` newest saves: two
    numbers the line must not call copies both; the persistent checkpoint's retention is said the same way."""
    s = scenario({**CKPT, "retention_checkpoints": 4,
                  "tiers": {"peer": {**PEER, "copies": 2, "jump_servers": 2, "retention_checkpoints": 3}}},
                 n_gpus=64, servers=SERVERS, validation=None, step_seconds=60, target_steps=300,
                 failures={"hard_per_gpu_hour": 1e-3, "sdc_per_gpu_hour": 0.0})
    assert summary(s) == (
        "s: 64 GPUs, 300 steps of 60 s, checkpoint every 20 steps (30 s, the 4 newest saves kept), a peer tier every 5 "
        "steps (0.5 s, load 10 s, each shard held by 2 servers, jump 2, the 3 newest saves kept), no validation, job "
        "MTBF 15.6 h, 8 servers of 8 GPUs, exponential lifetimes")


def test_a_peer_tier_without_servers_is_a_warning_check_config_names():
    """Without a servers block an interruption is one failure, so nothing loses a peer tier (docs/model.md, "Memory
    tiers", "Loss"): check-config says so, with the code that acknowledges it (then a note); not for a local tier,
    not with servers."""
    def peer(**keys):
        return scenario({**CKPT, "tiers": {"peer": PEER}}, failures={"hard_per_gpu_hour": 1e-3,
                                                                     "sdc_per_gpu_hour": 0.0}, **keys)
    [w] = peer().warnings()
    assert w.startswith("scenario s: checkpoint.tiers.peer without a servers block is never lost") and \
        w.endswith("[deliberate? acknowledge: [peer-no-servers]]"), w
    assert "servers.bursts" in w
    known = peer(acknowledge=["peer-no-servers"])
    assert known.warnings() == [] and known.notes() == [w.split(" [deliberate?")[0]]
    assert peer(n_gpus=64, servers=SERVERS).warnings() == []
    assert scenario({**CKPT, "tiers": {"local": PEER}}, failures={"hard_per_gpu_hour": 1e-3,
                                                                  "sdc_per_gpu_hour": 0.0}).warnings() == []


@pytest.mark.parametrize("checkpoint, keys, expected", [
    ({**CKPT, "tiers": {"peer": PEER, "local": PEER}}, {},
     "checkpoint.tiers.local.interval_steps must divide checkpoint.tiers.peer.interval_steps and be smaller, got 5 "
     "and 5"),
    ({**CKPT, "tiers": {"peer": {**PEER, "interval_steps": 10}, "local": {**PEER, "interval_steps": 3}}}, {},
     "checkpoint.tiers.local.interval_steps must divide checkpoint.tiers.peer.interval_steps"),
    ({**CKPT, "tiers": {"peer": {**PEER, "interval_steps": 10}, "local": {**PEER, "interval_steps": 3, "seconds": -1}}},
     {}, "scenarios[0].checkpoint.tiers.local.seconds: must be >= 0"),
    ({**CKPT, "tiers": {}}, {}, "checkpoint.tiers: give a memory tier, peer or local (or both)"),
    ({**CKPT, "tiers": {"local": {**PEER, "interval_steps": 6}}}, {},
     "checkpoint.tiers.local.interval_steps must divide checkpoint.interval_steps and be smaller, got 6 and 20"),
    ({**CKPT, "tiers": {"local": {**PEER, "interval_steps": 20}}}, {}, "must divide checkpoint.interval_steps"),
    ({**CKPT, "tiers": {"peer": {**PEER, "copies": 1}}}, {}, "scenarios[0].checkpoint.tiers.peer.copies: must be >= 2"),
    ({**CKPT, "tiers": {"local": {**PEER, "retention_checkpoints": 0}}}, {},
     "scenarios[0].checkpoint.tiers.local.retention_checkpoints: must be >= 1"),
    ({**CKPT, "tiers": {"local": {**PEER, "copies": 2}}}, {}, "scenarios[0].checkpoint.tiers.local.copies"),
    ({**CKPT, "tiers": {"peer": {**PEER, "copies": 3}}}, {"n_gpus": 64, "servers": SERVERS},
     "the job's servers (n_gpus / servers.gpus_per_server = 8) must be a multiple of checkpoint.tiers.peer.copies x "
     "jump_servers (3)"),
])
def test_a_bad_tier_is_one_line_naming_it(checkpoint, keys, expected):
    errs = errors(checkpoint, **keys)
    assert len(errs) == 1 and expected in errs[0], errs


def test_just_in_time_saves_reach_the_causes_named_and_check_configs_line():
    s = scenario({**CKPT, "just_in_time": {"causes": ["gpu", "host"], "seconds": 30}},
                 failures={"hard_per_gpu_hour": 2.0e-4, "sdc_per_gpu_hour": 0.0, "causes": "llama3"})
    j = s.job_spec()
    assert j.jit_seconds == 30 and {c.name for c in j.causes if c.jit} == {"gpu", "host"}
    assert "just-in-time saves after gpu, host (30 s)" in summary(s)
    plain = scenario({**CKPT, "just_in_time": {"causes": ["hardware"], "seconds": 5}}).job_spec()
    assert [(c.name, c.jit) for c in plain.causes] == [("hardware", True)] and plain.jit_share == 1.0


def test_just_in_time_saves_by_share_reach_every_cause_when_none_is_named_and_combine_with_a_tier():
    s = scenario({**CKPT, "just_in_time": {"share": 0.6, "seconds": 30}, "tiers": {"local": PEER}},
                 failures={"hard_per_gpu_hour": 2.0e-4, "sdc_per_gpu_hour": 0.0, "causes": "llama3"})
    j = s.job_spec()
    assert j.jit_share == 0.6 and all(c.jit for c in j.causes) and len(j.causes) == 5 and j.tier is not None
    assert "just-in-time saves after 60% of the failures of every cause (30 s)" in summary(s)


@pytest.mark.parametrize("checkpoint, keys, expected", [
    ({**CKPT, "just_in_time": {"causes": ["gpu"], "seconds": 30}}, {},
     "checkpoint.just_in_time.causes: gpu not among the failure causes (hardware)"),
    ({**CKPT, "just_in_time": {"causes": [], "seconds": 30}}, {}, "scenarios[0].checkpoint.just_in_time.causes"),
    ({**CKPT, "just_in_time": {"share": 0, "seconds": 30}}, {},
     "scenarios[0].checkpoint.just_in_time.share: must be > 0"),
    ({**CKPT, "just_in_time": {"share": 1.5, "seconds": 30}}, {},
     "scenarios[0].checkpoint.just_in_time.share: must be <= 1"),
])
def test_a_bad_just_in_time_save_is_one_line_naming_it(checkpoint, keys, expected):
    errs = errors(checkpoint, **keys)
    assert len(errs) == 1 and expected in errs[0], errs


def test_a_tier_whose_saves_fail_reaches_the_engine_and_check_configs_line():
    s = scenario({**CKPT, "tiers": {"local": {**PEER, "save_failure": {"probability": 0.05}}}})
    assert s.job_spec().tier.save_failure == 0.05
    assert "(0.5 s, load 10 s, each shard held by its own server, 0.05 of saves failing)" in summary(s), summary(s)
    plain = scenario({**CKPT, "tiers": {"local": PEER}})
    assert plain.job_spec().tier.save_failure == 0.0 and "failing" not in summary(plain)


def test_check_configs_line_names_the_loads_found_corrupt_beside_the_copies_kept():
    """The copies a tier keeps matter where its loads find a copy corrupt (docs/model.md, "Copies kept"): the line
    that says how many it keeps says how often a load finds one corrupt, the persistent checkpoint's too."""
    s = scenario({**CKPT, "retention_checkpoints": 4, "corrupt_on_load": 0.001,
                  "tiers": {"peer": {**PEER, "retention_checkpoints": 3, "corrupt_on_load": 0.3}}},
                 n_gpus=64, servers=SERVERS)
    line = summary(s)
    assert "(30 s, 0.001 of loads found corrupt, the 4 newest saves kept), " in line, line
    assert ("(0.5 s, load 10 s, each shard held by 2 servers, jump 1, 0.3 of loads found corrupt, the 3 newest saves "
            "kept)") in line, line
    assert "corrupt" not in summary(scenario({**CKPT, "tiers": {"local": PEER}}))


def test_the_meaning_of_a_tiers_corrupt_loads_names_its_older_copies():
    """A tier's load found corrupt goes on to its next older copy kept before the persistent checkpoint
    (docs/model.md, "Copies kept"): docs/scenario-file.md's line for `corrupt_on_load` says so, not only the
    persistent checkpoint."""
    from simd.scenario.schema import LocalTier
    meaning = LocalTier.model_json_schema()["properties"]["corrupt_on_load"]["description"]
    assert "next older copy" in meaning and "retention_checkpoints" in meaning, meaning


def test_two_tiers_that_nest_pass_and_run_beside_writes_in_hyper_windows_and_beside_committed_sdcs():
    """A local tier under a peer tier (docs/model.md, "Two memory tiers") reaches the engine, the peer tier under
    the persistent checkpoint, the local one under it, and check-config's line names both in that order; a tier's
    writes inside hyper windows run; two tiers beside committed SDCs run."""
    tiers = {"peer": {**PEER, "interval_steps": 10}, "local": PEER}
    s = scenario({**CKPT, "tiers": tiers})
    assert (s.job_spec().tier.kind, s.job_spec().lower_tier) == ("peer", MemoryTier("local", 5, 0.5, 10.0, 1, 1))
    assert "a peer tier every 10 steps (0.5 s, load 10 s, each shard held by 2 servers, jump 1), a local tier " \
        "every 5 steps (0.5 s, load 10 s, each shard held by its own server)" in summary(s)
    writing = {"peer": tiers["peer"], "local": {**PEER, "write_seconds": 30}}
    hyper = scenario({**CKPT, "tiers": writing, "hyper": {"interval_steps": 5, "window_steps": 100}})
    assert hyper.job_spec().lower_tier.write_seconds == 30 and hyper.job_spec().hyper is not None
    committed = {"semantics": "committed",
                 "detectors": [{"name": "scan", "latency": {"distribution": "exponential", "mean_seconds": 3600}}]}
    both = scenario({**CKPT, "tiers": writing}, sdc={**committed, "retention_checkpoints": 2},
                    validation={"interval_steps": 0, "seconds": 0}).job_spec()
    assert both.committed_sdc is not None and both.lower_tier.write_seconds == 30
    assert run_job(both).tier["local_saves"] > 0
