"""The daemon's ``/metrics`` renderings (simd.daemon.app serves them): prometheus_client's exposition
(``make_wsgi_app``), negotiated on ``Accept`` (text 0.0.4 or OpenMetrics 1.0) and ``Accept-Encoding`` (gzip),
``?name[]=`` selecting names. A rendering is reused while nothing it shows has changed (the same published tick
and daemon status) and for at most :data:`RENDER_REUSE_SECONDS`, so a burst of scrapers costs one rendering per
tick, not one each; the tick loop renders ahead what scrapers asked for recently (:meth:`Renderings.refresh`),
and a scrape that arrives while the current rendering is being made gets the previous one (one tick old)
rather than wait for it, unless a control request (a reload, a drill's start) has been answered since that one
began (:meth:`Renderings.acted`): whoever made the request and then scrapes sees what it changed."""

from __future__ import annotations

import threading
import urllib.parse
from collections.abc import Callable, Iterable

from prometheus_client import make_wsgi_app
from prometheus_client.exposition import choose_encoder, gzip_accepted
from prometheus_client.registry import Collector

from simd.daemon.response import Response, text

RENDER_REUSE_SECONDS = 1.0  # the process_* samples (CPU, memory) of a reused rendering are at most this old
STALE_LIMIT_SECONDS = 5.0  # a scrape gets the previous rendering while the current one renders, if this young
REFRESH_SECONDS, REFRESH_KEYS = 30.0, 4  # what ``refresh`` renders ahead: variants asked for this recently
# A variant of /metrics is what changes its bytes: the names of ``name[]`` (as a set), the format Accept
# chooses, gzip or not; every other part of the query string is ignored. The whole exposition (no name[]: at
# most four variants, what Prometheus and people scrape) is always rendered; at most this many name[]
# selections are rendered per published tick (from the families collected once for it), and a request for
# another is 429 until the next tick, so a flood of distinct queries costs a bounded amount of rendering and
# never takes a real scraper's turn. 16 leaves room for people and tools that select names.
MAX_VARIANTS = 16
WANTED_LIMIT = 64  # variants remembered for ``refresh`` (the most recent)


class Renderings:
    """The renderings of ``registry``'s exposition. ``version()`` names what a rendering shows (objects
    compared by identity): a rendering is reused while it returns the same and for RENDER_REUSE_SECONDS of
    ``clock``; None: every scrape renders."""

    def __init__(self, registry: Collector, version: Callable[[], tuple] | None, clock: Callable[[], float]):
        self.registry = registry
        self._families = _Families()  # the registry's families, collected once per rendering version
        self.metrics = make_wsgi_app(self._families if version is not None else registry)
        self._version, self._clock = version, clock
        # (version, when, {variant: Response}); a version's first item counts the control requests answered
        self._cache: tuple[tuple, float, dict] = ((), -1e300, {})
        self._acts = 0
        self._rendering = threading.Lock()
        self._wanted: dict[tuple, tuple[float, dict]] = {}  # request key -> (last asked, what it asked with)

    def response(self, environ: dict) -> Response:
        """prometheus_client's exposition, negotiated on Accept and Accept-Encoding; a rendering is reused while
        it is current (see Renderings), and while another thread renders the current one, a concurrent scrape
        gets the previous rendering (one tick old at most) instead of waiting or rendering it again. Renderings
        are keyed by their variant (see MAX_VARIANTS): a query string that only differs elsewhere is the same
        rendering."""
        key, env = _variant(environ)
        if self._version is None:
            return self._render(env)
        version, now = (self._acts, *self._version()), self._clock()
        current, when, responses = self._cache
        if key in responses and (self._current(version, current, when, now) or
                                 (self._rendering.locked() and now - when < STALE_LIMIT_SECONDS and
                                  current[0] == self._acts)):
            self._remember(key, env, now)
            return responses[key]
        with self._rendering:  # one rendering at a time
            current, when, responses = self._cache
            if key in responses and self._current(version, current, when, now):
                return responses[key]  # another thread rendered it meanwhile
            if not self._current(version, current, when, now):
                self._families.collect_from(self.registry)
                self._cache = (version, now, {})
            elif key[0] and sum(1 for k in responses if k[0]) >= MAX_VARIANTS:
                return text(429, f"at most {MAX_VARIANTS} variants of /metrics (name[] selections, formats) "
                                  "are rendered per tick: retry after the next tick\n", ("Retry-After", "1"))
            response = self._render(env)
            self._cache[2][key] = response
        self._remember(key, env, now)
        return response

    def _remember(self, key: tuple, env: dict, now: float) -> None:
        """What ``refresh`` renders ahead: the WANTED_LIMIT variants asked for most recently (a whole
        exposition is never pushed out by name[] selections)."""
        self._wanted[key] = (now, env)
        if len(self._wanted) > WANTED_LIMIT:
            selections = [k for k in self._wanted if k[0]] or list(self._wanted)
            self._wanted.pop(min(selections, key=lambda k: self._wanted[k][0]), None)

    def refresh(self) -> None:
        """Render, now, what scrapers asked for in the last REFRESH_SECONDS (at most REFRESH_KEYS variants), so
        that the scrapes after a tick find it ready; the tick loop calls it after each tick."""
        if self._version is None:
            return
        now = self._clock()
        recent = sorted(((t, k, env) for k, (t, env) in list(self._wanted.items()) if now - t < REFRESH_SECONDS),
                        key=lambda x: (bool(x[1][0]), -x[0]))[:REFRESH_KEYS]  # whole expositions first
        self._wanted = {k: (t, env) for t, k, env in recent}
        if not recent:  # nobody scrapes: no collection on the tick thread (the next scrape collects)
            return
        with self._rendering:
            version, responses = (self._acts, *self._version()), {}
            self._families.collect_from(self.registry)
            for _, k, env in recent:
                responses[k] = self._render(env)
            self._cache = (version, now, responses)

    def acted(self) -> None:
        """A control request changed what /metrics shows and is being answered: no scrape from now on gets a
        rendering begun before it (the previous rendering is served while another renders only when no request
        was answered in between)."""
        self._acts += 1

    @staticmethod
    def _current(version: tuple, cached: tuple, when: float, now: float) -> bool:
        return now - when < RENDER_REUSE_SECONDS and len(version) == len(cached) and all(
            a is b or (type(a) is int and a == b) for a, b in zip(version, cached, strict=True))

    def _render(self, env: dict) -> Response:
        got: dict = {}

        def capture(status: str, headers: list, exc_info=None) -> None:
            got["status"], got["headers"] = int(status.split()[0]), headers

        body = b"".join(self.metrics({**env, "REQUEST_METHOD": "GET", "PATH_INFO": "/metrics"}, capture))
        return Response(got["status"], body, [*got["headers"], ("Vary", "Accept, Accept-Encoding")])


class _Families:
    """A registry's metric families as collected once (:meth:`collect_from`), for every rendering of one
    version: what prometheus_client's exposition reads, ``name[]`` selections included (as
    prometheus_client's RestrictedRegistry selects samples), without collecting again."""

    def __init__(self):
        self.families: list = []

    def collect_from(self, registry: Collector) -> None:
        self.families = list(registry.collect())

    def collect(self):
        return iter(self.families)

    def restricted_registry(self, names: Iterable[str]) -> _Restricted:
        return _Restricted(self.families, set(names))


class _Restricted:
    def __init__(self, families: list, names: set[str]):
        self.families, self.names = families, names

    def collect(self):
        for family in self.families:
            selected = family._restricted_metric(self.names)  # prometheus_client's own selection of samples
            if selected:
                yield selected


def _variant(environ: dict) -> tuple[tuple, dict]:
    """(key, environ to render with) of a /metrics request: the ``name[]`` set, the content type Accept
    chooses and whether gzip is accepted, and nothing else of the request (see MAX_VARIANTS)."""
    query = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""))
    names = tuple(sorted(set(query.get("name[]", ()))))
    accept, encoding = environ.get("HTTP_ACCEPT", ""), environ.get("HTTP_ACCEPT_ENCODING", "")
    content_type = choose_encoder(accept)[1]
    gzipped = gzip_accepted(encoding)
    env = {"QUERY_STRING": urllib.parse.urlencode([("name[]", n) for n in names]), "HTTP_ACCEPT": accept,
           "HTTP_ACCEPT_ENCODING": "gzip" if gzipped else "", "SERVER_NAME": environ.get("SERVER_NAME", ""),
           "SERVER_PORT": environ.get("SERVER_PORT", ""), "wsgi.url_scheme": environ.get("wsgi.url_scheme", "http")}
    return (names, content_type, gzipped), env
