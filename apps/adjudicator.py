"""The work behind the service's endpoints: how the service runs (:class:`ServiceConfig`)
and what runs it (:class:`Adjudicator`): the fair queue (:mod:`.scheduler`), its worker
processes (:mod:`.workers`) and the one thread that appends answered claims to the proof log.

Apart from the HTTP layer, so that the routers (:mod:`battlejudge.apps.routes`, the web pages
of :mod:`battlejudge.apps.web`) and the application that gathers them
(:mod:`battlejudge.apps.service`) all import it, and it imports none of them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

from battlejudge.apps.scheduler import FairScheduler
from battlejudge.apps.workers import WorkerPool
from battlejudge.proofs.budget import DEFAULT_MEMORY_LIMIT
from battlejudge.proofs.log import PreparedRecord, proved_record
from battlejudge.proofs.sequencer import DEFAULT_INTERVAL, Sequencer
from battlejudge.proofs.store import StoreError, open_store
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import InputError

BULK_NICE: Final = 10
"""The priority (nice) of the workers that run a client's second and later jobs."""
T = TypeVar("T")
_logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServiceConfig:
    """How the service runs.

    Work: ``time_limit`` seconds and ``memory_limit`` bytes per job (one question or
    one certificate check) before 503 undecided; ``conflict_limit`` solver conflicts per
    question (None: no limit); ``workers`` jobs run at once, plus as many more for
    clients that have none running (:mod:`.scheduler`). Log: ``log_path`` and
    ``key_path``, the proof log every answered claim is appended to (a file or a
    ``postgresql://`` URL, which several services may share) and its signing key; each
    answer logged carries its record's ``log_seq``. While the log cannot be written the
    service refuses claims (503), unless ``log_optional``: then it answers them unlogged.
    Answered claims are pooled and committed together as they come, and a checkpoint of
    them published at most every ``checkpoint_interval`` seconds
    (:mod:`~battlejudge.proofs.sequencer`); ``witnesses`` (``URL=VKEY``) cosign each
    checkpoint.
    Clients: ``api_keys`` maps key hashes to client names (None: no keys);
    ``client_concurrency`` requests in progress and ``rate_limit`` questions per second
    (0: none) per client, bursts of ``rate_burst``. Connections (used by :func:`serve`):
    ``header_timeout`` and ``body_timeout`` seconds to send a request's head and body,
    ``keep_alive`` seconds an idle keep-alive connection stays open,
    ``max_connections`` open at once, ``max_header_bytes`` of a request head.
    ``tables``: where the tables people play at are kept (a directory or a
    ``postgresql://`` URL, :mod:`battlejudge.apps.tables`; None: a temporary directory,
    gone when the service stops).
    ``dedicated``: the process does nothing but serve (``battlejudge serve``), so it
    may be tuned for that (:func:`tune_for_serving`)."""

    time_limit: float = 2.0
    conflict_limit: int | None = None
    log_path: str | None = None
    key_path: str | None = None
    log_optional: bool = False
    checkpoint_interval: float = DEFAULT_INTERVAL
    witnesses: tuple[str, ...] = ()
    tables: str | None = None
    dedicated: bool = False
    workers: int = 1
    memory_limit: int = DEFAULT_MEMORY_LIMIT
    api_keys: dict[str, str] | None = field(default=None, hash=False, compare=False)
    client_concurrency: int = 32
    rate_limit: float = 0.0
    rate_burst: float = 0.0
    header_timeout: float = 10.0
    body_timeout: float = 10.0
    keep_alive: int = 5
    max_connections: int = 1000
    max_header_bytes: int = 16 * 1024


class ServiceError(Exception):
    """An answer other than 200: its status and JSON body."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(body.get("error", ""))
        self.status = status
        self.body = body


class Adjudicator:
    """The work behind the endpoints: the fair queue, its worker processes, one log
    writer thread."""

    def __init__(self, config: ServiceConfig) -> None:
        self.config = config
        spare = config.workers
        # A client's sole running job gets a worker at normal priority; the jobs of a
        # client that already has one running get nice-10 workers: when the cores are
        # busy, a client asking one question goes before another client's bulk.
        self.pool = WorkerPool(config.workers + spare)
        self.bulk = WorkerPool(config.workers, nice=BULK_NICE)
        self.queue = FairScheduler(config.workers, spare)
        self.writer = ThreadPoolExecutor(1, thread_name_prefix="battlejudge-log")
        self.log: Any = None
        self.sequencer: Sequencer | None = None
        self.view: Any = None
        self.keeps_log = bool(config.log_path)
        if config.log_path:
            from battlejudge.proofs.keys import load_private_key
            from battlejudge.proofs.logview import open_view

            self._key = load_private_key(config.key_path) if config.key_path else None
            self.view = open_view(config.log_path)
            try:
                self._open_log()
            except StoreError as e:
                if not config.log_optional:
                    raise
                _logger.warning("%s; answering claims unlogged until it is back", e)

    def _open_log(self) -> None:
        from battlejudge.proofs.witnessing import Cosigners, parse_witness_option

        cfg = self.config
        assert cfg.log_path is not None
        links = [parse_witness_option(w) for w in cfg.witnesses]
        cosign = Cosigners(links) if links else None
        self.log = open_store(cfg.log_path, self._key, cosign=cosign)
        self.sequencer = Sequencer(self.log, interval=cfg.checkpoint_interval)

    async def start(self) -> None:
        """Start every worker process now rather than on the first requests."""
        await asyncio.gather(self.pool.start(), self.bulk.start())

    def close(self) -> None:
        """Stop the service's work: close the request queue and the worker pools, wait for the
        log writer to finish its appends, and close the proof log."""
        self.queue.close()
        self.pool.close()
        self.bulk.close()
        self.writer.shutdown(wait=True)
        if self.sequencer is not None:
            self.sequencer.close()
        if self.log is not None:
            self.log.close()
        if self.view is not None:
            self.view.close()

    async def job(
        self,
        client: str,
        fn: Callable[..., T],
        *args: Any,
        what: str,
        scale: float = 1.0,
        short: bool = False,
    ) -> T:
        """``fn(*args)`` as a job of ``client``: in its turn (:mod:`.scheduler`), in a
        worker, within the time and memory limits (:class:`UndecidedError` past them);
        ``scale`` times the time limit for work made of many questions (a web audit);
        ``short`` for work known to be brief, whose worker is never demoted
        (:meth:`~battlejudge.apps.workers.WorkerPool.run`)."""
        cfg = self.config
        limit = cfg.time_limit * scale

        async def work(busy: bool) -> T:
            return await (self.bulk if busy else self.pool).run(
                fn,
                *args,
                time_limit=limit,
                memory_limit=cfg.memory_limit,
                what=what,
                demote=not short,
            )

        return await self.queue.run(client, work)

    async def record(
        self, proofs: list[tuple[bl.ProvedClaim | PreparedRecord, dict[str, Any]]]
    ) -> list[int | None]:
        """Append answered claims (proved claims, or their records made in a worker) to
        the proof log (when there is one) before answering: pooled with every other
        client's and committed together by the sequencer as soon as the commit in progress
        is done; their records' seqs (None where unlogged). A log that cannot be written is
        a 503 :class:`ServiceError`, unless ``log_optional``: then the claims go unlogged."""
        if not self.keeps_log or not proofs:
            return [None] * len(proofs)
        records = [  # a worker's record has its context in already
            p if isinstance(p, PreparedRecord) else proved_record(p, **context)
            for p, context in proofs
        ]
        try:
            if self.sequencer is None:  # it was down when the service started
                await asyncio.get_running_loop().run_in_executor(self.writer, self._open_log)
            assert self.sequencer is not None
            written = await asyncio.wrap_future(self.sequencer.submit(records))
            return [r["seq"] for r in written]
        except (InputError, OSError) as e:
            if not self.config.log_optional:
                why = f"the proof log cannot be written, so no claim is answered: {self._shown(e)}"
                raise ServiceError(503, {"error": why}) from None
            _logger.warning("%s; this claim goes unlogged", e)
            return [None] * len(proofs)

    def _shown(self, e: BaseException) -> str:
        """An error of the log as a client may read it: a file log's path on disk is not
        shown (a database URL is, without its password)."""
        text = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        path = self.config.log_path
        if path and not path.startswith(("postgresql://", "postgres://")):
            for shown in (str(Path(path).resolve()), path):  # the longer first
                text = text.replace(shown, "the proof log")
        return text
