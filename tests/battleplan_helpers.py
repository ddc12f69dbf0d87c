"""Helpers for the BattlePlan tests: positions written compactly, small random positions."""

from __future__ import annotations

import random
from typing import Any

from battlejudge.engines.battleplan.position import exhaustive
from battlejudge.engines.battleplan.state import BattlePlanState
from battlejudge.solver.battleplan.position import (
    PieceState,
    Position,
    check_position,
    position_from_json,
)
from battlejudge.solver.errors import InputError

DETERMINISTIC_TIME = 60.0
"""CP-SAT's deterministic time per solve in tests, passed with ``time_limit=None``: the
answer then depends on the work done, never on the clock (issue 34). The largest solve
here (the start of a battle, CP-SAT threats) takes 4.0; under load that was 37 s of wall
clock, past the 30 s default a wall-clock limit would have cut it at."""


def piece(sq: str | None, hidden: int = 0, **kw: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"square": sq, "hidden": hidden}
    d.update(kw)
    return d


def pos_json(to_move: str, p1: list[dict[str, Any]], p2: list[dict[str, Any]]) -> dict[str, Any]:
    kinds = ["rook", "horse", "bishop"]
    return {
        "to_move": to_move,
        "pieces": {
            "p1": dict(zip(kinds, p1, strict=True)),
            "p2": dict(zip(kinds, p2, strict=True)),
        },
    }


def pos(to_move: str, p1: list[dict[str, Any]], p2: list[dict[str, Any]]) -> Position:
    return position_from_json(pos_json(to_move, p1, p2))


def random_small_position(rng: random.Random, max_hidden: int = 3) -> Position:
    """A valid position with pieces crowded in the middle or on the edges and at most
    ``max_hidden`` face-down cards, small enough to search exhaustively."""
    pool = [r * 8 + c for r in range(2, 6) for c in range(2, 6)] + [0, 7, 56, 63, 57, 6, 62, 1]
    while True:
        squares = rng.sample(pool, 6)
        pieces = []
        for g in range(6):
            dead = rng.random() < 0.1
            hidden = rng.choice([0, 0, 1, 1, 2])
            revealed = tuple(rng.choice([0, 1]) for _ in range(rng.choice([0, 0, 1])))
            cards = None
            if g < 3 and rng.random() < 0.5:
                cards = tuple(rng.choice([0, 1, 2]) for _ in range(hidden))
                if cards.count(2) > 1 or cards.count(1) + revealed.count(1) > 2:
                    cards = None
            buff = rng.choice([None, None, None, -1, 0, 1, 2, 3])
            sq = None if dead else squares[g]
            shield = not dead and rng.random() < 0.2
            pieces.append(PieceState(sq, shield, False, revealed, hidden, cards, buff))
        for s in (0, 1):
            zone = 7 if s == 0 else 0
            side = range(s * 3, s * 3 + 3)
            in_zone = [
                g for g in side if pieces[g].square is not None and pieces[g].square // 8 == zone
            ]
            alive = [g for g in side if pieces[g].square is not None]
            if in_zone or (alive and rng.random() < 0.3):
                g = rng.choice(in_zone or alive)
                p = pieces[g]
                pieces[g] = PieceState(
                    p.square, p.shield, True, p.revealed, p.hidden, p.cards, p.buff
                )
        position = Position(rng.randrange(2), tuple(pieces))
        try:
            check_position(position)
        except InputError:
            continue
        if position.hidden_total(0) + position.hidden_total(1) <= max_hidden:
            return position


def squares_seen(p: Position, budget: int = 400_000) -> tuple[dict[int, set[int]], bool]:
    """The oracle of ``threats``: every square each piece stands on in some line of play
    of the round, by exhaustive search with the engine (its square at the start and after
    every action it was alive before and after: after the round's last action a dead
    piece already stands on its next round's square), and whether the search finished."""
    seen: dict[int, set[int]] = {
        g: set() if pc.square is None else {pc.square} for g, pc in enumerate(p.pieces)
    }

    def visit(before: BattlePlanState, after: BattlePlanState) -> bool:
        for g in range(6):
            if before.pos[g] >= 0 and after.deaths[g] == before.deaths[g]:
                seen[g].add(after.pos[g])
        return False

    every = exhaustive(p, visit, budget=budget, collect=True)
    return seen, every.complete
