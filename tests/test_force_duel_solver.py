"""The Force question solvers against plain oracles: LP and exact values against a
grid sandwich of the minimax value, payoff matrices and sure wins against every
permutation of the opponent's cards (a scorer written here, sharing nothing with the
solver), and the solver's matrix against the rules engine playing each draw."""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
from force_duel_helpers import small_cards
from hypothesis import given
from hypothesis import strategies as st

from battlejudge.engines.force_duel.cards import load_book
from battlejudge.engines.force_duel.position import (
    Battle,
    parse_position,
    position_of,
    replay_counter,
)
from battlejudge.engines.force_duel.state import FORCE, FORCE_BASE, ForceDuelState, new_game
from battlejudge.engines.game import CHANCE, sample_chance
from battlejudge.solver.force_duel import (
    BattleCard,
    ForceQuestion,
    MatrixSolution,
    SideRules,
    certified,
    payoffs,
    solve_exact,
    solve_force,
    solve_lp,
    sure_win,
)

fractions = st.builds(Fraction, st.integers(0, 12), st.integers(1, 12)).filter(lambda f: f <= 1)


@st.composite
def matrices(draw: st.DrawFn) -> list[list[Fraction]]:
    rows = draw(st.integers(1, 3))
    cols = draw(st.integers(1, 3))
    return [[draw(fractions) for _ in range(cols)] for _ in range(rows)]


def _simplex(n: int, steps: int) -> list[tuple[Fraction, ...]]:
    return [
        tuple(Fraction(c, steps) for c in combo)
        for combo in itertools.product(range(steps + 1), repeat=n)
        if sum(combo) == steps
    ]


def grid_bounds(m: list[list[Fraction]], steps: int = 12) -> tuple[Fraction, Fraction]:
    """A lower and an upper bound of the game's value from mixed strategies on a grid:
    what the best grid row strategy guarantees, and what the best grid column strategy
    concedes (weak duality makes both true bounds)."""
    nr, nc = len(m), len(m[0])
    lower = max(
        min(sum(x[i] * m[i][j] for i in range(nr)) for j in range(nc)) for x in _simplex(nr, steps)
    )
    upper = min(
        max(sum(m[i][j] * y[j] for j in range(nc)) for i in range(nr)) for y in _simplex(nc, steps)
    )
    return lower, upper


@given(matrices())
def test_exact_solution_is_certified_and_sandwiched(m: list[list[Fraction]]) -> None:
    sol = solve_exact(m)
    assert certified(m, sol)
    lower, upper = grid_bounds(m)
    assert lower <= sol.value <= upper
    lp_value, lp_x = solve_lp(m)
    assert abs(lp_value - float(sol.value)) < 1e-7
    assert min(sum(lp_x[i] * float(m[i][j]) for i in range(len(m))) for j in range(len(m[0]))) >= (
        float(sol.value) - 1e-6
    )


def test_certificate_rejects_a_wrong_value() -> None:
    # Matching pennies: the value is 1/2 with (1/2, 1/2) for both.
    m = [[Fraction(1), Fraction(0)], [Fraction(0), Fraction(1)]]
    sol = solve_exact(m)
    assert sol == MatrixSolution(Fraction(1, 2), (Fraction(1, 2),) * 2, (Fraction(1, 2),) * 2)
    assert not certified(m, MatrixSolution(Fraction(1, 2), (Fraction(1), Fraction(0)), sol.cols))
    assert not certified(m, MatrixSolution(Fraction(2, 3), sol.rows, sol.cols))


# -- questions against every permutation -----------------------------------------------

cards = st.builds(
    BattleCard, st.sampled_from(["a", "b", "c", "d"]), st.integers(0, 8), st.integers(-2, 3)
)
choice_sets = st.sampled_from([(1,), (2,), (1, 2), (2, 3), (1, 3), (1, 2, 3)])
sides = st.builds(
    SideRules,
    choice_sets,
    st.integers(-2, 3),
    st.sampled_from([0, 0, 3]),
    st.sampled_from([0, 0, 2]),
    st.sampled_from([0, 0, 1]),
    st.booleans(),
)


@st.composite
def questions(draw: st.DrawFn) -> ForceQuestion:
    me, them = draw(sides), draw(sides)
    mine = tuple(draw(st.lists(cards, min_size=max(me.choices), max_size=3)))
    pool_cards = draw(st.lists(cards, min_size=max(them.choices), max_size=6))
    pool = tuple(Counter(pool_cards).items())
    return ForceQuestion(mine, pool, me, them)


def plain_total(cards: tuple[BattleCard, ...], n: int, side: SideRules, enemy_n: int) -> int:
    points = cards[0].power
    for c in cards[1:n]:
        points += c.extra
    points += side.points
    if n < enemy_n:
        points += side.fewer
    if n > enemy_n:
        points += side.more
    if n == enemy_n:
        points += side.same
    return points


def plain_wins(q: ForceQuestion, i: int, j: int, theirs: tuple[BattleCard, ...]) -> int:
    a = plain_total(q.mine, i, q.me, j)
    b = plain_total(theirs, j, q.them, i)
    if a != b:
        return 1 if a > b else -1
    return (1 if q.me.wins_ties else 0) - (1 if q.them.wins_ties else 0)


def brute_matrix(q: ForceQuestion) -> list[list[Fraction]]:
    deck = [c for c, n in q.pool for _ in range(n)]
    perms = list(itertools.permutations(deck))
    return [
        [
            Fraction(sum(plain_wins(q, i, j, p) == 1 for p in perms), len(perms))
            for j in q.them.choices
        ]
        for i in q.me.choices
    ]


@given(questions())
def test_payoffs_match_every_permutation(q: ForceQuestion) -> None:
    assert [list(r) for r in payoffs(q).win] == brute_matrix(q)


@given(questions())
def test_force_answer_against_the_brute_matrix(q: ForceQuestion) -> None:
    answer = solve_force(q)
    m = brute_matrix(q)
    lower, upper = grid_bounds(m)
    assert lower <= answer.value <= upper
    sol = MatrixSolution(
        answer.value, tuple(p for _, p in answer.strategy), tuple(p for _, p in answer.opponent)
    )
    assert certified(m, sol)


@given(questions())
def test_sure_win_against_every_permutation(q: ForceQuestion) -> None:
    deck = [c for c, n in q.pool for _ in range(n)]
    perms = list(itertools.permutations(deck))
    expected = tuple(
        i
        for i in q.me.choices
        if all(plain_wins(q, i, j, p) == 1 for j in q.them.choices for p in perms)
    )
    answer = sure_win(q)
    assert answer.wins == expected
    assert answer.verdict == ("valid" if expected else "invalid")
    assert {c.force for c in answer.counters} == set(q.me.choices) - set(expected)
    for c in answer.counters:
        # The counter-example is real cards of the pool, and it stops the choice.
        assert not Counter(c.their_cards) - Counter(deck)
        result = plain_wins(q, c.force, c.their_force, c.their_cards)
        assert result != 1
        assert c.result == ("loss" if result == -1 else "tie")
        # A loss is reported whenever some loss exists.
        if c.result == "tie":
            assert not any(
                plain_wins(q, c.force, j, p) == -1 for j in q.them.choices for p in perms
            )


# -- against the rules engine -------------------------------------------------------------


def force_moments(cards: str, games: int, seed: int) -> list[tuple[ForceDuelState, int]]:
    """States at the Force moment of random games, with the player to ask."""
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        s = new_game(cards)
        while not s.is_terminal():
            if s.phase == FORCE and s.actor == s.attacker:
                out.append((s.clone(), rng.randrange(2)))
            a = (
                sample_chance(s, rng)
                if s.current_player() == CHANCE
                else rng.choice(s.legal_actions())
            )
            s.apply_action(a)
    return out


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> str:
    return small_cards(tmp_path_factory.mktemp("cards"))


def test_engine_plays_out_the_solver_matrix(small: str) -> None:
    """For each Force moment: every ordered top of the opponent's remaining cards is
    put on his deck and the battle resolved by the rules engine; the win frequencies
    weighted by draw probability are the solver's matrix."""
    moments = force_moments(small, 6, 3)
    assert len(moments) > 10
    for state, player in moments:
        pos = position_of(state, player)
        battle = Battle(parse_position(json.loads(pos.model_dump_json())), state.book)
        q = battle.question()
        assert q == state.force_question(player)
        pay = payoffs(q)
        theirs = list(battle.theirs)
        depth = min(3, len(theirs))
        perms = list(itertools.permutations(range(len(theirs)), depth))
        for a, i in enumerate(q.me.choices):
            for b, j in enumerate(q.them.choices):
                wins = 0
                for perm in perms:
                    s = battle.state([theirs[x] for x in perm])
                    forces = {player: i, 1 - player: j}
                    for p in (s.attacker, 1 - s.attacker):
                        s.apply_action(FORCE_BASE + forces[p])
                    assert s.last is not None
                    wins += s.last.winner == player
                assert Fraction(wins, len(perms)) == pay.win[a][b]


def test_house_questions_and_counter_examples_replay() -> None:
    book = load_book("house")
    for state, player in force_moments("house", 3, 8)[:12]:
        q = state.force_question(player)
        answer = solve_force(q)
        assert certified(
            [list(r) for r in answer.payoffs.win],
            MatrixSolution(
                answer.value,
                tuple(p for _, p in answer.strategy),
                tuple(p for _, p in answer.opponent),
            ),
        )
        battle = Battle(position_of(state, player), book)
        for c in sure_win(q).counters:
            mine, theirs, winner = replay_counter(battle, c)
            assert (mine, theirs) == (c.my_total, c.their_total) and winner != player


def test_a_sure_win_is_found(tmp_path: Path) -> None:
    # With bow7+0 against a pool of off-weapon cards (power 1), Force 1 cannot lose.
    data = {
        "player": "p1",
        "weapons": {"p1": "bow", "p2": "bow"},
        "strategy": {"p1": "Two-Card Limit", "p2": "Shield Wall"},
        "mine": ["bow7+0", "sword2+3", "bow2+3"],
        "theirs": ["sword7+0", "spear7+0", "sword6+1", "spear6+1"],
    }
    battle = Battle(parse_position(data), load_book("house"))
    answer = sure_win(battle.question())
    # p2 totals at most 1 + 1 - 1 = 1 with two off-weapon cards (Two-Card Limit).
    assert answer.choice == 1 and answer.wins == (1, 2, 3)
