"""`servers.replay.log` as an attack surface: whoever may edit the scenario file (or trigger a reload) names a path
the daemon reads. A file that is not a fault log is refused without a word of it, the kernel's pseudo-files are
refused unread, every numeric pathology of a log (times out of the documented range, integers past a float, deep
nesting) is one bounded line of the configuration's own error at load (check-config, reload), never later in a
tick or a traceback in `simd simulate`; a relative path is resolved against the scenario file's folder."""

import json

import pytest
from support.cli import simd
from support.scenarios import replaying

from simd.quoting import MAX_LINE
from simd.scenario import ConfigError, load_config
from simd.traces.log import MAX_DAYS

SECRET = "hunter2-s3cret-value"

def event(node, t, kind="fault_start"):
    return {"node_id": node, "event_time": t, "event_type": kind,
            "fault_type": {"Level": "Hardware Failure", "Class": "GPU", "Desc": "xid"}}


def scenario(tmp_path, log) -> str:
    path = tmp_path / "scenario.yaml"
    path.write_text(replaying(str(log), servers=8))
    return str(path)


def refused(config: str) -> list[str]:
    """The errors of loading ``config`` (as check-config and a reload do): ConfigError and nothing else."""
    with pytest.raises(ConfigError) as exc:
        load_config(config)
    return exc.value.errors


@pytest.mark.parametrize("content", [f"{SECRET}\n", f"root:{SECRET}:19000:0:99999:7:::\nbin:x:1\n"])
def test_a_replayed_file_that_is_not_a_fault_log_is_never_quoted(tmp_path, content):
    secret = tmp_path / "token"
    secret.write_text(content)
    config = scenario(tmp_path, secret)
    (line,) = refused(config)
    assert SECRET not in line.lower() and str(secret) in line and "servers.replay" in line
    r = simd("check-config", config)
    assert r.returncode == 2 and SECRET not in r.stderr.lower() and "Traceback" not in r.stderr


def test_the_kernels_pseudo_files_are_refused(tmp_path):
    """/proc/self/environ (with the daemon's API token in it, PATH among the rest) is not read: refused as a
    pseudo-file."""
    (line,) = refused(scenario(tmp_path, "/proc/self/environ"))
    assert "pseudo-file" in line and "path=" not in line.lower()


PATHOLOGIES = [
    ("times-of-1e300-days", json.dumps([event("a", 1), event("b", 1e300)]), "event 2: event_time"),
    ("a-time-past-the-range", json.dumps([event("a", MAX_DAYS + 1)]), "event 1: event_time"),
    ("a-400-digit-time", json.dumps([event("a", 10**400)]), "event 1: event_time"),
    ("nested-100000-deep", "[" * 100_000 + "]" * 100_000, "nested"),
    ("a-5000-digit-integer", "[" + "7" * 5000 + "]", "digits"),
    ("csv-1e307-seconds", "time,server,event,class\n1e307,a,start,GPU\n", "line 2: time"),
]


@pytest.mark.parametrize("text, where", [p[1:] for p in PATHOLOGIES], ids=[p[0] for p in PATHOLOGIES])
def test_numeric_pathologies_are_refused_at_load(tmp_path, text, where):
    log = tmp_path / "log.json"
    log.write_text(text)
    config = scenario(tmp_path, log)
    (line,) = refused(config)
    assert where in line and str(log) in line and len(line) <= MAX_LINE
    for args in (("check-config", config), ("simulate", "--config", config, "--seeds", "1")):
        r = simd(*args)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.count("\n") == 1 and where in r.stderr


def test_a_5_mb_node_id_is_not_echoed(tmp_path):
    log = tmp_path / "log.json"
    log.write_text(json.dumps([event("a" * 5_000_000, 1)]))
    (line,) = refused(scenario(tmp_path, log))
    assert "event 1: node_id" in line and len(line) <= MAX_LINE


def test_a_relative_log_is_resolved_against_the_scenario_files_folder(tmp_path, monkeypatch):
    """As Prometheus resolves rule_files: check-config run from anywhere reads the log the daemon reads."""
    folder = tmp_path / "conf"
    folder.mkdir()
    (folder / "log.csv").write_text("time,server,event,class\n120,a,start,GPU\n600,b,start,NIC\n")
    config = folder / "scenario.yaml"
    config.write_text(replaying("log.csv", servers=8))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "log.csv").write_text("time,server,event,class\n60,z,start,GPU\n")  # the wrong one
    monkeypatch.chdir(elsewhere)
    s = load_config("../conf/scenario.yaml").scenarios[0]
    assert s.servers.replay.log == str(folder / "log.csv")
    assert s.job_spec().servers.replay[:3] == ((120.0,), (600.0,), ())
    assert simd("check-config", str(config)).returncode == 0


@pytest.mark.parametrize("log_text", [f"{SECRET}\n", json.dumps([event("x" * 5_000_000 + SECRET, 1)])],
                         ids=["a-token-file", "a-5-mb-node-id"])
def test_a_reload_of_such_a_file_answers_and_logs_no_content(tmp_path, caplog, log_text):
    """Through `POST /-/reload` in-process: the 400 body and the daemon's log name the file and what is wrong, never
    its content, each line bounded."""
    from support.daemon import FakeClock, wsgi_call
    from support.scenarios import SMALL_YAML

    from simd.daemon.process import build
    from simd.scenario import parse_config

    path = tmp_path / "scenario.yaml"  # scenario() writes it again below
    path.write_text(SMALL_YAML)
    parts = build(parse_config(SMALL_YAML), FakeClock(0.0), lambda: 1.7e9, api_token="t0k", config_path=str(path))
    (tmp_path / "log").write_text(log_text)
    scenario(tmp_path, tmp_path / "log")
    with caplog.at_level("INFO"):
        status, _, body = wsgi_call(parts.app, "POST", "/-/reload", AUTHORIZATION="Bearer t0k")
    errors = json.loads(body)["errors"]
    assert status == 400 and len(errors) == 1 and str(tmp_path / "log") in errors[0]
    assert SECRET not in body.decode().lower() and SECRET not in caplog.text.lower()
    assert all(len(line) <= MAX_LINE for line in errors + caplog.text.splitlines())
