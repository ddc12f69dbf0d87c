"""Battle Line bots (issue 4): legal play for every kind of decision, whole seeded games,
reproducibility, the random bot's claims, user bots, the hidden-card samples, the engine
API the search plays its samples on (fast clone, fixed hidden cards), and the
tournament command.

No strength assertions here: the tournament measures strength.
"""

from __future__ import annotations

import json
import random
import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from battlejudge.cli.main import cli
from battlejudge.engines.battleline.actions import (
    CLAIM,
    DISCARD_PILE,
    PASS,
    REDEPLOY,
    TACTICS_DECK,
    TROOP_DECK,
    Action,
)
from battlejudge.engines.battleline.bots.evaluate import Position
from battlejudge.engines.battleline.bots.observation import UNKNOWN, observe
from battlejudge.engines.battleline.bots.search import SearchBot
from battlejudge.engines.battleline.cards import MUD
from battlejudge.engines.battleline.cards import REDEPLOY as REDEPLOY_CARD
from battlejudge.engines.battleline.cards import SCOUT as SCOUT_CARD
from battlejudge.engines.battleline.config import RulesConfig
from battlejudge.engines.battleline.game import GAME, make_bot
from battlejudge.engines.battleline.state import (
    FLAGS,
    MUD_DISCARD,
    NORTH,
    PHASE_NAMES,
    PLAY_PHASE,
    SOUTH,
    BattleLineState,
    Flag,
    Placed,
    new_game,
)
from battlejudge.engines.game import CHANCE, sample_chance
from battlejudge.engines.games import Options, Setup, load_bot_class
from battlejudge.engines.runner import BotError
from battlejudge.engines.runner import play_game as run_game
from battlejudge.engines.tournament import schedule, wilson
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import InputError, RuleError


def play_game(
    north: Any, south: Any, seed: int, options: Options | None = None, *, certify: bool = True
) -> tuple[BattleLineState, str]:
    """A whole game through the one runner: the final state and its record."""
    state, played = run_game(GAME, [north, south], seed, options, setup=Setup(certify=certify))
    assert isinstance(state, BattleLineState)
    return state, played.dumps()


OPTIONS: dict[str, dict[str, int]] = {
    "random": {},
    "heuristic": {},
    "search": {"iterations": 6},
    "expert": {"iterations": 6},
}


def _mud_discards() -> list[BattleLineState]:
    """North redeploys his Mud away from a flag where both sides hold four cards: he
    discards one, then south, who is not to move, discards one (docs/rulings.md 10, with
    environment_removable on)."""
    s = new_game(RulesConfig(environment_removable=True))
    rng = random.Random(8)
    while s.current_player() == CHANCE:
        s.apply_action_unchecked(sample_chance(s, rng))
    deck = s.unknown[TROOP_DECK]
    for side in s.flags[0].sides:
        side.extend(Placed(deck.pop(), 0) for _ in range(4))
    s.unknown[TACTICS_DECK].remove(MUD)
    s.flags[0].environment.append(Placed(MUD, 0, NORTH))
    s.unknown[TACTICS_DECK].remove(REDEPLOY_CARD)
    deck.append(s.hands[NORTH].pop())
    s.hands[NORTH].append(REDEPLOY_CARD)
    s.unknown[TACTICS_DECK].remove(SCOUT_CARD)
    s.discards[SOUTH].append(SCOUT_CARD)
    s.tactics_played[:] = [1, 1]
    s.phase = PLAY_PHASE
    s.settle()
    s.card_count()
    s.apply_action(Action(REDEPLOY, card=MUD, source=1, flag=DISCARD_PILE))
    assert s.phase == MUD_DISCARD and s.current_player() == NORTH == s.to_move
    own = s.clone()
    s.apply_action(s.legal_actions()[0])
    assert s.phase == MUD_DISCARD and s.current_player() == SOUTH == 1 - s.to_move
    return [own, s]


@pytest.fixture(scope="module")
def decisions() -> list[BattleLineState]:
    """States of every kind of decision, from seeded random games, and a Mud discard
    by the player who is not to move."""
    skip = ("deal", "draw-card", "over", "mud-discard")  # Mud discards: see _mud_discards
    wanted = {name for name in PHASE_NAMES if name not in skip}
    found: dict[str, list[BattleLineState]] = {}
    rng = random.Random(11)
    bot = make_bot("random", 1)
    for _ in range(100):
        s = BattleLineState(certify=False)
        while not s.is_terminal():
            if s.current_player() == CHANCE:
                s.apply_action_unchecked(sample_chance(s, rng))
                continue
            name = PHASE_NAMES[s.phase]
            if len(found.get(name, [])) < 3:
                found.setdefault(name, []).append(s.clone())
            s.apply_action_unchecked(bot.step(s))
        if wanted <= set(found) and all(len(v) == 3 for v in found.values()):
            break
    assert wanted <= set(found), sorted(wanted - set(found))
    return [s for states in found.values() for s in states] + _mud_discards()


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_every_kind_of_decision_gets_a_legal_action(
    name: str, decisions: list[BattleLineState]
) -> None:
    bot = make_bot(name, 3, **OPTIONS[name])
    for state in decisions:
        before = state.serialize()
        action = bot.step(state)
        assert action in state.legal_actions(), (PHASE_NAMES[state.phase], action)
        assert state.serialize() == before, "a bot changed the state it was given"


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_whole_games_are_legal_and_finish(name: str) -> None:
    # play_game raises BotError on any illegal action; other rule settings too.
    configs: list[Options | None] = [
        None,
        {"claim_timing": "advanced"},
        {"environment_removable": "false"},
        {"deck": "troops"},  # the bot protocol's game: no tactic card anywhere
    ]
    games = 4 if name in ("search", "expert") else 8
    for seed in range(games):
        bot = make_bot(name, seed, **OPTIONS[name])
        other = make_bot("random", 100 + seed)
        north, south = (bot, other) if seed % 2 == 0 else (other, bot)
        config = configs[seed % len(configs)]
        state, _ = play_game(north, south, seed, config, certify=False)
        assert state.is_terminal() and state.winner in (0, 1, 2)
        assert state.card_count() == (60 if config == {"deck": "troops"} else 70)


def test_bots_against_each_other_with_certified_claims() -> None:
    state, _ = play_game(make_bot("heuristic", 1), make_bot("search", 2, iterations=6), 5)
    assert state.is_terminal()
    assert all(c.proof.valid for c in state.claims)


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_games_replay_from_the_seed(name: str) -> None:
    def record() -> str:
        a = make_bot(name, 21, **OPTIONS[name])
        b = make_bot("heuristic", 22)
        return play_game(a, b, 9, certify=False)[1]

    assert record() == record()


def test_random_bot_claims_whenever_it_can() -> None:
    bot = make_bot("random", 4)
    rng = random.Random(2)
    claims = 0
    for _ in range(3):
        s = new_game()
        s.certify = False
        while not s.is_terminal():
            if s.current_player() == CHANCE:
                s.apply_action_unchecked(sample_chance(s, rng))
                continue
            action = bot.step(s)
            if any(a.kind == CLAIM for a in s.legal_actions()):
                assert action.kind == CLAIM
                claims += 1
            s.apply_action(action)
    assert claims > 0


def test_an_illegal_bot_is_caught() -> None:
    class Cheat:
        name = "cheat"

        def step(self, state: BattleLineState) -> Action:
            return Action(PASS)  # never legal while a troop can be played

    with pytest.raises(BotError, match="cheat"):
        play_game(Cheat(), make_bot("random", 0), 1, certify=False)


def test_a_user_bot_loads_from_module_and_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_bots.py").write_text(
        textwrap.dedent(
            """
            import random

            class FirstLegal:
                name = "first-legal"

                def __init__(self, seed=0):
                    self.rng = random.Random(seed)

                def step(self, state):
                    return state.legal_actions()[0]
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    bot = make_bot("my_bots:FirstLegal", 7)
    assert bot.name == "first-legal"
    state, _ = play_game(bot, make_bot("heuristic", 1), 3, certify=False)
    assert state.is_terminal()
    for spec in ("my_bots", "my_bots:Missing", "no_such_module:Bot", "random:Random"):
        with pytest.raises(InputError):
            load_bot_class(spec)
    with pytest.raises(InputError, match=r"unknown .*bot 'grandmaster'"):
        make_bot("grandmaster", 1)


def test_bot_seeds_and_budgets_are_checked(decisions: list[BattleLineState]) -> None:
    with pytest.raises(InputError):
        SearchBot(1, rng=random.Random(1))
    with pytest.raises(InputError):
        SearchBot(1, budget_s=0)
    with pytest.raises(InputError):
        SearchBot(1, iterations=0)
    bot = SearchBot(1, iterations=16, candidates=5)
    play = next(
        s for s in decisions if PHASE_NAMES[s.phase] == "play" and len(s.legal_actions()) > 1
    )
    bot.step(play)
    # Whole deals: every candidate still in the running is evaluated on each deal.
    assert 16 <= bot.last.iterations < 16 + 5


def test_determinizations_keep_what_the_player_knows(decisions: list[BattleLineState]) -> None:
    rng = random.Random(5)
    for state in decisions:
        player = state.current_player()
        obs = observe(state, player)
        opp = 1 - player
        hidden = state.hands[opp] + state.unknown[0] + state.unknown[1]
        hidden += [c for d in state.known_top for c, who in d if who != player]
        troops_held = sum(1 for c in state.hands[opp] if c < 60)
        assert obs.opp_hand_counts() == (troops_held, len(state.hands[opp]) - troops_held)
        for _ in range(3):
            det = obs.determinize(rng)
            assert len(det.opp_hand) == len(state.hands[opp])
            assert sum(1 for c in det.opp_hand if c < 60) == troops_held
            dealt = det.opp_hand + [c for deck in det.decks for c in deck]
            mine = [c for d in obs.known_top for c in d if c != UNKNOWN]
            assert sorted(c for c in dealt if c not in mine) == sorted(hidden)
            assert not set(dealt) & set(state.hands[player])
            for d in (0, 1):
                assert len(det.decks[d]) == state.deck_size(d)
                tops = det.decks[d][len(det.decks[d]) - len(state.known_top[d]) :]
                for (card, who), got in zip(state.known_top[d], tops, strict=True):
                    if who == player:
                        assert got == card  # a card this player put back stays known


def test_wilson_interval_and_schedule() -> None:
    lo, hi = wilson(5, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.2366, 0.7634)
    assert wilson(0, 0) == (0.0, 1.0)
    games = schedule(["a", "b", "c"], 3, 1)
    assert len(games) == 9
    ab = [g for g in games if g.pair == 0]
    assert [g.north for g in ab] == ["a", "b", "a"]
    assert ab[0].seed == ab[1].seed != ab[2].seed  # seats swapped on the same deal
    assert schedule(["a", "b", "c"], 3, 1) == games


def _check_pairs(out: dict[str, object], games: int, n_pairs: int) -> None:
    assert set(out) == {"pairs"}
    pairs = out["pairs"]
    assert isinstance(pairs, list) and len(pairs) == n_pairs
    for p in pairs:
        assert set(p) == {"a", "b", "games", "a_wins", "b_wins", "a_win_rate", "ci95"}
        assert p["games"] == games
        draws = p["games"] - p["a_wins"] - p["b_wins"]
        assert draws >= 0 and p["a_wins"] + p["b_wins"] + draws == games
        assert p["a_win_rate"] == pytest.approx((p["a_wins"] + draws / 2) / games, abs=1e-4)
        lo, hi = p["ci95"]
        assert 0 <= lo <= p["a_win_rate"] <= hi <= 1


def test_tournament_command_json() -> None:
    args = ["tournament", "--bots", "random,heuristic", "--games", "2", "--seed", "3", "--json"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    _check_pairs(json.loads(r.stdout), 2, 1)


def test_tournament_with_search_replays_exactly() -> None:
    args = ["tournament", "--bots", "random,heuristic,search", "--games", "2", "--seed", "4"]
    args += ["--iterations", "6", "--json"]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    _check_pairs(json.loads(first.stdout), 2, 3)
    again = CliRunner().invoke(cli, args)
    assert again.stdout == first.stdout
    text = CliRunner().invoke(cli, args[:-1])
    assert text.exit_code == 0 and "Wilson" in text.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["--bots", "random,grandmaster"],
        ["--bots", "random"],
        ["--games", "0"],
        ["--budget", "0"],
        ["--iterations", "0"],
        ["--bots", "random,no_such_module:Bot"],
    ],
)
def test_tournament_bad_input_exits_2(args: list[str]) -> None:
    r = CliRunner().invoke(cli, ["tournament", *args])
    assert r.exit_code == 2, (args, r.output)
    assert len(r.stderr.strip().splitlines()) == 1 and "error" in r.stderr


# -- the engine API the search plays on -------------------------------------------------------
def test_clone_copies_every_container(decisions: list[BattleLineState]) -> None:
    # A clone shares nothing mutable with its original: a new container attribute that
    # clone() forgot would fail here.
    for state in decisions:
        twin = state.clone()
        assert twin.serialize() == state.serialize()
        for name, value in vars(state).items():
            other = getattr(twin, name)
            parts = value if isinstance(value, tuple) else (value,)
            twins = other if isinstance(other, tuple) else (other,)
            for mine, theirs in zip(parts, twins, strict=True):
                if isinstance(mine, (list, dict, set, Flag)):
                    assert mine is not theirs, name
        for f, g in zip(state.flags, twin.flags, strict=True):
            assert f.sides[0] is not g.sides[0] and f.sides[1] is not g.sides[1]
            assert f.environment is not g.environment
        # Playing on the clone leaves the original as it was.
        before = state.serialize()
        rng = random.Random(1)
        while not twin.is_terminal():
            twin.apply_action(rng.choice(twin.legal_actions()))
        assert state.serialize() == before


def _hidden(state: BattleLineState, player: int) -> list[int]:
    opp = 1 - player
    out = list(state.hands[opp]) + state.unknown[0] + state.unknown[1]
    return out + [c for deck in state.known_top for c, _ in deck]


def test_fix_hidden_sets_hands_and_the_deck_order(decisions: list[BattleLineState]) -> None:
    rng = random.Random(4)
    for state in decisions:
        if state.current_player() == CHANCE or state.is_terminal():
            continue
        me = state.current_player()
        obs = observe(state, me)
        det = obs.determinize(rng)
        s = state.clone()
        s.fix_hidden({1 - me: det.opp_hand}, det.decks)
        assert s.card_count() == 70
        assert s.hands[1 - me] == det.opp_hand and s.hands[me] == state.hands[me]
        # The player's view is the same: only what he cannot see was dealt afresh.
        assert s.information_state_string(me) == state.information_state_string(me)
        assert s.decks_ordered and BattleLineState.deserialize(s.serialize()).serialize() == (
            s.serialize()
        )
        # Cards that are not the hidden ones are refused, and nothing changes.
        wrong = [
            ({1 - me: [*det.opp_hand[1:], state.hands[me][0]]}, det.decks),
            ({1 - me: det.opp_hand}, (det.decks[0][1:], det.decks[1])),
            ({1 - me: [*det.opp_hand, det.decks[0][0]]}, det.decks),
        ]
        for hands, decks in wrong:
            t = state.clone()
            with pytest.raises(RuleError, match="fix_hidden"):
                t.fix_hidden(hands, decks)
            assert t.serialize() == state.serialize()


def test_a_drawn_card_follows_the_fixed_order() -> None:
    rng = random.Random(3)
    s = new_game()
    while s.current_player() == CHANCE:
        s.apply_action(sample_chance(s, rng))
    order = (list(reversed(sorted(s.unknown[0]))), list(s.unknown[1]))
    s.fix_hidden({}, order)
    bot = make_bot("heuristic", 1)
    drawn: list[int] = []
    while not s.is_terminal() and sum(1 for c in drawn if c < 60) < 4:
        if s.current_player() == CHANCE:
            (action, p), *rest = s.chance_outcomes()
            assert not rest and p == 1
            drawn.append(action.card)
            s.apply_action(action)
        else:
            s.apply_action(bot.step(s))
    troops = [c for c in drawn if c < 60]
    tactics = [c for c in drawn if c >= 60]
    assert troops == sorted(order[0])[:4]  # the top of the troop deck: the lowest
    assert tactics == order[1][::-1][: len(tactics)]


def test_positions_read_from_the_state_equal_the_observed_ones(
    decisions: list[BattleLineState],
) -> None:
    for state in decisions:
        for player in (NORTH, SOUTH):
            direct = Position.from_state(state, player)
            observed = Position.from_observation(observe(state, player))
            assert direct.flags == observed.flags
            assert sorted(direct.unseen) == sorted(observed.unseen)
            assert set(direct.face_up) == set(observed.face_up)
            assert (sorted(direct.hand), direct.troop_deck, direct.opp_troops) == (
                sorted(observed.hand),
                observed.troop_deck,
                observed.opp_troops,
            )


def test_the_search_reads_only_its_own_view(decisions: list[BattleLineState]) -> None:
    # Moving hidden cards between the opponent's hand and the deck does not change what
    # the bot to move knows, so it does not change its move either.
    plays = [s for s in decisions if PHASE_NAMES[s.phase] == "play" and len(s.legal_actions()) > 2]
    assert plays
    for state in plays[:4]:
        me = state.current_player()
        twin = state.clone()
        opp_hand, deck = twin.hands[1 - me], twin.unknown[TROOP_DECK]
        troops = [i for i, c in enumerate(opp_hand) if c < 60]
        if not troops or not deck:
            continue
        i = troops[0]
        opp_hand[i], deck[0] = deck[0], opp_hand[i]
        assert twin.information_state_string(me) == state.information_state_string(me)
        moves = [SearchBot(5, iterations=24).step(s) for s in (state, twin)]
        assert moves[0] == moves[1]


def test_claims_are_legal_exactly_when_the_solver_proves_them() -> None:
    # The engine decides claims with the solver's fast exact decider; the certificate
    # path (SAT) must give the same verdict on every complete side of random games.
    rng = random.Random(12)
    checked = 0
    for _ in range(6):
        s = BattleLineState(certify=False)
        bot = make_bot("random", rng.randrange(100))
        while not s.is_terminal():
            if s.current_player() == CHANCE:
                s.apply_action_unchecked(sample_chance(s, rng))
                continue
            for flag in range(FLAGS):
                f = s.flags[flag]
                for player in (NORTH, SOUTH):
                    if f.claimed_by < 0 and len(f.sides[player]) == f.size:
                        expected = bl.decide(s.claim_question(flag + 1, player)).valid
                        assert s.claimable(flag + 1, player) == expected, (flag, player)
                        checked += 1
            s.apply_action_unchecked(bot.step(s))
    assert checked > 200
