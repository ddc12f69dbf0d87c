"""A bot for the cluster tests that kills the Ray worker playing it, once: a worker lost
in the middle of a game (tests/test_cluster.py)."""

from __future__ import annotations

import os
import signal
from typing import Any

from battlejudge.engines.game import GameState
from battlejudge.engines.games import RandomBot

MARKER = "BATTLEJUDGE_TEST_DIE_ONCE"
"""The environment variable naming the folder of the marker files (one per bot class); the
test sets it in Ray's workers only."""


class DiesOnce(RandomBot):
    """Plays as the random bot with the same seed; but the first time any process that has
    :data:`MARKER` in its environment reaches a game's tenth move, it creates its class's
    marker file and kills its own process (SIGKILL: no clean-up, as when a machine is lost)."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.moves = 0

    def step(self, state: GameState[Any]) -> Any:
        """The random bot's move, after perhaps dying (see the class)."""
        self.moves += 1
        folder = os.environ.get(MARKER)
        if folder and self.moves == 10:
            marker = os.path.join(folder, type(self).__name__)
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                pass
            else:
                os.kill(os.getpid(), signal.SIGKILL)
        return super().step(state)


class DiesOnceMore(DiesOnce):
    """:class:`DiesOnce` with a marker of its own: a second worker lost in the same session."""
