"""What the strategy and unit cards in play mean for one battle.

Both the game state and position files describe a battle by the same few facts (the
weapons, the strategy cards on the table, the unit cards in play, each deck); this
module turns them into each side's rules and into the solver's
:class:`~battlejudge.solver.force_duel.ForceQuestion`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from battlejudge.engines.force_duel.cards import (
    MAX_FORCE,
    CardBook,
    CountBonus,
    Effect,
    ExtraLoss,
    ForceWeapon,
    MaxCards,
    MinCards,
    Points,
    RecoverUnits,
    Shield,
    WeaponBonus,
    WinTies,
)
from battlejudge.solver.force_duel import BattleCard, ForceQuestion, SideRules

UnitInPlay = tuple[int, int]
"""(owner, unit kind) of a unit card that sets a rule for this battle."""


@dataclass(frozen=True)
class Held:
    """The effects one player holds in this battle: from his strategy card, and from
    unit cards (his own, or any whose rule is for both players)."""

    strategy: tuple[Effect, ...] = ()
    units: tuple[Effect, ...] = ()
    all: tuple[Effect, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "all", (*self.units, *self.strategy))


def held_effects(
    book: CardBook, strategy: Sequence[int | None], units: Sequence[UnitInPlay]
) -> tuple[Held, Held]:
    """Each player's effects. Rules: Strategy cards; Unit cards (the card "says how
    the next battle will be played": house rule vocabulary, see the card set)."""
    unit_fx: list[list[Effect]] = [[], []]
    for owner, kind in units:
        spec = book.unit(kind)
        for p in (0, 1) if spec.who == "both" else (owner,):
            unit_fx[p] += spec.effects
    out = []
    for p in (0, 1):
        s = strategy[p]
        out.append(
            Held(tuple(book.strategy[s].effects) if s is not None else (), tuple(unit_fx[p]))
        )
    return out[0], out[1]


def forced_weapon(book: CardBook, enemy: Held, with_strategy: bool = True) -> int | None:
    """The weapon the enemy's effects force on a player, or None. A strategy card wins
    over a unit card (house rule); among equals the last one counts."""
    for group in (enemy.strategy if with_strategy else (), enemy.units):
        forced = [e.weapon for e in group if isinstance(e, ForceWeapon)]
        if forced:
            return book.weapons.index(forced[-1])
    return None


def force_choices(enemy: Held, deck_cards: int) -> tuple[int, ...]:
    """The Force cards a player may show: at most 3, at most the cards in his deck, at
    most every limit the enemy holds; at least the enemy's minimum unless a limit is
    lower (house rule: a limit wins over a minimum)."""
    cap = min(MAX_FORCE, deck_cards)
    floor = 1
    for e in enemy.all:
        if isinstance(e, MaxCards):
            cap = min(cap, e.n)
        elif isinstance(e, MinCards):
            floor = max(floor, e.n)
    floor = min(floor, cap)
    return tuple(range(floor, cap + 1))


def side_rules(
    book: CardBook, me: Held, enemy: Held, weapons: tuple[int, int], deck_cards: int
) -> SideRules:
    """A side's rules for the solver and the scoring; ``weapons`` is (mine, enemy's)."""
    points = fewer = more = same = 0
    wins_ties = False
    mine, theirs = book.weapons[weapons[0]], book.weapons[weapons[1]]
    for e in me.all:
        if isinstance(e, Points):
            points += e.points
        elif isinstance(e, WeaponBonus):
            if e.mine in (None, mine) and e.theirs in (None, theirs):
                points += e.points
        elif isinstance(e, CountBonus):
            if e.when == "fewer":
                fewer += e.points
            elif e.when == "more":
                more += e.points
            else:
                same += e.points
        elif isinstance(e, WinTies):
            wins_ties = True
    return SideRules(force_choices(enemy, deck_cards), points, fewer, more, same, wins_ties)


def effective(book: CardBook, kind: int, weapon: int) -> BattleCard:
    """A battle card as it counts for a player using ``weapon``: its own power and
    extra, or the card set's off-weapon values (house rule) for another weapon."""
    b = book.battle[kind]
    if b.weapon == weapon:
        return BattleCard(book.labels[kind], b.power, b.extra)
    rules = book.set.rules
    return BattleCard(book.labels[kind], rules.off_weapon_power, rules.off_weapon_extra)


def recovered(held: Held) -> int:
    """How many gravestones the holder of ``held`` turns back to units when he wins (the sum of
    his ``recover_units`` effects)."""
    return sum(e.n for e in held.all if isinstance(e, RecoverUnits))


def extra_loss(held: Held) -> int:
    """How many more units the enemy loses when the holder of ``held`` wins (the sum of his
    ``extra_loss`` effects)."""
    return sum(e.n for e in held.all if isinstance(e, ExtraLoss))


def shielded(held: Held) -> bool:
    """Whether the holder of ``held`` loses no unit when he loses the battle (a ``shield``
    effect)."""
    return any(isinstance(e, Shield) for e in held.all)


def question(
    book: CardBook,
    player: int,
    weapons: tuple[int, int],
    held: tuple[Held, Held],
    my_next: Sequence[int],
    my_deck_cards: int,
    their_pool: Counter[int],
) -> ForceQuestion:
    """The Force question of ``player``: his next battle cards (kinds, top first), the
    opponent's remaining battle cards as a multiset, and both sides' rules. Each
    side's Force cards are bounded by its battle cards (opponent: his pool)."""
    other = 1 - player
    me = side_rules(
        book, held[player], held[other], (weapons[player], weapons[other]), my_deck_cards
    )
    them = side_rules(
        book, held[other], held[player], (weapons[other], weapons[player]), their_pool.total()
    )
    mine = tuple(effective(book, k, weapons[player]) for k in my_next[:MAX_FORCE])
    pool = tuple(
        (effective(book, k, weapons[other]), n) for k, n in sorted(their_pool.items()) if n > 0
    )
    return ForceQuestion(mine, pool, me, them)
