"""Impossible hands are bad input at every entry point that takes Battle Line cards
(issue 21): a card given twice, or two Leaders on one player's side (docs/rulings.md 3).

Each test draws a side of cards (Hypothesis), asks a plain oracle written here whether
the side can exist, and checks that the entry point refuses exactly the impossible ones:
exit 2 (HTTP 422 with ``{"error": ...}``) with a one-line error naming the offending card.
The check itself lives in one place (``solver.battleline.cards.check_side``); these tests
do not call it.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from battlejudge.cli.main import cli
from battlejudge.engines.battleline.position import PositionFile, to_state
from battlejudge.engines.battleline.record import GameRecord, RecordError, replay
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import RuleError

LEADERS = {"alexander", "darius"}
MORALE = {*LEADERS, "cavalry", "shield"}
NAMES = [str(c) for c in bl.CARDS]
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def problem(*sides: list[str]) -> str | None:
    """The oracle: the offending card of players' sides that cannot exist together
    (a card twice anywhere, two Leaders on one side), or None."""
    seen: set[str] = set()
    for side in sides:
        for c in side:
            if c in seen:
                return c
            seen.add(c)
    for side in sides:
        if len(LEADERS & set(side)) > 1:
            return "alexander" if "alexander" in side else "darius"
    return None


# Sides of three cards drawn mostly from a few names, so repeats and Leaders are common.
sides = st.lists(
    st.one_of(
        st.sampled_from(["R1", "R2", "R3", "alexander", "darius", "cavalry", "shield"]),
        st.sampled_from(NAMES),
    ),
    min_size=3,
    max_size=3,
)
FAST = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _run(args: list[str], stdin: str | None = None) -> Any:
    return CliRunner().invoke(cli, args, input=stdin)


def _refused(result: Any, card: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert card in result.output


@FAST
@given(sides)
def test_formation_command(cards: list[str]) -> None:
    bad = problem(cards)
    r = _run(["formation", " ".join(cards)])
    if bad:
        _refused(r, bad)
    else:
        assert r.exit_code == 0, r.output


@FAST
@given(sides, sides)
def test_claim_command(mine: list[str], theirs: list[str]) -> None:
    bad = problem(mine, theirs[:2])
    r = _run(["claim", "--mine", " ".join(mine), "--theirs", " ".join(theirs[:2])])
    if bad:
        _refused(r, bad)
    else:
        assert r.exit_code in (0, 1), r.output


@FAST
@given(sides, sides)
def test_claims_file(mine: list[str], theirs: list[str]) -> None:
    line = json.dumps({"mine": mine, "theirs": theirs[:2]})
    bad = problem(mine, theirs[:2])
    r = _run(["claims", "check", "-"], stdin=line + "\n")
    if bad:
        assert r.exit_code == 2
        answer = json.loads(r.output.splitlines()[0])
        assert bad in answer["error"]
    else:
        assert r.exit_code == 0, r.output


def _position(north: list[str], south: list[str], hands: list[str] | None = None) -> Any:
    flags: list[dict[str, Any]] = [{} for _ in range(9)]
    flags[0] = {
        "north": [{"card": c, "turn": 1} for c in north],
        "south": [{"card": c, "turn": 1} for c in south],
    }
    tactics = sum(1 for c in north if c in MORALE), sum(1 for c in south if c in MORALE)
    most = max(tactics)
    data: dict[str, Any] = {
        "turn": 5,
        "flags": flags,
        "tactics_played": {"north": most, "south": most},
    }
    if hands is not None:
        data["hands"] = {"north": hands, "south": []}
    return data


@FAST
@given(sides, sides)
def test_position_files(north: list[str], south: list[str]) -> None:
    """The two sides of flag 1 of a position (a card anywhere twice, two Leaders of one
    player): ``claim POSITION`` and ``show POSITION`` exit 2 naming the card."""
    bad = problem(north, south)
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pos.json"
        path.write_text(json.dumps(_position(north, south)))
        claim = runner.invoke(cli, ["claim", str(path), "--flag", "1", "--player", "north"])
        show = runner.invoke(cli, ["show", str(path)])
    if bad:
        _refused(claim, bad)
        _refused(show, bad)
    else:
        assert claim.exit_code in (0, 1), claim.output
        assert show.exit_code == 0, show.output


@pytest.mark.parametrize(
    ("change", "message"),
    [
        # a Leader on the table and the other in his own discard pile: both were played by him
        (
            {"flags.1.north": ["alexander"], "discards": {"north": ["darius"], "south": []}},
            "two Leaders (alexander darius)",
        ),
        # a hand holds seven cards at the start of a turn
        ({"hands": {"north": [f"G{v}" for v in range(1, 9)], "south": []}}, "hands.north"),
        ({"hands": {"north": ["G1", "G1"], "south": []}}, "G1"),
        ({"hands": {"north": ["cavalry"], "south": []}, "flags.1.south": ["cavalry"]}, "cavalry"),
    ],
)
def test_position_hands_and_discards(change: dict[str, Any], message: str) -> None:
    data = _position(["R4", "R5", "R3"], ["B7"])
    for key, value in change.items():
        if key.startswith("flags."):
            _, i, seat = key.split(".")
            data["flags"][int(i)][seat] = [{"card": c, "turn": 2} for c in value]
        else:
            data[key] = value
    data["tactics_played"] = {"north": 2, "south": 2}
    with pytest.raises(RuleError, match=re.escape(message)):
        to_state(PositionFile.model_validate(data))


@FAST
@given(st.permutations(range(60)), st.integers(0, 13), st.integers(0, 13))
def test_record_deals(order: list[int], i: int, j: int) -> None:
    """A record's deal giving a card twice cannot be replayed: bad input naming it."""
    cards = [str(bl.CARDS[c]) for c in order[:14]]
    cards[j] = cards[i]
    rec = GameRecord.loads(
        f'[DealNorth "{" ".join(cards[:7])}"]\n[DealSouth "{" ".join(cards[7:])}"]\n[Result "*"]\n'
    )
    if i == j:
        assert replay(rec).sound
    else:
        with pytest.raises(RecordError, match=f"{cards[i]} twice"):
            replay(rec)


def test_record_draw_of_a_card_already_held_is_bad_input() -> None:
    """A draw token naming a card that is already in a hand or on the table makes a hand
    that cannot exist: bad input (exit 2) naming the card and the line, not an illegal move."""
    text = (EXAMPLES / "games" / "every-tactic.blg").read_text()
    deal = GameRecord.loads(text).tags["DealNorth"].split()
    lines = text.splitlines()
    first_draw = next(i for i, line in enumerate(lines) if "draw troop" in line)
    head, _, _ = lines[first_draw].rpartition("draw troop ")
    lines[first_draw] = f"{head}draw troop {deal[0]}"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "g.blg"
        path.write_text("\n".join(lines) + "\n")
        r = CliRunner().invoke(cli, ["replay", str(path)])
    _refused(r, deal[0])
    assert f"line {first_draw + 1}" in r.output


@pytest.fixture(scope="module")
def service() -> Iterator[Any]:
    """One service for the module (its workers are processes, started once)."""
    from fastapi.testclient import TestClient

    from battlejudge.apps.service import ServiceConfig, create_app

    with TestClient(create_app(ServiceConfig(workers=1))) as client:
        yield client


@FAST
@given(mine=sides, theirs=sides)
def test_service(service: Any, mine: list[str], theirs: list[str]) -> None:
    """Over HTTP: 422 with {"error": ...} naming the card, for questions and positions."""
    bad = problem(mine, theirs[:2])
    r = service.post("/v1/claims", json={"mine": mine, "theirs": theirs[:2]})
    body = r.json()
    if bad:
        assert r.status_code == 422 and bad in body["error"], body
    else:
        assert r.status_code == 200, body
    position = _position(mine, theirs[:2])
    r = service.post(
        "/v1/positions/claim", json={"position": position, "flag": 1, "player": "north"}
    )
    if bad:
        assert r.status_code == 422 and bad in r.json()["error"], r.json()
    else:
        assert r.status_code == 200, r.json()
