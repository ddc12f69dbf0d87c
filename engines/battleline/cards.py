"""The whole Battle Line deck for the engine, and its two themes.

Card codes: troops 0..59 (as in the solver: ``color * 10 + value - 1``), tactics
60..69. Codes 60..63 are the morale tactics the solver knows
(:class:`battlejudge.solver.battleline.Card`), so a card at a flag converts directly.

Themes (docs/rulings.md, Nine Circles): the same rules under other names. Input accepts
both themes' names whatever the theme; output uses the chosen theme.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, TypeAlias

from battlejudge.solver.battleline.cards import ALL_TROOPS, COLORS, TROOP_COUNT, troop_name
from battlejudge.solver.errors import InputError

CardCode: TypeAlias = int

TACTICS = (
    "alexander",
    "darius",
    "cavalry",
    "shield",
    "fog",
    "mud",
    "scout",
    "redeploy",
    "deserter",
    "traitor",
)
TACTIC_CODE = {name: TROOP_COUNT + i for i, name in enumerate(TACTICS)}
ALEXANDER, DARIUS, CAVALRY, SHIELD, FOG, MUD, SCOUT, REDEPLOY, DESERTER, TRAITOR = range(
    TROOP_COUNT, TROOP_COUNT + len(TACTICS)
)
LEADERS = frozenset({ALEXANDER, DARIUS})
MORALE = frozenset({ALEXANDER, DARIUS, CAVALRY, SHIELD})
ENVIRONMENT = frozenset({FOG, MUD})
GUILE = frozenset({SCOUT, REDEPLOY, DESERTER, TRAITOR})
ALL_CARDS = tuple(range(TROOP_COUNT + len(TACTICS)))
TROOPS = ALL_TROOPS
TACTIC_CARDS = ALL_CARDS[TROOP_COUNT:]

Theme = Literal["battleline", "nine-circles"]
THEMES: tuple[Theme, ...] = ("battleline", "nine-circles")

# Notation slug and display name per theme, for the tactics.
_NAMES: dict[Theme, dict[int, tuple[str, str]]] = {
    "battleline": {
        ALEXANDER: ("alexander", "Alexander"),
        DARIUS: ("darius", "Darius"),
        CAVALRY: ("cavalry", "Companion Cavalry"),
        SHIELD: ("shield", "Shield Bearers"),
        FOG: ("fog", "Fog"),
        MUD: ("mud", "Mud"),
        SCOUT: ("scout", "Scout"),
        REDEPLOY: ("redeploy", "Redeploy"),
        DESERTER: ("deserter", "Deserter"),
        TRAITOR: ("traitor", "Traitor"),
    },
    "nine-circles": {
        ALEXANDER: ("beelzebub", "Beelzebub"),
        DARIUS: ("mephistopheles", "Mephistopheles"),
        CAVALRY: ("shapeshifter", "Shapeshifter"),
        SHIELD: ("3-headed-monkey", "3-headed monkey"),
        FOG: ("mano-a-mano", "Mano a Mano!"),
        MUD: ("mud", "Mud"),
        SCOUT: ("scout", "Scout"),
        REDEPLOY: ("redeploy", "Redeploy"),
        DESERTER: ("day-off", "Day off"),
        TRAITOR: ("we-have-cookies", "We have Cookies!"),
    },
}
FLAG_WORD: dict[Theme, str] = {"battleline": "flag", "nine-circles": "circle"}
_ALIASES = {
    "companioncavalry": CAVALRY,
    "shieldbearers": SHIELD,
    "leader": -1,  # ambiguous: named in the error
}
_LOOKUP: dict[str, int] = {}
for _theme in THEMES:
    for _code, (_slug, _display) in _NAMES[_theme].items():
        _LOOKUP[re.sub(r"[^a-z0-9]", "", _slug)] = _code
        _LOOKUP[re.sub(r"[^a-z0-9]", "", _display.lower())] = _code
_TROOP_RE = re.compile(r"^([ROYGBP])(10|[1-9])$", re.IGNORECASE)


def check_theme(theme: str) -> Theme:
    """``theme`` itself when it is a known theme (``battleline``, ``nine-circles``); an
    :class:`InputError` naming it otherwise."""
    if theme not in THEMES:
        raise InputError(f"unknown theme {theme!r} (themes: {', '.join(THEMES)})")
    return theme


def parse_card(text: str, where: str = "") -> CardCode:
    """Any card, leniently: ``R10``, ``alexander``, ``Beelzebub``, ``Mano a Mano!``; anything
    but a string is refused with an :class:`InputError` naming it."""
    if not isinstance(text, str):
        raise InputError(f"a card is a string such as 'R10', got {text!r}")
    token = text.strip()
    m = _TROOP_RE.match(token)
    if m:
        return COLORS.index(m.group(1).upper()) * 10 + int(m.group(2)) - 1
    key = re.sub(r"[^a-z0-9]", "", token.lower())
    code = _LOOKUP.get(key, _ALIASES.get(key))
    place = f" in {where}" if where else ""
    if code == -1:
        raise InputError(f"{token!r}{place} is ambiguous: name the Leader (alexander or darius)")
    if code is None:
        raise InputError(
            f"unknown card {token!r}{place} (troops are a color R O Y G B P and a value 1-10, "
            f"e.g. R10; tactics: {', '.join(TACTICS)})"
        )
    return code


def card_name(code: CardCode, theme: Theme = "battleline") -> str:
    """Canonical notation of a card in a theme (troops are the same in both)."""
    if code < TROOP_COUNT:
        return troop_name(code)
    return _NAMES[theme][code][0]


def display_name(code: CardCode, theme: Theme = "battleline") -> str:
    """The name a player reads for card ``code`` under ``theme`` (a troop's ``Red 10``, a
    tactic's themed name)."""
    if code < TROOP_COUNT:
        return troop_name(code)
    return _NAMES[theme][code][1]


def is_troop(code: CardCode) -> bool:
    """True for the 60 troop codes, False for tactics."""
    return code < TROOP_COUNT


@dataclass(frozen=True)
class Naming:
    """Output names for one theme."""

    theme: Theme = "battleline"

    def card(self, code: CardCode) -> str:
        """The notation of card ``code`` in this theme."""
        return card_name(code, self.theme)

    def cards(self, codes: list[CardCode] | tuple[CardCode, ...]) -> str:
        """The notation of ``codes``, separated by spaces."""
        return " ".join(card_name(c, self.theme) for c in codes)

    @property
    def flag(self) -> str:
        """What this theme calls a flag (``flag``, or Nine Circles' word)."""
        return FLAG_WORD[self.theme]
