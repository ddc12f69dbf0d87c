"""The fast ``threats`` path (bounds, engine playouts, CP-SAT for the rest) against a plain
exhaustive search through the engine on small positions, and against the CP-SAT method
on the example positions: the same reach sets and the same verdicts."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from battleplan_helpers import DETERMINISTIC_TIME, random_small_position, squares_seen
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from battlejudge.engines.battleplan.position import exhaustive, kill_goal, replay_witness
from battlejudge.engines.battleplan.threats import (
    BOUND,
    PLAYOUT,
    kill_by_playouts,
    reach_by_playouts,
    threats,
)
from battlejudge.solver.battleplan import questions
from battlejudge.solver.battleplan.bounds import enemy_could_kill, reach_bound, walk
from battlejudge.solver.battleplan.position import Position, position_from_json

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "battleplan"
BUDGET = 60_000
"""Engine actions an exhaustive search may take; a position needing more is skipped."""


def _seen(p: Position) -> dict[int, set[int]]:
    seen, complete = squares_seen(p, BUDGET)
    assume(complete)
    return seen


def _killable(p: Position, g: int) -> bool:
    oracle = exhaustive(p, kill_goal(g, True), budget=BUDGET)
    assume(oracle.complete)
    return oracle.found


small_positions = st.integers(0, 2**32 - 1).map(
    lambda seed: random_small_position(random.Random(seed))
)
"""Valid positions with at most 3 face-down cards (few enough to search exhaustively)."""


@given(st.integers(0, 63), st.integers(0, 6), st.integers(0, 1))
def test_walk_is_the_manhattan_ball_on_the_board(start: int, orth: int, diag: int) -> None:
    # Plain formula: k orthogonal steps reach Manhattan distance <= k; one diagonal step
    # more reaches any square one diagonal away from those (staying on the board).
    def ball(sq: int, k: int) -> set[int]:
        return {q for q in range(64) if abs(q % 8 - sq % 8) + abs(q // 8 - sq // 8) <= k}

    expected = ball(start, orth)
    if diag:
        for q in list(expected):
            for dx in (-1, 1):
                for dy in (-1, 1):
                    x, y = q % 8 + dx, q // 8 + dy
                    if 0 <= x < 8 and 0 <= y < 8:
                        expected.add(y * 8 + x)
    assert walk(start, orth, diag) == expected


@settings(max_examples=15)
@given(small_positions)
def test_bounds_contain_everything_a_line_of_play_does(p: Position) -> None:
    seen = _seen(p)
    for g in range(6):
        assert seen[g] <= reach_bound(p, g), (p, g)
        if p.pieces[g].square is not None and not enemy_could_kill(p, g):
            assert not _killable(p, g), (p, g)


@settings(max_examples=20)
@given(small_positions, st.integers(0, 2**32 - 1))
def test_playouts_only_report_what_a_line_of_play_does(p: Position, seed: int) -> None:
    seen = _seen(p)
    rng = random.Random(seed)
    for g in range(6):
        if p.pieces[g].square is None:
            continue
        assert reach_by_playouts(p, g, set(reach_bound(p, g)), rng) <= seen[g], (p, g)
        play = kill_by_playouts(p, g, rng)
        if play is not None:
            rep = replay_witness(p, play.witness(), kill_goal(g, True))
            assert rep.ok, (p, g, rep.detail)


@settings(max_examples=15)
@given(small_positions, st.integers(0, 1))
def test_fast_threats_agree_with_exhaustive_search(p: Position, player: int) -> None:
    result = threats(p, player, time_limit=None, deterministic_time=DETERMINISTIC_TIME)
    assert result.complete
    seen = _seen(p)
    enemies = [e for e in range(3 * (1 - player), 3 * (1 - player) + 3)]
    assert set(result.reach) == {e for e in enemies if p.pieces[e].square is not None}
    for e, squares in result.reach.items():
        assert set(squares) == seen[e], (p, e)
    for g, answer in result.exposed.items():
        assert (answer.verdict == "possible") == _killable(p, g), (p, g)
        if answer.witness is not None:
            assert replay_witness(p, answer.witness, kill_goal(g, True)).ok


def _load(name: str) -> Position:
    return position_from_json(json.loads((EXAMPLES / name).read_text()))


CASES = [
    (name, player)
    for name in (
        "threats.json",
        "from-game.json",
        "kill-adjacent.json",
        "kill-shielded-buff.json",
        "score-claim-first.json",
        "score-two-steps.json",
    )
    for player in (0, 1)
] + [("start-of-battle.json", 0)]


@pytest.mark.parametrize(("name", "player"), CASES)
def test_fast_threats_give_the_cp_sat_answer_on_the_examples(name: str, player: int) -> None:
    p = _load(name)
    # Issue 34: a deterministic limit, not the clock (the CP-SAT baseline at the start of
    # a battle takes 4.0 of deterministic time in one solve: 37 s of wall clock under load).
    fast = threats(p, player, time_limit=None, deterministic_time=DETERMINISTIC_TIME)
    old = questions.threats(p, player, time_limit=None, deterministic_time=DETERMINISTIC_TIME)
    assert fast.complete and old.complete
    assert fast.reach == old.reach
    assert {g: a.verdict for g, a in fast.exposed.items()} == {
        g: a.verdict for g, a in old.exposed.items()
    }


def test_the_start_of_battle_needs_no_cp_sat() -> None:
    # Issue 17: the whole answer comes from the bounds and the playouts (the CP-SAT
    # model is what took half a minute); every kill found replays with the engine.
    p = _load("start-of-battle.json")
    result = threats(p, 0, time_limit=None, deterministic_time=DETERMINISTIC_TIME)
    assert result.method == "bounds+engine-playouts"
    assert {a.method for a in result.exposed.values()} <= {BOUND, PLAYOUT}
    for g, answer in result.exposed.items():
        if answer.witness is not None:
            assert replay_witness(p, answer.witness, kill_goal(g, True)).ok
