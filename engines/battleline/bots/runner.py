"""Playing one game between two bots.

Chance (the deal, every draw) is resolved with :func:`battlejudge.engines.game.sample_chance`
and one ``random.Random(seed)``, so the same bots with the same seeds replay the same game.
"""

from __future__ import annotations

import logging
import random

from battlejudge.engines.battleline.actions import Action
from battlejudge.engines.battleline.bots.base import BotLike
from battlejudge.engines.battleline.config import RulesConfig
from battlejudge.engines.battleline.state import FACTS, NORTH, PLAYERS, BattleLineState
from battlejudge.engines.game import CHANCE, IllegalActionError, sample_chance

log = logging.getLogger(__name__)


class BotError(IllegalActionError):
    """A bot returned an action that is not legal; the message names the bot."""


def play_game(
    north: BotLike,
    south: BotLike,
    seed: int,
    config: RulesConfig | None = None,
    first: int = NORTH,
    *,
    certify: bool = True,
) -> BattleLineState:
    """Play a whole game and return the final state (``state.winner``, ``state.history``).

    Guarantees: every bot action is checked (an illegal one raises :class:`BotError`);
    the chance draws come from ``random.Random(seed)`` alone; the game ends (the engine's
    idle house rule, with a hard stop at the game's declared maximum length). With
    ``certify=False`` claims are still decided by the solver but carry no DRAT certificate
    (faster; the record is the same).
    """
    state = BattleLineState(config, first, certify=certify)
    chance = random.Random(seed)
    bots = (north, south)
    steps = 0
    while not state.is_terminal():
        steps += 1
        if steps > FACTS.max_length:
            raise RuntimeError(f"game with seed {seed} did not end in {FACTS.max_length} steps")
        player = state.current_player()
        if player == CHANCE:
            state.apply_action_unchecked(sample_chance(state, chance))
            continue
        bot = bots[player]
        action = bot.step(state)
        if not isinstance(action, Action):
            raise BotError(
                f"bot {bot.name!r} ({PLAYERS[player]}) returned {action!r}, not an Action"
            )
        if action not in state.legal_actions():
            raise BotError(
                f"bot {bot.name!r} ({PLAYERS[player]}) chose {action}, which is not legal: "
                f"{state.why_illegal(action)}"
            )
        state.apply_action_unchecked(action)
    log.debug("game %d over: winner %d after %d steps", seed, state.winner, steps)
    return state
