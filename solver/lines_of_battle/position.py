"""The plain-data position every Lines of Battle question takes, and its JSON file.

A position is the board at the start of a player's turn (nothing moved yet): its size,
who moves, and every unit with its square, owner, kind, facing and whether it is an
archer reloading (it attacked on its owner's last turn, so it skips its owner's next
attack; docs/rulings.md, Lines of Battle). The engine converts a state into one; the solver
never imports the engine.

The file (``battlejudge lines-of-battle schema``)::

    {"board": "10x10", "to_move": "p1",
     "units": [{"at": "C4", "side": "p1", "type": "spearman", "facing": "N"}, ...],
     "attacks": [["C4", "C6"]], "player": "p2"}

``attacks`` (for ``odds``) is the planned combat phase in order, each ``[attacker,
target]``; ``player`` (for ``exposure``) is whose line is examined, by default the
player not to move.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from battlejudge.solver.errors import InputError, invalid
from battlejudge.solver.json_input import parse_json
from battlejudge.solver.lines_of_battle.core import (
    ARCHER,
    ARMY_SIZE,
    CAVALRY,
    COMMANDER,
    FACING_NAMES,
    KIND_NAMES,
    MAX_CAVALRY,
    Board,
    Facing,
    Kind,
    Square,
    facing_from_name,
    kind_from_name,
)

SEATS = ("p1", "p2")


@dataclass(frozen=True, order=True)
class UnitAt:
    """One unit on the board."""

    square: Square
    owner: int
    kind: Kind
    facing: Facing
    reloading: bool = False


@dataclass(frozen=True)
class Position:
    """A board at the start of ``to_move``'s turn."""

    board: Board
    to_move: int
    units: tuple[UnitAt, ...]

    def __post_init__(self) -> None:
        # canonical: units in square order, so equal boards are equal positions
        object.__setattr__(self, "units", tuple(sorted(self.units)))

    @cached_property
    def _index(self) -> dict[Square, UnitAt]:
        return {u.square: u for u in self.units}

    def at(self, sq: Square) -> UnitAt | None:
        """The unit on square ``sq``, or None."""
        return self._index.get(sq)

    def side(self, owner: int) -> list[UnitAt]:
        """The units of player ``owner``, in file order."""
        return [u for u in self.units if u.owner == owner]

    def to_json(self) -> dict[str, Any]:
        """The position as its JSON file object."""
        b = self.board
        return {
            "board": f"{b.width}x{b.height}",
            "to_move": SEATS[self.to_move],
            "units": [
                {
                    "at": b.name(u.square),
                    "side": SEATS[u.owner],
                    "type": KIND_NAMES[u.kind],
                    "facing": FACING_NAMES[u.facing],
                    **({"reloading": True} if u.reloading else {}),
                }
                for u in sorted(self.units, key=lambda u: (u.owner, u.square))
            ],
        }


@dataclass(frozen=True)
class Question:
    """A position file: the position and the optional parts of the questions."""

    position: Position
    attacks: tuple[tuple[Square, Square], ...] = ()
    player: int | None = None

    @property
    def examined(self) -> int:
        """Whose line ``exposure`` examines (default: the player not to move)."""
        return 1 - self.position.to_move if self.player is None else self.player


class UnitModel(BaseModel):
    """One unit in a position file: its square, side, unit type, facing and whether it is reloading
    (unknown fields are rejected)."""

    model_config = ConfigDict(extra="forbid")
    at: str
    side: str
    type: str
    facing: str
    reloading: bool = False


class PositionModel(BaseModel):
    """The JSON file of a Lines of Battle question."""

    model_config = ConfigDict(extra="forbid", title="Lines of Battle position")
    board: str = "10x10"
    to_move: str
    units: list[UnitModel]
    attacks: list[tuple[str, str]] = []
    player: str | None = None


def schema() -> dict[str, Any]:
    """The JSON Schema of position files."""
    return PositionModel.model_json_schema()


def _seat(text: str, where: str) -> int:
    t = text.strip().lower()
    if t not in SEATS:
        raise InputError(f"{where}: unknown side {text!r} (sides: p1, p2)")
    return SEATS.index(t)


def _board(text: str) -> Board:
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if m is None:
        raise InputError(f"board: {text!r} is not WIDTHxHEIGHT (like 10x10)")
    return Board(int(m.group(1)), int(m.group(2)))


def _at(board: Board, text: str, where: str) -> Square:
    try:
        return board.parse(text)
    except InputError as e:
        raise InputError(f"{where}: {e}") from None


def parse_question(data: Any) -> Question:
    """A question from a JSON object (or its text); :class:`InputError` names the JSON
    path of the first bad value."""
    if isinstance(data, str):
        data = parse_json(data)
    try:
        model = PositionModel.model_validate(data)
    except ValidationError as e:
        raise invalid(e, top="position") from None
    board = _board(model.board)
    to_move = _seat(model.to_move, "to_move")
    units: list[UnitAt] = []
    seen: dict[Square, int] = {}
    for i, u in enumerate(model.units):
        where = f"units[{i}]"
        sq = _at(board, u.at, f"{where}.at")
        if sq in seen:
            raise InputError(f"{where}.at: {board.name(sq)} already holds units[{seen[sq]}]")
        seen[sq] = i
        try:
            kind = kind_from_name(u.type)
        except InputError as e:
            raise InputError(f"{where}.type: {e}") from None
        try:
            facing = facing_from_name(u.facing)
        except InputError as e:
            raise InputError(f"{where}.facing: {e}") from None
        if u.reloading and kind != ARCHER:
            raise InputError(f"{where}.reloading: only archers reload, not a {KIND_NAMES[kind]}")
        units.append(UnitAt(sq, _seat(u.side, f"{where}.side"), kind, facing, u.reloading))
    for owner in (0, 1):
        mine = [u for u in units if u.owner == owner]
        if len(mine) > ARMY_SIZE:
            raise InputError(f"units: {SEATS[owner]} has {len(mine)} units (at most 16)")
        if sum(u.kind == CAVALRY for u in mine) > MAX_CAVALRY:
            raise InputError(f"units: {SEATS[owner]} has more than 4 cavalry")
        if sum(u.kind == COMMANDER for u in mine) > 1:
            raise InputError(f"units: {SEATS[owner]} has more than one commander")
    attacks = tuple(
        (
            _at(board, a, f"attacks[{i}][0]"),
            _at(board, t, f"attacks[{i}][1]"),
        )
        for i, (a, t) in enumerate(model.attacks)
    )
    player = None if model.player is None else _seat(model.player, "player")
    return Question(Position(board, to_move, tuple(units)), attacks, player)


def load_question(path: str) -> Question:
    """Read a position file; :class:`InputError` names the file for unreadable JSON."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return parse_question(parse_json(text, path))
