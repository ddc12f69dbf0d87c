"""The bot interface, the registry of built-in bots, and loading a user's bot.

A bot is any object with a ``name`` and a ``step(state) -> Action`` method that returns
one of ``state.legal_actions()`` whenever ``state.current_player()`` is a player. It
may be asked for any kind of decision (claims, plays, Scout draws and returns, Mud
discards, the deck to draw from), also when it is not its turn (a Mud discard falls to
the owner of the side). It must not change the state it is given, and all its
randomness comes from the ``random.Random`` it was built with, so a seed fixes its play.

Subclass :class:`Bot`, or write any class whose constructor accepts ``seed=`` (an int)
and load it with :func:`load_bot_class` from ``"module:Class"``.
"""

from __future__ import annotations

import importlib
import inspect
import random
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Protocol, cast, runtime_checkable

from battlejudge.engines.battleline.actions import Action
from battlejudge.engines.battleline.state import BattleLineState
from battlejudge.solver.errors import InputError


@runtime_checkable
class BotLike(Protocol):
    """What the game runner needs from a bot."""

    name: str

    def step(self, state: BattleLineState) -> Action: ...


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


BotFactory = Callable[..., BotLike]
_REGISTRY: dict[str, BotFactory] = {}


def register_bot(name: str, factory: BotFactory) -> None:
    """Make ``make_bot(name, seed, **options)`` build bots with ``factory(seed=..., **options)``."""
    _REGISTRY[name] = factory


def bot_names() -> list[str]:
    """The registered bot names (the built-ins: random, heuristic, search)."""
    _load_builtins()
    return list(_REGISTRY)


def _load_builtins() -> None:
    if _REGISTRY:
        return
    from battlejudge.engines.battleline.bots.heuristic import HeuristicBot
    from battlejudge.engines.battleline.bots.random_bot import RandomBot
    from battlejudge.engines.battleline.bots.search import SearchBot

    for cls in (RandomBot, HeuristicBot, SearchBot):
        _REGISTRY.setdefault(cls.name, cls)


def load_bot_class(spec: str) -> type[Any]:
    """The class named by ``"package.module:Class"``; raises :class:`InputError`
    (a ``ValueError``) naming the spec when it cannot be imported or is not a bot."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise InputError(f"bot {spec!r} is not 'module:Class'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise InputError(f"cannot import bot module {module_name!r} for {spec!r}: {e}") from e
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise InputError(f"module {module_name!r} has no {attr!r} (bot {spec!r})")
    if not inspect.isclass(obj) or not callable(getattr(obj, "step", None)):
        raise InputError(f"{spec!r} is not a class with a step(state) method")
    return obj


def make_bot(name: str, seed: int, **options: Any) -> BotLike:
    """A bot by registry name (``random``, ``heuristic``, ``search``) or ``module:Class``,
    seeded with ``seed``. Options go to the constructor (``search``: ``budget_s``,
    ``iterations``). Raises :class:`InputError` for an unknown name."""
    _load_builtins()
    bot: Any
    if ":" in name:
        cls = load_bot_class(name)
        bot = cls(seed=seed, **options)
    elif name in _REGISTRY:
        bot = _REGISTRY[name](seed=seed, **options)
    else:
        known = ", ".join(_REGISTRY)
        raise InputError(f"unknown bot {name!r} (bots: {known}, or module:Class)")
    if not isinstance(getattr(bot, "name", None), str):
        bot.name = name
    return cast(BotLike, bot)
