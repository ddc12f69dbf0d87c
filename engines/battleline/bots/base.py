"""The Battle Line bot interface. The registry of bots is the game's entry in the one
game registry (:mod:`battlejudge.engines.battleline.game`: ``GAME.bots``, ``make_bot``).

A bot is any object with a ``name`` and a ``step(state) -> Action`` method that returns
one of ``state.legal_actions()`` whenever ``state.current_player()`` is a player. It
may be asked for any kind of decision (claims, plays, Scout draws and returns, Mud
discards, the deck to draw from), also when it is not its turn (a Mud discard falls to
the owner of the side). It must not change the state it is given, and all its
randomness comes from the ``random.Random`` it was built with, so a seed fixes its play.

Subclass :class:`Bot`, or write any class whose constructor accepts ``seed=`` (an int)
and name it ``"module:Class"`` wherever a bot name goes.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from typing import Protocol, runtime_checkable

from battlejudge.engines.battleline.actions import Action
from battlejudge.engines.battleline.state import BattleLineState
from battlejudge.solver.errors import InputError


@runtime_checkable
class BotLike(Protocol):
    """What the game runner needs from a bot."""

    name: str

    def step(self, state: BattleLineState) -> Action:
        """The bot's action for ``state``, where it is the bot's turn; it must be one of
        ``state.legal_actions()``."""


class Bot(ABC):
    """Base class for bots: a name and a seeded random generator.

    Pass ``seed`` (an int) or ``rng`` (a ``random.Random`` the bot then owns); with
    neither, the seed is 0, so an unseeded bot is still reproducible.
    """

    name: str = "bot"

    def __init__(self, seed: int | None = None, *, rng: random.Random | None = None) -> None:
        if seed is not None and rng is not None:
            raise InputError("give a bot a seed or an rng, not both")
        self.rng = rng if rng is not None else random.Random(0 if seed is None else seed)

    @abstractmethod
    def step(self, state: BattleLineState) -> Action:
        """One legal action for ``state.current_player()``; ``state`` is left unchanged."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
