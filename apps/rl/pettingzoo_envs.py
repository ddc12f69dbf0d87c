"""The five games as PettingZoo AEC environments, with action masks.

Each environment wraps an engine state (:class:`~battlejudge.apps.rl.specs.Table`).
Agents are named as PettingZoo recommends, ``player_0`` and ``player_1``: ``player_i``
is the game's seat ``i`` (Battle Line: ``player_0`` is ``north``, ``player_1``
``south``; the other games: ``p1``, ``p2``); :meth:`BattlejudgeEnv.seat` and every
agent's ``infos[agent]["seat"]`` name it. An agent's action is an id of the game's dense
encoding (:mod:`.encoding`, the same as OpenSpiel's); its observation is a flat
``float32`` tensor in a :class:`~gymnasium.spaces.Box` (:mod:`.observations`: only what
that agent may see); its legal ids are the int8 mask ``infos[agent]["action_mask"]``
(all zero when it is not the agent's turn), where PettingZoo's documentation puts masks
that are not part of the observation. Chance (deals, draws, dice) is played by the
environment with its seeded generator (``reset(seed=...)``). Rewards come at the end:
the engine's returns (1 win, -1 loss, 0 draw); every game ends by its own rules or house
rules, so nothing is truncated.

No game gets PettingZoo's parallel API: in every one the players take turns (Force
Duel's two commits per battle are simultaneous in substance, and the engine hides the
first from the second player, but its weapons, draws and laid-out units are
sequential), so a parallel step would make one agent act and the other send an action
that is thrown away.

This module imports ``pettingzoo`` and ``gymnasium`` (the ``rl`` extra).
"""

from __future__ import annotations

import io
import random
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo.utils.env import AECEnv

from battlejudge.apps.rl.encoding import Codec
from battlejudge.apps.rl.specs import GAMES, Params, RLGame, Table, base_game, toolkit_name
from battlejudge.engines.game import CHANCE, TERMINAL, sample_chance
from battlejudge.engines.games import game_names, get_game

_SPECS = {spec.registry: spec for spec in GAMES}

OBSERVATION_LOW = -1.0
OBSERVATION_HIGH = 5.0
"""Every entry of every game's tensor lies in ``[-1, 5]``: one-hot planes, fractions
scaled to ``[-1, 1.3]`` (Force Duel's unit balance is negative when behind; a Battle
Line hand holds 9 cards for a moment after a Scout, 9/7), and Force Duel's per-card
counts (a card set holds at most 5 copies of a strategy or unit card)."""

Mask = npt.NDArray[np.int8]


def _adapted(name: str) -> tuple[str, dict[str, str]] | None:
    """:func:`~battlejudge.apps.rl.specs.base_game`, or None for a game with no adapter."""
    try:
        return base_game(name)
    except KeyError:
        return None


ENV_GAMES: dict[str, tuple[RLGame, dict[str, str]]] = {
    toolkit_name(name): (_SPECS[found[0]], found[1])
    for name in game_names()
    if (found := _adapted(name)) is not None
}
"""An environment for every game of the registry with an adapter, named as PettingZoo
spells names: its OpenSpiel game and the parameters it adds (Nine Circles: Battle Line's
theme). A game registered without one (a game of your own) has none, and :func:`env`
says so."""


def agent_name(player: int) -> str:
    """PettingZoo's name of the game's seat ``player`` (0-based): ``player_0``, ..."""
    return f"player_{player}"


ENV_VERSION = 1
"""The environments' version, in their names (``battleline_v1``), as PettingZoo versions
its own: a change that alters what an agent sees, does or is rewarded for raises it, so
results name the environment they were got on. v1 (issue 37): agents ``player_0`` and
``player_1``, the observation is the tensor and the mask is in ``info``, Battle Line's
``environment_removable`` is false by default, and a Scout's returns are told by deck only.
v0: agents named by seat, observations ``{"observation", "action_mask"}``."""


class BattlejudgeEnv(AECEnv):  # type: ignore[misc]
    """One of the games as an AEC environment (see the module docstring)."""

    def __init__(
        self, game: str = "battleline", render_mode: str | None = None, **params: str | int
    ) -> None:
        super().__init__()
        if game not in ENV_GAMES:
            registered = {toolkit_name(name): name for name in game_names()}
            if game in registered:
                raise ValueError(
                    f"the game {registered[game]!r} has no OpenSpiel or PettingZoo adapter"
                )
            raise ValueError(f"unknown game {game!r} (games: {', '.join(ENV_GAMES)})")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode {render_mode!r} is not None or 'ansi'")
        self.spec_game, defaults = ENV_GAMES[game]
        self.params: Params = {**defaults, **params}
        self.render_mode = render_mode
        self.metadata = {
            "render_modes": ["ansi"],
            "name": f"{game}_v{ENV_VERSION}",
            "is_parallelizable": False,
        }
        first = self.spec_game.new_state(self.params)
        self.codec: Codec = self.spec_game.codec(first)
        self.seats: tuple[str, ...] = get_game(self.spec_game.registry).seats
        self.possible_agents = [agent_name(p) for p in range(len(self.seats))]
        self._players = {agent: p for p, agent in enumerate(self.possible_agents)}
        # a new table is a copy of this one (its tensors built once)
        self._first = Table(first, codec=self.codec)
        size = len(self._first.observation_tensor(0))
        n = self.codec.num_actions
        self.observation_spaces = {
            agent: spaces.Box(OBSERVATION_LOW, OBSERVATION_HIGH, (size,), np.float32)
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(n) for agent in self.possible_agents}
        self._no_actions: Mask = np.zeros(n, np.int8)
        self._no_actions.flags.writeable = False
        self._ids: list[int] = []
        self.table = self._first.clone()
        self.np_random, _ = seeding.np_random(None)
        self._chance = random.Random(0)

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The agent's observation space: its tensor's :class:`~gymnasium.spaces.Box`."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """The game's dense action ids."""
        return self.action_spaces[agent]

    def seat(self, agent: str) -> str:
        """The game's name of the agent's seat (``player_0`` -> ``north`` in Battle Line)."""
        return self.seats[self._players[agent]]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game; ``seed`` seeds the chance events (the deal, draws, dice)."""
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        # chance draws with the engines' own sampler, from a stream the seed fixes
        self._chance = random.Random(int(self.np_random.integers(2**63)))
        self.table = self._first.clone()
        self.agents = list(self.possible_agents)
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos: dict[str, dict[str, Any]] = {
            agent: {"seat": self.seat(agent), "action_mask": self._no_actions}
            for agent in self.agents
        }
        self.agent_selection = self.agents[0]
        self._play_chance()
        self._select()

    def observe(self, agent: str) -> npt.NDArray[np.float32]:
        """The agent's tensor: what its seat may see now (a new array, the caller's to
        keep)."""
        return self.table.observation_tensor(self._players[agent])

    def step(self, action: int | None) -> None:
        """Play the selected agent's action id (then chance, until a decision or the end);
        :class:`ValueError` names an id that is not legal now."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None or int(action) not in self._ids:
            raise ValueError(f"action {action!r} is not legal for {agent} now")
        self._cumulative_rewards[agent] = 0.0
        self.table.apply_id(int(action))
        self._play_chance()
        state = self.table.state
        if state.is_terminal():
            returns = state.returns()
            self._ids = []
            for seat in self.agents:
                self.rewards[seat] = float(returns[self._players[seat]])
                self.terminations[seat] = True
                self.infos[seat]["action_mask"] = self._no_actions
                self.infos[seat]["returns"] = returns
        else:
            self._select()
        self._accumulate_rewards()

    def _play_chance(self) -> None:
        state = self.table.state
        while state.current_player() == CHANCE:
            self.table.apply(sample_chance(state, self._chance))

    def _select(self) -> None:
        """Select the agent to act and give it its mask (the one it had goes back to
        zeros); its legal ids are kept to check the action it sends."""
        player = self.table.state.current_player()
        if player == TERMINAL:
            return
        self.infos[self.agent_selection]["action_mask"] = self._no_actions
        agent = self.possible_agents[player]
        self._ids = self.table.legal_ids()
        mask = np.zeros(self.codec.num_actions, np.int8)
        mask[self._ids] = 1
        self.infos[agent]["action_mask"] = mask
        self.agent_selection = agent

    def render(self) -> str | None:
        """The table as text (``render_mode="ansi"``), everything shown."""
        if self.render_mode is None:
            return None
        from rich.console import Console

        out = io.StringIO()
        console = Console(file=out, width=100, color_system=None)
        console.print(get_game(self.spec_game.registry).render(self.table.state, None))
        return out.getvalue()

    def close(self) -> None:
        """Nothing to release."""

    def __str__(self) -> str:
        return str(self.metadata["name"])


def env(game: str = "battleline", render_mode: str | None = None, **params: str | int) -> Any:
    """An environment of ``game`` (a key of :data:`ENV_GAMES`)."""
    return BattlejudgeEnv(game, render_mode, **params)


def all_envs() -> list[BattlejudgeEnv]:
    """One environment of each game: Battle Line, Nine Circles, BattlePlan, Lines of
    Battle and Force Duel."""
    return [BattlejudgeEnv(game) for game in ENV_GAMES]
