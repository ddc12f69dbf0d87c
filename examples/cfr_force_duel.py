"""OpenSpiel's tabular CFR+ learns a small Force Duel from information states.

Run it: ``python -m battlejudge.examples.cfr_force_duel --iterations 200`` (needs the
``rl`` extra: ``pip install "battlejudge[rl]"``). The game is ``python_force_duel`` with
the card set examples/force_duel/duel-small.toml and one unit: one battle, about 6,400
states and 330 information states, so OpenSpiel's ``CFRPlusSolver``
(``open_spiel.python.algorithms.cfr``; ``--algorithm cfr`` for plain CFR) walks the whole
tree at every iteration, keyed by our information-state strings (the engine's view and
every action as the player was told it). At checkpoints it prints the average policy's
NashConv (``exploitability.nash_conv``: what two best responses gain against it; the
exploitability is half of it) and the CPU time so far. Then the average policy plays
our bots (``equilibrium``: the exact Force equilibrium, strategy cards at random;
``random``) in seeded games, seats alternating, beside the uniform policy as a baseline;
and it checks that the policy keyed by information-state tensors (RL1's
``information_state_tensor``) is the same policy (one tensor per information state).
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python import policy as spiel_policy
from open_spiel.python.algorithms import cfr, exploitability, get_all_states

from battlejudge.apps.rl.openspiel_games import BattlejudgeState, register
from battlejudge.engines.games import get_game

CARDS = str(files("battlejudge.examples.force_duel") / "duel-small.toml")
"""The card set: one weapon, three equal battle cards per deck, Hold and Ambush."""
SOLVERS = {"cfr+": cfr.CFRPlusSolver, "cfr": cfr.CFRSolver}


def load(cards: str = CARDS, units: int = 1) -> Any:
    """The OpenSpiel game: Force Duel with this card set and units."""
    register()
    return pyspiel.load_game("python_force_duel", {"cards": cards, "units": units})


def checkpoints(iterations: int) -> list[int]:
    """The iterations after which NashConv is measured: 1, 2, 4, ... and the last."""
    marks = [2**k for k in range(int(math.log2(max(iterations, 1))) + 1)]
    return sorted({*marks, iterations} - {0})


@dataclass
class Curve:
    """NashConv of the average policy after each checkpoint's iteration, with the CPU
    seconds spent solving so far (NashConv's own time not counted)."""

    points: list[tuple[int, float, float]] = field(default_factory=list)


def solve(
    game: Any, iterations: int, algorithm: str = "cfr+", marks: list[int] | None = None
) -> tuple[Any, Curve]:
    """Run ``iterations`` of the solver; returns its average policy and the curve."""
    solver = SOLVERS[algorithm](game)
    curve = Curve()
    wanted = set(marks if marks is not None else checkpoints(iterations))
    spent = 0.0
    for i in range(1, iterations + 1):
        start = time.process_time()
        solver.evaluate_and_update_policy()
        spent += time.process_time() - start
        if i in wanted:
            conv = exploitability.nash_conv(game, solver.average_policy())
            curve.points.append((i, float(conv), spent))
    return solver.average_policy(), curve


def decision_states(game: Any) -> list[Any]:
    """Every state of the game where a player decides (OpenSpiel's ``get_all_states``)."""
    found = get_all_states.get_all_states(
        game, include_terminals=False, include_chance_states=False
    )
    return list(found.values())


def check_policy(states: list[Any], avg: Any) -> int:
    """At every one of these decision states the policy is a distribution over exactly
    its legal actions; returns how many states were checked. :class:`AssertionError`
    otherwise."""
    for state in states:
        probs = avg.action_probabilities(state)
        assert sorted(probs) == sorted(state.legal_actions()), state
        assert all(p >= 0 for p in probs.values()), probs
        assert abs(sum(probs.values()) - 1) < 1e-9, probs
    return len(states)


def tensor_keys_agree(states: list[Any]) -> tuple[int, int]:
    """A policy keyed by information-state tensor bytes is the policy keyed by
    information-state strings: over these decision states, one tensor per string and
    one string per tensor, so each tensor names one distribution. Returns (strings,
    tensors); :class:`AssertionError` if a tensor stands for two strings or the
    reverse."""
    by_tensor: dict[bytes, str] = {}
    by_string: dict[str, bytes] = {}
    for state in states:
        player = state.current_player()
        key = state.information_state_string(player)
        tensor = np.asarray(state.information_state_tensor(player), np.float32).tobytes()
        assert by_tensor.setdefault(tensor, key) == key, "one tensor for two information states"
        assert by_string.setdefault(key, tensor) == tensor, "two tensors for one information state"
    return len(by_string), len(by_tensor)


@dataclass
class Score:
    """Games won, lost and drawn by the policy."""

    won: int = 0
    lost: int = 0
    drawn: int = 0

    @property
    def games(self) -> int:
        """How many games were played."""
        return self.won + self.lost + self.drawn

    def rate(self) -> float:
        """The share of games won, a draw counting half."""
        return (self.won + self.drawn / 2) / max(self.games, 1)


def play(game: Any, avg: Any, opponent: str, games: int, seed: int) -> Score:
    """``games`` games of the policy ``avg`` against our bot ``opponent`` (seeded
    ``seed``, ``seed + 1``, ...; the policy sits first in even games)."""
    info = get_game("force-duel")
    score = Score()
    for k in range(games):
        rng = np.random.RandomState(seed + k)
        bot = info.make_bot(opponent, seed + k)
        seat = k % 2
        state = game.new_initial_state()
        assert isinstance(state, BattlejudgeState)
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(int(rng.choice(outcomes, p=probs)))
            elif state.current_player() == seat:
                probs = avg.action_probabilities(state)
                actions = list(probs)
                weights = np.array([probs[a] for a in actions])
                state.apply_action(int(rng.choice(actions, p=weights / weights.sum())))
            else:
                state.apply_action(state.codec.encode(bot.step(state.table.state), False))
        mine = state.returns()[seat]
        if mine > 0:
            score.won += 1
        elif mine < 0:
            score.lost += 1
        else:
            score.drawn += 1
    return score


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Solve, measure, play and print; returns the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--algorithm", choices=list(SOLVERS), default="cfr+")
    parser.add_argument("--games", type=int, default=400, help="games against each bot")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cards", default=CARDS, help="a Force Duel card-set TOML")
    parser.add_argument("--units", type=int, default=1)
    args = parser.parse_args(argv)
    game = load(args.cards, args.units)
    start = time.process_time()
    avg, curve = solve(game, args.iterations, args.algorithm)
    total = time.process_time() - start
    cards = "duel-small.toml" if args.cards == CARDS else args.cards
    print(
        f"{args.algorithm.upper()} on python_force_duel(cards={cards}, units={args.units}): "
        f"{args.iterations} iterations, {total:.1f} CPU s in all (NashConv included)"
    )
    print(f"{'iteration':>10} {'NashConv':>10} {'exploitability':>15} {'CPU s solving':>14}")
    for i, conv, spent in curve.points:
        print(f"{i:>10} {conv:>10.5f} {conv / 2:>15.5f} {spent:>14.1f}")
    states = decision_states(game)
    checked = check_policy(states, avg)
    strings, tensors = tensor_keys_agree(states)
    print(
        f"policy: a distribution over the legal actions at all {checked} decision states; "
        f"{strings} information states, {tensors} distinct information-state tensors "
        "(the policy keyed by tensor bytes is the same policy)"
    )
    uniform = spiel_policy.UniformRandomPolicy(game)
    results: dict[str, Any] = {}
    for opponent in ("equilibrium", "random"):
        for name, pol in ((args.algorithm.upper(), avg), ("uniform", uniform)):
            s = play(game, pol, opponent, args.games, args.seed)
            results[f"{name} vs {opponent}"] = s
            print(
                f"{name} vs {opponent}: {s.won} won, {s.lost} lost, {s.drawn} drawn of "
                f"{s.games} (score {s.rate():.3f}, a draw counting half)"
            )
    return {"curve": curve.points, "cpu_s": total, "results": results}


if __name__ == "__main__":
    main()
