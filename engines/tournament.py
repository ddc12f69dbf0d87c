"""Round-robin tournaments between bots of any game, with Wilson score intervals.

Every pair of bots plays ``games`` games. Games go in pairs on the same chance seed with
the seats swapped (game 2k: the pair's first bot takes seat 0; game 2k+1: the second
bot does), so each bot has each seat in half the games (the extra one of an odd count
goes to the first bot) and both face the same chance. Everything
(the chance seeds, each bot's seed) derives from the tournament seed, so a tournament
replays exactly, provided the bots are reproducible.

A draw counts half a win for each side in the win rate and its interval; the counts of
wins are reported as they are.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from battlejudge.engines.games import GameInfo, GameMeta, Options, Setup, get_game
from battlejudge.engines.runner import check_max_steps, play_game
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
        """The pair's drawn games."""
        return self.games - self.a_wins - self.b_wins

    @property
    def a_win_rate(self) -> float:
        """A's score per game, a draw counting half."""
        return (self.a_wins + self.draws / 2) / self.games if self.games else 0.0

    @property
    def ci95(self) -> tuple[float, float]:
        """The 95% Wilson score interval of the first bot's win rate, a draw counting half a win."""
        return wilson(self.a_wins + self.draws / 2, self.games)

    def to_json(self) -> dict[str, Any]:
        """The pair's result as JSON: the bots, games, wins of each, the first bot's win rate and
        its 95% interval."""
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
    """One game of a tournament: who takes seat 0 (``north``) and seat 1, the seeds."""

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


PlayOne = Callable[[GameSpec], int | None]
"""Plays one scheduled game and returns the winning seat (0 or 1), or None for a draw."""

PlayAll = Callable[[PlayOne, Sequence[GameSpec]], Iterable[int | None]]
"""Plays every scheduled game with a :data:`PlayOne` (here, or on a cluster:
``battlejudge.apps.cluster``) and yields each game's winner once, in schedule order; the
builtin ``map`` plays them here, one after the other."""


def run_round_robin(
    names: Sequence[str],
    games: int,
    seed: int,
    play: PlayOne,
    progress: Callable[[GameSpec], None] | None = None,
    mapper: PlayAll | None = None,
) -> list[PairResult]:
    """Play every scheduled game with ``play`` (through ``mapper``; default here, one
    after the other) and return one result per pair, in the order of ``names``;
    ``progress`` is called after each game, in schedule order."""
    specs = schedule(names, games, seed)
    pairs = [
        PairResult(names[i], names[j], 0, 0, 0)
        for i in range(len(names))
        for j in range(i + 1, len(names))
    ]
    winners = (map if mapper is None else mapper)(play, specs)
    for spec, winner in zip(specs, winners, strict=True):
        result = pairs[spec.pair]
        result.games += 1
        if winner is not None:
            a_is_first = spec.index % 2 == 0
            if (winner == 0) == a_is_first:
                result.a_wins += 1
            else:
                result.b_wins += 1
        if progress is not None:
            progress(spec)
    return pairs


def play_tournament_game(
    game: GameInfo | str,
    options: Options | None,
    bot_options: Mapping[str, Any],
    spec: GameSpec,
    *,
    max_steps: int | None = None,
) -> int | None:
    """Play one scheduled game (``game`` a :class:`GameInfo` or a registered game's name)
    and return the winning seat, or None for a draw: a pure function of its arguments, so
    any process plays the same game. Claims are decided exactly, not certified. A game
    still going after ``max_steps`` actions (None: the game's own limit) raises
    :class:`~battlejudge.engines.runner.StepLimitError` naming its seed and bots."""
    info = get_game(game) if isinstance(game, str) else game
    bots = [
        info.make_bot(spec.north, spec.north_seed, **bot_options),
        info.make_bot(spec.south, spec.south_seed, **bot_options),
    ]
    names = {info.seats[0]: spec.north, info.seats[1]: spec.south}  # as given: module:Class
    _, played = play_game(
        info,
        bots,
        spec.seed,
        options,
        setup=Setup(certify=False),
        meta=GameMeta(seed=spec.seed, bots=names),
        record=False,
        max_steps=max_steps,
    )
    return played.winner


def run_tournament(
    game: GameInfo,
    names: Sequence[str],
    games: int,
    seed: int,
    options: Options | None = None,
    *,
    bot_options: Mapping[str, Any] | None = None,
    progress: Callable[[GameSpec], None] | None = None,
    mapper: PlayAll | None = None,
    max_steps: int | None = None,
) -> list[PairResult]:
    """A round robin of ``game``'s bots (see the module for seats and seeds); every bot
    gets ``bot_options`` it takes (``budget_s``, ``iterations``). Claims are decided
    exactly but not certified (faster; the games are the same). ``mapper`` plays the
    games (default here; ``battlejudge.apps.cluster`` on a Ray cluster, where workers
    look the game up by name): the results are the same for the same seed. Unknown bot
    names, and a ``max_steps`` below 1, raise :class:`InputError` before any game is
    played; a game still going after ``max_steps`` actions (None: the game's own limit)
    raises :class:`~battlejudge.engines.runner.StepLimitError` naming its seed and bots
    (docs/rulings.md, "Games that do not end")."""
    check_max_steps(max_steps)
    extra = dict(bot_options or {})
    for name in dict.fromkeys(names):
        game.make_bot(name, 0, **extra)  # fail fast on a bad name
    opts = None if options is None else dict(options)
    if mapper is None:
        play: PlayOne = partial(play_tournament_game, game, opts, extra, max_steps=max_steps)
    else:
        play = partial(play_tournament_game, game.name, opts, extra, max_steps=max_steps)
    return run_round_robin(names, games, seed, play, progress, mapper)
