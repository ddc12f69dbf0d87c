"""Force Duel test helpers: rigged deals (through the public chance actions), a small
card set for quick deck exhaustion, and playing actions by their notation."""

from __future__ import annotations

from pathlib import Path

from battlejudge.engines.force_duel.state import (
    DECK_BASE,
    DRAW_BASE,
    FIRST_BASE,
    ForceDuelState,
    new_game,
)

SMALL = """
name = "small"
weapons = ["sword", "bow"]
house_rules = ["test set"]
[rules]
max_battles = 30
[[battle]]
weapon = "sword"
power = 5
extra = 1
count = 2
[[battle]]
weapon = "bow"
power = 3
extra = 2
[[battle]]
weapon = "bow"
power = 6
extra = -1
[[units]]
name = "Cavalry"
who = "both"
effects = [{ kind = "max_cards", n = 2 }]
[[units]]
name = "Knights"
who = "owner"
effects = [{ kind = "points", points = 2 }]
[[strategy]]
name = "Bow Bonus"
effects = [{ kind = "weapon_bonus", points = 2, mine = "bow", theirs = "sword" }]
[[strategy]]
name = "Bows Only"
effects = [{ kind = "force_weapon", weapon = "bow" }]
[[strategy]]
name = "Unit Return"
effects = [{ kind = "recover_units", n = 1 }]
[[strategy]]
name = "Two-Card Limit"
effects = [{ kind = "max_cards", n = 2 }]
[[strategy]]
name = "Stand Firm"
effects = [{ kind = "win_ties" }]
[[strategy]]
name = "Shield Wall"
effects = [{ kind = "shield" }]
[[strategy]]
name = "Ambush"
effects = [{ kind = "count_bonus", points = 3, when = "fewer" }]
[[strategy]]
name = "Decisive Blow"
effects = [{ kind = "extra_loss", n = 1 }]
"""
"""Four battle cards (two sword 5+1) and two unit cards per deck: decks run out fast."""


def small_cards(folder: Path) -> str:
    path = folder / "small.toml"
    path.write_text(SMALL, encoding="utf-8")
    return str(path)


def act(state: ForceDuelState, *texts: str) -> None:
    """Apply actions written in record notation (chance included)."""
    for text in texts:
        state.apply_action(state.parse_action(text))


def rigged(
    hands: tuple[list[str], list[str]],
    tops: tuple[list[str], list[str]],
    attacker: int = 0,
    cards: str = "house",
    units: int = 5,
) -> ForceDuelState:
    """A game after setup: the given strategy hands, each deck starting with the given
    cards (the rest in card-set order), ``attacker`` first; built only through the
    chance actions a real shuffle could produce."""
    state = new_game(cards, units)
    book = state.book
    for i in range(6):
        p = i % 2
        state.apply_action(DRAW_BASE + book.strategy_of(hands[p][i // 2], "hand"))
    for p in (0, 1):
        given = [book.kind_of(t, "top") for t in tops[p]]
        left = list(book.deck)
        for k in given:
            left[k] -= 1
        order = given + [k for k in range(book.kinds) for _ in range(left[k])]
        for k in order:
            state.apply_action(DECK_BASE + k)
    state.apply_action(FIRST_BASE + attacker)
    return state
