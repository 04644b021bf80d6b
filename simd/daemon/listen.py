"""``simd run``'s listen address, parsed and checked (light: ``simd``'s parser imports it for every command).

``parse_listen`` returns (host, port) or raises ValueError with a one-line message naming the constraint.
The numeric flags (speedup, tick seconds) are checked against simd.scenario's types, their one home.
"""

from __future__ import annotations

DEFAULT_LISTEN = "127.0.0.1:9109"  # docs/design.md 5.2; the container passes 0.0.0.0:9109


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
