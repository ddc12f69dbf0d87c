"""The uniform fast path of ``sample_chance`` draws exactly what the general path draws:
the same outcome from the same random stream (so seeds keep their games)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from battlejudge.engines.battleline.state import new_game
from battlejudge.engines.game import CHANCE, sample_chance


def _general(state, rng):  # type: ignore[no-untyped-def]
    """The path every game takes without a fast path: chance_outcomes' Fractions."""
    outcomes = state.chance_outcomes()
    return rng.choices([a for a, _ in outcomes], weights=[float(p) for _, p in outcomes])[0]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.integers(0, 300))
def test_uniform_fast_path_draws_as_the_general_path(seed: int, steps: int) -> None:
    rng = random.Random(seed)
    state = new_game()
    chance_nodes = 0
    for _ in range(steps):
        if state.is_terminal():
            break
        if state.current_player() == CHANCE:
            chance_nodes += 1
            assert state.uniform_chance() == [a for a, _ in state.chance_outcomes()]
            k = rng.random()
            a, b = random.Random(k), random.Random(k)
            fast = sample_chance(state, a)
            assert fast == _general(state, b)
            assert a.getstate() == b.getstate()  # the same random numbers consumed
            state.apply_action(fast)
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    if steps > 10:
        assert chance_nodes > 0
