"""Playing one game of a registered game between bots, with its record.

Chance is resolved by :func:`~battlejudge.engines.game.sample_chance` with one
``random.Random(seed)``, so the same bots with the same seeds replay the same game; the
record holds every action, so it replays without the seed.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from battlejudge.engines.game import CHANCE, GameState, IllegalActionError, sample_chance
from battlejudge.engines.games import BotLike, GameInfo, Options
from battlejudge.engines.records import GameRecord, Move, result_of, seat_of


class BotError(IllegalActionError):
    """A bot chose an action that is not legal; the message names the bot."""


def play_game(
    game: GameInfo,
    bots: Sequence[BotLike],
    seed: int,
    options: Options | None = None,
    *,
    record: bool = True,
) -> tuple[GameState[Any], GameRecord]:
    """Play a whole game; return the final state and its record (without moves when
    ``record`` is False). Every bot action is checked: an illegal one raises
    :class:`BotError`; a game longer than the game's declared maximum raises."""
    opts = dict(options or {})
    game.check_options(opts)
    state = game.new_game(opts)
    rec = GameRecord(game.name, opts, seed=seed)
    rec.bots = {game.seats[i]: b.name for i, b in enumerate(bots)}
    chance = random.Random(seed)
    steps = 0
    while not state.is_terminal():
        steps += 1
        if steps > state.facts.max_length:
            raise RuntimeError(
                f"{game.title} game with seed {seed} did not end in {state.facts.max_length} steps"
            )
        player = state.current_player()
        if player == CHANCE:
            action = sample_chance(state, chance)
        else:
            bot = bots[player]
            action = bot.step(state)
            if action not in state.legal_actions():
                raise BotError(
                    f"{game.title} bot {bot.name!r} ({game.seats[player]}) chose {action!r}, "
                    f"which is not legal: {state.why_illegal(action)}"
                )
        if record:
            rec.moves.append(Move(seat_of(game, player), state.action_to_string(action)))
        state.apply_action_unchecked(action)
    rec.result = result_of(game, state)
    return state, rec
