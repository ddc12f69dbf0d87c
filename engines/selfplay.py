"""Self-play for every registered game: bots play whole games, every game recorded and,
for games that decide claims, every claim certified and logged.

Reproducible from the seed: game ``i`` of a run with seed ``S`` uses the chance seed
``game_seed(S, i)`` and bot seeds one and two above it; its id is ``S-i``. The two bots
swap seats every game (the first bot takes seat 0 in even games), so each has the first
seat half the time and both meet the same kinds of deal.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from battlejudge.engines.games import BatchClaimLog, GameInfo, GameMeta, Options, Setup
from battlejudge.engines.runner import play_game
from battlejudge.solver.errors import InputError

EVENT = "battlejudge selfplay"


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

    def __init__(self, log: BatchClaimLog | None, seconds: float = 0.25) -> None:
        self.log = log
        self.seconds = seconds
        self.entries: list[dict[str, Any]] = []
        self.records: list[tuple[Path, str]] = []
        self._since = time.monotonic()

    def append(self, **entry: Any) -> dict[str, Any]:
        """Hold one claim (the keyword arguments of the log's ``append``) until the commit."""
        self.entries.append(entry)
        return entry

    def add_record(self, path: Path, text: str) -> None:
        """Hold one game's record file until its claims are committed."""
        self.records.append((path, text))

    @property
    def due(self) -> bool:
        """True once ``seconds`` have passed since the last commit."""
        return time.monotonic() - self._since >= self.seconds

    def commit(self) -> None:
        """Append the held claims in one durable write, then write the held records."""
        if self.log is not None and self.entries:
            self.log.append_batch(self.entries)
        self.entries = []
        for path, text in self.records:
            path.write_text(text, encoding="utf-8")
        self.records = []
        self._since = time.monotonic()


def check_bots(game: GameInfo, names: Sequence[str], bot_options: Mapping[str, Any]) -> None:
    """Raise :class:`InputError` naming a bad bot before any game is played."""
    if len(names) != len(game.seats):
        raise InputError(
            f"--bots needs {len(game.seats)} names separated by a comma, got {','.join(names)!r}"
        )
    for name in dict.fromkeys(names):
        game.make_bot(name, 0, **bot_options)


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
) -> Iterator[GameSummary]:
    """Play ``games`` games between the named bots (one per seat; see the module for
    seats and seeds), yielding a summary after each; records go to ``out`` and claims to
    ``log``. Bad names raise :class:`InputError` before the first game."""
    extra = dict(bot_options or {})
    check_bots(game, names, extra)
    opts = dict(options or {})
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    today = date.today().strftime("%Y.%m.%d")
    held = GroupCommit(log)
    done: list[GameSummary] = []
    try:
        for i in range(games):
            gs = game_seed(seed, i)
            order = tuple(range(len(names))) if i % 2 == 0 else tuple(reversed(range(len(names))))
            bots = [game.make_bot(names[j], gs + 1 + k, **extra) for k, j in enumerate(order)]
            game_id = f"{seed}-{i}"
            seats = {game.seats[k]: names[j] for k, j in enumerate(order)}
            meta = GameMeta(
                seed=gs, bots=seats, event=EVENT, game_id=game_id, date=today, options=opts
            )
            setup = Setup(log=None if log is None else held, game_id=game_id)
            state, played = play_game(game, bots, gs, opts, setup=setup, meta=meta)
            path = None
            if out is not None:
                path = out / f"game-{i:04d}{game.suffix}"
                held.add_record(path, played.dumps())
            done.append(
                GameSummary(
                    game_id,
                    gs,
                    seats,
                    order,
                    played.result,
                    len(played.moves),
                    path,
                    game.stats(state) if game.stats is not None else {},
                )
            )
            if held.due or i == games - 1:
                held.commit()
                yield from done
                done = []
    finally:
        held.commit()  # games finished before an interruption are kept


@dataclass(frozen=True)
class SelfplayBench:
    """The figures of ``battlejudge bench selfplay``: games played, wall time with every claim
    certified and logged and without (the baseline), claims certified and log size."""

    games: int
    certified_s: float
    baseline_s: float
    claims: int
    log_bytes: int

    @property
    def games_per_s(self) -> float:
        """Games per second with every claim certified."""
        return self.games / self.certified_s

    @property
    def baseline_games_per_s(self) -> float:
        """Games per second of the baseline (claims decided, not certified)."""
        return self.games / self.baseline_s


def bench_selfplay(
    game: GameInfo, games: int, seed: int, log: BatchClaimLog | None, log_size: Callable[[], int]
) -> SelfplayBench:
    """Random against random with every claim certified and logged, against the same
    games with claims decided but not certified and nothing logged (the baseline)."""

    def run(certify: bool) -> tuple[float, int]:
        claims = 0
        held = GroupCommit(log if certify else None)
        start = time.perf_counter()
        for i in range(games):
            gs = game_seed(seed, i)
            bots = [game.make_bot("random", gs + 1 + k) for k in range(len(game.seats))]
            setup = Setup(log=held, game_id=f"bench-{seed}-{i}", certify=certify)
            state, _ = play_game(game, bots, gs, setup=setup, record=False)
            if held.due:
                held.commit()
            if game.stats is not None:
                claims += int(game.stats(state).get("claims", 0))
        held.commit()
        return time.perf_counter() - start, claims

    baseline, _ = run(False)
    certified, claims = run(True)
    return SelfplayBench(games, certified, baseline, claims, log_size())
