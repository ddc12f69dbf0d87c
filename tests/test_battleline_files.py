"""Positions (JSON + schema), game records (.blg), replay and show: formats, round trips,
bad input (exit 2 naming the line or JSON path), and the example files."""

from __future__ import annotations

import json
import random
from importlib.resources import files
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from battlejudge import examples
from battlejudge.cli.main import cli
from battlejudge.engines.battleline import position as positions
from battlejudge.engines.battleline.actions import PLAY, SCOUT, TRAITOR
from battlejudge.engines.battleline.record import GameRecord, record_from_state, replay
from battlejudge.engines.battleline.state import new_game
from battlejudge.engines.game import random_playout

EXAMPLES = Path(str(files("battlejudge.examples")))
GAME = EXAMPLES / "games" / "every-tactic.blg"
UNJUSTIFIED = EXAMPLES / "games" / "unjustified-claim.blg"
ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


# -- records ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(8))
def test_records_round_trip_and_replay_to_the_same_state(seed: int) -> None:
    state = new_game()
    random_playout(state, random.Random(seed))
    text = record_from_state(state, {"Event": "test", "Seed": str(seed)}).dumps()
    assert GameRecord.loads(text).dumps() == text
    report = replay(GameRecord.loads(text))
    assert report.sound and report.claims == len(state.claims)
    assert report.state.serialize() == state.serialize()


def test_example_game_uses_every_tactic_and_replays_sound() -> None:
    text = GAME.read_text()
    report = replay(GameRecord.loads(text))
    assert report.sound and report.state.is_terminal()
    played = {a.card for a in report.state.history if a.kind == PLAY and a.card >= 60}
    guile = {a.kind for a in report.state.history if SCOUT <= a.kind <= TRAITOR}
    assert played == set(range(60, 66)) and len(guile) == 4
    r = run("replay", str(GAME), "--json")
    assert r.exit_code == 0
    out = json.loads(r.output)
    assert out["sound"] and out["claims"] == report.claims and out["problem"] is None


def test_replay_catches_the_unjustified_claim() -> None:
    r = run("replay", str(UNJUSTIFIED))
    assert r.exit_code == 1
    assert "unjustified claim" in r.output and "turn 22" in r.output
    out = json.loads(run("replay", str(UNJUSTIFIED), "--json").output)
    assert out["problem"]["kind"] == "unjustified-claim" and out["problem"]["where"] == "turn 22"


def test_replay_reports_an_illegal_move_with_its_turn(tmp_path: Path) -> None:
    lines = GAME.read_text().splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("5. "))
    lines[i] = lines[i].split(":")[0] + ": pass"  # passing with troops in hand is illegal
    bad = tmp_path / "bad.blg"
    bad.write_text("\n".join(lines) + "\n")
    r = run("replay", str(bad))
    assert r.exit_code == 1 and "turn 5" in r.output and "illegal" in r.output


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace('[Theme "battleline"]', '[Theme "chess"]'), "unknown theme"),
        (lambda t: t.replace("1. N: ", "1. X: "), "line"),
        (lambda t: t.replace("1. N: Y10@2", "1. N: Y11@2"), "unknown card 'Y11'"),
        (lambda t: t.replace("1. N: Y10@2", "1. N: Y10@12"), "'12'"),
        (lambda t: "\n".join(x for x in t.splitlines() if "DealSouth" not in x), "DealSouth"),
        (
            lambda t: t.replace('[Rules "claim_timing=standard', '[Rules "timing=standard'),
            "unknown rules setting",
        ),
    ],
)
def test_malformed_records_are_bad_input(tmp_path: Path, edit: object, message: str) -> None:
    bad = tmp_path / "bad.blg"
    bad.write_text(edit(GAME.read_text()))  # type: ignore[operator]
    r = run("replay", str(bad))
    assert r.exit_code == 2, r.output
    assert message in r.output and "Traceback" not in r.output


# -- positions -------------------------------------------------------------------------
CASES = {c["name"]: c for c in examples.rulebook_cases()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rulebook_positions_give_the_rulebook_verdicts(name: str) -> None:
    case = CASES[name]
    path = EXAMPLES / "positions" / f"{name}.json"
    r = run("claim", str(path), "--flag", "1", "--player", "north", "--json")
    out = json.loads(r.output)
    assert out["verdict"] == case["verdict"], case["source"]
    assert r.exit_code == (0 if case["verdict"] == "valid" else 1)
    if "blocking" in case:
        assert out["blocking"] == case["blocking"]


def test_position_round_trip() -> None:
    state = new_game()
    rng = random.Random(3)
    while state.turn < 30:
        state.apply_action(rng.choice(state.legal_actions()))
    pos = positions.from_state(state)
    again = positions.to_state(positions.PositionFile.model_validate_json(positions.dumps(pos)))
    for i in range(9):
        for p in (0, 1):
            assert again.flags[i].sides[p] == state.flags[i].sides[p]
            if state.flags[i].claimed_by < 0 and len(state.flags[i].sides[p]) == 3:
                assert again.claim_question(i + 1, p) == state.claim_question(i + 1, p)


def test_published_schema_is_current() -> None:
    published = json.loads((ROOT / "docs" / "position.schema.json").read_text())
    assert published == positions.json_schema()
    r = run("schema", "position")
    assert json.loads(r.output) == published


def _position(**changes: object) -> dict[str, object]:
    base = json.loads((EXAMPLES / "positions" / "wedge-beats-blue-8.json").read_text())
    base.update(changes)
    return base


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        # a card twice (which is also how a 61st troop shows)
        (
            lambda p: p["flags"][1]["south"].append({"card": "R4", "turn": 2}),
            "flags[1].south[2]: R4 is already at flags[0].north[0]",
        ),
        (
            lambda p: p["flags"][0]["north"].append({"card": "R6", "turn": 2}),
            "flags[0].north: 4 cards without Mud",
        ),
        (
            lambda p: p["flags"][0].update(claimed_by="south"),
            "flags[0]: claimed by south with 1 cards",
        ),
        (
            lambda p: p["flags"][2]["north"].append({"card": "Q3", "turn": 2}),
            "flags[2].north[0]: unknown card 'Q3'",
        ),
        (
            lambda p: p["flags"][2]["north"].append({"card": "fog", "turn": 2}),
            "flags[2].north[0]: fog cannot stand in a formation",
        ),
        (lambda p: p.update(turn="soon"), "turn"),
        (lambda p: p["flags"].pop(), "flags"),
        (lambda p: p["tactics_played"].update(north=3), "more than one tactic ahead"),
    ],
)
def test_inconsistent_positions_are_bad_input(tmp_path: Path, mutate: object, message: str) -> None:
    pos = _position()
    mutate(pos)  # type: ignore[operator]
    path = tmp_path / "pos.json"
    path.write_text(json.dumps(pos))
    r = run("claim", str(path), "--flag", "1", "--player", "north")
    assert r.exit_code == 2, r.output
    assert message in r.output and "Traceback" not in r.output


def test_claim_position_option_errors(tmp_path: Path) -> None:
    path = EXAMPLES / "positions" / "wedge-beats-blue-8.json"
    assert run("claim", str(path)).exit_code == 2
    r = run("claim", str(path), "--flag", "1", "--player", "north", "--mine", "R1 R2 R3")
    assert r.exit_code == 2 and "--mine does not go with a POSITION" in r.output
    r = run("claim", str(path), "--flag", "2", "--player", "north")
    assert r.exit_code == 2 and "a claim needs a complete formation" in r.output
    cert = tmp_path / "c.json"
    r = run("claim", str(path), "--flag", "1", "--player", "north", "--certificate", str(cert))
    assert r.exit_code == 0 and run("verify", str(cert), "--deep").exit_code == 0


def test_show_draws_positions_and_records() -> None:
    r = run("show", str(EXAMPLES / "positions" / "wedge-beats-blue-8.json"))
    assert r.exit_code == 0 and "Flag" in r.output and "B8" in r.output
    r = run("show", str(GAME), "--turn", "10", "--player", "north")
    assert r.exit_code == 0 and "turn 10, south to move" in r.output
    assert "hand 7 cards" in r.output  # south's hand is hidden from north
    r = run("show", str(EXAMPLES / "positions" / "wedge-beats-blue-8.json"), "--turn", "3")
    assert r.exit_code == 2
    # past the record's end: bad input naming the range, not the last turn drawn silently
    r = run("show", str(GAME), "--turn", "999")
    assert r.exit_code == 2 and "--turn 999" in r.output and "turns 1-" in r.output
    # the seat has one name in every command; the old one still works, unlisted
    r = run("show", str(GAME), "--turn", "10", "--seat", "north")
    assert r.exit_code == 0 and "hand 7 cards" in r.output
    assert "--player" not in run("show", "--help").output
    # other games' position files: named as such, not read as a broken Battle Line one
    r = run("show", str(EXAMPLES / "battleplan" / "kill-adjacent.json"))
    assert r.exit_code == 2 and "cannot draw a 'battleplan' position" in r.output
    r = run("show", str(EXAMPLES / "lines_of_battle" / "odds.json"))
    assert r.exit_code == 2 and "not a Battle Line position" in r.output


def test_match_scoring_and_the_winner_starts_the_next_game() -> None:
    # docs/rulings.md 15: winner 5 points, loser 1 per flag held; the winner starts the next game.
    from battlejudge.engines.battleline.match import Match

    match = Match()
    for seed in range(3):
        game = match.new_game()
        assert game.first == match.next_first
        random_playout(game, random.Random(seed))
        before = list(match.points)
        match.add(game)
        loser = 1 - game.winner
        assert match.points[game.winner] - before[game.winner] == 5
        assert match.points[loser] - before[loser] == len(game.flags_held(loser))
        assert match.next_first == game.winner


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_replay_never_crashes_on_a_damaged_record(data: st.DataObject) -> None:
    lines = GAME.read_text().splitlines()
    k = data.draw(st.integers(0, len(lines) - 1), label="line")
    junk = data.draw(st.text(alphabet='RBGY0123456789@>|: .claimdrwpsnotfgu[]"', max_size=30))
    how = data.draw(st.sampled_from(["replace", "append", "delete"]), label="how")
    if how == "replace":
        lines[k] = junk
    elif how == "append":
        lines[k] += junk
    else:
        del lines[k]
    r = CliRunner().invoke(cli, ["replay", "-"], input="\n".join(lines) + "\n")
    assert r.exit_code in (0, 1, 2), r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)


def test_show_json_is_a_position_that_hides_the_other_hand() -> None:
    r = run("show", str(GAME), "--turn", "10", "--player", "north", "--json")
    assert r.exit_code == 0
    pos = positions.PositionFile.model_validate_json(r.output)
    assert pos.hands is not None and len(pos.hands.north) == 7 and pos.hands.south == []
    assert pos.decks is None and pos.turn == 10
    full = positions.PositionFile.model_validate_json(run("show", str(GAME), "--json").output)
    assert full.hands is not None and full.hands.south
