# simd's daemon in a slim Python image: `docker build -t simd .`, then
# `docker run --rm -p 127.0.0.1:9109:9109 simd` serves http://127.0.0.1:9109/metrics.
FROM python:3.11.11-slim-bookworm

# NUMBA_CACHE_DIR: the engine's compiled kernels, compiled below at build time by the simd user. On a host of
# another CPU model numba compiles them again; when this directory is read-only (compose's read_only: true)
# simd copies it into a writable place first (--state-dir, else a private directory under /tmp): see
# simd/kernelcache.py.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    NUMBA_CACHE_DIR=/opt/simd/kernels

WORKDIR /src
# Only what the package build needs (.dockerignore keeps the rest out of the context). scripts/image-install.sh
# is also what tests/daemon/test_image_way.py installs and compiles with, so the test runs what the image runs.
COPY pyproject.toml README.md ./
COPY simd ./simd
COPY scripts/image-install.sh ./scripts/
RUN sh scripts/image-install.sh install python /src \
    && rm -rf /src/build \
    && useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin simd \
    && install -d -o simd -g simd /var/lib/simd "$NUMBA_CACHE_DIR"

# Compiled as the user that runs simd, into $NUMBA_CACHE_DIR: the first start is as fast as a second one.
USER simd
RUN sh scripts/image-install.sh compile simd

WORKDIR /
EXPOSE 9109

# Liveness: /-/healthy answers 200 while the tick loop runs (503 when it stalls), from the first second:
# the kernels load (or compile, on another CPU model) in the background. /-/ready says when every scenario
# runs on the shared clock (the compose file's healthcheck). No curl in the slim image: Python's urllib (an
# HTTPError on 503 is a non-zero exit).
HEALTHCHECK --interval=15s --timeout=3s --start-period=5s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:9109/-/healthy', timeout=2)"]

# docker-compose.yml adds --state-dir /var/lib/simd (created above for the simd user) on a named volume, so
# the simulation survives a restart of the container (`docker stop` sends SIGTERM, on which simd saves it).
CMD ["simd", "run", "--listen", "0.0.0.0:9109"]
