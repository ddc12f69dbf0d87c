"""Online game tables in PostgreSQL (apps/tables/pgstore.py) against a real server the
suite starts (pgserver; conftest.py): the compare-and-set, the order of recent tables,
changes heard across two stores by LISTEN/NOTIFY, a listening connection killed and
replaced, a pooled connection killed and replaced, and one-line errors without the
password. Every wait is on an event or a state of the server, with generous timeouts."""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from battlejudge.apps.tables.pgstore import PgTableStore
from battlejudge.apps.tables.store import TableStoreError
from battlejudge.apps.tables.stores import open_table_store
from battlejudge.solver.errors import InputError

T1, T2, T3 = "table-aaaa1", "table-bbbb2", "table-cccc3"
LONG = 10.0
"""Seconds any wait may take before the test fails (a busy machine is slow, not wrong)."""


@pytest.fixture
def store(pg_url: str) -> Iterator[PgTableStore]:
    with PgTableStore(pg_url) as s:
        yield s


class Heard:
    """A listener that keeps every ``(id, version)`` it is told and lets a test wait for
    one."""

    def __init__(self) -> None:
        self.got: queue.Queue[tuple[str, int]] = queue.Queue()
        self.seen: list[tuple[str, int]] = []

    def __call__(self, table_id: str, version: int) -> None:
        self.got.put((table_id, version))

    def wait_for(self, table_id: str, version: int, timeout: float = LONG) -> None:
        """Returns once ``(table_id, version)`` was heard; fails after ``timeout``."""
        end = time.monotonic() + timeout
        while (table_id, version) not in self.seen:
            left = end - time.monotonic()
            if left <= 0:
                pytest.fail(f"never heard {(table_id, version)}; heard {self.seen}")
            with contextlib.suppress(queue.Empty):
                self.seen.append(self.got.get(timeout=left))


def until(check: Callable[[], bool], what: str) -> None:
    """Wait, polling, until ``check()`` holds (a state of the server); fail after LONG."""
    end = time.monotonic() + LONG
    while not check():
        if time.monotonic() > end:
            pytest.fail(f"never: {what}")
        time.sleep(0.02)


def admin(pg_url: str, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        return conn.execute(sql, args).fetchall()


def backends(pg_url: str, like: str) -> list[int]:
    """The server pids of this database's other connections whose last query is ``like``."""
    rows = admin(
        pg_url,
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
        "AND pid <> pg_backend_pid() AND query LIKE %s",
        (like,),
    )
    return [r[0] for r in rows]


def kill(pg_url: str, pids: list[int]) -> None:
    """Terminate those backends and wait until they are gone."""
    assert pids
    for pid in pids:
        admin(pg_url, "SELECT pg_terminate_backend(%s)", (pid,))
    until(
        lambda: not admin(pg_url, "SELECT 1 FROM pg_stat_activity WHERE pid = ANY(%s)", (pids,)),
        f"backends {pids} exited",
    )


# -- storing -------------------------------------------------------------------------------
def test_create_load_and_compare_and_set(store: PgTableStore) -> None:
    doc = {"seats": ["bot", "human"], "name": "nul \u0000 and ünïcode", "n": 1.5}
    blob = bytes(range(256))
    assert store.load(T1) is None
    store.create(T1, doc, blob)
    got = store.load(T1)
    assert got is not None
    assert (got.id, got.version, got.doc, got.blob) == (T1, 1, doc, blob)
    with pytest.raises(TableStoreError, match="exists already"):
        store.create(T1, {"other": True}, b"")
    assert store.load(T1) == got

    assert store.save(T1, 1, {"step": 2}, b"two")
    assert not store.save(T1, 1, {"stale": True}, b"stale")  # someone came first
    got = store.load(T1)
    assert got is not None and (got.version, got.doc, got.blob) == (2, {"step": 2}, b"two")
    assert store.save(T1, 2, {"step": 3}, b"")
    assert not store.save(T2, 0, {}, b"")  # no such table: nothing written
    assert store.load(T2) is None
    got = store.load(T1)
    assert got is not None and (got.version, got.blob) == (3, b"")


def test_one_winner_among_threads(store: PgTableStore) -> None:
    store.create(T1, {"v": 1}, b"")
    start = threading.Barrier(8)
    wins: list[bool] = []

    def race(i: int) -> None:
        start.wait()
        wins.append(store.save(T1, 1, {"winner": i}, b""))

    threads = [threading.Thread(target=race, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(wins) == [False] * 7 + [True]
    got = store.load(T1)
    assert got is not None and got.version == 2


def test_recent_newest_first(store: PgTableStore) -> None:
    assert store.recent(5) == []
    for table_id in (T1, T2, T3):
        store.create(table_id, {"id": table_id}, b"")
    assert store.recent(5) == [{"id": T3}, {"id": T2}, {"id": T1}]
    assert store.save(T1, 1, {"id": T1, "moved": True}, b"")
    assert store.recent(2) == [{"id": T1, "moved": True}, {"id": T3}]
    assert store.recent(0) == []


def test_table_ids_are_checked(store: PgTableStore) -> None:
    for bad in ("short", "has space in it", "../../etc/passwd", "x" * 33):
        with pytest.raises(InputError, match="no such table"):
            store.load(bad)
        with pytest.raises(InputError):
            store.create(bad, {}, b"")
        with pytest.raises(InputError):
            store.save(bad, 1, {}, b"")
        with pytest.raises(InputError):
            store.watch(bad, Heard())


def test_stores_starting_at_once_make_the_table_once(pg_url: str) -> None:
    start = threading.Barrier(6)
    made: list[PgTableStore] = []
    failed: list[BaseException] = []

    def open_one() -> None:
        start.wait()
        try:
            made.append(PgTableStore(pg_url))
        except BaseException as e:
            failed.append(e)

    threads = [threading.Thread(target=open_one) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failed
    made[0].create(T1, {}, b"")
    assert all(s.load(T1) is not None for s in made)
    for s in made:
        s.close()


def test_open_table_store_takes_a_postgresql_url(pg_url: str) -> None:
    assert pg_url.startswith("postgresql://")
    s = open_table_store(pg_url)
    try:
        assert isinstance(s, PgTableStore)
    finally:
        s.close()


# -- watching ------------------------------------------------------------------------------
def test_a_change_is_heard_by_another_store(pg_url: str) -> None:
    with PgTableStore(pg_url) as one, PgTableStore(pg_url) as two:
        one.create(T1, {}, b"")
        one.create(T2, {}, b"")
        heard, mine = Heard(), Heard()
        two.watch(T1, heard)
        one.watch(T1, mine)
        assert one.save(T1, 1, {}, b"")
        heard.wait_for(T1, 2, timeout=2)
        mine.wait_for(T1, 2)  # a store hears its own changes too
        assert one.save(T2, 1, {}, b"")  # another table: not told to T1's listeners
        assert two.save(T1, 2, {}, b"")
        heard.wait_for(T1, 3, timeout=2)
        mine.wait_for(T1, 3)
        assert all(table_id == T1 for table_id, _ in heard.seen)


def test_stop_watching(pg_url: str) -> None:
    with PgTableStore(pg_url) as one, PgTableStore(pg_url) as two:
        one.create(T1, {}, b"")
        stopped, kept = Heard(), Heard()
        stop = two.watch(T1, stopped)
        two.watch(T1, kept)
        assert one.save(T1, 1, {}, b"")
        stopped.wait_for(T1, 2)
        stop()
        assert one.save(T1, 2, {}, b"")
        kept.wait_for(T1, 3)  # heard by the store: the stopped listener was not called
        assert stopped.got.empty() and stopped.seen == [(T1, 2)]


def test_a_failing_listener_does_not_stop_the_others(store: PgTableStore) -> None:
    store.create(T1, {}, b"")

    def broken(table_id: str, version: int) -> None:
        raise RuntimeError("a bug in a listener")

    store.watch(T1, broken)
    heard = Heard()
    store.watch(T1, heard)
    assert store.save(T1, 1, {}, b"")
    heard.wait_for(T1, 2)
    assert store.save(T1, 2, {}, b"")
    heard.wait_for(T1, 3)


def test_the_listener_connects_again(pg_url: str) -> None:
    with PgTableStore(pg_url) as one, PgTableStore(pg_url) as two:
        one.create(T1, {}, b"")
        heard = Heard()
        two.watch(T1, heard)
        kill(pg_url, backends(pg_url, "LISTEN%"))
        # a change while the listener may still be away: told when it is back
        assert one.save(T1, 1, {}, b"")
        heard.wait_for(T1, 2)
        until(lambda: bool(backends(pg_url, "%battlejudge_tables WHERE id = ANY%")), "listening")
        assert one.save(T1, 2, {}, b"")  # and live again
        heard.wait_for(T1, 3)


def test_a_broken_connection_is_replaced(pg_url: str, store: PgTableStore) -> None:
    store.create(T1, {}, b"")
    kill(pg_url, backends(pg_url, "%"))  # the store's pooled connection
    with pytest.raises(TableStoreError) as failed:
        store.load(T1)
    assert "\n" not in str(failed.value) and str(failed.value).startswith("postgresql://")
    got = store.load(T1)  # the next call connects afresh
    assert got is not None and got.version == 1


def test_close_stops_the_listener(pg_url: str) -> None:
    s = PgTableStore(pg_url)
    s.create(T1, {}, b"")
    s.watch(T1, Heard())
    thread = s._listener
    assert thread is not None and thread.is_alive()
    s.close()
    assert not thread.is_alive()
    with pytest.raises(TableStoreError, match="closed"):
        s.load(T1)


# -- errors ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "url",
    [
        "postgresql://judge:s3cret-pw@127.0.0.1:1/nowhere",  # refused
        "postgresql://judge:s3cret-pw@/no_such_database?host={socket}",  # no database
    ],
)
def test_a_bad_url_is_a_one_line_error_without_the_password(pg_url: str, url: str) -> None:
    url = url.format(socket=pg_url.split("host=")[1])
    with pytest.raises(TableStoreError) as failed:
        PgTableStore(url)
    message = str(failed.value)
    assert "s3cret-pw" not in message and "\n" not in message
    assert message.startswith("postgresql://judge:***@")
    assert failed.value.__cause__ is None and failed.value.__suppress_context__
