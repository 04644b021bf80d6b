"""``simd drill``: the client of the daemon's drill API (GET/POST /api/v1/drills)."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request

from simd import regularfile

TOKEN_ENV = "SIMD_API_TOKEN"
TOKEN_FILE_LIMIT = 4096  # bytes: a bearer token is one line (ours: 32 hex digits)
DEFAULT_URL = "http://127.0.0.1:9109"


def read_token(token_file: str | None) -> str | None:
    """The API token: from ``token_file`` (first line, stripped) or $SIMD_API_TOKEN; None if neither.
    ValueError naming the problem when the file cannot be used."""
    if token_file:
        try:  # a regular file of at most 4 KiB: not /dev/urandom, not a FIFO that never opens
            token = regularfile.read(token_file, TOKEN_FILE_LIMIT).decode("utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"--api-token-file: cannot read {token_file}: {getattr(exc, 'strerror', None) or exc}") \
                from None
        if not token:
            raise ValueError(f"--api-token-file: {token_file} is empty")
        return _one_token(token, f"--api-token-file: {token_file}")
    token = os.environ.get(TOKEN_ENV, "").strip()
    return _one_token(token, f"${TOKEN_ENV}") if token else None


def _one_token(token: str, where: str) -> str:
    """A bearer token is one line of visible ASCII without spaces (RFC 6750's b64token is narrower still):
    anything else is a token no client could send in a header."""
    if "\n" in token or "\r" in token:
        raise ValueError(f"{where} has more than one line: the bearer token must be a single line")
    if not all("!" <= c <= "~" for c in token):
        raise ValueError(f"{where}: the bearer token must be visible ASCII characters without spaces")
    return token


def request(url: str, method: str = "GET", token: str | None = None, body: dict | None = None,
            timeout: float = 10.0) -> tuple[int, dict]:
    """(status, JSON body) of one API call; OSError when the daemon cannot be reached."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as exc:
        try:
            return exc.code, json.loads(exc.read() or b"{}")
        except json.JSONDecodeError:
            return exc.code, {"error": exc.reason}


def list_lines(drills: list[dict]) -> list[str]:
    width = max((len(d["name"]) for d in drills), default=0) + 2  # the longest name and a gap: the columns stay apart
    return [f"{d['name']:<{width}}{'ACTIVE' if d['active'] else 'idle':<8}{d['description']}" for d in drills]
