"""Cheap upper bounds on where a BattlePlan piece can go in the rest of a round.

A piece's square changes only by its own steps: one orthogonal step for each MOVE or
DEFEND card it reveals, plus at most one step from its buff (orthogonal for extra-move
and extra-defend, diagonal for the diagonal buff), used with one of its own reveals
(seed 002 pages 3-4; docs/battleplan.md). Staying put never reaches a new square, other
pieces can only block it, and a dead piece does not come back before the next round. So
the squares a piece can stand on are among those a walk of that many steps reaches on an
empty board: a breadth-first search over the squares with the step budgets that the
position allows (the known cards, or the per-piece caps of 3 MOVE, 2 ATTACK and 1 DEFEND
on face-down ones, and the possible buff kinds).

The same budgets bound where a piece can stand when it attacks (an ATTACK card leaves one
card fewer to move with; an extra-attack buff leaves the buff step out), which proves
that no enemy can ever stand next to a piece, so none can kill it. These are sound over-
approximations, not answers: :mod:`battlejudge.engines.battleplan.threats` uses them to
skip the squares and kills that no line of play reaches.
"""

from __future__ import annotations

from functools import cache

from battlejudge.solver.battleplan.position import CAPS, HIDDEN_BUFF, PieceState, Position

MOVE, ATTACK, DEFEND = 0, 1, 2
EXTRA_MOVE, EXTRA_ATTACK, EXTRA_DEFEND, DIAGONAL = 0, 1, 2, 3
_ORTH = ((0, 1), (0, -1), (1, 0), (-1, 0))
_DIAG = ((1, 1), (1, -1), (-1, 1), (-1, -1))


@cache
def walk(start: int, orth: int, diag: int) -> frozenset[int]:
    """Every square a walk from ``start`` of at most ``orth`` orthogonal and ``diag``
    diagonal steps (in any order) reaches on the empty 8x8 board."""
    seen = {(start, orth, diag)}
    frontier = [(start, orth, diag)]
    while frontier:
        nxt = []
        for sq, o, d in frontier:
            x, y = sq % 8, sq // 8
            steps = ([(s, o - 1, d) for s in _ORTH] if o else []) + (
                [(s, o, d - 1) for s in _DIAG] if d else []
            )
            for (dx, dy), o2, d2 in steps:
                if 0 <= x + dx < 8 and 0 <= y + dy < 8:
                    state = ((y + dy) * 8 + x + dx, o2, d2)
                    if state not in seen:
                        seen.add(state)
                        nxt.append(state)
        frontier = nxt
    return frozenset(sq for sq, _, _ in seen)


def moving_cards(pc: PieceState, with_attack: bool = False) -> int | None:
    """The most MOVE and DEFEND cards among the piece's face-down ones; with
    ``with_attack``, the most when at least one of them is an ATTACK (None if none can
    be). Known cards are counted; unknown ones are bounded by the per-piece caps."""
    if pc.cards is not None:
        if with_attack and ATTACK not in pc.cards:
            return None
        return sum(c != ATTACK for c in pc.cards)
    cap = CAPS[MOVE] - pc.revealed.count(MOVE) + CAPS[DEFEND] - pc.revealed.count(DEFEND)
    if not with_attack:
        return min(pc.hidden, cap)
    if pc.hidden == 0 or pc.revealed.count(ATTACK) >= CAPS[ATTACK]:
        return None
    return min(pc.hidden - 1, cap)


def buff_kinds(pc: PieceState) -> frozenset[int]:
    """The buff kinds the piece could still use this round (none without a face-down
    card: a buff is used with one of the piece's own reveals)."""
    if pc.buff is None or pc.hidden == 0:
        return frozenset()
    if pc.buff == HIDDEN_BUFF:
        return frozenset(range(4))
    return frozenset({pc.buff})


def _with_buff(start: int, orth: int, kinds: frozenset[int]) -> frozenset[int]:
    out = walk(start, orth, 0)
    if kinds & {EXTRA_MOVE, EXTRA_DEFEND}:
        out |= walk(start, orth + 1, 0)
    if DIAGONAL in kinds:
        out |= walk(start, orth, 1)
    return out


def reach_bound(pos: Position, g: int) -> frozenset[int]:
    """A superset of the squares piece ``g`` can stand on at some point of the rest of
    the round (empty if it is dead)."""
    pc = pos.pieces[g]
    if pc.square is None:
        return frozenset()
    orth = moving_cards(pc)
    assert orth is not None
    return _with_buff(pc.square, orth, buff_kinds(pc))


def attack_bound(pos: Position, g: int) -> frozenset[int]:
    """A superset of the squares piece ``g`` can stand on when it attacks (with a card
    or an extra-attack buff) in the rest of the round."""
    pc = pos.pieces[g]
    if pc.square is None or pc.hidden == 0:
        return frozenset()
    kinds = buff_kinds(pc)
    out: frozenset[int] = frozenset()
    orth = moving_cards(pc, with_attack=True)
    if orth is not None:
        out |= _with_buff(pc.square, orth, kinds)
    if EXTRA_ATTACK in kinds:
        full = moving_cards(pc)
        assert full is not None
        out |= walk(pc.square, full, 0)
    return out


def _next_to(a: int, b: int) -> bool:
    return a != b and abs(a % 8 - b % 8) <= 1 and abs(a // 8 - b // 8) <= 1


def enemy_could_kill(pos: Position, g: int) -> bool:
    """False only when no enemy of piece ``g`` can ever attack from a square next to
    one ``g`` can stand on this round (then no enemy can kill it: seed page 3, an attack
    hits one of the eight adjacent squares). True means the bound cannot tell."""
    mine = reach_bound(pos, g)
    enemies = range(3, 6) if g < 3 else range(3)
    return any(_next_to(a, r) for e in enemies for a in attack_bound(pos, e) for r in mine)


__all__ = [
    "attack_bound",
    "buff_kinds",
    "enemy_could_kill",
    "moving_cards",
    "reach_bound",
    "walk",
]
