"""The self-play harness behind ``battlejudge bench bots`` and ``bench leaf``
(bench/bots.py): whole games, seats swapped, each searched decision's
time, iterations and memory."""

from __future__ import annotations

import json

from click.testing import CliRunner

from battlejudge.bench.bots import measure_moves, play_games
from battlejudge.cli.main import cli
from battlejudge.engines.battleline.actions import Action
from battlejudge.engines.battleline.bots.base import BotLike
from battlejudge.engines.battleline.game import GAME
from battlejudge.engines.battleline.state import BattleLineState


def test_play_games_swaps_seats_and_plays_to_the_end() -> None:
    seats: dict[tuple[int, str], set[int]] = {}
    current: list[int] = []

    def make(i: int) -> tuple[BotLike, BotLike]:
        current[:] = [i]
        return GAME.make_bot("random", 10 + i), GAME.make_bot("heuristic", 20 + i)

    def step(k: int, bot: BotLike, state: BattleLineState) -> Action:
        assert bot.name == ("random", "heuristic")[k]  # k: the bot's place in make's pair
        seats.setdefault((current[0], bot.name), set()).add(state.current_player())
        return bot.step(state)

    ended = list(play_games(GAME, make, 2, 5, {"deck": "troops"}, step))
    assert [i for i, _, _ in ended] == [0, 1]
    assert all(state.is_terminal() for _, _, state in ended)
    # The first bot sits at seat 0 in even games and at seat 1 in odd ones.
    assert seats[(0, "random")] == {0} and seats[(0, "heuristic")] == {1}
    assert seats[(1, "random")] == {1} and seats[(1, "heuristic")] == {0}


def test_measure_moves_counts_only_searched_decisions() -> None:
    def make(i: int) -> tuple[BotLike, BotLike]:
        return GAME.make_bot("search", i, iterations=3), GAME.make_bot("heuristic", 100 + i)

    a, b = measure_moves(GAME, make, 1, 3, {"deck": "troops"}, memory_samples=2)
    assert (a.name, b.name) == ("search", "heuristic")
    assert a.seconds and len(a.seconds) == len(a.iterations)
    assert min(a.iterations) >= 3  # a deal plays every live candidate
    assert len(a.peak_bytes) == 2 and min(a.peak_bytes) > 0
    assert b.seconds == [] and b.summary() == {"decisions": 0}


def test_bench_bots_has_no_ratio_against_a_bot_that_does_not_search() -> None:
    """A baseline without searched decisions (the heuristic) has no time to compare with:
    the ratio is left out, not divided by zero (it printed 25,638,556x)."""
    r = CliRunner().invoke(
        cli,
        ["bench", "bots", "--games", "1", "--budget", "0.01", "--baseline", "heuristic", "--json"],
    )
    assert r.exit_code == 0, r.output
    figures = json.loads(r.output)
    assert figures["expert"]["decisions"] > 0
    assert figures["ratio_median_s"] is None and figures["ratio_peak_mib"] is None
    text = CliRunner().invoke(
        cli, ["bench", "bots", "--games", "1", "--budget", "0.01", "--baseline", "heuristic"]
    )
    assert text.exit_code == 0 and "no ratio" in text.output, text.output


def test_bench_bots_names_an_unknown_bot() -> None:
    r = CliRunner().invoke(cli, ["bench", "bots", "--bot", "nobody", "--games", "1"])
    assert r.exit_code == 2
    assert "'nobody'" in r.output and "Traceback" not in r.output
