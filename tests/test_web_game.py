"""The table viewer at /game over HTTP: every bundled record steps turn by turn, every
position's flags answer as ``battlejudge claim POSITION --flag N --player P --json`` does,
an uploaded record opens, and bad input is refused with its message."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from click.testing import CliRunner
from web_server import Attributes, LiveServer

from battlejudge.cli.main import cli

EXAMPLES = Path(__file__).parents[1] / "examples"
POSITIONS = sorted((EXAMPLES / "positions").glob("*.json"))


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with LiveServer() as live, httpx.Client(base_url=live.url, timeout=60) as c:
        yield c


def src(path: Path) -> str:
    return quote(f"ex:{path.parent.name}/{path.name}")


def test_the_viewer_lists_the_bundled_examples(client: httpx.Client) -> None:
    r = client.get("/game")
    assert r.status_code == 200
    links = [h for h in Attributes(r.text).found["href"] if h.startswith("/game?src=")]
    assert len(links) == len(POSITIONS) + len(list((EXAMPLES / "games").glob("*.blg")))


@pytest.mark.parametrize("position", POSITIONS, ids=[p.stem for p in POSITIONS])
def test_a_position_answers_as_the_command_line(client: httpx.Client, position: Path) -> None:
    for flag in range(1, 10):
        args = ["claim", str(position), "--flag", str(flag), "--player", "north", "--json"]
        r = CliRunner().invoke(cli, args)
        page = client.get(f"/game?src={src(position)}&flag={flag}&player=north")
        assert page.status_code == 200
        found = Attributes(page.text).found
        if r.exit_code == 2:  # not a claim: the question's own message, no verdict
            assert "data-verdict" not in found
            assert r.output.strip() == f"battlejudge: error: {found['data-ask-error'][0]}"
            continue
        expected = json.loads(r.output)
        assert found["data-verdict"] == [expected["verdict"]], flag
        if expected["verdict"] == "valid":
            assert found["data-blocking"] == [" ".join(expected["blocking"])]
        else:
            assert found["data-witness"] == [" ".join(expected["witness"]["added"])]


def test_a_record_steps_turn_by_turn(client: httpx.Client) -> None:
    record = EXAMPLES / "games" / "every-tactic.blg"
    last = max(
        int(line.split(".")[0]) for line in record.read_text().splitlines() if line[:1].isdigit()
    )
    turns = []
    for step in range(1, last + 2, 7):
        found = Attributes(client.get(f"/game?src={src(record)}&step={step}").text).found
        turns.append(int(found["data-turn"][0]))
        assert found["data-step"] == [str(step)]
    assert turns == sorted(turns) and turns[0] == 1
    end = Attributes(client.get(f"/game?src={src(record)}&step={last + 1}").text).found
    assert "data-replay-problem" not in end
    assert end["data-claimed-by"].count("north") + end["data-claimed-by"].count("south") >= 3


def test_an_unsound_record_says_where_it_breaks(client: httpx.Client) -> None:
    record = EXAMPLES / "games" / "unjustified-claim.blg"
    r = client.get(f"/game?src={src(record)}&step=999")
    assert r.status_code == 200
    assert "data-replay-problem" in Attributes(r.text).found
    assert "unjustified-claim" in r.text


def test_an_uploaded_record_opens(client: httpx.Client) -> None:
    data = (EXAMPLES / "games" / "every-tactic.blg").read_bytes()
    r = client.post("/game", files={"file": ("mine.blg", data)})
    assert r.status_code == 303 and r.headers["location"].startswith("/game?src=up:")
    page = client.get(r.headers["location"] + "&step=30&hide=south")
    found = Attributes(page.text).found
    assert found["data-turn"] == ["30"]
    assert "cards, hidden" in page.text


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("src=ex:games/nothing.blg", "no bundled example 'games/nothing.blg'"),
        ("src=up:0123456789abcdef", "no longer kept here"),
        ("src=ex:games/every-tactic.blg&flag=10&player=north", "flag must be a number 1-9"),
        ("src=ex:games/every-tactic.blg&player=east&flag=1", "player must be north or south"),
        ("src=ex:games/every-tactic.blg&theme=chess", "theme must be battleline or nine-circles"),
    ],
)
def test_bad_viewer_input_is_refused(client: httpx.Client, query: str, message: str) -> None:
    r = client.get(f"/game?{query}")
    assert r.status_code == 422
    assert message in Attributes(r.text).found["data-problem"][0].replace("&#39;", "'")


def test_a_file_that_is_not_a_record_is_refused(client: httpx.Client) -> None:
    r = client.post("/game", files={"file": ("bad.blg", b"1. N: nonsense\n")})
    page = client.get(r.headers["location"])
    assert page.status_code == 422
    assert "bad.blg" in Attributes(page.text).found["data-problem"][0]
