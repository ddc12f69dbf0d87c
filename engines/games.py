"""The one registry of games, and what each game declares to the generic machinery.

Every game (Battle Line with its Nine Circles theme, BattlePlan, Lines of Battle, Force
Duel, and any game of your own) plugs into the same runner
(:mod:`battlejudge.engines.runner`), tournament (:mod:`battlejudge.engines.tournament`),
self-play (:mod:`battlejudge.engines.selfplay`) and record layer
(:mod:`battlejudge.engines.records`), and so into the ``selfplay``, ``tournament``,
``play``, ``replay``, ``show`` and ``schema`` commands, by exporting one :class:`GameInfo`
from a module named in the registry (``register_game``).
"""

from __future__ import annotations

import importlib
import inspect
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from battlejudge.engines.game import GameState
from battlejudge.solver.errors import InputError, missing_extra


@runtime_checkable
class BotLike(Protocol):
    """What the runner needs from a bot: a name and one legal action for
    ``state.current_player()`` (the state is left unchanged)."""

    name: str

    def step(self, state: Any) -> Any:
        """The bot's action for ``state``, where it is the bot's turn; one of
        ``state.legal_actions()``."""


class RandomBot:
    """A uniformly random legal action, for any game (seeded: the same seed, the same play)."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def step(self, state: GameState[Any]) -> Any:
        """A uniformly random legal action, from the bot's seeded ``rng``."""
        return self.rng.choice(state.legal_actions())


Options = Mapping[str, str]
"""Game options as text (``-o KEY=VALUE`` on the command line, ``[Option ...]`` in
records), e.g. ``{"cards": "house.toml"}``, ``{"variant": "commander"}`` or
``{"theme": "nine-circles"}``."""


class ClaimLog(Protocol):
    """Where a game appends every claim it decides (``battlejudge.proofs.log.ProofLog``)."""

    def append(
        self,
        *,
        question: dict[str, Any],
        verdict: str,
        certificate: dict[str, Any],
        game: str | None = None,
        turn: int | None = None,
        player: str | None = None,
        flag: int | None = None,
        time: str | None = None,
    ) -> dict[str, Any]:
        """Append one decided claim with its certificate and game context to the proof log;
        returns the record written."""


class BatchClaimLog(ClaimLog, Protocol):
    """A claim log that also appends several records in one durable write (self-play
    appends a game's claims and its header block when the game ends)."""

    def append_batch(self, entries: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Append several claims in one durable write; returns the records written."""

    def append_records(self, records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Append records already made (claims, a game's header block) in one durable
        write; returns the records written."""


@dataclass(frozen=True)
class Setup:
    """How the runner sets a table up, beyond the game's options.

    ``log`` and ``game_id``: where the game's decided claims go, and under which game id
    (only games with ``GameInfo.logs_claims``). ``certify``: whether claims carry their
    certificate (a tournament turns it off for speed: claims are still decided exactly).
    """

    log: ClaimLog | None = None
    game_id: str | None = None
    certify: bool = True


@dataclass
class Problem:
    """Where a record stops being a legal game."""

    line: int
    """The line of the record (1-based)."""
    kind: str
    """What went wrong, e.g. ``illegal-action``, ``wrong-result``, ``unjustified-claim``."""
    detail: str
    where: str
    """How a player finds the spot: ``action 12`` or ``turn 5``."""
    fields: dict[str, Any] = field(default_factory=dict)
    """The problem as the format's ``--json`` prints it."""


@dataclass
class Replayed:
    """A record replayed from the start, every action checked (see :class:`RecordFormat`)."""

    game: GameInfo
    state: GameState[Any]
    problem: Problem | None
    facts: dict[str, Any]
    """What the format counts (``actions``; Battle Line: ``turns`` and ``claims``)."""
    summary: str
    """One sentence for a sound record: what was replayed and checked."""

    @property
    def sound(self) -> bool:
        """True when the replay found no problem."""
        return self.problem is None


@dataclass(frozen=True)
class GameMeta:
    """What a record says about a game beyond its actions."""

    seed: int | None = None
    bots: Mapping[str, str] = field(default_factory=dict)
    """Seat -> the name of who played it."""
    event: str | None = None
    game_id: str | None = None
    date: str | None = None
    """``YYYY.MM.DD``."""
    options: Mapping[str, str] = field(default_factory=dict)
    """The game's options as given (the entry's defaults not repeated)."""


class RecordFormat(Protocol):
    """A text record format: written from a finished (or stopped) game, replayed with
    every action checked. Battle Line's ``.blg`` and the shared text record of the other
    games (:mod:`battlejudge.engines.records`) both implement it."""

    def sniff(self, text: str) -> bool:
        """Whether ``text`` looks like a record of this format."""
        ...

    def write(
        self,
        game: GameInfo,
        state: GameState[Any],
        moves: Sequence[tuple[int, str]],
        meta: GameMeta,
    ) -> str:
        """The record of a game: ``moves`` are (player or CHANCE, action notation) in the
        order played, ``state`` the state after them."""
        ...

    def replay(self, text: str, upto: int | None = None) -> Replayed:
        """Replay a record (at most ``upto`` steps: turns or actions, as the format
        counts). :class:`InputError` when it cannot be parsed; a record that breaks the
        rules is a :class:`Problem` in the result."""
        ...


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
    bots: Mapping[str, Callable[..., BotLike]]
    """Bot name -> factory taking the bot's ``seed`` (and, if it wants them, the bot
    options ``budget_s`` and ``iterations``)."""
    render: Callable[[GameState[Any], int | None], Any]
    """A rich renderable of the table as ``viewer`` sees it (None: everything)."""
    records: RecordFormat | None = None
    """How its games are written and replayed (None: the shared text record of
    :mod:`battlejudge.engines.records`; see :func:`~battlejudge.engines.records.record_format`)."""
    options: Mapping[str, str] = field(default_factory=dict)
    """Each option this game accepts, with a one-line help text."""
    defaults: Mapping[str, str] = field(default_factory=dict)
    """Options this entry sets unless told otherwise (Nine Circles: its theme)."""
    help: str = ""
    """Help shown by ``battlejudge play`` (how to type actions)."""
    play_bot: str | None = None
    """The opponent ``battlejudge play`` picks by default (None: the last bot listed)."""
    prepare: Callable[[GameState[Any], Setup], None] | None = None
    """Applies a :class:`Setup` to a new state (games that log or certify claims)."""
    logs_claims: bool = False
    """Whether the game decides claims that go to a proof log (``Setup.log``)."""
    read_position: Callable[[str], GameState[Any]] | None = None
    """A position file (path) -> its state, for games that have position files."""
    dump_position: Callable[[GameState[Any], int | None], str] | None = None
    """A state -> its position file (as ``viewer`` may see it), for ``show --json``."""
    schemas: Mapping[str, Callable[[], dict[str, Any]]] = field(default_factory=dict)
    """The JSON Schemas of the game's files, by name (``battlejudge schema``)."""
    human_input: Callable[[GameState[Any], str], tuple[list[Any], str | None]] | None = None
    """A line typed by a human in ``play`` -> (actions to apply in order, text to print),
    for games whose players may type more than one action's notation (Battle Line: a
    play typed in a claim window closes the window; "can I claim 3?" asks the solver).
    None: the line is one action (:meth:`GameState.parse_action`)."""
    stats: Callable[[GameState[Any]], dict[str, Any]] | None = None
    """Extra figures of a finished game for self-play summaries (turns, claims)."""
    narrate: Callable[[GameState[Any], Any, int], str | None] | None = None
    """``play``: what the human at seat ``human`` is told of an action just applied (the
    card he drew, a claim with its proof), given the state after it; None: nothing more
    than the action itself. Without it, ``play`` tells each action as the seat may see it."""
    legend: str = ""
    """``play``: what the table's marks and colors mean (shown at the start and by 'legend')."""

    def make_bot(self, name: str, seed: int, **bot_options: Any) -> BotLike:
        """A bot by name or ``module:Class`` (its constructor takes ``seed``), seeded;
        ``bot_options`` (``budget_s``, ``iterations``) go to the bots that take them.
        :class:`InputError` names an unknown bot."""
        factory: Callable[..., Any]
        if ":" in name:
            factory = load_bot_class(name)
        else:
            try:
                factory = self.bots[name]
            except KeyError:
                known = ", ".join(self.bots)
                raise InputError(
                    f"unknown {self.title} bot {name!r} (bots: {known}, or module:Class)"
                ) from None
        bot = factory(seed=seed, **_accepted(factory, bot_options))
        if not isinstance(getattr(bot, "name", None), str):
            bot.name = name
        return bot

    def check_options(self, options: Options) -> None:
        """Raise :class:`InputError` naming the first option this game does not know."""
        for key in options:
            if key not in self.options:
                known = ", ".join(self.options) or "none"
                raise InputError(f"{self.title} has no option {key!r} (options: {known})")

    def start(self, options: Options | None = None, setup: Setup | None = None) -> GameState[Any]:
        """A new game with these options (over the entry's defaults), checked, and set
        up as ``setup`` says. :class:`InputError` for a log given to a game that logs no
        claims."""
        opts = self.with_defaults(options)
        self.check_options(opts)
        state = self.new_game(opts)
        if setup is not None:
            if setup.log is not None and not self.logs_claims:
                raise InputError(f"{self.title} decides no claims: --log has nothing to log")
            if self.prepare is not None:
                self.prepare(state, setup)
        return state

    def with_defaults(self, options: Options | None) -> dict[str, str]:
        """The entry's default options overridden by ``options``."""
        return {**self.defaults, **(options or {})}

    def seat_index(self, seat: str) -> int:
        """A seat's player index; :class:`InputError` names an unknown seat."""
        if seat not in self.seats:
            raise InputError(f"{self.title} has no seat {seat!r} (seats: {', '.join(self.seats)})")
        return self.seats.index(seat)


def _accepted(factory: Callable[..., Any], options: Mapping[str, Any]) -> dict[str, Any]:
    """The options the factory's signature takes (all of them if it takes ``**kwargs``)."""
    given = {k: v for k, v in options.items() if v is not None}
    if not given:
        return {}
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return given
    return {k: v for k, v in given.items() if k in params}


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


_MODULES: dict[str, tuple[str, str]] = {
    "battleline": ("battlejudge.engines.battleline.game", "GAME"),
    "nine-circles": ("battlejudge.engines.battleline.game", "NINE_CIRCLES"),
    "battleplan": ("battlejudge.engines.battleplan.game", "GAME"),
    "lines-of-battle": ("battlejudge.engines.lines_of_battle.game", "GAME"),
    "force-duel": ("battlejudge.engines.force_duel.game", "GAME"),
}
DEFAULT_GAME = "battleline"


def register_game(name: str, module: str, attribute: str = "GAME") -> None:
    """Make ``get_game(name)`` load the :class:`GameInfo` ``attribute`` of ``module``
    (for games of your own); :class:`InputError` if the name is taken."""
    if name in _MODULES:
        raise InputError(f"the game name {name!r} is taken")
    _MODULES[name] = (module, attribute)


def game_names() -> list[str]:
    """Every game name the commands accept, Battle Line first."""
    return list(_MODULES)


def get_game(name: str) -> GameInfo:
    """A registered game's :class:`GameInfo`; :class:`InputError` names an unknown game."""
    entry = _MODULES.get(name)
    if entry is None:
        raise InputError(f"unknown game {name!r} (games: {', '.join(game_names())})")
    try:
        module = importlib.import_module(entry[0])
    except ImportError as e:
        # BattlePlan, Lines of Battle and Force Duel need the games extra (OR-Tools).
        error = missing_extra(e)
        if error is None:
            raise
        raise error from None
    game: GameInfo = getattr(module, entry[1])
    return game


def all_games() -> list[GameInfo]:
    """Every registered game, in registry order."""
    return [get_game(name) for name in _MODULES]


def parse_options(pairs: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``["KEY=VALUE", ...]`` -> a dict; :class:`InputError` names a malformed pair."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(f"option {pair!r} is not KEY=VALUE")
        out[key.strip()] = value.strip()
    return out
