"""The BattlePlan engine passes the generic conformance test over thousands of seeded
games, its notation round-trips, its records replay, and information states hide what a
player may not see."""

from __future__ import annotations

import random

import pytest
from conformance import check_playout

from battlejudge.engines.battleplan.game import GAME
from battlejudge.engines.battleplan.state import (
    BATTLE,
    DRAW_RESULT,
    PLANNING,
    BattlePlanState,
    new_game,
)
from battlejudge.engines.game import CHANCE, TERMINAL
from battlejudge.engines.records import GameRecord, replay
from battlejudge.engines.runner import play_game
from battlejudge.solver.errors import InputError

GAMES = 2000
CHUNK = 250


@pytest.mark.parametrize("start", range(0, GAMES, CHUNK))
def test_conformance_over_seeded_games(start: int) -> None:
    # Short games (the house-rule round limit as an option) keep thousands of playouts
    # fast; every 50th game runs the default 40 rounds.
    ends = set()
    for seed in range(start, start + CHUNK):
        rounds = "40" if seed % 50 == 0 else str(1 + seed % 2)
        state = check_playout(
            lambda r=rounds: new_game({"rounds": r}),
            BattlePlanState.deserialize,
            seed,
            deep_every=97,
        )
        assert isinstance(state, BattlePlanState)
        assert state.winner in (0, 1, DRAW_RESULT)
        assert (
            sum(state.deck)
            + sum(state.discard)
            + sum(map(sum, state.hand))
            + sum(b >= 0 for b in state.buff)
            == 20
        )
        ends.add(state.winner)
    assert DRAW_RESULT in ends


def test_notation_round_trips_on_every_legal_action() -> None:
    rng = random.Random(5)
    checked = 0
    for _ in range(12):
        state = new_game({"rounds": "3"})
        while not state.is_terminal():
            for a in state.legal_actions():
                text = state.action_to_string(a)
                assert state.parse_action(text) == a, text
                assert state.parse_action("  " + text.upper() + " ") == a
                checked += 1
            if state.current_player() == CHANCE:
                outcomes = state.chance_outcomes()
                a = rng.choices([o for o, _ in outcomes], [float(p) for _, p in outcomes])[0]
            else:
                a = rng.choice(state.legal_actions())
            state.apply_action(a)
    assert checked > 1000


def test_short_forms_are_accepted() -> None:
    state = new_game()
    while state.phase != PLANNING:
        legal = state.legal_actions()
        state.apply_action(legal[0])
    assert state.action_to_string(state.parse_action("card r m")) == "card rook move"
    assert state.action_to_string(state.parse_action("Card Rook M")) == "card rook move"
    with pytest.raises(ValueError, match="'card rook jump' is not a legal action"):
        state.parse_action("card rook jump")


def test_records_round_trip_and_replay() -> None:
    for seed in range(4):
        bots = [GAME.make_bot("greedy", seed), GAME.make_bot("random", seed + 1)]
        final, rec = play_game(GAME, bots, seed, {"rounds": "6"})
        text = rec.dumps()
        again = GameRecord.loads(text)
        assert again.dumps() == text
        report = replay(again)
        assert report.sound, report.problem
        assert report.state.serialize() == final.serialize()


def test_a_bad_action_line_is_reported_with_its_line() -> None:
    bots = [GAME.make_bot("random", 1), GAME.make_bot("random", 2)]
    _, rec = play_game(GAME, bots, 9, {"rounds": "1"})
    lines = rec.dumps().splitlines()
    index = next(i for i, line in enumerate(lines) if line.startswith("p1: card"))
    lines[index] = "p1: card rook fly"
    report = replay(GameRecord.loads("\n".join(lines)))
    assert report.problem is not None
    assert report.problem.line == index + 1
    assert report.problem.kind == "illegal-action"


def test_bad_options_are_input_errors() -> None:
    with pytest.raises(InputError, match="rounds='x'"):
        new_game({"rounds": "x"})
    with pytest.raises(InputError, match="no option 'speed'"):
        new_game({"speed": "3"})


def _to_battle(seed: int) -> BattlePlanState:
    state = new_game()
    rng = random.Random(seed)
    while state.phase != BATTLE:
        state.apply_action(rng.choice(state.legal_actions()))
    return state


def _hidden_twin(state: BattlePlanState) -> BattlePlanState:
    """``state`` with only p2's face-down cards (reversed: the caps still hold), his hand
    order and his buff kinds changed."""
    twin = state.clone()
    for g in range(3, 6):
        twin.stacks[g] = twin.stacks[g][::-1]
    twin.hand[1] = twin.hand[1][::-1]
    twin.buff[3:] = [b if b < 0 else (b + 1) % 4 for b in twin.buff[3:]]
    return twin


def test_information_state_hides_the_opponents_stacks_and_hand() -> None:
    # The first battle position (from seed 3 on) where p2 has something hidden to change.
    state, twin = next(
        (s, t)
        for s, t in ((s, _hidden_twin(s)) for s in map(_to_battle, range(3, 40)))
        if t.serialize() != s.serialize()
    )
    assert twin.information_state_string(0) == state.information_state_string(0)
    assert twin.information_state_string(1) != state.information_state_string(1)


def test_the_greedy_bots_finish_games() -> None:
    results = []
    for seed in range(6):
        bots = [GAME.make_bot("greedy", seed), GAME.make_bot("greedy", seed + 100)]
        final, _ = play_game(GAME, bots, seed)
        assert final.current_player() == TERMINAL
        results.append(final.winner)
    assert any(w in (0, 1) for w in results)


def test_greedy_beats_random_more_often_than_not() -> None:
    wins = 0
    for seed in range(8):
        seats = [GAME.make_bot("greedy", seed), GAME.make_bot("random", seed)]
        if seed % 2:
            seats.reverse()
        final, _ = play_game(GAME, seats, seed, {"rounds": "20"})
        wins += final.winner == (seed % 2)
    assert wins >= 5


def test_what_play_tells_a_player_hides_the_other_side_s_plan() -> None:
    # Seed, Plan phase: stack cards and buffs are placed face down; buff draws go to hand.
    from battlejudge.engines.game import sample_chance

    state = GAME.new_game({"rounds": "2"})
    rng = random.Random(11)
    told_cards = {0: 0, 1: 0}
    while not state.is_terminal():
        who = state.current_player()
        action = sample_chance(state, rng) if who == CHANCE else rng.choice(state.legal_actions())
        full = state.action_to_string(action)
        for viewer in (0, 1):
            text = state.public_action_string(action, viewer)
            secret = full.startswith(("card ", "buff ")) and who not in (CHANCE, viewer)
            secret = secret and not full.startswith(("buff before", "buff after", "buff later"))
            secret = secret or (
                full.startswith("draw ") and not full.startswith(f"draw p{viewer + 1}")
            )
            if secret:
                assert text != full and text is not None
                assert not any(n in text for n in ("move", "attack", "defend", "diagonal"))
            else:
                assert text == full
            told_cards[viewer] += secret
        state.apply_action(action)
    assert told_cards[0] > 0 and told_cards[1] > 0
