"""The flag-claim question: what is face up at one flag and elsewhere.

Rules: Flags (claiming); docs/rulings.md 4-7. ``mine`` are the claimant's cards at the
flag, ``theirs`` the opponent's, ``seen`` every other face-up troop (other flags,
discards). ``completed_first`` says who completed first when both sides are
complete: the side that completed last loses a tie.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from battlejudge.solver.battleline import decider
from battlejudge.solver.battleline.cards import (
    CARDS,
    LEADER_CODES,
    TROOP_COUNT,
    Card,
    CardsInput,
    Troop,
    check_side,
    format_cards,
    parse_cards,
)
from battlejudge.solver.errors import InputError, RuleError

Side = Literal["mine", "theirs"]
_ALEXANDER, _DARIUS = LEADER_CODES
_FIELDS = ("mine", "theirs", "seen", "mud", "fog", "completed_first")


def _bool(value: object, name: str) -> bool:
    if isinstance(value, bool):
        return value
    raise InputError(f"{name} must be true or false, got {value!r}")


@dataclass(frozen=True, init=False)
class ClaimQuestion:
    """May the claimant take this flag? A frozen, validated value object.

    Accepts card strings or :class:`Card` objects; raises :class:`InputError` or
    :class:`RuleError` (both ``ValueError``) naming the offending card and field.

    >>> ClaimQuestion(mine="R4 R5 R3", theirs=["B8"], seen="B7 B10")
    ClaimQuestion(mine='R4 R5 R3', theirs='B8', seen='B7 B10')
    """

    mine: tuple[Card, ...]
    theirs: tuple[Card, ...]
    seen: tuple[Card, ...]
    mud: bool = False
    fog: bool = False
    completed_first: Side | None = None
    _troops: tuple[frozenset[Troop], frozenset[Troop], frozenset[Troop]] = field(
        repr=False, compare=False, hash=False, default=(frozenset(), frozenset(), frozenset())
    )
    _codes: tuple[tuple[int, ...], tuple[int, ...]] = field(
        repr=False, compare=False, hash=False, default=((), ())
    )

    def __init__(
        self,
        mine: CardsInput = None,
        theirs: CardsInput = None,
        seen: CardsInput = None,
        mud: bool = False,
        fog: bool = False,
        completed_first: str | None = None,
    ) -> None:
        m = parse_cards(mine, "mine")
        t = parse_cards(theirs, "theirs")
        sn = parse_cards(seen, "seen")
        if mud is not False and mud is not True:
            mud = _bool(mud, "mud")
        if fog is not False and fog is not True:
            fog = _bool(fog, "fog")
        if completed_first is not None:
            completed_first = str(completed_first).lower()
            if completed_first not in ("mine", "theirs"):
                raise InputError(
                    f"completed_first must be 'mine', 'theirs' or null, got {completed_first!r}"
                )
        mc = tuple(c.code for c in m)
        tc = tuple(c.code for c in t)
        sc = sorted(c.code for c in sn)
        n = decider.FORMATION_SIZES[mud]
        # The common case passes these cheap checks; anything else goes through
        # _validate, which finds the first problem and names it.
        if not (
            len(mc) == n
            and len(tc) <= n
            and len({*mc, *tc, *sc}) == len(mc) + len(tc) + len(sc)
            and (not sc or sc[-1] < TROOP_COUNT)
            and (mc.count(_ALEXANDER) + mc.count(_DARIUS) < 2)
            and (tc.count(_ALEXANDER) + tc.count(_DARIUS) < 2)
            and (completed_first != "theirs" or len(tc) == n)
        ):
            _validate(m, t, sn, mud, completed_first)
        object.__setattr__(self, "mine", m)
        object.__setattr__(self, "theirs", t)
        object.__setattr__(self, "seen", tuple(CARDS[c] for c in sc))
        object.__setattr__(self, "mud", mud)
        object.__setattr__(self, "fog", fog)
        object.__setattr__(self, "completed_first", completed_first)
        troops = (
            frozenset(c for c in mc if c < TROOP_COUNT),
            frozenset(c for c in tc if c < TROOP_COUNT),
            frozenset(sc),
        )
        object.__setattr__(self, "_troops", troops)
        object.__setattr__(self, "_codes", (mc, tc))

    @classmethod
    def from_codes(
        cls,
        mine: Iterable[int],
        theirs: Iterable[int] = (),
        seen: Iterable[int] = (),
        mud: bool = False,
        fog: bool = False,
        completed_first: str | None = None,
    ) -> ClaimQuestion:
        """The question from card codes, for engines (troops ``color * 10 + value - 1``,
        morale tactics 60-63: :data:`~battlejudge.solver.battleline.cards.CARDS`); checked
        like any other question.

        >>> ClaimQuestion.from_codes([3, 4, 2], [47], [46, 49])
        ClaimQuestion(mine='R4 R5 R3', theirs='B8', seen='B7 B10')
        """
        return cls(
            _cards(mine, "mine"),
            _cards(theirs, "theirs"),
            _cards(seen, "seen"),
            mud,
            fog,
            completed_first,
        )

    # -- derived facts -----------------------------------------------------------------
    @property
    def codes(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The claimant's and the opponent's cards at the flag as codes, in play order."""
        return self._codes

    @property
    def pool(self) -> decider.Pool:
        """Every troop the opponent may still add: those not face up and not his
        (docs/rulings.md 5), as :mod:`.decider` masks."""
        pool: decider.Pool | None = self.__dict__.get("_pool")
        if pool is None:
            mine, theirs = self._codes
            pool = decider.claim_pool((*mine, *theirs, *self._troops[2]))
            object.__setattr__(self, "_pool", pool)
        return pool

    # -- derived facts -----------------------------------------------------------------
    @property
    def size(self) -> int:
        """Cards per complete formation at this flag (3, or 4 with Mud)."""
        return decider.FORMATION_SIZES[self.mud]  # formation_size, without a call

    @property
    def theirs_complete(self) -> bool:
        """Whether the opponent's side already holds a complete formation (3 cards, 4 with Mud)."""
        return len(self.theirs) == self.size

    @property
    def mine_troops(self) -> frozenset[Troop]:
        """The troop codes among the claimant's cards (wild cards excluded)."""
        return self._troops[0]

    @property
    def theirs_troops(self) -> frozenset[Troop]:
        """The troop codes among the opponent's cards at the flag (wild cards excluded)."""
        return self._troops[1]

    @property
    def seen_troops(self) -> frozenset[Troop]:
        """The troop codes face up elsewhere on the table, which the opponent can no longer draw."""
        return self._troops[2]

    @property
    def face_up(self) -> frozenset[Troop]:
        """Face-up troops the opponent cannot add: the claimant's and every seen one."""
        return self._troops[0] | self._troops[2]

    @property
    def theirs_wilds(self) -> tuple[str, ...]:
        """Wild kinds on the opponent's side, sorted (part of the encoding key)."""
        return tuple(sorted(w for c in self.theirs if (w := c.wild) is not None))

    # -- notation ----------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The canonical JSON object (the fixed flag-question notation)."""
        return {
            "mine": [str(c) for c in self.mine],
            "theirs": [str(c) for c in self.theirs],
            "seen": [str(c) for c in self.seen],
            "mud": self.mud,
            "fog": self.fog,
            "completed_first": self.completed_first,
        }

    def canonical(self) -> str:
        """Canonical one-line JSON text; equal questions give equal text."""
        return json.dumps(self.to_json(), separators=(",", ":"), sort_keys=False)

    @classmethod
    def from_json(cls, obj: object) -> ClaimQuestion:
        """Read the JSON notation; unknown keys and wrong types are named in the error."""
        if not isinstance(obj, dict):
            raise InputError(f"a flag question is a JSON object, got {type(obj).__name__}")
        unknown = sorted(set(obj) - set(_FIELDS))
        if unknown:
            raise InputError(f"unknown key {unknown[0]!r} in flag question")
        lists = {}
        for key in ("mine", "theirs", "seen"):
            value = obj.get(key, [])
            if value is None:
                value = []
            if isinstance(value, str) or not isinstance(value, list):
                raise InputError(f"{key} must be a list of card names, got {value!r}")
            lists[key] = value
        cf = obj.get("completed_first")
        if cf is not None and not isinstance(cf, str):
            raise InputError(f"completed_first must be 'mine', 'theirs' or null, got {cf!r}")
        return cls(
            mine=lists["mine"],
            theirs=lists["theirs"],
            seen=lists["seen"],
            mud=obj.get("mud", False),
            fog=obj.get("fog", False),
            completed_first=cf,
        )

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """Hypothesis and IPython print the pasteable repr, not the fields."""
        printer.text(repr(self))

    def __repr__(self) -> str:
        parts = [f"mine={format_cards(self.mine)!r}"]
        if self.theirs:
            parts.append(f"theirs={format_cards(self.theirs)!r}")
        if self.seen:
            parts.append(f"seen={format_cards(self.seen)!r}")
        for name in ("mud", "fog"):
            if getattr(self, name):
                parts.append(f"{name}=True")
        if self.completed_first:
            parts.append(f"completed_first={self.completed_first!r}")
        return f"ClaimQuestion({', '.join(parts)})"


def _validate(
    mine: tuple[Card, ...],
    theirs: tuple[Card, ...],
    seen: tuple[Card, ...],
    mud: bool,
    completed_first: str | None,
) -> None:
    """Rules checks on a question; docs/rulings.md 3 (one Leader), 4 (complete formation), 5."""
    where: dict[Card, str] = {}
    for name, side in (("mine", mine), ("theirs", theirs), ("seen", seen)):
        for card in side:
            if card in where:
                same = " twice" if where[card] == name else f" and in {where[card]}"
                raise RuleError(f"card {card} is given in {name}{same}; every card exists once")
            where[card] = name
    for card in seen:
        if not card.is_troop:
            raise RuleError(
                f"{card} in seen: seen lists face-up troops only (unplayed or discarded "
                f"tactics never block a claim)"
            )
    n = decider.formation_size(mud)
    for name, side in (("mine", mine), ("theirs", theirs)):
        if len(side) > n:
            raise RuleError(
                f"{name} has {len(side)} cards ({format_cards(side)}); a side holds at most {n}"
                + ("" if mud else " without Mud")
            )
        check_side(side, name)  # one Leader a side (docs/rulings.md 3)
    if len(mine) != n:
        raise RuleError(
            f"mine has {len(mine)} card(s) ({format_cards(mine) or 'none'}); a claim needs a "
            f"complete formation of {n}"
        )
    if completed_first == "theirs" and len(theirs) < n:
        raise RuleError(
            f"completed_first is 'theirs' but theirs has only {len(theirs)} of {n} cards"
        )


def _cards(codes: Iterable[int], where: str) -> tuple[Card, ...]:
    if isinstance(codes, str | bytes) or not isinstance(codes, Iterable):
        raise InputError(f"{where} must be a sequence of card codes (ints), got {codes!r}")
    out = []
    for code in codes:
        if not isinstance(code, int) or not 0 <= code < len(CARDS):
            raise InputError(f"card code {code!r} in {where} is not a card (0-{len(CARDS) - 1})")
        out.append(CARDS[code])
    return tuple(out)


def _code(card: Card) -> int:
    return card.code
