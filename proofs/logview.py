"""Reading a log as its outside checkers do: its latest checkpoint and its tiles, from a
file log's ``LOG.tiles`` folder, a PostgreSQL log's tables, a folder of tiles or a URL
(any server of C2SP tlog-tiles: ``battlejudge serve``, or a static web server over the
folder), and the proofs made from them in O(log n) reads: no request reads the log.

:class:`LogView` is what ``battlejudge serve`` answers ``/checkpoint``, ``/tile/...`` and
``/v1/log/proof/SEQ`` from, and what ``battlejudge log prove``, ``log verify-inclusion
--tiles`` and ``log verify-consistency --tiles`` read.
"""

from __future__ import annotations

import os
import threading
import urllib.error
import urllib.parse
import urllib.request
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Final

from battlejudge.proofs.checkpoint import Checkpoint, CheckpointError, parse_checkpoint
from battlejudge.proofs.log import EPOCH, checkpoint_path, tiles_path
from battlejudge.proofs.merkle import leaf_hash
from battlejudge.proofs.proof_files import CONSISTENCY_TYPE, INCLUSION_TYPE, ProofFailed
from battlejudge.proofs.tiles import (
    SHARED_CACHE,
    WIDTH,
    DirTiles,
    TileError,
    TileReader,
    parse_tile_path,
)
from battlejudge.solver.errors import InputError

__all__ = ["LogView", "open_view"]

MAX_TILE: Final = WIDTH * (0xFFFF + 2)
"""The largest tile a reader takes (a full entry bundle of the longest entries)."""
TIMEOUT: Final = 10.0


class LogView(ABC):
    """A log's latest checkpoint and tiles, read-only. ``name`` names it in messages."""

    name: str

    @abstractmethod
    def checkpoint(self) -> str | None:
        """The latest checkpoint note, or None when the log has none."""
        ...

    @abstractmethod
    def tile(self, path: str) -> bytes | None:
        """The tile (or entry bundle) at ``path``, or None when there is none."""
        ...

    def close(self) -> None:
        """Release what the view holds (a connection)."""
        return  # nothing held by default

    def head(self) -> tuple[str, Checkpoint]:
        """The latest checkpoint's note and its fields; :class:`InputError` if none."""
        note = self.checkpoint()
        if note is None:
            raise InputError(f"{self.name}: the log has no checkpoint yet")
        return note, parse_checkpoint(note, f"{self.name} checkpoint").checkpoint

    def reader(self, size: int) -> TileReader:
        """A reader of the tree of ``size`` leaves from this view's tiles."""
        return TileReader(self.tile, size, key=self._cache_key(), cache=SHARED_CACHE)

    def _cache_key(self) -> str:
        return f"{id(self)}:"

    def inclusion_proof(self, seq: int) -> dict[str, Any]:
        """``battlejudge.inclusion/1`` for record ``seq`` against the latest checkpoint:
        the record's line from its entry bundle and its audit path from the tiles.
        :class:`InputError` when there is no such record in the checkpoint's tree."""

        note, head = self.head()
        if not 0 <= seq < head.size:
            raise InputError(
                f"{self.name}: no record {seq} in its latest checkpoint ({head.size} records)"
            )
        reader = self.reader(head.size)
        record = reader.entry(seq)
        leaf = reader.leaf(seq)
        if leaf_hash(record) != leaf:
            raise TileError(f"{self.name}: the entry bundle of record {seq} is not its tile's")
        return {
            "type": INCLUSION_TYPE,
            "index": seq,
            "tree_size": head.size,
            "record": record.decode("ascii", "replace"),
            "leaf_hash": leaf.hex(),
            "audit_path": [h.hex() for h in reader.inclusion_path(seq)],
            "checkpoint": note,
        }

    def consistency_proof(self, old_note: str) -> dict[str, Any]:
        """``battlejudge.consistency/1`` from ``old_note`` to the latest checkpoint.
        :class:`~battlejudge.proofs.transparency.ProofFailed` when the log shrank or its
        first records no longer hash to the old root."""

        note, head = self.head()
        old = parse_checkpoint(old_note, "the older checkpoint").checkpoint
        if old.size > head.size:
            raise ProofFailed(
                f"{self.name}: the older checkpoint has {old.size} records, the latest "
                f"{head.size}: the log shrank"
            )
        reader = self.reader(head.size)
        if reader.root(old.size) != old.root:
            raise ProofFailed(
                f"{self.name}: its first {old.size} records do not hash to the root of the "
                f"checkpoint of {old.time}: the log was rewritten since"
            )
        return {
            "type": CONSISTENCY_TYPE,
            "old": old_note,
            "new": note,
            "path": [h.hex() for h in reader.consistency_path(old.size)],
        }


class FileView(LogView):
    """A file log: ``LOG.checkpoint`` and the folder ``LOG.tiles``."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.name = str(path)
        self.tiles = DirTiles(tiles_path(self.path))

    def checkpoint(self) -> str | None:
        """The latest checkpoint note, or None."""
        try:
            return checkpoint_path(self.path).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as e:
            why = getattr(e, "strerror", None) or type(e).__name__
            raise CheckpointError(f"{self.name}: cannot read its checkpoint ({why})") from None

    def tile(self, path: str) -> bytes | None:
        """The tile at ``path``, or None."""
        return self.tiles.read(path)

    def _cache_key(self) -> str:
        # tiles rebuilt, or a log started again at the same path, get a new epoch
        epoch = self.tiles.read(EPOCH) or b"-"
        return f"{self.tiles.root}@{epoch[:64].decode('ascii', 'replace')}:"


class DirView(FileView):
    """A folder of tiles as a static server would serve it: ``DIR/checkpoint`` and
    ``DIR/tile/...`` (a file log's ``LOG.tiles``, or a copy of one)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.path = Path(folder)
        self.name = str(folder)
        self.tiles = DirTiles(self.path)

    def checkpoint(self) -> str | None:
        """The latest checkpoint note, or None."""
        data = self.tiles.read("checkpoint")
        if data is None:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{self.name}/checkpoint: not UTF-8 text") from None


class UrlView(LogView):
    """A tiled log served over HTTP at a URL prefix (``/checkpoint``, ``/tile/...``)."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        try:
            parts = urllib.parse.urlsplit(self.url)
        except ValueError:
            raise InputError(f"{self.url.rpartition('@')[2][:80]}: not a URL") from None
        # never a password in a message: the host and path only
        netloc = parts.netloc.rpartition("@")[2]
        self.name = urllib.parse.urlunsplit(parts._replace(netloc=netloc, query="", fragment=""))

    def _get(self, path: str) -> bytes | None:
        try:
            with urllib.request.urlopen(f"{self.url}/{path}", timeout=TIMEOUT) as answer:
                data: bytes = answer.read(MAX_TILE + 1)
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return None
            raise InputError(f"{self.name}/{path}: HTTP {e.code}") from None
        except (urllib.error.URLError, OSError, ValueError) as e:
            reason = getattr(e, "reason", None) or e
            raise InputError(f"{self.name}/{path}: cannot fetch it ({reason})") from None
        if len(data) > MAX_TILE:
            raise TileError(f"{self.name}/{path}: larger than a tile")
        return data

    def checkpoint(self) -> str | None:
        """The latest checkpoint note, or None."""
        data = self._get("checkpoint")
        return None if data is None else data.decode("utf-8", "replace")

    def tile(self, path: str) -> bytes | None:
        """The tile at ``path``, or None."""
        parse_tile_path(path)
        return self._get(path)

    def _cache_key(self) -> str:
        return f"{self.url}:"


class PgView(LogView):
    """A PostgreSQL log: its latest checkpoint row and its tile table, on one connection
    of its own (used by one thread at a time)."""

    def __init__(self, url: str) -> None:
        from battlejudge.proofs.pglog import connect
        from battlejudge.proofs.store import redact

        self.url = url
        self.name = redact(url)
        self._connect = connect
        self._conn: Any = None
        self._lock = threading.Lock()

    def _run(self, work: Any) -> Any:
        from battlejudge.proofs.pglog import PgTiles, _one_line, _psycopg
        from battlejudge.proofs.store import StoreError

        psycopg = _psycopg(self.url)
        with self._lock:
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = self._connect(self.url)
                    self._conn.autocommit = True
                return work(self._conn, PgTiles(self._conn))
            except psycopg.Error as e:
                if self._conn is not None and (self._conn.closed or self._conn.broken):
                    self._conn = None
                raise StoreError(f"{self.name}: {_one_line(e, self.url)}") from None

    def checkpoint(self) -> str | None:
        """The latest checkpoint note, or None."""

        def work(conn: Any, _: Any) -> str | None:
            row = conn.execute(
                "SELECT note FROM battlejudge_checkpoint ORDER BY size DESC LIMIT 1"
            ).fetchone()
            return None if row is None else str(row[0])

        return self._run(work)  # type: ignore[no-any-return]

    def tile(self, path: str) -> bytes | None:
        """The tile at ``path``, or None."""
        return self._run(lambda _, tiles: tiles.read(path))  # type: ignore[no-any-return]

    def _cache_key(self) -> str:
        return f"{self.name}:"

    def close(self) -> None:
        """Close the connection."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def open_view(target: str | os.PathLike[str]) -> LogView:
    """The view of a log (a file log's path, a ``postgresql://`` URL) or of tiles alone (a
    folder holding ``checkpoint`` and ``tile/``, or an ``http(s)://`` URL prefix)."""
    text = str(target)
    if text.startswith(("postgresql://", "postgres://")):
        return PgView(text)
    if text.startswith(("http://", "https://")):
        return UrlView(text)
    if Path(text).is_dir():
        return DirView(text)
    return FileView(text)
