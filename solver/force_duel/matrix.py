"""The payoff matrix of the Force choice, with exact probabilities.

The opponent's next cards are a uniformly random ordered draw, without replacement,
from his remaining battle cards; only the first ``max(them.choices)`` matter. The
enumeration groups equal cards, so it costs at most (kinds)^3 steps.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction

from battlejudge.solver.force_duel.question import (
    BattleCard,
    ForceQuestion,
    outcome,
    side_total,
)


def opponent_draws(
    pool: tuple[tuple[BattleCard, int], ...], depth: int
) -> Iterator[tuple[tuple[BattleCard, ...], Fraction]]:
    """Every ordered sequence of ``depth`` cards drawn from ``pool`` without
    replacement, with its exact probability (they sum to 1)."""
    counts = [n for _, n in pool]
    total = sum(counts)
    cards = [c for c, _ in pool]

    def walk(
        prefix: tuple[BattleCard, ...], prob: Fraction, left: int
    ) -> Iterator[tuple[tuple[BattleCard, ...], Fraction]]:
        if len(prefix) == depth:
            yield prefix, prob
            return
        for i, n in enumerate(counts):
            if n == 0:
                continue
            counts[i] -= 1
            yield from walk((*prefix, cards[i]), prob * Fraction(n, left), left - 1)
            counts[i] += 1

    yield from walk((), Fraction(1), total)


@dataclass(frozen=True)
class Payoffs:
    """For each asker choice (rows) and opponent choice (columns): the exact
    probability that the asker wins, and that he loses."""

    rows: tuple[int, ...]
    cols: tuple[int, ...]
    win: tuple[tuple[Fraction, ...], ...]
    lose: tuple[tuple[Fraction, ...], ...]


def payoffs(q: ForceQuestion) -> Payoffs:
    """The exact win and loss probabilities of every pair of Force choices."""
    rows, cols = q.me.choices, q.them.choices
    depth = max(cols)
    win = [[Fraction(0)] * len(cols) for _ in rows]
    lose = [[Fraction(0)] * len(cols) for _ in rows]
    mine = {(i, j): q.my_total(i, j) for i in rows for j in cols}
    # Group draws by the totals they give: the same totals give the same outcomes.
    by_totals: dict[tuple[int, ...], Fraction] = {}
    for drawn, prob in opponent_draws(merged_pool(q.pool), depth):
        key = tuple(side_total(drawn, q.them, j, i) for i in rows for j in cols)
        by_totals[key] = by_totals.get(key, Fraction(0)) + prob
    for key, prob in by_totals.items():
        for a, i in enumerate(rows):
            for b, j in enumerate(cols):
                res = outcome(mine[i, j], key[a * len(cols) + b], q.me, q.them)
                if res == 1:
                    win[a][b] += prob
                elif res == -1:
                    lose[a][b] += prob
    return Payoffs(rows, cols, tuple(tuple(r) for r in win), tuple(tuple(r) for r in lose))


def merged_pool(pool: tuple[tuple[BattleCard, int], ...]) -> tuple[tuple[BattleCard, int], ...]:
    """Cards with equal values merged (labels do not change totals)."""
    merged: dict[tuple[int, int], tuple[BattleCard, int]] = {}
    for card, n in pool:
        key = (card.power, card.extra)
        old = merged.get(key)
        merged[key] = (card if old is None else old[0], n + (0 if old is None else old[1]))
    return tuple(merged.values())
