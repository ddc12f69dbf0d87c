"""Battle Line bots (issue 4): random, heuristic, search; the game runner; tournaments.

Public API::

    from battlejudge.engines.battleline.bots import make_bot, play_game
    north = make_bot("heuristic", seed=1)
    south = make_bot("search", seed=2, budget_s=0.5)     # or iterations=200
    state = play_game(north, south, seed=7)              # state.winner: 0, 1 or 2 (draw)

A bot is an object with a ``name`` and ``step(state) -> Action`` (see :mod:`.base`);
``make_bot("package.module:Class", seed)`` loads a user's bot class.
"""

from __future__ import annotations

from battlejudge.engines.battleline.bots.base import (
    Bot,
    BotLike,
    bot_names,
    load_bot_class,
    make_bot,
    register_bot,
)
from battlejudge.engines.battleline.bots.runner import BotError, play_game

__all__ = [
    "Bot",
    "BotError",
    "BotLike",
    "bot_names",
    "load_bot_class",
    "make_bot",
    "play_game",
    "register_bot",
]
