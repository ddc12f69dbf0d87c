"""Lines of Battle questions: odds against enumeration of the dice by the engine,
exposure and best-attack against exhaustive search of the engine's legal turns on small
boards, every plan replayed by the engine; position files."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from hypothesis import given, settings
from lines_of_battle_helpers import (
    DETERMINISTIC_TIME,
    oracle,
    play,
    position,
    small_positions,
)

from battlejudge.engines.game import CHANCE
from battlejudge.engines.lines_of_battle.actions import Action
from battlejudge.engines.lines_of_battle.plans import replay_plan
from battlejudge.engines.lines_of_battle.state import LinesOfBattleState
from battlejudge.solver.errors import InputError
from battlejudge.solver.lines_of_battle.core import KIND_NAMES, Board
from battlejudge.solver.lines_of_battle.odds import attack_odds, phase_distribution
from battlejudge.solver.lines_of_battle.plan import best_attack, exposure
from battlejudge.solver.lines_of_battle.position import Position, parse_question

# --- odds ------------------------------------------------------------------------------


@pytest.mark.parametrize("attacker", ["swordsman", "spearman", "archer", "cavalry"])
@pytest.mark.parametrize("defender", ["swordsman", "spearman", "archer", "cavalry", "commander"])
@pytest.mark.parametrize("facing", ["S", "E", "N"])
def test_single_attack_odds_match_the_dice(attacker: str, defender: str, facing: str) -> None:
    """Every pairing from the front, side and rear: the solver's probability equals the
    share of the 36 rolls after which the engine has removed the target."""
    pos = position("1x3", 0, f"p1 {attacker} A1 N", f"p2 {defender} A2 {facing}", "p2 archer A3 S")
    b = pos.board
    p = attack_odds(pos, b.parse("A1"), b.parse("A2"))
    s = LinesOfBattleState.from_position(pos)
    play(s, "combat", "A1xA2")
    if s.current_player() != CHANCE:
        assert p == 1 and s.cells[b.parse("A2")] is None
        return
    killed = Fraction(0)
    for roll, q in s.chance_outcomes():
        t = s.clone()
        t.apply_action(roll)
        killed += q * (t.cells[b.parse("A2")] is None)
    assert p == killed
    # the seed's numbers: 15/36, and 21/36 where a tie rule applies
    ties = (attacker, defender) in (("swordsman", "spearman"), ("spearman", "cavalry"))
    assert p == Fraction(21 if ties else 15, 36)


def _engine_distribution(pos: Position, attacks: list[tuple[int, int]]) -> list[Fraction]:
    """The number destroyed by playing the attacks in the engine over every roll."""
    dist: dict[int, Fraction] = {}
    start = LinesOfBattleState.from_position(pos)
    play(start, "combat")
    n0 = len(start.units_of(1))

    def walk(s: LinesOfBattleState, i: int, p: Fraction) -> None:
        if i == len(attacks) or s.is_terminal():
            k = n0 - len(s.units_of(1))
            dist[k] = dist.get(k, Fraction(0)) + p
            return
        a = Action(7, *attacks[i])
        if a not in s.legal_actions():
            walk(s, i + 1, p)
            return
        t = s.clone()
        t.apply_action(a)
        if t.current_player() != CHANCE:
            walk(t, i + 1, p)
            return
        for roll, q in t.chance_outcomes():
            u = t.clone()
            u.apply_action(roll)
            walk(u, i + 1, p * q)

    walk(start, 0, Fraction(1))
    return [dist.get(k, Fraction(0)) for k in range(max(dist) + 1)]


def test_phase_distribution_matches_the_engine() -> None:
    pos = position(
        "4x6",
        0,
        "p1 swordsman A1 N",
        "p1 archer B1 N",
        "p1 cavalry D3 W",
        "p2 spearman A2 S",
        "p2 swordsman B3 S",
        "p2 cavalry C3 N",
        "p2 archer B5 S",
    )
    b = pos.board
    plan = [("D3", "C3"), ("A1", "A2"), ("B1", "B3"), ("B1", "B5")]
    with pytest.raises(InputError, match="twice"):
        phase_distribution(pos, [(b.parse(x), b.parse(y)) for x, y in plan])
    attacks = [(b.parse(x), b.parse(y)) for x, y in plan[:3]]
    dist = phase_distribution(pos, attacks)
    assert dist == _engine_distribution(pos, attacks)
    assert sum(dist) == 1
    # C3 from the side for sure; A2 7/12 (sword vs spear); B3 5/12
    assert sum(k * p for k, p in enumerate(dist)) == 1 + Fraction(7, 12) + Fraction(5, 12)


def test_later_attacks_wait_for_their_line() -> None:
    """An archer behind a unit destroyed for certain shoots past it; one behind a
    frontal target shoots only if that attack succeeded."""
    pos = position(
        "3x7", 0, "p1 archer B1 N", "p1 cavalry A2 E", "p2 swordsman B2 N", "p2 spearman B6 S"
    )
    b = pos.board
    attacks = [(b.parse("A2"), b.parse("B2")), (b.parse("B1"), b.parse("B6"))]
    dist = phase_distribution(pos, attacks)
    assert dist == _engine_distribution(pos, attacks) == [0, Fraction(21, 36), Fraction(15, 36)]
    with pytest.raises(InputError, match="blocked"):
        phase_distribution(pos, attacks[::-1])


# --- plans against exhaustive search ----------------------------------------------------


@settings(max_examples=60)
@given(small_positions(max_movers=2, max_enemies=3))
def test_best_attack_and_exposure_match_exhaustive_search(pos: Position) -> None:
    s = LinesOfBattleState.from_position(pos)
    if s.is_terminal():
        return
    value, exposed, _ = oracle(s, certain_only=False)
    plan = best_attack(pos, time_limit=None, deterministic_time=DETERMINISTIC_TIME)
    assert plan.optimal
    assert plan.expected == value
    assert len(plan.exposed) == exposed
    assert replay_plan(s, plan)[0] == value
    sure, _, threatened = oracle(s, certain_only=True)
    ans = exposure(pos, 1, time_limit=None, deterministic_time=DETERMINISTIC_TIME)
    assert ans.count == sure
    assert set(ans.threatened) == threatened
    assert set(ans.safe) == {u.square for u in pos.side(1)} - threatened
    expected, certain = replay_plan(s, ans.plan)
    assert certain == expected == sure


@pytest.mark.parametrize(
    "units",
    [
        # three movers must move in the right order through each other's squares
        (
            "p1 spearman A1 N",
            "p1 swordsman A2 N",
            "p1 spearman B1 N",
            "p2 archer C4 W",
            "p2 swordsman D2 E",
            "p2 spearman B4 S",
        ),
        # a swap puts the spearman in front; the archer's line opens on a side kill
        (
            "p1 archer B1 N",
            "p1 spearman A1 E",
            "p1 cavalry C1 N",
            "p2 cavalry B2 E",
            "p2 swordsman B4 S",
            "p2 commander D4 S",
        ),
    ],
)
def test_three_mover_cases_match_exhaustive_search(units: tuple[str, ...]) -> None:
    pos = position("4x4", 0, *units)
    s = LinesOfBattleState.from_position(pos)
    value, exposed, _ = oracle(s, certain_only=False)
    plan = best_attack(pos, time_limit=None, deterministic_time=DETERMINISTIC_TIME)
    assert (plan.expected, len(plan.exposed)) == (value, exposed)
    assert replay_plan(s, plan)[0] == value
    sure, _, threatened = oracle(s, certain_only=True)
    ans = exposure(pos, 1, time_limit=None, deterministic_time=DETERMINISTIC_TIME)
    assert (ans.count, set(ans.threatened)) == (sure, threatened)


def test_full_board_example_replays() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "examples" / "lines_of_battle"
    q = parse_question(json.loads((root / "best-attack.json").read_text()))
    plan = best_attack(q.position, time_limit=None, deterministic_time=DETERMINISTIC_TIME)
    s = LinesOfBattleState.from_position(q.position)
    assert replay_plan(s, plan)[0] == plan.expected > 0
    e = exposure(q.position, 0, time_limit=None, deterministic_time=DETERMINISTIC_TIME)
    t = LinesOfBattleState.from_position(Position(q.position.board, 1, q.position.units))
    assert replay_plan(t, e.plan)[1] == e.count


# --- position files ---------------------------------------------------------------------


def test_position_round_trips_through_json() -> None:
    pos = position("6x5", 1, "p1 archer B1 N r", "p2 commander C5 S", "p1 cavalry F3 W")
    again = parse_question(json.dumps(pos.to_json())).position
    assert again == pos
    assert KIND_NAMES[again.at(Board(6, 5).parse("C5")).kind] == "commander"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["units"][0].update(at="K1"), r"units\[0\]\.at: square 'K1' is off"),
        (lambda d: d["units"][1].update(at="B1"), r"units\[1\]\.at: B1 already holds units\[0\]"),
        (lambda d: d["units"][0].update(type="wizard"), r"units\[0\]\.type: unknown unit type"),
        (lambda d: d["units"][0].update(facing="up"), r"units\[0\]\.facing"),
        (lambda d: d.update(to_move="p3"), r"to_move: unknown side 'p3'"),
        (lambda d: d.update(board="ten"), r"board: 'ten'"),
        (lambda d: d["units"][1].update(reloading=True), r"units\[1\]\.reloading: only archers"),
        (lambda d: d.update(colour="red"), r"colour"),
        (lambda d: d["units"][0].pop("side"), r"units\[0\]\.side"),
    ],
)
def test_bad_positions_name_the_value(change: object, message: str) -> None:
    data = {
        "board": "10x10",
        "to_move": "p1",
        "units": [
            {"at": "B1", "side": "p1", "type": "archer", "facing": "N"},
            {"at": "C1", "side": "p2", "type": "cavalry", "facing": "S"},
        ],
    }
    change(data)  # type: ignore[operator]
    with pytest.raises(InputError, match=message):
        parse_question(data)


def test_army_limits_in_positions() -> None:
    units = [{"at": f"{c}1", "side": "p1", "type": "cavalry", "facing": "N"} for c in "ABCDE"]
    with pytest.raises(InputError, match="more than 4 cavalry"):
        parse_question({"to_move": "p1", "units": units})
