"""Card sets: the weapons, battle cards, unit cards and strategy cards of a Force Duel game.

The rules text leaves the card values, most strategy cards, the weapons and the unit
cards' effects open (docs/rulings.md, Force Duel), so a game is played with a card-set file:
TOML validated by :class:`CardSet` (its JSON Schema: ``battlejudge force-duel schema``).
The project ships ``house.toml`` (loaded by the name ``house``).

Strategy and unit cards are written in a small effect vocabulary (:data:`Effect`). An
effect is held by a player; "enemy" below is the other player:

=================  ===========================================================
``force_weapon``   the enemy must fight with ``weapon``
``max_cards``      the enemy may use at most ``n`` battle cards
``min_cards``      the enemy must use at least ``n`` battle cards
``weapon_bonus``   ``points`` when you use ``mine`` and the enemy ``theirs``
                   (either may be left out: any weapon)
``count_bonus``    ``points`` when you use ``fewer``/``more``/the ``same``
                   number of cards as the enemy
``points``         ``points`` added to your total
``win_ties``       you win a battle of equal totals (not if both have it)
``recover_units``  if you win, ``n`` of your gravestones turn back to units
``extra_loss``     if you win, the enemy loses ``n`` more units
``shield``         if you lose, you lose no unit
=================  ===========================================================

A unit card's effects are held by its owner (``who = "owner"``) or by both players
(``who = "both"``: a battle rule for everyone).
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from battlejudge.solver.errors import InputError, json_path
from battlejudge.solver.json_input import parse_json

HOUSE = "house"
"""The name of the shipped card set (``cards=house``)."""

MAX_FORCE = 3


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ForceWeapon(_Model):
    """Effect ``force_weapon``: the enemy must fight with ``weapon``."""

    kind: Literal["force_weapon"]
    weapon: str


class MaxCards(_Model):
    """Effect ``max_cards``: the enemy may use at most ``n`` battle cards."""

    kind: Literal["max_cards"]
    n: int = Field(ge=1, le=MAX_FORCE)


class MinCards(_Model):
    """Effect ``min_cards``: the enemy must use at least ``n`` battle cards."""

    kind: Literal["min_cards"]
    n: int = Field(ge=1, le=MAX_FORCE)


class WeaponBonus(_Model):
    """Effect ``weapon_bonus``: ``points`` when you use weapon ``mine`` and the enemy ``theirs``
    (either left out: any weapon)."""

    kind: Literal["weapon_bonus"]
    points: int = Field(ge=-20, le=20)
    mine: str | None = None
    theirs: str | None = None


class CountBonus(_Model):
    """Effect ``count_bonus``: ``points`` when you use fewer, more or the same number of battle
    cards as the enemy."""

    kind: Literal["count_bonus"]
    points: int = Field(ge=-20, le=20)
    when: Literal["fewer", "more", "same"]


class Points(_Model):
    """Effect ``points``: ``points`` added to your total."""

    kind: Literal["points"]
    points: int = Field(ge=-20, le=20)


class WinTies(_Model):
    """Effect ``win_ties``: you win a battle of equal totals (not if both players hold it)."""

    kind: Literal["win_ties"]


class RecoverUnits(_Model):
    """Effect ``recover_units``: if you win, ``n`` of your gravestones turn back to units."""

    kind: Literal["recover_units"]
    n: int = Field(default=1, ge=1, le=5)


class ExtraLoss(_Model):
    """Effect ``extra_loss``: if you win, the enemy loses ``n`` more units."""

    kind: Literal["extra_loss"]
    n: int = Field(default=1, ge=1, le=5)


class Shield(_Model):
    """Effect ``shield``: if you lose, you lose no unit."""

    kind: Literal["shield"]


Effect = Annotated[
    ForceWeapon
    | MaxCards
    | MinCards
    | WeaponBonus
    | CountBonus
    | Points
    | WinTies
    | RecoverUnits
    | ExtraLoss
    | Shield,
    Field(discriminator="kind"),
]
"""One effect of a strategy or unit card (see the module docstring)."""


class BattleCardSpec(_Model):
    """A battle card: its weapon, the power it gives as the first card, the extra it
    adds as a later card, and how many copies each battle deck holds."""

    weapon: str
    power: int = Field(ge=0, le=50)
    extra: int = Field(ge=-20, le=20)
    count: int = Field(default=1, ge=1, le=10)


class UnitCardSpec(_Model):
    """A unit card shuffled into each battle deck; laid out from the top three, it sets
    a rule for the next battle."""

    name: str = Field(min_length=1, max_length=40)
    text: str = ""
    who: Literal["owner", "both"] = "both"
    effects: list[Effect] = Field(min_length=1)
    count: int = Field(default=1, ge=1, le=5)
    house_rule: bool = True


class StrategyCardSpec(_Model):
    """A strategy card of the shared strategy deck."""

    name: str = Field(min_length=1, max_length=40)
    text: str = ""
    effects: list[Effect] = Field(min_length=1)
    count: int = Field(default=1, ge=1, le=5)
    house_rule: bool = False
    """True for cards the rules text does not describe."""


class RulesSpec(_Model):
    """Numbers the rules text leaves open."""

    off_weapon_power: int = Field(default=1, ge=-20, le=50)
    """The power of a first card whose weapon is not the one its player uses."""
    off_weapon_extra: int = Field(default=-1, ge=-20, le=20)
    """The extra of a later card whose weapon is not the one its player uses."""
    max_battles: int = Field(default=100, ge=1, le=1000)
    """After this many battles the game ends: more units wins, equal is a draw."""


class CardSet(_Model):
    """A whole card set (one TOML file)."""

    name: str = Field(min_length=1, max_length=60)
    description: str = ""
    house_rules: list[str] = Field(default_factory=list)
    """Every gap of the rules text this set fills, in words."""
    weapons: list[str] = Field(min_length=1, max_length=8)
    rules: RulesSpec = Field(default_factory=RulesSpec)
    battle: list[BattleCardSpec] = Field(min_length=1, max_length=200)
    units: list[UnitCardSpec] = Field(default_factory=list, max_length=50)
    strategy: list[StrategyCardSpec] = Field(min_length=1, max_length=60)

    @cached_property
    def canonical(self) -> str:
        """Canonical JSON text of the set (saved states embed it)."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))


_WEAPON = re.compile(r"^[a-z]+$")
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9 '\-]*$")
_LABEL = re.compile(r"^[a-z]+\d+[+-]\d+$")
MIN_STRATEGY = 8
"""Both hands (6), the two cards on the table and one more to draw."""


def normal_name(text: str) -> str:
    """Names compare without case, spaces, hyphens or underscores."""
    return re.sub(r"[\s_\-]+", "", text.lower())


def normal_label(text: str) -> str:
    """Battle-card notation compares without case or spaces (``Bow 5 +1`` = ``bow5+1``)."""
    return re.sub(r"\s+", "", text.lower())


def _check(cs: CardSet) -> None:
    """Cross-field checks pydantic cannot express, with the key that is wrong."""
    weapons = cs.weapons
    for i, w in enumerate(weapons):
        if not _WEAPON.match(w):
            raise InputError(f"cards.weapons[{i}]: {w!r} must be lowercase letters a-z")
        if w in weapons[:i]:
            raise InputError(f"cards.weapons[{i}]: {w!r} given twice")

    def weapon(where: str, w: str | None) -> None:
        if w is not None and w not in weapons:
            raise InputError(f"cards.{where}: unknown weapon {w!r} (weapons: {', '.join(weapons)})")

    seen: dict[tuple[str, int, int], int] = {}
    for i, b in enumerate(cs.battle):
        weapon(f"battle[{i}].weapon", b.weapon)
        key = (b.weapon, b.power, b.extra)
        if key in seen:
            raise InputError(
                f"cards.battle[{i}]: same card as battle[{seen[key]}] (raise its count instead)"
            )
        seen[key] = i
    names: dict[str, str] = {}
    named: list[tuple[str, int, UnitCardSpec | StrategyCardSpec]] = [
        ("units", i, u) for i, u in enumerate(cs.units)
    ] + [("strategy", i, s) for i, s in enumerate(cs.strategy)]
    for group, i, card in named:
        name = normal_name(card.name)
        if not _NAME.match(card.name) or _LABEL.match(normal_label(card.name)):
            raise InputError(
                f"cards.{group}[{i}].name: {card.name!r} must start with a letter and hold "
                "only letters, digits, spaces, hyphens and apostrophes (and not look like "
                "a battle card)"
            )
        if name in names:
            raise InputError(
                f"cards.{group}[{i}].name: {card.name!r} is already the name of {names[name]}"
            )
        names[name] = f"{group}[{i}]"
        for j, e in enumerate(card.effects):
            if isinstance(e, ForceWeapon):
                weapon(f"{group}[{i}].effects[{j}].weapon", e.weapon)
            elif isinstance(e, WeaponBonus):
                weapon(f"{group}[{i}].effects[{j}].mine", e.mine)
                weapon(f"{group}[{i}].effects[{j}].theirs", e.theirs)
    if sum(s.count for s in cs.strategy) < MIN_STRATEGY:
        raise InputError(
            f"cards.strategy: at least {MIN_STRATEGY} strategy cards are needed "
            "(two hands of 3, two on the table, one to draw)"
        )


def parse_card_set(data: Any) -> CardSet:
    """Validate a card set given as data; :class:`InputError` names the first bad key,
    e.g. ``cards.strategy[3].effects[0].n: ...``."""
    try:
        cs = CardSet.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        loc = [p for p in err["loc"] if not (isinstance(p, str) and p in _EFFECT_KINDS)]
        raise InputError(f"{json_path(loc, 'cards')}: {err['msg']}") from None
    _check(cs)
    return cs


_EFFECT_KINDS = {
    "force_weapon",
    "max_cards",
    "min_cards",
    "weapon_bonus",
    "count_bonus",
    "points",
    "win_ties",
    "recover_units",
    "extra_loss",
    "shield",
}


def load_card_set_text(text: str, source: str = "card set") -> CardSet:
    """Parse TOML text as a card set."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{source}: not valid TOML: {e}") from None
    return parse_card_set(data)


_CACHE: dict[str, CardBook] = {}


def load_book(source: str) -> CardBook:
    """The card set named ``house`` or stored at path ``source``, compiled (cached per
    source and file content)."""
    if normal_name(source) == HOUSE:
        text = (
            resources.files("battlejudge.engines.force_duel")
            .joinpath("house.toml")
            .read_text(encoding="utf-8")
        )
    else:
        try:
            text = Path(source).read_text(encoding="utf-8")
        except OSError as e:
            raise InputError(f"cannot read card set {source!r}: {e.strerror or e}") from None
    book = _CACHE.get(text)
    if book is None:
        book = CardBook(load_card_set_text(text, source))
        _CACHE[text] = book
    return book


def book_from_canonical(text: str) -> CardBook:
    """The compiled card set of :attr:`CardSet.canonical` text (cached)."""
    book = _CACHE.get(text)
    if book is None:
        book = CardBook(parse_card_set(parse_json(text, "saved card set")))
        _CACHE[text] = book
    return book


@dataclass(frozen=True)
class BattleKind:
    """A battle card compiled for play: its weapon index, its power and its extra value."""

    weapon: int
    power: int
    extra: int


class CardBook:
    """A card set compiled for play: every card of a battle deck is a *kind* (an int),
    battle cards first, then unit cards; strategy cards are ints too."""

    def __init__(self, cs: CardSet) -> None:
        self.set = cs
        self.weapons: tuple[str, ...] = tuple(cs.weapons)
        self.battle: tuple[BattleKind, ...] = tuple(
            BattleKind(cs.weapons.index(b.weapon), b.power, b.extra) for b in cs.battle
        )
        self.units: tuple[UnitCardSpec, ...] = tuple(cs.units)
        self.strategy: tuple[StrategyCardSpec, ...] = tuple(cs.strategy)
        nb = len(self.battle)
        self.kinds = nb + len(self.units)
        self.deck: tuple[int, ...] = tuple(
            [b.count for b in cs.battle] + [u.count for u in cs.units]
        )
        """Copies of each kind in one battle deck."""
        self.deck_size = sum(self.deck)
        self.strategy_deck: tuple[int, ...] = tuple(s.count for s in cs.strategy)
        self.labels: tuple[str, ...] = tuple(
            [battle_label(self.weapons[b.weapon], b.power, b.extra) for b in self.battle]
            + [u.name for u in self.units]
        )
        self._by_label = {normal_label(label): k for k, label in enumerate(self.labels[:nb])}
        self._unit_by_name = {normal_name(u.name): nb + i for i, u in enumerate(self.units)}
        self._strategy_by_name = {normal_name(s.name): i for i, s in enumerate(self.strategy)}

    @property
    def canonical(self) -> str:
        """The card set's canonical text (what records store, read back by
        ``book_from_canonical``)."""
        return self.set.canonical

    def is_unit(self, kind: int) -> bool:
        """Whether card kind ``kind`` is a unit card (unit kinds follow the battle cards)."""
        return kind >= len(self.battle)

    def unit(self, kind: int) -> UnitCardSpec:
        """The unit card of kind ``kind`` (which must be a unit kind)."""
        return self.units[kind - len(self.battle)]

    def kind_of(self, text: str, where: str) -> int:
        """The kind of a battle or unit card written as ``bow5+1`` or by its name."""
        k = self._by_label.get(normal_label(text))
        if k is None:
            k = self._unit_by_name.get(normal_name(text))
        if k is None:
            raise InputError(f"{where}: unknown card {text!r} in card set {self.set.name!r}")
        return k

    def strategy_of(self, text: str, where: str) -> int:
        """The index of a strategy card given by name (case and spacing ignored)."""
        s = self._strategy_by_name.get(normal_name(text))
        if s is None:
            names = ", ".join(c.name for c in self.strategy)
            raise InputError(f"{where}: unknown strategy card {text!r} (cards: {names})")
        return s


def battle_label(weapon: str, power: int, extra: int) -> str:
    """A battle card's notation: weapon, power, signed extra (``bow5+1``, ``spear2-1``)."""
    return f"{weapon}{power}{extra:+d}"


def card_set_schema() -> dict[str, Any]:
    """The JSON Schema of card-set files (TOML has the same structure)."""
    schema: dict[str, Any] = CardSet.model_json_schema()
    schema["title"] = "Force Duel card set"
    return schema
