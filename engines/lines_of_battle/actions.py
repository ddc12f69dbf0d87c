"""Lines of Battle actions and their record notation.

One action is one small decision, so a turn can be played (and recorded) step by step:

==================  ========================================================
``first p1``        chance: who deploys first and takes the first turn
``deploy archer C2`` put a unit of that type on a square of the deployment zone
``army``            declare Army Movement (only as the turn's first action)
``C2-C4``           move the unit on C2 to C4 (its whole move, orthogonally)
``face C4 E``       re-face the unit on C4 (N, E, S or W)
``swap C2 D2``      formation swap of two adjacent friendly units
``combat``          end the movement phase
``C4xC6``           the unit on C4 attacks the unit on C6
``roll 5-3``        chance: the attacker's d6, then the defender's
``end``             end the turn
==================  ========================================================

The parser is lenient (any case and spacing; ``move C2 C4``, ``attack C4 C6``,
``C4 E``, ``deploy cav c2``, plural type names); the printer is canonical, and
``parse(to_string(a)) == a``.

>>> b = Board()
>>> to_string(parse("attack c4 c6", b), b)
'C4xC6'
>>> parse("swap D2 C2", b) == parse("swap c2 d2", b)
True
"""

from __future__ import annotations

import re
from typing import NamedTuple

from battlejudge.solver.errors import InputError
from battlejudge.solver.lines_of_battle.core import (
    FACING_NAMES,
    KIND_NAMES,
    Board,
    facing_from_name,
    kind_from_name,
)

FIRST, DEPLOY, ARMY, MOVE, FACE, SWAP, COMBAT, ATTACK, ROLL, END = range(10)
SEATS = ("p1", "p2")


class Action(NamedTuple):
    """A small hashable, sortable value: ``kind`` and two operands (squares, a unit
    type, a facing, dice or a player, depending on ``kind``)."""

    kind: int
    a: int = 0
    b: int = 0


def to_string(action: Action, board: Board) -> str:
    """The canonical notation of ``action``."""
    k, a, b = action
    n = board.name
    if k == FIRST:
        return f"first {SEATS[a]}"
    if k == DEPLOY:
        return f"deploy {KIND_NAMES[a]} {n(b)}"
    if k == ARMY:
        return "army"
    if k == MOVE:
        return f"{n(a)}-{n(b)}"
    if k == FACE:
        return f"face {n(a)} {FACING_NAMES[b]}"
    if k == SWAP:
        return f"swap {n(a)} {n(b)}"
    if k == COMBAT:
        return "combat"
    if k == ATTACK:
        return f"{n(a)}x{n(b)}"
    if k == ROLL:
        return f"roll {a}-{b}"
    if k == END:
        return "end"
    raise ValueError(f"unknown action kind {k}")


_SQ = r"([a-z]\d{1,2})"
_PATTERNS: list[tuple[re.Pattern[str], int]] = [
    (re.compile(r"first (p1|p2)"), FIRST),
    (re.compile(r"(?:deploy )?([a-z]+) " + _SQ), DEPLOY),
    (re.compile(r"army(?: movement)?"), ARMY),
    (re.compile(r"(?:move )?" + _SQ + r"(?: ?- ?| to | )" + _SQ), MOVE),
    (re.compile(r"(?:face )?" + _SQ + r" ([nesw]|north|east|south|west)"), FACE),
    (re.compile(r"swap " + _SQ + r"(?: ?- ?| with | )" + _SQ), SWAP),
    (re.compile(r"combat"), COMBAT),
    (re.compile(r"(?:attack )?" + _SQ + r" ?(?:x|attacks|-?>| )" + _SQ), ATTACK),
    (re.compile(r"roll ([1-6]) ?[- ] ?([1-6])"), ROLL),
    (re.compile(r"end(?: turn)?"), END),
]


def parse(text: str, board: Board) -> Action:
    """Read one action (leniently); :class:`InputError` quotes text it cannot read.

    ``C2 C4`` alone is read as a move; write ``C2xC4`` or ``attack C2 C4`` for an
    attack."""
    try:
        return _parse(" ".join(text.strip().lower().split()), board)
    except InputError as e:
        raise InputError(f"cannot read action {text.strip()!r}: {e}") from None


def _parse(t: str, board: Board) -> Action:
    for pattern, kind in _PATTERNS:
        m = pattern.fullmatch(t)
        if m is None:
            continue
        g = m.groups()
        if kind == FIRST:
            return Action(FIRST, SEATS.index(g[0]))
        if kind == DEPLOY:
            if g[0] in ("face", "swap", "attack", "move", "roll", "first"):
                continue
            return Action(DEPLOY, kind_from_name(g[0]), board.parse(g[1]))
        if kind in (ARMY, COMBAT, END):
            return Action(kind)
        if kind == MOVE:
            return Action(MOVE, board.parse(g[0]), board.parse(g[1]))
        if kind == FACE:
            return Action(FACE, board.parse(g[0]), facing_from_name(g[1]))
        if kind == SWAP:
            x, y = board.parse(g[0]), board.parse(g[1])
            return Action(SWAP, min(x, y), max(x, y))
        if kind == ATTACK:
            return Action(ATTACK, board.parse(g[0]), board.parse(g[1]))
        if kind == ROLL:
            return Action(ROLL, int(g[0]), int(g[1]))
    raise InputError("not in the notation (type moves to list the legal actions)")
