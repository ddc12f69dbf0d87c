"""What a side can still reach: formation strength over bitmasks, and the exact fast
claim decider.

This module is the formation rule of the solver, in the form its hot paths need:
small ints for cards and six 10-bit masks for the troops that may still be added.

- :func:`best_key`: the strongest formation some cards (troops and morale tactics at
  one side) can reach by adding troops from a pool; with an empty pool and a complete
  side, that side's strength. Formations, best first: Wedge, Phalanx, Battalion
  Order, Skirmish Line, Host; higher sum breaks a tie within a category; no
  wrap-around (docs/rulings.md 1). Wild cards take any color and the values their kind
  allows, a visible troop's identity included (docs/rulings.md 2). Fog: only the sum
  counts; Mud: four cards (docs/rulings.md 8).
- :func:`claim_holds` (ints and masks, for engines and bots) and :func:`holds` (a
  :class:`ClaimQuestion`): does a claim hold? The claimant needs a complete formation
  (docs/rulings.md 4); the opponent may add any troop that is not face up (docs/rulings.md 5),
  however many it takes, and if the pool is too small the claim holds (docs/rulings.md 6);
  a tie goes to the side that completed first, so every tie is the claimant's while
  the opponent is incomplete (docs/rulings.md 7). Exact: the opponent takes his best
  formation, so "some completion beats the claim" is "his best reachable key beats
  it", and :func:`best_key` computes that key category by category.

:func:`~battlejudge.solver.battleline.formation.best_formation` derives from
:func:`strength` (it adds the identities the wild cards take). The SAT path
(:mod:`.claims`) stays the certificate path. Tests check both against the brute-force
oracle (:mod:`.oracle`, which keeps its own, independent evaluation) on every kind of
question (``tests/test_decider.py``).

A *key* orders formations as the rules do: ``rank * RANK_SCALE + sum``, ranks
:data:`HOST` 0 to :data:`WEDGE` 4 (under Fog every rank is 0, so only the sum counts);
:data:`NO_FORMATION` (-1) stands for a side that cannot complete. A *pool* is six
10-bit masks, one per color, bit ``v - 1`` set when the troop of that color and value
may still be added. Card codes are the solver's: troops ``color * 10 + value - 1``,
morale tactics 60-63 (:data:`~battlejudge.solver.battleline.cards.WILD_KIND`).

How :func:`best_key` prunes with ``floor`` (the claim's key; only keys above it matter).
Each bound is the best key still possible, and the search stops once it is at or below
the floor, so every answer above the floor is exact:

- Between categories: every key of rank ``r`` lies in ``[r * RANK_SCALE, (r + 1) *
  RANK_SCALE)``, because a sum is at most 40 < :data:`RANK_SCALE`. Once ``floor >= r *
  RANK_SCALE``, no category below ``r`` can beat the claim.
- Wedge and Skirmish Line: the runs of :data:`RUNS` are tried highest total first, so the
  first run whose key is at or below the floor ends the loop: no later run can do better.
- Phalanx: values are tried from 10 down, and a Phalanx of value ``v`` is worth
  ``PHALANX * RANK_SCALE + size * v``: ``size`` cards of that value, four under Mud. The
  bound must use the side's size: with 3 in its place, Mud ``R7 B7 G7 Y7`` (28) would
  stop before trying the 8s (24 <= 28) and miss the Phalanx of 8s (32) that beats it
  (``tests/test_decider_golden.py``).
- Battalion Order and Host take the highest troops left (of one color, or of any), so
  their one candidate is compared with the floor by the caller.

Mutation testing (docs/mutation.md) checks that the tests notice when any of these
bounds is weakened.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple, TypeAlias

from battlejudge.solver.battleline.cards import TROOP_COUNT, WILD_KIND, WILD_VALUES
from battlejudge.solver.errors import RuleError

if TYPE_CHECKING:
    from battlejudge.solver.battleline.question import ClaimQuestion

Key: TypeAlias = int
Pool: TypeAlias = tuple[int, int, int, int, int, int]

HOST, SKIRMISH, BATTALION, PHALANX, WEDGE = range(5)
"""Category ranks, weakest first (docs/rulings.md 1)."""
RANK_SCALE = 64
"""More than any sum (at most 40), so the rank dominates a key."""
NO_FORMATION: Key = -1
FORMATION_SIZES: tuple[int, int] = (3, 4)
"""Cards per complete formation, indexed by whether Mud lies at the flag: 3, or 4 with
Mud (docs/rulings.md 8). The one place of this rule: :func:`formation_size` says it by
name, and hot paths index this tuple."""
ALL_VALUES = 0x3FF
EMPTY_POOL: Pool = (0, 0, 0, 0, 0, 0)
FULL_POOL: Pool = (ALL_VALUES,) * 6


class Run(NamedTuple):
    """``size`` consecutive values from ``start``: their ``total`` and value ``mask``."""

    start: int
    size: int
    total: int
    mask: int

    @property
    def values(self) -> range:
        """The consecutive values of the run, lowest first."""
        return range(self.start, self.start + self.size)


RUNS: dict[int, tuple[Run, ...]] = {
    n: tuple(
        Run(s, n, sum(range(s, s + n)), ((1 << n) - 1) << (s - 1)) for s in range(11 - n, 0, -1)
    )
    for n in FORMATION_SIZES
}
"""The runs of 3 and 4 consecutive values (formations of 3, or 4 with Mud), highest
first, none wrapping around: 9-10-1 is no run (docs/rulings.md 1, 8). The one definition of
runs: Wedge and Skirmish Line everywhere (formations, encodings, bots) use it."""

WILD_MASK: dict[int, int] = {
    code: sum(1 << (v - 1) for v in WILD_VALUES[kind]) for code, kind in WILD_KIND.items()
}
"""Per morale tactic code: the values (as bits) it may take (docs/rulings.md 2)."""
WILD_TOP: dict[int, int] = {code: max(WILD_VALUES[kind]) for code, kind in WILD_KIND.items()}
"""Per morale tactic code: the highest value it may take."""

_POPCOUNT = [bin(m).count("1") for m in range(1 << 10)]
RUN_KEYS: dict[int, tuple[tuple[int, int], ...]] = {
    n: tuple((r.total, r.mask) for r in runs) for n, runs in RUNS.items()
}
""":data:`RUNS` as (sum, value mask) pairs, highest first: the form the hot loops
(:func:`best_key`, the bots' evaluation) read."""
_COLORS_OF = [tuple(c for c in range(6) if m >> c & 1) for m in range(1 << 6)]
"""The color indexes in a 6-bit color mask."""


def _top_sums() -> list[tuple[int, ...]]:
    """``_TOP[mask][k]``: the sum of the k highest values in ``mask`` (k <= 4), or -1."""
    out = []
    for m in range(1 << 10):
        vals = [v for v in range(10, 0, -1) if m >> (v - 1) & 1]
        out.append(tuple(sum(vals[:k]) if k <= len(vals) else -1 for k in range(5)))
    return out


_TOP = _top_sums()


def formation_size(mud: bool) -> int:
    """Cards per complete formation: 3, or 4 where Mud lies (docs/rulings.md 8)."""
    return FORMATION_SIZES[mud]


def rank_of(key: Key) -> int:
    """The formation category rank packed in a strength ``key``."""
    return key // RANK_SCALE


def sum_of(key: Key) -> int:
    """The formation sum packed in a strength ``key``."""
    return key % RANK_SCALE


def pool_from(cards: Iterable[int]) -> Pool:
    """The pool holding exactly these troops (tactics are ignored)."""
    m = [0, 0, 0, 0, 0, 0]
    for c in cards:
        if c < TROOP_COUNT:
            m[c // 10] |= 1 << (c % 10)
    return (m[0], m[1], m[2], m[3], m[4], m[5])


def pool_without(pool: Pool, cards: Iterable[int]) -> Pool:
    """``pool`` minus the given troops (tactics are ignored)."""
    m = list(pool)
    for c in cards:
        if c < TROOP_COUNT:
            m[c // 10] &= ~(1 << (c % 10))
    return (m[0], m[1], m[2], m[3], m[4], m[5])


_BIT = [1 << c for c in range(128)]
"""The bit of each card code; a tactic's bit (60 on) lies outside every pool mask."""


def claim_pool(face_up: Iterable[int]) -> Pool:
    """The troops an opponent may still add to his side of a flag: every troop not face up
    (docs/rulings.md 5: at any flag, his own side included, or in a discard pile). ``face_up``
    lists each face-up card once (tactics are ignored). The one place of this rule: the
    question, the engine and the bots ask it."""
    return pool_outside(sum(map(_BIT.__getitem__, face_up)))


def pool_outside(taken: int) -> Pool:
    """The pool of every troop whose bit (``1 << code``) is not set in ``taken``."""
    free = ~taken
    return (
        free & ALL_VALUES,
        free >> 10 & ALL_VALUES,
        free >> 20 & ALL_VALUES,
        free >> 30 & ALL_VALUES,
        free >> 40 & ALL_VALUES,
        free >> 50 & ALL_VALUES,
    )


def pool_size(pool: Pool) -> int:
    """How many troops ``pool`` holds (the set bits of its six color masks)."""
    return sum(_POPCOUNT[m] for m in pool)


def _assign(missing: int, wilds: Sequence[int], avail: int) -> int:
    """Let the wilds take some of the ``missing`` values (one each) so that every other
    missing value is in ``avail``: the values left for troops to give (a mask), or -1 if
    the wilds cannot be placed so."""
    if not wilds:
        return missing if missing & ~avail == 0 else -1
    w = WILD_MASK[wilds[0]] & missing
    rest = wilds[1:]
    while w:
        bit = w & -w
        left = _assign(missing & ~bit, rest, avail)
        if left >= 0:
            return left
        w &= ~bit
    return -1


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


def best_key(
    cards: Sequence[int],
    pool: Pool,
    size: int = 3,
    fog: bool = False,
    floor: Key = NO_FORMATION,
    only: int = -1,
) -> Key:
    """The strongest formation ``cards`` (troops and morale tactics at one side) can
    reach by adding ``size - len(cards)`` troops from ``pool``; :data:`NO_FORMATION` if
    the pool holds too few. ``pool`` must not hold the side's own troops.

    With an empty pool and a complete side this is the side's strength. Categories
    are tried best first (docs/rulings.md 1); wild cards take any identity their kind
    allows, visible or not (docs/rulings.md 2); Fog counts the sum only (docs/rulings.md 8).

    ``floor``: only keys above it matter (a claim's strength). Once no category left can
    beat it, the search stops and returns :data:`NO_FORMATION`, so the answer is exact
    whenever it is above ``floor``.

    ``only``: a category rank (:data:`WEDGE` ... :data:`HOST`): the best formation of that
    category alone (what the explanations ask: could he still make a Wedge?). Host is any
    completion, by its sum; ignored under Fog, where only the sum counts.
    """
    k = size - len(cards)
    if k < 0:
        raise RuleError(f"{len(cards)} cards on a side of {size}")
    if k == 0 and only < 0:
        memo = (size, fog, *cards)
        key = _STRENGTH.get(memo)
        if key is None:
            key = _best_key(cards, EMPTY_POOL, size, fog, NO_FORMATION, -1)
            if len(_STRENGTH) >= _STRENGTH_MAX:
                _STRENGTH.clear()
            _STRENGTH[memo] = key
        return key
    return _best_key(cards, pool, size, fog, floor, only)


_STRENGTH: dict[tuple[int, ...], Key] = {}
"""The strength of complete sides already evaluated ((size, fog, *cards) -> key): a
pure function of at most four cards, so the cache is exact; cleared when full."""
_STRENGTH_MAX = 1 << 18


class Shape(NamedTuple):
    """What the formation rule reads of a side's cards (troops and morale tactics) at a
    flag of ``size`` cards: which categories they can still make, and with which runs,
    values and colors (docs/rulings.md 1, 2). :func:`best_key` and the bots' evaluation
    (``engines.battleline.bots.evaluate.side_dist``) both go category by category over it.
    """

    troops: tuple[int, ...]
    wilds: tuple[int, ...]
    """The morale tactics, in the side's order."""
    troop_sum: int
    wild_top: int
    """The sum of the wilds' highest values."""
    values: int
    """The troops' values as bits (bit ``v - 1``)."""
    colors: tuple[int, ...]
    """The troops' colors, ascending; all six when there is no troop."""
    one_color: bool
    """At most one color among the troops: a Wedge or a Battalion Order may be made."""
    runs: tuple[tuple[int, int], ...]
    """The runs (:data:`RUN_KEYS`, highest first) holding every troop's value, no two troops
    of one value: the Wedges and Skirmish Lines still open."""
    phalanx: tuple[int, ...]
    """The values a Phalanx may take, highest first: the troops' one value, or any value,
    as far as every wild may take it."""


def shape(cards: Sequence[int], size: int) -> Shape:
    """The :class:`Shape` of a side (memoised: a pure function of at most four cards)."""
    memo = (size, *cards)
    got = _SHAPES.get(memo)
    if got is None:
        got = _shape(cards, size)
        if len(_SHAPES) >= _STRENGTH_MAX:
            _SHAPES.clear()
        _SHAPES[memo] = got
    return got


def _shape(cards: Sequence[int], size: int) -> Shape:
    troops = tuple(c for c in cards if c < TROOP_COUNT)
    wilds = tuple(c for c in cards if c >= TROOP_COUNT)
    tmask = 0
    cmask = 0
    for c in troops:
        tmask |= 1 << (c % 10)
        cmask |= 1 << (c // 10)
    distinct = _POPCOUNT[tmask] == len(troops)
    runs = tuple(r for r in RUN_KEYS[size] if distinct and not tmask & ~r[1])
    phalanx: tuple[int, ...] = ()
    if _POPCOUNT[tmask] <= 1:
        values = (troops[0] % 10 + 1,) if troops else range(10, 0, -1)
        phalanx = tuple(v for v in values if all(WILD_MASK[w] >> (v - 1) & 1 for w in wilds))
    return Shape(
        troops,
        wilds,
        sum(c % 10 + 1 for c in troops),
        sum(WILD_TOP[w] for w in wilds),
        tmask,
        _COLORS_OF[cmask] if cmask else (0, 1, 2, 3, 4, 5),
        _POPCOUNT[cmask] <= 1,
        runs,
        phalanx,
    )


_SHAPES: dict[tuple[int, ...], Shape] = {}


def _best_key(cards: Sequence[int], pool: Pool, size: int, fog: bool, floor: Key, only: int) -> Key:
    k = size - len(cards)
    _, wilds, tsum, wild_top, tmask, colors, one_color, runs, phalanx = shape(cards, size)
    if fog:
        top = _top_any(pool, k)
        return NO_FORMATION if top < 0 else tsum + wild_top + top
    if (only < 0 or only == WEDGE) and one_color:
        for rsum, rmask in runs:  # highest first: none after one at or below the floor
            if WEDGE * RANK_SCALE + rsum <= floor:
                break
            missing = rmask & ~tmask
            for col in colors:
                if wilds:
                    if _assign(missing, wilds, pool[col]) >= 0:
                        return WEDGE * RANK_SCALE + rsum
                elif missing & ~pool[col] == 0:
                    return WEDGE * RANK_SCALE + rsum
    if floor >= WEDGE * RANK_SCALE or only == WEDGE:
        return NO_FORMATION
    if only < 0 or only == PHALANX:
        for v in phalanx:
            if PHALANX * RANK_SCALE + size * v <= floor:
                break
            bit = 1 << (v - 1)
            if sum(1 for m in pool if m & bit) >= k:
                return PHALANX * RANK_SCALE + size * v
    if floor >= PHALANX * RANK_SCALE or only == PHALANX:
        return NO_FORMATION
    if (only < 0 or only == BATTALION) and one_color:
        best = -1
        for col in colors:
            top = _TOP[pool[col]][k]
            if top > best:
                best = top
        if best >= 0:
            return BATTALION * RANK_SCALE + tsum + wild_top + best
    if floor >= BATTALION * RANK_SCALE or only == BATTALION:
        return NO_FORMATION
    if (only < 0 or only == SKIRMISH) and runs:
        any_mask = pool[0] | pool[1] | pool[2] | pool[3] | pool[4] | pool[5]
        for rsum, rmask in runs:
            if SKIRMISH * RANK_SCALE + rsum <= floor:
                break
            if _assign(rmask & ~tmask, wilds, any_mask) >= 0:
                return SKIRMISH * RANK_SCALE + rsum
    if floor >= SKIRMISH * RANK_SCALE or only == SKIRMISH:
        return NO_FORMATION
    top = _top_any(pool, k)
    return NO_FORMATION if top < 0 else tsum + wild_top + top


def _highest(pool: Pool, k: int, colors: Sequence[int] = (0, 1, 2, 3, 4, 5)) -> list[int]:
    """The k highest troops of ``pool`` within ``colors`` (highest value first, then the
    first color), as codes."""
    out: list[int] = []
    for v in range(10, 0, -1):
        bit = 1 << (v - 1)
        for col in colors:
            if len(out) == k:
                return out
            if pool[col] & bit:
                out.append(col * 10 + v - 1)
    return out


def _troops_for(values: int, pool: Pool, colors: Sequence[int]) -> list[int]:
    """One troop per value bit in ``values``, each of the first color in ``colors`` that
    the pool has, or [] if some value has none."""
    out = []
    while values:
        bit = values & -values
        col = next((c for c in colors if pool[c] & bit), None)
        if col is None:
            return []
        out.append(col * 10 + bit.bit_length() - 1)
        values &= ~bit
    return out


def best_completion(
    cards: Sequence[int], pool: Pool, size: int = 3, fog: bool = False
) -> tuple[Key, tuple[int, ...]]:
    """:func:`best_key` with a completion that reaches it: the troops (codes, from
    ``pool``) to add to ``cards``. ``(NO_FORMATION, ())`` if the pool holds too few.

    The completion is found category by category, as :func:`best_key` finds the key,
    and is checked by evaluating the completed side with :func:`strength` (the witness
    of an invalid claim, docs/rulings.md 16).
    """
    key = best_key(cards, pool, size, fog)
    k = size - len(cards)
    if key < 0 or k == 0:
        return key, ()
    side = shape(cards, size)
    wilds, tmask, colors = side.wilds, side.values, side.colors
    rank, total = (0, key) if fog else divmod(key, RANK_SCALE)
    added: list[int] = []
    if rank in (WEDGE, SKIRMISH):
        rmask = next(r.mask for r in RUNS[size] if r.total == total)
        for group in [(col,) for col in colors] if rank == WEDGE else [(0, 1, 2, 3, 4, 5)]:
            avail = 0
            for col in group:
                avail |= pool[col]
            left = _assign(rmask & ~tmask, wilds, avail)
            if left >= 0:
                added = _troops_for(left, pool, group)
                break
    elif rank == PHALANX:
        bit = 1 << (total // size - 1)
        added = [col * 10 + total // size - 1 for col in range(6) if pool[col] & bit][:k]
    elif rank == BATTALION:
        top = total - side.troop_sum - side.wild_top
        col = next(col for col in colors if _TOP[pool[col]][k] == top)
        added = _highest(pool, k, (col,))
    else:  # Host, or any formation under Fog: the highest troops left
        added = _highest(pool, k)
    done = (*cards, *added)
    if len(added) != k or strength(done, size, fog) != key:
        raise RuleError(f"internal error: completion {added} of {list(cards)} misses key {key}")
    return key, tuple(added)


def strength(cards: Sequence[int], size: int = 3, fog: bool = False) -> Key:
    """The key of a complete formation (``size`` cards), at its best (docs/rulings.md 1, 2, 8)."""
    if len(cards) != size:
        raise RuleError(f"a complete formation has {size} cards, got {len(cards)}")
    return best_key(cards, EMPTY_POOL, size, fog)


def wins_flag(key: Key, other: Key, first: bool) -> bool:
    """Does a complete formation of strength ``key`` take the flag from a complete one of
    strength ``other``? The stronger does; a tie goes to the side that completed first
    (``first``: this side did), docs/rulings.md 7. The one place of the tie rule: claims,
    their witnesses, the engine and the bots ask it."""
    return key > other or (key == other and first)


class UndecidedTie(RuleError):
    """Both sides are complete and tie, and the question does not say who completed first
    (docs/rulings.md 7 needs it)."""


def claimant_completed_last(q: ClaimQuestion) -> bool:
    """Does the claimant lose a tie at this question (docs/rulings.md 7)? Only when both
    sides are complete and the opponent completed first: an incomplete opponent would
    complete last, so every tie is then the claimant's. Raises :class:`UndecidedTie` when
    both sides are complete and tie but ``completed_first`` is not given."""
    mine, theirs = q.codes
    size = FORMATION_SIZES[q.mud]
    if len(theirs) != size:
        return False
    if q.completed_first is None:
        if strength(mine, size, q.fog) == strength(theirs, size, q.fog):
            raise UndecidedTie(
                f"both sides are complete and tie ({q!r}): completed_first must say who "
                f"completed first ('mine' or 'theirs')"
            )
        return False
    return q.completed_first == "theirs"


def claim_holds(
    mine: Sequence[int],
    theirs: Sequence[int],
    pool: Pool,
    size: int,
    fog: bool,
    i_completed_last: bool,
) -> bool:
    """Does the claim hold (docs/rulings.md 4-7)? False if ``mine`` is not complete.

    ``pool`` is every troop not face up (the rules' pool, docs/rulings.md 5: no card at any
    flag or in a discard pile); ``i_completed_last`` matters only when both sides are
    complete (the side that completed last loses a tie).
    """
    if len(mine) != size:
        return False
    my_key = best_key(mine, EMPTY_POOL, size, fog)
    if len(theirs) == size:
        their_key = best_key(theirs, EMPTY_POOL, size, fog)
        return wins_flag(my_key, their_key, not i_completed_last)
    # An incomplete opponent would complete last, so wins_flag(his best, my_key, False):
    # only a completion stronger than mine beats the claim (inlined: the bots' hot path).
    return best_key(theirs, pool, size, fog, my_key) <= my_key


def holds(q: ClaimQuestion) -> bool:
    """The exact verdict on a flag question, without a SAT call: True when the claim
    holds. Agrees with :func:`~battlejudge.solver.battleline.decide` and the oracle.

    Raises :class:`UndecidedTie` (a :class:`RuleError`) when both sides are complete and
    tie but ``completed_first`` is not given (docs/rulings.md 7 needs it).

    >>> from battlejudge.solver.battleline import ClaimQuestion
    >>> holds(ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10"))
    True
    """
    mine, theirs = q.codes
    return claim_holds(mine, theirs, q.pool, q.size, q.fog, claimant_completed_last(q))
