"""best_formation (rules code) against the oracle's own evaluation over every wild identity."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from battlejudge.solver import battleline as bl
from battlejudge.solver.battleline import oracle
from battlejudge.solver.errors import RuleError

TROOPS = [bl.Card(t) for t in range(60)]
WILDS = [bl.Card.parse(w) for w in ("alexander", "cavalry", "shield")]


@st.composite
def hands(draw: st.DrawFn) -> tuple[list[bl.Card], bool, bool]:
    mud = draw(st.booleans())
    fog = draw(st.booleans())
    size = 4 if mud else 3
    wilds = draw(st.lists(st.sampled_from(WILDS), unique=True, max_size=3))[:size]
    troops = draw(
        st.lists(
            st.sampled_from(TROOPS),
            unique=True,
            min_size=size - len(wilds),
            max_size=size - len(wilds),
        )
    )
    return draw(st.permutations(troops + wilds)), mud, fog


@given(hands())
def test_best_formation_matches_the_oracle(hand: tuple[list[bl.Card], bool, bool]) -> None:
    cards, mud, fog = hand
    f = bl.best_formation(cards, mud=mud, fog=fog)
    assert f.strength == oracle.strength(cards, fog)
    # The chosen wild identities really make that formation.
    identities = [(t.troop // 10, t.troop % 10 + 1) for _, t in f.identities]
    assert oracle.classify(identities, fog) == f.strength
    assert [c for c, _ in f.identities] == list(cards)


# -- impossible hands (issue 21): a card twice, or two Leaders, never make a formation ---
@given(
    st.lists(st.integers(0, 63).map(lambda c: bl.CARDS[c]), min_size=3, max_size=4),
)
def test_impossible_hands_are_refused(cards: list[bl.Card]) -> None:
    """Every card exists once, and a side holds at most one Leader (docs/rulings.md 3):
    best_formation refuses any other hand, naming the offending cards, and evaluates
    every possible one."""
    mud = len(cards) == 4
    twice = len(set(cards)) < len(cards)
    leaders = sum(1 for c in cards if c.wild == "leader") > 1
    if twice or leaders:
        with pytest.raises(RuleError, match=r"given twice|two Leaders"):
            bl.best_formation(cards, mud=mud)
    else:
        assert bl.best_formation(cards, mud=mud).strength is not None


@pytest.mark.parametrize(
    ("hand", "message"),
    [
        ("R1 R1 R1", "card R1 is given twice"),
        ("alexander alexander alexander", "card alexander is given twice"),
        ("alexander darius R5", "two Leaders (alexander darius)"),
        ("cavalry cavalry R8", "card cavalry is given twice"),
    ],
)
def test_formation_command_refuses_impossible_hands(hand: str, message: str) -> None:
    # The hands a newcomer tried (issue 21): each was named as a formation, exit 0.
    from click.testing import CliRunner

    from battlejudge.cli.main import cli

    r = CliRunner().invoke(cli, ["formation", hand])
    assert r.exit_code == 2
    assert message in r.output and "Traceback" not in r.output
