"""Play at /play over HTTP, on the tables' machinery: the form opens a table against a bot
and sends you to your seat's page; a whole game against the heuristic bot played through
the page's own forms to the end; the record it offers replays soundly with the same
result and each claim's certificate verifies; a friend's seat; bad input and stale pages
are refused; the old in-memory tables' links answer 404."""

from __future__ import annotations

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
    assert location.startswith("/tables/") and "?token=" in location
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


def moves_offered(client: httpx.Client, page: str) -> list[str]:
    """Every move the page offers: the claims and other moves, then the moves of the first
    playable card of the hand (picked as a player would)."""
    found = Attributes(page).found
    offered = list(found.get("data-move", []))
    picks = [h for h in found.get("a.href", []) if "&pick=" in h]
    if picks:
        offered += Attributes(client.get(picks[0]).text).found.get("data-move", [])
    return offered


def post(client: httpx.Client, url: str, page: str, move: str) -> httpx.Response:
    """The page's form for ``move``, sent as htmx sends it."""
    table, token = url.split("?token=")
    version = Attributes(page).found["data-version"][0]
    data = {"token": token, "version": version, "action": move}
    return client.post(f"{table}/act", data=data, headers={"HX-Request": "true"})


def test_a_whole_game_against_the_heuristic_bot(client: httpx.Client) -> None:
    url = start(client, seat="north", opponent="heuristic", theme="battleline", seed="11")
    table_id = url.split("/")[2].split("?")[0]
    assert client.get(f"/v1/tables/{table_id}/record").status_code == 409  # both hands
    decisions = 0
    tried: set[str] = set()  # a claim refused is not asked again
    while True:
        page = until_mine(client, url)
        found = Attributes(page.text).found
        if found["data-over"] == ["true"]:
            break
        offered = moves_offered(client, page.text)
        assert offered, "no legal move offered"
        claims = [m for m in offered if m.startswith("claim") and m not in tried]
        rest = [m for m in offered if not m.startswith("claim")]
        move = (claims or rest)[0]
        tried.add(move)
        r = post(client, url, page.text, move)
        assert r.status_code in (200, 422), r.text  # 422: a claim the judge refused
        decisions += 1
        assert decisions < 400
    winner = found["data-winner"][0]
    record = next(h for h in found["a.href"] if h.endswith("/record"))
    r = client.get(record)
    assert r.status_code == 200 and r.headers["content-disposition"].endswith('.blg"')
    report = replay(GameRecord.loads(r.text))
    assert report.sound, report.problem
    result = {0: "north", 1: "south"}.get(report.state.winner, "draw")
    assert result == winner
    certificates = [h for h in found["a.href"] if h.endswith("/certificate")]
    accepted = found.get("data-accepted", [])
    assert len(certificates) == len(accepted) > 0
    proofs = found.get("data-proof-verified", [])
    assert proofs == ["true"] * len(accepted)
    for link, ok in zip(certificates, accepted, strict=True):
        cert = client.get(link).json()
        assert cert["verdict"] == ("valid" if ok == "true" else "invalid")
        assert bl.verify(from_file_model(CertificateFile.model_validate(cert)))
        break  # one is enough: each is made again by the solver


def test_a_friend_takes_the_other_seat(client: httpx.Client) -> None:
    r = client.post("/play", data={"seat": "south", "opponent": "friend", "theme": "nine-circles"})
    assert r.status_code == 201
    found = Attributes(r.text).found
    links = [h for h in found["a.href"] if "?token=" in h]
    assert len(links) == 2 and set(found["data-invite"]) == {"north", "south"}
    north_url, south_url = links
    south = Attributes(client.get(south_url).text).found
    assert south["data-mine"] == ["false"]  # north moves first
    page = until_mine(client, north_url).text
    assert "Circle 1" in page
    move = moves_offered(client, page)[0]
    assert post(client, north_url, page, move).status_code == 200
    again = post(client, north_url, page, move)  # the page it came from is stale now
    assert again.status_code == 409 and "the table moved on" in again.text
    wrong = post(client, south_url, client.get(south_url).text, "Z9@1")
    assert wrong.status_code == 409  # north is still to move (it must draw)


def test_bad_play_input_is_refused(client: httpx.Client) -> None:
    r = client.post("/play", data={"seat": "east", "opponent": "heuristic"})
    assert r.status_code == 422 and "seat must be north or south" in r.text
    r = client.post("/play", data={"seat": "north", "opponent": "random"})
    assert r.status_code == 422 and "opponent must be one of" in r.text
    r = client.post("/play", data={"seat": "north", "theme": "chess"})
    assert r.status_code == 422 and "theme must be battleline or nine-circles" in r.text
    r = client.post("/play", data={"seat": "north", "seed": "x"})
    assert r.status_code == 422 and "seed must be a whole number" in r.text
    r = client.get("/play/nothing?seat=north")
    assert r.status_code == 404 and "games are at /tables now" in r.text


def test_a_seat_sees_its_hand_and_only_the_size_of_the_bots(client: httpx.Client) -> None:
    url = start(client, seat="north", opponent="heuristic", seed="8")
    page = until_mine(client, url).text
    found = Attributes(page).found
    table_id = url.split("/")[2].split("?")[0]
    view = client.get(f"/v1/tables/{table_id}", headers={"X-Seat-Token": url.split("=")[1]})
    assert sorted(found["data-hand-card"]) == sorted(view.json()["hand"])
    assert found["data-hand-size"] == [str(view.json()["hand_sizes"]["south"])]
    assert found["data-side"][:2] == ["south", "north"]  # the bot above, you below
