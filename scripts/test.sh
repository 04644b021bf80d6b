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
# pytest-xdist workers: one per core and one more, since many tests wait on processes they started (a daemon,
# Prometheus, the image's install): on 2 cores 3 workers ran the suite in 217 s where 2 took 245 s (4: 220 s),
# each from an empty kernel cache. The tests of a module that share a costly module fixture carry an
# xdist_group mark, which --dist loadgroup keeps on one worker. --no-loadscope-reorder hands the groups and
# the other tests out in the workers' collection order, which tests/conftest.py sorts (the two long groups,
# then the statistical checks, then the rest), instead of the largest groups first.
workers=$(( $(nproc) + 1 ))
exec .venv/bin/python -m pytest -q -n "$workers" --dist loadgroup --no-loadscope-reorder "$@"
