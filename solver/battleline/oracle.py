"""A plain brute-force oracle for flag claims, sharing no logic with the solver.

It tries every completion of the opponent's side from the unseen pool
(``itertools.combinations``) and every identity of every wild card
(``itertools.product``), classifying each concrete hand of troops with its own
small evaluator. Slow on purpose and simple on purpose: tests compare the solver
with it, ``verify --deep`` re-decides with it, and the benchmark measures against it.

Independent on purpose: everywhere else each rule and constant of the game has one place
(the tie rule, the claim pool and the formation size in :mod:`.decider`, the troop/tactic
boundary in :mod:`.cards`), but this module writes them again, in its own plain way, and
asks neither. Sharing that code would let one mistake agree with itself; kept apart, the
oracle catches the decider's mistakes. Do not make it import the rules it checks.

Rules: Formations, Flags; docs/rulings.md 1, 2, 5-8.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations, pairwise, product

from battlejudge.solver.battleline.cards import Card

_WILD_IDENTITIES: dict[str, tuple[tuple[int, int], ...]] = {
    "leader": tuple((c, v) for c in range(6) for v in range(1, 11)),
    "cavalry": tuple((c, 8) for c in range(6)),
    "shield": tuple((c, v) for c in range(6) for v in (1, 2, 3)),
}


def classify(hand: Sequence[tuple[int, int]], fog: bool) -> tuple[int, int]:
    """(rank, sum) of concrete (color, value) cards: wedge 4 ... host 0; Fog ranks all 0."""
    values = sorted(v for _, v in hand)
    total = sum(values)
    if fog:
        return (0, total)
    one_color = len({c for c, _ in hand}) == 1
    run = all(b == a + 1 for a, b in pairwise(values))
    if one_color and run:
        return (4, total)
    if len(set(values)) == 1:
        return (3, total)
    if one_color:
        return (2, total)
    if run:
        return (1, total)
    return (0, total)


def _identities(cards: Sequence[Card]) -> Iterator[list[tuple[int, int]]]:
    fixed = [(c.code // 10, c.code % 10 + 1) for c in cards if c.code < 60]
    options = [_WILD_IDENTITIES[w] for c in cards if (w := c.wild) is not None]
    for chosen in product(*options):
        yield fixed + list(chosen)


def strength(cards: Sequence[Card], fog: bool) -> tuple[int, int]:
    """The best (rank, sum) over every identity of the wild cards."""
    return max(classify(hand, fog) for hand in _identities(cards))


@dataclass(frozen=True)
class OracleAnswer:
    """The brute-force oracle's answer to a claim question: valid, or the troops that beat it."""

    valid: bool
    witness: tuple[Card, ...] | None
    """Troops the opponent adds to beat the claim; None when the claim is valid."""


def ties_lost(theirs_complete: bool, completed_first: str | None) -> bool:
    """Does the claimant lose a tie? Only if both are complete and he completed last."""
    return theirs_complete and completed_first == "theirs"


def beats(theirs: tuple[int, int], mine: tuple[int, int], lost_ties: bool) -> bool:
    """Whether strength ``theirs`` beats ``mine``: higher (rank, sum), or equal when the claimant
    loses ties (the side that completed last loses a tie; Rules: Flags)."""
    return theirs > mine or (lost_ties and theirs == mine)


def decide(
    mine: Sequence[Card],
    theirs: Sequence[Card],
    seen: Sequence[Card],
    mud: bool = False,
    fog: bool = False,
    completed_first: str | None = None,
) -> OracleAnswer:
    """Is the claim valid? Tries every completion; returns the first one that beats it."""
    size = 4 if mud else 3
    target = strength(mine, fog)
    face_up = {c.code for c in (*mine, *theirs, *seen) if c.code < 60}
    pool = [Card(t) for t in range(60) if t not in face_up]
    lost = ties_lost(len(theirs) == size, completed_first)
    for extra in combinations(pool, size - len(theirs)):
        if beats(strength((*theirs, *extra), fog), target, lost):
            return OracleAnswer(False, extra)
    return OracleAnswer(True, None)


def work(theirs: Sequence[Card], seen_count: int, mud: bool, mine_count: int = 0) -> int:
    """How many hands ``decide`` may classify: to keep test examples affordable."""
    size = 4 if mud else 3
    pool = 60 - seen_count - mine_count - sum(1 for c in theirs if c.code < 60)
    k = size - len(theirs)
    n_ids = 1
    for c in theirs:
        if (w := c.wild) is not None:
            n_ids *= len(_WILD_IDENTITIES[w])
    combos = 1
    for i in range(k):
        combos = combos * (pool - i) // (i + 1)
    return max(combos, 0) * n_ids
