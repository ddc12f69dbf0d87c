"""Formation strength: which formation a side's cards make at their best.

Rules: Formations (Wedge > Phalanx > Battalion Order > Skirmish Line > Host, higher
sum breaks a tie within a category, no wrap-around), Fog (only the sum counts), Mud
(four-card formations); RULINGS.md 1, 2 and 8. Wild cards take the color and value
that make the side strongest, and may copy a troop that is visible elsewhere.

This is the rules code that the solver uses to set its target and to replay every
witness before returning it. The brute-force oracle (``oracle.py``) has its own,
separate evaluation.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import permutations

from battlejudge.solver.battleline.cards import (
    WILD_VALUES,
    Card,
    Troop,
    color_of,
    troop_name,
    value_of,
)
from battlejudge.solver.errors import RuleError

WEDGE, PHALANX, BATTALION, SKIRMISH, HOST = "wedge", "phalanx", "battalion", "skirmish", "host"
CATEGORIES: tuple[str, ...] = (WEDGE, PHALANX, BATTALION, SKIRMISH, HOST)
"""Formation names, best first."""
RANK: dict[str, int] = {name: 4 - i for i, name in enumerate(CATEGORIES)}
DISPLAY: dict[str, str] = {
    WEDGE: "Wedge",
    PHALANX: "Phalanx",
    BATTALION: "Battalion Order",
    SKIRMISH: "Skirmish Line",
    HOST: "Host",
}

Strength = tuple[int, int]
"""(category rank, sum); compare with ``<``. Under Fog the rank is always 0."""


def formation_size(mud: bool) -> int:
    """Cards per complete formation: 3, or 4 where Mud lies (Rules: Mud)."""
    return 4 if mud else 3


@dataclass(frozen=True)
class Formation:
    """A complete formation at its best.

    ``identities`` pairs every card with the troop identity it takes (a troop is
    itself; a wild card gets the color and value chosen for it).
    """

    name: str
    total: int
    identities: tuple[tuple[Card, Troop], ...]
    fog: bool = False

    @property
    def strength(self) -> Strength:
        return (0 if self.fog else RANK[self.name], self.total)

    @property
    def label(self) -> str:
        """How a player says it: ``'Wedge 12'``, or ``'total 24 (Fog)'``."""
        if self.fog:
            return f"total {self.total} (Fog)"
        return f"{DISPLAY[self.name]} {self.total}"

    def wild_choices(self) -> dict[str, str]:
        """The identity chosen for each wild card, e.g. ``{'alexander': 'B9'}``."""
        return {str(c): troop_name(t) for c, t in self.identities if not c.is_troop}


def describe_strength(strength: Strength, fog: bool) -> str:
    """Say a strength the way a player does."""
    rank, total = strength
    if fog:
        return f"total {total} (Fog)"
    return f"{DISPLAY[CATEGORIES[4 - rank]]} {total}"


def _fill_run(
    run: Sequence[int], troop_values: list[int], wilds: list[str]
) -> tuple[int, ...] | None:
    """Values for the wilds so that troops + wilds are exactly the values in ``run``."""
    if len(set(troop_values)) != len(troop_values) or not set(troop_values) <= set(run):
        return None
    missing = [v for v in run if v not in troop_values]
    if len(missing) != len(wilds):
        return None
    for perm in permutations(missing):
        if all(v in WILD_VALUES[w] for v, w in zip(perm, wilds, strict=True)):
            return perm
    return None


def best_formation(cards: Iterable[Card | str], mud: bool = False, fog: bool = False) -> Formation:
    """The strongest formation the cards make, with the identities chosen for wild cards.

    ``cards`` must be a complete formation (3 cards, 4 with Mud). Under Fog only the
    sum counts and the formation is reported as a Host with that sum.

    >>> best_formation(["R4", "R5", "R3"]).label
    'Wedge 12'
    >>> best_formation(["B8", "alexander", "B10"]).wild_choices()
    {'alexander': 'B9'}
    """
    cs = tuple(c if isinstance(c, Card) else Card.parse(c) for c in cards)
    n = formation_size(mud)
    if len(cs) != n:
        raise RuleError(
            f"a formation needs {n} cards{' (Mud)' if mud else ''}, got {len(cs)}: "
            + " ".join(map(str, cs))
        )
    troops = [c.troop for c in cs if c.is_troop]
    wild_cards = [c for c in cs if not c.is_troop]
    wilds = [w for c in wild_cards if (w := c.wild) is not None]
    tvals = [value_of(t) for t in troops]
    tcols = {color_of(t) for t in troops}
    top = [max(WILD_VALUES[w]) for w in wilds]
    # A color for wilds that must share the troops' color (or any, if no troops).
    one_color = next(iter(tcols)) if len(tcols) == 1 else (0 if not tcols else None)

    def done(name: str, wild_ids: Sequence[Troop]) -> Formation:
        ids = [(c, c.troop) for c in cs if c.is_troop]
        ids += list(zip(wild_cards, wild_ids, strict=True))
        total = sum(value_of(t) for _, t in ids)
        order = {c: i for i, c in enumerate(cs)}
        ids.sort(key=lambda p: order[p[0]])
        return Formation(name, total, tuple(ids), fog)

    def free_color() -> int:
        """A color no troop here has (keeps wild identities distinct where it is free)."""
        return next((c for c in range(6) if c not in tcols), 0)

    if fog:
        return done(HOST, [free_color() * 10 + v - 1 for v in top])
    runs = [range(s, s + n) for s in range(11 - n, 0, -1)]  # highest first
    if one_color is not None:
        for run in runs:
            fill = _fill_run(run, tvals, wilds)
            if fill is not None:
                return done(WEDGE, [one_color * 10 + v - 1 for v in fill])
    for v in range(10, 0, -1):
        if all(tv == v for tv in tvals) and all(v in WILD_VALUES[w] for w in wilds):
            used = set(tcols)
            ids = []
            for _ in wilds:
                col = next((c for c in range(6) if c not in used), 0)
                used.add(col)
                ids.append(col * 10 + v - 1)
            return done(PHALANX, ids)
    if one_color is not None:
        return done(BATTALION, [one_color * 10 + v - 1 for v in top])
    for run in runs:
        fill = _fill_run(run, tvals, wilds)
        if fill is not None:
            return done(SKIRMISH, [free_color() * 10 + v - 1 for v in fill])
    return done(HOST, [free_color() * 10 + v - 1 for v in top])
