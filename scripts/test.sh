#!/usr/bin/env bash
# Set up everything the tests need on a fresh machine and run them:
# a virtualenv with simd and its dev extra, Prometheus/promtool/Alertmanager from Debian's packages, and the
# Debian packages the image-way test runs simd with (bubblewrap, Debian's python3 with venv).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
python3 -m venv .venv
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q -e ".[dev]"
bash scripts/fetch-tools.sh
bash scripts/system-packages.sh
export PATH="$root/.cache/tools/usr/bin:$PATH"
# one pytest-xdist worker per core; the tests of a module that share a costly module fixture (a real daemon and
# Prometheus, the image's install) carry an xdist_group mark, which --dist loadgroup keeps on one worker
exec .venv/bin/python -m pytest -q -n auto --dist loadgroup "$@"
