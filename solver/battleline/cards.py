"""Battle Line cards and their notation.

Troops are small ints on the hot path (``Troop = color * 10 + value - 1``, 0..59);
:class:`Card` is the value object at the edges. Notation (fixed, other tools depend
on it): a troop is a color letter and a value, ``R10``; colors R O Y G B P. The
morale tactics that stand in a formation are ``alexander``, ``darius``,
``cavalry`` (Companion Cavalry) and ``shield`` (Shield Bearers). Input is
case-insensitive and separated by spaces or commas; output is canonical.

Rules: Troop Cards; Tactics Cards, Morale Tactics (docs/rulings.md 2).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from battlejudge.solver.errors import InputError, RuleError

Troop: TypeAlias = int
"""A troop card as an int: ``color_index * 10 + (value - 1)``, 0..59."""

COLORS = "ROYGBP"
COLOR_NAMES = ("Red", "Orange", "Yellow", "Green", "Blue", "Purple")
VALUES = range(1, 11)
TROOP_COUNT = 60
"""How many troops there are (six colors of ten values), and so the boundary between
troops and tactics: codes below it are troops (0..59), codes from it on are tactics (the
solver's morale tactics 60-63; the engine's ten tactics 60-69). ``code < TROOP_COUNT``
asks "is this a troop?" everywhere."""
ALL_TROOPS: tuple[Troop, ...] = tuple(range(TROOP_COUNT))

# Wild kinds: the three morale effects a tactic in a formation can have.
LEADER = "leader"
CAVALRY = "cavalry"
SHIELD = "shield"

WILD_VALUES: dict[str, tuple[int, ...]] = {
    LEADER: tuple(VALUES),
    CAVALRY: (8,),
    SHIELD: (1, 2, 3),
}
"""The values each wild kind may take when the flag is resolved (docs/rulings.md 2)."""

# Morale tactics, by canonical name -> wild kind. Codes 60.. follow this order.
MORALE: dict[str, str] = {
    "alexander": LEADER,
    "darius": LEADER,
    "cavalry": CAVALRY,
    "shield": SHIELD,
}
_MORALE_ALIASES = {
    "companion-cavalry": "cavalry",
    "companion_cavalry": "cavalry",
    "companioncavalry": "cavalry",
    "shield-bearers": "shield",
    "shield_bearers": "shield",
    "shieldbearers": "shield",
}
_NOT_FORMATION_CARDS = {
    "fog": "Fog is an environment tactic, not a formation card: use the fog option",
    "mud": "Mud is an environment tactic, not a formation card: use the mud option",
    "scout": "Scout is a guile tactic and never stands in a formation",
    "redeploy": "Redeploy is a guile tactic and never stands in a formation",
    "deserter": "Deserter is a guile tactic and never stands in a formation",
    "traitor": "Traitor is a guile tactic and never stands in a formation",
}
_TROOP_RE = re.compile(r"^([ROYGBP])(10|[1-9])$", re.IGNORECASE)
_TACTIC_NAMES = tuple(MORALE)
WILD_KIND: dict[int, str] = {TROOP_COUNT + i: MORALE[name] for i, name in enumerate(_TACTIC_NAMES)}
"""The wild kind of each morale tactic's card code (60 alexander ... 63 shield)."""
LEADER_CODES: tuple[int, ...] = tuple(code for code, kind in WILD_KIND.items() if kind == LEADER)
"""The card codes of the two Leaders (Alexander, Darius): a player may have only one
(docs/rulings.md 3)."""


def troop(color: str, value: int) -> Troop:
    """The troop int for a color letter and a value 1..10."""
    return COLORS.index(color.upper()) * 10 + value - 1


def color_of(t: Troop) -> int:
    """Color index 0..5 of a troop int."""
    return t // 10


def value_of(t: Troop) -> int:
    """Value 1..10 of a troop int."""
    return t % 10 + 1


def troop_name(t: Troop) -> str:
    """Canonical notation of a troop int, e.g. ``'B10'``."""
    return f"{COLORS[t // 10]}{t % 10 + 1}"


def troop_long_name(t: Troop) -> str:
    """How a player says it: ``'Blue 10'``."""
    return f"{COLOR_NAMES[t // 10]} {t % 10 + 1}"


@dataclass(frozen=True, order=True)
class Card:
    """A card that can stand in a formation: a troop (code 0..59) or a morale tactic.

    >>> Card.parse('r10')
    Card.parse('R10')
    >>> Card.parse('Alexander').wild
    'leader'
    """

    code: int

    def __post_init__(self) -> None:
        if not 0 <= self.code < TROOP_COUNT + len(_TACTIC_NAMES):
            raise InputError(f"card code {self.code} is out of range")

    @classmethod
    def parse(cls, text: str, where: str = "") -> Card:
        """Parse one card, leniently (any case, long tactic names); ``where`` names the source.
        Anything but a string is refused with an :class:`InputError` naming it."""
        try:
            card = _BY_NAME.get(text.lower())
        except AttributeError:
            raise InputError(f"a card is a string such as 'R10', got {text!r}") from None
        if card is not None:
            return card
        token = text.strip()
        place = f" in {where}" if where else ""
        m = _TROOP_RE.match(token)
        if m:
            return cls(troop(m.group(1), int(m.group(2))))
        key = token.lower()
        key = _MORALE_ALIASES.get(key, key)
        if key in MORALE:
            return cls(TROOP_COUNT + _TACTIC_NAMES.index(key))
        if key in _NOT_FORMATION_CARDS:
            raise InputError(f"{token!r}{place}: {_NOT_FORMATION_CARDS[key]}")
        raise InputError(
            f"unknown card {token!r}{place} (troops are a color R O Y G B P and a value 1-10, "
            f"e.g. R10; tactics: alexander, darius, cavalry, shield)"
        )

    @property
    def is_troop(self) -> bool:
        """True for the 60 troops, False for the morale tactics (Leaders, Companion Cavalry, Shield
        Bearers)."""
        return self.code < TROOP_COUNT

    @property
    def troop(self) -> Troop:
        """The troop int; only for troops."""
        if self.code >= TROOP_COUNT:
            raise InputError(f"{self} is a tactic, not a troop")
        return self.code

    @property
    def wild(self) -> str | None:
        """The wild kind (leader, cavalry, shield) of a morale tactic, None for troops."""
        return None if self.code < TROOP_COUNT else MORALE[_TACTIC_NAMES[self.code - TROOP_COUNT]]

    @property
    def long_name(self) -> str:
        """The name a player says: ``Red 10``, ``Alexander``, ``Companion Cavalry``, ``Shield
        Bearers``."""
        if self.code < TROOP_COUNT:
            return troop_long_name(self.code)
        return {"cavalry": "Companion Cavalry", "shield": "Shield Bearers"}.get(
            str(self), str(self).capitalize()
        )

    def __str__(self) -> str:
        return (
            troop_name(self.code)
            if self.code < TROOP_COUNT
            else _TACTIC_NAMES[self.code - TROOP_COUNT]
        )

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"

    def _repr_pretty_(self, printer: object, cycle: bool) -> None:
        """Hypothesis and IPython print the pasteable repr."""
        printer.text(repr(self))  # type: ignore[attr-defined]


CARDS: tuple[Card, ...] = tuple(Card(code) for code in range(TROOP_COUNT + len(_TACTIC_NAMES)))
"""Every formation card, by code: the one shared instance of each."""
_BY_NAME: dict[str, Card] = {str(c).lower(): c for c in CARDS} | {
    alias: CARDS[TROOP_COUNT + _TACTIC_NAMES.index(name)] for alias, name in _MORALE_ALIASES.items()
}
"""Lower-case notation (and the morale tactics' long names) -> card: the hot path of
:meth:`Card.parse`; anything else goes through the full parse and its error messages."""

CardsInput: TypeAlias = "str | Iterable[str | Card] | None"


def parse_cards(cards: CardsInput, where: str = "") -> tuple[Card, ...]:
    """Parse a list of cards: a string in the card notation, separated by spaces or commas
    (``"R1 R2 R3"``), or a sequence (any iterable) of card names and :class:`Card` objects;
    None is no card. The one coercion every public function taking cards uses: anything else
    (a number, bytes, a lone Card) is refused with an :class:`InputError` naming the value.

    Order is kept (it is the order cards were played); duplicates are kept too, so the
    caller can report them with their source.

    >>> parse_cards("r4, R5 r3")
    (Card.parse('R4'), Card.parse('R5'), Card.parse('R3'))
    >>> parse_cards(["R4", Card.parse("alexander")])
    (Card.parse('R4'), Card.parse('alexander'))
    """
    if cards is None:
        return ()
    if isinstance(cards, str):
        tokens: Iterable[str | Card] = cards.replace(",", " ").split()
    elif isinstance(cards, Iterable) and not isinstance(cards, bytes | bytearray):
        tokens = cards
    else:
        raise InputError(
            f"{where or 'cards'} must be a string of cards such as 'R1 R2 R3' or a sequence "
            f"of cards, got {cards!r}"
        )
    out = []
    for tok in tokens:
        if isinstance(tok, str):
            out.append(_BY_NAME.get(tok.lower()) or Card.parse(tok, where))
        elif isinstance(tok, Card):
            out.append(tok)
        else:
            raise InputError(f"{tok!r} in {where or 'cards'} is not a card name")
    return tuple(out)


def check_side(cards: Sequence[Card], where: str) -> None:
    """Raise :class:`RuleError` unless ``cards`` can stand together at one side of a flag:
    every card exists once, and a player has at most one Leader (docs/rulings.md 3)."""
    seen: set[Card] = set()
    for card in cards:
        if card in seen:
            raise RuleError(f"card {card} is given twice in {where}; every card exists once")
        seen.add(card)
    leaders = [c for c in cards if c.wild == LEADER]
    if len(leaders) > 1:
        raise RuleError(
            f"{where} has two Leaders ({format_cards(leaders)}); a player may have only one"
        )


def format_cards(cards: CardsInput) -> str:
    """Canonical printing: cards separated by single spaces (``parse_cards`` reads it back).
    Takes what :func:`parse_cards` takes.

    >>> format_cards("r4,alexander")
    'R4 alexander'
    """
    return " ".join(str(c) for c in parse_cards(cards))
