"""The registry of games other than Battle Line, and what each one declares.

Battle Line has its own record format (``.blg``, with certified claims) and runners. The
other games plug into the generic machinery (:mod:`battlejudge.engines.records`,
:mod:`battlejudge.engines.runner`, and the ``selfplay``, ``tournament``, ``play``,
``replay`` and ``show`` commands) by exporting one :class:`GameInfo` named ``GAME`` from
``battlejudge.engines.<package>.game``.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from battlejudge.engines.game import GameState
from battlejudge.solver.errors import InputError


class BotLike(Protocol):
    """What the generic runner needs from a bot: a name and one legal action for
    ``state.current_player()`` (the state is left unchanged)."""

    name: str

    def step(self, state: Any) -> Any: ...


class RandomBot:
    """A uniformly random legal action, for any game (seeded: the same seed, the same play)."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def step(self, state: GameState[Any]) -> Any:
        return self.rng.choice(state.legal_actions())


Options = Mapping[str, str]
"""Game options as text (``--option KEY=VALUE`` on the command line, ``[Option ...]``
in records), e.g. ``{"cards": "house.toml"}`` or ``{"variant": "commander"}``."""


@dataclass(frozen=True)
class GameInfo:
    """Everything the generic commands need to know about a game."""

    name: str
    """The command-line name (``battleplan``)."""
    title: str
    """The name players know (``BattlePlan``)."""
    suffix: str
    """The file suffix of its records (``.bpg``)."""
    seats: tuple[str, ...]
    """Each player's name in records and messages, by player index."""
    new_game: Callable[[Options], GameState[Any]]
    """The state before the first action (setup chance nodes included). Raises
    :class:`InputError` for an unknown option or a bad value, naming it."""
    deserialize: Callable[[str], GameState[Any]]
    """Rebuilds a state from :meth:`GameState.serialize`."""
    bots: Mapping[str, Callable[[int], BotLike]]
    """Bot name -> factory taking the bot's seed."""
    render: Callable[[GameState[Any], int | None], Any]
    """A rich renderable of the table as ``viewer`` sees it (None: everything)."""
    options: Mapping[str, str] = field(default_factory=dict)
    """Each option this game accepts, with a one-line help text."""
    help: str = ""
    """Help shown by ``battlejudge play`` (how to type actions)."""

    def make_bot(self, name: str, seed: int) -> BotLike:
        """A bot by name, seeded; :class:`InputError` names an unknown one."""
        try:
            factory = self.bots[name]
        except KeyError:
            known = ", ".join(self.bots)
            raise InputError(f"unknown {self.title} bot {name!r} (bots: {known})") from None
        bot = factory(seed)
        if not isinstance(getattr(bot, "name", None), str):
            bot.name = name
        return bot

    def check_options(self, options: Options) -> None:
        """Raise :class:`InputError` naming the first option this game does not know."""
        for key in options:
            if key not in self.options:
                known = ", ".join(self.options) or "none"
                raise InputError(f"{self.title} has no option {key!r} (options: {known})")


_MODULES: dict[str, str] = {
    "battleplan": "battlejudge.engines.battleplan.game",
    "lines-of-battle": "battlejudge.engines.lines_of_battle.game",
    "force-duel": "battlejudge.engines.force_duel.game",
}

BATTLE_LINE = "battleline"
"""Battle Line (and its Nine Circles theme) keep their own commands and records."""


def register_game(name: str, module: str) -> None:
    """Make ``get_game(name)`` load ``GAME`` from ``module`` (for games of your own)."""
    if name == BATTLE_LINE:
        raise InputError(f"{name!r} is taken by Battle Line")
    _MODULES[name] = module


def game_names() -> list[str]:
    """Every game name the commands accept, Battle Line first."""
    return [BATTLE_LINE, *_MODULES]


def get_game(name: str) -> GameInfo:
    """The :class:`GameInfo` of a game other than Battle Line; :class:`InputError`
    names an unknown game."""
    module = _MODULES.get(name)
    if module is None:
        raise InputError(f"unknown game {name!r} (games: {', '.join(game_names())})")
    game: GameInfo = importlib.import_module(module).GAME
    return game


def parse_options(pairs: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``["KEY=VALUE", ...]`` -> a dict; :class:`InputError` names a malformed pair."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(f"option {pair!r} is not KEY=VALUE")
        out[key.strip()] = value.strip()
    return out
