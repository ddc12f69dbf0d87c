"""Formation strength: which formation a side's cards make at their best.

Rules: Formations (Wedge > Phalanx > Battalion Order > Skirmish Line > Host, higher
sum breaks a tie within a category, no wrap-around), Fog (only the sum counts), Mud
(four-card formations); docs/rulings.md 1, 2 and 8. Wild cards take the color and value
that make the side strongest, and may copy a troop that is visible elsewhere.

This is the rules code that the solver uses to set its target and to replay every
witness before returning it. Which category and sum a side makes is decided once, by
:func:`decider.strength` (the bitmask evaluator the fast claim decider uses, and where
the runs are defined); :func:`best_formation` adds the identities the wild cards take
to make it. The brute-force oracle (``oracle.py``) has its own, separate evaluation:
``tests/test_formation_oracle.py`` checks both the strength and the identities
against it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import permutations

from battlejudge.solver.battleline import decider
from battlejudge.solver.battleline.cards import (
    CARDS,
    WILD_VALUES,
    Card,
    CardsInput,
    check_side,
    color_of,
    parse_cards,
    value_of,
)
from battlejudge.solver.errors import RuleError

WEDGE, PHALANX, BATTALION, SKIRMISH, HOST = "wedge", "phalanx", "battalion", "skirmish", "host"
CATEGORIES: tuple[str, ...] = (WEDGE, PHALANX, BATTALION, SKIRMISH, HOST)
"""Formation names, best first."""
RANK: dict[str, int] = {
    WEDGE: decider.WEDGE,
    PHALANX: decider.PHALANX,
    BATTALION: decider.BATTALION,
    SKIRMISH: decider.SKIRMISH,
    HOST: decider.HOST,
}
DISPLAY: dict[str, str] = {
    WEDGE: "Wedge",
    PHALANX: "Phalanx",
    BATTALION: "Battalion Order",
    SKIRMISH: "Skirmish Line",
    HOST: "Host",
}

Strength = tuple[int, int]
"""(category rank, sum); compare with ``<``. Under Fog the rank is always 0."""


@dataclass(frozen=True)
class Formation:
    """A complete formation at its best.

    ``identities`` pairs every card with the troop card it stands for (a troop is
    itself; a wild card gets the color and value chosen for it, docs/rulings.md 2).

    >>> best_formation(["R9", "cavalry", "alexander"]).identities[1]
    (Card.parse('cavalry'), Card.parse('R8'))
    """

    name: str
    total: int
    identities: tuple[tuple[Card, Card], ...]
    fog: bool = False

    @property
    def strength(self) -> Strength:
        """``(category rank, sum)``, comparable with ``<`` (Rules: Formations, ties)."""
        return (0 if self.fog else RANK[self.name], self.total)

    @property
    def key(self) -> decider.Key:
        """The strength as :mod:`.decider`'s key (``rank * RANK_SCALE + sum``), ordered the
        same way: what :func:`decider.wins_flag` compares."""
        rank, total = self.strength
        return rank * decider.RANK_SCALE + total

    @property
    def label(self) -> str:
        """How a player says it: ``'Wedge 12'``, or ``'total 24 (Fog)'``."""
        if self.fog:
            return f"total {self.total} (Fog)"
        return f"{DISPLAY[self.name]} {self.total}"

    def wild_choices(self) -> dict[str, str]:
        """The identity chosen for each wild card, e.g. ``{'alexander': 'B9'}``."""
        return {str(c): str(t) for c, t in self.identities if not c.is_troop}


def describe_strength(strength: Strength, fog: bool) -> str:
    """Say a strength the way a player does."""
    rank, total = strength
    if fog:
        return f"total {total} (Fog)"
    return f"{DISPLAY[CATEGORIES[4 - rank]]} {total}"


def _fill_run(run: Sequence[int], troop_values: list[int], wilds: list[str]) -> tuple[int, ...]:
    """Values for the wilds so that troops + wilds are exactly the values in ``run``
    (one exists: :func:`decider.strength` found the run)."""
    missing = [v for v in run if v not in troop_values]
    for perm in permutations(missing):
        if all(v in WILD_VALUES[w] for v, w in zip(perm, wilds, strict=True)):
            return perm
    raise AssertionError(f"no wild values fill the run {list(run)}")  # pragma: no cover


def best_formation(cards: CardsInput, mud: bool = False, fog: bool = False) -> Formation:
    """The strongest formation the cards make, with the identities chosen for wild cards.

    ``cards`` must be a complete formation (3 cards, 4 with Mud), as a string in the card
    notation (``"R4 R5 R3"``) or a sequence of cards (:func:`.cards.parse_cards`). Under Fog
    only the sum counts and the formation is reported as a Host with that sum.

    The category and sum are :func:`decider.strength`'s (the rule, docs/rulings.md 1, 2, 8);
    this adds the identities that make them: the run's missing values for a Wedge or
    Skirmish Line, the common value for a Phalanx, each wild's highest value
    otherwise, and the troops' color where the formation needs one color.

    >>> best_formation(["R4", "R5", "R3"]).label
    'Wedge 12'
    >>> best_formation("R4 R5 R3").label
    'Wedge 12'
    >>> best_formation(["B8", "alexander", "B10"]).wild_choices()
    {'alexander': 'B9'}
    """
    cs = parse_cards(cards)
    n = decider.formation_size(mud)
    if len(cs) != n:
        raise RuleError(
            f"a formation needs {n} cards{' (Mud)' if mud else ''}, got {len(cs)}: "
            + " ".join(map(str, cs))
        )
    check_side(cs, "the formation")
    rank, total = divmod(decider.strength([c.code for c in cs], n, fog), decider.RANK_SCALE)
    troops = [c.troop for c in cs if c.is_troop]
    wild_cards = [c for c in cs if not c.is_troop]
    wilds = [w for c in wild_cards if (w := c.wild) is not None]
    tvals = [value_of(t) for t in troops]
    tcols = {color_of(t) for t in troops}
    # The troops' color (any, if there are none) for a formation of one color; else a
    # color no troop has (keeps wild identities distinct where that is free).
    own = next(iter(tcols)) if tcols else 0
    free = next((c for c in range(6) if c not in tcols), 0)
    name = HOST if fog else CATEGORIES[4 - rank]
    if name in (WEDGE, SKIRMISH):
        run = next(r for r in decider.RUNS[n] if r.total == total).values
        color = own if name == WEDGE else free
        wild_ids = [color * 10 + v - 1 for v in _fill_run(run, tvals, wilds)]
    elif name == PHALANX:
        v = total // n
        colors = [c for c in range(6) if c not in tcols] + [0] * n
        wild_ids = [colors[i] * 10 + v - 1 for i in range(len(wilds))]
    else:
        color = own if name == BATTALION else free
        wild_ids = [color * 10 + max(WILD_VALUES[w]) - 1 for w in wilds]
    ids = dict(zip(wild_cards, wild_ids, strict=True))
    identities = tuple((c, c if c.is_troop else CARDS[ids[c]]) for c in cs)
    return Formation(name, total, identities, fog)
