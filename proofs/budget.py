"""Running a check under a time and memory budget that stops it.

A check that runs out of time in a thread keeps its core busy until it ends on its own:
Python cannot stop a thread, and the DRAT checker is pure Python. So a bounded check
runs in a worker process: when the time is up the worker is killed (``SIGKILL``, so the
core is free at once) and a fresh one takes its place for the next check; before each
check the worker's address space is capped (``RLIMIT_AS``) at what it uses now plus the
memory budget, so a check that needs more fails with ``MemoryError`` instead of growing
the machine's memory. Workers are kept and reused (:class:`BudgetPool`): a check costs
a round trip through a pipe, not a process start.

A budget that runs out is :class:`UndecidedError` (no verdict is implied); errors the
check raises come back as they were raised.
"""

from __future__ import annotations

import atexit
import logging
import os
import resource
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeVar

from battlejudge.solver.errors import BattlejudgeError, InputError, UndecidedError

if TYPE_CHECKING:  # multiprocessing is imported when a worker starts, not by every command
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

__all__ = [
    "DEFAULT_MEMORY_LIMIT",
    "DEFAULT_TIME_LIMIT",
    "BudgetPool",
    "default_pool",
    "serve_checks",
]

_logger = logging.getLogger(__name__)

DEFAULT_TIME_LIMIT: Final = 10.0
"""Seconds a check may take (``battlejudge verify --time-limit``). The slowest real
certificate we measured checks in 0.2 s."""
DEFAULT_MEMORY_LIMIT: Final = 512 * 2**20
"""Bytes of address space a check may add to its worker (a real check adds a few MB)."""

R = TypeVar("R")


def _address_space() -> int | None:
    """This process's virtual memory size in bytes (Linux), or None where unknown."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            pages = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


def _serve(conn: Connection) -> None:
    """A worker's life: run each ``(function, args, memory_limit)`` received and send back
    ``("ok", result)``, ``("error", exception)`` or ``("memory", None)``; end when the
    parent closes the pipe (or dies)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    while True:
        try:
            fn, args, memory_limit = conn.recv()
        except (EOFError, OSError):
            return
        used = _address_space()
        if memory_limit is not None and used is not None:
            cap = used + memory_limit
            if soft != resource.RLIM_INFINITY:
                cap = min(cap, soft)
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
        try:
            reply: tuple[str, Any] = ("ok", fn(*args))
        except MemoryError:
            reply = ("memory", None)
        except BaseException as e:  # the caller decides what an error means
            reply = ("error", e)
        finally:
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        try:
            conn.send(reply)
        except Exception as e:  # a result or an exception that does not pickle
            conn.send(("error", BattlejudgeError(f"the check's answer cannot be sent back: {e}")))
        if reply[0] == "memory":
            return  # a worker that ran out of memory is not trusted with another check


def serve_checks(conn: Connection) -> None:
    """The life of a worker process as :class:`BudgetPool` runs them, for a pool that
    waits for the replies its own way (the HTTP service waits on its event loop): each
    ``(function, args, memory_limit)`` received is run under that memory cap and
    answered with ``("ok", result)``, ``("error", exception)`` or ``("memory", None)``."""
    _serve(conn)


@dataclass
class _Worker:
    process: BaseProcess
    conn: Connection

    def kill(self) -> None:
        """Stop the worker now (SIGKILL) and reap it."""
        self.conn.close()
        if self.process.is_alive():
            self.process.kill()
        self.process.join()


class BudgetPool:
    """Up to ``workers`` worker processes that run checks under a time and memory budget.

    Workers start on first use and are reused; a worker whose check ran out of time or
    memory is killed and replaced on the next call. Safe to share between threads: at
    most ``workers`` checks run at once, the others wait for a free worker (the wait
    does not count towards their time limit).

    ``start_method`` is a :mod:`multiprocessing` start method; by default ``fork`` when
    the calling process runs one thread (a command: fast, nothing to import again) and
    ``forkserver`` otherwise (forking a process that runs threads can deadlock).
    """

    def __init__(self, workers: int = 1, *, start_method: str | None = None) -> None:
        if workers < 1:
            raise InputError(f"a budget pool needs at least 1 worker, got {workers}")
        self.workers = workers
        self._start_method = start_method
        self._slots = threading.BoundedSemaphore(workers)
        self._mutex = threading.Lock()
        self._idle: list[_Worker] = []
        self._closed = False

    def _context(self) -> Any:
        method = self._start_method
        if method is None:
            method = "fork" if threading.active_count() == 1 else "forkserver"
        import multiprocessing

        ctx = multiprocessing.get_context(method)
        if method == "forkserver":
            from battlejudge.proofs.kinds import kind_modules

            ctx.set_forkserver_preload(kind_modules())
        return ctx

    def _take(self) -> _Worker:
        with self._mutex:
            if self._closed:
                raise BattlejudgeError("the budget pool is closed")
            while self._idle:
                worker = self._idle.pop()
                if worker.process.is_alive():
                    return worker
                worker.kill()
        ctx = self._context()
        parent, child = ctx.Pipe()
        process = ctx.Process(target=_serve, args=(child,), daemon=True, name="battlejudge-check")
        process.start()
        child.close()
        return _Worker(process, parent)

    def _give_back(self, worker: _Worker) -> None:
        with self._mutex:
            if self._closed:
                worker.kill()
            else:
                self._idle.append(worker)

    def run(
        self,
        fn: Callable[..., R],
        *args: Any,
        time_limit: float,
        memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
        what: str = "the check",
    ) -> R:
        """``fn(*args)`` in a worker, within ``time_limit`` seconds and ``memory_limit``
        bytes more than the worker uses before it (None: no memory limit).

        ``fn`` and ``args`` must pickle (a module-level function). Returns what ``fn``
        returns or raises what it raises; raises :class:`UndecidedError` naming ``what``
        when the time or the memory runs out (the worker is then killed: its core is
        free when this returns).
        """
        if not time_limit > 0:
            raise InputError(f"a time limit must be more than 0 seconds, got {time_limit}")
        with self._slots:
            worker = self._take()
            keep = False
            try:
                start = time.monotonic()
                worker.conn.send((fn, args, memory_limit))
                if not worker.conn.poll(max(0.0, time_limit - (time.monotonic() - start))):
                    raise UndecidedError(f"{what} ran out of its time limit ({time_limit:g} s)")
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
                if keep:
                    self._give_back(worker)
                else:
                    worker.kill()

    def close(self) -> None:
        """Stop every idle worker; calls after this fail (running checks finish)."""
        with self._mutex:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()

    def __enter__(self) -> BudgetPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_DEFAULT: BudgetPool | None = None
_DEFAULT_LOCK = threading.Lock()


def default_pool() -> BudgetPool:
    """The process-wide pool (one worker per core), made on first use and closed at exit."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None or _DEFAULT._closed:
            _DEFAULT = BudgetPool(os.cpu_count() or 1)
            atexit.register(_DEFAULT.close)
        return _DEFAULT
