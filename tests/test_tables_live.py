"""Online tables (issue 36) on real ``battlejudge serve`` processes: a seat's event stream
hears the other seat's action; two services on one tables directory (and, with the
PostgreSQL store, on one database) tell each other's watchers of every change; a service
killed with SIGKILL mid-game and started again on the same directory loses nothing (the
table continues exactly, a bot whose turn it was moves); and with ``--log`` every claim is
in the proof log, which ``battlejudge audit`` accepts. Every wait is on the service's state
or an event, with a generous timeout."""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_tables_api import SEATS, Chooser, other, sse

from battlejudge.apps.tables.store import DirTableStore
from battlejudge.proofs.log import read_log

MAIN = [sys.executable, "-c", "from battlejudge.cli.main import main; main()"]
LONG = 30.0
"""Seconds any wait may take before the test fails (a busy machine is slow, not wrong)."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Service:
    """``battlejudge serve --tables WHERE --workers 1`` on a free port (its stderr kept in
    ``log_dir``), started and waited for (``/healthz``)."""

    def __init__(self, tables: str, log_dir: Path, *extra: str) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.stderr_path = log_dir / f"serve-{self.port}.err"
        cmd = [
            *MAIN,
            "serve",
            "--port",
            str(self.port),
            "--tables",
            tables,
            "--workers",
            "1",
            "--time-limit",
            "60",  # work is bounded by the tests, not the clock: a busy machine is slow
            *extra,
        ]
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        self.http = httpx.Client(base_url=self.url, timeout=LONG)
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                pytest.fail(f"serve exited {self.proc.returncode}: {self.stderr()}")
            try:
                if self.http.get("/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"serve did not start: {self.stderr()}"
            time.sleep(0.1)

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")[-2000:]

    def stop(self) -> None:
        """Stop it as an operator does (SIGINT), or kill it when it does not stop."""
        self.http.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def kill9(self) -> None:
        """``kill -9``: nothing of the process runs after this."""
        self.http.close()
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


class LiveTable:
    """A table seen through one service (its id and the seats' tokens)."""

    def __init__(self, svc: Service, table_id: str, tokens: dict[str, str | None]) -> None:
        self.svc, self.id, self.tokens = svc, table_id, tokens

    @classmethod
    def create(cls, svc: Service, body: dict[str, Any]) -> LiveTable:
        r = svc.http.post("/v1/tables", json=body)
        assert r.status_code == 201, r.text
        made = r.json()
        return cls(svc, made["table"], {s: made["seats"][s]["token"] for s in SEATS})

    def on(self, svc: Service) -> LiveTable:
        """The same table through another service."""
        return LiveTable(svc, self.id, self.tokens)

    def headers(self, seat: str | None) -> dict[str, str]:
        token = None if seat is None else self.tokens[seat]
        return {} if token is None else {"X-Seat-Token": token}

    def view(self, seat: str | None = None) -> dict[str, Any]:
        r = self.svc.http.get(f"/v1/tables/{self.id}", headers=self.headers(seat))
        assert r.status_code == 200, r.text
        got: dict[str, Any] = r.json()
        return got

    def act(self, seat: str, action: str) -> httpx.Response:
        return self.svc.http.post(
            f"/v1/tables/{self.id}/actions", json={"action": action}, headers=self.headers(seat)
        )

    def play(self, chooser: Chooser, actions: int | None) -> dict[str, Any]:
        """Both (human) seats play ``actions`` actions by ``chooser`` (None: to the end);
        the spectator's view after."""
        done = 0
        while actions is None or done < actions:
            spectator = self.view()
            if spectator["result"] is not None:
                return spectator
            view = self.view(spectator["to_move"])
            r = self.act(view["seat"], chooser(view))
            assert r.status_code in (200, 422), r.text
            done += 1
            assert done < 1000, "the game did not end"
        return self.view()


class Stream:
    """A viewer's event stream on one service, read in a thread: every event's data."""

    def __init__(self, t: LiveTable, seat: str | None) -> None:
        self.events: queue.Queue[tuple[int, dict[str, Any]]] = queue.Queue()
        self.seen: list[tuple[int, dict[str, Any]]] = []
        self.client = httpx.Client(timeout=httpx.Timeout(LONG * 2))
        url = f"{t.svc.url}/v1/tables/{t.id}/events"
        self.thread = threading.Thread(target=self._run, args=(url, t.headers(seat)), daemon=True)
        self.thread.start()

    def _run(self, url: str, headers: dict[str, str]) -> None:
        try:
            with self.client.stream("GET", url, headers=headers) as r:
                assert r.status_code == 200
                for event in sse(r.iter_lines()):
                    self.events.put(event)
        except (httpx.HTTPError, RuntimeError):
            pass  # closed by close(), or the service stopped

    def wait(self, check: Callable[[int, dict[str, Any]], bool], what: str) -> dict[str, Any]:
        """The data of the first event (heard so far or later) for which ``check(id,
        data)`` holds; fails after :data:`LONG` seconds."""
        end = time.monotonic() + LONG
        for event_id, data in self.seen:
            if check(event_id, data):
                return data
        while True:
            left = end - time.monotonic()
            if left <= 0:
                pytest.fail(f"never heard: {what}; heard versions {[e for e, _ in self.seen]}")
            try:
                event = self.events.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append(event)
            if check(*event):
                return event[1]

    def close(self) -> None:
        self.client.close()


def at(version: int) -> Callable[[int, dict[str, Any]], bool]:
    """Whether an event is of ``version`` (:meth:`Stream.wait`)."""
    return lambda event_id, data: event_id == version


@pytest.fixture
def streams() -> Iterator[list[Stream]]:
    """The streams a test opens (closed after it)."""
    opened: list[Stream] = []
    yield opened
    for s in opened:
        s.close()


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, Service]]:
    """Two services (standing in for two machines) on one tables directory."""
    folder = tmp_path_factory.mktemp("pair")
    first = Service(str(folder / "tables"), folder)
    try:
        second = Service(str(folder / "tables"), folder)
    except BaseException:
        first.stop()
        raise
    yield first, second
    first.stop()
    second.stop()


# -- events ---------------------------------------------------------------------------------------
def test_a_seats_stream_hears_the_other_seats_action(
    pair: tuple[Service, Service], streams: list[Stream]
) -> None:
    svc = pair[0]
    t = LiveTable.create(svc, {"seed": 31})
    mover = t.view()["to_move"]
    waiting = other(mover)
    stream = Stream(t, waiting)
    streams.append(stream)
    first = stream.wait(at(1), "the view now")
    assert first == t.view(waiting)
    assert first["legal"] == [] and first["hand"] == t.view(waiting)["hand"]

    play = t.view(mover)["legal"][0]
    assert t.act(mover, play).status_code == 200
    got = stream.wait(at(2), "the other seat's action")
    assert got == t.view(waiting)
    assert got["seat"] == waiting and got["version"] == 2
    assert got["last"][-1] == {"turn": 1, "seat": mover, "action": play}


def _across(a: Service, b: Service, streams: list[Stream], seed: int) -> None:
    """An action posted to ``a`` reaches the watchers connected to ``b``, and one posted
    to ``b`` those connected to ``a``."""
    t = LiveTable.create(a, {"seed": seed})
    tb = t.on(b)
    mover = t.view()["to_move"]
    waiting = other(mover)
    on_b = {v: Stream(tb, v) for v in (waiting, None)}
    on_a = Stream(t, mover)
    streams.extend([*on_b.values(), on_a])
    for s in (*on_b.values(), on_a):
        s.wait(at(1), "the view now")

    # the mover's turn (a play, then a draw...) posted to a, each change heard on b
    version = 1
    while (view := t.view(mover))["to_move"] == mover:
        action = view["legal"][0]
        assert t.act(mover, action).status_code == 200  # posted to a
        version += 1
        for v, s in on_b.items():
            got = s.wait(at(version), f"a's change on b ({v or 'spectator'})")
            assert got == tb.view(v)
            assert got["last"][-1]["seat"] == mover and got["last"][-1]["action"] == action
    assert on_b[waiting].seen[-1][1]["legal"]  # now the waiting seat's turn, on b too

    view = tb.view(waiting)
    answer = view["legal"][0]
    assert tb.act(waiting, answer).status_code == 200  # posted to b
    got = on_a.wait(at(version + 1), "b's change on a")
    assert got == t.view(mover) and got["last"][-1] == {
        "turn": view["turn"],
        "seat": waiting,
        "action": answer,
    }


def test_two_services_on_one_directory_tell_each_others_watchers(
    pair: tuple[Service, Service], streams: list[Stream]
) -> None:
    _across(pair[0], pair[1], streams, seed=32)


def test_two_services_on_one_postgresql_tell_each_others_watchers(
    pg_url: str, tmp_path: Path, streams: list[Stream]
) -> None:
    a = Service(pg_url, tmp_path)
    try:
        b = Service(pg_url, tmp_path)
        try:
            _across(a, b, streams, seed=33)
        finally:
            b.stop()
    finally:
        a.stop()


# -- durability -----------------------------------------------------------------------------------
def _stored(folder: Path, table_id: str) -> tuple[int, dict[str, Any]]:
    """The table's version and document as the directory store holds them."""
    store = DirTableStore(folder)
    try:
        found = store.load(table_id)
    finally:
        store.close()
    assert found is not None
    return found.version, found.doc


def test_kill_9_mid_game_and_a_restart_lose_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "tables"
    log = tmp_path / "claims.log"
    a = Service(str(folder), tmp_path, "--log", str(log))
    try:
        people = LiveTable.create(a, {"seed": 41})
        chooser = Chooser(41)
        people.play(chooser, 30)
        before = {v: people.view(v) for v in (None, *SEATS)}
        assert before[None]["result"] is None
        # a searching bot thinks about a second per decision: the kill comes while it does
        bot = LiveTable.create(a, {"north": "bot:search", "south": "human", "seed": 42})
        start = bot.view("south")
        if start["to_move"] == "south":
            r = bot.act("south", start["legal"][0])
            assert r.status_code == 200, r.text
            start = r.json()
        assert start["to_move"] == "north"
    finally:
        a.kill9()
    version, doc = _stored(folder, bot.id)
    assert version == start["version"] and doc["bot_to_move"] is True, "the bot moved first"

    b = Service(str(folder), tmp_path, "--log", str(log))
    try:
        people = people.on(b)
        after = {v: people.view(v) for v in (None, *SEATS)}
        assert after == before  # the same version, hands, legal actions, claims, last
        final = people.play(chooser, None)
        assert final["result"] is not None
        record = b.http.get(f"/v1/tables/{people.id}/record")
        assert record.status_code == 200
        _replay_is_sound(tmp_path, record.text, final["result"]["winner"])

        # the bot, whose turn it was when its service died, moves once a service sees it
        bot = bot.on(b)
        end = time.monotonic() + LONG * 2
        while True:
            view = bot.view("south")
            if view["version"] > version and view["to_move"] in ("south", None):
                break
            assert time.monotonic() < end, "the bot never moved after the restart"
            time.sleep(0.05)

        def bots(v: dict[str, Any]) -> int:
            return sum(x["seat"] == "north" for x in v["last"])

        assert bots(view) > bots(start)  # its moves, made after the restart
        claims = final["claims"]
    finally:
        b.stop()
    _log_holds(log, people.id, claims)
    _audit(log)


def _replay_is_sound(tmp_path: Path, record: str, winner: str) -> None:
    path = tmp_path / "game.blg"
    path.write_text(record, encoding="utf-8")
    r = subprocess.run(
        [*MAIN, "replay", str(path), "--json"], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stdout + r.stderr
    judged = json.loads(r.stdout)
    assert judged["sound"] is True and judged["result"] == winner


# -- the proof log --------------------------------------------------------------------------------
def _log_holds(log: Path, table_id: str, claims: list[dict[str, Any]]) -> None:
    """Every claim of the table (accepted or refused) is the log's record ``log_seq``,
    with the table's id as its game, its turn, player, flag and verdict."""
    records, problems = read_log(log)
    assert problems == []
    by_seq = {r.seq: r.data for r in records}
    for claim in claims:
        record = by_seq[claim["log_seq"]]
        assert (record["game"], record["turn"], record["player"], record["flag"]) == (
            table_id,
            claim["turn"],
            claim["player"],
            claim["flag"],
        )
        assert record["verdict"] == claim["verdict"]
    logged = [r for r in records if r.data["game"] == table_id]
    assert sorted(r.seq for r in logged) == sorted(c["log_seq"] for c in claims)


def _audit(log: Path, *extra: str) -> None:
    r = subprocess.run(
        [*MAIN, "audit", str(log), *extra], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_claim_is_in_the_proof_log(tmp_path: Path) -> None:
    log = tmp_path / "claims.log"
    svc = Service(str(tmp_path / "tables"), tmp_path, "--log", str(log))
    try:
        t = LiveTable.create(svc, {"seed": 5, "options": {"deck": "troops"}})
        final = t.play(Chooser(5), None)
        claims = final["claims"]
        assert any(c["accepted"] for c in claims) and any(not c["accepted"] for c in claims)
        record = svc.http.get(f"/v1/tables/{t.id}/record").text
    finally:
        svc.stop()
    _log_holds(log, t.id, claims)
    _audit(log)
    games = tmp_path / "games"
    games.mkdir()
    (games / f"{t.id}.blg").write_text(record, encoding="utf-8")
    _audit(log, "--games", str(games))
