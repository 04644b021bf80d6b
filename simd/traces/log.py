"""A cluster's fault log (docs/traces.md): read, validated, paired into faults.

Three formats, told apart by their first non-blank character (``[`` or ``{``: JSON) and a CSV's header:

- **InfiniteHBD's JSON** (Shou et al., SIGCOMM'25; stepfun-ai/InfiniteHBD-Trace): a list of events
  ``{"node_id": str, "event_time": days, "event_type": "fault_start" | "fault_end",
  "fault_type": {"Level": str, "Class": str, "Desc": str}}``; times are days since the trace's start.
- **CSV** with the header ``time,server,event,class`` (a ``level`` and a ``desc`` column may follow):
  ``event`` is ``start`` or ``end``; ``time`` is seconds since the log's start, or an ISO 8601 date and time
  (with an offset, or in ``timezone`` when it has none: UTC by default), counted from the log's first event;
- **CSV of one fault per row**: a header with ``start``, ``end``, ``server`` and ``class`` (``level``, ``desc``)
  in any order, other columns left out; times as the event CSV's; an empty end: still in repair.

A CSV's columns may carry other names: ``columns`` maps simd's names (:data:`COLUMNS`) to the file's; its dates
may be in a format of their own (``time_format``, a strptime format such as LANL's ``%m/%d/%Y %H:%M``). The
command line (``simd trace --columns/--timezone/--time-format``) and a scenario file (``servers.replay``'s
``columns``, ``timezone``, ``time_format``) give these options through :func:`columns_map`, :func:`zone` and
:func:`time_format`, read a log through :func:`load`, and its errors name the option as the reader spells it
(``via``).

An end closes the open fault of its server with the same type (InfiniteHBD: Level, Class and Desc; CSV: its
class, level and desc); a server may have faults of different types open at once (the InfiniteHBD trace has one
such server). A fault without an end is an open repair (``end`` None). Problems are collected, one line each
naming the event (``event 12`` is the 12th of the JSON list, ``line 13`` the CSV's line), up to
:data:`MAX_ERRORS`; a log with any is refused whole (:class:`LogError`). Bounds: :data:`MAX_BYTES` of file,
:data:`MAX_EVENTS` events, names of at most :data:`MAX_NAME` characters, times from 0 to :data:`MAX_DAYS` days
(a JSON integer compared exactly, never converted), JSON nested no deeper than the interpreter's recursion limit
and its integers of at most ``sys.get_int_max_str_digits()`` digits.

A log may be any file its reader names (``servers.replay.log`` in a scenario file): an error never quotes what
is not a value of a fault log's own (a file that is not one is refused by what it lacks: a CSV header, a JSON
list of events), and quotes a value only through simd.quoting (short, printable, cut), every line bounded.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from dataclasses import dataclass, replace
from datetime import UTC, datetime, tzinfo
from pathlib import Path

from simd import regularfile
from simd.quoting import bounded, quoted

MAX_BYTES = 64 << 20  # 64 MiB: ~200,000 InfiniteHBD events (the public trace is 0.33 MiB for 1,168)
MAX_EVENTS = 1_000_000
MAX_NAME = 200
MAX_ERRORS = 20
DAY = 86400.0
# A log's times: days (JSON) or seconds (CSV) from 0 to a century of 365.25-day years. Real logs span months to a
# few years (InfiniteHBD's 349 days); the bound keeps a replay's steps in the engine's int64: at the schema's
# shortest step (1 ms) and most servers (2^17 copies of a one-server log) a copy's phase, period x copies,
# is at most 3.16e9 s x 1000 x 2^17 = 4.1e17 < 2^63 = 9.2e18, and its seconds finite everywhere they are used.
MAX_DAYS = 36525.0
MAX_SECONDS = MAX_DAYS * DAY


class LogError(ValueError):
    """A fault log that cannot be used: ``errors`` holds one line per problem."""

    def __init__(self, errors: list[str]):
        errors = [bounded(e) for e in errors]
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class Fault:
    server: int  # index into FaultLog.servers
    start: float  # seconds since the log's start
    end: float | None  # None: still in repair when the log ends
    level: str
    cls: str
    desc: str

    @property
    def repair_seconds(self) -> float | None:
        return None if self.end is None else self.end - self.start


@dataclass(frozen=True)
class FaultLog:
    servers: tuple[str, ...]  # the servers the log names, in the order of their first event
    faults: tuple[Fault, ...]  # by start time (ties: the log's order)
    span_seconds: float  # from the log's start (time 0) to its last event
    source: str  # "infinitehbd" or "csv"
    origin: float | None = None  # a log of dates: its time 0 (its first event) as POSIX seconds; None: of seconds

    @property
    def span_days(self) -> float:
        return self.span_seconds / DAY


def load(path: str | Path, columns: dict[str, str] | None = None, timezone: tzinfo | None = None,
         time_format: str | None = None, via: str = "cli") -> FaultLog:
    """The fault log in ``path`` (LogError: what is wrong, one line per problem; the file is read through
    simd.regularfile: a regular file of at most MAX_BYTES). The other arguments: :func:`parse`'s."""
    try:
        raw = regularfile.read(path, MAX_BYTES)
    except OSError as exc:
        raise LogError([f"{exc.strerror or exc}"]) from None  # (the caller names the file)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LogError([f"not UTF-8 text (byte {exc.start})"]) from None
    # a byte order mark (spreadsheets save CSV with one) is no part of the header's first column's name
    return parse(text.removeprefix("\ufeff"), columns, timezone, time_format, via)


def parse(text: str, columns: dict[str, str] | None = None, timezone: tzinfo | None = None,
          time_format: str | None = None, via: str = "cli") -> FaultLog:
    """A fault log from its text, any format (module docstring). ``columns``: simd's name of a CSV column -> the
    file's (:data:`COLUMNS`); ``timezone``: the zone of a CSV's dates without an offset (default UTC);
    ``time_format``: a strptime format every CSV time is read with (default: seconds or ISO 8601); ``via``: how
    errors name these options (:data:`OPTIONS`' keys)."""
    head = text.lstrip()[:1]
    names = OPTIONS[via]
    if head in ("[", "{"):
        if columns or timezone is not None or time_format:
            raise LogError([f"{names['columns']}, {names['timezone']} and {names['time_format']} name a CSV's "
                            "columns and dates: this is an InfiniteHBD JSON log"])
        return _pair(_infinitehbd(text), "infinitehbd")
    if not head:
        raise LogError(["the log is empty"])
    return _csv(text, columns or {}, _Times(timezone or UTC, time_format, via))


# The options that say how a CSV log is read, as the command line (simd trace) and a scenario file
# (servers.replay) spell them: one meaning each, the errors naming the reader's spelling.
OPTIONS = {"cli": {"columns": "--columns", "timezone": "--timezone", "time_format": "--time-format"},
           "scenario": {"columns": "replay.columns", "timezone": "replay.timezone",
                        "time_format": "replay.time_format"}}


def _mapping(via: str, name: str, theirs: str) -> str:
    """One pair of a column map as the reader writes it."""
    return f"--columns {name}={theirs}" if via == "cli" else f"replay.columns {{{name}: {theirs}}}"


def columns_map(pairs) -> dict[str, str]:
    """A column map from its (simd's name, the file's name) pairs, checked (ValueError: one line): each of simd's
    names one of :data:`COLUMNS` (case and surrounding spaces ignored), once, naming a column."""
    out: dict[str, str] = {}
    for name, theirs in pairs:
        name, theirs = str(name).strip().lower(), str(theirs).strip()
        if name not in COLUMNS:
            raise ValueError(f"{quoted(name)} is not a column simd reads ({', '.join(COLUMNS)})")
        if name in out:
            raise ValueError(f"{name} is named twice")
        if not theirs:
            raise ValueError(f"{name}= names no column")
        if len(theirs) > MAX_NAME:
            raise ValueError(f"{name}= names a column of more than {MAX_NAME} characters")
        out[name] = theirs
    return out


def zone(text: str) -> tzinfo:
    """A time zone: a name of the system's tz database (zoneinfo), UTC, or a fixed offset such as +05:30
    (ValueError: one line)."""
    import datetime as dt
    import re
    import zoneinfo

    if m := re.fullmatch(r"([+-])(\d\d):?(\d\d)", text.strip()):
        minutes = int(m[2]) * 60 + int(m[3])
        if minutes < 24 * 60:
            return dt.timezone(dt.timedelta(minutes=minutes if m[1] == "+" else -minutes))
    try:
        return zoneinfo.ZoneInfo(text.strip())
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(f"{quoted(text)} is not a time zone of the system's tz database (e.g. Europe/Berlin, UTC) "
                         "nor an offset such as +05:30") from None


def zone_name(tz: tzinfo) -> str:
    """The text :func:`zone` reads back as ``tz`` (a zone's tz database name, or a fixed offset as +05:30)."""
    key = getattr(tz, "key", None)
    if key:
        return key
    minutes = round(tz.utcoffset(None).total_seconds() / 60)
    return f"{'-' if minutes < 0 else '+'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


MAX_FORMAT = 100  # a time format's characters (LANL's "%m/%d/%Y %H:%M" has 14)


def time_format(text: str) -> str:
    """A strptime format for a log's dates, checked (ValueError: one line): at most MAX_FORMAT characters, a
    directive at least, and one that reads back the date and time to the minute it writes (an unknown directive
    such as ``%Q`` does not, nor a format without the year, the day or the hour)."""
    if len(text) > MAX_FORMAT or "%" not in text:
        raise ValueError(f"expected a strptime format of at most {MAX_FORMAT} characters such as "
                         f"'%m/%d/%Y %H:%M', got {quoted(text)}")
    sample = datetime(2005, 6, 21, 15, 54, tzinfo=UTC)  # (seconds 0: a format may leave them out)
    try:
        same = datetime.strptime(sample.strftime(text), text).replace(tzinfo=None) == sample.replace(tzinfo=None)
    except (ValueError, TypeError):
        same = False
    if not same:  # an unknown directive, or a format without the day or the time of day (%H:%M alone)
        raise ValueError(f"{quoted(text)} is not a strptime format that reads back the date and time it writes "
                         "(directives: %Y %m %d %H %M %S %b %p %z ...)")
    return text


@dataclass(frozen=True)
class _Times:
    """How a CSV's times are read: the zone of dates without an offset, a strptime format (None: seconds or ISO
    8601), the reader's spelling of the options (OPTIONS)."""

    zone: tzinfo
    format: str | None = None
    via: str = "cli"

    def expected(self) -> str:
        """What a time must be, for an error."""
        if self.format:
            return f"a date and time of {OPTIONS[self.via]['time_format']} {quoted(self.format)}"
        return f"seconds from 0 to {MAX_SECONDS:.0f} ({MAX_DAYS:g} days) or an ISO 8601 date and time"


# --- the formats: events (where, server, time in seconds, kind, (level, class, desc)) ------------------------------

def _infinitehbd(text: str) -> list[tuple]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LogError([f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"]) from None
    except RecursionError:  # the C decoder counts its depth against the recursion limit
        raise LogError(["not valid JSON for a log: nested too deeply (an InfiniteHBD log has 3 levels)"]) from None
    except ValueError:  # the one other ValueError of json.loads: an integer past int's string conversion limit
        raise LogError([f"not valid JSON for a log: an integer of more than {sys.get_int_max_str_digits()} "
                        "digits"]) from None
    if not isinstance(doc, list):
        raise LogError(["an InfiniteHBD log is a JSON list of events"])
    if len(doc) > MAX_EVENTS:
        raise LogError([f"more than {MAX_EVENTS} events ({len(doc)})"])
    errors, events = [], []
    for i, e in enumerate(doc, start=1):
        where = f"event {i}"
        problem = None
        if not isinstance(e, dict):
            problem = "not an object"
        elif missing := [k for k in ("node_id", "event_time", "event_type", "fault_type") if k not in e]:
            problem = f"missing {', '.join(missing)}"
        elif not _name(e["node_id"]):
            problem = f"node_id must be a non-empty string of at most {MAX_NAME} characters, got {quoted(e['node_id'])}"
        elif (seconds := _days(e["event_time"])) is None:
            problem = f"event_time must be a number of days from 0 to {MAX_DAYS:g}, got {quoted(e['event_time'])}"
        elif e["event_type"] not in ("fault_start", "fault_end"):
            problem = f"event_type must be fault_start or fault_end, got {quoted(e['event_type'])}"
        elif not isinstance(e["fault_type"], dict) or not all(
                _name(e["fault_type"].get(k)) for k in ("Level", "Class", "Desc")):
            problem = "fault_type must be an object with Level, Class and Desc strings"
        if problem:
            errors.append(f"{where}: {problem}")
            if len(errors) >= MAX_ERRORS:
                break
            continue
        ft = e["fault_type"]
        events.append((where, e["node_id"], seconds, e["event_type"] == "fault_start",
                       (ft["Level"], ft["Class"], ft["Desc"])))
    if errors:
        raise LogError(errors)
    return events


CSV_HEADER = ("time", "server", "event", "class")


ROW_COLUMNS = ("start", "end", "server", "class")  # a log of one fault per row (then optionally level, desc)
COLUMNS = ("start", "end", "server", "class", "level", "desc", "time", "event")  # the names --columns maps


def _csv(text: str, columns: dict[str, str], times: _Times) -> FaultLog:
    rows = csv.reader(io.StringIO(text))
    try:
        header = [h.strip().lower() for h in next(rows)]
    except (StopIteration, csv.Error) as exc:
        raise LogError([f"line 1: not CSV ({exc})"]) from None
    renamed = {}
    for name, theirs in columns.items():  # (the file's names are not quoted: the flag's are)
        found = [i for i, h in enumerate(header) if h == theirs.strip().lower()]
        if len(found) != 1:
            raise LogError([f"line 1: {_mapping(times.via, name, quoted(theirs))}: the header has "
                            + ("no column of that name" if not found else f"{len(found)} columns of that name")])
        renamed[found[0]] = name
    if renamed:  # a column of one of the mapped names that the map does not point at is left out
        header = [renamed.get(i, "" if h in columns else h) for i, h in enumerate(header)]
    if ("start" in header or "end" in header) and "event" not in header:
        return _rows(rows, header, times)
    events, origin = _events(rows, header, times)
    return replace(_pair(events, "csv"), origin=origin)


def _data_rows(rows, header: list[str], errors: list[str], events: list):
    """A CSV's data rows as (where, row), each with as many fields as ``header`` (blank rows skipped, another
    length an error in ``errors``): refused past MAX_EVENTS ``events``, stopped at MAX_ERRORS ``errors``, a
    CSV error one line. Both CSV forms read their rows through it."""
    try:
        for n, row in enumerate(rows, start=2):
            if not row or all(not c.strip() for c in row):
                continue
            if len(events) >= MAX_EVENTS:
                raise LogError([f"more than {MAX_EVENTS} events"])
            where = f"line {n}"
            if len(row) != len(header):
                errors.append(f"{where}: {len(row)} fields where the header has {len(header)}")
            else:
                yield where, row
            if len(errors) >= MAX_ERRORS:
                return
    except csv.Error as exc:
        errors.append(f"line {rows.line_num}: not CSV ({exc})")


def _events(rows, header: list[str], times: _Times) -> list[tuple]:
    """A CSV of start and end events (the header time,server,event,class)."""
    if tuple(header[:4]) != CSV_HEADER or not set(header[4:]) <= {"level", "desc"} or len(set(header)) != len(header):
        raise LogError([f"line 1: not a fault log: the header must be {','.join(CSV_HEADER)} (then optionally "
                        f"level, desc), or {','.join(ROW_COLUMNS)} for a fault per row (any order, other columns "
                        f"left out; {OPTIONS[times.via]['columns']} maps other names)"])  # (the line is not quoted)
    col = {h: i for i, h in enumerate(header)}
    errors, events, origin_iso = [], [], None
    for where, row in _data_rows(rows, header, errors, events):
        t, server, kind = row[col["time"]].strip(), row[col["server"]].strip(), row[col["event"]].strip()
        cls = row[col["class"]].strip()
        level = row[col["level"]].strip() if "level" in col else ""
        desc = row[col["desc"]].strip() if "desc" in col else ""
        seconds, iso = _time(t, times)
        if isinstance(seconds, str):
            errors.append(f"{where}: time {seconds}")
        elif seconds is None:
            errors.append(f"{where}: time must be {times.expected()}, got {quoted(t)}")
        elif not _name(server):
            errors.append(f"{where}: server must be a non-empty name of at most {MAX_NAME} characters")
        elif kind not in ("start", "end"):
            errors.append(f"{where}: event must be start or end, got {quoted(kind)}")
        elif not _name(cls) or len(level) > MAX_NAME or len(desc) > MAX_NAME:
            errors.append(f"{where}: class must be a non-empty name of at most {MAX_NAME} characters")
        elif origin_iso is not None and origin_iso != iso:
            errors.append(f"{where}: times mix seconds and ISO 8601 dates")
        else:
            origin_iso = iso
            events.append((where, server, seconds, kind == "start", (level, cls, desc)))
    if errors:
        raise LogError(errors)
    return _from_first(events, origin_iso)


def _from_first(events: list[tuple], iso: bool | None) -> tuple[list[tuple], float | None]:
    """(events whose times are dates (POSIX seconds) counted from the first, checked against MAX_DAYS; the first's
    POSIX seconds, None for times in seconds)."""
    first = None
    if iso and events:
        first = min(e[2] for e in events)
        events = [(w, s, t - first, k, ty) for w, s, t, k, ty in events]
        errors = [f"{w}: time is more than {MAX_DAYS:g} days after the log's first event" for w, _, t, _, _ in events
                  if t > MAX_SECONDS][:MAX_ERRORS]
        if errors:
            raise LogError(errors)
    return events, first


def _rows(rows, header: list[str], times: _Times) -> FaultLog:
    """A CSV of one fault per row: start, end (empty: still in repair), server, class, optionally level and desc,
    in any order; other columns left out. Faults of one server may overlap (the server is down until the last
    end, as in the fit)."""
    for name in ROW_COLUMNS:
        if header.count(name) != 1:
            named = _mapping(times.via, name, "NAME")
            raise LogError([f"line 1: a log of one fault per row needs the columns {', '.join(ROW_COLUMNS[:-1])} and "
                            f"{ROW_COLUMNS[-1]}: {name} is " + (f"missing ({named} names it)"
                                                              if not header.count(name) else "there twice")])
    col = {h: header.index(h) for h in (*ROW_COLUMNS, "level", "desc") if h in header}
    errors, events, origin_iso = [], [], None
    for where, row in _data_rows(rows, header, errors, events):
        cell = {h: row[i].strip() for h, i in col.items()}
        level, desc = cell.get("level", ""), cell.get("desc", "")
        start, start_iso = _time(cell["start"], times)
        end, end_iso = _time(cell["end"], times) if cell["end"] else (None, start_iso)
        bad = next(((name, t) for name, t in (("start", start), ("end", end)) if isinstance(t, str)), None)
        if bad:
            errors.append(f"{where}: {bad[0]} {bad[1]}")
        elif start is None or (cell["end"] and end is None):
            name = "start" if start is None else "end"
            errors.append(f"{where}: {name} must be {times.expected()}, got {quoted(cell[name])}")
        elif not _name(cell["server"]):
            errors.append(f"{where}: server must be a non-empty name of at most {MAX_NAME} characters")
        elif not _name(cell["class"]) or len(level) > MAX_NAME or len(desc) > MAX_NAME:
            errors.append(f"{where}: class must be a non-empty name of at most {MAX_NAME} characters")
        elif start_iso != end_iso or (origin_iso is not None and origin_iso != start_iso):
            errors.append(f"{where}: times mix seconds and ISO 8601 dates")
        elif end is not None and end < start:
            errors.append(f"{where}: end is before start")
        else:
            origin_iso = start_iso
            kind = (level, cell["class"], desc)
            events.append((where, cell["server"], start, True, kind))
            if end is not None:
                events.append((where, cell["server"], end, False, kind))
    if errors:
        raise LogError(errors)
    if not events:
        raise LogError(["the log has no events"])
    events, origin = _from_first(events, origin_iso)
    faults, servers = [], {}
    for i in sorted(range(0, len(events)), key=lambda i: events[i][2]):  # servers named in the order of time
        where, name, t, start, kind = events[i]
        s = servers.setdefault(name, len(servers))
        if start:
            end = events[i + 1][2] if i + 1 < len(events) and not events[i + 1][3] else None
            faults.append((t, i, Fault(s, t, end, *kind)))
    faults.sort(key=lambda f: f[:2])  # by start (ties: the file's order)
    return FaultLog(tuple(servers), tuple(f for _, _, f in faults), max(e[2] for e in events), "csv", origin)


def _time(t: str, times: _Times) -> tuple[float | str | None, bool]:
    """(seconds, is a date): seconds since the log's start, or a date (ISO 8601, or of ``times.format``: then every
    time is one) as POSIX seconds (one without an offset in ``times.zone``; at a change of the clocks an hour that
    happens twice is taken the first time, one that never happens is the string saying so); None when it is
    neither."""
    zone = times.zone
    if times.format:
        try:
            d = datetime.strptime(t, times.format)
        except ValueError:
            return None, True
    else:
        try:
            x = float(t)
            return (x if 0 <= x <= MAX_SECONDS else None), False  # (NaN fails the test)
        except ValueError:
            pass
        try:
            d = datetime.fromisoformat(t)
        except ValueError:
            return None, True
    if d.tzinfo is None:
        local = d.replace(tzinfo=zone)
        if local.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != d:
            return f"{quoted(t)} is not a time in {zone} (its clocks skipped it)", True
        d = local
    return d.timestamp(), True


def _name(v) -> bool:
    return isinstance(v, str) and 0 < len(v) <= MAX_NAME


def _days(v) -> float | None:
    """A JSON event_time (days) as seconds, or None when it is not a number of days from 0 to MAX_DAYS (an integer
    is compared exactly: one of 400 digits is refused, never converted to a float that overflows)."""
    if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= MAX_DAYS:  # (NaN fails the test)
        return None
    return float(v) * DAY


# --- a part of a log ---------------------------------------------------------------------------------------

def when(text: str, log: FaultLog, timezone: tzinfo | None = None, time_format: str | None = None) -> float:
    """A time of ``log`` as seconds since its start (ValueError: one line): a number of days since the start, or, for a
    log of dates, a date read as its times are (``time_format``, else ISO 8601; without an offset in ``timezone``),
    strictly inside the log's span."""
    try:
        seconds = float(text) * DAY
    except ValueError:
        if log.origin is None:
            raise ValueError(f"{quoted(text)} is not a number of days since the log's start (its times are not "
                             "dates)") from None
        times = _Times(timezone or UTC, None, "cli")
        seconds, _ = _time(text, replace(times, format=time_format)) if time_format else (None, True)
        if not isinstance(seconds, float):
            seconds, _ = _time(text, times)
        if not isinstance(seconds, float):
            raise ValueError(f"expected days since the log's start or a date, got {quoted(text)}") from None
        seconds -= log.origin
    if not 0 < seconds < log.span_seconds:  # (NaN fails the test)
        raise ValueError(f"{quoted(text)} is not inside the log's span (0 to {log.span_days:.6g} days)")
    return seconds


def before(log: FaultLog, seconds: float) -> FaultLog:
    """The part of ``log`` before ``seconds`` (since its start): its faults starting before, a repair ending after
    open, its span that long."""
    faults = tuple(f if f.end is None or f.end <= seconds else replace(f, end=None) for f in log.faults
                   if f.start < seconds)
    return replace(log, faults=faults, span_seconds=seconds)


# --- pairing ------------------------------------------------------------------------------------------------

def _pair(events: list[tuple], source: str) -> FaultLog:
    """Faults from events: each end closes its server's open fault of the same type (module docstring)."""
    if not events:
        raise LogError(["the log has no events"])
    order = sorted(range(len(events)), key=lambda i: events[i][2])  # by time, stable
    servers: dict[str, int] = {}
    open_: dict[tuple, int] = {}  # (server, type) -> index into faults
    faults: list[list] = []
    errors = []
    for i in order:
        where, name, t, start, kind = events[i]
        s = servers.setdefault(name, len(servers))
        key = (s, kind)
        if start:
            if key in open_:
                errors.append(f"{where}: server {quoted(name)} starts a fault of type {quoted('/'.join(kind))} while "
                              "one of that type is open (no end between)")
            else:
                open_[key] = len(faults)
                faults.append([s, t, None, *kind])
        elif key not in open_:
            errors.append(f"{where}: server {quoted(name)} ends a fault of type {quoted('/'.join(kind))} that is not "
                          "open")
        else:
            faults[open_.pop(key)][2] = t
        if len(errors) >= MAX_ERRORS:
            break
    if errors:
        raise LogError(errors)
    span = max(e[2] for e in events)
    return FaultLog(tuple(servers), tuple(Fault(*f) for f in faults), span, source)
