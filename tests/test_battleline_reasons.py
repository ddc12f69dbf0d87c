"""An illegal action is refused with the rule it breaks (issue 21, item 7): the engine's
``why_illegal`` names the ruling, and ``battlejudge replay`` prints that reason, not
"not legal now"."""

from __future__ import annotations

from pathlib import Path

import pytest
from battleline_helpers import build
from click.testing import CliRunner

from battlejudge.cli.main import cli
from battlejudge.engines.battleline.actions import Action
from battlejudge.engines.battleline.state import BattleLineState
from battlejudge.engines.game import IllegalActionError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def reason(state: BattleLineState, token: str) -> str:
    action = Action.parse(token)
    assert action not in state.legal_actions()
    with pytest.raises(IllegalActionError) as e:
        state.apply_action(action)
    assert str(e.value) == state.why_illegal(action)
    return str(e.value)


def test_a_card_not_in_hand() -> None:
    s = build({1: {"north": "R1"}}, hands={"north": "B5 B6", "south": "G1"})
    assert reason(s, "R9@2") == "R9@2: R9 is not in north's hand"


def test_a_full_side_and_a_claimed_flag() -> None:
    s = build(
        {1: {"north": "R1 R2 R3"}, 2: {"north": "Y1 Y2 Y3", "claimed": "north"}},
        hands={"north": "B5 B6", "south": "G1"},
    )
    assert reason(s, "B5@1") == "B5@1: north's side of flag 1 is full (3 of 3 cards)"
    assert "flag 2 is claimed" in reason(s, "B5@2")


def test_the_tactics_limit_names_ruling_11() -> None:
    s = build(
        {1: {"north": "cavalry"}},
        hands={"north": "B5 shield", "south": "G1"},
        tactics_played={"north": 1, "south": 0},
    )
    why = reason(s, "shield@2")
    assert "docs/rulings.md 11" in why and "played 1 tactics and his opponent 0" in why


def test_a_second_leader_names_ruling_3() -> None:
    s = build(
        {1: {"north": "alexander"}},
        hands={"north": "B5 darius", "south": "G1"},
        tactics_played={"north": 1, "south": 1},
    )
    assert "docs/rulings.md 3" in reason(s, "darius@2")


def test_passing_while_a_troop_can_be_played_names_ruling_12() -> None:
    s = build(hands={"north": "B5", "south": "G1"})
    assert "docs/rulings.md 12" in reason(s, "pass")


def test_traitor_takes_troops_only() -> None:
    s = build(
        {1: {"south": "cavalry R5"}},
        hands={"north": "B5 traitor", "south": "G1"},
        tactics_played={"north": 0, "south": 1},
    )
    assert "docs/rulings.md 9" in reason(s, "traitor cavalry@1>2")


def test_fog_and_mud_stay_when_not_removable() -> None:
    s = build(
        {1: {"south": "R5", "env": "fog:south:1"}},
        hands={"north": "B5 deserter", "south": "G1"},
        tactics_played={"north": 0, "south": 1},
        environment_removable=False,
    )
    assert "docs/rulings.md 10" in reason(s, "deserter fog@1")


def test_a_draw_with_a_full_hand_or_in_the_wrong_step() -> None:
    s = build(hands={"north": "B5", "south": "G1"})
    assert "not at this step of the turn (now: play" in reason(s, "draw troop")


def test_a_claim_out_of_its_time_names_ruling_14() -> None:
    s = build(
        {1: {"north": "R1 R2 R3", "south": "B1 B2 B4"}},
        hands={"north": "B5 B6", "south": "G1"},
        claim_timing="advanced",
    )
    s.apply_action(Action.parse("done"))
    s.apply_action(Action.parse("B5@2"))
    assert "docs/rulings.md 14" in reason(s, "claim 1")


def test_replay_names_the_rule(tmp_path: Path) -> None:
    """A record whose move breaks a rule: replay exits 1 and prints the reason."""
    text = (EXAMPLES / "games" / "every-tactic.blg").read_text()
    lines = text.splitlines()
    i = next(n for n, line in enumerate(lines) if line.startswith("1. N:"))
    # North's first move is replaced by a card he does not hold.
    head, _, rest = lines[i].partition(": ")
    _, _, tail = rest.partition(" | ")
    lines[i] = f"{head}: P10@1 | {tail}"
    path = tmp_path / "g.blg"
    path.write_text("\n".join(lines) + "\n")
    r = CliRunner().invoke(cli, ["replay", str(path)])
    assert r.exit_code == 1, r.output
    assert "illegal: P10@1: P10 is not in north's hand" in r.output
    assert "not legal now" not in r.output
