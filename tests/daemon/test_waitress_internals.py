"""The waitress internals simd.daemon.waitress_adapter subclasses or replaces, checked against the waitress
installed: each check names the internal, so a waitress release that moves or reshapes one fails here, loudly,
rather than as a hardening that silently stops working (pyproject.toml pins waitress to the versions tested)."""

from __future__ import annotations

import inspect
import socket
import threading
import time

import pytest
import waitress
from waitress import wasyncore
from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.receiver import ChunkedReceiver
from waitress.task import ThreadedTaskDispatcher
from waitress.utilities import RequestEntityTooLarge

from simd.daemon import waitress_adapter
from simd.daemon.waitress_adapter import HttpServer


def _params(fn) -> list[str]:
    return list(inspect.signature(fn).parameters)


def _assigns(cls: type, *names: str) -> None:
    """Every ``self.<name>`` is set or used in ``cls``'s source (instance attributes have no other trace)."""
    source = inspect.getsource(cls)
    for name in names:
        assert f"self.{name}" in source, f"waitress: {cls.__module__}.{cls.__name__} no longer has self.{name}"


@pytest.mark.parametrize("internal, fn, params", [
    ("waitress.create_server", waitress.create_server, ["application", "map", "_start", "_sock", "_dispatcher", "kw"]),
    ("waitress.parser.HTTPRequestParser.parse_header", HTTPRequestParser.parse_header, ["self", "header_plus"]),
    ("waitress.receiver.ChunkedReceiver.__init__", ChunkedReceiver.__init__, ["self", "buf"]),
    ("waitress.receiver.ChunkedReceiver.received", ChunkedReceiver.received, ["self", "s"]),
    ("waitress.channel.HTTPChannel.writable", HTTPChannel.writable, ["self"]),
    ("waitress.task.ThreadedTaskDispatcher.shutdown", ThreadedTaskDispatcher.shutdown,
     ["self", "cancel_pending", "timeout"]),
    ("waitress.wasyncore.loop", wasyncore.loop, ["timeout", "use_poll", "map", "count"]),
    ("waitress.wasyncore.close_all", wasyncore.close_all, ["map", "ignore_all"]),
])
def test_the_functions_overridden_or_called_keep_their_signature(internal, fn, params):
    assert _params(fn) == params, f"waitress: {internal} changed its signature to {_params(fn)}"


def test_the_server_options_passed_are_known_to_waitress():
    known = {name for name, _ in Adjustments._params}
    passed = {"host", "port", "ipv4", "ipv6", "threads", "connection_limit", "channel_timeout", "cleanup_interval",
              "backlog", "asyncore_use_poll", "max_request_body_size", "ident", "expose_tracebacks"}
    assert passed <= known, f"waitress: create_server no longer knows {sorted(passed - known)}"
    assert "outbuf_high_watermark" in known, "waitress: Adjustments.outbuf_high_watermark is gone"


def test_the_attributes_the_subclasses_read_are_set_by_waitress():
    assert HTTPChannel.parser_class is HTTPRequestParser, "waitress: HTTPChannel.parser_class is not the parser"
    _assigns(HTTPChannel, "requests", "request", "total_outbufs_len", "adj", "will_close", "close_when_flushed",
             "last_activity", "parser_class")
    _assigns(HTTPRequestParser, "chunked", "body_rcv", "adj", "completed", "header_bytes_received",
             "body_bytes_received")
    _assigns(ChunkedReceiver, "error", "chunk_remainder", "buf")
    assert hasattr(ChunkedReceiver, "__len__"), "waitress: ChunkedReceiver has no __len__ (the body so far)"
    _assigns(ThreadedTaskDispatcher, "queue", "lock", "queue.append", "queue.popleft")
    assert "len(self.queue)" in inspect.getsource(ThreadedTaskDispatcher), \
        "waitress: ThreadedTaskDispatcher no longer takes len() of its queue (_FairQueue.__len__)"
    assert RequestEntityTooLarge("exceeds").code == 413, "waitress: RequestEntityTooLarge is no longer a 413"
    assert waitress_adapter._Channel.__mro__[1] is HTTPChannel and waitress_adapter._Parser.__mro__[1] is \
        HTTPRequestParser and waitress_adapter._BoundedChunks.__mro__[1] is ChunkedReceiver


def test_a_running_server_has_what_the_adapter_replaces_and_reads():
    """A real server and a connection with a request in progress: the objects, as waitress builds them."""
    server = HttpServer(("127.0.0.1", 0), lambda environ, start_response: [])
    inner = server._server
    for name in ("_map", "active_channels", "effective_port", "trigger", "task_dispatcher", "channel_class",
                 "handle_accept", "readable", "close"):
        assert hasattr(inner, name), f"waitress: the server ({type(inner).__name__}) has no {name}"
    assert inner.channel_class is waitress_adapter._Channel, "waitress: the server ignores channel_class"
    assert isinstance(inner.task_dispatcher.queue, waitress_adapter._FairQueue)
    assert hasattr(inner.task_dispatcher, "lock") and callable(inner.trigger.pull_trigger)
    assert inner.handle_accept == server._accept_batch and inner.readable == server._readable_evicting
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    client = socket.create_connection(("127.0.0.1", server.port))
    try:
        client.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # a request in progress
        deadline = time.monotonic() + 10
        while not any(c.request is not None for c in list(inner.active_channels.values())):
            assert time.monotonic() < deadline, "waitress: no channel with a request in progress appeared"
            time.sleep(0.01)
        (channel,) = inner.active_channels.values()
        assert type(channel) is waitress_adapter._Channel and type(channel.request) is waitress_adapter._Parser
        for name in ("requests", "total_outbufs_len", "will_close", "close_when_flushed", "last_activity"):
            assert hasattr(channel, name), f"waitress: a channel has no {name}"
        for name in ("completed", "header_bytes_received", "body_bytes_received"):
            assert hasattr(channel.request, name), f"waitress: a request parser has no {name}"
        assert isinstance(channel.adj.outbuf_high_watermark, int)
    finally:
        client.close()
        server.shutdown()
        server.server_close()
        thread.join(10)
