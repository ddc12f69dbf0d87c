"""The sequencer: every appender of a process submits entries to one pool; the log commits
what has gathered in one write (one fsync, or one transaction) as soon as the previous
commit is done, and publishes a signed checkpoint of it (tiles, signature, witnesses'
cosignatures) at most every ``interval`` seconds.

Certificate Transparency logs run this way today (Sunlight, Trillian Tessera): entries are
sequenced and made durable in batches, and the tree head is signed and handed to witnesses
about once an interval, not once per entry. That is what lets a log take thousands of
entries a second, and a large batch from one client no longer holds everyone else's
entries behind one fsync and one signature each: an entry waits at most for the commit in
progress, then goes out in the next one.

A submitter gets a future that resolves once its entries are durable in the log, with the
records as written (``seq``, ``prev``, ``sig``): an answer can say its ``log_seq`` at
once, and the checkpoint that covers it follows within ``interval``. If a commit fails,
every entry of it fails with the same error and none is in the log. If publishing fails
(a witness refuses the checkpoint: a rollback, a fork), the sequencer stops: that and
every later submission fail with the error, since nothing more may be signed over that
log; a disk or database that fails for a while only delays the checkpoint to the next
interval. Works over any store with ``append_records`` (and ``publish``, to commit without a
checkpoint each time: :class:`battlejudge.proofs.log.ProofLog`, ``PgProofLog``); several
processes each with a sequencer on one log stay gapless because each commit is serialized
by the store (a file lock, a database lock).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any, Final

__all__ = ["DEFAULT_INTERVAL", "DEFAULT_POOL", "Sequencer"]

_logger = logging.getLogger(__name__)

DEFAULT_INTERVAL: Final = 0.25
"""Seconds between two published checkpoints while entries keep coming."""
DEFAULT_POOL: Final = 4096
"""The most entries one commit takes (the rest go in the next)."""

Pending = tuple[list[Any], "Future[list[dict[str, Any]]]"]
"""Records submitted together (dicts, or prepared records) and their future."""


class Sequencer:
    """Pools entries for ``store``, commits them in batches from one thread, and publishes
    a checkpoint at most every ``interval`` seconds (at once with ``interval`` 0, and on
    :meth:`close`). ``pool``: the most entries one commit takes. :meth:`close` commits
    what is pooled, publishes, and stops the thread (the store is not closed)."""

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
        self._publishes = callable(getattr(store, "publish", None))
        self._cond = threading.Condition()
        self._pending: list[Pending] = []
        self._closing = False
        self._broken: BaseException | None = None
        self._dirty = False  # committed entries no checkpoint covers yet
        self._published = -float("inf")  # when the last checkpoint went out (monotonic)
        self.commits = 0
        """Commits made so far (for benchmarks and tests)."""
        self.checkpoints = 0
        """Checkpoints published so far."""
        self._thread = threading.Thread(target=self._run, name="battlejudge-sequencer", daemon=True)
        self._thread.start()

    @property
    def name(self) -> str:
        """The store's name (a path, or a URL without its password)."""
        name: str = self.store.name
        return name

    def submit(self, records: Sequence[Any]) -> Future[list[dict[str, Any]]]:
        """Pool records already checked (:func:`battlejudge.proofs.log.claim_record`); the
        future gives them as written once they are durable."""
        future: Future[list[dict[str, Any]]] = Future()
        if not records:
            future.set_result([])
            return future
        with self._cond:
            if self._broken is not None:
                future.set_exception(self._broken)
                return future
            if self._closing:
                raise RuntimeError("the sequencer is closed")
            self._pending.append((list(records), future))
            self._cond.notify()
        return future

    def append_records(self, records: Sequence[Any]) -> list[dict[str, Any]]:
        """:meth:`submit`, waiting for the records to be durable (the store's interface)."""
        return self.submit(records).result()

    def _take(self) -> tuple[list[Pending], bool]:
        """The next entries to commit (at most ``pool``), and whether a checkpoint is due;
        ``([], False)`` once closed and done."""
        with self._cond:
            while True:
                if self._pending:
                    batch: list[Pending] = []
                    count = 0
                    while self._pending and (
                        not batch or count + len(self._pending[0][0]) <= self.pool
                    ):
                        item = self._pending.pop(0)
                        batch.append(item)
                        count += len(item[0])
                    return batch, False
                if self._dirty:
                    wait = self._published + self.interval - time.monotonic()
                    if wait <= 0 or self._closing:
                        return [], True
                    self._cond.wait(wait)
                elif self._closing:
                    return [], False
                else:
                    self._cond.wait()

    def _run(self) -> None:
        while True:
            batch, due = self._take()
            if not batch and not due:
                return
            if batch:
                self._commit(batch)
                due = self.interval == 0 or time.monotonic() - self._published >= self.interval
            if due and self._dirty:
                self._publish()

    def _commit(self, batch: list[Pending]) -> None:
        records = [r for rs, _ in batch for r in rs]
        try:
            if self._publishes:
                written = self.store.append_records(records, publish=False)
            else:
                written = self.store.append_records(records)
        except BaseException as e:  # every entry of the commit fails alike
            for _, future in batch:
                future.set_exception(e)
            return
        self.commits += 1
        with self._cond:
            self._dirty = self._publishes
        at = 0
        for rs, future in batch:
            future.set_result(written[at : at + len(rs)])
            at += len(rs)

    def _publish(self) -> None:
        from battlejudge.proofs.log import VouchError
        from battlejudge.proofs.witness import WitnessError

        try:
            self.store.publish()
        except (WitnessError, VouchError) as e:  # nothing more may be signed over this log
            _logger.error("%s: the checkpoint cannot be published: %s", self.name, e)
            with self._cond:
                self._broken = e
                failed, self._pending = self._pending, []
                self._dirty = False
            for _, future in failed:
                future.set_exception(e)
        except Exception as e:  # the disk or the database: the next interval tries again
            _logger.warning("%s: the checkpoint is not published yet: %s", self.name, e)
            with self._cond:
                self._published = time.monotonic()
            return
        else:
            self.checkpoints += 1
        with self._cond:
            self._dirty = False
            self._published = time.monotonic()

    def close(self) -> None:
        """Commit the pooled entries, publish their checkpoint, then stop the thread."""
        with self._cond:
            self._closing = True
            self._cond.notify()
        if self._thread is not threading.current_thread():
            self._thread.join()

    def __enter__(self) -> Sequencer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
