"""OpenSpiel's information-set MCTS against battlejudge's bots.

Run it: ``python -m battlejudge.examples.openspiel_vs_heuristic --games 10`` (needs the
``rl`` extra: ``pip install "battlejudge[rl]"``). OpenSpiel's ``ISMCTSBot`` plays a
registered game (``python_battleline`` by default; ``--game nine-circles``,
``force-duel`` or ``battleplan``) through :mod:`battlejudge.openspiel`, sampling what it
cannot see with the game's ``resample_from_infostate``; our bot (``--opponent``: Battle
Line's ``heuristic`` by default, or any bot of the game) plays the engine state inside the
same game. The seats alternate; every Battle Line claim is still decided by the engine's
solver. Prints one line per game and the score.
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from battlejudge.apps.rl.openspiel_games import BattlejudgeState
from battlejudge.engines.games import get_game
from battlejudge.openspiel import GAME_NAMES

GAMES = {
    "battleline": ("python_battleline", {}, "heuristic"),
    "nine-circles": ("python_battleline", {"theme": "nine-circles"}, "heuristic"),
    "force-duel": ("python_force_duel", {}, "equilibrium"),
    "battleplan": ("python_battleplan", {}, "greedy"),
}
"""``--game`` -> the OpenSpiel name, its parameters and the default opponent."""


@dataclass
class Result:
    """One game: the IS-MCTS seat, the winner's seat (None: a draw) and its length."""

    ismcts_seat: str
    winner: str | None
    actions: int


def play_game(name: str, opponent: str, simulations: int, seed: int, ismcts_player: int) -> Result:
    """One game of ``name`` (a key of :data:`GAMES`): IS-MCTS (``simulations`` per
    decision) against our ``opponent``."""
    spiel_name, params, _ = GAMES[name]
    assert spiel_name in GAME_NAMES
    game = pyspiel.load_game(spiel_name, params)
    rng = np.random.RandomState(seed)
    evaluator = mcts.RandomRolloutEvaluator(1, rng)
    searcher = ismcts.ISMCTSBot(game, evaluator, 2.0, simulations, random_state=rng)
    info = get_game(name)
    ours = info.make_bot(opponent, seed)
    state = game.new_initial_state()
    assert isinstance(state, BattlejudgeState)
    while not state.is_terminal():
        player = state.current_player()
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        elif player == ismcts_player:
            state.apply_action(int(searcher.step(state)))
        else:
            engine_action = ours.step(state.table.state)
            state.apply_action(state.codec.encode(engine_action, False))
    returns = state.returns()
    winner = None if returns[0] == returns[1] else info.seats[0 if returns[0] > 0 else 1]
    return Result(info.seats[ismcts_player], winner, len(state.history()))


def main(argv: list[str] | None = None) -> dict[str, int]:
    """Play the match and print it; returns the score (IS-MCTS wins, losses, draws)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--simulations", type=int, default=50, help="IS-MCTS per decision")
    parser.add_argument("--game", default="battleline", choices=list(GAMES))
    parser.add_argument("--opponent", help="one of the game's bots (default: its strongest)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    opponent = args.opponent or GAMES[args.game][2]
    score: Counter[str] = Counter(win=0, loss=0, draw=0)
    for k in range(args.games):
        result = play_game(args.game, opponent, args.simulations, args.seed + k, k % 2)
        outcome = (
            "draw"
            if result.winner is None
            else "win"
            if result.winner == result.ismcts_seat
            else "loss"
        )
        score[outcome] += 1
        print(
            f"game {k + 1}: IS-MCTS ({args.simulations} simulations) as {result.ismcts_seat} "
            f"vs {opponent}: {outcome} ({result.actions} actions)"
        )
    print(
        f"IS-MCTS vs {opponent} at {args.game} over {args.games} games: "
        f"{score['win']} won, {score['loss']} lost, {score['draw']} drawn"
    )
    return dict(score)


if __name__ == "__main__":
    main()
