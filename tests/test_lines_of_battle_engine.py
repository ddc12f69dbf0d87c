"""Lines of Battle engine: conformance over seeded games, notation and records, and one
scenario per rule (seed 003 and docs/rulings.md, Lines of Battle)."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from conformance import check_playout
from hypothesis import given
from hypothesis import strategies as st
from lines_of_battle_helpers import DETERMINISTIC_TIME, play, state

from battlejudge.engines.game import CHANCE, IllegalActionError, random_playout
from battlejudge.engines.lines_of_battle.actions import (
    ARMY,
    ATTACK,
    DEPLOY,
    FACE,
    MOVE,
    SWAP,
    Action,
    parse,
    to_string,
)
from battlejudge.engines.lines_of_battle.bots import PlannerBot, RandomBot
from battlejudge.engines.lines_of_battle.game import GAME
from battlejudge.engines.lines_of_battle.state import (
    DRAW,
    LinesOfBattleState,
    new_game,
    options_game,
    zone,
)
from battlejudge.engines.records import GameRecord, replay
from battlejudge.engines.runner import play_game
from battlejudge.solver.errors import InputError
from battlejudge.solver.lines_of_battle.core import CAVALRY, COMMANDER, Board

SHORT_GAMES = 800
CHUNK = 100


@pytest.mark.parametrize("start", range(0, SHORT_GAMES, CHUNK))
def test_conformance_short_games(start: int) -> None:
    """Seeded random games with small turn limits (2-13 turns): deployment, movement,
    swaps, army movement and combat at every step of the interface."""
    kinds: set[int] = set()
    for seed in range(start, start + CHUNK):
        variant = "commander" if seed % 2 else "standard"
        s = check_playout(
            lambda v=variant, n=2 + seed % 12: new_game(v, n),
            LinesOfBattleState.deserialize,
            seed,
            deep_every=11,
        )
        assert isinstance(s, LinesOfBattleState)
        assert s.winner in (0, 1, DRAW)
    del kinds


@pytest.mark.parametrize("start", [0, 30])
def test_conformance_whole_games(start: int) -> None:
    """Whole random games with the default limit end (a win or the turn limit)."""
    outcomes = set()
    for seed in range(1000 + start, 1030 + start):
        variant = "commander" if seed % 3 == 0 else "standard"
        s = check_playout(
            lambda v=variant: new_game(v), LinesOfBattleState.deserialize, seed, deep_every=40
        )
        assert isinstance(s, LinesOfBattleState)
        outcomes.add(s.winner)
        if s.winner in (0, 1) and s.variant == "standard":
            assert s.units_of(1 - s.winner) == []
    assert outcomes & {0, 1}


def test_notation_round_trips_along_random_games() -> None:
    rng = random.Random(5)
    for seed in range(6):
        s = new_game("commander" if seed % 2 else "standard", 6)
        while not s.is_terminal():
            for a in s.legal_actions():
                text = s.action_to_string(a)
                assert parse(text, s.board) == a
                assert s.parse_action(text.upper()) == a
            s.apply_action(rng.choice(s.legal_actions()))


@given(
    st.sampled_from([MOVE, ATTACK, SWAP]),
    st.integers(0, 99),
    st.integers(0, 99),
)
def test_square_actions_round_trip(kind: int, a: int, b: int) -> None:
    board = Board()
    if kind == SWAP:
        a, b = min(a, b), max(a, b)
    action = Action(kind, a, b)
    assert parse(to_string(action, board), board) == action


def test_lenient_notation() -> None:
    b = Board()
    assert parse("move c2 c4", b) == parse("C2-C4", b) == parse("c2 c4", b)
    assert parse("attack C4 C6", b) == parse("c4xc6", b)
    assert parse("C4 east", b) == parse("face c4 E", b) == Action(FACE, 32, 1)
    assert parse("deploy cav b2", b) == parse("Deploy Cavalry B2", b) == Action(DEPLOY, 3, 11)
    assert parse("End Turn", b) == parse("end", b)
    with pytest.raises(InputError, match="'fly C4'"):
        parse("fly C4", b)


def test_records_replay_and_round_trip() -> None:
    final, rec = play_game(GAME, [RandomBot(1), RandomBot(2)], seed=4, options={"turns": "20"})
    text = rec.dumps()
    again = GameRecord.loads(text)
    assert again.dumps() == text
    report = replay(again)
    assert report.sound, report.problem
    assert report.state.serialize() == final.serialize()
    # an edited record breaks at the edited line
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("p1: ") and "-" in line)
    lines[i] = "p1: A1-J10"
    bad = replay(GameRecord.loads("\n".join(lines)))
    assert bad.problem is not None and bad.problem.kind == "illegal-action"


def test_planner_plays_legal_games_and_beats_random() -> None:
    # A deterministic limit and no wall-clock one keep the game the same on a loaded
    # machine (with 2 s, a load average of 8 cut plans short and the planner lost its
    # edge: the result depended on wall-clock time; issue 34).
    planner = PlannerBot(1, time_limit=None, deterministic_time=DETERMINISTIC_TIME)
    final, rec = play_game(GAME, [planner, RandomBot(2)], seed=3, options={"turns": "40"})
    assert replay(GameRecord.loads(rec.dumps())).sound
    assert len(final.units_of(0)) > len(final.units_of(1))


def test_options() -> None:
    assert options_game({"variant": "commander", "turns": "9"}).turn_limit == 9
    with pytest.raises(InputError, match="'sometimes'"):
        options_game({"variant": "sometimes"})
    with pytest.raises(InputError, match="turns"):
        options_game({"turns": "-3"})


# --- deployment (seed: Board & Deployment, Army Composition; docs/rulings.md zones) -----------


def _deployed(variant: str = "standard") -> LinesOfBattleState:
    s = new_game(variant)
    s.apply_action(Action(0, 0))  # first p1
    return s


def test_deployment_zones_alternate_and_face_the_enemy() -> None:
    s = _deployed()
    b = s.board
    assert [b.name(q) for q in zone(b, 0)][:3] == ["B1", "C1", "D1"]
    assert {q // 10 for q in zone(b, 1)} == {8, 9} and len(zone(b, 1)) == 16
    assert {a.b for a in s.legal_actions()} == set(zone(b, 0))
    play(s, "deploy archer C2")
    assert s.to_move == 1
    with pytest.raises(IllegalActionError, match="zone"):
        s.apply_action(parse("deploy archer C2", b))
    play(s, "deploy spearman C9")
    assert s.cells[b.parse("C2")].facing == 0 and s.cells[b.parse("C9")].facing == 2


def test_cavalry_limit() -> None:
    s = _deployed()
    for i in range(4):
        play(s, f"deploy cavalry {'BCDE'[i]}1", f"deploy cavalry {'BCDE'[i]}10")
    assert not any(a.a == CAVALRY for a in s.legal_actions())


def test_commander_variant_deploys_exactly_one_commander() -> None:
    s = _deployed("commander")
    cols = "BCDEFGHI"
    for i in range(15):
        play(s, f"deploy swordsman {cols[i % 8]}{1 + i // 8}")
        play(s, f"deploy swordsman {cols[i % 8]}{10 - i // 8}")
    assert {a.a for a in s.legal_actions()} == {COMMANDER}
    play(s, "deploy commander I2", "deploy commander I9")
    assert s.turn == 1 and s.current_player() == 0
    assert not any(a.kind == DEPLOY for a in s.legal_actions())


# --- movement (seed: Movement Phase, Facing) ---------------------------------------------


def test_movement_allowance_orthogonal_and_no_passing_through() -> None:
    s = state(
        "10x10", 0, "p1 archer B2 N", "p1 cavalry C2 N", "p1 swordsman C3 N", "p2 spearman J10 S"
    )
    moves = {s.action_to_string(a) for a in s.legal_actions() if a.kind == MOVE}
    assert "B2-B3" in moves and "B2-B4" not in moves and "B2-C3" not in moves
    assert "C2-C6" not in moves  # C3 is in the way
    assert "C2-D5" in moves  # round it: D2 D3 D4 D5
    play(s, "B2-B3")
    with pytest.raises(IllegalActionError, match="already moved"):
        play(s, "B3-B4")


def test_one_re_face_per_turn() -> None:
    s = state("5x5", 0, "p1 spearman B2 N", "p2 spearman E5 S")
    play(s, "face B2 E", "B2-C2")
    with pytest.raises(IllegalActionError, match="already re-faced"):
        play(s, "face C2 S")
    play(s, "combat", "end", "combat", "end")
    play(s, "face C2 S")  # a new turn, a new re-face


def test_army_movement() -> None:
    s = state("10x10", 0, "p1 cavalry B2 N", "p1 spearman C2 N", "p2 spearman J10 S")
    play(s, "army")
    moves = {s.action_to_string(a) for a in s.legal_actions() if a.kind == MOVE}
    assert moves == {"B2-A2", "B2-B1", "B2-B3", "C2-C1", "C2-C3", "C2-D2"}
    assert not any(a.kind == SWAP for a in s.legal_actions())
    play(s, "B2-B3", "face B3 E", "C2-C3", "face C3 W")
    t = state("10x10", 0, "p1 cavalry B2 N", "p2 spearman J10 S")
    play(t, "face B2 E")
    assert Action(ARMY) not in t.legal_actions()  # only before any unit acts


def test_formation_swap_restrictions() -> None:
    s = state(
        "5x5", 0, "p1 spearman B2 N", "p1 archer C2 E", "p1 cavalry D2 N", "p2 swordsman B4 S"
    )
    play(s, "swap B2 C2")
    assert s.cells[s.board.parse("B2")].facing == 1  # each keeps its facing
    assert s.cells[s.board.parse("C2")].facing == 0
    for text in ("B2-B3", "face C2 E", "swap C2 D2"):
        with pytest.raises(IllegalActionError):
            play(s, text)
    play(s, "D2-D3")
    play(s, "combat")
    assert not any(a.kind == ATTACK for a in s.legal_actions())  # C2 spearman swapped
    moved = state("5x5", 0, "p1 spearman B2 N", "p1 archer C2 N", "p2 swordsman E5 S")
    play(moved, "face B2 E")
    with pytest.raises(IllegalActionError, match="must not have moved"):
        play(moved, "swap B2 C2")


# --- combat (seed: Combat Phase, Unit Types; docs/rulings.md) -----------------------------------


def _roll_outcome(s: LinesOfBattleState, attack: str, roll: str) -> bool:
    t = s.clone()
    play(t, "combat", attack)
    assert t.current_player() == CHANCE
    target = t.pending[1] if t.pending else -1
    play(t, roll)
    return t.cells[target] is None


def test_frontal_combat_and_tie_rules() -> None:
    sword_spear = state("3x3", 0, "p1 swordsman B1 N", "p2 spearman B2 S")
    assert _roll_outcome(sword_spear, "B1xB2", "roll 3-3")  # swordsman wins ties
    assert not _roll_outcome(sword_spear, "B1xB2", "roll 2-3")
    spear_cav = state("3x3", 0, "p1 spearman B1 N", "p2 cavalry B3 S")
    assert _roll_outcome(spear_cav, "B1xB3", "roll 4-4")  # spearman wins ties (range 2)
    plain = state("3x3", 0, "p1 cavalry B1 N", "p2 spearman B2 S")
    assert not _roll_outcome(plain, "B1xB2", "roll 4-4")  # the defender survives ties
    assert _roll_outcome(plain, "B1xB2", "roll 5-4")
    reverse = state("3x3", 0, "p1 spearman B1 N", "p2 swordsman B2 S")
    assert not _roll_outcome(reverse, "B1xB2", "roll 6-6")
    s = plain.clone()
    play(s, "combat", "B1xB2")
    outcomes = s.chance_outcomes()
    assert len(outcomes) == 36 and sum(p for _, p in outcomes) == Fraction(1)


def test_side_and_rear_attacks_destroy_without_dice() -> None:
    for facing in ("E", "W", "N"):  # attacked from the south: side, side, rear
        s = state("3x3", 0, "p1 cavalry B1 N", f"p2 archer B2 {facing}", "p2 archer C3 S")
        play(s, "combat", "B1xB2")
        assert s.current_player() == 0 and s.cells[s.board.parse("B2")] is None


def test_blocked_lines() -> None:
    s = state(
        "1x8", 0, "p1 archer A1 N", "p1 swordsman A3 N", "p2 spearman A5 S", "p2 cavalry A8 S"
    )
    play(s, "combat")
    targets = {s.action_to_string(a) for a in s.legal_actions() if a.kind == ATTACK}
    assert targets == set()  # blocked by its own swordsman; the swordsman reaches A4 only
    t = state("1x8", 0, "p1 archer A1 N", "p2 spearman A4 S", "p2 cavalry A5 S")
    play(t, "combat")
    assert {t.action_to_string(a) for a in t.legal_actions() if a.kind == ATTACK} == {"A1xA4"}
    far = state("1x8", 0, "p1 archer A1 N", "p2 spearman A7 S")
    play(far, "combat")
    assert not any(a.kind == ATTACK for a in far.legal_actions())  # range 5


def test_destroyed_units_open_lines_at_once() -> None:
    s = state(
        "3x6", 0, "p1 archer B1 N", "p1 cavalry A2 E", "p2 swordsman B2 N", "p2 spearman B5 S"
    )
    play(s, "combat", "A2xB2")  # from the side: destroyed at once
    assert Action(ATTACK, s.board.parse("B1"), s.board.parse("B5")) in s.legal_actions()


def test_archer_reload() -> None:
    s = state("3x8", 0, "p1 archer B1 N", "p2 spearman B6 S", "p2 archer A8 S")
    play(s, "combat", "B1xB6", "roll 1-6", "end", "combat", "end")
    play(s, "B1-B2", "combat")  # moving and re-facing are allowed while reloading
    assert not any(a.kind == ATTACK for a in s.legal_actions())
    with pytest.raises(IllegalActionError, match="reloading"):
        play(s, "B2xB6")
    play(s, "end", "combat", "end", "combat")
    assert any(a.kind == ATTACK for a in s.legal_actions())


def test_each_unit_attacks_once() -> None:
    s = state("3x3", 0, "p1 spearman B1 N", "p2 cavalry B2 S", "p2 cavalry B3 S")
    play(s, "combat", "B1xB2", "roll 6-1")
    assert not any(a.kind == ATTACK for a in s.legal_actions())


def test_victory_and_commander() -> None:
    s = state("3x3", 0, "p1 cavalry B1 N", "p2 archer B2 E")
    play(s, "combat", "B1xB2")
    assert s.is_terminal() and s.returns() == [1.0, -1.0]
    c = state("3x3", 0, "p1 cavalry B1 N", "p2 commander B2 E", "p2 spearman A3 S")
    play(c, "combat", "B1xB2")
    assert c.is_terminal() and c.winner == 0
    k = state("3x3", 0, "p1 commander B1 N", "p2 swordsman B2 S")
    play(k, "combat")
    assert not any(a.kind == ATTACK for a in k.legal_actions())  # it cannot attack


def test_turn_limit_is_a_draw() -> None:
    s = new_game("standard", 2)
    random_playout(s, random.Random(0))
    assert s.winner in (0, 1, DRAW)
    t = state("3x3", 0, "p1 archer A1 N", "p2 archer C3 S")
    t.turn_limit = 2
    play(t, "combat", "end", "combat", "end")
    assert t.is_terminal() and t.winner == DRAW and t.returns() == [0.0, 0.0]
