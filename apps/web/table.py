"""The claim checker's table as the page's URL holds it, and what each tap leads to.

The question lives in the URL (``/?mine=R4,R5,R3&theirs=B8&seen=B7,B10&mud=0&fog=0&first=``)
plus ``zone``, the zone a tapped card goes to (``mine`` unless said). Every card on the page is
a link to the table after tapping it, so the page keeps no state of its own: a shared link,
a reload and the back button all show the same table. The rules are not here: the cards are
parsed by :func:`~battlejudge.solver.battleline.parse_cards` and the question checked by
:class:`~battlejudge.solver.battleline.ClaimQuestion`, whose one-line messages the page shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final, Literal, TypeAlias
from urllib.parse import urlencode

from battlejudge.solver import battleline as bl
from battlejudge.solver.battleline.cards import COLOR_NAMES, COLORS, MORALE
from battlejudge.solver.battleline.decider import formation_size
from battlejudge.solver.errors import InputError

Zone: TypeAlias = Literal["mine", "theirs", "seen"]
ZONES: Final[tuple[Zone, ...]] = ("mine", "theirs", "seen")
ZONE_NAMES: Final[dict[Zone, str]] = {
    "mine": "My cards",
    "theirs": "Their cards",
    "seen": "Seen elsewhere",
}
SYMBOLS: Final = dict(zip(COLORS, "●▲■◆★✚", strict=True))
"""A shape per color, printed on the card beside its letter: colors told apart without color."""
TACTICS: Final = tuple(bl.Card.parse(name) for name in MORALE)
"""The four morale tactics that stand in a formation (Rules: Tactics Cards, Morale Tactics)."""
_SWITCH = {"0": False, "1": True, "false": False, "true": True, "off": False, "on": True, "": False}


@dataclass(frozen=True)
class Table:
    """One flag as the URL states it: the cards of each zone (as parsed, in order and with
    any repeats, so the question's own checks can name them), Mud, Fog, who completed
    first, the zone a tap adds to, and the first problem met while reading the URL."""

    mine: tuple[bl.Card, ...] = ()
    theirs: tuple[bl.Card, ...] = ()
    seen: tuple[bl.Card, ...] = ()
    mud: bool = False
    fog: bool = False
    first: str = ""
    zone: Zone = "mine"
    error: str | None = None

    @classmethod
    def of_question(cls, q: bl.ClaimQuestion) -> Table:
        """The table that states ``q`` (its link opens ``q`` in the checker)."""
        return cls(q.mine, q.theirs, q.seen, q.mud, q.fog, q.completed_first or "")

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> Table:
        """The table of a query string's parameters. Never raises: a card that cannot be read
        is left out and the first such problem kept in ``error`` (the CLI's message, naming
        the parameter)."""
        errors: list[str] = []
        zones: dict[str, tuple[bl.Card, ...]] = {}
        for name in ZONES:
            cards: list[bl.Card] = []
            for token in query.get(name, "").replace(",", " ").split():
                try:
                    cards.extend(bl.parse_cards([token], name))
                except InputError as e:
                    errors.append(str(e))
            zones[name] = tuple(cards)
        switches = {}
        for switch in ("mud", "fog"):
            raw = query.get(switch, "0").strip().lower()
            if raw not in _SWITCH:
                errors.append(f"{switch} must be 0 or 1, got {query[switch]!r}")
            switches[switch] = _SWITCH.get(raw, False)
        first = query.get("first", "").strip().lower()
        if first not in ("", "mine", "theirs"):
            errors.append(f"first must be mine, theirs or empty, got {query['first']!r}")
            first = ""
        raw_zone = query.get("zone", "mine")
        zone: Zone = "mine"
        for z in ZONES:
            if raw_zone == z:
                zone = z
        if raw_zone not in ZONES:
            errors.append(f"zone must be mine, theirs or seen, got {raw_zone!r}")
        return cls(
            zones["mine"],
            zones["theirs"],
            zones["seen"],
            switches["mud"],
            switches["fog"],
            first,
            zone,
            errors[0] if errors else None,
        )

    @property
    def size(self) -> int:
        """Cards in a complete formation at this flag: 3, or 4 under Mud (Rules: Mud)."""
        return formation_size(self.mud)

    @property
    def is_empty(self) -> bool:
        """No card on the table yet."""
        return not (self.mine or self.theirs or self.seen)

    def cards(self, zone: Zone) -> tuple[bl.Card, ...]:
        """The cards of ``zone``, in the order given."""
        return {"mine": self.mine, "theirs": self.theirs, "seen": self.seen}[zone]

    def zone_of(self, card: bl.Card) -> Zone | None:
        """The first zone ``card`` is in, or None."""
        for zone in ZONES:
            if card in self.cards(zone):
                return zone
        return None

    def question(self) -> bl.ClaimQuestion:
        """The claim question; raises ``ValueError`` (:class:`InputError` or ``RuleError``)
        with the CLI's one-line message when the URL could not be read or the cards
        cannot stand as given (a card twice, two Leaders, an incomplete claim...)."""
        if self.error is not None:
            raise InputError(self.error)
        return bl.ClaimQuestion(
            mine=self.mine,
            theirs=self.theirs,
            seen=self.seen,
            mud=self.mud,
            fog=self.fog,
            completed_first=self.first or None,
        )

    def tapped(self, card: bl.Card) -> Table:
        """The table after tapping ``card``: out of every zone it is in, or else into the
        tap zone (a tactic never goes to seen, which lists troops only: then to mine).
        ``first`` is dropped once their side is no longer complete, where it means nothing."""
        if self.zone_of(card) is not None:
            out = {z: tuple(c for c in self.cards(z) if c != card) for z in ZONES}
            t = replace(self, mine=out["mine"], theirs=out["theirs"], seen=out["seen"])
        else:
            zone: Zone = "mine" if self.zone == "seen" and not card.is_troop else self.zone
            cards = (*self.cards(zone), card)
            if zone == "mine":
                t = replace(self, mine=cards)
            elif zone == "theirs":
                t = replace(self, theirs=cards)
            else:
                t = replace(self, seen=cards)
        if len(t.theirs) < t.size:
            t = replace(t, first="")
        return t

    def url(self, **changes: object) -> str:
        """The page's URL for this table with ``changes`` (fields of :class:`Table`) made."""
        t = replace(self, **changes) if changes else self  # type: ignore[arg-type]
        return "/?" + t.query_string()

    def query_string(self, *, zone: bool = True) -> str:
        """The table as a query string, in the issue's order (mine, theirs, seen, mud, fog,
        first), then ``zone`` when it is not ``mine``."""
        params = {
            "mine": ",".join(map(str, self.mine)),
            "theirs": ",".join(map(str, self.theirs)),
            "seen": ",".join(map(str, self.seen)),
            "mud": "1" if self.mud else "0",
            "fog": "1" if self.fog else "0",
            "first": self.first,
        }
        if zone and self.zone != "mine":
            params["zone"] = self.zone
        return urlencode(params, safe=",")


@dataclass(frozen=True)
class Cell:
    """One card of the grid: its face (color letter, value, shape), where it lies, and the
    link that taps it."""

    card: bl.Card
    label: str
    letter: str
    value: str
    symbol: str
    zone: Zone | None
    href: str

    @property
    def name(self) -> str:
        """The card's canonical notation (``R4``, ``alexander``)."""
        return str(self.card)


def cell(table: Table, card: bl.Card) -> Cell:
    """The grid cell of ``card`` on ``table``."""
    name = str(card)
    if card.is_troop:
        letter, value, symbol = name[0], name[1:], SYMBOLS[name[0]]
    else:
        letter, value, symbol = name[0].upper(), "", "♛" if name in ("alexander", "darius") else "✦"
    zone = table.zone_of(card)
    return Cell(card, card.long_name, letter, value, symbol, zone, table.tapped(card).url())


def grid(table: Table) -> list[tuple[str, list[Cell]]]:
    """The 60 troops by color (rows, with the color's name) and value (columns, 1-10)."""
    return [
        (COLOR_NAMES[i], [cell(table, bl.Card.parse(f"{c}{v}")) for v in range(1, 11)])
        for i, c in enumerate(COLORS)
    ]


def tactics(table: Table) -> list[Cell]:
    """The four morale tactics' cells."""
    return [cell(table, card) for card in TACTICS]
