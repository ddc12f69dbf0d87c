"""The tables' pages over HTTP (FastAPI's TestClient, no browser): the lobby and its
errors, a whole game between two seats played through the page's own forms with neither
seat's page (nor its htmx fragment) ever holding the other seat's hand and the spectator's
holding none, a refused claim's witness, /play against a bot, resigning, and the record
offered once the game is over.

The markers checked are the page's own: a hand card carries ``data-hand-card`` (the
viewer's hand only), a card on the table ``data-card``; a claim's evidence
(``data-evidence``) may name any card, as the judge reasons from the visible cards alone."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from web_server import Attributes

from battlejudge.apps.service import ServiceConfig, create_app
from battlejudge.engines.battleline.record import GameRecord, replay

SEATS = ("north", "south")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    tables: Path = tmp_path_factory.mktemp("tables")
    with TestClient(create_app(ServiceConfig(tables=str(tables)))) as c:
        yield c


def api_view(client: TestClient, table: str, token: str | None) -> dict[str, Any]:
    headers = {"X-Seat-Token": token} if token else {}
    r = client.get(f"/v1/tables/{table}", headers=headers)
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    return out


def open_table(client: TestClient, **form: str) -> tuple[str, dict[str, str]]:
    """A table opened through the lobby's form: its id and each person's seat path."""
    r = client.post("/tables", data=form)
    assert r.status_code == 201, r.text
    seats = dict(re.findall(r'id="sit-(north|south)" href="([^"]+)"', r.text))
    spectate = re.findall(r'href="/tables/([^"?]+)">Watch', r.text)
    assert len(spectate) == 1
    return spectate[0], seats


def token_of(path: str) -> str:
    return path.split("token=")[1]


def markers(html: str) -> tuple[list[str], set[str]]:
    """The hand cards a page shows (``data-hand-card``) and the cards on its table."""
    found = Attributes(html).found
    return found.get("data-hand-card", []), set(found.get("data-card", []))


def check_hidden(client: TestClient, table: str, seats: dict[str, str]) -> None:
    """Each seat's page and fragment show its own hand exactly and nothing of the other's;
    the spectator's page and fragment show no hand at all."""
    hands = {s: api_view(client, table, token_of(p))["hand"] for s, p in seats.items()}
    for seat, path in seats.items():
        other = hands["south" if seat == "north" else "north"]
        for headers in ({}, {"HX-Request": "true"}):
            r = client.get(path, headers=headers)
            assert r.status_code == 200, r.text
            hand, board = markers(r.text)
            assert sorted(hand) == sorted(hands[seat])
            assert not set(other) & (set(hand) | board), (seat, other)
    for headers in ({}, {"HX-Request": "true"}):
        r = client.get(f"/tables/{table}", headers=headers)
        hand, _ = markers(r.text)
        assert hand == [] and "data-hand=" not in r.text and "/act" not in r.text


def act(client: TestClient, path: str, action: str, version: int) -> Any:
    """Take ``action`` through the page's form, as htmx posts it."""
    table = path.split("?")[0]
    data = {"token": token_of(path), "version": str(version), "action": action}
    return client.post(f"{table}/act", data=data, headers={"HX-Request": "true"})


def test_the_lobby_offers_a_new_table_and_the_recent_ones(client: TestClient) -> None:
    r = client.get("/tables")
    assert r.status_code == 200
    found = Attributes(r.text).found
    assert {"north", "south", "theme", "deck", "claim_timing", "stalemate"} <= set(found["name"])
    assert {"bot:heuristic", "bot:search", "bot:expert", "human"} <= set(found["value"])
    table, _ = open_table(client, north="bot:heuristic", south="bot:heuristic", seed="2")
    assert f'href="/tables/{table}"' in client.get("/tables").text


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"north": "bot:nobody"}, "body.north must be human or one of bot:heuristic"),
        ({"deck": "half"}, "option deck='half' is not full or troops"),
        ({"minutes": "ten"}, "minutes must be a number, got 'ten'"),
        ({"minutes": "0"}, "body.clock.minutes must be more than 0"),
        ({"minutes": "5", "increment": "9999"}, "body.clock.increment must be a number 0-600"),
        ({"seed": "-3"}, "seed must be a whole number, got '-3'"),
    ],
)
def test_bad_lobby_values_are_refused_on_one_line(
    client: TestClient, form: dict[str, str], message: str
) -> None:
    r = client.post("/tables", data=form)
    assert r.status_code == 422
    problem = Attributes(r.text).found["data-problem"]
    assert len(problem) == 1 and "\n" not in problem[0]
    assert message in problem[0].replace("&#39;", "'").replace("&#x27;", "'")
    assert 'id="new-table"' in r.text  # the form is there to fix it


def test_a_whole_game_between_two_seats_through_the_pages(client: TestClient) -> None:
    table, seats = open_table(client, north="human", south="human", seed="7", minutes="60")
    assert set(seats) == {"north", "south"}
    assert client.get(f"/v1/tables/{table}/record").status_code == 409
    refused = accepted = 0
    for _ in range(600):
        spectator = api_view(client, table, None)
        if spectator["result"] is not None:
            break
        check_hidden(client, table, seats)
        seat = spectator["to_move"]
        view = api_view(client, table, token_of(seats[seat]))
        assert view["legal"], view
        tries = [f for f in view["may_claim"] if f"claim {f}" not in view["legal"]]
        if tries and not refused:  # a claim the judge will refuse: the page shows why
            r = act(client, seats[seat], f"claim {tries[0]}", view["version"])
            assert r.status_code == 422, r.text
            found = Attributes(r.text).found
            assert len(found["data-problem"]) == 1 and "cannot claim" in found["data-problem"][0]
            assert found["data-accepted"][0] == "false"  # the newest claim, open
            witness = found["data-witness"][0]
            claims = api_view(client, table, None)["claims"]
            assert witness == " ".join(claims[-1]["witness"]["added"]) != ""
            assert set(witness.split()) <= set(found["data-evidence"])
            refused += 1
            continue
        action = view["legal"][0]
        accepted += action.startswith("claim")
        r = act(client, seats[seat], action, view["version"])
        assert r.status_code == 200, r.text
        assert Attributes(r.text).found["data-version"] == [str(view["version"] + 1)]
    else:
        raise AssertionError("the game did not end")
    assert refused == 1 and accepted > 0
    check_hidden(client, table, seats)
    for path in (*seats.values(), f"/tables/{table}"):
        page = client.get(path).text
        found = Attributes(page).found
        assert found["data-over"] == ["true"]
        assert found["id"].count("table-record") == 1
        assert f"/v1/tables/{table}/record" in found["a.href"]
        certificates = [h for h in found["a.href"] if h.endswith("/certificate")]
        assert len(certificates) == len(spectator["claims"])
    r = client.get(f"/v1/tables/{table}/record")
    assert r.status_code == 200
    report = replay(GameRecord.loads(r.text))
    assert report.sound, report.problem
    winner = {0: "north", 1: "south"}.get(report.state.winner, "draw")
    assert Attributes(page).found["data-winner"] == [winner]


def test_a_stale_page_and_a_stranger_are_refused(client: TestClient) -> None:
    table, seats = open_table(client, north="human", south="human", seed="9")
    view = api_view(client, table, token_of(seats["north"]))
    first = view["legal"][0]
    assert act(client, seats["north"], first, view["version"]).status_code == 200
    r = act(client, seats["north"], first, view["version"])  # the same page again
    assert r.status_code == 409 and "the table moved on" in r.text
    view = api_view(client, table, token_of(seats["north"]))
    act(client, seats["north"], view["legal"][0], view["version"])  # north draws
    south = api_view(client, table, token_of(seats["south"]))
    assert south["to_move"] == "south"
    r = act(client, seats["north"], "draw troop", south["version"])
    assert r.status_code == 409 and "not your turn" in r.text
    r = act(client, f"/tables/{table}?token=nobody", "draw troop", south["version"])
    assert r.status_code == 403 and "not a seat&#39;s token" in r.text
    r = client.get("/tables/no-such-table")
    assert r.status_code == 404 and "data-problem" in r.text


def test_play_opens_a_table_against_a_bot_that_answers(client: TestClient) -> None:
    r = client.post(
        "/play",
        data={"seat": "south", "opponent": "heuristic", "theme": "nine-circles", "seed": "5"},
        follow_redirects=False,
    )
    assert r.status_code == 303
    path = r.headers["location"]
    assert path.startswith("/tables/") and "?token=" in path
    table, token = path.split("/")[2].split("?")[0], token_of(path)

    def my_turn(turn: int) -> dict[str, Any]:
        deadline = time.monotonic() + 60
        while True:
            view = api_view(client, table, token)
            if view["to_move"] == "south" and view["turn"] > turn:
                return view
            assert time.monotonic() < deadline, "the bot never moved"
            time.sleep(0.05)

    view = my_turn(0)  # north, the bot, moved first
    assert view["seats"] == {"north": "bot:heuristic", "south": "human"}
    assert any(m["seat"] == "north" for m in view["last"])
    page = client.get(path).text
    assert "Circle 1" in page and "Flag 1" not in page  # the theme's words
    found = Attributes(page).found
    assert found["data-mine"] == ["true"]
    sides = found["data-side"]
    assert sides[:2] == ["north", "south"]  # the bot's cards above, mine below
    assert found["data-events"] == [f"/v1/tables/{table}/events?token={token}"]
    turn = view["turn"]
    while view["to_move"] == "south" and view["turn"] == turn:  # play, draw
        r = act(client, path, view["legal"][0], view["version"])
        assert r.status_code == 200, r.text
        view = api_view(client, table, token)
    my_turn(turn)  # and the bot answered
    r = client.post("/play", data={"seat": "east"})
    assert r.status_code == 422 and "seat must be north or south" in r.text
    r = client.post("/play", data={"seat": "north", "opponent": "random"})
    assert r.status_code == 422 and "opponent must be one of" in r.text
    assert client.get("/play/old-table?seat=north").status_code == 404


def test_play_with_a_friend_shows_both_links(client: TestClient) -> None:
    r = client.post("/play", data={"seat": "north", "opponent": "friend", "seed": "1"})
    assert r.status_code == 201
    found = Attributes(r.text).found
    assert set(found["data-invite"]) == {"north", "south"}
    assert {"sit-north", "sit-south"} <= set(found["id"])


def test_resigning_asks_first_then_ends_the_game(client: TestClient) -> None:
    table, seats = open_table(client, north="human", south="bot:heuristic", seed="3")
    path = seats["north"]
    page = client.get(path).text
    assert "resign-yes" not in page and 'id="resign"' in page
    asked = client.get(f"{path}&confirm=resign", headers={"HX-Request": "true"})
    assert 'id="resign-yes"' in asked.text and 'id="resign-no"' in asked.text
    assert client.get(f"/v1/tables/{table}/record").status_code == 409
    r = client.post(f"/tables/{table}/resign", data={"token": token_of(path)})
    assert r.status_code == 200
    found = Attributes(r.text).found
    assert found["data-over"] == ["true"] and found["data-winner"] == ["south"]
    assert "table-record" in found["id"] and 'id="resign"' not in r.text
    assert client.get(f"/v1/tables/{table}/record").status_code == 200
    again = client.post(f"/tables/{table}/resign", data={"token": token_of(path)})
    assert again.status_code == 409 and "the game is over" in again.text
    watched = Attributes(client.get(f"/tables/{table}").text).found
    assert watched["data-winner"] == ["south"] and "data-hand-card" not in watched


def test_the_live_script_is_served_and_named_by_the_page(client: TestClient) -> None:
    r = client.get("/static/web/tables.js")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/javascript")
    assert "EventSource" in r.text and "htmx.ajax" in r.text
    table, _ = open_table(client, north="bot:heuristic", south="human", seed="4")
    found = Attributes(client.get(f"/tables/{table}").text).found
    assert "/static/web/tables.js" in found["script.src"]
    assert found["data-events"] == [f"/v1/tables/{table}/events"]
    assert found["data-refresh"] == [f"/tables/{table}"]
