"""``battlejudge bench tables``: online tables played by scripted people, timed from an
action to the moment the other seat sees it.

Each table has two seat clients. A seat holds the table's event stream open on a
connection of its own (``GET /v1/tables/ID/events``, Server-Sent Events) and, when its
latest view says it is to move, waits a think time (``think`` seconds, jittered ±50%,
seeded; 0: as fast as possible), picks one of the view's ``legal`` actions at random
(seeded) and posts it on a keep-alive connection of its own. For every action the bench
keeps two times: from sending the POST to the moment the OTHER seat's stream delivers the
event with the table's new version (the figure people feel: the opponent's move appearing),
and the POST's own response time. A table whose game ends is replaced by a new one.

Two runs against one service, the baseline first: ONE table for a few seconds, then
``tables`` tables, same think time; each run's figures are measured after a warm-up.
By default :func:`started_service` runs ``battlejudge serve --workers 2 --tables TMPDIR``
on loopback; the bench gives each seat a loopback address of its own
(127.1.x.y), because the service's fair queue and its limits take one address for one
client, and people at different tables are different clients.

Everything the bench does runs in one asyncio loop of its own process, with HTTP/1.1
written and read by hand (:mod:`.raw_http`); its CPU time and the loop's lag are measured
with the figures, so a reader can see that the bench was not the bottleneck.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from battlejudge.bench.raw_http import read_response
from battlejudge.bench.serve import percentile, serve_process
from battlejudge.solver.errors import InputError

__all__ = [
    "TARGET_MS",
    "TARGET_TABLES",
    "Endpoint",
    "Settings",
    "SseParser",
    "endpoint_of",
    "measure",
    "run_tables",
    "started_service",
]

TARGET_MS: Final = 100.0
"""The issue's target: p99 from an action to the other seat's event, in milliseconds..."""
TARGET_TABLES: Final = 100
"""... with this many tables, on ``serve --workers 2`` on a quiet 2-core machine."""
STALL: Final = 10.0
"""Seconds a seat waits for any news of its table before it counts a stall and asks."""
DRAIN: Final = 3.0
"""Seconds given, after a run, to the events of the actions made before its end."""
KEEP_ALIVE: Final = 4.0
"""Seconds after which a seat's idle POST connection is opened again rather than reused
(the service closes idle keep-alive connections after 5 s by default)."""
LAG_TICK: Final = 0.02
"""Seconds between the probes of the bench's own event loop lag."""


@dataclass(frozen=True)
class Endpoint:
    """Where the service listens, and whether each seat gets a loopback address of its own."""

    host: str
    port: int
    distinct: bool

    def local(self, seat: int) -> tuple[str, int] | None:
        """The local address of seat number ``seat`` (None: the system's choice)."""
        if not self.distinct:
            return None
        return (f"127.1.{seat // 250 % 250}.{seat % 250 + 1}", 0)


def endpoint_of(url: str, one_address: bool = False) -> Endpoint:
    """The endpoint of a running service's ``http://HOST:PORT`` URL; seats get addresses
    of their own when the service is on IPv4 loopback, on Linux (where all of 127/8 is
    the machine's), unless ``one_address``. :class:`InputError` quotes a bad URL."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise InputError(f"--url {url!r}: give http://HOST:PORT (https is not supported)")
    try:
        port = parts.port or 80
    except ValueError:
        raise InputError(f"--url {url!r}: the port is not a number 0-65535") from None
    host = "127.0.0.1" if parts.hostname == "localhost" else parts.hostname
    loopback = host.startswith("127.") and sys.platform.startswith("linux")
    return Endpoint(host, port, loopback and not one_address)


@dataclass(frozen=True)
class Settings:
    """What ``bench tables`` runs (its options)."""

    tables: int = 100
    think: float = 0.5
    seconds: float = 30.0
    warmup: float = 5.0
    actions: int | None = None
    baseline_seconds: float = 5.0
    seed: int = 1
    workers: int = 2
    store: str | None = None
    url: str | None = None
    one_address: bool = False


class SseParser:
    """Server-Sent Events from the bytes of a stream, fed in pieces as they come.

    >>> p = SseParser()
    >>> p.feed(b"event: table\\nid: 3\\ndata: {}\\n")
    []
    >>> p.feed(b"\\n: keep-alive\\n\\n")
    [('table', '3', '{}')]
    """

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> list[tuple[str, str, str]]:
        """The events completed by ``data``: ``(event, id, data)`` each (comments and
        events without data left out)."""
        self._buffer = (self._buffer + data).replace(b"\r\n", b"\n")
        *blocks, self._buffer = self._buffer.split(b"\n\n")
        out = []
        for block in blocks:
            fields: dict[str, list[str]] = {}
            for line in block.decode().split("\n"):
                if not line or line.startswith(":"):
                    continue
                name, _, value = line.partition(":")
                fields.setdefault(name, []).append(value.removeprefix(" "))
            if "data" in fields:
                event = fields.get("event", ["message"])[-1]
                out.append((event, fields.get("id", [""])[-1], "\n".join(fields["data"])))
        return out


# -- HTTP on raw streams ------------------------------------------------------------------
def _request(end: Endpoint, method: str, path: str, token: str | None, body: bytes) -> bytes:
    seat = "" if token is None else f"X-Seat-Token: {token}\r\n"
    head = f"{method} {path} HTTP/1.1\r\nHost: {end.host}:{end.port}\r\n{seat}"
    if method == "POST":
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return (head + "\r\n").encode() + body


class _Conn:
    """One keep-alive connection of a seat, opened again when the service closed it."""

    def __init__(self, end: Endpoint, local: tuple[str, int] | None) -> None:
        self.end = end
        self.local = local
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self._used = 0.0

    async def ready(self) -> None:
        """Open the connection now if it is closed or has been idle too long."""
        if self._streams is not None and time.perf_counter() - self._used > KEEP_ALIVE:
            self.close()
        if self._streams is None:
            self._streams = await asyncio.open_connection(
                self.end.host, self.end.port, local_addr=self.local
            )

    async def exchange(self, data: bytes) -> tuple[int, bytes]:
        """Send one request (on an open connection, :meth:`ready`) and read its answer;
        the connection is dropped after an error answer (the service may close it)."""
        assert self._streams is not None
        reader, writer = self._streams
        writer.write(data)
        await writer.drain()
        try:
            status, payload = await read_response(reader)
        except IndexError:  # closed under us: no status line
            self.close()
            raise ConnectionResetError("the service closed the connection") from None
        self._used = time.perf_counter()
        if status >= 400:
            self.close()
        return status, payload

    def close(self) -> None:
        """Close the connection (if open)."""
        if self._streams is not None:
            self._streams[1].close()
            self._streams = None


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    """A response's status and headers (names in lower case)."""
    line = await reader.readline()
    if not line:
        raise ConnectionResetError("the service closed the connection")
    status = int(line.split()[1])
    headers: dict[str, str] = {}
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            return status, headers
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()


async def _chunks(reader: asyncio.StreamReader, chunked: bool) -> AsyncIterator[bytes]:
    """A response body's pieces as they come (decoding chunked transfer coding)."""
    if not chunked:
        while data := await reader.read(65536):
            yield data
        return
    while True:
        line = await reader.readline()
        if not line.strip():
            return
        size = int(line.split(b";")[0], 16)
        if size == 0:
            return
        data = await reader.readexactly(size + 2)
        yield data[:-2]


# -- one run ------------------------------------------------------------------------------
@dataclass(eq=False)  # kept in sets by identity
class _Seat:
    name: str
    token: str
    local: tuple[str, int] | None
    view: dict[str, Any] | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def offer(self, view: dict[str, Any]) -> None:
        """Keep ``view`` if it is newer than the one held, and wake the seat."""
        if self.view is None or int(view["version"]) > int(self.view["version"]):
            self.view = view
            self.changed.set()


@dataclass
class _Run:
    """The state and the figures of one run (module docstring)."""

    end: Endpoint
    think: float
    actions: int | None
    measure_from: float = float("inf")
    pending: dict[tuple[str, int], tuple[str, float, bool]] = field(default_factory=dict)
    event_s: list[float] = field(default_factory=list)
    post_s: list[float] = field(default_factory=list)
    lag_s: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    made: int = 0
    games: int = 0
    opened: int = 0
    in_flight: int = 0
    seats: set[_Seat] = field(default_factory=set)
    streams: set[asyncio.Task[None]] = field(default_factory=set)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    enough: asyncio.Event = field(default_factory=asyncio.Event)

    def measuring(self, t: float) -> bool:
        """Whether an action sent at ``t`` counts (after the warm-up, before the end)."""
        return t >= self.measure_from and not self.stopping.is_set()

    def stop(self) -> None:
        """No more actions: wake every seat so that it sees it."""
        self.stopping.set()
        for seat in self.seats:
            seat.changed.set()

    def heard(self, table_id: str, seat: _Seat, version: int, at: float) -> None:
        """``seat``'s stream delivered ``version`` at ``at``: time the other seat's action."""
        entry = self.pending.get((table_id, version))
        if entry is not None and entry[0] != seat.name:
            del self.pending[(table_id, version)]
            if entry[2]:
                self.event_s.append(at - entry[1])


async def _watch(run: _Run, table_id: str, seat: _Seat) -> None:
    """Hold ``seat``'s event stream open (again, after the service ends it) until cancelled."""
    path = f"/v1/tables/{table_id}/events?token={seat.token}"
    while True:
        writer = None
        try:
            reader, writer = await asyncio.open_connection(
                run.end.host, run.end.port, local_addr=seat.local
            )
            writer.write(_request(run.end, "GET", path, None, b""))
            await writer.drain()
            status, headers = await _read_head(reader)
            if status != 200:
                run.errors[f"events {status}"] += 1
                await asyncio.sleep(1.0)
                continue
            parser = SseParser()
            chunked = headers.get("transfer-encoding", "").lower() == "chunked"
            async for piece in _chunks(reader, chunked):
                at = time.perf_counter()
                for event, ident, data in parser.feed(piece):
                    if event == "table":
                        run.heard(table_id, seat, int(ident), at)
                        seat.offer(json.loads(data))
            run.errors["events ended"] += 1
        except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
            run.errors["events connection"] += 1
            await asyncio.sleep(0.5)
        finally:
            if writer is not None:
                writer.close()


async def _act(run: _Run, conn: _Conn, table_id: str, seat: _Seat, action: str) -> None:
    """Post ``seat``'s ``action`` and time it; the answer's view is the seat's news too."""
    assert seat.view is not None
    key = (table_id, int(seat.view["version"]) + 1)
    body = json.dumps({"action": action}).encode()
    data = _request(run.end, "POST", f"/v1/tables/{table_id}/actions", seat.token, body)
    run.in_flight += 1
    try:
        await conn.ready()
        sent = time.perf_counter()
        measured = run.measuring(sent)
        run.pending[key] = (seat.name, sent, measured)
        status, payload = await conn.exchange(data)
    except (OSError, asyncio.IncompleteReadError, ValueError):
        run.errors["connection"] += 1
        run.pending.pop(key, None)
        conn.close()
        return
    finally:
        run.in_flight -= 1
    if measured:
        run.post_s.append(time.perf_counter() - sent)
    try:
        got = json.loads(payload)
    except ValueError:
        got = {}
    view = got if status == 200 else got.get("view")
    if status == 200 and measured:
        run.made += 1
        if run.actions is not None and run.made >= run.actions:
            run.enough.set()
    if status != 200:
        run.errors[str(status)] += 1
    if isinstance(view, dict) and "version" in view:
        seat.offer(view)
    if not isinstance(view, dict) or view.get("version") != key[1]:
        if run.pending.pop(key, None) is not None and status == 200:
            run.errors["version jump"] += 1


async def _seat_loop(run: _Run, table_id: str, seat: _Seat, rng: random.Random) -> None:
    """``seat`` plays: it acts whenever its latest view says so, until the game ends or
    the run stops."""
    conn = _Conn(run.end, seat.local)
    acted = 0
    try:
        while not run.stopping.is_set():
            view = seat.view
            if view is not None and view.get("result") is not None:
                return
            if (
                view is not None
                and view.get("to_move") == seat.name
                and int(view["version"]) > acted
                and view.get("legal")
            ):
                acted = int(view["version"])
                if run.think > 0:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(
                            run.stopping.wait(), rng.uniform(0.5, 1.5) * run.think
                        )
                    if run.stopping.is_set():
                        return
                await _act(run, conn, table_id, seat, rng.choice(view["legal"]))
                continue
            seat.changed.clear()
            try:
                await asyncio.wait_for(seat.changed.wait(), STALL)
            except TimeoutError:
                run.errors["stalled"] += 1
                acted = 0  # look again: an action of ours may have been lost
    finally:
        conn.close()


async def _open_table(
    run: _Run, rng: random.Random, locals_: tuple[tuple[str, int] | None, ...]
) -> tuple[str, list[_Seat]] | None:
    """A new table of two human seats (None, with the error counted, when it failed)."""
    body = json.dumps({"north": "human", "south": "human", "seed": rng.randrange(1 << 30)})
    conn = _Conn(run.end, locals_[0])
    try:
        await conn.ready()
        status, payload = await conn.exchange(
            _request(run.end, "POST", "/v1/tables", None, body.encode())
        )
    except (OSError, asyncio.IncompleteReadError, ValueError):
        run.errors["new table: connection"] += 1
        return None
    finally:
        conn.close()
    if status != 201:
        run.errors[f"new table: {status}"] += 1
        return None
    made = json.loads(payload)
    seats = [
        _Seat(name, made["seats"][name]["token"], local)
        for name, local in zip(("north", "south"), locals_, strict=True)
    ]
    run.opened += 1
    return made["table"], seats


async def _slot(run: _Run, index: int, seed: int) -> None:
    """Table after table in place ``index`` until the run stops."""
    rng = random.Random(seed * 1_000_003 + index)
    locals_ = (run.end.local(2 * index), run.end.local(2 * index + 1))
    while not run.stopping.is_set():
        made = await _open_table(run, rng, locals_)
        if made is None:
            await asyncio.sleep(1.0)
            continue
        table_id, seats = made
        watchers = [asyncio.create_task(_watch(run, table_id, s)) for s in seats]
        run.streams.update(watchers)
        run.seats.update(seats)
        try:
            # both seats see the table before either acts, so each event is timed
            for seat in seats:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(seat.changed.wait(), STALL)
            seat_rngs = [random.Random(rng.randrange(1 << 62)) for _ in seats]
            await asyncio.gather(
                *(_seat_loop(run, table_id, s, r) for s, r in zip(seats, seat_rngs, strict=True))
            )
        finally:
            run.seats.difference_update(seats)
        if run.stopping.is_set():
            return  # the streams stay open for the run's last events
        run.games += 1
        for task in watchers:
            task.cancel()
            run.streams.discard(task)


async def _lag_probe(run: _Run) -> None:
    """How late the bench's own loop wakes up (a busy bench would show here)."""
    while True:
        start = time.perf_counter()
        await asyncio.sleep(LAG_TICK)
        late = time.perf_counter() - start - LAG_TICK
        if run.measuring(start):
            run.lag_s.append(late)


def _tree_cpu(pid: int | None) -> float | None:
    """CPU seconds of process ``pid`` and all its descendants (the ones gone included,
    once waited for); None without ``/proc``."""
    if pid is None or not Path("/proc", str(pid)).exists():
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            fields = Path("/proc", str(p), "stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
            for task in Path("/proc", str(p), "task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError, IndexError):
            continue
    return total / ticks


async def measure(
    end: Endpoint,
    tables: int,
    think: float,
    seconds: float,
    warmup: float,
    *,
    actions: int | None = None,
    seed: int = 1,
    service_pid: int | None = None,
) -> dict[str, Any]:
    """One run (module docstring): ``tables`` tables played for ``warmup`` seconds, then
    measured for ``seconds`` (or until ``actions`` actions are made); its figures.
    Latencies are in milliseconds; ``errors`` counts every failure of the whole run
    (warm-up included) by status or kind; ``service_cpu_s`` needs the service's pid."""
    run = _Run(end, think, actions)
    probe = asyncio.create_task(_lag_probe(run))
    slots = [asyncio.create_task(_slot(run, i, seed)) for i in range(tables)]
    await asyncio.sleep(warmup)
    begin, cpu0, svc0 = time.perf_counter(), time.process_time(), _tree_cpu(service_pid)
    run.measure_from = begin
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(run.enough.wait(), seconds)
    wall = time.perf_counter() - begin
    cpu, svc1 = time.process_time() - cpu0, _tree_cpu(service_pid)
    run.stop()
    deadline = time.perf_counter() + DRAIN
    while time.perf_counter() < deadline and (
        run.in_flight or any(m for _, _, m in run.pending.values())
    ):
        await asyncio.sleep(0.01)
    run.errors.update({"event missing": sum(m for _, _, m in run.pending.values())})
    for task in [probe, *slots, *run.streams]:
        task.cancel()
    await asyncio.gather(probe, *slots, *run.streams, return_exceptions=True)
    return _figures(run, tables, wall, cpu, None if svc0 is None or svc1 is None else svc1 - svc0)


def _figures(
    run: _Run, tables: int, wall: float, cpu: float, service_cpu: float | None
) -> dict[str, Any]:
    ms = [x * 1e3 for x in run.event_s]
    post = [x * 1e3 for x in run.post_s]
    lag = [x * 1e3 for x in run.lag_s]
    return {
        "tables": tables,
        "seconds": wall,
        "actions": run.made,
        "actions_per_s": run.made / wall if wall > 0 else 0.0,
        "events_timed": len(ms),
        "event_ms": {
            "p50": percentile(ms, 0.50),
            "p90": percentile(ms, 0.90),
            "p99": percentile(ms, 0.99),
            "max": max(ms, default=0.0),
        },
        "post_ms": {"p50": percentile(post, 0.50), "p99": percentile(post, 0.99)},
        "errors": dict(sorted((k, v) for k, v in run.errors.items() if v)),
        "games_finished": run.games,
        "tables_opened": run.opened,
        "bench_cpu_s": cpu,
        "bench_cpu_share": cpu / wall if wall > 0 else 0.0,
        "bench_loop_lag_ms": {"p99": percentile(lag, 0.99), "max": max(lag, default=0.0)},
        "service_cpu_s": service_cpu,
    }


# -- the service and the whole benchmark --------------------------------------------------
@contextlib.contextmanager
def started_service(
    workers: int, store: str | None = None, time_limit: float | None = None
) -> Iterator[tuple[str, int]]:
    """``battlejudge serve --workers WORKERS --tables STORE`` on a free loopback port
    (:func:`~battlejudge.bench.serve.serve_process`; the store by default a directory in a
    temporary folder, removed after), once it answers ``/healthz``; yields its URL and pid,
    and stops it after."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="battlejudge-bench-tables-") as tmp:
        extra: tuple[str, ...] = ("--tables", store or str(Path(tmp, "tables")))
        if time_limit is not None:
            extra += ("--time-limit", str(time_limit))
        with serve_process(workers, *extra) as (port, pid):
            yield f"http://127.0.0.1:{port}", pid


def run_tables(settings: Settings, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The whole benchmark: the one-table baseline, then ``settings.tables`` tables,
    against the service at ``settings.url`` or one started for it; the figures as
    ``bench tables --json`` prints them, with the target's verdict (never an error).
    ``progress`` hears what is being done (for stderr)."""
    from battlejudge.proofs.backends import redact_urls

    s = settings
    say = progress or (lambda _: None)
    with contextlib.ExitStack() as stack:
        if s.url is None:
            say(f"starting battlejudge serve --workers {s.workers}")
            url, pid = stack.enter_context(started_service(s.workers, s.store))
            store = redact_urls(s.store) if s.store else "TMPDIR"
            service = f"battlejudge serve --workers {s.workers} --tables {store}"
        else:
            url, pid, service = s.url, None, s.url
        end = endpoint_of(url, s.one_address)

        async def both() -> tuple[dict[str, Any], dict[str, Any]]:
            say(f"baseline: 1 table for {s.baseline_seconds:g} s")
            base = await measure(
                end, 1, s.think, s.baseline_seconds, min(1.0, s.warmup), seed=s.seed + 1
            )
            say(f"{s.tables} tables: {s.warmup:g} s warm-up, then {s.seconds:g} s")
            main = await measure(
                end,
                s.tables,
                s.think,
                s.seconds,
                s.warmup,
                actions=s.actions,
                seed=s.seed,
                service_pid=pid,
            )
            return base, main

        baseline, main = asyncio.run(both())
    p99, base_p99 = main["event_ms"]["p99"], baseline["event_ms"]["p99"]
    return {
        "service": service,
        "cores": os.cpu_count(),
        "seat_addresses": "one per seat (127.1.x.y)" if end.distinct else "one for all",
        "settings": {
            "tables": s.tables,
            "think_s": s.think,
            "seconds": s.seconds,
            "warmup_s": s.warmup,
            "actions": s.actions,
            "baseline_seconds": s.baseline_seconds,
            "seed": s.seed,
        },
        "baseline": baseline,
        "run": main,
        "ratio_p99": p99 / base_p99 if base_p99 > 0 else None,
        "target": {
            "p99_ms": TARGET_MS,
            "tables": TARGET_TABLES,
            "met": main["events_timed"] > 0 and p99 <= TARGET_MS,
        },
    }
