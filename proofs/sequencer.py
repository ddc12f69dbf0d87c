"""The sequencer: every appender of a process submits entries to one pool, and the log
commits the pooled entries together (one write, one fsync or transaction, one signed
checkpoint) at most every ``interval`` seconds, or at once when the pool is full.

Certificate Transparency logs run this way today (Sunlight, Trillian Tessera): signing and
syncing once per batch, not once per entry, is what lets a log take thousands of entries a
second, and a large batch from one client no longer holds everyone else's entries behind
its own: every entry waits at most one interval (plus the commit it goes out in).

A submitter gets a future that resolves once its entries are durable in the log, with the
records as written (``seq``, ``prev``, ``sig``); if the commit fails, every entry of it
fails with the same error and none is in the log. Works over any store with
``append_records`` (:class:`battlejudge.proofs.log.ProofLog`, ``PgProofLog``); several
processes each with a sequencer on one log stay gapless because each commit is
serialized by the store (a file lock, a database lock).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from typing import Any, Final

__all__ = ["DEFAULT_INTERVAL", "DEFAULT_POOL", "Sequencer"]

DEFAULT_INTERVAL: Final = 0.1
"""Seconds between commits while entries keep coming (at most 0.25 s, as the log's
readers are promised): an idle log commits an entry at once."""
DEFAULT_POOL: Final = 4096
"""Entries that make the pool full: they are committed without waiting for the interval."""


class Sequencer:
    """Pools entries for ``store`` and commits them in batches from one thread.

    ``interval``: the least time between the starts of two commits; ``pool``: the
    number of pooled entries that starts a commit at once. :meth:`close` commits what
    is pooled and stops the thread (the store is not closed)."""

    def __init__(
        self, store: Any, *, interval: float = DEFAULT_INTERVAL, pool: int = DEFAULT_POOL
    ) -> None:
        if not 0 <= interval <= 60:
            raise ValueError(f"interval must be between 0 and 60 seconds, got {interval!r}")
        if pool < 1:
            raise ValueError(f"pool must be at least 1, got {pool!r}")
        self.store = store
        self.interval = interval
        self.pool = pool
        self._cond = threading.Condition()
        self._pending: list[tuple[list[Mapping[str, Any]], Future[list[dict[str, Any]]]]] = []
        self._count = 0
        self._closing = False
        self._last = -float("inf")  # when the last commit started (monotonic)
        self.commits = 0
        """Commits made so far (for benchmarks and tests)."""
        self._thread = threading.Thread(target=self._run, name="battlejudge-sequencer", daemon=True)
        self._thread.start()

    @property
    def name(self) -> str:
        """The store's name (a path, or a URL without its password)."""
        name: str = self.store.name
        return name

    def submit(self, records: Sequence[Mapping[str, Any]]) -> Future[list[dict[str, Any]]]:
        """Pool records already checked (:func:`battlejudge.proofs.log.claim_record`); the
        future gives them as written once they are durable."""
        future: Future[list[dict[str, Any]]] = Future()
        if not records:
            future.set_result([])
            return future
        with self._cond:
            if self._closing:
                raise RuntimeError("the sequencer is closed")
            self._pending.append((list(records), future))
            self._count += len(records)
            self._cond.notify()
        return future

    def append_records(self, records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """:meth:`submit`, waiting for the records to be durable (the store's interface)."""
        return self.submit(records).result()

    def _take(self) -> list[tuple[list[Mapping[str, Any]], Future[list[dict[str, Any]]]]]:
        with self._cond:
            while True:
                if self._pending:
                    wait = self._last + self.interval - time.monotonic()
                    if wait <= 0 or self._count >= self.pool or self._closing:
                        break
                    self._cond.wait(wait)
                elif self._closing:
                    return []
                else:
                    self._cond.wait()
            batch, self._pending, self._count = self._pending, [], 0
            self._last = time.monotonic()
            return batch

    def _run(self) -> None:
        while True:
            batch = self._take()
            if not batch:
                return
            records = [r for rs, _ in batch for r in rs]
            try:
                written = self.store.append_records(records)
            except BaseException as e:  # every entry of the commit fails alike
                for _, future in batch:
                    future.set_exception(e)
                continue
            self.commits += 1
            at = 0
            for rs, future in batch:
                future.set_result(written[at : at + len(rs)])
                at += len(rs)

    def close(self) -> None:
        """Commit the pooled entries, then stop the committing thread."""
        with self._cond:
            self._closing = True
            self._cond.notify()
        if self._thread is not threading.current_thread():
            self._thread.join()

    def __enter__(self) -> Sequencer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
