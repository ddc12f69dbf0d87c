"""The five games as PettingZoo AEC environments with action masks.

>>> from battlejudge.pettingzoo import all_envs, env  # doctest: +SKIP
>>> table = env("nine_circles")  # doctest: +SKIP

``all_envs()`` returns one environment of each game (Battle Line, Nine Circles,
BattlePlan, Lines of Battle, Force Duel). Agents are ``player_0`` and ``player_1``,
the game's seats in order (``env.seat(agent)``; Battle Line: north, south); an
observation is a ``float32`` tensor and the legal action ids are the mask
``infos[agent]["action_mask"]``. Needs the ``rl`` extra
(``pip install "battlejudge[rl]"``). The environments live in
:mod:`battlejudge.apps.rl.pettingzoo_envs`; docs/rl.md documents actions and tensors.
"""

from __future__ import annotations

from battlejudge.apps.rl.pettingzoo_envs import ENV_GAMES, BattlejudgeEnv, all_envs, env

__all__ = ["ENV_GAMES", "BattlejudgeEnv", "all_envs", "env"]
