"""The BattlePlan board, pieces, cards and buffs as small ints, with their notation.

Rules: seed 002, page 1 (board and zones, components). Squares are ``row * 8 + col`` with
``a1 = 0`` and ``h8 = 63``; player 1 (``p1``) defends row 1 and wins on h1, player 2
(``p2``) defends row 8 and wins on a8. Pieces are numbered ``player * 3 + kind`` with the
kinds rook, horse, bishop (docs/rulings.md, BattlePlan: they differ only in name).
"""

from __future__ import annotations

from typing import TypeAlias

from battlejudge.solver.errors import InputError

Square: TypeAlias = int
"""0..63, ``row * 8 + col``; -1 off the board (dead, not yet placed)."""
OFF = -1

P1, P2 = 0, 1
SEATS: tuple[str, str] = ("p1", "p2")
KINDS: tuple[str, str, str] = ("rook", "horse", "bishop")

HOME_ROW: tuple[int, int] = (0, 7)
"""Each player's defensive zone (row index)."""
WIN_SQUARE: tuple[Square, Square] = (7, 56)
"""Each player's Win Zone: h1 for p1, a8 for p2."""

MOVE, ATTACK, DEFEND = 0, 1, 2
CARD_NAMES: tuple[str, str, str] = ("move", "attack", "defend")
CARD_LETTERS = "MAD"
CAPS: tuple[int, int, int] = (3, 2, 1)
"""Per piece and round: at most 3 MOVE, 2 ATTACK, 1 DEFEND (seed, Plan step 3)."""
DECK: tuple[int, int, int] = (9, 6, 3)
"""Each player's action cards (never binding: three pieces' caps add up to exactly this)."""

EXTRA_MOVE, EXTRA_ATTACK, EXTRA_DEFEND, DIAGONAL = 0, 1, 2, 3
BUFF_NAMES: tuple[str, str, str, str] = ("extra-move", "extra-attack", "extra-defend", "diagonal")
BUFF_COPIES = 5
"""The shared buff deck holds 5 of each of the 4 buffs."""

ORTH_STEPS: tuple[tuple[int, int], ...] = ((0, 1), (0, -1), (1, 0), (-1, 0))
DIAG_STEPS: tuple[tuple[int, int], ...] = ((1, 1), (1, -1), (-1, 1), (-1, -1))
KING_STEPS = ORTH_STEPS + DIAG_STEPS
DIRECTION_NAMES: dict[str, tuple[int, int]] = {
    "n": (0, 1),
    "s": (0, -1),
    "e": (1, 0),
    "w": (-1, 0),
    "ne": (1, 1),
    "nw": (-1, 1),
    "se": (1, -1),
    "sw": (-1, -1),
}


def square_name(sq: Square) -> str:
    """``0 -> 'a1'``, ``63 -> 'h8'``."""
    return "abcdefgh"[sq % 8] + str(sq // 8 + 1)


def parse_square(text: str) -> Square:
    """``'C4'``/``'c4'`` -> 26; :class:`InputError` names anything else."""
    t = text.strip().lower()
    if len(t) == 2 and t[0] in "abcdefgh" and t[1] in "12345678":
        return (int(t[1]) - 1) * 8 + "abcdefgh".index(t[0])
    raise InputError(f"{text!r} is not a square (a1..h8)")


def step(sq: Square, dx: int, dy: int) -> Square:
    """The square ``(dx, dy)`` away, or :data:`OFF` past the edge."""
    x, y = sq % 8 + dx, sq // 8 + dy
    return y * 8 + x if 0 <= x < 8 and 0 <= y < 8 else OFF


def _table(steps: tuple[tuple[int, int], ...]) -> tuple[tuple[Square, ...], ...]:
    out = []
    for sq in range(64):
        out.append(tuple(t for t in (step(sq, dx, dy) for dx, dy in steps) if t != OFF))
    return tuple(out)


ORTH: tuple[tuple[Square, ...], ...] = _table(ORTH_STEPS)
"""On-board orthogonal neighbours of each square."""
DIAG: tuple[tuple[Square, ...], ...] = _table(DIAG_STEPS)
ADJ: tuple[tuple[Square, ...], ...] = _table(KING_STEPS)
"""The eight squares around each square (attack range)."""
