"""Playing one game of any registered game between bots, with its record.

Chance is resolved by :func:`~battlejudge.engines.game.sample_chance` with one
``random.Random(seed)``, so the same bots with the same seeds replay the same game; the
record holds every action (or, for Battle Line, the deal and every card drawn), so it
replays without the seed.

A game that has not ended after its step limit (``max_steps``; by default the length the
game declares, :attr:`GameFacts.max_length`) is not given a result: it raises
:class:`StepLimitError` naming the game's seed and bots (docs/rulings.md, "Games that do
not end", says why it is not a draw).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from battlejudge.engines.game import CHANCE, GameState, IllegalActionError, sample_chance
from battlejudge.engines.games import BotLike, GameInfo, GameMeta, Options, Setup
from battlejudge.engines.records import record_format, result_of
from battlejudge.solver.errors import BattlejudgeError, InputError


class BotError(IllegalActionError):
    """A bot chose an action that is not legal; the message names the bot."""


class StepLimitError(BattlejudgeError):
    """A game did not end within its step limit; the message (one line) names the game,
    its seed and the bot in each seat. No result is made up for it (docs/rulings.md,
    "Games that do not end"): the commands exit 2 with the message."""

    def __init__(
        self, title: str, seed: int, bots: Mapping[str, str], limit: int, game_id: str | None
    ) -> None:
        seats = " and ".join(f"{name} ({seat})" for seat, name in bots.items())
        which = f"game {game_id} (seed {seed})" if game_id else f"game with seed {seed}"
        super().__init__(
            f"{title} {which} between {seats} did not end within {limit} steps; "
            "no result is recorded for it"
        )
        self.title = title
        self.seed = seed
        self.bots = dict(bots)
        self.limit = limit
        self.game_id = game_id

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt from its fields, so it crosses processes (a game played on a cluster).
        return type(self), (self.title, self.seed, self.bots, self.limit, self.game_id)


def check_max_steps(max_steps: int | None) -> None:
    """Raise :class:`InputError` for a step limit below 1 (None: the game's own)."""
    if max_steps is not None and (isinstance(max_steps, bool) or max_steps < 1):
        raise InputError(f"max_steps must be at least 1, got {max_steps!r}")


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
        return record_format(self.game).write(self.game, self.state, self.moves, self.meta)

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
    max_steps: int | None = None,
) -> tuple[GameState[Any], Played]:
    """Play a whole game; return the final state and the game (its record: ``.dumps()``;
    without moves when ``record`` is False). ``bots[i]`` plays seat ``i``. Every bot
    action is checked: an illegal one raises :class:`BotError` naming the bot. A game
    still going after ``max_steps`` actions (chance's included; None: the game's declared
    maximum length) raises :class:`StepLimitError` naming the seed and the bots; a
    ``max_steps`` below 1 is an :class:`InputError`."""
    check_max_steps(max_steps)
    opts = dict(options or {})
    state = game.start(opts, setup)
    if meta is None:
        names = {game.seats[i]: b.name for i, b in enumerate(bots)}
        meta = GameMeta(seed=seed, bots=names, options=opts)
    played = Played(game, state, meta=meta)
    chance = random.Random(seed)
    limit = state.facts.max_length if max_steps is None else max_steps
    steps = 0
    while not state.is_terminal():
        steps += 1
        if steps > limit:
            who = meta.bots or {game.seats[i]: b.name for i, b in enumerate(bots)}
            raise StepLimitError(game.title, seed, who, limit, meta.game_id)
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
