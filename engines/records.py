"""The record layer: the shared text record of the registered games, and finding the
format of any record (:func:`detect`).

Every game's records implement :class:`~battlejudge.engines.games.RecordFormat`: Battle
Line's ``.blg`` (:mod:`battlejudge.engines.battleline.record`, with certified claims) and
this module's text record, used by every other game unless it brings its own.

A record is text: a few header lines, then one line per action, chance included, in
the game's own notation (:meth:`GameState.action_to_string`), so a record replays
exactly without any seed::

    # battlejudge game record
    [Game "battleplan"]
    [Seed "7"]
    [Option variant "commander"]
    [Seat p1 "random"]
    [Seat p2 "greedy"]
    [Result "p1"]
    chance: token C4
    p1: place rook A1

``[Result]`` is the winner's seat, ``draw``, or ``unfinished``. Blank lines and lines
starting with ``#`` are ignored; an action line may end in a ``# comment``. ``[Seed]`` and
``[Seat]`` are optional; a record without ``[Result]`` does not replay sound (its result
would be bound by nothing), and replay checks the one it states.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from battlejudge.engines.game import CHANCE, TERMINAL, GameState, IllegalActionError
from battlejudge.engines.games import (
    GameInfo,
    GameMeta,
    RecordFormat,
    Replayed,
    all_games,
    get_game,
)
from battlejudge.engines.games import (
    Problem as FormatProblem,
)
from battlejudge.solver.errors import InputError

MAGIC = "# battlejudge game record"
CHANCE_SEAT = "chance"
_HEADER = re.compile(r'^\[(\w+)(?:\s+([\w.-]+))?\s+"((?:[^"\\]|\\.)*)"\]\s*$')
_MOVE = re.compile(r"^([\w-]+)\s*:\s*(.*?)\s*(?:#.*)?$")


def header_block(text: str) -> list[str]:
    """A record's header lines exactly as written (each ``[...]`` line before its first
    action, blank and ``#`` lines skipped), whatever the game's format: what the proof log
    binds of a game (:func:`battlejudge.proofs.log.game_record`)."""
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if not line.startswith("["):
            break
        out.append(line)
    return out


def header_name(line: str) -> str:
    """The name a header line is known by: its tag, with its key for keyed ones
    (``Option variant``, ``Seat p1``)."""
    m = re.match(r"\[(\w+)(?:\s+([\w.-]+)(?=\s+\"))?", line)
    if m is None:
        return line[:40]
    return m.group(1) if m.group(2) is None else f"{m.group(1)} {m.group(2)}"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


@dataclass
class Move:
    """One action line: who acted (a seat or ``chance``), the notation, its line."""

    seat: str
    text: str
    line: int = 0


@dataclass
class GameRecord:
    """A whole game (or its start) of a registered game."""

    game: str
    options: dict[str, str] = field(default_factory=dict)
    moves: list[Move] = field(default_factory=list)
    seed: int | None = None
    bots: dict[str, str] = field(default_factory=dict)
    """Seat -> the name of who played it."""
    result: str | None = None

    def dumps(self) -> str:
        """The canonical text (``loads(r.dumps()) == r`` up to line numbers)."""
        out = [MAGIC, f"[Game {_quote(self.game)}]"]
        if self.seed is not None:
            out.append(f"[Seed {_quote(str(self.seed))}]")
        out += [f"[Option {k} {_quote(v)}]" for k, v in self.options.items()]
        out += [f"[Seat {k} {_quote(v)}]" for k, v in self.bots.items()]
        if self.result is not None:
            out.append(f"[Result {_quote(self.result)}]")
        out += [f"{m.seat}: {m.text}" for m in self.moves]
        return "\n".join(out) + "\n"

    @classmethod
    def loads(cls, text: str) -> GameRecord:
        """Parse a record; :class:`InputError` names the line that is malformed."""
        game: str | None = None
        rec = cls(game="")
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("["):
                m = _HEADER.match(line)
                if m is None:
                    raise InputError(f"line {number}: malformed header {line!r}")
                tag, key, value = m.group(1), m.group(2), _unquote(m.group(3))
                if tag == "Game":
                    game = value
                elif tag == "Seed":
                    try:
                        rec.seed = int(value)
                    except ValueError:
                        raise InputError(f"line {number}: seed {value!r} is not a number") from None
                elif tag == "Option" and key:
                    rec.options[key] = value
                elif tag == "Seat" and key:
                    rec.bots[key] = value
                elif tag == "Result":
                    rec.result = value
                else:
                    raise InputError(f"line {number}: unknown header {line!r}")
                continue
            m = _MOVE.match(line)
            if m is None or not m.group(2):
                raise InputError(f"line {number}: expected 'SEAT: ACTION', got {line!r}")
            rec.moves.append(Move(m.group(1), m.group(2), number))
        if game is None:
            raise InputError('not a game record: no [Game "..."] header')
        rec.game = game
        return rec


def is_generic_record(text: str) -> bool:
    """Whether ``text`` looks like a record of this module (not a ``.blg``)."""
    head = text.lstrip()
    return head.startswith(MAGIC) or head.startswith("[Game ")


def seat_of(game: GameInfo, player: int) -> str:
    """The seat name of ``player`` in ``game`` (``chance`` for chance)."""
    return CHANCE_SEAT if player == CHANCE else game.seats[player]


def result_of(game: GameInfo, state: GameState[Any]) -> str:
    """The winner's seat, ``draw``, or ``unfinished``."""
    if not state.is_terminal():
        return "unfinished"
    returns = state.returns()
    best = max(returns)
    winners = [i for i, r in enumerate(returns) if r == best]
    return game.seats[winners[0]] if len(winners) == 1 else "draw"


@dataclass
class Problem:
    """Where a record stops being a legal game."""

    line: int
    step: int
    kind: str
    """``wrong-player``, ``illegal-action``, ``wrong-result`` or ``no-result``."""
    detail: str


@dataclass
class ReplayReport:
    """The outcome of replaying a text record: the state reached, the number of actions replayed
    and the first problem (None when sound)."""

    state: GameState[Any]
    steps: int
    problem: Problem | None

    @property
    def sound(self) -> bool:
        """True when the replay found no problem."""
        return self.problem is None


def replay(rec: GameRecord, upto: int | None = None) -> ReplayReport:
    """Replay ``rec`` from the start, checking every action (at most ``upto`` actions).

    Raises :class:`InputError` for an unknown game or option (bad input); a record that
    breaks the rules is reported as a :class:`Problem`, the state left before it."""
    game = get_game(rec.game)
    game.check_options(rec.options)
    state = game.new_game(rec.options)
    for step, move in enumerate(rec.moves):
        if upto is not None and step >= upto:
            return ReplayReport(state, step, None)
        player = state.current_player()
        if player == TERMINAL:
            return ReplayReport(
                state, step, Problem(move.line, step, "illegal-action", "the game is already over")
            )
        expected = seat_of(game, player)
        if move.seat != expected:
            return ReplayReport(
                state,
                step,
                Problem(move.line, step, "wrong-player", f"{expected} is to act, not {move.seat}"),
            )
        try:
            action = state.parse_action(move.text)
        except (IllegalActionError, InputError) as e:
            return ReplayReport(state, step, Problem(move.line, step, "illegal-action", str(e)))
        state.apply_action(action)
    steps = len(rec.moves)
    if rec.result is None and upto is None:
        last = rec.moves[-1].line if rec.moves else 0
        actual = result_of(game, state)
        return ReplayReport(
            state,
            steps,
            Problem(
                last,
                steps,
                "no-result",
                'the record has no Result tag ([Result "..."]): the result it should state '
                f"is {actual}",
            ),
        )
    if rec.result is not None and upto is None:
        actual = result_of(game, state)
        if actual != rec.result:
            last = rec.moves[-1].line if rec.moves else 0
            return ReplayReport(
                state,
                steps,
                Problem(
                    last, steps, "wrong-result", f"the record says {rec.result}, the game {actual}"
                ),
            )
    return ReplayReport(state, steps, None)


class TextRecords:
    """The shared text record (this module) as a :class:`RecordFormat`; ``upto`` counts
    actions."""

    def sniff(self, text: str) -> bool:
        """Whether ``text`` looks like a shared text record."""
        return is_generic_record(text)

    def write(
        self,
        game: GameInfo,
        state: GameState[Any],
        moves: Sequence[tuple[int, str]],
        meta: GameMeta,
    ) -> str:
        """The text record of a finished game: its tags from ``meta`` and one line per action."""
        rec = GameRecord(game.name, dict(meta.options))
        rec.seed = meta.seed
        rec.bots = dict(meta.bots)
        rec.moves = [Move(seat_of(game, player), text) for player, text in moves]
        rec.result = result_of(game, state)
        return rec.dumps()

    def replay(self, text: str, upto: int | None = None) -> Replayed:
        """Replay the record (up to step ``upto``), checking every action; the state reached, the
        result and the first problem if any."""
        rec = GameRecord.loads(text)
        report = replay(rec, upto=upto)
        game = get_game(rec.game)
        result = result_of(game, report.state)
        p = report.problem
        problem = None
        if p is not None:
            problem = FormatProblem(
                p.line, p.kind, p.detail, f"action {p.step + 1}", dataclasses.asdict(p)
            )
        return Replayed(
            game,
            report.state,
            problem,
            {"actions": report.steps, "result": result},
            f"{game.title} record, {report.steps} actions replayed; result {result}.",
        )


TEXT_RECORDS = TextRecords()


def record_format(game: GameInfo) -> RecordFormat:
    """How ``game``'s records are written and replayed: its own format, or the shared text
    record (:data:`TEXT_RECORDS`)."""
    return TEXT_RECORDS if game.records is None else game.records


def detect(text: str, source: str = "") -> RecordFormat:
    """The format of a record: by the file suffix of ``source`` when a game owns it,
    else by what the text looks like. :class:`InputError` names ``source`` when no
    format reads it."""
    games = all_games()
    for game in games:
        if source.endswith(game.suffix):
            return record_format(game)
    seen: list[RecordFormat] = []
    for game in games:
        fmt = record_format(game)
        if fmt not in seen:
            seen.append(fmt)
    # The shared text record has a fixed first line; other formats sniff more loosely.
    seen.sort(key=lambda f: f is not TEXT_RECORDS)
    for fmt in seen:
        if fmt.sniff(text):
            return fmt
    raise InputError(f"{source or 'the input'} is not a game record of any known format")


# -- record file names ---------------------------------------------------------------------
DEFAULT_PREFIX = "game"
"""How a run's record file names begin unless ``--prefix`` says otherwise."""
_PREFIX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def check_prefix(prefix: str) -> str:
    """``prefix`` if it can begin a file name in any folder (letters, digits, ``.``, ``_``,
    ``-``; not starting with a dot or a dash); :class:`InputError` naming it otherwise."""
    if not _PREFIX.match(prefix):
        raise InputError(
            f"--prefix {prefix!r}: a file name's start is letters, digits, '.', '_' or '-' "
            "(beginning with a letter or digit)"
        )
    return prefix


def record_name(seed: int, index: int, suffix: str, prefix: str = DEFAULT_PREFIX) -> str:
    """The file name of game ``index`` of a run with ``seed`` (self-play, referee):
    ``game-7-0003.blg``. The seed is in the name, as it is in the game id (``7-3``), so
    two runs with different seeds never write the same file into one folder; records
    named by older versions (``game-0003.blg``) read as before (nothing reads the name
    but audit's fallback for a record without a ``Game`` tag)."""
    return f"{prefix}-{seed}-{index:04d}{suffix}"


def refuse_existing(paths: Sequence[Path]) -> None:
    """Raise :class:`InputError` naming the first of ``paths`` that exists: a run checks
    every record it would write before its first game, so none is replaced silently."""
    for path in paths:
        if path.exists():
            raise InputError(f"{path} exists: not overwritten (--overwrite replaces the records)")


def write_new(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, which must not exist yet (:class:`InputError` names it if
    another run made it since :func:`refuse_existing` looked)."""
    try:
        with path.open("x", encoding="utf-8") as f:
            f.write(text)
    except FileExistsError:
        raise InputError(
            f"{path} exists: not overwritten (another run wrote it during this one)"
        ) from None
