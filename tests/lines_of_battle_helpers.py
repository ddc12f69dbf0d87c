"""Helpers for the Lines of Battle tests: states from compact unit lists, and a plain
exhaustive search of one turn over the engine's own legal actions (the oracle the
CP-SAT plans are checked against)."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from battlejudge.engines.lines_of_battle.actions import ATTACK, COMBAT, FACE, ROLL, Action
from battlejudge.engines.lines_of_battle.state import (
    SWAPPED,
    LinesOfBattleState,
)
from battlejudge.solver.lines_of_battle.core import (
    ARCHER,
    FRONT,
    MOVE,
    RANGE,
    Board,
    aspect,
    facing_from_name,
    kind_from_name,
)
from battlejudge.solver.lines_of_battle.position import Position, UnitAt

DETERMINISTIC_TIME = 30.0
"""CP-SAT's deterministic time per solve in tests, passed with ``time_limit=None``: the
plans then depend on the work done, never on the clock (issue 34). The largest solve here
(the planner's, in a whole game) takes 0.2."""


def position(board: str, to_move: int, *units: str) -> Position:
    """``position("5x5", 0, "p1 spearman B1 N", "p2 cavalry B3 S r")`` (``r``: reloading)."""
    w, h = (int(x) for x in board.split("x"))
    b = Board(w, h)
    out = []
    for spec in units:
        side, kind, sq, facing, *rest = spec.split()
        out.append(
            UnitAt(
                b.parse(sq),
                0 if side == "p1" else 1,
                kind_from_name(kind),
                facing_from_name(facing),
                bool(rest),
            )
        )
    return Position(b, to_move, tuple(out))


def state(board: str, to_move: int, *units: str) -> LinesOfBattleState:
    return LinesOfBattleState.from_position(position(board, to_move, *units))


def play(s: LinesOfBattleState, *texts: str) -> LinesOfBattleState:
    """Apply actions written in notation, each checked."""
    for t in texts:
        s.apply_action(s.parse_action(t))
    return s


def movement_ends(start: LinesOfBattleState) -> list[LinesOfBattleState]:
    """Every distinct state the mover can reach with moves and swaps (Army Movement
    included), before any re-face; faces are enumerated afterwards because facing never
    changes where a unit may move."""
    seen: dict[str, LinesOfBattleState] = {start.serialize(): start}
    stack = [start]
    while stack:
        s = stack.pop()
        for a in s.legal_actions():
            if a.kind in (FACE, COMBAT):
                continue
            t = s.clone()
            t.apply_action(a)
            key = t.serialize()
            if key not in seen:
                seen[key] = t
                stack.append(t)
    # the same squares and swaps reached in different ways are one end
    ends: dict[tuple[object, ...], LinesOfBattleState] = {}
    for s in seen.values():
        key = tuple(
            None if u is None else (u.owner, u.kind, u.facing, u.flags & SWAPPED) for u in s.cells
        )
        ends.setdefault(key, s)
    return list(ends.values())


def facings(s: LinesOfBattleState) -> list[LinesOfBattleState]:
    """Every way the mover's units that may still re-face can end up facing."""
    out = [s]
    for sq, u in s.units_of(s.to_move):
        if u.flags & SWAPPED:
            continue
        nxt = []
        for t in out:
            nxt.append(t)
            for f in range(4):
                if f != u.facing:
                    v = t.clone()
                    v.apply_action(Action(FACE, sq, f))
                    nxt.append(v)
        out = nxt
    return out


def attack_plans(
    s: LinesOfBattleState, certain_only: bool
) -> list[tuple[list[Fraction], frozenset[int]]]:
    """From the start of the combat phase, every ordered set of attacks, played in the
    world where every frontal attack fails: each plan's list of (target, probability)
    attacks, as kill probabilities per target, and the targets destroyed for sure."""
    out: list[tuple[list[Fraction], frozenset[int]]] = []

    def walk(s: LinesOfBattleState, survive: dict[int, Fraction], sure: frozenset[int]) -> None:
        frontal_only = [1 - p for t, p in survive.items() if t not in sure]
        out.append((frontal_only + [Fraction(1)] * len(sure), sure))
        for a in s.legal_actions():
            if a.kind != ATTACK:
                continue
            u, v = s.cells[a.a], s.cells[a.b]
            assert u is not None and v is not None
            frontal = aspect(u.facing, v.facing) == FRONT
            if frontal and certain_only:
                continue
            t = s.clone()
            t.apply_action(a)
            if frontal:
                before = len(t.units_of(1 - s.to_move))
                t.apply_action(Action(ROLL, 1, 6))  # fails whatever the tie rules
                assert len(t.units_of(1 - s.to_move)) == before
                p = Fraction(21, 36) if (u.kind, v.kind) in ((0, 1), (1, 3)) else Fraction(15, 36)
                new = dict(survive)
                new[a.b] = new.get(a.b, Fraction(1)) * (1 - p)
                walk(t, new, sure)
            else:
                walk(t, survive, sure | {a.b})

    walk(s, {}, frozenset())
    return out


def exposed_count(s: LinesOfBattleState, owner: int) -> int:
    """Units of ``owner`` some enemy could reach from the side or rear next turn,
    ignoring every unit in the way (the tie-break measure, written out plainly)."""
    b = s.board
    threats = [
        (sq, u)
        for sq, u in s.units_of(1 - owner)
        if RANGE[u.kind] > 0 and not (u.kind == ARCHER and u.flags & 16)
    ]
    count = 0
    for sq, u in s.units_of(owner):
        hit = False
        for esq, e in threats:
            for z in range(b.size):
                if b.distance(esq, z) > MOVE[e.kind]:
                    continue
                for d in range(4):
                    if sq in b.line(z, d, RANGE[e.kind]) and aspect(d, u.facing) != FRONT:
                        hit = True
        count += hit
    return count


def oracle(start: LinesOfBattleState, certain_only: bool) -> tuple[Fraction, int, set[int]]:
    """Exhaustive search of the mover's turn: the best value (expected kills, or certain
    kills), the fewest own units left exposed among the best plans, and every enemy
    square some plan destroys for certain."""
    best = (Fraction(-1), 0)
    threatened: set[int] = set()
    for end in movement_ends(start):
        for s in facings(end):
            exposed = None if certain_only else exposed_count(s, s.to_move)
            c = s.clone()
            c.apply_action(Action(COMBAT))
            for kills, sure in attack_plans(c, certain_only):
                threatened |= sure
                value = Fraction(len(sure)) if certain_only else sum(kills, Fraction(0))
                key = (value, -(exposed or 0))
                if key > best:
                    best = key
    return best[0], -best[1], threatened


SIDES = st.sampled_from((0, 1))


@st.composite
def small_positions(draw: st.DrawFn, max_movers: int = 2, max_enemies: int = 3) -> Position:
    """A small board (3-5 by 3-4) with 1-``max_movers`` units of p1 (to move) and
    1-``max_enemies`` of p2, anywhere, any facing, at most one Commander a side."""
    w = draw(st.integers(3, 5))
    h = draw(st.integers(3, 4))
    n_mine = draw(st.integers(1, max_movers))
    n_theirs = draw(st.integers(1, max_enemies))
    squares = draw(
        st.lists(
            st.integers(0, w * h - 1),
            min_size=n_mine + n_theirs,
            max_size=n_mine + n_theirs,
            unique=True,
        )
    )
    units = []
    commanders = [False, False]
    for i, sq in enumerate(squares):
        owner = 0 if i < n_mine else 1
        kind = draw(st.integers(0, 3 if commanders[owner] else 4))
        commanders[owner] |= kind == 4
        units.append(
            UnitAt(
                sq,
                owner,
                kind,
                draw(st.integers(0, 3)),
                kind == ARCHER and draw(st.booleans()),
            )
        )
    return Position(Board(w, h), 0, tuple(units))
