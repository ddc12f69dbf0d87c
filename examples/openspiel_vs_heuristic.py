"""OpenSpiel's information-set MCTS against battlejudge's Battle Line bots.

Run it: ``python -m battlejudge.examples.openspiel_vs_heuristic --games 10`` (needs the
``rl`` extra: ``pip install "battlejudge[rl]"``). OpenSpiel's ``ISMCTSBot`` plays the
registered game ``python_battleline`` through :mod:`battlejudge.openspiel` (it samples
the cards it cannot see with the game's ``resample_from_infostate``); our bot (``heuristic``
by default, or ``random``, ``search``) plays the engine state inside the same game. The
seats alternate; every claim is still decided by the engine's solver. Prints one line
per game and the score.
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


@dataclass
class Result:
    """One game: the IS-MCTS seat, the winner's seat (None: a draw) and its length."""

    ismcts_seat: str
    winner: str | None
    actions: int


def play_game(
    game: pyspiel.Game, opponent: str, simulations: int, seed: int, ismcts_player: int
) -> Result:
    """One game of IS-MCTS (``simulations`` per decision) against our ``opponent``."""
    assert "python_battleline" in GAME_NAMES
    rng = np.random.RandomState(seed)
    evaluator = mcts.RandomRolloutEvaluator(1, rng)
    searcher = ismcts.ISMCTSBot(game, evaluator, 2.0, simulations, random_state=rng)
    info = get_game("battleline")
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
    parser.add_argument("--opponent", default="heuristic", help="random, heuristic or search")
    parser.add_argument("--theme", default="battleline", help="battleline or nine-circles")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    game = pyspiel.load_game("python_battleline", {"theme": args.theme})
    score: Counter[str] = Counter(win=0, loss=0, draw=0)
    for k in range(args.games):
        result = play_game(game, args.opponent, args.simulations, args.seed + k, k % 2)
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
            f"vs {args.opponent}: {outcome} ({result.actions} actions)"
        )
    print(
        f"IS-MCTS vs {args.opponent} over {args.games} games: "
        f"{score['win']} won, {score['loss']} lost, {score['draw']} drawn"
    )
    return dict(score)


if __name__ == "__main__":
    main()
