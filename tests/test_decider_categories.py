"""``decider.best_key(..., only=KIND)``: the best formation of one kind alone that a side
can still reach, the question behind a claim's explanation ("could he still make a
Wedge?", docs/rulings.md 16), checked against a plain enumeration written here.

A completed side counts for a kind when its cards meet that kind's condition
(docs/rulings.md 1): Wedge one color and consecutive values, Phalanx one value, Battalion
Order one color, Skirmish Line consecutive values, Host any cards; the key is the kind's
rank and the sum. Wild cards take any identity their kind allows (docs/rulings.md 2): a
Leader any troop, Companion Cavalry an 8 of any color, Shield Bearers a 1, 2 or 3 of any
color. Values do not wrap around (9, 10, 1 is no run). Mud: four cards (docs/rulings.md 8).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations, pairwise, product

from hypothesis import given, settings
from hypothesis import strategies as st

from battlejudge.solver import battleline as bl
from battlejudge.solver.battleline import decider

from strategies import TROOPS, WILDS

KINDS = {
    decider.WEDGE: lambda colors, values: len(colors) == 1 and _run(values),
    decider.PHALANX: lambda colors, values: len(set(values)) == 1,
    decider.BATTALION: lambda colors, values: len(colors) == 1,
    decider.SKIRMISH: lambda colors, values: _run(values),
    decider.HOST: lambda colors, values: True,
}
IDENTITIES = {
    "leader": [(c, v) for c in range(6) for v in range(1, 11)],
    "cavalry": [(c, 8) for c in range(6)],
    "shield": [(c, v) for c in range(6) for v in (1, 2, 3)],
}


def _run(values: list[int]) -> bool:
    s = sorted(values)
    return all(b == a + 1 for a, b in pairwise(s))


def _hands(cards: list[bl.Card]) -> Iterator[list[tuple[int, int]]]:
    fixed = [(c.code // 10, c.code % 10 + 1) for c in cards if c.wild is None]
    wild = [IDENTITIES[c.wild] for c in cards if c.wild is not None]
    for chosen in product(*wild):
        yield fixed + list(chosen)


def best_of_kind(side: list[bl.Card], pool: list[bl.Card], size: int, kind: int) -> int:
    """The best key of ``kind`` over every completion from ``pool`` and every identity of
    the wild cards; NO_FORMATION when none meets the kind's condition."""
    best = decider.NO_FORMATION
    for extra in combinations(pool, size - len(side)):
        for hand in _hands([*side, *extra]):
            colors = {c for c, _ in hand}
            values = [v for _, v in hand]
            if KINDS[kind](colors, values):
                best = max(best, kind * decider.RANK_SCALE + sum(values))
    return best


@st.composite
def sides(draw: st.DrawFn) -> tuple[list[bl.Card], list[bl.Card], int]:
    """A side short of one to three cards (at most one wild card, from docs/rulings.md 3's
    one-Leader side up) and a small pool of troops near its own values and colors, so the
    kinds are within reach often."""
    size = draw(st.sampled_from([3, 4]))
    n = draw(st.integers(1, size - 1))
    troops = draw(st.lists(st.sampled_from(TROOPS), min_size=n, max_size=n, unique=True))
    side: list[bl.Card] = list(troops)
    if draw(st.booleans()):
        side[-1] = bl.Card.parse(draw(st.sampled_from(WILDS)))
    near = [
        t
        for t in TROOPS
        if t not in troops
        and any(t.code // 10 == c.code // 10 or abs(t.code % 10 - c.code % 10) <= 2 for c in troops)
    ]
    k = size - len(side)
    pool = draw(st.lists(st.sampled_from(near), min_size=0, max_size=k + 4, unique=True))
    return side, pool, size


@settings(max_examples=max(100, settings().max_examples))
@given(sides(), st.sampled_from(sorted(KINDS)))
def test_best_key_of_one_kind_is_the_best_completion_of_that_kind(
    case: tuple[list[bl.Card], list[bl.Card], int], kind: int
) -> None:
    side, pool, size = case
    codes = [c.code for c in side]
    got = decider.best_key(codes, decider.pool_from(c.code for c in pool), size, only=kind)
    assert got == best_of_kind(side, pool, size, kind)


def test_one_kind_golden() -> None:
    # R4 R5 with R3 and R10 unseen: a Wedge 12, a Battalion 19 (R4 R5 R10), a Skirmish 12,
    # no Phalanx, a Host 19 (docs/rulings.md 1).
    codes = [bl.Card.parse(t).code for t in ("R4", "R5")]
    pool = decider.pool_from(bl.Card.parse(t).code for t in ("R3", "R10"))
    key = {k: decider.best_key(codes, pool, 3, only=k) for k in KINDS}
    assert key == {
        decider.WEDGE: decider.WEDGE * decider.RANK_SCALE + 12,
        decider.PHALANX: decider.NO_FORMATION,
        decider.BATTALION: decider.BATTALION * decider.RANK_SCALE + 19,
        decider.SKIRMISH: decider.SKIRMISH * decider.RANK_SCALE + 12,
        decider.HOST: decider.HOST * decider.RANK_SCALE + 19,
    }


def test_a_key_unpacks_to_its_rank_and_sum() -> None:
    # decider module docstring: a key is ``rank * RANK_SCALE + sum``, ranks Host 0 to
    # Wedge 4 (docs/rulings.md 1), sums up to 40 (four 10s under Mud).
    for rank in KINDS:
        for total in range(41):
            key = rank * decider.RANK_SCALE + total
            assert (decider.rank_of(key), decider.sum_of(key)) == (rank, total)
    # The rulebook's Wedge R4 R5 R3 (FORMATIONS) and Mud Phalanx of four 7s.
    wedge = decider.strength([bl.Card.parse(t).code for t in ("R4", "R5", "R3")])
    assert (decider.rank_of(wedge), decider.sum_of(wedge)) == (decider.WEDGE, 12)
    sevens = decider.strength([bl.Card.parse(t).code for t in ("R7", "B7", "G7", "Y7")], 4)
    assert (decider.rank_of(sevens), decider.sum_of(sevens)) == (decider.PHALANX, 28)
