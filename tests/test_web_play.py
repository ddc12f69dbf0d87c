"""Play at /play over HTTP: a whole game against the random bot, played through the page's
own buttons to the end; the record it offers replays soundly with the same result; a
friend's seat; bad moves and stale pages are refused."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator

import httpx
import pytest
from web_server import Attributes, LiveServer

from battlejudge.engines.battleline.record import GameRecord, replay
from battlejudge.proofs.battleline.certificate import CertificateFile, from_file_model
from battlejudge.solver import battleline as bl


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with LiveServer() as live, httpx.Client(base_url=live.url, timeout=60) as c:
        yield c


def start(client: httpx.Client, **form: str) -> str:
    r = client.post("/play", data=form)
    assert r.status_code == 303, r.text
    location: str = r.headers["location"]
    return location


def until_mine(client: httpx.Client, url: str) -> httpx.Response:
    """The page once the viewer may move or the game is over (bots move in the background)."""
    deadline = time.monotonic() + 60
    while True:
        r = client.get(url)
        found = Attributes(r.text).found
        if found["data-mine"] == ["true"] or found["data-over"] == ["true"]:
            return r
        assert time.monotonic() < deadline, "the bot never moved"
        time.sleep(0.05)


def moves_offered(client: httpx.Client, url: str, page: str) -> list[tuple[str, str]]:
    """(move, version) of every button the page offers: the other moves, then the moves of
    the first playable card of the hand (picked as a player would)."""
    buttons = re.findall(r"hx-vals='([^']*)'", page)
    offered = [json.loads(b.replace("&#34;", '"')) for b in buttons]
    hand = Attributes(page).found.get("id", [])
    cards = [i for i in hand if i.startswith("hand-")]
    if cards:
        picked = client.get(f"{url}&pick={cards[0][5:]}").text
        offered += [
            json.loads(b.replace("&#34;", '"')) for b in re.findall(r"hx-vals='([^']*)'", picked)
        ]
    return [(o["move"], str(o["version"])) for o in offered]


def test_a_whole_game_against_the_random_bot(client: httpx.Client) -> None:
    url = start(client, seat="north", opponent="random", theme="battleline", seed="11")
    table = url.split("?")[0]
    assert client.get(f"{table}/record.blg").status_code == 409  # it would show both hands
    decisions = 0
    while True:
        page = until_mine(client, url)
        found = Attributes(page.text).found
        if found["data-over"] == ["true"]:
            break
        offered = moves_offered(client, url, page.text)
        assert offered, "no legal move offered"
        claims = [m for m in offered if m[0].startswith("claim")]
        move, version = (claims or offered)[0]
        r = client.post(f"{table}/move", data={"seat": "north", "version": version, "move": move})
        assert r.status_code == 200, r.text
        decisions += 1
        assert decisions < 400
    winner = found["data-winner"][0]
    r = client.get(f"{table}/record.blg")
    assert r.status_code == 200 and r.headers["content-disposition"].endswith('.blg"')
    report = replay(GameRecord.loads(r.text))
    assert report.sound, report.problem
    result = {0: "north", 1: "south"}.get(report.state.winner, "draw")
    assert result == winner
    proofs = Attributes(page.text).found.get("data-proof-verified", [])
    assert proofs == ["true"] * len(report.state.claims)
    certificates = [h for h in Attributes(page.text).found["href"] if h.startswith("/web/cert")]
    assert len(certificates) == len(report.state.claims) > 0
    cert = client.get(certificates[0]).json()
    assert cert["verdict"] == "valid"  # a claim the engine allowed is a valid one
    assert bl.verify(from_file_model(CertificateFile.model_validate(cert)))


def test_a_friend_takes_the_other_seat(client: httpx.Client) -> None:
    url = start(client, seat="south", opponent="friend", theme="nine-circles", seed="5")
    table = url.split("?")[0]
    south = Attributes(client.get(url).text).found
    assert south["data-mine"] == ["false"]  # north moves first
    north_url = f"{table}?seat=north"
    page = until_mine(client, north_url).text  # once the deal is dealt
    assert f'href="{table}?seat=north"' in client.get(url).text  # the friend's link
    assert "Circle 1" in page
    move, version = moves_offered(client, north_url, page)[0]
    r = client.post(f"{table}/move", data={"seat": "north", "version": version, "move": move})
    assert r.status_code == 200
    # the same move again: the page it came from is stale now
    again = client.post(f"{table}/move", data={"seat": "north", "version": version, "move": move})
    assert "the table moved on" in again.text
    wrong = client.post(
        f"{table}/move", data={"seat": "south", "version": str(int(version) + 1), "move": "Z9@1"}
    )
    assert wrong.status_code == 422


def test_bad_play_input_is_refused(client: httpx.Client) -> None:
    r = client.post("/play", data={"seat": "east", "opponent": "random"})
    assert r.status_code == 422 and "seat must be north or south" in r.text
    r = client.post("/play", data={"seat": "north", "opponent": "expert"})
    assert r.status_code == 422 and "opponent must be one of" in r.text
    assert client.get("/play/nothing?seat=north").status_code == 404
    url = start(client, seat="north", opponent="random", seed="3")
    assert client.get(url.split("?")[0]).status_code == 422  # no seat


def test_a_seat_never_sees_the_other_hand(client: httpx.Client) -> None:
    from battlejudge.apps.web.game_routes import face
    from battlejudge.apps.web.play_routes import _tables

    url = start(client, seat="north", opponent="friend", seed="8")
    table = _tables[url.split("/")[2].split("?")[0]]
    deadline = time.monotonic() + 30
    while not table.game.waiting_for_human():  # the deal is dealt in the background
        assert time.monotonic() < deadline
        time.sleep(0.05)
    for seat, other in (("north", 1), ("south", 0)):
        page = client.get(url.replace("seat=north", f"seat={seat}")).text
        labels = set(Attributes(page).found["aria-label"])
        hidden = {face(c, "battleline")["label"] for c in table.game.state.hands[other]}
        assert hidden and not labels & hidden
        assert "Last moves" not in page  # only decisions are listed, never the deal
