"""The flags of ``simd run``, parsed and checked (light: ``simd``'s parser imports it for every command).

Each ``parse_*`` returns the value or raises ValueError with a one-line message naming the constraint.
"""

from __future__ import annotations

import math

DEFAULT_LISTEN = "127.0.0.1:9109"  # DESIGN.md section 5 (CLI); the container passes 0.0.0.0:9109
# Limits of the flags, the same as the scenario file's (config.Config): speedup in (0, 1e9], tick_seconds
# in [0.01, 3600].
MAX_SPEEDUP = 1e9
MIN_TICK_SECONDS, MAX_TICK_SECONDS = 0.01, 3600.0


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` or ``[IPv6]:PORT`` -> (host, port); ValueError with a readable message otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not host:
        raise ValueError(f"must be HOST:PORT, got {text!r}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ValueError(f"an IPv6 host must be in brackets ([::1]:9109), got {text!r}")
    if not host or any(c.isspace() for c in host):
        raise ValueError(f"must be HOST:PORT with a non-empty host, got {text!r}")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"port must be an integer in 0..65535, got {port!r}")
    return host, int(port)


def parse_speedup(text: str) -> float:
    v = _number(text)
    if not (0 < v <= MAX_SPEEDUP):
        raise ValueError(f"must be a number > 0 and <= {MAX_SPEEDUP:g}, got {text!r}")
    return v


def parse_tick_seconds(text: str) -> float:
    v = _number(text)
    if not (MIN_TICK_SECONDS <= v <= MAX_TICK_SECONDS):
        raise ValueError(f"must be a number in [{MIN_TICK_SECONDS:g}, {MAX_TICK_SECONDS:g}], got {text!r}")
    return v


def _number(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise ValueError(f"must be a number, got {text!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"must be a finite number, got {text!r}")
    return v
