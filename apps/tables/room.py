"""Tables kept live by the service: made, looked at, acted on, watched, timed and played
by bots (:class:`Tables`), every game's work done in a worker process (:mod:`.work`)
and every change kept in the store (:mod:`.store`) before anyone is told of it.

- **Seats and tokens.** A human seat gets a secret token when the table is made; the
  store keeps only its SHA-256. A request with a seat's token sees that seat's view (its
  hand, its legal actions); without a token, a spectator's (no hand). No view ever holds
  another seat's hand or the decks' order: the worker draws each view from what that
  viewer may know.
- **Actions.** A seat's action is a job of its client in the service's fair queue, run
  under the service's limits; the claims it decides go to the proof log (when the service
  keeps one) before the change is saved, and the change is saved before it is answered or
  announced. Two processes never both change a table: each save is a compare-and-set
  on the table's version.
- **Events.** Every change is announced by the store to every process sharing it; each
  process sends each of its watchers that watcher's view (:meth:`Tables.events`).
- **Clocks.** Optional: minutes per seat plus seconds added per move. The running clock
  is the seat to move's; a seat whose time runs out loses (``timeout``), found by a timer
  of any process that has the table in hand, or by the next request.
- **Bots** move by themselves, one decision per job, until a human must move; a process
  that finds a bot to move with nobody making it move (after a restart) starts it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Final

from battlejudge.apps.adjudicator import Adjudicator, ServiceError
from battlejudge.apps.tables import work
from battlejudge.apps.tables.store import StoredTable, TableStore, TableStoreError, check_table_id
from battlejudge.solver.errors import InputError

SEATS: Final = ("north", "south")
BOT_WORK: Final = 5.0
"""How many times the service's time limit one bot decision may take (the searching bots
think for about a second of wall time, longer on a busy machine)."""
MAX_MINUTES: Final = 180
MAX_INCREMENT: Final = 600
CACHE: Final = 512
"""Tables whose latest copy a process keeps in memory (a few tens of KB each)."""
KEEPALIVE: Final = 15.0
"""Seconds between the comments that keep an idle event stream open through proxies."""
_logger = logging.getLogger(__name__)


def token_hash(token: str) -> str:
    """What the store keeps of a seat's token."""
    return hashlib.sha256(token.encode()).hexdigest()


def _fail(status: int, message: str) -> ServiceError:
    return ServiceError(status, {"error": message})


@dataclass(frozen=True)
class NewTable:
    """A table's request, checked: the game, each seat's kind, the options, the clock
    (minutes, seconds per move; None without one) and the seed."""

    game: str
    seats: tuple[str, str]
    options: dict[str, str]
    clock: tuple[float, float] | None
    seed: int

    @classmethod
    def parse(cls, body: Any) -> NewTable:
        """The request's JSON, checked; :class:`InputError` names the offending value."""
        if not isinstance(body, dict):
            raise InputError("body: a JSON object is expected")
        known = ("game", "north", "south", "options", "clock", "seed")
        for key in body:
            if key not in known:
                raise InputError(f"body.{key}: no such field (fields: {', '.join(known)})")
        game = body.get("game", "battleline")
        if not isinstance(game, str):
            raise InputError(f"body.game must be a string, got {game!r:.40}")
        seats = []
        for seat in SEATS:
            kind = body.get(seat, "human")
            if not isinstance(kind, str):
                raise InputError(f"body.{seat} must be a string, got {kind!r:.40}")
            seats.append(work.check_seat_kind(kind, f"body.{seat}"))
        options = body.get("options") or {}
        if not isinstance(options, dict):
            raise InputError(f"body.options must be an object, got {options!r:.40}")
        opts: dict[str, str] = {}
        for key, value in options.items():
            if isinstance(value, bool):
                value = "true" if value else "false"
            if not isinstance(value, str):
                raise InputError(f"body.options.{key} must be a string, got {value!r:.40}")
            opts[str(key)] = value
        seed = body.get("seed")
        if seed is None:
            seed = secrets.randbelow(1 << 30)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 1 << 62:
            raise InputError(f"body.seed must be a whole number 0-2^62, got {seed!r:.40}")
        return cls(game, (seats[0], seats[1]), opts, _clock(body.get("clock")), seed)


def _clock(raw: Any) -> tuple[float, float] | None:
    """``{"minutes": M, "increment": S}`` checked (None: no clock)."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) - {"minutes", "increment"}:
        raise InputError(f'body.clock must be {{"minutes": M, "increment": S}}, got {raw!r:.60}')
    minutes, increment = raw.get("minutes"), raw.get("increment", 0)
    for name, value, top in (
        ("minutes", minutes, MAX_MINUTES),
        ("increment", increment, MAX_INCREMENT),
    ):
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= top:
            raise InputError(f"body.clock.{name} must be a number 0-{top}, got {value!r:.40}")
    assert isinstance(minutes, int | float) and isinstance(increment, int | float)
    if minutes <= 0:
        raise InputError(f"body.clock.minutes must be more than 0, got {minutes!r}")
    return float(minutes), float(increment)


@dataclass(frozen=True)
class Made:
    """A table just made: its id, each seat's kind and token (None for a bot's seat)."""

    table_id: str
    seats: dict[str, str]
    tokens: dict[str, str | None]


@dataclass
class _Channel:
    """One process's watchers of one table: their queues, the store's watch, the latest
    version seen and the clock's timer."""

    queues: set[asyncio.Queue[StoredTable | None]] = field(default_factory=set)
    stop: Callable[[], None] | None = None
    seen: int = 0
    timer: asyncio.TimerHandle | None = None


class Tables:
    """The tables of a running service: its store, and the :class:`Adjudicator` whose
    workers, limits and proof log every table's work goes through."""

    def __init__(self, store: TableStore, judge: Adjudicator) -> None:
        self.store = store
        self.judge = judge
        self._locks: dict[str, asyncio.Lock] = {}
        self._bots: dict[str, asyncio.Task[None]] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._channels: dict[str, _Channel] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._latest: OrderedDict[str, StoredTable] = OrderedDict()
        self._own: dict[str, int] = {}
        """Table -> the version this process is saving now (its announcement is no news)."""
        # the store's calls get threads of their own: behind the default pool's (which
        # starts worker processes) a read waited 50 times its own length under load
        self._reads = ThreadPoolExecutor(4, thread_name_prefix="battlejudge-tables-read")
        self._writes = ThreadPoolExecutor(4, thread_name_prefix="battlejudge-tables-write")

    # -- the store, off the event loop -----------------------------------------------------
    async def _load(self, table_id: str, cached: bool = False) -> StoredTable:
        """The table from the store, or with ``cached`` as this process last saved or
        heard of it (a stale copy is harmless where a save follows: the save's
        compare-and-set refuses it)."""
        try:
            check_table_id(table_id)
        except InputError as e:
            raise _fail(404, str(e)) from None
        hit = self._latest.get(table_id) if cached else None
        if hit is not None:
            self._latest.move_to_end(table_id)
            return hit
        loop = asyncio.get_running_loop()
        try:
            found = await loop.run_in_executor(self._reads, self.store.load, table_id)
        except TableStoreError as e:
            raise _fail(503, f"the tables cannot be read: {e}") from None
        if found is None:
            raise _fail(404, f"no such table: {table_id!r}")
        self._remember(found)
        return found

    def _remember(self, table: StoredTable) -> None:
        """Keep the newest copy of a table seen (the :data:`CACHE` most recent tables)."""
        old = self._latest.get(table.id)
        if old is None or old.version <= table.version:
            self._latest[table.id] = table
            self._latest.move_to_end(table.id)
            while len(self._latest) > CACHE:
                self._latest.popitem(last=False)

    async def _save(self, old: StoredTable, doc: dict[str, Any], blob: bytes) -> StoredTable | None:
        """Save the table's next version (None: another change came first). The store
        announces the save to this process too; :meth:`_heard` knows it for its own."""
        loop = asyncio.get_running_loop()
        self._own[old.id] = old.version + 1
        try:
            ok = await loop.run_in_executor(
                self._writes, self.store.save, old.id, old.version, doc, blob
            )
        except TableStoreError as e:
            raise _fail(503, f"the table cannot be saved, so nothing was played: {e}") from None
        finally:
            self._own.pop(old.id, None)
        if not ok:  # another process changed it: tell this one's watchers, forget the copy
            self._latest.pop(old.id, None)
            self._spawn(self._fetch(old.id, old.version + 1))
            return None
        saved = StoredTable(old.id, old.version + 1, doc, blob)
        self._remember(saved)
        self._publish(saved)
        return saved

    def _lock(self, table_id: str) -> asyncio.Lock:
        return self._locks.setdefault(table_id, asyncio.Lock())

    # -- making and seeing tables ---------------------------------------------------------
    async def create(self, body: Any, client: str) -> Made:
        """Make a table from a request's JSON (422 naming a bad value)."""
        try:
            spec = NewTable.parse(body)
        except InputError as e:
            raise _fail(422, str(e)) from None
        table_id = secrets.token_urlsafe(9)
        try:
            change = await self.judge.job(
                client,
                work.start,
                table_id,
                spec.game,
                spec.seats,
                spec.options,
                spec.seed,
                what="the new table",
            )
        except InputError as e:
            raise _fail(422, str(e)) from None
        tokens = {
            s: secrets.token_urlsafe(18) if k == "human" else None
            for s, k in zip(SEATS, spec.seats, strict=True)
        }
        now = time.time()
        doc: dict[str, Any] = {
            "id": table_id,
            "game": spec.game,
            "created": now,
            "seats": dict(zip(SEATS, spec.seats, strict=True)),
            "tokens": {s: None if t is None else token_hash(t) for s, t in tokens.items()},
            "options": spec.options,
            "clock": None
            if spec.clock is None
            else {
                "minutes": spec.clock[0],
                "increment": spec.clock[1],
                "remaining": {s: spec.clock[0] * 60 for s in SEATS},
                "running": change.to_move,
                "since": now,
            },
            "claim_seqs": [],
        }
        _apply_change(doc, change, [])
        try:
            await asyncio.to_thread(self.store.create, table_id, doc, change.blob)
        except TableStoreError as e:
            raise _fail(503, f"the table cannot be saved: {e}") from None
        self._after(StoredTable(table_id, 1, doc, change.blob))
        return Made(table_id, doc["seats"], tokens)

    def seat_of(self, table: StoredTable, token: str | None) -> str | None:
        """The seat ``token`` opens (None: no token, a spectator); 403 for a token that is
        not one of the table's."""
        if token is None or token == "":
            return None
        digest = token_hash(token)
        for seat, kept in table.doc["tokens"].items():
            if kept is not None and hmac.compare_digest(kept, digest):
                return str(seat)
        raise _fail(403, "that token is not a seat's token of this table")

    async def view(self, table_id: str, token: str | None) -> dict[str, Any]:
        """The table as the token's seat (or a spectator) sees it now."""
        table = await self._current(table_id)
        return self.shown(table, self.seat_of(table, token))

    def shown(self, table: StoredTable, seat: str | None) -> dict[str, Any]:
        """``seat``'s view of ``table`` (a spectator's for None), with the table's id,
        version, game, clock and each claim's place in the proof log."""
        doc = table.doc
        view = dict(doc["views"][seat or "spectator"])
        seqs = doc.get("claim_seqs", [])
        view["claims"] = [
            {
                **c,
                "log_seq": seqs[i] if i < len(seqs) else None,
                "certificate_url": f"/v1/tables/{table.id}/claims/{i + 1}/certificate",
            }
            for i, c in enumerate(doc["claims"])
        ]
        return {
            "table": table.id,
            "version": table.version,
            "game": doc["game"],
            **view,
            "clock": _clock_view(doc.get("clock")),
        }

    async def _current(self, table_id: str) -> StoredTable:
        """The table, its fallen flag (if any) dropped first, its bots set moving. From
        memory while this process watches it (every change then reaches it at once)."""
        table = await self._load(table_id, cached=table_id in self._channels)
        table = await self._timeout_if_due(table)
        self._after(table)
        return table

    async def recent(self, limit: int = 50) -> list[dict[str, Any]]:
        """The tables changed most recently: their ids, seats, turn and result."""
        try:
            docs = await asyncio.to_thread(self.store.recent, limit)
        except TableStoreError as e:
            raise _fail(503, f"the tables cannot be read: {e}") from None
        return [
            {
                "table": d["id"],
                "seats": d["seats"],
                "turn": d["views"]["spectator"]["turn"],
                "to_move": d.get("to_move"),
                "result": d.get("result"),
                "created": d["created"],
            }
            for d in docs
        ]

    async def record(self, table_id: str) -> str:
        """The finished game's ``.blg`` record; 409 while it goes on (the record holds
        both hands and every card drawn)."""
        table = await self._current(table_id)
        text = table.doc.get("record")
        if text is None:
            raise _fail(
                409,
                "the game is not over: its record holds both hands and every card "
                "drawn, so it is given once the game ends",
            )
        return str(text)

    async def certificate(self, table_id: str, number: int) -> dict[str, Any]:
        """The certificate file of the table's claim ``number`` (from 1), made again
        from its question in a worker (the same bytes every time)."""
        from battlejudge.apps.tables.work import certificate_of

        table = await self._current(table_id)
        claims = table.doc["claims"]
        if not 1 <= number <= len(claims):
            raise _fail(404, f"table {table_id} has no claim {number} ({len(claims)} made)")
        cert: dict[str, Any] = await self.judge.job(
            f"table:{table_id}",
            certificate_of,
            claims[number - 1]["question"],
            what="the claim's certificate",
        )
        return cert

    # -- acting ----------------------------------------------------------------------------
    async def act(
        self,
        table_id: str,
        token: str | None,
        action: Any,
        client: str,
        version: int | None = None,
    ) -> tuple[int, dict[str, Any]]:
        """The seat of ``token`` takes ``action``: 200 and its new view; 409 when it is not
        its turn (or the game is over, or its time ran out, or the table is no longer at
        ``version``, when given: the page that sent it showed an older table); 422 naming
        why an action is not legal, with a refused claim's answer and witness in ``claim``."""
        if token is None:
            raise _fail(
                401, "a seat's token is needed to act (X-Seat-Token header or token parameter)"
            )
        if not isinstance(action, str) or not action.strip():
            raise _fail(
                422, f"body.action must be an action in record notation, got {action!r:.40}"
            )
        async with self._lock(table_id):
            saved, change, seat = await self._act_once(table_id, token, action, client, version)
            if saved is None:  # another process changed the table: once more, on the news
                saved, change, seat = await self._act_once(
                    table_id, token, action, client, version, cached=False
                )
            if saved is None:
                raise _fail(409, "the table moved on before your action was saved: look again")
        self._after(saved)
        view = self.shown(saved, seat)
        if change.refused is not None:
            claim = view["claims"][-1]
            return 422, {"error": change.refused["error"], "claim": claim, "view": view}
        return 200, view

    async def _act_once(
        self,
        table_id: str,
        token: str,
        action: str,
        client: str,
        version: int | None,
        cached: bool = True,
    ) -> tuple[StoredTable | None, work.Change, str]:
        """:meth:`act` on the table as this process knows it (``cached``) or as stored:
        the saved table (None when another change came first), the change, the seat."""
        table = await self._timeout_if_due(await self._load(table_id, cached))
        seat = self.seat_of(table, token)
        assert seat is not None
        if table.doc.get("result") is not None:
            raise _fail(409, "the game is over")
        if version is not None and version != table.version:
            raise _fail(409, f"the table moved on (version {table.version}; you saw {version})")
        try:
            change = await self.judge.job(
                client,
                work.act,
                table.blob,
                SEATS.index(seat),
                action,
                what="your action",
                short=True,
            )
        except work.NotYourTurn as e:
            raise _fail(409, str(e)) from None
        except InputError as e:
            raise _fail(422, str(e)) from None
        return await self._commit(table, change), change, seat

    async def resign(self, table_id: str, token: str | None) -> dict[str, Any]:
        """The token's seat resigns: the other wins. 409 when the game is over."""
        if token is None:
            raise _fail(401, "a seat's token is needed to resign")
        async with self._lock(table_id):
            # as stored (a resignation is final), and a fallen flag first: the seat whose
            # time ran out has lost already, whoever resigns after
            table = await self._timeout_if_due(await self._load(table_id))
            seat = self.seat_of(table, token)
            assert seat is not None
            saved = await self._forfeit(table, seat, "resigned")
            if saved is None:
                raise _fail(409, "the table moved on: look again")
        return self.shown(saved, seat)

    async def _forfeit(self, table: StoredTable, seat: str, why: str) -> StoredTable | None:
        if table.doc.get("result") is not None:
            raise _fail(409, "the game is over")
        try:
            change = await self.judge.job(
                f"table:{table.id}",
                work.forfeit,
                table.blob,
                SEATS.index(seat),
                why,
                what="the game's end",
                short=True,
            )
        except work.NotYourTurn as e:
            raise _fail(409, str(e)) from None
        return await self._commit(table, change)

    async def _commit(self, table: StoredTable, change: work.Change) -> StoredTable | None:
        """Log the change's claims, then save it (None: the table moved on meanwhile)."""
        seqs = await self.judge.record([(r, {}) for r in change.records])
        doc = dict(table.doc)
        doc["clock"] = _clock_after(doc.get("clock"), change)
        _apply_change(doc, change, seqs)
        return await self._save(table, doc, change.blob)

    # -- what follows a change: bots, clocks ----------------------------------------------
    def _after(self, table: StoredTable) -> None:
        """Set the table's bots moving when one must, and its clock's timer."""
        doc = table.doc
        if doc.get("bot_to_move") and doc.get("result") is None:
            task = self._bots.get(table.id)
            if task is None or task.done():
                self._bots[table.id] = asyncio.ensure_future(self._run_bots(table.id))
        self._arm_timer(table)

    async def _run_bots(self, table_id: str) -> None:
        """Bot decisions, one job each, until a human must move or the game ends."""
        misses = 0
        while misses < 3:
            try:
                async with self._lock(table_id):
                    table = await self._timeout_if_due(await self._load(table_id, misses == 0))
                    if not table.doc.get("bot_to_move") or table.doc.get("result") is not None:
                        return
                    change = await self.judge.job(
                        f"table:{table_id}",
                        work.bot_step,
                        table.blob,
                        what="the bot's move",
                        scale=BOT_WORK,
                    )
                    saved = await self._commit(table, change)
                misses = misses + 1 if saved is None else 0
            except Exception as e:  # a limit ran out, the store or log is down: try later
                _logger.warning("table %s: the bot could not move: %s", table_id, e)
                misses += 1
                await asyncio.sleep(1.0)

    def _arm_timer(self, table: StoredTable) -> None:
        """A timer for when the running clock's flag falls (while the table is in hand)."""
        clock = table.doc.get("clock")
        old = self._timers.pop(table.id, None)
        if old is not None:
            old.cancel()
        if clock is None or clock.get("running") is None or table.doc.get("result") is not None:
            return
        left = _time_left(clock)
        loop = asyncio.get_running_loop()

        def fall() -> None:
            self._timers.pop(table.id, None)
            self._spawn(self._check_timeout(table.id))

        self._timers[table.id] = loop.call_later(max(0.0, left) + 0.05, fall)

    async def _check_timeout(self, table_id: str) -> None:
        with contextlib.suppress(ServiceError):
            async with self._lock(table_id):
                await self._timeout_if_due(await self._load(table_id))

    async def _timeout_if_due(self, table: StoredTable) -> StoredTable:
        """The table after the running clock's seat loses on time, if its time is up."""
        clock = table.doc.get("clock")
        if clock is None or clock.get("running") is None or table.doc.get("result") is not None:
            return table
        if _time_left(clock) > 0:
            return table
        saved = await self._forfeit(table, clock["running"], "timeout")
        return saved if saved is not None else await self._load(table.id)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` as a task kept until it ends (the loop holds tasks weakly)."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- events ---------------------------------------------------------------------------
    def _publish(self, table: StoredTable) -> None:
        """Tell this process's watchers of a change at once (the store tells the others)."""
        channel = self._channels.get(table.id)
        if channel is not None and table.version > channel.seen:
            channel.seen = table.version
            for queue in channel.queues:
                queue.put_nowait(table)

    def _heard(self, table_id: str, version: int) -> None:
        """The store's word of a change (from its thread): fetch it once for every watcher."""
        channel = self._channels.get(table_id)
        if channel is not None and version > max(channel.seen, self._own.get(table_id, 0)):
            self._spawn(self._fetch(table_id, version))

    async def _fetch(self, table_id: str, version: int) -> None:
        channel = self._channels.get(table_id)
        if channel is None or version <= channel.seen:
            return
        with contextlib.suppress(ServiceError):
            table = await self._load(table_id)
            self._publish(table)
            self._after(table)

    async def events(self, table_id: str, token: str | None) -> AsyncIterator[str]:
        """The Server-Sent Events of a watcher (a seat by its token, or a spectator): its
        view now, then its view after every change, as ``event: table`` with the
        version as the event's id; a comment every :data:`KEEPALIVE` seconds."""
        table = await self._current(table_id)
        seat = self.seat_of(table, token)
        return self._stream(table, seat)

    async def _stream(self, table: StoredTable, seat: str | None) -> AsyncIterator[str]:
        import json

        loop = self._loop = asyncio.get_running_loop()
        queue: asyncio.Queue[StoredTable | None] = asyncio.Queue()
        channel = self._channels.get(table.id)
        if channel is None:
            channel = self._channels[table.id] = _Channel(seen=table.version)

            def heard(table_id: str, version: int) -> None:
                loop.call_soon_threadsafe(self._heard, table_id, version)

            channel.stop = self.store.watch(table.id, heard)
        channel.queues.add(queue)
        last = 0
        try:
            current = table
            while True:
                if current.version > last:
                    last = current.version
                    data = json.dumps(self.shown(current, seat), separators=(",", ":"))
                    yield f"event: table\nid: {current.version}\ndata: {data}\n\n"
                try:
                    got = await asyncio.wait_for(queue.get(), KEEPALIVE)
                except TimeoutError:
                    yield ": keep-alive\n\n"
                    continue
                if got is None:  # the service is stopping: the watcher reconnects elsewhere
                    return
                current = got
        finally:
            channel.queues.discard(queue)
            if not channel.queues:
                self._channels.pop(table.id, None)
                if channel.stop is not None:
                    channel.stop()

    def end_streams(self) -> None:
        """End every event stream of this process (the service is stopping: a stream
        would otherwise hold the shutdown until its watcher leaves); EventSource
        watchers reconnect by themselves. Safe to call from any thread."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return

        def end() -> None:
            for channel in self._channels.values():
                for queue in channel.queues:
                    queue.put_nowait(None)

        loop.call_soon_threadsafe(end)

    def close(self) -> None:
        """Stop the bots' tasks and the timers, and close the store."""
        for task in self._bots.values():
            task.cancel()
        for timer in self._timers.values():
            timer.cancel()
        for channel in self._channels.values():
            if channel.stop is not None:
                channel.stop()
        self._channels.clear()
        self._reads.shutdown(wait=True)
        self._writes.shutdown(wait=True)
        self.store.close()


def _apply_change(doc: dict[str, Any], change: work.Change, seqs: list[int | None]) -> None:
    """Put a change's views, state and claims' log seqs into a table's document. The
    claims, the same for every viewer, are kept once (:meth:`Tables.shown` puts them back
    into each view)."""
    doc["claims"] = change.views["spectator"]["claims"]
    doc["views"] = {
        viewer: {k: v for k, v in view.items() if k != "claims"}
        for viewer, view in change.views.items()
    }
    doc["to_move"] = change.to_move
    doc["bot_to_move"] = change.bot_to_move
    doc["result"] = change.views["spectator"]["result"]
    doc["record"] = change.record
    doc["updated"] = time.time()
    doc["claim_seqs"] = [*doc.get("claim_seqs", []), *seqs]


def _time_left(clock: dict[str, Any]) -> float:
    """Seconds left to the running clock's seat."""
    seat = clock["running"]
    return float(clock["remaining"][seat]) - (time.time() - float(clock["since"]))


def _clock_after(clock: dict[str, Any] | None, change: work.Change) -> Any:
    """The clock after a change: the running seat's time spent, the increment added when
    its turn passed to the other seat, the clock of the seat now to move running."""
    if clock is None:
        return None
    now = time.time()
    clock = {**clock, "remaining": dict(clock["remaining"])}
    running = clock.get("running")
    if running is not None:
        spent = now - float(clock["since"])
        clock["remaining"][running] = max(0.0, clock["remaining"][running] - spent)
        if change.to_move != running and not change.over:
            clock["remaining"][running] += float(clock["increment"])
    clock["running"] = None if change.over else change.to_move
    clock["since"] = now
    return clock


def _clock_view(clock: dict[str, Any] | None) -> dict[str, Any] | None:
    """The clock as a viewer sees it: each seat's seconds left now, which one runs, the
    increment."""
    if clock is None:
        return None
    left = {s: round(float(v), 1) for s, v in clock["remaining"].items()}
    running = clock.get("running")
    if running is not None:
        left[running] = round(max(0.0, _time_left(clock)), 1)
    return {
        "remaining": left,
        "running": running,
        "minutes": clock["minutes"],
        "increment": clock["increment"],
    }
