"""``battlejudge play`` tells the human the card he drew and confirms every claim with its
checked proof, and shows a legend of the table (issue 21)."""

from __future__ import annotations

from pathlib import Path

from battleline_helpers import build
from click.testing import CliRunner

from battlejudge.cli.games import CHOICES_LISTED, _play_human, follow_up
from battlejudge.cli.main import cli
from battlejudge.engines.battleline.actions import Action
from battlejudge.engines.battleline.cards import TACTIC_CARDS, card_name
from battlejudge.engines.battleline.game import LEGEND, narrate
from battlejudge.engines.battleline.state import NORTH, SOUTH
from battlejudge.engines.games import get_game

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_a_claim_is_confirmed_with_its_proof() -> None:
    s = build(
        {1: {"north": "R4 R5 R3", "south": "B8"}, 2: {"north": "B7 B10"}},
        hands={"north": "G1 G2", "south": "Y1"},
        settle=False,
    )
    claim = Action.parse("claim 1")
    s.apply_action(claim)
    told = narrate(s, claim, NORTH)
    assert told is not None
    assert told.startswith("You claimed flag 1; the claim holds:")
    assert "Blue 7 and Blue 10 are face up" in told
    assert "blocking cards: B7 B10" in told and "verified by dratify" in told
    assert narrate(s, claim, SOUTH).startswith("North claimed flag 1")  # type: ignore[union-attr]


def test_play_announces_the_drawn_card_and_has_a_legend() -> None:
    r = CliRunner().invoke(
        cli, ["play", "--seed", "3", "--bot", "random"], input="R1@1\ndraw troop\nlegend\nquit\n"
    )
    assert r.exit_code == 0, r.output
    assert "You drew B1." in r.output
    assert r.output.count(LEGEND) == 2  # at the start, and when asked
    assert "chance:" not in r.output


def test_play_says_what_is_due_when_the_human_acts_again() -> None:
    """Issue 37: after a play nothing said a draw was due. The line comes from the legal
    actions, once after the play, and not at the start of a turn."""
    r = CliRunner().invoke(
        cli, ["play", "--seed", "3", "--bot", "random"], input="R1@1\ndraw troop\nquit\n"
    )
    assert r.exit_code == 0, r.output
    due = "Still your move: 'draw troop' or 'draw tactics'."
    assert r.output.count(due) == 1  # three prompts: turn 1, after R1@1, turn 3
    assert r.output.count("Still your move") == 1
    assert r.output.index("north     R1") < r.output.index(due) < r.output.index("You drew B1.")


def test_play_follow_up_of_another_game() -> None:
    """Generic code: Force Duel's defender puts his strategy down, chance draws, and he
    picks a weapon next, told in Force Duel's own notation."""
    r = CliRunner().invoke(
        cli,
        ["play", "--game", "force-duel", "--seed", "3", "--bot", "random"],
        input="play Two-Card Limit\nquit\n",
    )
    assert r.exit_code == 0, r.output
    assert "Still your move: 'weapon sword', 'weapon bow' or 'weapon spear'." in r.output


def test_follow_up_lists_the_legal_actions_it_is_given() -> None:
    tactics = [card_name(c) for c in TACTIC_CARDS]  # all discarded: the tactics deck is empty
    only_troops = build(
        hands={"north": "R1 R2", "south": "Y1"},
        troop_deck="G5 G6",
        discards={"north": " ".join(tactics[0::2]), "south": " ".join(tactics[1::2])},
        rest="discards",
    )
    only_troops.apply_action(Action.parse("R1@1"))
    assert [str(a) for a in only_troops.legal_actions()] == ["draw troop"]  # no tactics left
    assert follow_up(only_troops) == "Still your move: 'draw troop'."
    playing = build(hands={"north": "R1 R2 R3", "south": "Y1"}, troop_deck="G5 G6")
    notes = [playing.action_to_string(a) for a in playing.legal_actions()]
    assert len(notes) > CHOICES_LISTED
    assert follow_up(playing) == (
        f"Still your move: one of {len(notes)} actions, such as '{notes[0]}', "
        f"'{notes[1]}', '{notes[2]}' ('moves' lists them all)."
    )


def test_every_step_of_a_scout_says_what_comes_next() -> None:
    """A Scout is four more steps of the same turn (three draws, then two returns): each is
    told, from the legal actions of that step. Played on a built table through the play
    loop, with CliRunner's scripted input."""
    state = build(hands={"north": "R1 R2 scout", "south": "Y1 Y2"})
    info = get_game("battleline")
    script = "scout\ndraw troop\ndraw tactics\ndraw troop\nreturn R1\nquit\n"
    with CliRunner().isolation(input=script) as (out, *_):
        _play_human(info, state, info.make_bot("random", 1), "random", 0, 1)
        told = [line for line in out.getvalue().decode().splitlines() if "Still" in line]
    draw = "Still your move: 'draw troop' or 'draw tactics'."
    assert told == [
        draw,
        draw,
        draw,
        "Still your move: 'return R1', 'return R2', 'return R3', 'return R4' or "
        "'return alexander'.",
        "Still your move: 'return R2', 'return R3', 'return R4' or 'return alexander'.",
    ]
