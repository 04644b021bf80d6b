#!/usr/bin/env bash
# The Debian packages tests/daemon/test_image_way.py needs to run simd as the container image does, without Docker:
# bubblewrap (a read-only root file system), Debian's python3 with venv (an interpreter every user can run),
# setpriv (util-linux: drop to an unprivileged user). Installed only when missing and only as root (a
# developer who is not root gets the test skipped, with the reason; CI runs as root).
set -euo pipefail
[ "$(id -u)" = 0 ] || exit 0
need=()
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v setpriv >/dev/null || need+=(util-linux)
/usr/bin/python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)
[ "${#need[@]}" = 0 ] && exit 0
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -qq "${need[@]}" >/dev/null 2>&1; then
    apt-get update -qq  # a fresh machine may have no package lists yet
    apt-get install -y -qq "${need[@]}" >/dev/null
fi
