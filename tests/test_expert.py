"""The expert bot's parts (issue 18): its match-aware value against a brute-force oracle,
the deal's probabilities, the inference on the opponent's hand, and whole games in the
full and the troops-only game. Legality on every kind of decision and replay from the
seed are in tests/test_bots.py (the expert is one of the registered bots there)."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from battlejudge.engines.battleline.bots import expert, heuristic
from battlejudge.engines.battleline.bots.observation import Observation, observe
from battlejudge.engines.battleline.cards import parse_card
from battlejudge.engines.battleline.game import GAME, make_bot
from battlejudge.engines.battleline.state import BattleLineState
from battlejudge.engines.game import sample_chance
from battlejudge.engines.runner import Setup, play_game


def brute_win_probability(p: list[float]) -> float:
    """The oracle: every way the nine flags can fall, its chance, and the winner by the
    rules' text (three adjacent flags, or five), written out here on its own."""

    def wins(held: tuple[bool, ...]) -> bool:
        adjacent = any(held[i] and held[i + 1] and held[i + 2] for i in range(7))
        return adjacent or sum(held) >= 5

    total = 0.0
    for held in itertools.product((False, True), repeat=9):
        chance = 1.0
        for h, pi in zip(held, p, strict=True):
            chance *= pi if h else 1.0 - pi
        mine, theirs = wins(held), wins(tuple(not h for h in held))
        total += chance * (0.5 if mine == theirs else 1.0 if mine else 0.0)
    return total


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=9, max_size=9))
def test_win_probability_matches_brute_force(p: list[float]) -> None:
    assert expert.win_probability(p) == pytest.approx(brute_win_probability(p), abs=1e-9)


def test_win_probability_is_symmetric_and_decisive() -> None:
    # Flags 1-3 won and the rest lost: a Breakthrough for me and five flags for him.
    assert expert.win_probability([1, 1, 1, 0, 0, 0, 0, 0, 0]) == 0.5
    assert expert.win_probability([1, 0, 1, 0, 1, 0, 1, 0, 1]) == 1.0
    assert expert.win_probability([0.5] * 9) == pytest.approx(0.5)
    p = [0.9, 0.2, 0.7, 0.4, 0.5, 0.6, 0.1, 0.8, 0.3]
    assert expert.win_probability(p) + expert.win_probability([1 - x for x in p]) == (
        pytest.approx(1.0)
    )


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=9, max_size=9))
def test_calibration_draws_open_flags_towards_even(p: list[float]) -> None:
    q = expert.calibrated(p)
    for x, y in zip(p, q, strict=True):
        if x in (0.0, 1.0):
            assert y == x  # a decided flag stays decided
        else:
            assert abs(y - 0.5) <= abs(x - 0.5) + 1e-12  # towards even, never past it
            assert (y - 0.5) * (x - 0.5) >= 0
    assert expert.calibrated(p, tau=1.0) == pytest.approx(p)
    # Order between flags is kept, and the two players' views stay mirror images.
    for a, b in itertools.combinations(range(9), 2):
        if p[a] < p[b]:
            assert q[a] <= q[b]
    for x in p:
        m = 1.0 - x  # the mirror of x, rounded: compare it with the mirror of m exactly
        if 0.0 < m < 1.0:
            mirrored = expert.calibrated([m, 1.0 - m])
            assert 1.0 - mirrored[0] == pytest.approx(mirrored[1], rel=1e-9, abs=1e-12)
    assert 0.0 <= expert.match_value(p) <= 1.0


def test_calibration_values_a_contested_flag_more_than_a_near_certain_one() -> None:
    # Four flags won, four lost, the ninth decides: how sure the evaluator is of a second
    # open flag matters less once its chance is drawn in, and a flag at 0.9 stays ahead.
    base = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.9]
    assert expert.match_value(base) > 0.5
    assert expert.match_value(base) < expert.win_probability(base)


def _dealt(seed: int) -> BattleLineState:
    state = GAME.start({}, Setup(certify=False))
    assert isinstance(state, BattleLineState)
    rng = random.Random(seed)
    while state.current_player() == -1:
        state.apply_action(sample_chance(state, rng))
    return state


def test_deal_probabilities_give_hands_and_the_next_draws() -> None:
    state = _dealt(4)
    me = state.current_player()
    order = [*state.unknown[0], *(c for c, _ in state.known_top[0])]
    p_me, p_opp = expert.deal_probabilities(state, me, hand_p=0.4, draw_p=0.8, draws=0.5)
    for c in state.hands[me]:
        assert p_me[c] == 0.4 and p_opp[c] == 0.0
    for c in state.hands[1 - me]:
        assert p_opp[c] == 0.4 and p_me[c] == 0.0
    # 27 open places each at the start: 13 draws each, alternating from the top, me first.
    assert [c for c in order[::-1][:26:2]] == [c for c in order if p_me[c] == 0.8][::-1]
    assert [c for c in order[::-1][1:26:2]] == [c for c in order if p_opp[c] == 0.8][::-1]
    assert sum(1 for c in order if p_me[c] == 0.0 and p_opp[c] == 0.0) == len(order) - 26


def _view(opp_sides: dict[int, list[tuple[str, int]]], unseen: list[str]) -> Observation:
    """North's view of a table where south holds ``opp_sides`` (flag -> (card, turn))."""
    sides: list[tuple[list[tuple[int, int]], list[tuple[int, int]]]] = [([], []) for _ in range(9)]
    for f, cards in opp_sides.items():
        sides[f] = ([], [(parse_card(c), t) for c, t in cards])
    return Observation(
        player=0,
        phase="play",
        to_move=0,
        turn=6,
        hand=[],
        opp_hand_size=7,
        sides=sides,
        environment=[[] for _ in range(9)],
        claimed_by=[-1] * 9,
        discards=([], []),
        deck_sizes=(30, 10),
        known_top=([], []),
        tactics_played=(0, 0),
        leader_played=(False, False),
        mud_queue=[],
        scout=(0, 0),
        unseen=([parse_card(c) for c in unseen], []),
    )


def test_inference_reads_flags_he_left_one_short() -> None:
    # South built Blue 5-6 at flag 1 by turn 2, a pair of 2s at flag 6 by turn 4, and
    # played elsewhere at turn 5: Blue 4 or 7 (a Wedge) and the other 2s (a Phalanx)
    # would have completed them; Blue 8 (a Battalion) is weaker than a Phalanx.
    view = _view(
        {0: [("B5", 1), ("B6", 2)], 3: [("R9", 5)], 5: [("G2", 3), ("Y2", 4)]},
        ["B4", "B7", "B8", "R2", "P2", "O9"],
    )
    got = expert.strong_completions(view)
    assert [sorted(g) for g in got] == [
        sorted(parse_card(c) for c in ("B4", "B7")),
        sorted(parse_card(c) for c in ("R2", "P2")),
    ]
    # A flag he played to last tells nothing: it is his latest play.
    assert expert.strong_completions(_view({0: [("B5", 1), ("B6", 5)]}, ["B4", "B7"])) == []
    hand_with = [parse_card(c) for c in ("B7", "O9", "R2")]
    hand_without = [parse_card(c) for c in ("B8", "O9")]
    assert expert.likelihood(hand_without, got) == 1.0
    one = 1.0 - expert.PLAY_RATE * (1.0 - 1.0 / 3)
    assert expert.likelihood(hand_with, got) == pytest.approx(one * one)


def test_inferred_deals_are_valid_and_lean_away_from_completions() -> None:
    # The first play decision, in a heuristic game, where the inference has a flag to read.
    state = _dealt(9)
    rng = random.Random(9)
    heuristic = make_bot("heuristic", 1)
    while True:
        assert not state.is_terminal(), "no position for the inference in this game"
        me = state.current_player()
        if me == -1:
            state.apply_action(sample_chance(state, rng))
            continue
        obs = observe(state, me)
        completions = expert.strong_completions(obs)
        if obs.phase == "play" and completions:
            break
        state.apply_action(heuristic.step(state))
    bot = expert.ExpertBot(seed=3, iterations=8)
    uniform = random.Random(3)
    kept = drawn = 0.0
    for _ in range(200):
        det = bot.sample(obs)
        deal = state.clone()
        deal.fix_hidden({1 - me: det.opp_hand}, det.decks)  # raises on an inconsistent deal
        kept += expert.likelihood(det.opp_hand, completions)
        drawn += expert.likelihood(obs.determinize(uniform).opp_hand, completions)
    assert kept > drawn  # the kept deals are likelier than uniform ones


@pytest.mark.parametrize("options", [None, {"deck": "troops"}])
def test_expert_plays_whole_games_and_replays(options: dict[str, str] | None) -> None:
    def game() -> str:
        bots = [make_bot("expert", 5, iterations=6), make_bot("heuristic", 6)]
        _, played = play_game(GAME, bots, 11, options, setup=Setup(certify=False))
        return played.dumps()

    first = game()
    assert first == game()
    assert "expert" in first


def test_endgame_search_takes_the_known_deal() -> None:
    # A troops-only game played by the heuristic until both decks are empty: nothing is
    # hidden any more, and the expert searches the one deal there is.
    for seed in range(40):
        state = GAME.start({"deck": "troops"}, Setup(certify=False))
        assert isinstance(state, BattleLineState)
        rng = random.Random(seed)
        heuristic = make_bot("heuristic", seed)
        while not state.is_terminal():
            me = state.current_player()
            if me == -1:
                state.apply_action(sample_chance(state, rng))
                continue
            obs = observe(state, me)
            if obs.phase == "play" and expert.known_hands(obs) and len(state.legal_actions()) > 2:
                bot = expert.ExpertBot(seed=1, iterations=1000)
                action = bot.step(state)
                assert action in state.legal_actions()
                assert bot.last.deals == 1 and bot.last.means
                assert str(action) in bot.last.means
                assert bot.last.means[str(action)] == max(bot.last.means.values())
                return
            state.apply_action(heuristic.step(state))
    pytest.fail("no heuristic game emptied both decks")


# a flag decided (0 or 1) or open: an open chance is kept where 1 - c is still open in floats
_chance = st.one_of(st.sampled_from([0.0, 1.0]), st.floats(min_value=1e-9, max_value=1 - 1e-9))
_share = st.floats(min_value=-1.0, max_value=1.0)


@given(
    st.lists(st.tuples(_chance, _share, st.sampled_from([-1.0, 0.0, 1.0])), min_size=9, max_size=9),
    st.floats(min_value=0.0, max_value=1.0),
    st.floats(min_value=-2.0, max_value=2.0),
)
def test_learned_value_is_one_less_the_opponents(
    flags: list[tuple[float, float, float]], stage: float, tempo: float
) -> None:
    # The same deal from the other side: every flag's chance 1 - c, the cards placed and the
    # complete sides and the tempo negated. The game's chance must be 1 less his.
    mine = expert.LeafFeatures(
        tuple(c for c, _, _ in flags),
        tuple(d for _, d, _ in flags),
        tuple(k for _, _, k in flags),
        stage,
        tempo,
    )
    theirs = expert.LeafFeatures(
        tuple(1.0 - c for c, _, _ in flags),
        tuple(-d for _, d, _ in flags),
        tuple(-k for _, _, k in flags),
        stage,
        -tempo,
    )
    v = expert.learned_value(mine)
    assert 0.0 < v < 1.0
    assert v + expert.learned_value(theirs) == pytest.approx(1.0, abs=1e-6)


def test_learned_value_counts_decided_flags_and_rises_with_a_flags_chance() -> None:
    even = expert.LeafFeatures((0.5,) * 9, (0.0,) * 9, (0.0,) * 9, 0.3, 0.0)
    assert expert.learned_value(even) == pytest.approx(0.5)
    won = expert.LeafFeatures((1.0, 0.0) * 4 + (1.0,), (0.0,) * 9, (0.0,) * 9, 0.3, 0.0)
    assert expert.learned_value(won) > 0.99  # five flags won, four lost: the game is won
    better = expert.LeafFeatures((0.8,) + (0.5,) * 8, (0.0,) * 9, (0.0,) * 9, 0.3, 0.0)
    assert expert.learned_value(better) > expert.learned_value(even)


@pytest.mark.parametrize("options", [None, {"deck": "troops"}])
def test_the_learned_leaf_judges_troops_only_games_only(options: dict[str, str] | None) -> None:
    # After a search, a troops-only game's leaves are the learned leaf's; the full game keeps
    # the calibrated match value (its measured strength is that leaf's).
    state = GAME.start(options, Setup(certify=False))
    assert isinstance(state, BattleLineState)
    rng = random.Random(3)
    while state.current_player() == -1:
        state.apply_action(sample_chance(state, rng))
    bot = expert.ExpertBot(seed=1, iterations=4)
    bot.step(state)
    me = state.current_player()
    learned = expert.learned_value(expert.leaf_features(state, me))
    calibrated = expert.match_value(expert.deal_chances(state, me))
    assert bot.troops_only == (options is not None)
    got = bot.leaf_value(state, me)
    if options:
        assert got == learned
    else:
        held = heuristic.tactics_held_value(state.hands[me], state.leader_played[me])
        assert got == calibrated + expert.COST_SCALE * held and got != learned
