"""The online tables' HTTP API (issue 36; apps/tables, apps/routes/tables.py) in process,
through FastAPI's TestClient: making tables (and every bad body refused naming its field),
each viewer's view, actions (200, 409, 422 naming why, a refused claim with its witness, an
accepted one with its blocking cards and a certificate that verifies), a play that closes
an open claim window by itself, resigning, the record (409, then a record ``battlejudge
replay`` judges sound), the lobby, a clock that runs out, and a bot that answers by itself.

And hidden cards, over whole seeded games: at every step, everything each seat and a
spectator may fetch (views, the lobby, the record before the end, the latest event of each
watcher's stream, refused claims' answers, certificates) names no card the viewer may not
know (:class:`Knowledge`). Every wait is on the service's state, with a generous timeout."""

from __future__ import annotations

import json
import os
import random
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from battlejudge.apps.service import ServiceConfig, create_app
from battlejudge.apps.tables.store import TABLE_ID
from battlejudge.cli.main import cli
from battlejudge.engines.battleline.cards import ALL_CARDS, card_name
from battlejudge.proofs.battleline.certificate import CertificateFile, from_file_model
from battlejudge.proofs.log import read_log
from battlejudge.solver import battleline as bl

SEATS = ("north", "south")
LONG = 30.0
"""Seconds any wait on the service may take before the test fails (slow is not wrong)."""
CARDS = frozenset(card_name(c) for c in ALL_CARDS)
"""Every card's notation (troops R1..P10 and the ten tactics' names)."""
NOT_CARDS = frozenset(
    {"table", "certificate_url", "url", "spectate", "token", "phase"}
    | {"cnf", "proof", "question_sha256", "solver"}
)
"""Keys whose string values are not about cards: random ids and tokens (which may hold a
run of letters and digits that looks like a card, such as ``R3``), the turn's step
(``scout-draw`` names the step, not the card), and a certificate's packed formula and proof
and its hashes (base64 and hex; the formula is made from the question, checked apart)."""


def other(seat: str) -> str:
    return SEATS[1 - SEATS.index(seat)]


# -- the service -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Path]]:
    """One service (its own tables directory and proof log) for the module's tests: every
    test makes its own tables."""
    folder = tmp_path_factory.mktemp("tables")
    log = folder / "claims.log"
    config = ServiceConfig(tables=str(folder / "tables"), log_path=str(log))
    with TestClient(create_app(config)) as c:
        yield c, log


@pytest.fixture
def client(service: tuple[TestClient, Path]) -> TestClient:
    return service[0]


class Table:
    """A table made through the API, with each human seat's token."""

    def __init__(self, client: TestClient, body: dict[str, Any]) -> None:
        r = client.post("/v1/tables", json=body)
        assert r.status_code == 201, r.text
        self.made = r.json()
        self.c = client
        self.id: str = self.made["table"]
        self.tokens: dict[str, str | None] = {s: self.made["seats"][s]["token"] for s in SEATS}

    def path(self, rest: str = "") -> str:
        return f"/v1/tables/{self.id}{rest}"

    def headers(self, seat: str | None) -> dict[str, str]:
        token = None if seat is None else self.tokens[seat]
        return {} if token is None else {"X-Seat-Token": token}

    def view(self, seat: str | None = None) -> dict[str, Any]:
        r = self.c.get(self.path(), headers=self.headers(seat))
        assert r.status_code == 200, r.text
        got: dict[str, Any] = r.json()
        return got

    def act(self, seat: str, action: str) -> Any:
        return self.c.post(
            self.path("/actions"), json={"action": action}, headers=self.headers(seat)
        )

    def resign(self, seat: str) -> Any:
        # every POST of the JSON API says its body is JSON (apps/browsers.py), even one
        # the route does not read
        return self.c.post(self.path("/resign"), json={}, headers=self.headers(seat))

    def mover(self) -> dict[str, Any]:
        """The view of the seat to move (a human's)."""
        seat = self.view()["to_move"]
        assert seat in SEATS and self.tokens[seat] is not None
        return self.view(seat)


class Chooser:
    """A seeded player for both seats: takes a claim the engine offers (one it will
    accept), sometimes tries one it does not offer (refused, with a witness) once per flag
    and turn, otherwise picks a random legal action. The scout: as soon as it may when
    told (``scout``), else never (so that the games the tests' seeds give stay put);
    ``chosen`` keeps every action it chose."""

    def __init__(self, seed: int, scout: bool = False) -> None:
        self.rng = random.Random(seed)
        self.tried: set[tuple[int, str, int]] = set()
        self.scout = scout
        self.chosen: list[str] = []

    def __call__(self, view: dict[str, Any]) -> str:
        action = self._choose(view)
        self.chosen.append(action)
        return action

    def _choose(self, view: dict[str, Any]) -> str:
        legal: list[str] = view["legal"]
        assert legal, f"{view['seat']} is to move with no legal action"
        offered = [a for a in legal if a.startswith("claim ")]
        untried = [
            f
            for f in view["may_claim"]
            if f"claim {f}" not in offered and (view["turn"], view["seat"], f) not in self.tried
        ]
        if offered and self.rng.random() < 0.8:
            return self.rng.choice(offered)
        if untried and self.rng.random() < 0.5:
            flag = self.rng.choice(untried)
            self.tried.add((view["turn"], view["seat"], flag))
            return f"claim {flag}"
        if self.scout and "scout" in legal:
            return "scout"
        plays = [a for a in legal if not a.startswith("claim ") and a != "scout"]
        return self.rng.choice(plays or [a for a in legal if a != "scout"] or legal)


def one_line_error(r: Any, status: int) -> str:
    """The response's one-line error, after checking its status and shape."""
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"}, body
    assert isinstance(body["error"], str) and "\n" not in body["error"]
    return str(body["error"])


def replay(tmp_path: Path, record: str) -> dict[str, Any]:
    path = tmp_path / "table.blg"
    path.write_text(record, encoding="utf-8")
    r = CliRunner().invoke(cli, ["replay", str(path), "--json"])
    got: dict[str, Any] = json.loads(r.stdout)
    assert r.exit_code == 0, r.output
    return got


def until(check: Any, what: str, timeout: float = LONG) -> Any:
    """Poll ``check()`` until it returns something true; fail after ``timeout``."""
    end = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > end:
            pytest.fail(f"never: {what}")
        time.sleep(0.02)


# -- making tables ------------------------------------------------------------------------------
def test_a_new_table_answers_201_with_its_seats_and_spectators_url(client: TestClient) -> None:
    r = client.post("/v1/tables", json={"north": "human", "south": "bot:heuristic", "seed": 7})
    assert r.status_code == 201, r.text
    made = r.json()
    assert set(made) == {"table", "seats", "spectate"}
    table = made["table"]
    assert TABLE_ID.match(table)
    north, south = made["seats"]["north"], made["seats"]["south"]
    assert set(north) == set(south) == {"kind", "token", "url"}
    assert north["kind"] == "human" and isinstance(north["token"], str) and north["token"]
    assert north["url"].endswith(f"/tables/{table}?token={north['token']}")
    assert south == {"kind": "bot:heuristic", "token": None, "url": None}
    assert made["spectate"].endswith(f"/tables/{table}") and "token" not in made["spectate"]

    both = client.post("/v1/tables", json={"seed": 7}).json()  # both seats human by default
    tokens = [both["seats"][s]["token"] for s in SEATS]
    assert all(tokens) and len(set(tokens)) == 2
    assert both["table"] != table


@pytest.mark.parametrize(
    ("body", "names"),
    [
        ({"colour": "red"}, "colour"),
        ({"north": "robot"}, "north"),
        ({"south": "bot:nobody"}, "south"),
        ({"south": 3}, "south"),
        ({"game": "chess"}, "game"),
        ({"options": {"nosuch": "x"}}, "nosuch"),
        ({"options": {"deck": "tiny"}}, "deck"),
        ({"options": {"claim_timing": 5}}, "claim_timing"),
        ({"options": ["deck"]}, "options"),
        ({"clock": {"minutes": 0}}, "minutes"),
        ({"clock": {"minutes": -1}}, "minutes"),
        ({"clock": {"minutes": "5"}}, "minutes"),
        ({"clock": {"minutes": 1, "increment": 10_000}}, "increment"),
        ({"clock": {"hours": 1}}, "clock"),
        ({"clock": 5}, "clock"),
        ({"seed": -1}, "seed"),
        ({"seed": "x"}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"seed": True}, "seed"),
        ([1, 2], "body"),
    ],
)
def test_a_bad_body_is_422_naming_the_field(client: TestClient, body: Any, names: str) -> None:
    before = len(client.get("/v1/tables").json()["tables"])
    error = one_line_error(client.post("/v1/tables", json=body), 422)
    assert names in error
    assert len(client.get("/v1/tables").json()["tables"]) == before  # nothing made


def test_a_body_that_is_not_json_is_400(client: TestClient) -> None:
    for raw in (b"{not json", b""):
        r = client.post("/v1/tables", content=raw, headers={"Content-Type": "application/json"})
        assert "JSON" in one_line_error(r, 400)


# -- views ----------------------------------------------------------------------------------------
def test_each_viewer_sees_its_own_view(client: TestClient) -> None:
    t = Table(client, {"seed": 11})
    north, south, spectator = t.view("north"), t.view("south"), t.view()
    mover = north["to_move"]
    assert mover in SEATS and south["to_move"] == spectator["to_move"] == mover
    for seat, v in (("north", north), ("south", south)):
        assert v["table"] == t.id and v["version"] == 1 and v["seat"] == seat
        assert len(v["hand"]) == 7 and set(v["hand"]) <= CARDS
        assert v["hand_sizes"] == {"north": 7, "south": 7}
        assert v["result"] is None and v["claims"] == [] and v["last"] == []
        assert len(v["flags"]) == 9 and all(f["claimed_by"] is None for f in v["flags"])
        assert v["decks"] == {"troop": 46, "tactics": 10}
        if seat == mover:
            hand = set(v["hand"])
            assert v["legal"] and all(a.split("@")[0] in hand for a in v["legal"])
        else:
            assert v["legal"] == [] and v["may_claim"] == []
    assert not set(north["hand"]) & set(south["hand"])
    assert spectator["seat"] is None and spectator["hand"] is None and spectator["legal"] == []
    # the same view by the token as a parameter
    by_query = client.get(t.path(), params={"token": t.tokens["south"]}).json()
    assert by_query == south

    north_token = t.tokens["north"]
    assert north_token is not None
    for token in ("wrong", north_token + "x"):
        for path in ("", "/events"):
            r = client.get(t.path(path), headers={"X-Seat-Token": token})
            assert "token" in one_line_error(r, 403)
        r = client.get(t.path(), params={"token": token})
        one_line_error(r, 403)
    other_table = Table(client, {"seed": 11})  # a token opens its own table only
    r = client.get(other_table.path(), headers={"X-Seat-Token": north_token})
    one_line_error(r, 403)


@pytest.mark.parametrize("path", ["", "/events", "/record", "/claims/1/certificate"])
@pytest.mark.parametrize("table_id", ["Abcdefgh1234", "x", "a" * 40, "bad!table", "abc.defghijk"])
def test_unknown_and_malformed_table_ids_are_404(
    client: TestClient, table_id: str, path: str
) -> None:
    r = client.get(f"/v1/tables/{table_id}{path}")
    assert "no such table" in one_line_error(r, 404)
    r = client.post(f"/v1/tables/{table_id}/actions", json={"action": "R1@1"})
    assert r.status_code in (401, 404)  # no token: 401 before the table is looked at


# -- actions --------------------------------------------------------------------------------------
def test_actions_200_409_422(client: TestClient) -> None:
    t = Table(client, {"seed": 12})
    mover = t.view()["to_move"]
    waiting = other(mover)
    mine, theirs = t.view(mover), t.view(waiting)

    # not your turn: 409, and nothing changes
    play = mine["legal"][0]
    assert "not your turn" in one_line_error(t.act(waiting, play), 409)
    # no token: 401; a wrong one: 403
    r = client.post(t.path("/actions"), json={"action": play})
    one_line_error(r, 401)
    r = client.post(t.path("/actions"), json={"action": play}, headers={"X-Seat-Token": "x"})
    one_line_error(r, 403)
    # illegal actions: 422 naming why
    card = theirs["hand"][0]
    assert f"{card} is not in {mover}'s hand" in one_line_error(t.act(mover, f"{card}@1"), 422)
    assert "not a flag" in one_line_error(t.act(mover, f"{mine['hand'][0]}@10"), 422)
    assert "unknown card" in one_line_error(t.act(mover, "fly away"), 422)
    assert "not at this step" in one_line_error(t.act(mover, "draw troop"), 422)
    assert "complete formation" in one_line_error(t.act(mover, "claim 1"), 422)
    for body in ({"action": 5}, {"action": ""}, {"act": play}, {"action": play, "more": 1}):
        r = client.post(t.path("/actions"), json=body, headers=t.headers(mover))
        assert "action" in one_line_error(r, 422)
    assert t.view(mover) == mine and t.view(waiting) == theirs  # nothing was played

    r = t.act(mover, play)
    assert r.status_code == 200, r.text
    after = r.json()
    assert after == t.view(mover)
    assert after["version"] == 2 and after["seat"] == mover
    assert after["last"] == [{"turn": 1, "seat": mover, "action": play}]
    card, flag = play.split("@")
    assert card not in after["hand"]
    assert after["flags"][int(flag) - 1][mover] == [card]
    assert t.view()["flags"] == after["flags"]


def _play_until(t: Table, chooser: Chooser, stop: Any, limit: int = 400) -> Any:
    """Both seats play by ``chooser`` until ``stop(view, action, response)`` returns
    something true (returned); fails when the game ends or ``limit`` actions pass first."""
    for _ in range(limit):
        view = t.mover()
        action = chooser(view)
        r = t.act(view["seat"], action)
        assert r.status_code in (200, 422), r.text
        found = stop(view, action, r)
        if found:
            return found
        assert t.view()["result"] is None, "the game ended first"
    pytest.fail("not found within the limit")


def test_claims_refused_and_accepted_with_their_evidence_and_certificates(
    service: tuple[TestClient, Path], tmp_path: Path
) -> None:
    client, log = service
    t = Table(client, {"seed": 4, "options": {"deck": "troops"}})
    chooser = Chooser(4)

    def refused(view: dict[str, Any], action: str, r: Any) -> Any:
        if action.startswith("claim ") and action not in view["legal"]:
            assert r.status_code == 422, r.text  # a claim the engine does not offer
            return r.json()
        return None

    body = _play_until(t, chooser, refused)
    flag = int(body["claim"]["flag"])
    seat = body["view"]["seat"]
    assert set(body) == {"error", "claim", "view"}
    assert f"cannot claim flag {flag}" in body["error"]
    claim = body["claim"]
    assert claim["accepted"] is False and claim["verdict"] == "invalid"
    assert claim["player"] == seat and claim["verified"] is True
    assert claim["witness"]["added"] or claim["theirs"]["complete"]
    assert claim["blocking"] == []
    assert body["view"] == t.view(seat)  # the table did not move on, the claim is shown
    assert body["view"]["claims"][-1] == claim
    assert body["view"]["last"][-1] == {
        "turn": claim["turn"],
        "seat": seat,
        "action": f"claim {flag}",
        "refused": True,
    }
    assert body["view"]["flags"][flag - 1]["claimed_by"] is None
    check_logged(log, t.id, claim)
    check_certificate(client, t, len(body["view"]["claims"]), claim, tmp_path)

    def accepted(view: dict[str, Any], action: str, r: Any) -> Any:
        if action.startswith("claim ") and action in view["legal"]:
            assert r.status_code == 200, r.text  # a claim the engine offers holds
            got = r.json()
            if got["claims"][-1]["blocking"]:
                return got
        return None

    view = _play_until(t, chooser, accepted)
    claim = view["claims"][-1]
    flag = claim["flag"]
    assert claim["accepted"] is True and claim["verdict"] == "valid" and claim["verified"]
    assert claim["player"] == view["seat"] and claim["witness"] is None
    assert view["flags"][flag - 1]["claimed_by"] == view["seat"]
    # the blocking cards are face up (on the flags or discarded), and named in the question
    face_up = {c for f in view["flags"] for k in ("north", "south", "environment") for c in f[k]}
    face_up |= {c for seat in SEATS for c in view["discards"][seat]}
    assert set(claim["blocking"]) <= face_up & set(claim["question"]["seen"])
    check_logged(log, t.id, claim)
    check_certificate(client, t, len(view["claims"]), claim, tmp_path)
    # a spectator sees the same claims, and may download their certificates too
    assert t.view()["claims"] == view["claims"]
    one_line_error(client.get(t.path(f"/claims/{len(view['claims']) + 1}/certificate")), 404)
    one_line_error(client.get(t.path("/claims/0/certificate")), 404)


def check_logged(log: Path, table_id: str, claim: dict[str, Any]) -> None:
    """The claim is the proof log's record ``log_seq``, with the table, turn, player, flag."""
    seq = claim["log_seq"]
    assert isinstance(seq, int), claim
    records, problems = read_log(log)
    assert problems == []
    record = next(r for r in records if r.seq == seq)
    assert {k: record.data[k] for k in ("game", "turn", "player", "flag", "verdict")} == {
        "game": table_id,
        "turn": claim["turn"],
        "player": claim["player"],
        "flag": claim["flag"],
        "verdict": claim["verdict"],
    }


def check_certificate(
    client: TestClient, t: Table, number: int, claim: dict[str, Any], tmp_path: Path
) -> None:
    """Claim ``number``'s certificate: its question and verdict are the claim's, it passes
    the solver's checker and ``battlejudge verify``."""
    r = client.get(t.path(f"/claims/{number}/certificate"))
    assert r.status_code == 200 and r.headers["content-type"] == "application/json", r.text
    cert = r.json()
    assert cert["verdict"] == claim["verdict"]
    assert cert["blocking"] == claim["blocking"]
    assert bl.ClaimQuestion.from_json(cert["question"]) == bl.ClaimQuestion.from_json(
        claim["question"]
    )
    assert bl.verify(from_file_model(CertificateFile.model_validate(cert))) is True
    path = tmp_path / f"claim-{number}.json"
    path.write_bytes(r.content)
    run = CliRunner().invoke(cli, ["verify", str(path)])
    assert run.exit_code == 0, run.output


def test_a_play_in_an_open_claim_window_closes_it_by_itself(
    client: TestClient, tmp_path: Path
) -> None:
    t = Table(client, {"seed": 3})
    chooser = Chooser(3)
    for _ in range(400):
        view = t.mover()
        if view["phase"] in ("claim-start", "claim") and "done" in view["legal"]:
            break  # a claim window is open: the seat may claim, say done, or go on
        assert t.act(view["seat"], chooser(view)).status_code in (200, 422)
    else:
        pytest.fail("no claim window opened")
    nexts = [a for a in view["legal"] if a != "done" and not a.startswith("claim ")]
    assert nexts, view["legal"]
    action = nexts[0]
    # ...and the next step's action, without "done", closes it and is taken
    r = t.act(view["seat"], action)
    assert r.status_code == 200, r.text
    after = r.json()
    assert after["version"] == view["version"] + 1
    last = dict(after["last"][-1])
    drawn = last.pop("card", None)  # a draw shows its drawer the card drawn
    assert last == {"turn": view["turn"], "seat": view["seat"], "action": action}
    assert drawn is None or drawn.split()[-1] in after["hand"]
    assert after["phase"] not in ("claim-start", "claim") or after["turn"] != view["turn"]
    # the record holds the closing of the window: it replays soundly once the game ends
    t.resign(view["seat"])
    record = client.get(t.path("/record"))
    assert record.status_code == 200
    assert replay(tmp_path, record.text)["sound"] is True


def test_resigning_ends_the_game_and_gives_the_record(client: TestClient, tmp_path: Path) -> None:
    t = Table(client, {"seed": 21})
    chooser = Chooser(21)
    for _ in range(6):
        view = t.mover()
        assert t.act(view["seat"], chooser(view)).status_code in (200, 422)
    assert "not over" in one_line_error(client.get(t.path("/record")), 409)
    one_line_error(client.post(t.path("/resign"), json={}), 401)
    r = t.resign("south")  # whoever is to move
    assert r.status_code == 200, r.text
    view = r.json()
    assert view["seat"] == "south"
    assert view["result"] == {"winner": "north", "reason": "resigned"}
    assert view["to_move"] is None and view["legal"] == []
    assert view["last"][-1]["action"] == "resigned" and view["last"][-1]["seat"] == "south"
    for seat in (None, "north", "south"):
        assert t.view(seat)["result"] == view["result"]
    assert "over" in one_line_error(t.resign("north"), 409)
    assert "over" in one_line_error(t.act("north", "R1@1"), 409)

    record = client.get(t.path("/record"))
    assert record.status_code == 200
    assert record.headers["content-type"].startswith("text/plain")
    assert f'[Game "{t.id}"]' in record.text and '[Seed "21"]' in record.text
    judged = replay(tmp_path, record.text)
    assert judged["sound"] is True and judged["problem"] is None


def test_the_lobby_lists_recent_tables_without_secrets(client: TestClient) -> None:
    t = Table(client, {"south": "bot:heuristic", "seed": 5})
    r = client.get("/v1/tables")
    assert r.status_code == 200
    found = [x for x in r.json()["tables"] if x["table"] == t.id]
    assert len(found) == 1
    entry = found[0]
    assert set(entry) == {"table", "seats", "turn", "to_move", "result", "created"}
    assert entry["seats"] == {"north": "human", "south": "bot:heuristic"}
    assert entry["result"] is None
    assert str(t.tokens["north"]) not in r.text


def test_a_clock_that_runs_out_loses_on_time(client: TestClient) -> None:
    t = Table(client, {"seed": 8, "clock": {"minutes": 0.01, "increment": 0}})
    view = t.view()
    loser = view["to_move"]
    assert view["clock"]["running"] == loser and view["clock"]["minutes"] == 0.01
    assert view["clock"]["increment"] == 0

    # the timer of the process that has the table in hand ends it, with nobody asking
    # (the lobby reads the store and times nothing)
    def ended() -> Any:
        for x in client.get("/v1/tables").json()["tables"]:
            if x["table"] == t.id and x["result"] is not None:
                return x["result"]
        return None

    result = until(ended, "the flag fell")
    assert result == {"winner": other(loser), "reason": "timeout"}
    view = t.view(loser)
    assert view["result"] == result and view["to_move"] is None and view["legal"] == []
    assert view["clock"]["remaining"][loser] == 0 and view["clock"]["running"] is None
    assert view["last"][-1] == {"turn": 1, "seat": loser, "action": "timeout"}
    assert "over" in one_line_error(t.act(loser, "R1@1"), 409)


def test_a_clock_found_run_out_by_the_next_request(client: TestClient) -> None:
    """A flag that fell while no timer watched (another process's table, a restart) is
    found by the next request: here the view, polled."""
    t = Table(client, {"seed": 9, "clock": {"minutes": 0.01, "increment": 5}})
    loser = t.view()["to_move"]
    result = until(lambda: t.view(other(loser))["result"], "the flag fell")
    assert result == {"winner": other(loser), "reason": "timeout"}


# -- hidden cards -----------------------------------------------------------------------------
def card_mentions(
    data: Any, hypothetical: frozenset[str] = frozenset(), where: str = ""
) -> Iterator[tuple[str, str, frozenset[str]]]:
    """Every card named in ``data`` (parsed JSON): ``(card, where, hypothetical)``.

    A card is a whole word of a string value (split at anything but letters and digits, so
    ``R3@6`` names R3, ``traitor R9@2>1`` names traitor and R9, and ``R10`` never names R1),
    not a key, and not in the values of :data:`NOT_CARDS`.

    ``hypothetical``: the cards a claim's answer may name without anyone holding them.
    A refused claim's witness (``witness.added``) names troops the opponent *could still
    add*, and the identities given to wild tactics (``wilds``: "darius as R8") are
    suppositions too: they come from the claim's question alone (the cards on the flag
    and the cards seen, all face up), so they reveal nothing of who holds what, even when
    a witness card happens to sit in a hand or a deck. Such cards are allowed inside that
    claim's answer and its prose (``explanation``, and the refused claim's ``error``),
    but never in its ``question``: the question itself must be face-up cards only.
    :func:`Knowledge.check_claim` checks that the answer does come from the question
    alone (the certificate, made again from the question, gives the same witness)."""
    if isinstance(data, dict):
        if "question" in data and "verdict" in data:  # a claim's answer
            extra = hypothetical | _claim_suppositions(data)
            for key, value in data.items():
                if key not in NOT_CARDS:
                    allowed = hypothetical if key == "question" else extra
                    yield from card_mentions(value, allowed, f"{where}.{key}")
            return
        if "error" in data and isinstance(data.get("claim"), dict):  # a refused claim's 422
            extra = hypothetical | _claim_suppositions(data["claim"])
            yield from card_mentions(data["error"], extra, f"{where}.error")
            for key, value in data.items():
                if key != "error":
                    yield from card_mentions(value, hypothetical, f"{where}.{key}")
            return
        for key, value in data.items():
            if key not in NOT_CARDS:
                yield from card_mentions(value, hypothetical, f"{where}.{key}")
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from card_mentions(value, hypothetical, f"{where}[{i}]")
    elif isinstance(data, str):
        for word in re.split(r"[^A-Za-z0-9]+", data):
            if word in CARDS:
                yield word, where, hypothetical


def _claim_suppositions(claim: dict[str, Any]) -> frozenset[str]:
    witness = claim.get("witness") or {}
    found = set(witness.get("added", [])) | set(witness.get("wilds", {}).values())
    found |= set((claim.get("mine") or {}).get("wilds", {}).values())
    return frozenset(found)


class Knowledge:
    """What each viewer may know at a step of a game the test plays, from the views
    themselves: the face-up cards (the flags' and the discards', from a spectator's view:
    a card once face up stays face up), and each seat's hand now and every card it ever
    held (a seat that returned a card to a deck with the scout knows where it went).

    Anything else is hidden from that viewer: the other seat's hand, and every card in the
    decks. Each hand is checked as well: as many cards as ``hand_sizes`` says, none face up,
    none in the other seat's hand (when the test sees both), and the face-up cards, the
    hands and the decks' sizes together make the whole pack exactly once."""

    def __init__(self, client: TestClient, t: Table, total: int) -> None:
        self.c = client
        self.t = t
        self.total = total
        self.face_up: set[str] = set()
        self.held: dict[str, set[str]] = {s: set() for s in SEATS if t.tokens[s] is not None}
        self.hands: dict[str, set[str]] = {}
        self.certified: set[int] = set()

    def learn(self, spectator: dict[str, Any], seats: dict[str, dict[str, Any]]) -> None:
        """The face-up cards from ``spectator``'s view, each seat's hand from its own."""
        self.face_up = set()
        for f in spectator["flags"]:
            for side in ("north", "south", "environment"):
                self.face_up.update(f[side])
        for seat in SEATS:
            self.face_up.update(spectator["discards"][seat])
        self.hands = {}
        for seat, view in seats.items():
            hand = set(view["hand"])
            assert len(hand) == len(view["hand"]) == view["hand_sizes"][seat], view["hand"]
            assert not hand & self.face_up, f"{seat}'s hand holds face-up cards"
            self.hands[seat] = hand
            self.held[seat] |= hand
        if len(self.hands) == 2:
            assert not self.hands["north"] & self.hands["south"]
        decks = spectator["decks"]["troop"] + spectator["decks"]["tactics"]
        in_hands = sum(spectator["hand_sizes"].values())
        assert len(self.face_up) + in_hands + decks == self.total

    def check(self, viewer: str | None, data: Any, what: str) -> None:
        """``data``, which ``viewer`` (a seat, or None: a spectator) fetched, names no card
        hidden from it."""
        known = self.face_up | (self.held[viewer] if viewer is not None else set())
        for card, where, hypothetical in card_mentions(data):
            if card in known or card in hypothetical:
                continue
            holder = next((s for s, h in self.hands.items() if card in h), None)
            hidden = f"in {holder}'s hand" if holder else "in a deck (or another hand)"
            pytest.fail(
                f"{what} for {viewer or 'a spectator'} names {card} at {where}, "
                f"a card {hidden}: {_at(data, where)!r:.300}"
            )

    def check_claim(self, number: int, claim: dict[str, Any]) -> None:
        """Claim ``number``'s answer comes from its question alone: the certificate, made
        again from the question, has the same verdict, formation, witness and blocking."""
        if number in self.certified:
            return
        self.certified.add(number)
        r = self.c.get(self.t.path(f"/claims/{number}/certificate"))
        assert r.status_code == 200, r.text
        cert = r.json()
        assert cert["verdict"] == claim["verdict"] and cert["blocking"] == claim["blocking"]
        witness = claim["witness"]
        if witness is None:
            assert cert["witness"] is None
        else:
            want = {k: witness[k] for k in ("added", "formation", "sum", "wilds")}
            assert cert["witness"] == want
        assert cert["mine"]["wilds"] == claim["mine"]["wilds"]
        self.check(None, cert, f"claim {number}'s certificate")


def _at(data: Any, where: str) -> Any:
    """The value at ``where`` (as :func:`card_mentions` names places) in ``data``."""
    for key, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", where):
        data = data[key] if key else data[int(index)]
    return data


class Watcher:
    """A viewer's event stream (``GET /v1/tables/ID/events``), read in a thread: the
    latest event's id and data. It stops after the event that shows the game's result."""

    def __init__(self, client: TestClient, t: Table, seat: str | None) -> None:
        self.latest: tuple[int, dict[str, Any]] | None = None
        self.cond = threading.Condition()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(client, t, seat), daemon=True)
        self.thread.start()

    def _run(self, client: TestClient, t: Table, seat: str | None) -> None:
        try:
            with client.stream("GET", t.path("/events"), headers=t.headers(seat)) as r:
                assert r.status_code == 200
                assert r.headers["content-type"].startswith("text/event-stream")
                for event_id, data in sse(r.iter_lines()):
                    with self.cond:
                        self.latest = (event_id, data)
                        self.cond.notify_all()
                    if data["result"] is not None:
                        return
        except BaseException as e:  # shown by wait()
            with self.cond:
                self.error = e
                self.cond.notify_all()

    def wait(self, version: int) -> dict[str, Any]:
        """The data of the event of ``version`` (the latest: nothing else moves)."""
        with self.cond:
            ok = self.cond.wait_for(
                lambda: (
                    self.error is not None
                    or (self.latest is not None and self.latest[0] >= version)
                ),
                LONG,
            )
            assert self.error is None, repr(self.error)
            assert ok and self.latest is not None, f"no event of version {version}"
            assert self.latest[0] == version, (self.latest[0], version)
            return self.latest[1]


def sse(lines: Iterator[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """The ``event: table`` events of a Server-Sent Events stream: (id, parsed data)."""
    fields: dict[str, str] = {}
    for line in lines:
        if line == "":
            if fields:
                assert fields.get("event") == "table", fields
                yield int(fields["id"]), json.loads(fields["data"])
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            fields[name] = value[1:] if value.startswith(" ") else value


def play_watching_everything(
    client: TestClient, t: Table, chooser: Chooser, tmp_path: Path, limit: int = 600
) -> dict[str, Any]:
    """Play ``t`` (both seats human, both by ``chooser``) to its end, checking at every
    step what every viewer may fetch (:class:`Knowledge`); the spectator's final view."""
    start = t.view()
    knowledge = Knowledge(client, t, 14 + start["decks"]["troop"] + start["decks"]["tactics"])
    viewers: list[str | None] = [None, "north", "south"]
    watchers = {v: Watcher(client, t, v) for v in viewers}
    answer: tuple[str, dict[str, Any]] | None = None  # the last action's, checked once known
    try:
        for _ in range(limit):
            views = {v: t.view(v) for v in viewers}
            spectator = views[None]
            version = spectator["version"]
            knowledge.learn(spectator, {s: views[s] for s in SEATS})
            if answer is not None:  # the acting seat's view after its action (a card drawn)
                seat, body = answer
                assert body.get("view", body) == views[seat]
                knowledge.check(seat, body, "the action's answer")
            lobby = client.get("/v1/tables").json()
            record = client.get(t.path("/record"))
            for v in viewers:
                assert views[v]["version"] == version
                knowledge.check(v, views[v], "the view")
                knowledge.check(v, lobby, "the lobby")
                event = watchers[v].wait(version)
                assert event == views[v] or _without_clock(event) == _without_clock(views[v])
                knowledge.check(v, event, "the latest event")
            for number, claim in enumerate(spectator["claims"], start=1):
                knowledge.check_claim(number, claim)
            if spectator["result"] is not None:
                assert record.status_code == 200
                return spectator
            assert record.status_code == 409
            for v in viewers:
                knowledge.check(v, record.json(), "the record")

            seat = spectator["to_move"]
            action = chooser(views[seat])
            r = t.act(seat, action)
            if r.status_code == 422:  # a refused claim: the answer goes to the claimant
                assert action.startswith("claim ") and action not in views[seat]["legal"]
                assert set(r.json()) == {"error", "claim", "view"}, r.text
            else:
                assert r.status_code == 200, r.text
                assert action in views[seat]["legal"]
            answer = (seat, r.json())
        pytest.fail("the game did not end")
    finally:
        if t.view()["result"] is None:  # a failed test: end the game, so the streams end
            t.resign("north")
        for w in watchers.values():
            w.thread.join(LONG)


def _without_clock(view: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in view.items() if k != "clock"}


WHOLE_GAMES = [(2, {}, True), (5, {"deck": "troops"}, False)] + [
    (seed, {}, False)
    for seed in range(100, 100 + int(os.environ.get("BATTLEJUDGE_TABLE_GAMES", "0")))
]
"""The whole games searched for hidden cards: a full-deck game that plays the Scout and a
troops-only one by default (about 30 s of the suite); ``BATTLEJUDGE_TABLE_GAMES=N`` adds N
more seeded full-deck games (nightly runs)."""


@pytest.mark.parametrize(("seed", "options", "scout"), WHOLE_GAMES)
def test_hidden_cards_stay_hidden_over_whole_games(
    client: TestClient, tmp_path: Path, seed: int, options: dict[str, str], scout: bool
) -> None:
    t = Table(client, {"seed": seed, "options": options})
    chooser = Chooser(seed, scout=scout)
    final = play_watching_everything(client, t, chooser, tmp_path)
    assert ("scout" in chooser.chosen) == scout
    assert any(a.startswith("return ") for a in chooser.chosen) == scout
    assert final["result"]["reason"] in ("breakthrough", "envelopment")
    assert any(c["accepted"] for c in final["claims"])
    assert any(not c["accepted"] for c in final["claims"])
    record = client.get(t.path("/record")).text
    judged = replay(tmp_path, record)
    assert judged["sound"] is True and judged["result"] == final["result"]["winner"]


def test_a_scouts_returned_cards_stay_hidden(client: TestClient) -> None:
    """The cards a Scout puts back go face down on their decks (Rules: Scout): the other
    seat and spectators learn which deck, the scouting seat which card. (Found by these
    tests and the browser's: they were shown the card, ``return R3``.)"""
    t = Table(client, {"seed": 5})
    chooser = Chooser(3, scout=True)

    def returned(view: dict[str, Any], action: str, r: Any) -> Any:
        return action if action.startswith("return ") else None

    action = _play_until(t, chooser, returned)
    card = action.split()[1]
    spectator = t.view()
    views = {s: t.view(s) for s in SEATS}
    knowledge = Knowledge(client, t, 70)
    knowledge.learn(spectator, views)
    scouting = spectator["last"][-1]["seat"]
    deck = "troop" if card[0] in "ROYGBP" and card[1:].isdigit() else "tactics"
    for view in (spectator, views[other(scouting)]):
        assert view["last"][-1] == {
            "turn": view["turn"],
            "seat": scouting,
            "action": f"return {deck}",
        }
    assert views[scouting]["last"][-1]["action"] == action
    knowledge.held[scouting].add(card)  # it held the card it put back, and knows it
    knowledge.check(None, spectator, "the view")
    knowledge.check(other(scouting), views[other(scouting)], "the view")
    knowledge.check(scouting, views[scouting], "the view")


def test_a_bot_seat_answers_by_itself(client: TestClient, tmp_path: Path) -> None:
    t = Table(client, {"north": "human", "south": "bot:heuristic", "seed": 6})
    assert t.tokens["south"] is None
    chooser = Chooser(6)
    start = t.view()
    knowledge = Knowledge(client, t, 14 + start["decks"]["troop"] + start["decks"]["tactics"])
    watcher = Watcher(client, t, "north")
    try:
        answer: dict[str, Any] | None = None
        for _ in range(400):
            # the bot moves by itself: wait until it is north's turn again, or the end
            view = until(
                lambda: (v := t.view("north"))["to_move"] in ("north", None) and v,
                "the bot moved",
            )
            spectator = t.view()
            if spectator["version"] != view["version"]:
                continue  # the bot moved between the two looks
            knowledge.learn(spectator, {"north": view})
            if answer is not None:  # north's view after its action (a card drawn)
                knowledge.check("north", answer, "the action's answer")
            knowledge.check("north", view, "the view")
            knowledge.check(None, spectator, "the view")
            event = watcher.wait(view["version"])
            knowledge.check("north", event, "the latest event")
            if view["result"] is not None:
                break
            r = t.act("north", chooser(view))
            assert r.status_code in (200, 422), r.text
            answer = r.json()
        else:
            pytest.fail("the game did not end")
    finally:
        if t.view()["result"] is None:
            t.resign("north")
        watcher.thread.join(LONG)
    bot_moves = [x for x in view["last"] if x["seat"] == "south"]
    assert bot_moves or view["result"]["winner"] == "north"
    record = client.get(t.path("/record"))
    assert record.status_code == 200 and '[South "bot:heuristic"]' in record.text
    judged = replay(tmp_path, record.text)
    assert judged["sound"] is True and judged["result"] == view["result"]["winner"]
    assert judged["turns"] >= 2


def test_the_hidden_cards_check_finds_a_card_put_where_it_does_not_belong(
    client: TestClient,
) -> None:
    """The check above can fail: a hand's card, a deck's, or a witness card outside its
    claim, planted into real views, are each found; the views themselves pass."""
    t = Table(client, {"seed": 13})
    views = {s: t.view(s) for s in SEATS}
    spectator = t.view()
    knowledge = Knowledge(client, t, 70)
    knowledge.learn(spectator, views)
    for seat in SEATS:
        knowledge.check(seat, views[seat], "the view")
    knowledge.check(None, spectator, "the view")
    theirs = views["south"]["hand"][0]
    unseen = sorted(CARDS - knowledge.face_up - knowledge.hands["north"] - knowledge.hands["south"])
    claim = {"question": {"seen": []}, "verdict": "invalid", "witness": {"added": [unseen[0]]}}
    planted = [
        ("north", {**views["north"], "last": [{"action": f"return {theirs}"}]}),
        ("north", {**views["north"], "discards": {"north": [unseen[0]], "south": []}}),
        (None, {**spectator, "hand": [views["north"]["hand"][0]]}),
        (None, {"tables": [{"note": f"{unseen[1]}@3"}]}),
        (None, {**spectator, "claims": [{**claim, "question": {"seen": [unseen[0]]}}]}),
        (None, {"error": f"adding {unseen[0]}", "claim": {**claim, "witness": None}}),
    ]
    for viewer, data in planted:
        with pytest.raises(pytest.fail.Exception, match="names"):
            knowledge.check(viewer, data, "a planted view")
    # a witness card inside its own claim, and its prose, is a supposition, not a leak
    knowledge.check(None, {**spectator, "claims": [claim]}, "a claim")
    knowledge.check(None, {"error": f"adding {unseen[0]}", "claim": claim}, "a refusal")
    # whole words only: R10 does not name R1, and a table id is not read for cards
    assert [c for c, _, _ in card_mentions({"a": "R10@3>4", "table": "xR3-fog"})] == ["R10"]


def test_resigning_after_the_other_seats_time_ran_out_does_not_make_it_win(
    tmp_path: Path,
) -> None:
    folder = str(tmp_path / "tables")
    minutes = 0.05  # 3 s: the first service stops long before (its timer goes with it)
    with TestClient(create_app(ServiceConfig(tables=folder, time_limit=60))) as first:
        t = Table(first, {"seed": 14, "clock": {"minutes": minutes, "increment": 0}})
        loser = t.view()["to_move"]
        made = time.monotonic()
    # the time runs out while no service has the table in hand (a restart, say)
    time.sleep(max(0.0, made + minutes * 60 + 0.5 - time.monotonic()))
    with TestClient(create_app(ServiceConfig(tables=folder, time_limit=60))) as second:
        t.c = second
        stored = [x for x in second.get("/v1/tables").json()["tables"] if x["table"] == t.id]
        if stored[0]["result"] is not None:
            pytest.skip("the first service's timer ended the game before it stopped")
        r = t.resign(other(loser))  # the seat whose time did not run out
        assert t.view()["result"] == {"winner": other(loser), "reason": "timeout"}
        assert "over" in one_line_error(r, 409)
