"""The Battle Line Python API an engine author meets (issue 21, item 5; python-chess is
the model): one import, a boolean legality check, a child state (undo is keeping the
parent), an outcome with its termination reason, wild-card identities as cards, the
position-to-question helper, and an unknown card named as such."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from battlejudge.engines import battleline as bl
from battlejudge.engines.game import sample_chance
from battlejudge.solver import battleline as solver
from battlejudge.solver.errors import InputError, RuleError

WEDGE = str(Path(__file__).resolve().parent.parent / "examples/positions/wedge-beats-blue-8.json")


def dealt(seed: int = 1) -> bl.BattleLineState:
    state = bl.new_game()
    rng = random.Random(seed)
    while state.current_player() == -1:
        state.apply_action(sample_chance(state, rng))
    return state


def test_every_exported_name_loads() -> None:
    for name in bl.__all__:
        assert getattr(bl, name) is not None, name


def test_importing_the_package_loads_nothing_else() -> None:
    code = (
        "import sys, battlejudge.engines.battleline as b; "
        "print(sorted(m for m in sys.modules if m.startswith('battlejudge.engines.battleline.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_is_legal_and_child() -> None:
    state = dealt()
    legal = state.legal_actions()
    assert all(state.is_legal(a) for a in legal)
    move = legal[0]
    assert not state.is_legal(bl.Action.parse("claim 1"))
    before = state.serialize()
    child = state.child(move)
    assert state.serialize() == before  # the parent is the undo
    assert child.history[-1] == move and len(child.history) == len(state.history) + 1
    with pytest.raises(bl.IllegalActionError):
        state.child(bl.Action.parse("claim 1"))


def test_outcome_names_the_termination() -> None:
    state = dealt(3)
    assert state.outcome() is None
    rng = random.Random(3)
    while not state.is_terminal():
        if state.current_player() == -1:
            state.apply_action(sample_chance(state, rng))
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    outcome = state.outcome()
    assert outcome is not None and outcome.termination in bl.END_REASONS
    assert outcome.winner == bl.PLAYERS[state.winner]
    assert outcome.result() in (
        "north",
        "south",
        "draw",
    )


def test_wild_identities_are_cards() -> None:
    f = solver.best_formation(["B8", "alexander", "B10"])
    assert f.identities[1] == (solver.Card.parse("alexander"), solver.Card.parse("B9"))
    assert all(isinstance(t, solver.Card) and t.is_troop for _, t in f.identities)


def test_position_to_question() -> None:
    q = bl.claim_question(WEDGE, 1, "north")
    assert q == solver.ClaimQuestion(mine="R4 R5 R3", theirs=["B8"], seen="B7 B10")
    with pytest.raises(InputError, match="flag must be a number 1-9, got 0"):
        bl.claim_question(WEDGE, 0, "north")
    state = bl.read_state(WEDGE)
    assert bl.claim_question(state, 1, 0) == q
    state.flags[0].claimed_by = 0
    with pytest.raises(RuleError, match="flag 1 is already claimed by north"):
        bl.claim_question(state, 1, "north")


def test_parse_action_names_an_unknown_card() -> None:
    state = dealt()
    with pytest.raises(InputError, match=r"unknown card 'R11'"):
        state.parse_action("R11@1")
    with pytest.raises(InputError, match=r"'10' in 'R5@10' is not a flag number 1-9"):
        state.parse_action("R5@10")


def test_flags_are_numbered_as_in_the_notation() -> None:
    """Issue 21: flags were 0-based in Python and 1-based in the notation."""
    assert bl.Action.parse("R7@3").flag == 3
    assert bl.Action.parse("redeploy R7@3>5").source == 3
    assert bl.Action.parse("claim 9").flag == 9
    state = dealt()
    assert state.flag(3) is state.flags[2]
    for action in state.legal_actions():
        assert 1 <= action.flag <= 9 and str(action).endswith(f"@{action.flag}")
    with pytest.raises(bl.IllegalActionError, match="there is no flag 0"):
        state.flag(0)
