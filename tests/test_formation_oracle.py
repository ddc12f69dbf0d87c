"""best_formation (rules code) against the oracle's own evaluation over every wild identity."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from battlejudge.solver import battleline as bl
from battlejudge.solver.battleline import oracle

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
    identities = [(t // 10, t % 10 + 1) for _, t in f.identities]
    assert oracle.classify(identities, fog) == f.strength
    assert [c for c, _ in f.identities] == list(cards)
