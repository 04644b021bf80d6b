"""docker-compose.yml, the Dockerfile and .dockerignore (docs/design.md 6: no container images on these
machines, so the checks are static): the compose file validates against the compose specification
(check-jsonschema's vendored copy), every path it mounts or builds from exists, images are pinned, ports
are bound to the loopback interface, configuration mounts are read-only.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"


def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_compose_validates_against_the_compose_spec():
    proc = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec",
                           str(COMPOSE)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_services():
    assert set(compose()["services"]) == {"simd", "prometheus", "alertmanager", "grafana"}


def test_every_mounted_and_built_path_exists():
    for name, svc in compose()["services"].items():
        build = svc.get("build")
        if build is not None:
            context = ROOT / (build if isinstance(build, str) else build.get("context", "."))
            assert context.is_dir(), name
            dockerfile = "Dockerfile" if isinstance(build, str) else build.get("dockerfile", "Dockerfile")
            assert (context / dockerfile).is_file(), name
        for v in svc.get("volumes", []):
            assert isinstance(v, str), f"{name}: use the short volume syntax"
            host = v.split(":")[0]
            if host.startswith((".", "/")):
                assert (ROOT / host).exists(), f"{name}: {host} does not exist"
            else:
                assert host in compose().get("volumes", {}), f"{name}: named volume {host} is not declared"


def test_configuration_mounts_are_read_only():
    for name, svc in compose()["services"].items():
        for v in svc.get("volumes", []):
            parts = v.split(":")
            if parts[0].startswith("."):
                assert parts[-1] == "ro", f"{name}: {v} is not read-only"


def test_images_are_pinned():
    for name, svc in compose()["services"].items():
        if "build" in svc:
            continue
        image = svc["image"]
        repo, _, tag = image.rpartition(":")
        assert repo and "/" not in tag, f"{name}: {image} has no tag"
        assert tag != "latest" and re.search(r"\d", tag), f"{name}: {image} is not pinned"
    images = {n: s.get("image", "") for n, s in compose()["services"].items()}
    assert re.fullmatch(r"prom/prometheus:v2\.53\.\d+", images["prometheus"])
    assert images["alertmanager"].startswith("prom/alertmanager:v")
    assert images["grafana"].startswith("grafana/grafana:")


def test_ports_bound_to_loopback():
    expected = {"simd": 9109, "prometheus": 9090, "alertmanager": 9093, "grafana": 3000}
    for name, svc in compose()["services"].items():
        ports = svc.get("ports", [])
        assert ports, name
        for p in ports:
            assert str(p).startswith("127.0.0.1:"), f"{name}: {p}"
        assert f"127.0.0.1:{expected[name]}:{expected[name]}" in ports


def test_simd_service():
    svc = compose()["services"]["simd"]
    assert "build" in svc
    env = svc.get("environment", [])
    names = [e.split("=")[0] for e in env] if isinstance(env, list) else list(env)
    assert "SIMD_API_TOKEN" in names
    # the token comes from the environment, never from the file
    if isinstance(env, dict):
        assert str(env["SIMD_API_TOKEN"]).startswith("${")
    else:
        assert all(e == "SIMD_API_TOKEN" or not e.startswith("SIMD_API_TOKEN=") or "${" in e for e in env)


def test_simd_runs_on_a_read_only_root_and_is_checked_for_readiness():
    """read_only: true with its writable places named (the state volume, a tmpfs /tmp), and the healthcheck on
    /-/ready (the Dockerfile's HEALTHCHECK is the liveness one, /-/healthy)."""
    svc = compose()["services"]["simd"]
    assert svc["read_only"] is True
    assert "/tmp" in svc["tmpfs"]
    assert "simd-state:/var/lib/simd" in svc["volumes"] and "--state-dir" in svc["command"]
    test = " ".join(svc["healthcheck"]["test"])
    assert "/-/ready" in test and "urllib" in test


def test_prometheus_and_alertmanager_mount_their_configuration():
    services = compose()["services"]
    prom = {v.split(":")[1]: v.split(":")[0] for v in services["prometheus"]["volumes"]}
    assert prom["/etc/prometheus/prometheus.yml"] == "./prometheus/prometheus.yml"
    assert prom["/etc/prometheus/rules"] == "./prometheus/rules"
    am = {v.split(":")[1]: v.split(":")[0] for v in services["alertmanager"]["volumes"]}
    assert am["/etc/alertmanager/alertmanager.yml"] == "./alertmanager/alertmanager.yml"


def test_grafana_anonymous_viewer():
    env = compose()["services"]["grafana"]["environment"]
    assert str(env["GF_AUTH_ANONYMOUS_ENABLED"]).lower() == "true"
    assert env["GF_AUTH_ANONYMOUS_ORG_ROLE"] == "Viewer"


# --- Dockerfile and .dockerignore -------------------------------------------------------------------------
def dockerfile() -> list[str]:
    """Instructions, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def test_dockerfile():
    lines = dockerfile()
    (base,) = [line for line in lines if line.startswith("FROM ")]
    assert re.fullmatch(r"FROM python:3\.11(\.\d+)?-slim(-\w+)?", base), base
    users = [line for line in lines if line.startswith("USER ")]
    assert users and users[-1].split()[1] not in ("root", "0")
    # installed and compiled by the script tests/daemon/test_image_way.py runs (the image's way, without Docker): the
    # install as root, the compile as the user that runs simd, into NUMBA_CACHE_DIR
    runs = [line for line in lines if line.startswith(("RUN ", "USER "))]
    install = next(i for i, line in enumerate(runs) if "sh scripts/image-install.sh install python /src" in line)
    user = next(i for i, line in enumerate(runs) if line == "USER simd")
    compile_ = next(i for i, line in enumerate(runs) if "sh scripts/image-install.sh compile simd" in line)
    assert install < user < compile_
    (env,) = [line for line in lines if line.startswith("ENV ")]
    assert re.search(r"\bNUMBA_CACHE_DIR=/\S+", env)
    assert "EXPOSE 9109" in lines
    (health,) = [line for line in lines if line.startswith("HEALTHCHECK ")]
    assert "urllib" in health and "/-/healthy" in health and "curl" not in health
    (cmd,) = [line for line in lines if line.startswith("CMD ")]
    assert cmd == 'CMD ["simd", "run", "--listen", "0.0.0.0:9109"]'


def test_dockerignore_keeps_what_the_build_needs():
    ignore = (ROOT / ".dockerignore").read_text().splitlines()
    for needed in ("!pyproject.toml", "!README.md", "!simd/", "!scripts/image-install.sh"):
        assert needed in ignore
    for line in dockerfile():
        if line.startswith("COPY "):
            for src in line.split()[1:-1]:
                assert (ROOT / src).exists(), src
