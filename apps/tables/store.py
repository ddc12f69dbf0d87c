"""Where tables are kept: a directory (one process, the default) or PostgreSQL (several
service processes or machines), behind one interface, :class:`TableStore`.

A stored table is three things written together, or not at all:

- ``version``: 1 when created, one more with every change;
- ``doc``: plain JSON (the table's settings, seat kinds and token hashes, clocks, result,
  and the views of each seat and of a spectator that the worker drew after the change);
- ``blob``: the game itself as the worker left it (engine state, bots, chance generator),
  opaque bytes written and read only by this service.

Every change is a compare-and-set on the version (:meth:`TableStore.save`), so two
processes acting on one table never both win: the loser reloads and tries again or tells
its client the table moved on. Every change is announced to every process sharing the
store (:meth:`TableStore.watch`): the directory store by each process polling the files'
versions of the tables it watches, PostgreSQL by ``NOTIFY``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from battlejudge.proofs.atomic import write_atomic
from battlejudge.solver.errors import InputError

TABLE_ID: Final = re.compile(r"^[A-Za-z0-9_-]{8,32}$")
"""What a table id looks like (a random URL-safe token); anything else names no table."""
POLL: Final = 0.02
"""Seconds between a directory store's looks at the tables it watches."""

_logger = logging.getLogger(__name__)
Listener = Callable[[str, int], None]
"""Called with a table's id and its new version, from the store's own thread."""


class TableStoreError(Exception):
    """The store cannot be read or written (the message says why, without secrets)."""


@dataclass(frozen=True)
class StoredTable:
    """A table as stored: its version, its JSON document and the game's bytes."""

    id: str
    version: int
    doc: dict[str, Any]
    blob: bytes


class TableStore(Protocol):
    """A store of tables (module docstring). Methods block; the service calls them from
    a thread. ``table_id`` is always a valid id (:data:`TABLE_ID`)."""

    def create(self, table_id: str, doc: dict[str, Any], blob: bytes) -> None:
        """Store a new table at version 1 (durably, before returning)."""

    def load(self, table_id: str) -> StoredTable | None:
        """The table, or None when the store has no such table."""

    def save(self, table_id: str, expected: int, doc: dict[str, Any], blob: bytes) -> bool:
        """Write the table's version ``expected + 1`` if its version is still ``expected``
        (durably, before returning True, and announced to every watcher); False, with
        nothing written, when another change came first."""

    def recent(self, limit: int) -> list[dict[str, Any]]:
        """The docs of the ``limit`` tables changed most recently, newest first."""

    def watch(self, table_id: str, listener: Listener) -> Callable[[], None]:
        """Call ``listener(table_id, version)`` for every change of the table from now on,
        made by this process or any other sharing the store (at most :data:`POLL` seconds
        late); returns the function that stops watching."""

    def close(self) -> None:
        """Stop watching and release the store's files or connections."""


def check_table_id(table_id: str) -> str:
    """``table_id`` if it looks like one (:data:`TABLE_ID`); :class:`InputError` otherwise."""
    if not TABLE_ID.match(table_id):
        raise InputError(f"no such table: {table_id[:40]!r}")
    return table_id


class _Watchers:
    """Listeners by table id, called from one polling thread (the directory store) or
    the notification thread (PostgreSQL)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_table: dict[str, list[Listener]] = {}

    def add(self, table_id: str, listener: Listener) -> Callable[[], None]:
        with self._lock:
            self._by_table.setdefault(table_id, []).append(listener)

        def stop() -> None:
            with self._lock:
                found = self._by_table.get(table_id, [])
                if listener in found:
                    found.remove(listener)
                if not found:
                    self._by_table.pop(table_id, None)

        return stop

    def tables(self) -> list[str]:
        with self._lock:
            return list(self._by_table)

    def tell(self, table_id: str, version: int) -> None:
        with self._lock:
            listeners = list(self._by_table.get(table_id, ()))
        for listener in listeners:
            try:
                listener(table_id, version)
            except Exception:  # one bad listener must not silence the others, or the poller
                _logger.exception("a listener of table %s failed", table_id)


class DirTableStore:
    """Tables in a directory: ``ID.table`` holds a line of JSON ``{"version", "doc"}``
    and then the blob's bytes, replaced whole by an atomic, fsynced rename; ``ID.lock``
    serializes the compare-and-set of processes sharing the directory (``flock``). A
    process learns of another's changes by polling the version of the tables it watches
    every :data:`POLL` seconds (its own changes are announced at once)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise TableStoreError(
                f"cannot make the tables directory {folder}: {e.strerror}"
            ) from None
        if not os.access(self.folder, os.W_OK):
            raise TableStoreError(f"the tables directory {folder} is not writable")
        self._watchers = _Watchers()
        self._seen: dict[str, int] = {}
        self._stop = threading.Event()
        self._poller: threading.Thread | None = None
        self._start_lock = threading.Lock()

    def _path(self, table_id: str) -> Path:
        return self.folder / f"{check_table_id(table_id)}.table"

    @contextlib.contextmanager
    def _locked(self, table_id: str) -> Iterator[None]:
        fd = os.open(self.folder / f"{table_id}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _read(self, path: Path) -> StoredTable | None:
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise TableStoreError(f"cannot read table {path.stem}: {e.strerror}") from None
        head, newline, blob = raw.partition(b"\n")
        try:
            if not newline:
                raise ValueError("no end to its header line")
            data = json.loads(head)
            return StoredTable(path.stem, int(data["version"]), data["doc"], blob)
        except (ValueError, KeyError, TypeError) as e:
            raise TableStoreError(f"table {path.stem} is damaged on disk: {e}") from None

    def _write(self, table_id: str, version: int, doc: dict[str, Any], blob: bytes) -> None:
        head = json.dumps({"version": version, "doc": doc}, separators=(",", ":"))
        try:  # compact JSON holds no raw newline: the header ends at the first one
            write_atomic(self._path(table_id), head.encode() + b"\n" + blob)
        except OSError as e:
            raise TableStoreError(f"cannot write table {table_id}: {e.strerror}") from None

    def create(self, table_id: str, doc: dict[str, Any], blob: bytes) -> None:
        """Store a new table at version 1 (:meth:`TableStore.create`)."""
        with self._locked(check_table_id(table_id)):
            if self._path(table_id).exists():
                raise TableStoreError(f"table {table_id} exists already")
            self._write(table_id, 1, doc, blob)

    def load(self, table_id: str) -> StoredTable | None:
        """The table, or None (:meth:`TableStore.load`)."""
        return self._read(self._path(table_id))

    def save(self, table_id: str, expected: int, doc: dict[str, Any], blob: bytes) -> bool:
        """Compare-and-set the table's next version (:meth:`TableStore.save`)."""
        with self._locked(check_table_id(table_id)):
            if self._version_on_disk(table_id) != expected:  # its header line only
                return False
            self._write(table_id, expected + 1, doc, blob)
            self._seen[table_id] = max(self._seen.get(table_id, 0), expected + 1)
        self._watchers.tell(table_id, expected + 1)
        return True

    def recent(self, limit: int) -> list[dict[str, Any]]:
        """The docs of the tables changed most recently (by the files' times)."""
        found = sorted(
            (p for p in self.folder.glob("*.table") if TABLE_ID.match(p.stem)),
            key=lambda p: p.stat().st_mtime,
            reverse=True,
        )
        out = []
        for path in found[:limit]:
            with contextlib.suppress(TableStoreError, OSError):
                table = self._read(path)
                if table is not None:
                    out.append(table.doc)
        return out

    def watch(self, table_id: str, listener: Listener) -> Callable[[], None]:
        """Listen to a table's changes (:meth:`TableStore.watch`), polled."""
        check_table_id(table_id)
        stop = self._watchers.add(table_id, listener)
        with self._start_lock:
            if self._poller is None:
                self._poller = threading.Thread(
                    target=self._poll, name="battlejudge-tables-watch", daemon=True
                )
                self._poller.start()
        return stop

    def _version_on_disk(self, table_id: str) -> int | None:
        """The version in the table's file, read from its first bytes only."""
        try:
            with open(self._path(table_id), "rb") as f:
                head = f.read(40)
        except OSError:
            return None
        m = re.match(rb'\{"version":(\d+)', head)
        return int(m.group(1)) if m else None

    def _poll(self) -> None:
        mtimes: dict[str, int] = {}
        while not self._stop.wait(POLL):
            for table_id in self._watchers.tables():
                try:
                    mtime = self._path(table_id).stat().st_mtime_ns
                except OSError:
                    continue
                if mtimes.get(table_id) == mtime:
                    continue
                mtimes[table_id] = mtime
                version = self._version_on_disk(table_id)
                if version is None:
                    continue
                if self._seen.get(table_id, 0) < version:
                    self._seen[table_id] = version
                    self._watchers.tell(table_id, version)

    def close(self) -> None:
        """Stop the polling thread."""
        self._stop.set()
        if self._poller is not None:
            self._poller.join(timeout=1)
