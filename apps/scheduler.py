"""The service's fair queue: jobs of many clients shared out over a few worker processes.

Every question the service decides and every certificate it checks is one *job*, run in
a worker process (:mod:`.workers`, killed when its time or memory budget runs out). A
batch is as many jobs as it has questions. The queue decides which job runs next:

- **round robin across clients**: each client with waiting jobs has its own line, and
  the lines take turns, so a client with 500 waiting jobs and a client with one get a
  worker in turn, whatever the order their jobs arrived in;
- **work conserving**: up to ``workers`` jobs run at once, from one client or many;
- **a first job never waits behind another client's**: a client with nothing running
  may start a job on one of ``spare`` more workers even when ``workers`` jobs run, so
  two clients keeping every worker busy with slow checks (a deep verify runs for up to
  the time limit) cannot make a third client's single question wait for them; the
  operating system then shares the cores between the running jobs.

Guarantees: a job starts only when a worker is free for it (so the pool never makes it
wait); a job whose caller stopped waiting (the request was cancelled, the client left)
before it started never runs, and one that has started is cancelled (its worker is
killed).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["FairScheduler"]

T = TypeVar("T")


@dataclass
class _Job:
    client: str
    work: Callable[[bool], Coroutine[Any, Any, Any]]
    future: asyncio.Future[Any]


@dataclass
class _Client:
    waiting: deque[_Job] = field(default_factory=deque)
    running: int = 0


class FairScheduler:
    """Round-robin scheduling of jobs across clients (see the module).

    ``workers`` jobs run at once, plus up to ``spare`` more for clients that have none
    running. Use from one event loop."""

    def __init__(self, workers: int, spare: int) -> None:
        if workers < 1 or spare < 0:
            raise ValueError(f"workers must be >= 1 and spare >= 0, got {workers}, {spare}")
        self.workers = workers
        self.spare = spare
        self._tasks: set[asyncio.Task[Any]] = set()
        self._clients: dict[str, _Client] = {}
        self._turns: deque[str] = deque()
        """Clients with waiting jobs, in the order they get their next turn."""
        self.running = 0

    def waiting(self) -> int:
        """Jobs queued and not started."""
        return sum(len(c.waiting) for c in self._clients.values())

    async def run(self, client: str, work: Callable[[bool], Coroutine[Any, Any, T]]) -> T:
        """Queue ``work`` for ``client``; its result or exception once it has run in
        its turn. ``work`` is called with True when the client already had a job running
        as it started (the caller may run such a job at a lower priority). Cancelling
        the caller drops the job, or cancels it if it started."""
        loop = asyncio.get_running_loop()
        job = _Job(client, work, loop.create_future())
        state = self._clients.setdefault(client, _Client())
        state.waiting.append(job)
        if client not in self._turns:
            self._turns.append(client)
        self._dispatch()
        result: T = await job.future
        return result

    def _may_start(self, state: _Client) -> bool:
        if self.running < self.workers:
            return True
        return state.running == 0 and self.running < self.workers + self.spare

    def _dispatch(self) -> None:
        """Start jobs while a worker is free for them, taking clients in turn."""
        while self._turns:
            name = next((n for n in self._turns if self._may_start(self._clients[n])), None)
            if name is None:
                return
            state = self._clients[name]
            self._turns.remove(name)
            job = None
            while state.waiting:
                candidate = state.waiting.popleft()
                if not candidate.future.done():  # cancelled while it waited: drop it
                    job = candidate
                    break
            if state.waiting:
                self._turns.append(name)  # the back of the line for its next job
            if job is None:
                self._forget(name)
                continue
            self._start(job, state)

    def _start(self, job: _Job, state: _Client) -> None:
        busy = state.running > 0
        state.running += 1
        self.running += 1
        task: asyncio.Task[Any] = job.future.get_loop().create_task(job.work(busy))
        self._tasks.add(task)

        def finished(t: asyncio.Task[Any]) -> None:
            self._tasks.discard(t)
            state.running -= 1
            self.running -= 1
            if not job.future.done():
                if t.cancelled():
                    job.future.cancel()
                elif (e := t.exception()) is not None:
                    job.future.set_exception(e)
                else:
                    job.future.set_result(t.result())
            elif not t.cancelled():
                t.exception()  # the caller left: nobody reads it, and that is fine
            self._forget(job.client)
            self._dispatch()

        def caller_left(f: asyncio.Future[Any]) -> None:
            if f.cancelled() and not task.done():
                task.cancel()

        task.add_done_callback(finished)
        job.future.add_done_callback(caller_left)

    def _forget(self, name: str) -> None:
        state = self._clients.get(name)
        if state is not None and not state.waiting and state.running == 0:
            del self._clients[name]

    def close(self) -> None:
        """Drop the waiting jobs and cancel the running ones."""
        for state in self._clients.values():
            for job in state.waiting:
                job.future.cancel()
            state.waiting.clear()
        self._turns.clear()
        for task in list(self._tasks):
            task.cancel()
