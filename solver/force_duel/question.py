"""The Force question as plain data, and how one battle is scored.

At the moment both players choose a Force card (1, 2 or 3 battle cards), everything
about the battle is known except the opponent's next cards: both weapons are named,
both strategy cards and any unit cards are face up. A :class:`ForceQuestion` says what
the asking player knows then: his own next cards (he may look through his deck), the
opponent's remaining battle cards (their order is unknown to him) and, for each side,
the Force cards it may show and the points the strategy and unit cards give it.

Cards are given with their *effective* values: a card of another weapon than the one
its player uses already counts as the card set says (see the engine's card sets). The
solver never needs to know weapons or card sets; it only adds numbers.

Rules: Force Duel, "Battle" (the first card's power plus the extras of the next ones,
higher total wins, same total wins nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from battlejudge.solver.errors import InputError

FORCES = (1, 2, 3)
"""The Force cards every player holds: use 1, 2 or 3 battle cards."""

Outcome = Literal[1, 0, -1]
"""1: the asker wins the battle, 0: nobody wins, -1: the opponent wins."""


@dataclass(frozen=True)
class BattleCard:
    """One battle card as this battle counts it: a label (its notation, opaque to the
    solver) and its effective power and extra."""

    label: str
    power: int
    extra: int


@dataclass(frozen=True)
class SideRules:
    """What the strategy and unit cards in play mean for one side of this battle.

    ``choices`` are the Force cards the side may show (ascending, within 1-3);
    ``points`` is a flat bonus (weapon pairings included: weapons are known);
    ``fewer``, ``more`` and ``same`` are bonuses when the side uses fewer, more or the
    same number of cards as the enemy; ``wins_ties``: the side wins a battle of equal
    totals (unless both sides have it)."""

    choices: tuple[int, ...] = FORCES
    points: int = 0
    fewer: int = 0
    more: int = 0
    same: int = 0
    wins_ties: bool = False

    def __post_init__(self) -> None:
        if not self.choices or any(c not in FORCES for c in self.choices):
            raise InputError(f"Force choices {self.choices!r} must be a non-empty subset of 1-3")
        if tuple(sorted(set(self.choices))) != self.choices:
            raise InputError(f"Force choices {self.choices!r} must be ascending and distinct")

    def bonus(self, mine: int, theirs: int) -> int:
        """The points this side adds when it shows ``mine`` and the enemy ``theirs``."""
        extra = self.points
        if mine < theirs:
            extra += self.fewer
        elif mine > theirs:
            extra += self.more
        else:
            extra += self.same
        return extra


def cards_total(cards: tuple[BattleCard, ...], count: int) -> int:
    """The points of the first ``count`` cards: the first card's power plus the extras
    of the others (Rules: Battle)."""
    return cards[0].power + sum(c.extra for c in cards[1:count])


def side_total(cards: tuple[BattleCard, ...], side: SideRules, mine: int, theirs: int) -> int:
    """A side's battle points: its cards plus its bonuses."""
    return cards_total(cards, mine) + side.bonus(mine, theirs)


def outcome(my_total: int, their_total: int, me: SideRules, them: SideRules) -> Outcome:
    """Who wins: the higher total; equal totals win nothing, unless exactly one side
    wins ties (house rule card "Stand Firm")."""
    if my_total > their_total:
        return 1
    if my_total < their_total:
        return -1
    if me.wins_ties and not them.wins_ties:
        return 1
    if them.wins_ties and not me.wins_ties:
        return -1
    return 0


@dataclass(frozen=True)
class ForceQuestion:
    """Which Force card should the asker show, and how likely is he to win?

    ``mine``: the asker's next cards, top first (at least as many as his largest
    choice); ``pool``: the opponent's remaining battle cards with their counts, in
    unknown (uniformly random) order; ``me`` and ``them``: each side's rules."""

    mine: tuple[BattleCard, ...]
    pool: tuple[tuple[BattleCard, int], ...]
    me: SideRules = field(default_factory=SideRules)
    them: SideRules = field(default_factory=SideRules)

    def __post_init__(self) -> None:
        if len(self.mine) < max(self.me.choices):
            raise InputError(
                f"mine: {len(self.mine)} cards, but Force {max(self.me.choices)} is a choice"
            )
        if any(n < 1 for _, n in self.pool):
            raise InputError("pool: every count must be at least 1")
        if self.pool_size < max(self.them.choices):
            raise InputError(
                f"pool: {self.pool_size} cards, but the opponent may show "
                f"Force {max(self.them.choices)}"
            )

    @property
    def pool_size(self) -> int:
        """How many battle cards the opponent has left (the pool's counts added up)."""
        return sum(n for _, n in self.pool)

    def my_total(self, mine: int, theirs: int) -> int:
        """The asker's battle points when he shows Force ``mine`` (that many cards) and the
        opponent Force ``theirs``: his cards' points plus his bonuses (Rules: Battle)."""
        return side_total(self.mine, self.me, mine, theirs)
