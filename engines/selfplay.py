"""Self-play for every registered game: bots play whole games, every game recorded and,
for games that decide claims, every claim certified and logged.

Reproducible from the seed: game ``i`` of a run with seed ``S`` uses the chance seed
``game_seed(S, i)`` and bot seeds one and two above it; its id is ``S-i``. The two bots
swap seats every game (the first bot takes seat 0 in even games), so each has the first
seat half the time and both meet the same kinds of deal.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from battlejudge.engines.games import (
    BatchClaimLog,
    GameInfo,
    GameMeta,
    Options,
    Setup,
    get_game,
)
from battlejudge.engines.records import (
    DEFAULT_PREFIX,
    check_prefix,
    header_block,
    record_name,
    refuse_existing,
    write_new,
)
from battlejudge.engines.runner import check_max_steps, play_game
from battlejudge.proofs.log import claim_record, game_record
from battlejudge.solver.errors import InputError

EVENT = "battlejudge selfplay"

T = TypeVar("T")
R = TypeVar("R")
Mapper = Callable[[Callable[[T], R], Sequence[T]], Iterable[R]]
"""Plays games somewhere (here, or on a cluster: ``battlejudge.apps.cluster``) and yields
their results in the order of the items, each item's result exactly once: the builtin
``map`` is the local one."""


def game_seed(seed: int, index: int) -> int:
    """The chance seed of game ``index`` of a run: stable, and distinct between games."""
    return seed * 1_000_003 + index


@dataclass(frozen=True)
class GameSummary:
    """One finished self-play game."""

    game_id: str
    seed: int
    seats: dict[str, str]
    """Seat -> bot name."""
    order: tuple[int, ...]
    """For each seat, the index in the run's bot list of the bot that sat there."""
    winner: str
    """The winning seat, ``draw`` or ``unfinished``."""
    actions: int
    record: Path | None
    stats: dict[str, Any] = field(default_factory=dict)
    """The game's own figures (Battle Line: turns and claims)."""

    @property
    def winner_bot(self) -> str | None:
        """The name of the bot that won, or None for a draw."""
        return self.seats.get(self.winner)

    @property
    def winner_index(self) -> int | None:
        """The index in the run's bot list of the winner, or None (a draw)."""
        seats = list(self.seats)
        return self.order[seats.index(self.winner)] if self.winner in seats else None

    def to_json(self) -> dict[str, Any]:
        """The game's summary as JSON (one line of ``selfplay --json``)."""
        return {
            "game": self.game_id,
            "seed": self.seed,
            "seats": self.seats,
            "winner": self.winner,
            "winner_bot": self.winner_bot,
            "actions": self.actions,
            **self.stats,
            "record": None if self.record is None else str(self.record),
        }


class GroupCommit:
    """Finished games' claims and records, held in memory and committed together: one log
    append (one fsync and one checkpoint) for every game finished within ``seconds``, then
    their record files. A record is written only once its game's claims are in the log,
    so what is on disk always agrees with the log; a crash loses at most the games of the
    last ``seconds``, which the seed replays. (With one fsync and one checkpoint a game,
    three fsyncs cost as much as the game itself when the disk is busy.)"""

    def __init__(
        self, log: BatchClaimLog | None, seconds: float = 0.25, overwrite: bool = False
    ) -> None:
        self.log = log
        self.seconds = seconds
        self.overwrite = overwrite
        self.entries: list[dict[str, Any]] = []
        self.records: list[tuple[Path, str]] = []
        self._since = time.monotonic()

    def append(self, **entry: Any) -> dict[str, Any]:
        """Hold one claim (the keyword arguments of the log's ``append``) until the commit."""
        self.entries.append(entry)
        return entry

    def add_record(self, path: Path, text: str, game_id: str | None = None) -> None:
        """Hold one game's record file until its claims are committed; with ``game_id``
        (a game whose claims are logged), its header block goes into the same commit, so
        the log binds every header of the record (``audit --games`` compares them)."""
        self.records.append((path, text))
        if game_id is not None and self.log is not None:
            self.entries.append({"__game__": game_id, "headers": header_block(text)})

    @property
    def due(self) -> bool:
        """True once ``seconds`` have passed since the last commit."""
        return time.monotonic() - self._since >= self.seconds

    def commit(self) -> None:
        """Append the held claims in one durable write, then write the held records (a
        record file that exists is :class:`InputError`, unless ``overwrite``)."""
        if self.log is not None and self.entries:
            self.log.append_records(
                [
                    game_record(e["__game__"], e["headers"])
                    if "__game__" in e
                    else claim_record(**e)
                    for e in self.entries
                ]
            )
        self.entries = []
        while self.records:
            path, text = self.records.pop(0)
            if self.overwrite:
                path.write_text(text, encoding="utf-8")
            else:
                write_new(path, text)
        self._since = time.monotonic()


def check_bots(game: GameInfo, names: Sequence[str], bot_options: Mapping[str, Any]) -> None:
    """Raise :class:`InputError` naming a bad bot before any game is played."""
    if len(names) != len(game.seats):
        raise InputError(
            f"--bots needs {len(game.seats)} names separated by a comma, got {','.join(names)!r}"
        )
    for name in dict.fromkeys(names):
        game.make_bot(name, 0, **bot_options)


@dataclass(frozen=True)
class SelfplayRun:
    """What every game of a self-play run shares, as plain values: a worker on another
    machine plays any game of the run from this and the game's index alone."""

    game: str
    """The registered game's name."""
    names: tuple[str, ...]
    seed: int
    options: dict[str, str]
    bot_options: dict[str, Any]
    date: str
    """The date the records carry (the driver's, so every record of a run agrees)."""
    suffix: str | None
    """The record files' suffix, or None when no records are kept."""
    log: bool
    """Whether the game's claims are kept for the proof log."""
    max_steps: int | None = None
    """A game still going after this many actions raises ``StepLimitError`` (None: the
    game's own limit)."""


@dataclass(frozen=True)
class PlayedGame:
    """One self-play game as a worker hands it back: its summary (without a record path),
    its record's text, and its certified claims (the keyword arguments of the log's
    ``append``), in the order the game decided them."""

    index: int
    summary: GameSummary
    record: str | None
    claims: tuple[dict[str, Any], ...]


class ClaimCollector:
    """A claim log that only holds the claims of one game, for the driver to commit."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []

    def append(self, **entry: Any) -> dict[str, Any]:
        """Hold one claim (the keyword arguments of the log's ``append``)."""
        self.entries.append(entry)
        return entry


def play_selfplay_game(run: SelfplayRun, index: int, game: GameInfo | None = None) -> PlayedGame:
    """Play game ``index`` of ``run`` (seeds and seats as the module says): a pure function
    of its arguments, so any process plays the same game. Claims are certified; nothing is
    written anywhere."""
    info = game if game is not None else get_game(run.game)
    names = run.names
    gs = game_seed(run.seed, index)
    order = tuple(range(len(names))) if index % 2 == 0 else tuple(reversed(range(len(names))))
    bots = [info.make_bot(names[j], gs + 1 + k, **run.bot_options) for k, j in enumerate(order)]
    game_id = f"{run.seed}-{index}"
    seats = {info.seats[k]: names[j] for k, j in enumerate(order)}
    meta = GameMeta(
        seed=gs, bots=seats, event=EVENT, game_id=game_id, date=run.date, options=run.options
    )
    claims = ClaimCollector()
    setup = Setup(log=claims if run.log else None, game_id=game_id)
    state, played = play_game(
        info, bots, gs, run.options, setup=setup, meta=meta, max_steps=run.max_steps
    )
    summary = GameSummary(
        game_id,
        gs,
        seats,
        order,
        played.result,
        len(played.moves),
        None,
        info.stats(state) if info.stats is not None else {},
    )
    record = played.dumps() if run.suffix is not None else None
    return PlayedGame(index, summary, record, tuple(claims.entries))


def selfplay(
    game: GameInfo,
    names: Sequence[str],
    games: int,
    seed: int,
    options: Options | None = None,
    *,
    out: Path | None = None,
    log: BatchClaimLog | None = None,
    bot_options: Mapping[str, Any] | None = None,
    mapper: Mapper[int, PlayedGame] | None = None,
    max_steps: int | None = None,
    prefix: str = DEFAULT_PREFIX,
    overwrite: bool = False,
) -> Iterator[GameSummary]:
    """Play ``games`` games between the named bots (one per seat; see the module for
    seats and seeds), yielding a summary after each, in game order; records go to ``out``
    and claims to ``log``. ``mapper`` plays the games (default: one after the other here;
    ``battlejudge.apps.cluster`` plays them on a Ray cluster); whoever plays them, the
    claims are committed and the records written here, in game order, so the results, the
    records and the log's claims are the same for the same seed. Bad names, and a
    ``max_steps`` below 1, raise :class:`InputError` before the first game; a game still
    going after ``max_steps`` actions (None: the game's own limit) raises
    :class:`~battlejudge.engines.runner.StepLimitError` naming its id, seed and bots, the
    games before it kept (docs/rulings.md, "Games that do not end").

    Game ``i``'s record is ``out/PREFIX-SEED-iiii.SUFFIX`` (:func:`record_name`), so runs
    with different seeds share a folder; a record the run would write that exists already
    is :class:`InputError` naming it before the first game (unless ``overwrite``)."""
    check_max_steps(max_steps)
    extra = dict(bot_options or {})
    check_bots(game, names, extra)
    check_prefix(prefix)
    paths = (
        []
        if out is None
        else [out / record_name(seed, i, game.suffix, prefix) for i in range(games)]
    )
    if out is not None:
        if not overwrite:
            refuse_existing(paths)
        out.mkdir(parents=True, exist_ok=True)
    run = SelfplayRun(
        game.name,
        tuple(names),
        seed,
        dict(options or {}),
        extra,
        date.today().strftime("%Y.%m.%d"),
        None if out is None else game.suffix,
        log is not None,
        max_steps,
    )
    if mapper is None:
        played: Iterable[PlayedGame] = map(
            partial(play_selfplay_game, run, game=game), range(games)
        )
    else:
        played = mapper(partial(play_selfplay_game, run), range(games))
    held = GroupCommit(log, overwrite=overwrite)
    done: list[GameSummary] = []
    try:
        for i, g in enumerate(played):
            if g.index != i:  # the mapper's promise, checked: a game lost or played twice
                raise RuntimeError(f"self-play expected game {i}, got game {g.index}")
            for claim in g.claims:
                held.append(**claim)
            summary = g.summary
            if out is not None and g.record is not None:
                path = paths[i]
                held.add_record(path, g.record, g.summary.game_id if game.logs_claims else None)
                summary = replace(summary, record=path)
            done.append(summary)
            if held.due or i == games - 1:
                held.commit()
                yield from done
                done = []
    finally:
        held.commit()  # games finished before an interruption are kept
