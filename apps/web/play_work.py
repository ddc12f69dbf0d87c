"""Play's moves, run in a worker process (module-level, so it pickles; free of the web stack).

A table travels to the worker and back whole (the engine's state, the bots with their own
memory, the chance generator's state): the rules are the engine's
(:meth:`~battlejudge.engines.battleline.state.BattleLineState.apply_action` checks every
move, proves every claim), the bots are the registry's, chance is
:func:`~battlejudge.engines.game.sample_chance`, as in ``battlejudge play``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from battlejudge.engines.battleline.actions import Action
from battlejudge.engines.battleline.state import BattleLineState
from battlejudge.engines.game import CHANCE, sample_chance
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import InputError


@dataclass
class Game:
    """One game at a table: the state, the seats (``human`` or a bot's name) with their
    bots, the chance generator, the moves as the record writes them, and whether each
    claim's proof passed :func:`~battlejudge.solver.battleline.verify`."""

    state: BattleLineState
    seats: tuple[str, str]
    bots: dict[int, Any]
    rng: random.Random
    moves: list[tuple[int, str]] = field(default_factory=list)
    verified: list[bool] = field(default_factory=list)

    def waiting_for_human(self) -> bool:
        """True when the game is over or a human must move."""
        if self.state.is_terminal():
            return True
        who = self.state.current_player()
        return who != CHANCE and self.seats[who] == "human"


def _apply(game: Game, player: int, action: Action) -> None:
    claims = len(game.state.claims)
    game.moves.append((player, game.state.action_to_string(action)))
    game.state.apply_action(action)
    for c in game.state.claims[claims:]:
        game.verified.append(bl.verify(c.proof))


def human_move(game: Game, seat: int, notation: str) -> Game:
    """``game`` after the human at ``seat`` plays the legal action written ``notation``
    (then chance, until someone must decide). :class:`InputError` when it is not that
    seat's turn or not a legal action now (the message names it)."""
    state = game.state
    if state.is_terminal():
        raise InputError("the game is over")
    if state.current_player() != seat:
        raise InputError("it is not your turn")
    for action in state.legal_actions():
        if state.action_to_string(action) == notation:
            _apply(game, seat, action)
            _chance(game)
            return game
    raise InputError(f"{notation!r} is not a legal move now")


def bot_move(game: Game) -> Game:
    """``game`` after chance and at most one bot decision (each job is one decision, so a
    search bot's thinking stays within the service's time limit per job)."""
    _chance(game)
    state = game.state
    if state.is_terminal():
        return game
    who = state.current_player()
    if game.seats[who] != "human":
        _apply(game, who, game.bots[who].step(state))
        _chance(game)
    return game


def _chance(game: Game) -> None:
    state = game.state
    while not state.is_terminal() and state.current_player() == CHANCE:
        _apply(game, CHANCE, sample_chance(state, game.rng))
