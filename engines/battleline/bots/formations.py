"""Fast formation arithmetic for the bots: strengths as small ints, bitmask pools.

The solver (``battlejudge.solver.battleline``) is the authority on formations and
claims; this module answers the same questions much faster for the bots' inner loops
(heuristic evaluation, playouts), where a SAT call per flag per turn is too slow.
Tests check it against :func:`battlejudge.solver.battleline.best_formation` and
:func:`battlejudge.solver.battleline.decide` on random cases.

Rules: Formations (RULINGS.md 1), wild cards (RULINGS.md 2), Fog and Mud (RULINGS.md 8),
claims (RULINGS.md 5-7).

A *key* orders formations as the rules do: ``rank * 64 + sum`` with ranks Host 0,
Skirmish Line 1, Battalion Order 2, Phalanx 3, Wedge 4 (under Fog the rank is 0, so
only the sum counts). ``NO_FORMATION`` (-1) stands for a side that cannot complete.
A *pool* is six 10-bit masks, one per color, bit ``v - 1`` set when the troop of that
color and value may still be added.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

Key: TypeAlias = int
Pool: TypeAlias = tuple[int, int, int, int, int, int]

HOST, SKIRMISH, BATTALION, PHALANX, WEDGE = range(5)
RANK_SCALE = 64
NO_FORMATION: Key = -1
ALL_VALUES = 0x3FF
EMPTY_POOL: Pool = (0, 0, 0, 0, 0, 0)
FULL_POOL: Pool = (ALL_VALUES,) * 6

ALEXANDER, DARIUS, CAVALRY, SHIELD = 60, 61, 62, 63
WILDS = frozenset({ALEXANDER, DARIUS, CAVALRY, SHIELD})
WILD_MASK = {ALEXANDER: ALL_VALUES, DARIUS: ALL_VALUES, CAVALRY: 1 << 7, SHIELD: 0b111}
"""Values (as bits) each morale tactic may take (RULINGS.md 2)."""
WILD_TOP = {ALEXANDER: 10, DARIUS: 10, CAVALRY: 8, SHIELD: 3}

_POPCOUNT = [bin(m).count("1") for m in range(1 << 10)]


def _top_sums() -> list[tuple[int, ...]]:
    """``_TOP[mask][k]``: the sum of the k highest values in ``mask`` (k <= 4), or -1."""
    out = []
    for m in range(1 << 10):
        vals = [v for v in range(10, 0, -1) if m >> (v - 1) & 1]
        out.append(tuple(sum(vals[:k]) if k <= len(vals) else -1 for k in range(5)))
    return out


_TOP = _top_sums()
_RUNS = {
    n: [(sum(range(s, s + n)), ((1 << n) - 1) << (s - 1)) for s in range(11 - n, 0, -1)]
    for n in (3, 4)
}
"""Runs of n consecutive values, highest first: (sum, mask)."""


def color(card: int) -> int:
    return card // 10


def value(card: int) -> int:
    return card % 10 + 1


def rank_of(key: Key) -> int:
    return key // RANK_SCALE


def sum_of(key: Key) -> int:
    return key % RANK_SCALE


def pool_from(cards: Sequence[int] | set[int] | frozenset[int]) -> Pool:
    """The pool holding exactly these troops (codes >= 60 are ignored)."""
    m = [0, 0, 0, 0, 0, 0]
    for c in cards:
        if c < 60:
            m[c // 10] |= 1 << (c % 10)
    return (m[0], m[1], m[2], m[3], m[4], m[5])


def pool_without(pool: Pool, cards: Sequence[int] | set[int] | frozenset[int]) -> Pool:
    """``pool`` minus the given troops."""
    m = list(pool)
    for c in cards:
        if c < 60:
            m[c // 10] &= ~(1 << (c % 10))
    return (m[0], m[1], m[2], m[3], m[4], m[5])


def pool_size(pool: Pool) -> int:
    return sum(_POPCOUNT[m] for m in pool)


def _fill(missing: int, wilds: Sequence[int], avail: int) -> bool:
    """Can the wilds take some of the ``missing`` values (one each) so that every
    other missing value is in ``avail``?"""
    if not wilds:
        return missing & ~avail == 0
    w = WILD_MASK[wilds[0]] & missing
    rest = wilds[1:]
    while w:
        bit = w & -w
        if _fill(missing & ~bit, rest, avail):
            return True
        w &= ~bit
    return False


def _top_any(pool: Pool, k: int) -> int:
    """The sum of the k highest values in the pool (any colors), or -1."""
    if k == 0:
        return 0
    total = 0
    for v in range(10, 0, -1):
        bit = 1 << (v - 1)
        for m in pool:
            if m & bit:
                total += v
                k -= 1
                if k == 0:
                    return total
    return -1


def best_key(cards: Sequence[int], pool: Pool, size: int = 3, fog: bool = False) -> Key:
    """The strongest formation ``cards`` (troops and morale tactics at one side) can
    reach by adding troops from ``pool``; :data:`NO_FORMATION` if the pool is too small.

    With an empty pool and a complete side this is the side's strength. Wild cards
    take any identity their kind allows, visible or not (RULINGS.md 2).
    """
    troops = [c for c in cards if c < 60]
    wilds = [c for c in cards if c >= 60]
    k = size - len(cards)
    if k < 0:
        raise ValueError(f"{len(cards)} cards on a side of {size}")
    wild_top = sum(WILD_TOP[w] for w in wilds)
    tsum = sum(c % 10 + 1 for c in troops)
    if fog:
        top = _top_any(pool, k)
        return NO_FORMATION if top < 0 else tsum + wild_top + top
    cols = {c // 10 for c in troops}
    tmask = 0
    for c in troops:
        tmask |= 1 << (c % 10)
    distinct = _POPCOUNT[tmask] == len(troops)
    one_color = len(cols) <= 1
    colors = tuple(cols) if cols else (0, 1, 2, 3, 4, 5)
    runs = _RUNS[size]
    any_mask = pool[0] | pool[1] | pool[2] | pool[3] | pool[4] | pool[5]
    if one_color and distinct:
        for rsum, rmask in runs:
            if tmask & ~rmask:
                continue
            missing = rmask & ~tmask
            for col in colors:
                if _fill(missing, wilds, pool[col]):
                    return WEDGE * RANK_SCALE + rsum
    if _POPCOUNT[tmask] <= 1:
        values = [troops[0] % 10 + 1] if troops else range(10, 0, -1)
        for v in values:
            bit = 1 << (v - 1)
            if any(not WILD_MASK[w] & bit for w in wilds):
                continue
            if sum(1 for m in pool if m & bit) >= k:
                return PHALANX * RANK_SCALE + size * v
    if one_color:
        best = -1
        for col in colors:
            top = _TOP[pool[col]][k]
            if top > best:
                best = top
        if best >= 0:
            return BATTALION * RANK_SCALE + tsum + wild_top + best
    if distinct:
        for rsum, rmask in runs:
            if tmask & ~rmask:
                continue
            if _fill(rmask & ~tmask, wilds, any_mask):
                return SKIRMISH * RANK_SCALE + rsum
    top = _top_any(pool, k)
    return NO_FORMATION if top < 0 else tsum + wild_top + top


def strength(cards: Sequence[int], size: int = 3, fog: bool = False) -> Key:
    """The key of a complete formation."""
    if len(cards) != size:
        raise ValueError(f"a complete formation has {size} cards, got {len(cards)}")
    return best_key(cards, EMPTY_POOL, size, fog)


def claim_holds(
    mine: Sequence[int],
    theirs: Sequence[int],
    pool: Pool,
    size: int,
    fog: bool,
    i_completed_last: bool,
) -> bool:
    """Would a claim hold (RULINGS.md 4-7)? ``mine`` must be complete; ``pool`` is every
    troop not face up (the rules' pool, RULINGS.md 5), ``i_completed_last`` matters
    only when both sides are complete (the side that completed last loses a tie).
    """
    if len(mine) != size:
        return False
    my_key = strength(mine, size, fog)
    if len(theirs) == size:
        their_key = strength(theirs, size, fog)
        return my_key > their_key or (my_key == their_key and not i_completed_last)
    # An incomplete opponent would play last: every tie is the claimant's.
    return best_key(theirs, pool, size, fog) <= my_key
