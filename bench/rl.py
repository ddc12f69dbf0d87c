"""``battlejudge bench rl``: how fast the games run for reinforcement learning.

Per game, three figures from seeded random play, each on this process's CPU clock
(``time.process_time``: another process busy on the same core slows the wall clock, not
this):

* **engine**: the engine's own random playouts (the baseline): the player to move picks a
  uniformly random action of ``legal_actions()``, ``apply_action`` applies it (checked),
  chance is drawn by :func:`~battlejudge.engines.game.sample_chance`; no tensors, no ids.
* **PettingZoo**: the AEC environment (:mod:`battlejudge.pettingzoo`) played by random
  masked agents: each step ``last()`` (the observation tensor), a uniformly random legal
  id from ``infos[agent]["action_mask"]``, ``step()`` (which plays the chance that
  follows and builds the next mask).
* **OpenSpiel**: microseconds per call of ``observation_tensor``,
  ``information_state_tensor`` (the player to move's) and ``legal_actions`` on the
  states of random games (every decision, each call timed once per state, the median
  over states); ``legal_actions`` is the first call on a state, so no cache helps it.

A step is one decision of a player (with the chance that follows it), in both the
engine's and PettingZoo's count, so their ratio is the price of the environment.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Final

import numpy as np

__all__ = [
    "TARGET_INFOSTATE_US",
    "TARGET_PETTINGZOO_STEPS",
    "GameFigures",
    "engine_steps_per_s",
    "openspiel_call_us",
    "pettingzoo_steps_per_s",
    "run_rl",
]

TARGET_PETTINGZOO_STEPS: Final = 5000.0
"""Issue 37: PettingZoo Battle Line, random masked steps per second on a quiet core."""
TARGET_INFOSTATE_US: Final = 100.0
"""Issue 37: OpenSpiel ``information_state_tensor``, microseconds per call (median)."""
TARGET_GAME: Final = "battleline"
"""The environment the steps target is for."""

_CHECK_EVERY = 32
"""Steps between two reads of the clock (reading it costs about a microsecond)."""


@dataclass(frozen=True)
class GameFigures:
    """One game's figures (see the module docstring)."""

    game: str
    engine_steps_per_s: float
    engine_steps: int
    pettingzoo_steps_per_s: float
    pettingzoo_steps: int
    ratio: float
    """PettingZoo's steps per second over the engine's."""
    observation_tensor_us: float
    information_state_tensor_us: float
    legal_actions_us: float
    states: int
    """How many states the OpenSpiel medians are over."""


_WARM_UP_S: Final = 0.5
"""CPU seconds of each playout before its figures are timed."""
ROUNDS: Final = 5
"""The rounds in which the engine's and PettingZoo's playouts take turns."""


class _CpuBudget:
    """Decisions counted against ``seconds`` of this process's CPU time, the clock read
    every :data:`_CHECK_EVERY` decisions."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.steps = 0
        self.start = time.process_time()
        self.spent = False

    def step(self) -> bool:
        """Count one decision; whether the budget is now spent."""
        self.steps += 1
        if self.steps % _CHECK_EVERY == 0:
            self.spent = time.process_time() - self.start >= self.seconds
        return self.spent

    def rate(self) -> tuple[float, int]:
        """Decisions per CPU second, and how many were made."""
        return self.steps / max(time.process_time() - self.start, 1e-9), self.steps


def engine_steps_per_s(game: str, seconds: float, seed: int) -> tuple[float, int]:
    """The engine's random playouts of the environment ``game`` (a key of
    :data:`battlejudge.pettingzoo.ENV_GAMES`) for ``seconds`` of CPU time: decisions per
    second and how many were made."""
    from battlejudge.apps.rl.pettingzoo_envs import ENV_GAMES
    from battlejudge.engines.game import CHANCE, sample_chance

    spec, params = ENV_GAMES[game]
    rng = random.Random(seed)
    budget = _CpuBudget(seconds)
    while not budget.spent:
        state = spec.new_state(params)
        while not state.is_terminal():
            if state.current_player() == CHANCE:
                state.apply_action(sample_chance(state, rng))
                continue
            state.apply_action(rng.choice(state.legal_actions()))
            if budget.step():
                break
    return budget.rate()


def pettingzoo_steps_per_s(game: str, seconds: float, seed: int) -> tuple[float, int]:
    """Random masked agents in the PettingZoo environment ``game`` for ``seconds`` of CPU
    time (new games seeded ``seed``, ``seed + 1``, ...): decisions per second and how many
    were made. The environment is built before the clock starts."""
    from battlejudge.apps.rl.pettingzoo_envs import BattlejudgeEnv

    env = BattlejudgeEnv(game)
    rng = np.random.default_rng(seed)
    games = 0
    budget = _CpuBudget(seconds)
    while not budget.spent:
        env.reset(seed=seed + games)
        games += 1
        for _ in env.agent_iter():
            _, _, terminated, truncated, info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            # the legal ids: nonzero on a bool view of the int8 mask (20x faster than on it)
            legal = info["action_mask"].view(bool).nonzero()[0]
            env.step(int(legal[rng.integers(len(legal))]))
            if budget.step():
                break
    return budget.rate()


def openspiel_call_us(game: str, games: int, seed: int, max_states: int) -> dict[str, Any]:
    """Median microseconds per call of ``observation_tensor``,
    ``information_state_tensor`` and ``legal_actions`` over every decision state of
    ``games`` random OpenSpiel games of the environment ``game`` (at most
    ``max_states`` states; seeded by ``seed``)."""
    import pyspiel

    from battlejudge.apps.rl.openspiel_games import register
    from battlejudge.apps.rl.pettingzoo_envs import ENV_GAMES

    register()
    spec, params = ENV_GAMES[game]
    spiel = pyspiel.load_game(spec.short_name, dict(params))
    rng = np.random.RandomState(seed)
    times: dict[str, list[float]] = {
        "observation_tensor": [],
        "information_state_tensor": [],
        "legal_actions": [],
    }
    states = 0
    for _ in range(games):
        state = spiel.new_initial_state()
        while not state.is_terminal() and states < max_states:
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(int(rng.choice(outcomes, p=probs)))
                continue
            player = state.current_player()
            t0 = time.perf_counter_ns()
            legal = state.legal_actions()
            t1 = time.perf_counter_ns()
            state.observation_tensor(player)
            t2 = time.perf_counter_ns()
            state.information_state_tensor(player)
            t3 = time.perf_counter_ns()
            times["legal_actions"].append((t1 - t0) / 1000)
            times["observation_tensor"].append((t2 - t1) / 1000)
            times["information_state_tensor"].append((t3 - t2) / 1000)
            states += 1
            state.apply_action(legal[rng.randint(len(legal))])
    return {name: statistics.median(t) for name, t in times.items()} | {"states": states}


def measure_game(game: str, seconds: float, games: int, seed: int, max_states: int) -> GameFigures:
    """Every figure of one environment ``game``. The two playouts take turns in
    :data:`ROUNDS` rounds of ``seconds / ROUNDS`` each, after a short untimed warm-up of
    both; each figure is the median of its rounds, and the ratio that of the medians. On
    this shared machine one playout's CPU-time rate moved by a factor of 1.7
    from one run to the next (Battle Line's engine 12,600 to 20,800 steps/s, quiet), so a
    figure measured in one piece, and a ratio of two measured apart, said more of the
    moment than of the code; the first game of a process also imports and fills caches."""
    for warm_up in (engine_steps_per_s, pettingzoo_steps_per_s):
        warm_up(game, min(seconds, _WARM_UP_S), seed)
    engines: list[float] = []
    zoos: list[float] = []
    engine_steps = zoo_steps = 0
    for k in range(ROUNDS):
        rate, steps = engine_steps_per_s(game, seconds / ROUNDS, seed + k)
        engines.append(rate)
        engine_steps += steps
        rate, steps = pettingzoo_steps_per_s(game, seconds / ROUNDS, seed + k)
        zoos.append(rate)
        zoo_steps += steps
    engine = statistics.median(engines)
    zoo = statistics.median(zoos)
    calls = openspiel_call_us(game, games, seed, max_states)
    return GameFigures(
        game=game,
        engine_steps_per_s=round(engine, 1),
        engine_steps=engine_steps,
        pettingzoo_steps_per_s=round(zoo, 1),
        pettingzoo_steps=zoo_steps,
        ratio=round(zoo / engine, 3) if engine else 0.0,
        observation_tensor_us=round(calls["observation_tensor"], 2),
        information_state_tensor_us=round(calls["information_state_tensor"], 2),
        legal_actions_us=round(calls["legal_actions"], 2),
        states=calls["states"],
    )


def run_rl(
    games: list[str],
    seconds: float,
    openspiel_games: int,
    seed: int,
    max_states: int = 2000,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The figures of each environment of ``games`` (keys of
    :data:`battlejudge.pettingzoo.ENV_GAMES`), the targets and whether they are met (a
    target whose game was not measured is None), and the machine's load averages before
    and after (a loaded machine's figures are low)."""
    load_before = os.getloadavg()
    rows = []
    for game in games:
        if progress is not None:
            progress(game)
        rows.append(measure_game(game, seconds, openspiel_games, seed, max_states))
    by_game = {r.game: r for r in rows}
    target = by_game.get(TARGET_GAME)
    return {
        "settings": {
            "games": games,
            "seconds": seconds,
            "openspiel_games": openspiel_games,
            "seed": seed,
            "max_states": max_states,
            "clock": "process CPU time",
        },
        "cores": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "rows": [asdict(r) for r in rows],
        "targets": {
            "pettingzoo_steps_per_s": {
                "game": TARGET_GAME,
                "at_least": TARGET_PETTINGZOO_STEPS,
                "measured": None if target is None else target.pettingzoo_steps_per_s,
                "met": None
                if target is None
                else target.pettingzoo_steps_per_s >= TARGET_PETTINGZOO_STEPS,
            },
            "information_state_tensor_us": {
                "game": "every game measured",
                "at_most": TARGET_INFOSTATE_US,
                "measured": max(r.information_state_tensor_us for r in rows) if rows else None,
                "met": all(r.information_state_tensor_us <= TARGET_INFOSTATE_US for r in rows)
                if rows
                else None,
            },
        },
    }
