"""Direct tests of the Force card choices: ``battle.force_choices`` (the rule) and
``ForceDuelState.force_choices`` (the rule on a game's position).

Sources: the Force Duel rules text (/work/shared/seeds/004_23a3dd99504c6934.txt),
section "Battle": "In every battle you can choose to use up to 3 battle cards", in deck
order, shown with one of the three Force cards ("1", "2" or "3 cards"); its strategy card
"You force your enemy to use max 2 cards in the battle" (Two-Card Limit); and the house
card set (engines/force_duel/house.toml, docs/force_duel.md via docs/rulings.md "Force
Duel"): Cavalry (a unit card, both players at most 2), Full Commitment (the enemy at
least 2), and the house rule that a limit wins over a minimum. Engine scenarios around
these cards (Two-Card Limit in a game, Cavalry in play) are in test_force_duel_engine.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from force_duel_helpers import act, rigged, small_cards

from battlejudge.engines.force_duel.battle import Held, force_choices
from battlejudge.engines.force_duel.cards import MAX_FORCE, MaxCards, MinCards, Points, WinTies
from battlejudge.engines.force_duel.state import FORCE_BASE

LIMIT_2 = MaxCards(kind="max_cards", n=2)
LIMIT_1 = MaxCards(kind="max_cards", n=1)
AT_LEAST_2 = MinCards(kind="min_cards", n=2)
AT_LEAST_3 = MinCards(kind="min_cards", n=3)


def test_three_force_cards() -> None:
    # Seed, "Battle": up to 3 battle cards, one Force card each for 1, 2 and 3.
    assert MAX_FORCE == 3
    assert force_choices(Held(), 10) == (1, 2, 3)
    assert force_choices(Held(), 3) == (1, 2, 3)


@pytest.mark.parametrize(("deck", "choices"), [(2, (1, 2)), (1, (1,))])
def test_no_more_cards_than_the_deck_holds(deck: int, choices: tuple[int, ...]) -> None:
    # Seed, "Battle": the cards used are the first one, two or three of the deck, so a
    # deck of fewer battle cards allows fewer.
    assert force_choices(Held(), deck) == choices


@pytest.mark.parametrize(
    "enemy",
    [
        Held(strategy=(LIMIT_2,)),  # seed: Two-Card Limit, "max 2 cards"
        Held(units=(LIMIT_2,)),  # house set: Cavalry in play
        Held(strategy=(LIMIT_2,), units=(LIMIT_2,)),  # both: still 2
    ],
)
def test_the_enemys_limit(enemy: Held) -> None:
    assert force_choices(enemy, 10) == (1, 2)


def test_the_lowest_limit_counts() -> None:
    # Every limit the enemy holds applies, so the lowest one binds.
    assert force_choices(Held(strategy=(LIMIT_2,), units=(LIMIT_1,)), 10) == (1,)
    assert force_choices(Held(strategy=(LIMIT_1,), units=(LIMIT_2,)), 10) == (1,)


def test_the_enemys_minimum() -> None:
    # House set: Full Commitment, "your enemy must use at least 2 battle cards".
    assert force_choices(Held(strategy=(AT_LEAST_2,)), 10) == (2, 3)
    assert force_choices(Held(strategy=(AT_LEAST_3,)), 10) == (3,)
    assert force_choices(Held(strategy=(AT_LEAST_2,), units=(AT_LEAST_3,)), 10) == (3,)


@pytest.mark.parametrize(
    ("enemy", "deck", "choices"),
    [
        # House rule (battle.force_choices): a limit wins over a minimum...
        (Held(strategy=(AT_LEAST_3,), units=(LIMIT_2,)), 10, (2,)),
        (Held(strategy=(AT_LEAST_2,), units=(LIMIT_1,)), 10, (1,)),
        # ...and so does the deck: a player cannot show more cards than he has.
        (Held(strategy=(AT_LEAST_2,)), 1, (1,)),
        (Held(strategy=(AT_LEAST_3,)), 2, (2,)),
        (Held(strategy=(AT_LEAST_2,), units=(LIMIT_2,)), 10, (2,)),
    ],
)
def test_a_limit_wins_over_a_minimum(enemy: Held, deck: int, choices: tuple[int, ...]) -> None:
    assert force_choices(enemy, deck) == choices


def test_other_effects_leave_the_choice_alone() -> None:
    enemy = Held(strategy=(WinTies(kind="win_ties"),), units=(Points(kind="points", points=2),))
    assert force_choices(enemy, 10) == (1, 2, 3)


# -- on a game's position ----------------------------------------------------------------

HANDS = (
    ["Bow Bonus", "Bows Only", "Unit Return"],
    ["Full Commitment", "Shield Wall", "Reinforcements"],
)


def test_state_uses_the_enemys_cards_not_the_players_own() -> None:
    # p2 plays Full Commitment: p1 must show 2 or 3; p2 himself is not bound by it.
    s = rigged(HANDS, (["bow5+1"], ["bow5+1"]))
    act(s, "bow", "Unit Return", "Full Commitment", "p1 draws Ambush", "p2 draws Overwhelm")
    act(s, "bow")
    for p in (0, 1, "p1", "p2"):
        seat = p if isinstance(p, int) else ("p1", "p2").index(p)
        held = s.held()[1 - seat]
        assert s.force_choices(p) == force_choices(held, s.battle_cards(p))
    assert s.force_choices("p1") == (2, 3)
    assert s.force_choices("p2") == (1, 2, 3)
    assert s.actor == 0 and s.legal_actions() == [FORCE_BASE + 2, FORCE_BASE + 3]
    act(s, "force 3")
    assert s.legal_actions() == [FORCE_BASE + k for k in (1, 2, 3)]


def test_state_caps_the_choice_at_the_battle_cards_left(tmp_path: Path) -> None:
    # Small card set: four battle cards a deck. After a battle of three, p1 has one left,
    # and Cavalry (both players at most 2) has come into play: p1 may show 1 only.
    small = small_cards(tmp_path)
    hands = (["Bow Bonus", "Bows Only", "Unit Return"], ["Two-Card Limit", "Stand Firm", "Ambush"])
    s = rigged(hands, (["sword5+1", "sword5+1", "bow3+2", "bow6-1"], []), cards=small, units=6)
    act(s, "sword", "Bow Bonus", "Stand Firm", "p1 draws Shield Wall", "p2 draws Decisive Blow")
    act(s, "sword", "3", "1")
    assert s.battle_cards(0) == 1
    act(s, "sword", "Ambush", "Bows Only", "p2 draws Stand Firm", "p1 draws Bow Bonus", "bow")
    assert s.force_choices(0) == (1,)
    assert s.force_choices(1) == (1, 2)  # Cavalry binds him too
    assert s.actor == 1 and s.legal_actions() == [FORCE_BASE + 1, FORCE_BASE + 2]
    act(s, "2")
    assert s.actor == 0 and s.legal_actions() == [FORCE_BASE + 1]
