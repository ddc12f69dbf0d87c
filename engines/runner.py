"""Playing one game of any registered game between bots, with its record.

Chance is resolved by :func:`~battlejudge.engines.game.sample_chance` with one
``random.Random(seed)``, so the same bots with the same seeds replay the same game; the
record holds every action (or, for Battle Line, the deal and every card drawn), so it
replays without the seed.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from battlejudge.engines.game import CHANCE, GameState, IllegalActionError, sample_chance
from battlejudge.engines.games import BotLike, GameInfo, GameMeta, Options, Setup
from battlejudge.engines.records import result_of


class BotError(IllegalActionError):
    """A bot chose an action that is not legal; the message names the bot."""


@dataclass
class Played:
    """A game played by :func:`play_game`: its final state, the actions in the order
    played, and what its record says about it."""

    game: GameInfo
    state: GameState[Any]
    moves: list[tuple[int, str]] = field(default_factory=list)
    """(player or CHANCE, the action's notation); empty when not recorded."""
    meta: GameMeta = field(default_factory=GameMeta)

    def dumps(self) -> str:
        """The game's record, in its game's format."""
        return self.game.record_format().write(self.game, self.state, self.moves, self.meta)

    @property
    def result(self) -> str:
        """The winner's seat, ``draw``, or ``unfinished``."""
        return result_of(self.game, self.state)

    @property
    def winner(self) -> int | None:
        """The winning player index, or None (a draw, or unfinished)."""
        r = self.result
        return self.game.seats.index(r) if r in self.game.seats else None


def play_game(
    game: GameInfo,
    bots: Sequence[BotLike],
    seed: int,
    options: Options | None = None,
    *,
    setup: Setup | None = None,
    meta: GameMeta | None = None,
    record: bool = True,
) -> tuple[GameState[Any], Played]:
    """Play a whole game; return the final state and the game (its record: ``.dumps()``;
    without moves when ``record`` is False). ``bots[i]`` plays seat ``i``. Every bot
    action is checked: an illegal one raises :class:`BotError` naming the bot; a game
    longer than the game's declared maximum raises ``RuntimeError``."""
    opts = dict(options or {})
    state = game.start(opts, setup)
    if meta is None:
        names = {game.seats[i]: b.name for i, b in enumerate(bots)}
        meta = GameMeta(seed=seed, bots=names, options=opts)
    played = Played(game, state, meta=meta)
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
            played.moves.append((player, state.action_to_string(action)))
        state.apply_action_unchecked(action)
    return state, played
