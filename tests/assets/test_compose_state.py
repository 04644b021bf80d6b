"""The container runs keep the daemon's state: the compose file passes --state-dir on a named
volume, and the image creates that directory for its non-root user."""

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_compose_keeps_the_state_on_a_named_volume():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    simd = compose["services"]["simd"]
    command = simd["command"]
    state_dir = command[command.index("--state-dir") + 1]
    (mount,) = [v for v in simd["volumes"] if v.endswith(":" + state_dir)]
    assert mount.split(":")[0] in compose["volumes"]  # named: it survives `docker compose up --build`
    assert command[:2] == ["simd", "run"] and "0.0.0.0:9109" in command


def test_the_image_creates_the_state_directory_for_its_user():
    text = (ROOT / "Dockerfile").read_text()
    assert "install -d -o simd -g simd /var/lib/simd" in text
    assert text.index("useradd") < text.index("install -d -o simd")
