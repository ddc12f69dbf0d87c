"""Reading a proof log line by line, in memory that does not grow with the log.

:func:`iter_store` opens a log (a file, or a ``postgresql://`` URL) and reads its latest
checkpoint note first; iterating the :class:`LogReader` then yields each line in order as
``(where, item)``: ``item`` is the :class:`LogRecord` of a complete record or the
:class:`Problem` of a line that is not one (``torn`` or ``malformed``), with the rules
:func:`~battlejudge.proofs.log.parse_log` and :func:`~battlejudge.proofs.pglog.read_pg`
apply to a whole log. ``where`` says where the line is (its byte offset in a file, its
``seq`` key in the database), so that :meth:`LogReader.reopen` can read the log again from
that line (a :class:`Mark`) without reading what comes before it.

A file is read through a buffer, one line at a time; a database log through a server-side
cursor, a batch of rows at a time, in one snapshot.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TypeAlias

from battlejudge.proofs.log import (
    LogRecord,
    Problem,
    checkpoint_path,
    newer_format,
    parse_line,
    parse_log,
    sha256_hex,
)
from battlejudge.solver.errors import InputError

__all__ = ["Item", "LogReader", "Mark", "iter_store"]

Item: TypeAlias = LogRecord | Problem
"""A line of a log as read: a complete record, or why the line is not one."""

BUFFER: int = 1 << 20
"""Bytes read from a file log at a time."""


@dataclass(frozen=True)
class Mark:
    """A line to read a log again from: ``where`` is the line's byte offset in a file log
    (its row's ``seq`` key in a database log) and ``index`` the line's index (0-based)."""

    where: int
    index: int


START = Mark(0, 0)
"""The first line of a log."""


class LogReader(ABC):
    """A log open for reading line by line (:func:`iter_store`); a context manager that
    closes the file or the database connection.

    ``checkpoint`` is the log's latest checkpoint note (None: it has none, or this reader
    started at a :class:`Mark` and did not read it), read before any line: the log only
    grows, so every record it covers is among the lines read after it. Iterating yields
    ``(where, item)`` for each line, once; ``lines`` counts the lines read so far and
    ``end`` is the ``where`` just past the last one (for a file: the bytes read).

    Read from its start, a file that has no record and some line that is neither a record
    nor a torn write is not a proof log (:class:`InputError` at the end of the lines), and
    a record of a later log format than this code reads is refused (:class:`InputError`,
    raised once a record has been seen, so that a file of no records is called not a proof
    log first, as :func:`~battlejudge.proofs.store.read_store` does).
    """

    name: str
    checkpoint: str | None

    def __init__(self, name: str, checkpoint: str | None, start: Mark, whole: bool) -> None:
        self.name = name
        self.checkpoint = checkpoint
        self.start = start
        self.lines = 0
        self.end = start.where
        self._whole = whole
        self._count: int | None = None

    @abstractmethod
    def _items(self) -> Iterator[tuple[int, Item]]:
        """Made by each kind of log."""

    @abstractmethod
    def _count_lines(self) -> int:
        """Made by each kind of log."""

    @abstractmethod
    def reopen(self, start: Mark) -> LogReader:
        """A new reader of the same log from the line at ``start`` (its checkpoint is not
        read again: ``checkpoint`` is None)."""
        ...

    def close(self) -> None:
        """Release the file or the database connection."""
        return  # nothing held by default

    def count_lines(self) -> int:
        """How many lines the log has from this reader's start, as of now (read ahead, for
        a progress bar; the lines iterated may be more, if the log grows meanwhile)."""
        if self._count is None:
            self._count = self._count_lines()
        return self._count

    def __iter__(self) -> Iterator[tuple[int, Item]]:
        pending: InputError | None = None  # a later format, before any record
        records = malformed = False
        for where, item in self._items():
            self.lines += 1
            if isinstance(item, Problem):
                if item.kind == "malformed":
                    malformed = True
                    try:
                        newer_format([item], self.name)
                    except InputError as e:
                        if records or not self._whole:
                            raise
                        pending = pending or e
            else:
                if pending is not None:
                    raise pending
                records = True
            yield where, item
        if self._whole and not records and malformed:
            raise InputError(f"{self.name}: not a proof log (no line is a record)")

    def __enter__(self) -> LogReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _FileReader(LogReader):
    """A file log, read through a buffer; ``where`` is a line's byte offset."""

    def __init__(self, path: Path, start: Mark | None) -> None:
        note: str | None = None
        if start is None:
            try:
                note = checkpoint_path(path).read_text(encoding="utf-8")
            except FileNotFoundError:
                note = None
            except UnicodeDecodeError:
                note = checkpoint_path(path).read_bytes().decode("utf-8", "replace")
        super().__init__(str(path), note, start or START, start is None)
        self.path = path
        self._file: IO[bytes] | None = open(path, "rb", buffering=BUFFER)
        if self.start.where:
            self._file.seek(self.start.where)

    def _items(self) -> Iterator[tuple[int, Item]]:
        if self._file is None:
            raise ValueError(f"{self.name}: the reader is closed")
        index = self.start.index
        for line in self._file:
            # One line through parse_log: the same rules as for the whole file (a last
            # line without its newline is a record or torn, an empty one malformed...).
            records, problems = parse_log(line, self.name, whole=False)
            if records:
                r = records[0]
                item: Item = LogRecord(index, r.data, r.raw, r.digest)
            else:
                p = problems[0]
                item = Problem(index, p.kind, p.detail)
            where = self.end
            self.end += len(line)
            index += 1
            yield where, item

    def _count_lines(self) -> int:
        lines = 0
        last = b"\n"
        with open(self.path, "rb", buffering=0) as f:
            f.seek(self.start.where)
            while chunk := f.read(BUFFER):
                lines += chunk.count(b"\n")
                last = chunk[-1:]
        return lines + (last != b"\n")

    def reopen(self, start: Mark) -> LogReader:
        """A new reader of the same file from the line at byte ``start.where``."""
        return _FileReader(self.path, start)

    def close(self) -> None:
        """Close the file."""
        f, self._file = self._file, None
        if f is not None:
            f.close()


class _PgReader(LogReader):
    """A database log, read through a server-side cursor in one snapshot
    (:func:`battlejudge.proofs.pglog.iter_pg`); ``where`` is a row's ``seq`` key."""

    def __init__(self, url: str, start: Mark | None) -> None:
        from battlejudge.proofs.backends import redact
        from battlejudge.proofs.pglog import iter_pg

        self.url = url
        self._context = iter_pg(url, (start or START).where)
        note, rows, count = self._context.__enter__()
        self._rows: Iterator[tuple[int, str]] = rows
        self._counter: Callable[[], int] = count
        super().__init__(redact(url), note if start is None else None, start or START, False)

    def _items(self) -> Iterator[tuple[int, Item]]:
        index = self.start.index
        for seq, text in self._rows:
            raw = text.encode("utf-8")
            parsed = parse_line(raw)  # the rules of read_pg: a row is a record or malformed
            if isinstance(parsed, dict):
                item: Item = LogRecord(index, parsed, raw, sha256_hex(raw))
            else:
                item = Problem(index, "malformed", parsed)
            self.end = seq + 1
            index += 1
            yield seq, item

    def _count_lines(self) -> int:
        return self._counter()

    def reopen(self, start: Mark) -> LogReader:
        """A new reader of the same database log from the row whose key is ``start.where``
        (in a snapshot of its own)."""
        return _PgReader(self.url, start)

    def close(self) -> None:
        """End the snapshot and close the connection."""
        context, self._context = self._context, None  # type: ignore[assignment]
        if context is not None:
            context.__exit__(None, None, None)


def iter_store(target: str | os.PathLike[str], start: Mark | None = None) -> LogReader:
    """Open the log at ``target`` (a file path or a ``postgresql://`` URL) for reading
    line by line (see :class:`LogReader`); from its first line and with its checkpoint, or
    from the line at ``start``. Raises ``OSError`` (a file that cannot be opened),
    :class:`~battlejudge.proofs.store.StoreError` (a database that cannot be reached or
    holds no log) and, while iterating, :class:`InputError` (not a proof log, a later
    format)."""
    from battlejudge.proofs.backends import is_url

    if is_url(target):
        return _PgReader(str(target), start)
    return _FileReader(Path(target), start)
