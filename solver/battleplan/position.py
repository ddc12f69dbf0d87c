"""The public position of a BattlePlan battle phase, as plain data (the solver's input).

A position is taken at the start of a battle turn (no step half-resolved): for every
piece its square (or dead), shield, whether it carries the enemy flag, the cards already
revealed this round, how many are still face down, optionally what they are (a player
knows his own stacks) and its unused buff: none, ``"hidden"`` (a buff lies face down
with it) or a named buff. JSON form (``docs/battleplan.md``)::

    {"game": "battleplan", "to_move": "p1", "token": "d5",
     "pieces": {"p1": {"rook": {"square": "c3", "shield": false, "carrier": false,
                                "revealed": ["move"], "hidden": 2, "cards": null,
                                "buff": "hidden"}, ...}, "p2": {...}}}

Rules: seed 002 (page 2 Plan step 3 for the per-piece caps; page 4 for flags).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from battlejudge.solver.errors import InputError, invalid

SEATS = ("p1", "p2")
KINDS = ("rook", "horse", "bishop")
CARDS = ("move", "attack", "defend")
CAPS = (3, 2, 1)
BUFFS = ("extra-move", "extra-attack", "extra-defend", "diagonal")
HIDDEN_BUFF = -1
"""A buff lies face down with the piece; its kind is unknown."""
ZONE_ROW = (7, 0)
"""The row each player's pieces must enter to claim the enemy flag."""
WIN_SQUARE = (7, 56)
"""h1 for p1, a8 for p2."""


def square_name(sq: int) -> str:
    """The board name of square index ``sq`` (0 = ``a1``, 63 = ``h8``)."""
    return "abcdefgh"[sq % 8] + str(sq // 8 + 1)


def parse_square(text: str, where: str) -> int:
    """The index of square ``text`` (``a1``..``h8``, any case); an :class:`InputError` naming
    ``where`` otherwise."""
    t = text.strip().lower()
    if len(t) == 2 and t[0] in "abcdefgh" and t[1] in "12345678":
        return (int(t[1]) - 1) * 8 + "abcdefgh".index(t[0])
    raise InputError(f"{where}: {text!r} is not a square (a1..h8)")


def parse_card(text: str, where: str) -> int:
    """The index of the action card ``text`` (``move``, ``attack``, ``defend`` or their first
    letter); an :class:`InputError` naming ``where`` otherwise."""
    t = text.strip().lower()
    for i, name in enumerate(CARDS):
        if t in (name, name[0]):
            return i
    raise InputError(f"{where}: {text!r} is not an action card (move, attack, defend)")


def parse_buff(text: str, where: str) -> int:
    """The index of buff ``text`` (one of the buff names, or ``hidden`` for a face-down buff); an
    :class:`InputError` naming ``where`` otherwise."""
    t = text.strip().lower()
    if t == "hidden":
        return HIDDEN_BUFF
    if t in BUFFS:
        return BUFFS.index(t)
    raise InputError(f"{where}: {text!r} is not a buff (hidden, {', '.join(BUFFS)})")


def piece_label(g: int) -> str:
    """``0 -> 'p1 rook'``, ``5 -> 'p2 bishop'``."""
    return f"{SEATS[g // 3]} {KINDS[g % 3]}"


def parse_piece_label(text: str) -> int:
    """``'p2 rook'``, ``'p2:rook'``, ``'p2-r'``, ``'p2.rook'`` -> 3."""
    t = text.strip().lower().replace(":", " ").replace("-", " ").replace(".", " ").split()
    if len(t) == 2 and t[0] in SEATS:
        for k, name in enumerate(KINDS):
            if t[1] in (name, name[0]):
                return SEATS.index(t[0]) * 3 + k
    raise InputError(f"{text!r} is not a piece (e.g. 'p1 rook', 'p2:horse')")


@dataclass(frozen=True)
class PieceState:
    """One piece's public state (and, when known, its face-down cards and buff)."""

    square: int | None
    shield: bool = False
    carrier: bool = False
    revealed: tuple[int, ...] = ()
    hidden: int = 0
    cards: tuple[int, ...] | None = None
    """The face-down cards, top first, when known (the asker's own)."""
    buff: int | None = None
    """None, :data:`HIDDEN_BUFF`, or the buff (0..3) when known."""


@dataclass(frozen=True)
class Position:
    """A battle-phase position: six pieces (p1 rook, horse, bishop, then p2's) and the
    player to reveal next."""

    to_move: int
    pieces: tuple[PieceState, ...]
    token: int | None = None

    def hidden_total(self, player: int) -> int:
        """How many face-down cards ``player``'s three pieces hold together."""
        return sum(p.hidden for p in self.pieces[player * 3 : player * 3 + 3])

    def schedule(self) -> list[int]:
        """Who reveals at each remaining turn: alternating from ``to_move``, a player
        with nothing left is skipped (docs/rulings.md, BattlePlan)."""
        left = [self.hidden_total(0), self.hidden_total(1)]
        p = self.to_move
        out = []
        while left[0] or left[1]:
            if not left[p]:
                p = 1 - p
            out.append(p)
            left[p] -= 1
            p = 1 - p
        return out

    def to_json(self) -> dict[str, Any]:
        """The JSON form (:func:`position_from_json` reads it back)."""
        pieces: dict[str, dict[str, Any]] = {s: {} for s in SEATS}
        for g, p in enumerate(self.pieces):
            buff = (
                None if p.buff is None else ("hidden" if p.buff == HIDDEN_BUFF else BUFFS[p.buff])
            )
            pieces[SEATS[g // 3]][KINDS[g % 3]] = {
                "square": None if p.square is None else square_name(p.square),
                "shield": p.shield,
                "carrier": p.carrier,
                "revealed": [CARDS[c] for c in p.revealed],
                "hidden": p.hidden,
                "cards": None if p.cards is None else [CARDS[c] for c in p.cards],
                "buff": buff,
            }
        return {
            "game": "battleplan",
            "to_move": SEATS[self.to_move],
            "token": None if self.token is None else square_name(self.token),
            "pieces": pieces,
        }


class _PieceModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    square: str | None
    shield: bool = False
    carrier: bool = False
    revealed: list[str] = Field(default_factory=list)
    hidden: int = Field(default=0, ge=0, le=6)
    cards: list[str] | None = None
    buff: str | None = None


_Side = dict[Literal["rook", "horse", "bishop"], _PieceModel]


class PositionModel(BaseModel):
    """The JSON schema of a BattlePlan position file (``battlejudge battleplan schema``)."""

    model_config = ConfigDict(extra="forbid")
    game: Literal["battleplan"] = "battleplan"
    to_move: Literal["p1", "p2"]
    token: str | None = None
    pieces: dict[Literal["p1", "p2"], _Side]


def position_from_json(data: Any) -> Position:
    """Read and check a position; :class:`InputError` names the offending JSON path."""
    try:
        model = PositionModel.model_validate(data)
    except ValidationError as e:
        raise invalid(e) from None
    pieces: list[PieceState] = []
    for s in SEATS:
        side = model.pieces.get(s)  # type: ignore[call-overload]
        if side is None:
            raise InputError(f"pieces.{s}: missing")
        for k in KINDS:
            where = f"pieces.{s}.{k}"
            pm = side.get(k)
            if pm is None:
                raise InputError(f"{where}: missing")
            pieces.append(_piece(pm, where))
    token = None if model.token is None else parse_square(model.token, "token")
    pos = Position(SEATS.index(model.to_move), tuple(pieces), token)
    check_position(pos)
    return pos


def _piece(pm: _PieceModel, where: str) -> PieceState:
    square = None if pm.square is None else parse_square(pm.square, f"{where}.square")
    revealed = tuple(parse_card(c, f"{where}.revealed[{i}]") for i, c in enumerate(pm.revealed))
    cards = None
    if pm.cards is not None:
        cards = tuple(parse_card(c, f"{where}.cards[{i}]") for i, c in enumerate(pm.cards))
    buff = None if pm.buff is None else parse_buff(pm.buff, f"{where}.buff")
    return PieceState(square, pm.shield, pm.carrier, revealed, pm.hidden, cards, buff)


def check_position(pos: Position) -> None:
    """Raise :class:`InputError` (with the JSON path) if ``pos`` cannot occur in a game:
    two pieces on a square, a dead piece with a shield or the flag, more than six cards
    or more than the per-piece caps (3 move, 2 attack, 1 defend), two carriers on a side,
    a piece in the enemy zone with no carrier on its side, a carrier already home."""
    seen: dict[int, str] = {}
    for g, p in enumerate(pos.pieces):
        where = f"pieces.{SEATS[g // 3]}.{KINDS[g % 3]}"
        if p.square is not None:
            if p.square in seen:
                raise InputError(
                    f"{where}.square: {square_name(p.square)} is also {seen[p.square]}'s square"
                )
            seen[p.square] = where
        elif p.shield or p.carrier:
            raise InputError(f"{where}: a dead piece has no shield and carries no flag")
        if p.cards is not None and len(p.cards) != p.hidden:
            raise InputError(f"{where}.cards: {len(p.cards)} cards but hidden is {p.hidden}")
        if len(p.revealed) + p.hidden > 6:
            raise InputError(f"{where}: more than 6 cards in a stack")
        known = p.revealed + (p.cards or ())
        for c in range(3):
            if known.count(c) > CAPS[c]:
                raise InputError(f"{where}: more than {CAPS[c]} {CARDS[c]} cards (per-piece cap)")
        if p.carrier and p.square == WIN_SQUARE[g // 3]:
            raise InputError(f"{where}: a carrier on its Win Zone has already won")
    for s in (0, 1):
        side = pos.pieces[s * 3 : s * 3 + 3]
        if sum(p.carrier for p in side) > 1:
            raise InputError(f"pieces.{SEATS[s]}: two carriers")
        in_zone = any(p.square is not None and p.square // 8 == ZONE_ROW[s] for p in side)
        if in_zone and not any(p.carrier for p in side):
            raise InputError(
                f"pieces.{SEATS[s]}: a piece stands in the enemy zone, so one of them "
                "carries the flag (set carrier)"
            )
    if not pos.hidden_total(0) and not pos.hidden_total(1):
        raise InputError("pieces: no face-down card left, the round is over")
