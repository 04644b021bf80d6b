"""A response of the daemon's WSGI app (simd.daemon.app): a status, headers and a body, sent through WSGI's
``start_response``; the text and JSON ones the routes answer with."""

from __future__ import annotations

import json
from collections.abc import Iterable
from http import HTTPStatus

JSON = "application/json"
TEXT = "text/plain; charset=utf-8"


class Response:
    """A status, headers and a body; ``__call__`` sends it through WSGI's ``start_response``."""

    def __init__(self, status: int, body: bytes, headers: Iterable[tuple[str, str]]):
        self.status, self.body, self.headers = status, body, list(headers)

    def __call__(self, start_response, head: bool) -> list[bytes]:
        start_response(f"{self.status} {HTTPStatus(self.status).phrase}",
                       [*self.headers, ("Content-Length", str(len(self.body)))])
        return [] if head else [self.body]


def text(status: int, body: str, *headers: tuple[str, str]) -> Response:
    return Response(status, body.encode(), [("Content-Type", TEXT), *headers])


def json_response(status: int, payload: object, *headers: tuple[str, str]) -> Response:
    return Response(status, (json.dumps(payload) + "\n").encode(), [("Content-Type", JSON), *headers])


def error(status: int, message: str, *headers: tuple[str, str]) -> Response:
    return json_response(status, {"error": message}, *headers)
