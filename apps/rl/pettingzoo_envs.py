"""The five games as PettingZoo AEC environments, with action masks.

Each environment wraps an engine state (:class:`~battlejudge.apps.rl.specs.Table`):
agents are the game's seats (Battle Line: ``north``, ``south``), an agent's action is
an id of the game's dense encoding (:mod:`.encoding`, the same as OpenSpiel's), and its
observation is ``{"observation": tensor, "action_mask": int8 mask}`` (the tensor of
:mod:`.observations`: only what that agent may see). Chance (deals, draws, dice) is
played by the environment with its seeded generator (``reset(seed=...)``). Rewards come
at the end: the engine's returns (1 win, -1 loss, 0 draw); every game ends by its own
rules or house rules, so nothing is truncated.

This module imports ``pettingzoo`` and ``gymnasium`` (the ``rl`` extra).
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo.utils.env import AECEnv

from battlejudge.apps.rl.encoding import Codec
from battlejudge.apps.rl.observations import pieces_of, tensor_of
from battlejudge.apps.rl.specs import GAMES, Params, RLGame, Table, base_game, toolkit_name
from battlejudge.engines.game import CHANCE, TERMINAL
from battlejudge.engines.games import game_names, get_game

_SPECS = {spec.registry: spec for spec in GAMES}


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
        self.metadata = {"render_modes": ["ansi"], "name": f"{game}_v0", "is_parallelizable": False}
        first = self.spec_game.new_state(self.params)
        self.codec: Codec = self.spec_game.codec(first)
        self.seats: tuple[str, ...] = get_game(self.spec_game.registry).seats
        self.possible_agents = list(self.seats)
        size = sum(int(np.prod(shape)) for _, shape in pieces_of(first))
        n = self.codec.num_actions
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(-1.0, np.inf, (size,), np.float32),
                    "action_mask": spaces.Box(0, 1, (n,), np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(n) for agent in self.possible_agents}
        self.table = Table(first)
        self.np_random, _ = seeding.np_random(None)

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The agent's observation space: a tensor and an action mask."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """The game's dense action ids."""
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game; ``seed`` seeds the chance events (the deal, draws, dice)."""
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        self.table = Table(self.spec_game.new_state(self.params))
        self.agents = list(self.possible_agents)
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._play_chance()
        self.agent_selection = self._selected()

    def observe(self, agent: str) -> dict[str, Any]:
        """The agent's tensor and its mask of legal action ids (all zero when it is not
        the agent's turn)."""
        player = self.seats.index(agent)
        mask = np.zeros(self.codec.num_actions, np.int8)
        state = self.table.state
        if state.current_player() == player:
            mask[[self.codec.encode(a, False) for a in state.legal_actions()]] = 1
        return {"observation": tensor_of(state, player).tensor, "action_mask": mask}

    def step(self, action: int | None) -> None:
        """Play the selected agent's action id (then chance, until a decision or the end);
        :class:`ValueError` names an id that is not legal now."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self.table.state
        legal = {self.codec.encode(a, False): a for a in state.legal_actions()}
        if action is None or int(action) not in legal:
            raise ValueError(f"action {action!r} is not legal for {agent} now")
        self._cumulative_rewards[agent] = 0.0
        self.table.apply(legal[int(action)])
        self._play_chance()
        if state.is_terminal():
            returns = state.returns()
            for seat in self.agents:
                self.rewards[seat] = float(returns[self.seats.index(seat)])
                self.terminations[seat] = True
                self.infos[seat] = {"returns": returns}
        else:
            self.agent_selection = self._selected()
        self._accumulate_rewards()

    def _play_chance(self) -> None:
        state = self.table.state
        while state.current_player() == CHANCE:
            outcomes = state.chance_outcomes()
            weights = np.array([float(p) for _, p in outcomes])
            pick = int(self.np_random.choice(len(outcomes), p=weights / weights.sum()))
            self.table.apply(outcomes[pick][0])

    def _selected(self) -> str:
        player = self.table.state.current_player()
        if player == TERMINAL:
            return self.agents[0]
        return self.seats[player]

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
