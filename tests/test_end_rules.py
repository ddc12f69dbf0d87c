"""Each game's end rules, on small constructed positions, where the existing engine tests
leave them out. Already covered elsewhere, and not repeated here: Battle Line's
Breakthrough on every triple, Envelopment, non-adjacent and wrap-around flags, forfeit
and both stalemate settings (test_battleline_rules.py); the BattlePlan Win Zone
(test_battleplan_rules.py); Lines of Battle's last unit, Commander and turn limit
(test_lines_of_battle_engine.py); Force Duel's last unit lost, battle limit and deck
exhaustion with its reshuffle (test_force_duel_engine.py).

Sources, cited in each test: the rules texts in /work/shared/seeds/ (000 Battle Line,
001 Nine Circles, 002 BattlePlan, 003 Lines of Battle, 004 Force Duel) and
docs/rulings.md (15, 17), docs/battleplan.md (its round limit house rule).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Literal

import pytest
from battleline_helpers import act, build, legal
from force_duel_helpers import act as duel_act
from force_duel_helpers import rigged, small_cards
from lines_of_battle_helpers import play, state

from battlejudge.engines.battleline.state import DRAW_GAME, NORTH, OVER, SOUTH
from battlejudge.engines.battleplan.state import DRAW_RESULT as PLAN_DRAW
from battlejudge.engines.battleplan.state import new_game as new_plan
from battlejudge.engines.game import TERMINAL

WEAK_SOUTH = "Y2 G5 B9"
"""A complete Host at South's side that North's Wedges beat: claimable at once."""
NO_TACTICS = {
    "north": "alexander cavalry fog scout traitor",
    "south": "darius shield mud redeploy deserter",
}

# -- Battle Line and Nine Circles ---------------------------------------------------------


@pytest.mark.parametrize("theme", ["battleline", "nine-circles"])
def test_empty_decks_end_nothing(theme: Literal["battleline", "nine-circles"]) -> None:
    # Rulebook (seed 000, Overview): "When both decks run out, no further cards can be drawn,
    # but play continues." Nine Circles (seed 001, step 3): "If no card can be drawn, the
    # game continues." The turn passes without a draw; the hands shrink.
    s = build(
        {1: {"north": "R1 R2 R3", "south": "O1", "claimed": "north"}},
        hands={"north": "R5 R6", "south": "Y5 Y6"},
        discards=NO_TACTICS,
        rest="discards",
        theme=theme,
    )
    assert s.deck_size(0) == s.deck_size(1) == 0
    act(s, "R5@2")
    assert s.phase != OVER and s.to_move == SOUTH and s.winner == -1
    assert len(s.hands[NORTH]) == 1
    assert "Y5@3" in legal(s)
    act(s, "Y5@3")
    assert s.phase != OVER and s.to_move == NORTH and len(s.hands[SOUTH]) == 1


def test_nine_circles_three_adjacent_circles_win() -> None:
    # Nine Circles (seed 001, Goal and step 2): "The first player to capture 5 circles or 3
    # adjacent circles wins"; "the game immediately ends". Circles 1 and 2 held, 4 claimed
    # first (not adjacent), then 3.
    s = build(
        {
            1: {"north": "R1 R2 R3", "south": "O1", "claimed": "north"},
            2: {"north": "O4 O5 O6", "south": "Y1", "claimed": "north"},
            3: {"north": "R8 R9 R10", "south": WEAK_SOUTH},
            4: {"north": "P8 P9 P10", "south": "G1 B1"},
            5: {"north": "B4 B5 B6", "south": "P1 P2"},
        },
        hands={"north": "R4 R5 R6 R7", "south": "P3 P4 P5 P6"},
        theme="nine-circles",
    )
    assert s.naming.flag == "circle"
    act(s, "claim 4")
    assert s.phase != OVER and s.winner == -1
    act(s, "claim 3")
    assert s.phase == OVER and s.current_player() == TERMINAL
    assert s.winner == NORTH and s.end_reason == "breakthrough"
    assert s.legal_actions() == [] and s.returns() == [1.0, -1.0]


def test_nine_circles_five_circles_win() -> None:
    # Nine Circles (seed 001): 5 circles in total win, none three adjacent here; "winner
    # gets 5 points, loser gets as many points as flags claimed" (docs/rulings.md 15).
    s = build(
        {
            1: {"north": "R1 R2 R3", "south": "O1", "claimed": "north"},
            2: {"north": "G2", "south": "Y8 Y9 Y10", "claimed": "south"},
            3: {"north": "O4 O5 O6", "south": "Y1", "claimed": "north"},
            5: {"north": "B4 B5 B6", "south": "P1", "claimed": "north"},
            7: {"north": "G7 G8 G9", "south": "B1", "claimed": "north"},
            9: {"north": "R8 R9 R10", "south": WEAK_SOUTH},
        },
        hands={"north": "R4 R5 R6 R7", "south": "P3 P4 P5 P6"},
        theme="nine-circles",
    )
    assert s.winner == -1
    act(s, "claim 9")
    assert s.phase == OVER and s.winner == NORTH and s.end_reason == "envelopment"
    assert s.flags_held(NORTH) == [1, 3, 5, 7, 9] and s.match_points() == (5, 1)


def test_four_flags_do_not_end_the_game() -> None:
    # docs/rulings.md 15: five flags, or three adjacent; four scattered flags are neither.
    s = build(
        {
            1: {"north": "R1 R2 R3", "south": "O1", "claimed": "north"},
            3: {"north": "O4 O5 O6", "south": "Y1", "claimed": "north"},
            5: {"north": "B4 B5 B6", "south": "P1", "claimed": "north"},
            7: {"north": "R8 R9 R10", "south": WEAK_SOUTH},
        },
        hands={"north": "R4 R5 R6 R7", "south": "P3 P4 P5 P6"},
    )
    act(s, "claim 7")
    assert s.flags_held(NORTH) == [1, 3, 5, 7]
    assert s.phase != OVER and s.winner == -1 and s.end_reason is None


def test_a_dead_position_with_equal_flags_is_a_draw() -> None:
    # docs/rulings.md 17 (stalemate=dead): a game that can no longer change ends after two
    # turns of nothing but passing; equal flags are a draw.
    s = build(
        {
            1: {"north": "R1 R2 R3", "south": "O1", "claimed": "north"},
            2: {"north": "O2", "south": "Y1 Y2 Y3", "claimed": "south"},
        },
        discards=NO_TACTICS,
        rest="discards",
    )
    act(s, "pass", "pass")
    assert s.phase == OVER and s.winner == DRAW_GAME and s.end_reason == "stalemate"
    assert s.returns() == [0.0, 0.0]


# -- BattlePlan ----------------------------------------------------------------------------


@pytest.mark.parametrize("rounds", [1, 2])
def test_battleplan_round_limit_is_a_draw(rounds: int) -> None:
    # Seed 002 ends a game only in the Win Zone; docs/battleplan.md, house rule "Round
    # limit" (option rounds): if nobody has won after that many rounds, a draw. Nobody can
    # carry the flag home in two rounds from the start.
    s = new_plan({"rounds": str(rounds)})
    rng = random.Random(rounds)
    while not s.is_terminal():
        assert s.round <= rounds
        s.apply_action(rng.choice(s.legal_actions()))
    assert s.round == rounds and s.winner == PLAN_DRAW and s.returns() == [0.0, 0.0]


# -- Lines of Battle --------------------------------------------------------------------------


def test_lines_of_battle_victory_needs_every_enemy_unit() -> None:
    # Seed 003, Overview: "Victory is achieved by destroying all enemy units": one enemy
    # unit left standing and the game goes on. Side attacks destroy without a roll (LB4).
    s = state("3x3", 0, "p1 cavalry B1 N", "p1 cavalry A2 E", "p2 archer B2 E", "p2 archer C3 S")
    play(s, "combat", "B1xB2")
    assert not s.is_terminal() and s.winner == -1
    assert len(list(s.units_of(1))) == 1


# -- Force Duel -------------------------------------------------------------------------------


def test_force_duel_deck_exhaustion_can_end_the_game(tmp_path: Path) -> None:
    # Seed 004: a player whose battle cards are all out of the game "loses two units", and
    # "the first player that loses all his units has lost the game". p1 (2 units) loses one
    # in the first battle, then plays his last battle card: the exhaustion takes his last
    # unit and the game ends there, without the reshuffle.
    small = small_cards(tmp_path)
    hands = (["Bow Bonus", "Bows Only", "Unit Return"], ["Two-Card Limit", "Stand Firm", "Ambush"])
    s = rigged(hands, (["sword5+1", "sword5+1", "bow3+2", "bow6-1"], []), cards=small, units=2)
    duel_act(s, "sword", "Bow Bonus", "Stand Firm", "p1 draws Shield Wall")
    duel_act(s, "p2 draws Decisive Blow", "sword", "3", "1")
    assert s.alive == [1, 2] and s.battle_cards(0) == 1
    duel_act(s, "sword", "Ambush", "Bows Only", "p2 draws Stand Firm", "p1 draws Bow Bonus")
    duel_act(s, "bow", "1", "1")
    assert s.last is not None and s.last.exhausted == (0,)
    assert s.alive[0] == 0 and s.is_terminal() and s.winner == 1
    assert s.returns() == [-1.0, 1.0] and s.legal_actions() == []
