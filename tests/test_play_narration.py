"""``battlejudge play`` tells the human the card he drew and confirms every claim with its
checked proof, and shows a legend of the table (issue 21)."""

from __future__ import annotations

from pathlib import Path

from battleline_helpers import build
from click.testing import CliRunner

from battlejudge.cli.main import cli
from battlejudge.engines.battleline.actions import Action
from battlejudge.engines.battleline.game import LEGEND, narrate
from battlejudge.engines.battleline.state import NORTH, SOUTH

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
