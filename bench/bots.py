"""What a bot's moves cost: seconds and memory per decision, and the search's iterations
(for ``battlejudge bench bots``).

:func:`play_games` plays whole games between two bots, seats swapped (shared with
:mod:`.calibration`'s ``collect``). :func:`measure_moves` times, in such games, every
decision that was a real choice for a searching bot (:attr:`SearchBot.last` changed), then
replays a sample of those decisions under ``tracemalloc`` with the same number of
iterations to find the peak memory a decision allocates (tracemalloc slows Python down, so
the timing is taken without it).
"""

from __future__ import annotations

import random
import statistics
import time
import tracemalloc
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from battlejudge.engines.battleline.actions import Action
from battlejudge.engines.battleline.bots.base import BotLike
from battlejudge.engines.battleline.bots.search import SearchBot
from battlejudge.engines.battleline.state import BattleLineState
from battlejudge.engines.game import CHANCE, sample_chance
from battlejudge.engines.games import GameInfo, Setup


@dataclass
class MoveCosts:
    """One bot's searched decisions: seconds, iterations and sampled peak bytes each."""

    name: str
    seconds: list[float] = field(default_factory=list)
    iterations: list[int] = field(default_factory=list)
    peak_bytes: list[int] = field(default_factory=list)

    def summary(self) -> dict[str, float]:
        """Median and 95th percentile of the seconds, median iterations, largest peak (MiB)."""
        if not self.seconds:
            return {"decisions": 0}
        secs = sorted(self.seconds)
        return {
            "decisions": len(secs),
            "median_s": statistics.median(secs),
            "p95_s": secs[min(len(secs) - 1, int(0.95 * len(secs)))],
            "max_s": secs[-1],
            "median_iterations": statistics.median(self.iterations),
            "peak_mib": max(self.peak_bytes, default=0) / 2**20,
        }


Step = Callable[[int, BotLike, BattleLineState], Action]
"""How a decision is made in :func:`play_games`: given which bot of ``make(i)``'s pair is to
move (0 the first, 1 the second), that bot and the state, the action (by default the bot's
own ``step``)."""


def play_games(
    game: GameInfo,
    make: Callable[[int], tuple[BotLike, BotLike]],
    games: int,
    seed: int,
    options: Mapping[str, str] | None = None,
    step: Step | None = None,
) -> Iterator[tuple[int, tuple[BotLike, BotLike], BattleLineState]]:
    """Play ``games`` games: game i between ``make(i)``'s bots (seats swapped every other
    game), chance seeded ``seed + i``, every decision made by ``step``; yield each game's
    number, bots and final state as it ends."""
    decide: Step = step or (lambda _k, bot, state: bot.step(state))
    for i in range(games):
        bots = make(i)
        seats = (0, 1) if i % 2 == 0 else (1, 0)  # the bot (index into bots) in each seat
        state = game.start(dict(options or {}), Setup(certify=False))
        assert isinstance(state, BattleLineState)
        chance = random.Random(seed + i)
        while not state.is_terminal():
            p = state.current_player()
            if p == CHANCE:
                state.apply_action(sample_chance(state, chance))
                continue
            state.apply_action(decide(seats[p], bots[seats[p]], state))
        yield i, bots, state


def measure_moves(
    game: GameInfo,
    make: Callable[[int], tuple[BotLike, BotLike]],
    games: int,
    seed: int,
    options: Mapping[str, str] | None = None,
    memory_samples: int = 6,
) -> tuple[MoveCosts, MoveCosts]:
    """Play ``games`` games (seats swapped every other game; ``make(i)`` builds game i's two
    bots, first the one measured as ``a``) and return each bot's costs. The memory of
    ``memory_samples`` decisions per bot is measured again with ``iterations`` fixed."""
    costs = (MoveCosts("a"), MoveCosts("b"))
    replays: tuple[list[tuple[BattleLineState, int]], list[tuple[BattleLineState, int]]] = (
        [],
        [],
    )

    def timed(k: int, bot: BotLike, state: BattleLineState) -> Action:
        before = getattr(bot, "last", None)
        t0 = time.perf_counter()
        action = bot.step(state)
        elapsed = time.perf_counter() - t0
        last = getattr(bot, "last", None)
        if isinstance(bot, SearchBot) and last is not before and last is not None:
            costs[k].seconds.append(elapsed)
            costs[k].iterations.append(last.iterations)
            replays[k].append((state.clone(), last.iterations))
        return action

    for _, bots, _ in play_games(game, make, games, seed, options, timed):
        costs[0].name, costs[1].name = bots[0].name, bots[1].name
    for k in (0, 1):
        sample = replays[k][:: max(1, len(replays[k]) // max(1, memory_samples))][:memory_samples]
        for state, iterations in sample:
            bot = make(0)[k]
            assert isinstance(bot, SearchBot)
            bot.iterations = max(1, iterations)
            tracemalloc.start()
            try:
                bot.step(state)
                costs[k].peak_bytes.append(tracemalloc.get_traced_memory()[1])
            finally:
                tracemalloc.stop()
    return costs


def run_bots(
    name: str, baseline: str, budget: float, games: int, deck: str, seed: int
) -> tuple[dict[str, float], dict[str, float]]:
    """``battlejudge bench bots``: Battle Line bot ``name`` against ``baseline`` for
    ``games`` games at ``budget`` seconds a move on the ``deck`` (``full`` or ``troops``);
    each bot's :meth:`MoveCosts.summary`."""
    from battlejudge.engines.battleline.game import GAME

    def make(i: int) -> tuple[BotLike, BotLike]:
        return (
            GAME.make_bot(name, seed + 2 * i, budget_s=budget),
            GAME.make_bot(baseline, seed + 2 * i + 1, budget_s=budget),
        )

    a, b = measure_moves(GAME, make, games, seed, {"deck": deck})
    return a.summary(), b.summary()


def bots_figures(
    name: str,
    baseline: str,
    budget: float,
    games: int,
    deck: str,
    sa: dict[str, float],
    sb: dict[str, float],
) -> dict[str, Any]:
    """The figures as ``bench bots --json`` prints them: each bot's summary under its name
    and the ratios of ``name``'s median seconds and peak memory to ``baseline``'s."""
    both = bool(sa.get("decisions")) and bool(sb.get("decisions"))
    return {
        "budget_s": budget,
        "deck": deck,
        "games": games,
        name: sa,
        baseline: sb,
        # No ratio against a baseline that never searched (the heuristic): nothing to compare.
        "ratio_median_s": sa["median_s"] / sb["median_s"] if both else None,
        "ratio_peak_mib": sa["peak_mib"] / sb["peak_mib"] if both and sb["peak_mib"] else None,
    }
