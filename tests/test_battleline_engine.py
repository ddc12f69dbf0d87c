"""The Battle Line engine passes the generic conformance test over thousands of seeded
games, conserves every card, hides what a player may not see, and plays every tactic."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from conformance import check_playout

from battlejudge.engines.battleline.actions import (
    CLAIM,
    DESERTER,
    PLAY,
    REDEPLOY,
    SCOUT,
    TRAITOR,
)
from battlejudge.engines.battleline.config import RulesConfig
from battlejudge.engines.battleline.state import NORTH, SOUTH, BattleLineState, new_game
from battlejudge.engines.game import CHANCE, random_playout

GAMES = 2000
CHUNK = 100
CONFIGS = [
    RulesConfig(),
    RulesConfig(claim_timing="advanced"),
    RulesConfig(environment_removable=False),
    RulesConfig(theme="nine-circles"),
]


@pytest.mark.parametrize("start", range(0, GAMES, CHUNK))
def test_conformance_over_seeded_games(start: int) -> None:
    tactics: Counter[str] = Counter()
    for seed in range(start, start + CHUNK):
        config = CONFIGS[seed % len(CONFIGS)]
        state = check_playout(lambda c=config: new_game(c), BattleLineState.deserialize, seed)
        assert isinstance(state, BattleLineState)
        assert state.card_count() == 70
        assert state.winner in (NORTH, SOUTH, 2)
        for a in state.history:
            if a.kind == PLAY and a.card >= 60:
                tactics[str(a.card)] += 1
            elif a.kind in (SCOUT, REDEPLOY, DESERTER, TRAITOR):
                tactics[f"guile{a.kind}"] += 1
    # Every tactic is exercised in every chunk of games.
    assert len(tactics) == 10, tactics


def test_every_claim_the_engine_allowed_is_certified() -> None:
    from battlejudge.solver import battleline as bl

    for seed in range(20):
        state = new_game()
        random_playout(state, random.Random(seed))
        claims = [a for a in state.history if a.kind == CLAIM]
        assert len(claims) == len(state.claims)
        for record in state.claims:
            assert record.proof.valid
            assert bl.verify(record.proof) is True


def test_information_state_hides_the_opponents_hand_and_the_decks() -> None:
    state = new_game()
    rng = random.Random(5)
    while state.turn < 6:
        legal = state.legal_actions()
        if state.current_player() == CHANCE:
            state.apply_action(legal[rng.randrange(len(legal))])
        else:
            state.apply_action(rng.choice(legal))
    for viewer in (NORTH, SOUTH):
        info = json.loads(state.information_state_string(viewer))
        other = 1 - viewer
        names = ("north", "south")
        assert info["hands"][names[other]] == len(state.hands[other])
        assert sorted(info["hands"][names[viewer]]) == sorted(
            state.naming.card(c) for c in state.hands[viewer]
        )
        assert "unknown" not in info
        # Changing only the opponent's hidden hand does not change what the viewer knows.
        twin = state.clone()
        hidden = twin.hands[other].pop()
        twin.hands[other].append(twin.unknown[0].pop())
        twin.unknown[0].append(hidden)
        assert twin.information_state_string(viewer) == state.information_state_string(viewer)
        assert twin.information_state_string(other) != state.information_state_string(other)


def test_chance_outcomes_are_exact_and_uniform() -> None:
    state = new_game()
    outcomes = state.chance_outcomes()
    assert len(outcomes) == 60
    assert {p for _, p in outcomes} == {outcomes[0][1]} and outcomes[0][1].denominator == 60


def test_unchecked_and_checked_apply_agree() -> None:
    rng = random.Random(11)
    a, b = new_game(), new_game()
    while not a.is_terminal():
        action = rng.choice(a.legal_actions())
        a.apply_action(action)
        b.apply_action_unchecked(action)
    assert a.serialize() == b.serialize()
