"""The service's worker processes, awaited on its event loop.

The same workers as :class:`~battlejudge.proofs.budget.BudgetPool` (their main loop is
:func:`~battlejudge.proofs.budget.serve_checks`: each job runs under a memory cap), but
the service waits for their replies on its event loop instead of blocking a thread per
job: the process that reads HTTP then runs one thread, and never waits for the GIL
behind job threads (which halved its throughput).

Guarantees of :meth:`WorkerPool.run`: the job runs in a worker process within its time
limit; when the limit runs out, or the caller is cancelled (the client left), the worker
is killed at once (SIGKILL: its core is free when ``run`` returns) and a fresh one is
started in its place; a job that runs out of memory raises
:class:`~battlejudge.solver.errors.UndecidedError`, as one that runs out of time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, Final, TypeVar

from battlejudge.proofs.budget import serve_checks
from battlejudge.solver.errors import BattlejudgeError, UndecidedError

__all__ = ["WorkerPool"]

log = logging.getLogger(__name__)
R = TypeVar("R")

PRELOAD: Final = ["battlejudge.apps.claim_work", "battlejudge.apps.tables.work"]
"""Imported once by the forkserver, so a new worker starts with the solver and the
tables' game work loaded."""


DEMOTE_AFTER: Final = 0.05
"""Seconds a job runs before its worker's priority is lowered (see :class:`WorkerPool`)."""
DEMOTED_NICE: Final = 10


@dataclass
class _Worker:
    process: BaseProcess
    conn: Connection
    demoted: bool = False

    def demote(self) -> None:
        """Lower the worker's CPU priority (nice 10): the job it runs is a long one."""
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, self.process.pid or 0, DEMOTED_NICE)
            self.demoted = True

    def kill(self) -> None:
        """SIGKILL now (the core is free at once); reaped by :meth:`reap`."""
        self.conn.close()
        if self.process.is_alive():
            self.process.kill()

    def reap(self) -> None:
        self.process.join()


class WorkerPool:
    """Up to ``size`` worker processes, forked from multiprocessing's forkserver (the
    service runs threads, which forking itself would not be safe with). Use from one
    event loop; at most ``size`` jobs may run at once (the caller's queue sees to it).

    Long jobs yield to short ones: a job still running after :data:`DEMOTE_AFTER`
    seconds (a deep verify, a hard proof; a question takes a few milliseconds) has its
    worker's priority lowered to nice 10, so when the cores are busy the operating
    system runs other clients' short jobs first. A process may not raise its priority
    again, so that worker is retired after the job and a fresh one takes its place.
    With ``nice`` > 0 every worker runs at that priority from the start (and is never
    demoted): the service's pool for the jobs of clients that already have one running.
    """

    def __init__(self, size: int, nice: int = 0) -> None:
        if size < 1:
            raise ValueError(f"a worker pool needs at least 1 worker, got {size}")
        self.size = size
        self.nice = nice
        self._ctx = multiprocessing.get_context("forkserver")
        self._ctx.set_forkserver_preload(PRELOAD)
        self._idle: list[_Worker] = []
        self._live = 0
        """Workers running or starting (at most ``size`` once the queue is idle)."""
        self._closed = False
        self.killed = 0
        """Workers killed at a time limit, a memory limit or a cancellation."""

    def _spawn(self) -> _Worker:
        """Start a worker (blocks while the forkserver forks: call it in a thread)."""
        parent, child = self._ctx.Pipe()
        process = self._ctx.Process(
            target=serve_checks, args=(child,), daemon=True, name="battlejudge-worker"
        )
        process.start()
        child.close()
        worker = _Worker(process, parent)
        if self.nice > 0:
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, process.pid or 0, self.nice)
        return worker

    async def _take(self) -> _Worker:
        while self._idle:
            worker = self._idle.pop()
            if worker.process.is_alive():
                return worker
            worker.kill()
            self._live -= 1
        # Starting a process waits on the forkserver: not on the event loop.
        self._live += 1
        try:
            return await asyncio.to_thread(self._spawn)
        except BaseException:
            self._live -= 1
            raise

    async def start(self) -> None:
        """Start every worker now (the first requests then find them running)."""
        missing = self.size - self._live
        self._live += missing
        fresh = await asyncio.gather(*(asyncio.to_thread(self._spawn) for _ in range(missing)))
        self._idle.extend(fresh)

    def _discard(self, worker: _Worker, killed: bool = True) -> None:
        """Kill a worker whose job went wrong (or a demoted one: ``killed`` False) and
        start its replacement in the background, so the next job does not wait for a
        process to start."""
        worker.kill()
        self.killed += killed
        self._live -= 1
        loop = asyncio.get_running_loop()

        async def replace() -> None:
            await asyncio.to_thread(worker.reap)
            if self._closed or self._live >= self.size:
                return
            self._live += 1
            fresh = await asyncio.to_thread(self._spawn)
            if self._closed:
                fresh.kill()
                await asyncio.to_thread(fresh.reap)
            else:
                self._idle.append(fresh)

        task = loop.create_task(replace())
        task.add_done_callback(_log_failure)

    async def run(
        self,
        fn: Callable[..., R],
        *args: Any,
        time_limit: float,
        memory_limit: int | None,
        what: str,
        demote: bool = True,
    ) -> R:
        """``fn(*args)`` in a worker within ``time_limit`` seconds and ``memory_limit``
        bytes (see the module); returns what it returns or raises what it raises.
        ``fn`` and ``args`` must pickle (a module-level function). ``demote=False`` for
        work known to be short (a move at a table): on busy cores its wall time may pass
        :data:`DEMOTE_AFTER` while its CPU time is a millisecond, and retiring the
        worker for it would cost a process start per job."""
        if self._closed:
            raise BattlejudgeError("the worker pool is closed")
        worker = await self._take()
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        fd = worker.conn.fileno()

        def readable() -> None:
            if not ready.done():
                ready.set_result(None)

        loop.add_reader(fd, readable)
        # uvloop (uvicorn's loop when installed) makes a watched fd non-blocking; a request
        # or reply larger than the pipe's buffer is then sent and read whole only when the
        # fd blocks again, as it does under asyncio's own loop.
        os.set_blocking(fd, True)
        demotion = loop.call_later(
            DEMOTE_AFTER, worker.demote if self.nice == 0 and demote else _nothing
        )
        keep = False
        try:
            worker.conn.send((fn, args, memory_limit))
            try:
                async with asyncio.timeout(time_limit):
                    await ready
            except TimeoutError:
                why = f"{what} ran out of its time limit ({time_limit:g} s)"
                raise UndecidedError(why) from None
            finally:
                loop.remove_reader(fd)
            kind, value = worker.conn.recv()
        except (EOFError, OSError) as e:
            raise BattlejudgeError(f"{what}: its worker process died ({e!r})") from None
        else:
            if kind == "memory":
                limit = "its" if memory_limit is None else f"its {memory_limit >> 20} MiB"
                raise UndecidedError(f"{what} ran out of {limit} memory limit")
            keep = True
            if kind == "error":
                raise value
            result: R = value
            return result
        finally:
            demotion.cancel()
            if keep and not self._closed and not worker.demoted:
                self._idle.append(worker)
            else:
                self._discard(worker, killed=not keep)

    def close(self) -> None:
        """Kill every idle worker and reap it; later calls fail."""
        self._closed = True
        idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()
            worker.reap()


def _nothing() -> None:
    pass


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and (e := task.exception()) is not None:
        log.warning("could not start a replacement worker: %s", e)
