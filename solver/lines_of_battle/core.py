"""The rules of Lines of Battle that both the engine and the solver need: unit types,
facings, squares, attack lines and combat odds.

Rules: seed 003 (Unit Types, Facing, Combat Phase) with docs/rulings.md (Lines of
Battle). The engine imports these so there is one source for every number.

>>> Board(10, 10).name(Board(10, 10).parse("c4"))
'C4'
>>> kill_probability(SWORDSMAN, SPEARMAN, FRONT)
Fraction(7, 12)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TypeAlias

from battlejudge.solver.errors import InputError

Kind: TypeAlias = int
Facing: TypeAlias = int
Square: TypeAlias = int
"""``row * width + col`` on a board of that width (row 0 is rank 1, col 0 is file A)."""

SWORDSMAN, SPEARMAN, ARCHER, CAVALRY, COMMANDER = range(5)
KIND_NAMES = ("swordsman", "spearman", "archer", "cavalry", "commander")
KIND_LETTERS = ("S", "P", "A", "C", "K")
"""One letter per kind for the board drawing (P for the spearman's pike, K for the
Commander)."""
MOVE = (2, 2, 1, 4, 2)
"""Movement allowance by kind (seed: Unit Types; Commander variant: 2 squares)."""
RANGE = (1, 2, 5, 1, 0)
"""Attack range straight ahead by kind; the Commander cannot attack."""
MAX_CAVALRY = 4
ARMY_SIZE = 16

NORTH, EAST, SOUTH, WEST = range(4)
FACING_NAMES = ("N", "E", "S", "W")
STEP = ((0, 1), (1, 0), (0, -1), (-1, 0))
"""(dcol, drow) one square in each facing; north is towards higher ranks."""

FRONT, SIDE, REAR = range(3)
ASPECT_NAMES = ("front", "side", "rear")

P_WIN = Fraction(15, 36)
"""Two d6, the attacker's strictly higher."""
P_WIN_TIES = Fraction(21, 36)
"""Two d6, the attacker's higher or equal."""


def opposite(facing: Facing) -> Facing:
    """The facing turned half round (north <-> south, east <-> west)."""
    return (facing + 2) % 4


def kind_from_name(text: str) -> Kind:
    """A unit kind from its name (singular or plural, any case), a prefix of at least
    three letters (``cav``) or its letter."""
    t = text.strip().lower()
    for i, name in enumerate(KIND_NAMES):
        if t in (name, name + "s", KIND_LETTERS[i].lower()) or (
            name.endswith("man") and t == name[:-3] + "men"
        ):
            return i
    prefixed = [i for i, name in enumerate(KIND_NAMES) if len(t) >= 3 and name.startswith(t)]
    if len(prefixed) == 1:
        return prefixed[0]
    raise InputError(f"unknown unit type {text!r} (types: {', '.join(KIND_NAMES)})")


def facing_from_name(text: str) -> Facing:
    """The facing named ``text`` (``N``/``E``/``S``/``W`` or the full word, any case); an
    :class:`InputError` otherwise."""
    t = text.strip().upper()
    words = {"NORTH": NORTH, "EAST": EAST, "SOUTH": SOUTH, "WEST": WEST}
    if t in FACING_NAMES:
        return FACING_NAMES.index(t)
    if t in words:
        return words[t]
    raise InputError(f"unknown facing {text!r} (facings: N, E, S, W)")


def aspect(attack_facing: Facing, defender_facing: Facing) -> int:
    """Frontal, side or rear, judged from the defender's facing (docs/rulings.md, Lines of
    Battle): an attacker on the defender's front line attacks frontally, one directly
    behind attacks the rear, any other the side. The attacker stands on the side the
    attack comes from, the opposite of the way it faces."""
    if opposite(attack_facing) == defender_facing:
        return FRONT
    if attack_facing == defender_facing:
        return REAR
    return SIDE


def wins_ties(attacker: Kind, defender: Kind) -> bool:
    """Seed, Unit Types: a swordsman attacking a spearman and a spearman attacking
    cavalry from the front win tied rolls."""
    return (attacker, defender) in ((SWORDSMAN, SPEARMAN), (SPEARMAN, CAVALRY))


def kill_probability(attacker: Kind, defender: Kind, how: int) -> Fraction:
    """The exact chance one attack destroys its target: 1 from the side or rear, else
    15/36 (or 21/36 with a tie rule) for two d6 (seed: Combat Phase)."""
    if how != FRONT:
        return Fraction(1)
    return P_WIN_TIES if wins_ties(attacker, defender) else P_WIN


def destroys(attacker: Kind, defender: Kind, attack_die: int, defend_die: int) -> bool:
    """Frontal combat: the attacker's die must beat the defender's; a tie rule makes a
    tie enough (docs/rulings.md, Lines of Battle)."""
    return attack_die > defend_die or (attack_die == defend_die and wins_ties(attacker, defender))


@dataclass(frozen=True)
class Board:
    """A rectangular board; 10x10 in the game, smaller in questions and tests."""

    width: int = 10
    height: int = 10

    def __post_init__(self) -> None:
        if not (1 <= self.width <= 26 and 1 <= self.height <= 99):
            raise InputError(f"board {self.width}x{self.height} is not 1-26 by 1-99")

    @property
    def size(self) -> int:
        """The number of squares."""
        return self.width * self.height

    def name(self, sq: Square) -> str:
        """The name of square ``sq``: column letter from ``A``, row number from 1."""
        return f"{chr(65 + sq % self.width)}{sq // self.width + 1}"

    def parse(self, text: str) -> Square:
        """``"C4"`` (any case) -> its square; :class:`InputError` names a bad one."""
        t = text.strip().upper()
        if len(t) < 2 or not t[0].isalpha() or not t[1:].isdigit():
            raise InputError(f"{text!r} is not a square (like C4)")
        col, row = ord(t[0]) - 65, int(t[1:]) - 1
        if not (0 <= col < self.width and 0 <= row < self.height):
            raise InputError(f"square {text!r} is off the {self.width}x{self.height} board")
        return row * self.width + col

    def step(self, sq: Square, facing: Facing) -> Square | None:
        """The neighbouring square in that facing, or None off the board."""
        dc, dr = STEP[facing]
        col, row = sq % self.width + dc, sq // self.width + dr
        if 0 <= col < self.width and 0 <= row < self.height:
            return row * self.width + col
        return None

    def neighbours(self, sq: Square) -> list[Square]:
        """The orthogonal neighbours of ``sq`` on the board, in facing order (N, E, S, W)."""
        out = []
        for f in range(4):
            n = self.step(sq, f)
            if n is not None:
                out.append(n)
        return out

    def line(self, sq: Square, facing: Facing, reach: int) -> list[Square]:
        """The squares straight ahead of ``sq``, nearest first, at most ``reach``."""
        out: list[Square] = []
        cur: Square | None = sq
        for _ in range(reach):
            cur = self.step(cur, facing) if cur is not None else None
            if cur is None:
                break
            out.append(cur)
        return out

    def distance(self, a: Square, b: Square) -> int:
        """The orthogonal (Manhattan) distance between squares ``a`` and ``b``."""
        return abs(a % self.width - b % self.width) + abs(a // self.width - b // self.width)
