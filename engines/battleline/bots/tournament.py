"""Battle Line round robins: :mod:`battlejudge.engines.tournament` with Battle Line games.

Seat 0 is north and moves first; the chance seed deals the cards and orders the draws
(see the generic module for seats, seeds and how draws count).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from battlejudge.engines.battleline.bots.base import BotLike, make_bot
from battlejudge.engines.battleline.bots.runner import play_game
from battlejudge.engines.battleline.config import RulesConfig
from battlejudge.engines.battleline.state import DRAW_GAME, NORTH, SOUTH
from battlejudge.engines.tournament import (
    GameSpec,
    PairResult,
    run_round_robin,
    schedule,
    wilson,
)

__all__ = ["BotMaker", "GameSpec", "PairResult", "run_tournament", "schedule", "wilson"]

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

    def play(spec: GameSpec) -> int | None:
        north = maker(spec.north, spec.north_seed)
        south = maker(spec.south, spec.south_seed)
        state = play_game(north, south, spec.seed, config, NORTH, certify=False)
        assert state.winner in (NORTH, SOUTH, DRAW_GAME)
        return None if state.winner == DRAW_GAME else state.winner

    return run_round_robin(names, games, seed, play, progress)
