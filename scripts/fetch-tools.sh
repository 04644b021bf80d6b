#!/usr/bin/env bash
# Fetch Prometheus, promtool, Alertmanager and amtool from Debian's packages without installing
# (and so without starting) their services: `apt-get download` + `dpkg -x` into .cache/tools
# (docs/design.md section 6). Idempotent: does nothing when the binaries are already there.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.cache/tools"
bin="$dest/usr/bin"
if [ -x "$bin/promtool" ] && [ -x "$bin/prometheus" ] && [ -x "$bin/amtool" ]; then
    exit 0
fi
mkdir -p "$dest/debs"
cd "$dest/debs"
pkgs=(prometheus prometheus-alertmanager)
if ! apt-get download "${pkgs[@]}" >/dev/null 2>&1; then
    # A fresh machine may have no package lists yet.
    apt-get update -qq
    apt-get download "${pkgs[@]}"
fi
for deb in ./*.deb; do
    dpkg -x "$deb" "$dest"
done
"$bin/promtool" --version 2>&1 | head -n 1 >&2
