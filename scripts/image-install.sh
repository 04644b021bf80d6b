#!/bin/sh
# How the container image installs simd and compiles its kernels. The Dockerfile runs it, and so does
# tests/daemon/test_image_way.py (the image's way without Docker), so the two cannot drift apart.
#
#   image-install.sh install PYTHON SRC   pip install SRC (not editable) into PYTHON's environment (as root)
#   image-install.sh compile SIMD         compile every kernel into $NUMBA_CACHE_DIR (as the user who runs simd)
set -eu
case "${1:-}" in
install)
    # pip writes every package's .pyc files now: at run time the prefix is read-only to simd's user
    "$2" -m pip install --disable-pip-version-check "$3"
    ;;
compile)
    : "${NUMBA_CACHE_DIR:?set NUMBA_CACHE_DIR to the directory the kernels are compiled into}"
    "$2" compile
    ;;
*)
    echo "usage: image-install.sh install PYTHON SRC | compile SIMD" >&2
    exit 2
    ;;
esac
