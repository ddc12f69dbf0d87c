"""Battle Line bots: random, heuristic, search, and the interface they share.

A bot is an object with a ``name`` and ``step(state) -> Action`` (see :mod:`.base`).
Build one by name from the game registry::

    from battlejudge.engines.battleline.game import GAME, make_bot
    north = make_bot("heuristic", seed=1)
    south = make_bot("search", seed=2, budget_s=0.5)     # or iterations=200
    from battlejudge.engines.runner import play_game
    state, game = play_game(GAME, [north, south], seed=7)  # game.dumps(): the .blg record

``make_bot("package.module:Class", seed)`` loads a user's bot class.
"""

from __future__ import annotations

from battlejudge.engines.battleline.bots.base import Bot, BotLike

__all__ = ["Bot", "BotLike"]
