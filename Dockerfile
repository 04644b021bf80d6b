# simd's daemon in a slim Python image (DESIGN.md 2): `docker build -t simd .`, then
# `docker run --rm -p 127.0.0.1:9109:9109 simd` serves http://127.0.0.1:9109/metrics.
FROM python:3.11.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
# Only what the package build needs (.dockerignore keeps the rest out of the context).
COPY pyproject.toml README.md ./
COPY simd ./simd
RUN pip install . \
    && rm -rf /src/build \
    && useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin simd \
    && install -d -o simd -g simd /var/lib/simd

WORKDIR /
USER simd
EXPOSE 9109

# No curl in the slim image: Python's urllib. /healthz answers 200 while ticks are recent, 503 (an
# HTTPError, so a non-zero exit) when the tick loop stalls.
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:9109/healthz', timeout=2)"]

# docker-compose.yml adds --state-dir /var/lib/simd (created above for the simd user) on a named volume, so
# the simulation survives a restart of the container (`docker stop` sends SIGTERM, on which simd saves it).
CMD ["simd", "run", "--listen", "0.0.0.0:9109"]
