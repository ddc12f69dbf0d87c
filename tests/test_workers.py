"""The service's worker pool (apps/workers.py): a reply larger than a pipe's buffer comes back
whole, on the standard event loop and on uvloop (which uvicorn picks when it is installed, and
which leaves a watched pipe non-blocking, so a reply read as soon as its first bytes arrive
would fail half-way)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from battlejudge.apps.workers import WorkerPool

BIG = 1 << 20
"""A reply of 1 MiB: sixteen times a Linux pipe's 64 KiB buffer."""


async def _round_trip() -> bytes:
    pool = WorkerPool(1)
    await pool.start()
    try:
        return await pool.run(bytes, BIG, time_limit=30, memory_limit=None, what="a big reply")
    finally:
        pool.close()


def _loops() -> list[Callable[[Coroutine[Any, Any, Any]], Any]]:
    """asyncio's own loop, and uvloop when it is installed."""
    runners: list[Callable[[Coroutine[Any, Any, Any]], Any]] = [asyncio.run]
    try:
        import uvloop
    except ImportError:
        return runners
    return [*runners, uvloop.run]


@pytest.mark.parametrize("run", _loops(), ids=lambda r: r.__module__)
def test_a_reply_bigger_than_the_pipe_comes_back_whole(
    run: Callable[[Coroutine[Any, Any, Any]], Any],
) -> None:
    assert run(_round_trip()) == bytes(BIG)


async def _big_request() -> int:
    pool = WorkerPool(1)
    await pool.start()
    try:
        return await pool.run(len, bytes(BIG), time_limit=30, memory_limit=None, what="a big job")
    finally:
        pool.close()


@pytest.mark.parametrize("run", _loops(), ids=lambda r: r.__module__)
def test_a_request_bigger_than_the_pipe_is_sent_whole(
    run: Callable[[Coroutine[Any, Any, Any]], Any],
) -> None:
    assert run(_big_request()) == BIG
