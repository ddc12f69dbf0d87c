"""The five games in OpenSpiel: importing this module registers ``python_battleline``
(``theme=nine-circles`` for Nine Circles), ``python_battleplan``,
``python_lines_of_battle`` and ``python_force_duel`` with ``pyspiel.register_game``.

>>> import pyspiel, battlejudge.openspiel  # doctest: +SKIP
>>> game = pyspiel.load_game("python_battleline(theme=nine-circles)")  # doctest: +SKIP

Needs the ``rl`` extra (``pip install "battlejudge[rl]"``). The adapters live in
:mod:`battlejudge.apps.rl.openspiel_games`; docs/rl.md documents the action encodings.
"""

from __future__ import annotations

from battlejudge.apps.rl.openspiel_games import (
    BattlejudgeGame,
    BattlejudgeObserver,
    BattlejudgeState,
    register,
)

__all__ = ["GAME_NAMES", "BattlejudgeGame", "BattlejudgeObserver", "BattlejudgeState", "register"]

GAME_NAMES: list[str] = register()
"""The OpenSpiel names of the registered games."""
