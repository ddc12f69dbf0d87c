"""The conformance test every game passes (after OpenSpiel's random_sim_test):
random playouts to the end with legal actions sorted and non-empty until terminal,
chance outcomes that sum to one, serialize round trips, clone/apply equivalence, and an
information state that does not change when only hidden information does."""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable
from fractions import Fraction
from typing import Any

from battlejudge.engines.game import CHANCE, GameState, sample_chance


def check_playout(
    make: Callable[[], GameState[Any]],
    deserialize: Callable[[str], GameState[Any]],
    seed: int,
    deep_every: int = 7,
) -> GameState[Any]:
    """Play one seeded random game, checking the interface at every step (and the
    costlier round trips every ``deep_every`` steps). Returns the final state."""
    rng = random.Random(seed)
    state = make()
    steps = 0
    while not state.is_terminal():
        legal = state.legal_actions()
        assert legal, f"seed {seed}: no legal action at step {steps}"
        assert legal == sorted(legal), f"seed {seed}: legal actions not sorted"
        assert len(set(legal)) == len(legal), f"seed {seed}: duplicate legal actions"
        if state.current_player() == CHANCE:
            outcomes = state.chance_outcomes()
            assert sum(p for _, p in outcomes) == Fraction(1)
            assert [a for a, _ in outcomes] == legal
            action: Hashable = sample_chance(state, rng)
        else:
            assert state.chance_outcomes() == []
            action = rng.choice(legal)
        if steps % deep_every == 0:
            text = state.serialize()
            assert deserialize(text).serialize() == text, f"seed {seed}: serialize round trip"
            twin = state.clone()
            twin.apply_action(action)
            state.apply_action(action)
            assert twin.serialize() == state.serialize(), f"seed {seed}: clone/apply differ"
        else:
            state.apply_action(action)
        steps += 1
        assert steps <= state.facts.max_length, f"seed {seed}: longer than max_length"
    assert state.legal_actions() == []
    assert sum(state.returns()) == 0
    return state
