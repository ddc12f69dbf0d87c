"""Tables in PostgreSQL, shared by several service processes or machines
(``--tables postgresql://user:pass@host/db``): the :class:`~.store.TableStore` of
:mod:`battlejudge.apps.tables.store` with the semantics of its directory store.

One table holds them all, made at the first start (several processes may start at once:
an advisory lock makes them take turns)::

    battlejudge_tables(id text PRIMARY KEY, version integer, doc text, blob bytea, updated)

``doc`` is the JSON document as text, written and read back exactly as the directory store
writes it (``jsonb`` would refuse a ``\\u0000`` in a string and ``NaN``, which
:mod:`json` writes); ``updated`` orders :meth:`PgTableStore.recent` (indexed).

Every change is a compare-and-set on ``version`` in one transaction that also sends
``NOTIFY battlejudge_tables, 'ID:VERSION'``: the notification leaves at the commit, so a
process hears of a change only once it is durable, and within milliseconds (no polling).
Each store keeps one listening connection, read by one daemon thread started at the first
:meth:`~PgTableStore.watch`; when that connection drops, the thread connects again (with
a short backoff) and tells every watched table's listeners its current version, so a
change made while it was away is not missed (listeners drop versions they know).

The methods are called from many threads (``asyncio.to_thread``): each borrows a
connection from a small pool and gives it back. A connection broken by a server restart
makes that call fail with :class:`~.store.TableStoreError`; the pool is emptied and the
next call connects afresh. Every error is one line naming the URL without its password.

Needs the ``postgres`` extra (psycopg 3.2 or later); imported only when a URL is used.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any, Final

from battlejudge.apps.tables.store import (
    Listener,
    StoredTable,
    TableStoreError,
    _Watchers,
    check_table_id,
)
from battlejudge.proofs.backends import redact, redact_message

try:
    import psycopg
except ImportError:  # the postgres extra is missing: PgTableStore says so
    psycopg = None  # type: ignore[assignment]

__all__ = ["CHANNEL", "PgTableStore"]

_logger = logging.getLogger(__name__)

CHANNEL: Final = "battlejudge_tables"
"""The ``NOTIFY`` channel of every change: payload ``ID:VERSION``."""
SCHEMA_LOCK: Final = 0x6A75_6467_7461_6273 & 0x7FFF_FFFF_FFFF_FFFF
"""The advisory lock taken while the table is made (any fixed 64-bit number)."""
CONNECT_TIMEOUT: Final = 5
"""Seconds to wait for the database before giving up on it."""
POOL_SIZE: Final = 8
"""Most connections a store's methods hold at once (more callers wait their turn)."""
IDLE: Final = 4
"""Most idle connections a store keeps for the next call."""
WAIT: Final = 0.25
"""Seconds the listening thread waits for notifications before it looks whether to stop."""
BACKOFF: Final = (0.05, 1.0)
"""The first and the longest wait, in seconds, between attempts to listen again."""

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS battlejudge_tables (
    id text PRIMARY KEY,
    version integer NOT NULL,
    doc text NOT NULL,
    blob bytea NOT NULL,
    updated timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS battlejudge_tables_updated ON battlejudge_tables (updated);
"""

Connection = Any
"""A psycopg connection (``psycopg.Connection``; psycopg is imported only when used)."""


def _one_line(error: BaseException, url: str) -> str:
    """The error's message on one line, with no secret of ``url`` (libpq may quote it)."""
    text = " ".join(part.strip() for part in str(error).splitlines() if part.strip())
    return redact_message(text or type(error).__name__, url)


def _dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, separators=(",", ":"))


class PgTableStore:
    """Tables in the PostgreSQL database at ``url`` (module docstring); the table is made
    if missing. Raises :class:`~.store.TableStoreError` naming the URL without its
    password when the database cannot be reached or the table cannot be made. One
    instance is shared by the threads of a process."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.name = redact(url)
        """The database URL without its password (for messages)."""
        if psycopg is None:
            raise TableStoreError(
                f"{self.name}: PostgreSQL tables need the postgres extra: "
                "pip install 'battlejudge[postgres]'"
            )
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(POOL_SIZE)
        self._idle: list[Connection] = []
        self._pid = os.getpid()
        self._closed = False
        self._watchers = _Watchers()
        self._stop = threading.Event()
        self._listener: threading.Thread | None = None
        self._start_lock = threading.Lock()
        with self._connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            # made only when missing: CREATE ... IF NOT EXISTS needs the right to create
            # even when the table is there, which a service's role may not have
            found = conn.execute("SELECT to_regclass('battlejudge_tables')").fetchone()
            if found is None or found[0] is None:
                conn.execute(SCHEMA)

    # -- connections ---------------------------------------------------------------------
    def _connect(self) -> Connection:
        """A new autocommit connection, or TableStoreError saying why not."""
        try:
            return psycopg.connect(self.url, connect_timeout=CONNECT_TIMEOUT, autocommit=True)
        except (psycopg.ProgrammingError, ValueError) as e:  # a URL libpq cannot parse
            raise TableStoreError(
                f"{self.name}: not a PostgreSQL URL: {_one_line(e, self.url)}"
            ) from None
        except psycopg.Error as e:
            raise TableStoreError(
                f"{self.name}: cannot connect: {_one_line(e, self.url)}"
            ) from None

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Connection]:
        """A pooled connection for one call; database errors become TableStoreError. A
        broken connection empties the pool (a restarted server broke them all), so the
        next call connects afresh."""
        with self._slots:
            with self._lock:
                if self._closed:
                    raise TableStoreError(f"{self.name}: the table store is closed")
                if self._pid != os.getpid():  # a forked child: its parent's are not its own
                    self._idle, self._pid = [], os.getpid()
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                conn = self._connect()
            try:
                yield conn
            except psycopg.Error as e:
                raise TableStoreError(f"{self.name}: {_one_line(e, self.url)}") from None
            finally:
                self._give_back(conn)

    def _give_back(self, conn: Connection) -> None:
        reusable = not conn.broken and (
            conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        )
        with self._lock:
            if reusable and not self._closed and len(self._idle) < IDLE:
                self._idle.append(conn)
                return
            stale = [] if reusable else self._idle
            if not reusable:
                self._idle = []
        for old in [conn, *stale]:
            with contextlib.suppress(Exception):
                old.close()

    # -- the store -----------------------------------------------------------------------
    def create(self, table_id: str, doc: dict[str, Any], blob: bytes) -> None:
        """Store a new table at version 1, committed before returning, and announce it;
        :class:`~.store.TableStoreError` if the id is taken."""
        check_table_id(table_id)
        text = _dumps(doc)
        with self._connection() as conn, conn.transaction():
            made = conn.execute(
                "INSERT INTO battlejudge_tables (id, version, doc, blob, updated) "
                "VALUES (%s, 1, %s, %s, clock_timestamp()) ON CONFLICT (id) DO NOTHING",
                (table_id, text, blob),
            ).rowcount
            if made == 1:
                conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, f"{table_id}:1"))
        if made != 1:
            raise TableStoreError(f"table {table_id} exists already")

    def load(self, table_id: str) -> StoredTable | None:
        """The table, or None when the store has no such table."""
        check_table_id(table_id)
        with self._connection() as conn:
            row = conn.execute(
                "SELECT version, doc, blob FROM battlejudge_tables WHERE id = %s", (table_id,)
            ).fetchone()
        if row is None:
            return None
        try:
            doc = json.loads(row[1])
        except ValueError as e:
            raise TableStoreError(f"table {table_id} is damaged in the database: {e}") from None
        return StoredTable(table_id, int(row[0]), doc, bytes(row[2]))

    def save(self, table_id: str, expected: int, doc: dict[str, Any], blob: bytes) -> bool:
        """Write version ``expected + 1`` if the table's version is still ``expected``,
        committed and announced (``NOTIFY``, in the same transaction) before returning
        True; False, with nothing written, when another change came first or there is
        no such table."""
        check_table_id(table_id)
        text = _dumps(doc)
        with self._connection() as conn, conn.transaction():
            changed = conn.execute(
                "UPDATE battlejudge_tables SET version = version + 1, doc = %s, blob = %s, "
                "updated = clock_timestamp() WHERE id = %s AND version = %s",
                (text, blob, table_id, expected),
            ).rowcount
            if changed == 1:
                conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, f"{table_id}:{expected + 1}"))
        return int(changed) == 1

    def recent(self, limit: int) -> list[dict[str, Any]]:
        """The docs of the ``limit`` tables changed most recently, newest first (a damaged
        doc is left out, as the directory store leaves out a damaged file)."""
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT doc FROM battlejudge_tables ORDER BY updated DESC, id LIMIT %s",
                (max(limit, 0),),
            ).fetchall()
        out = []
        for (text,) in rows:
            with contextlib.suppress(ValueError):
                out.append(json.loads(text))
        return out

    # -- watching ------------------------------------------------------------------------
    def watch(self, table_id: str, listener: Listener) -> Callable[[], None]:
        """Call ``listener(table_id, version)`` from the listening thread for every change
        of the table from now on, by this process or any other (milliseconds late, and
        again after a lost connection with the version then current); returns the
        function that stops watching. The first watch connects the listening thread
        before returning, so a change made after it returns is never missed; it raises
        :class:`~.store.TableStoreError` when it cannot."""
        check_table_id(table_id)

        def guarded(table_id: str, version: int) -> None:
            try:
                listener(table_id, version)
            except Exception:  # one listener's bug must not silence the others
                _logger.exception("a listener of table %s failed", table_id)

        stop = self._watchers.add(table_id, guarded)
        try:
            with self._start_lock:
                if self._closed:
                    raise TableStoreError(f"{self.name}: the table store is closed")
                if self._listener is None:
                    conn = self._listen()
                    self._listener = threading.Thread(
                        target=self._hear,
                        args=(conn,),
                        name="battlejudge-tables-listen",
                        daemon=True,
                    )
                    self._listener.start()
        except BaseException:
            stop()
            raise
        return stop

    def _listen(self) -> Connection:
        """A new connection listening on :data:`CHANNEL`."""
        conn = self._connect()
        try:
            conn.execute(f"LISTEN {CHANNEL}")
        except psycopg.Error as e:
            with contextlib.suppress(Exception):
                conn.close()
            raise TableStoreError(f"{self.name}: cannot listen: {_one_line(e, self.url)}") from None
        return conn

    def _hear(self, conn: Connection | None) -> None:
        """The listening thread: announce every notification until :meth:`close`; on a
        lost connection, listen again and announce every watched table's version."""
        backoff = BACKOFF[0]
        try:
            while not self._stop.is_set():
                if conn is None:
                    try:
                        conn = self._listen()
                        self._catch_up(conn)
                    except (TableStoreError, psycopg.Error) as e:
                        why = e if isinstance(e, TableStoreError) else _one_line(e, self.url)
                        _logger.warning(  # a TableStoreError names the URL already
                            "cannot listen for table changes: %s",
                            why if isinstance(why, TableStoreError) else f"{self.name}: {why}",
                        )
                        self._drop(conn)
                        conn = None
                        self._stop.wait(backoff)
                        backoff = min(backoff * 2, BACKOFF[1])
                        continue
                    _logger.info("%s: listening for table changes again", self.name)
                    backoff = BACKOFF[0]
                try:
                    for note in conn.notifies(timeout=WAIT):
                        self._announce(note.payload)
                except psycopg.Error as e:
                    _logger.warning(
                        "%s: lost the connection that hears table changes (%s); connecting again",
                        self.name,
                        _one_line(e, self.url),
                    )
                    self._drop(conn)
                    conn = None
        finally:
            self._drop(conn)

    @staticmethod
    def _drop(conn: Connection | None) -> None:
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    def _catch_up(self, conn: Connection) -> None:
        """Tell every watched table's listeners its current version (after listening
        again: changes made while the connection was down sent no notification here)."""
        watched = self._watchers.tables()
        if not watched:
            return
        rows = conn.execute(
            "SELECT id, version FROM battlejudge_tables WHERE id = ANY(%s)", (watched,)
        ).fetchall()
        for table_id, version in rows:
            self._watchers.tell(table_id, int(version))

    def _announce(self, payload: str) -> None:
        """Tell the listeners of a notification ``ID:VERSION`` (anything else is ignored:
        another program may notify on the channel)."""
        table_id, _, version = payload.rpartition(":")
        if table_id and version.isdigit():
            self._watchers.tell(table_id, int(version))

    def close(self) -> None:
        """Stop the listening thread and close every connection; calls after this raise
        :class:`~.store.TableStoreError`."""
        self._stop.set()
        with self._start_lock:
            self._closed = True
            thread = self._listener
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=WAIT + CONNECT_TIMEOUT + 1)
        with self._lock:
            idle, self._idle = self._idle, []
            mine = self._pid == os.getpid()
        for conn in idle if mine else ():
            with contextlib.suppress(Exception):
                conn.close()

    def __enter__(self) -> PgTableStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<PgTableStore {self.name!r}>"
