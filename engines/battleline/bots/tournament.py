"""Round-robin tournaments between bots, with Wilson score intervals.

Every pair of bots plays ``games`` games. Games go in pairs on the same deal seed with
the seats swapped (game 2k: the pair's first bot is north and moves first; game 2k+1:
the second bot is), so each bot moves first in half the games (the extra one of an odd
count goes to the first bot) and both face the same deals. Everything (the deal and
draw seeds, each bot's seed) derives from the tournament seed, so a tournament replays
exactly, provided the bots are reproducible (the search bot is, with ``iterations``).

A draw (the idle house rule with equal flags) counts half a win for each side in the win
rate and its interval; the counts of wins are reported as they are.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from battlejudge.engines.battleline.bots.base import BotLike, make_bot
from battlejudge.engines.battleline.bots.runner import play_game
from battlejudge.engines.battleline.config import RulesConfig
from battlejudge.engines.battleline.state import DRAW_GAME, NORTH, SOUTH
from battlejudge.solver.errors import InputError

Z95 = 1.959963984540054


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a proportion (``successes`` may be fractional:
    draws count half). (0, 1) when ``n`` is 0."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class PairResult:
    """The games between bots ``a`` and ``b``."""

    a: str
    b: str
    games: int
    a_wins: int
    b_wins: int

    @property
    def draws(self) -> int:
        return self.games - self.a_wins - self.b_wins

    @property
    def a_win_rate(self) -> float:
        """A's score per game, a draw counting half."""
        return (self.a_wins + self.draws / 2) / self.games if self.games else 0.0

    @property
    def ci95(self) -> tuple[float, float]:
        return wilson(self.a_wins + self.draws / 2, self.games)

    def to_json(self) -> dict[str, Any]:
        lo, hi = self.ci95
        return {
            "a": self.a,
            "b": self.b,
            "games": self.games,
            "a_wins": self.a_wins,
            "b_wins": self.b_wins,
            "a_win_rate": round(self.a_win_rate, 4),
            "ci95": [round(lo, 4), round(hi, 4)],
        }


@dataclass(frozen=True)
class GameSpec:
    """One game of a tournament: who sits north, the seeds."""

    pair: int
    index: int
    north: str
    south: str
    seed: int
    north_seed: int
    south_seed: int


def schedule(names: Sequence[str], games: int, seed: int) -> list[GameSpec]:
    """Every game of the round robin, in order (see the module for seats and seeds)."""
    if games < 1:
        raise InputError(f"games must be at least 1, got {games}")
    if len(names) < 2:
        raise InputError("a tournament needs at least two bots")
    rng = random.Random(seed)
    out: list[GameSpec] = []
    pair = 0
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            deal = 0
            for g in range(games):
                if g % 2 == 0:
                    deal = rng.getrandbits(63)
                north, south = (names[i], names[j]) if g % 2 == 0 else (names[j], names[i])
                out.append(
                    GameSpec(
                        pair,
                        g,
                        north,
                        south,
                        deal,
                        rng.getrandbits(63),
                        rng.getrandbits(63),
                    )
                )
            pair += 1
    return out


BotMaker = Callable[[str, int], BotLike]


def run_tournament(
    names: Sequence[str],
    games: int,
    seed: int,
    *,
    make: BotMaker | None = None,
    config: RulesConfig | None = None,
    progress: Callable[[GameSpec], None] | None = None,
) -> list[PairResult]:
    """Play the round robin and return one result per pair, in the order of ``names``.

    ``make(name, seed)`` builds a bot (default: :func:`make_bot` with no options);
    ``progress`` is called after each game. Unknown bot names raise before any game.
    """
    maker: BotMaker = make or (lambda name, s: make_bot(name, s))
    for name in dict.fromkeys(names):
        maker(name, 0)  # fail fast on a bad name
    specs = schedule(names, games, seed)
    pairs = [
        PairResult(names[i], names[j], 0, 0, 0)
        for i in range(len(names))
        for j in range(i + 1, len(names))
    ]
    for spec in specs:
        north = maker(spec.north, spec.north_seed)
        south = maker(spec.south, spec.south_seed)
        state = play_game(north, south, spec.seed, config, NORTH, certify=False)
        result = pairs[spec.pair]
        result.games += 1
        a_is_north = spec.index % 2 == 0
        if state.winner != DRAW_GAME:
            a_won = (state.winner == NORTH) == a_is_north
            if a_won:
                result.a_wins += 1
            else:
                result.b_wins += 1
        assert state.winner in (NORTH, SOUTH, DRAW_GAME)
        if progress is not None:
            progress(spec)
    return pairs
