"""Auditing a proof log against game records (``battlejudge audit LOG --games DIR``, the
option repeated for more folders or given glob patterns).

Every logged question that names a game must be exactly a question that game's position
asked at that turn (for that player and flag), every claim made in every game must be
in the log with the same question, and every record must replay as a legal game with the
result its ``Result`` tag states (a forfeit stated by its last line). Game ids are the
records' ``Game`` tag (or, without one, the file name's stem). Records from one folder are
named by their file name; from several, by their path, so that records of the same file
name in two folders stay apart. One game id in two records is a problem
(``duplicate-game``): the log could not tell them apart.

It replays Battle Line records with the engine, so it lives over the engines rather than
in ``proofs`` (which may import only the solver).
"""

from __future__ import annotations

import glob
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from battlejudge.engines.battleline.record import GameRecord, RecordError, replay
from battlejudge.engines.battleline.state import FLAGS, PLAYERS, BattleLineState
from battlejudge.engines.records import header_block, header_name
from battlejudge.solver.errors import BattlejudgeError, InputError

QUESTIONS_KEPT = 4096
"""How many logged questions' canonical forms :func:`check_games` keeps at a time."""


class UnsoundGame(BattlejudgeError):
    """A game record that does not replay as a legal game with the result it states."""


@dataclass(frozen=True)
class GameProblem:
    """One disagreement between a game record and the proof log: the log record concerned (-1
    when a claim of the game is missing from the log), its kind and a sentence saying what
    differs."""

    record: int
    """The log record's index, or -1 for a claim missing from the log."""
    kind: str
    detail: str


@dataclass
class _Game:
    path: Path
    name: str
    """How problems name the record: its file name, or its path when records come from
    several folders."""
    claims: dict[tuple[int, str, int], str]
    """(turn, player, flag 1-based) -> canonical question of each claim made."""
    asked: dict[tuple[int, str, int], set[str]]
    """Every question the position asked during a turn, per player and flag."""
    headers: list[str]
    """The record's header lines as written (what a game record of the log binds)."""


def _canonical(question: dict[str, Any]) -> str:
    from battlejudge.solver import battleline as bl

    return bl.ClaimQuestion.from_json(question).canonical()


def _canonical_once(question: Any, known: dict[str, str | ValueError]) -> str | ValueError:
    """:func:`_canonical` (or its error), remembered by the question's JSON."""
    try:
        key = json.dumps(question, sort_keys=True)
    except (TypeError, ValueError):
        key = None
    if key is not None and key in known:
        return known[key]
    try:
        found: str | ValueError = _canonical(question)
    except ValueError as e:
        found = e
    if key is not None:
        if len(known) >= QUESTIONS_KEPT:  # bounded: forget them all, and start again
            known.clear()
        known[key] = found
    return found


def _load_game(path: Path, name: str) -> tuple[str, _Game]:
    text = path.read_text(encoding="utf-8")
    rec = GameRecord.loads(text)
    game_id = rec.tags.get("Game", path.stem)
    asked: dict[tuple[int, str, int], set[str]] = defaultdict(set)

    def look(state: BattleLineState, turn: int) -> None:
        p = state.to_move
        for i in range(FLAGS):
            f = state.flags[i]
            if f.claimed_by < 0 and len(f.sides[p]) == f.size:
                asked[(turn, PLAYERS[p], i + 1)].add(state.claim_question(i + 1, p).canonical())

    report = replay(rec, on_step=look)
    p = report.problem
    if p is not None:
        kind = p.kind.replace("-", " ")
        raise UnsoundGame(f"{name}: turn {p.turn} (line {p.line}): {kind}: {p.detail}")
    claims: dict[tuple[int, str, int], str] = {
        (c.turn, PLAYERS[c.player], c.flag): c.proof.question.canonical()
        for c in report.state.claims
    }
    return game_id, _Game(path, name, claims, asked, header_block(text))


def _header_problems(index: int, game_id: str, game: _Game, logged: list[str]) -> list[GameProblem]:
    """Each header of the record that differs from the header block the log bound, named."""
    mine = {header_name(line): line for line in game.headers}
    theirs = {header_name(line): line for line in logged}
    out = []
    for name in sorted(mine.keys() | theirs.keys()):
        a, b = mine.get(name), theirs.get(name)
        if a == b:
            continue
        if b is None:
            what = f"{a} is in the record, not in the log"
        elif a is None:
            what = f"{b} is in the log, not in the record"
        else:
            what = f"the record says {a}, the log {b}"
        out.append(
            GameProblem(
                index,
                "header-mismatch",
                f"game {game_id} ({game.name}): header {name}: {what}",
            )
        )
    return out


def check_games(
    records: Iterable[Any], games: Path | Sequence[Path], notes: list[str] | None = None
) -> list[GameProblem]:
    """Cross-check log records (objects with ``game``, ``turn``, ``player``, ``flag``,
    ``question``, ``verdict``, and their ``index``: the 0-based line, by default their
    place among the records) against every ``.blg`` record of ``games``: a folder, or
    folders and record files (:func:`find_records` makes them from the command's
    ``--games``), audited together.

    The records are gone through once, in order (a log's records read again as they come,
    :class:`~battlejudge.proofs.audit.LoggedRecords`); what is kept is each game's claims
    and questions, the logged claims found in them, and the canonical form of the last
    :data:`QUESTIONS_KEPT` questions logged (a game asks the same ones again).

    A game record of the log (its header block, format 3) must match the record file's
    headers, each one (``header-mismatch`` names the header); a game whose headers the
    log does not bind (logged before format 3) is told in ``notes``, not a problem."""
    problems: list[GameProblem] = []
    sources = [games] if isinstance(games, Path) else list(games)
    where = _where(sources)
    found_games = _load_games(_record_files(sources), problems)
    logged: set[tuple[str, int, str, int]] = set()
    canonical: dict[str, str | ValueError] = {}  # question's JSON -> canonical, or why not
    bound: set[str] = set()
    for position, r in enumerate(records):
        if r.game is None:
            continue
        index = getattr(r, "index", position)
        found = found_games.get(r.game)
        if getattr(r, "kind", "claim") == "game":
            bound.add(r.game)
        if found is None:
            missing = f"game {r.game!r} has no record in {where}"
            problems.append(GameProblem(index, "no-game-record", missing))
        elif getattr(r, "kind", "claim") == "game":
            problems += _header_problems(index, r.game, found, r.headers or [])
        else:
            problem = _claim_problem(index, r, found, canonical)
            if problem is not None:
                problems.append(problem)
            elif r.verdict == "valid":  # a claim of the game, found in the log
                logged.add((r.game, r.turn, r.player, r.flag))
    unbound = sorted(g for g in found_games if g not in bound)
    if notes is not None and unbound:
        notes.append(_unbound_note(unbound))
    for game_id, game in found_games.items():
        for turn, player, flag in sorted(game.claims):
            if (game_id, turn, player, flag) not in logged:
                problems.append(
                    GameProblem(
                        -1,
                        "missing-claim",
                        f"game {game_id} ({game.name}) turn {turn}: "
                        f"{player}'s claim of flag {flag} is not in the log",
                    )
                )
    return problems


def find_records(specs: Sequence[str], option: str = "--games") -> list[Path]:
    """The folders and ``.blg`` records named by ``specs``: each a folder, a record, or a
    glob pattern (``runs/*``, ``runs/**/game-7-*.blg``) whose folders and ``.blg`` files
    count, in order, each once. :class:`InputError` names a missing path, a pattern that
    matches nothing it could use, and a file that is no ``.blg`` record (``option`` says
    where the spec came from)."""
    found: dict[Path, None] = {}
    for spec in specs:
        if glob.has_magic(spec):
            matched = [Path(m) for m in sorted(glob.glob(spec, recursive=True))]
            usable = [m for m in matched if m.is_dir() or _is_record(m)]
            if not usable:
                raise InputError(f"{option} {spec!r}: the pattern matches no folder or .blg record")
        else:
            path = Path(spec)
            if not path.exists():
                raise InputError(f"{option} {spec!r}: no such folder")
            if not (path.is_dir() or _is_record(path)):
                raise InputError(f"{option} {spec!r}: not a folder or a .blg record")
            usable = [path]
        found.update(dict.fromkeys(usable))
    return list(found)


def _is_record(path: Path) -> bool:
    return path.is_file() and path.suffix == ".blg"


def _record_files(sources: Sequence[Path]) -> list[Path]:
    """The ``.blg`` records of ``sources`` (folders: their records, by name), each once."""
    files: dict[Path, None] = {}
    for source in sources:
        inside = sorted(source.glob("*.blg")) if source.is_dir() else [source]
        files.update(dict.fromkeys(inside))
    return list(files)


def _where(sources: Sequence[Path]) -> str:
    """The records' places for a message: the folders and files, the first three named."""
    names = [str(s) for s in sources]
    if len(names) <= 3:
        return ", ".join(names) or "no folder"
    return f"{', '.join(names[:3])} and {len(names) - 3} more"


def _load_games(paths: Sequence[Path], problems: list[GameProblem]) -> dict[str, _Game]:
    """Every record of ``paths`` replayed, by game id; a record that does not read or
    replay is a problem (``bad-game``, ``unsound-game``) added to ``problems``, and so is
    a game id a record before it has already (``duplicate-game``: the first is kept).
    Records of one folder are named by their file name, of several by their path."""
    games: dict[str, _Game] = {}
    one_folder = len({path.parent for path in paths}) <= 1
    for path in paths:
        name = path.name if one_folder else str(path)
        try:
            game_id, game = _load_game(path, name)
        except UnsoundGame as e:
            problems.append(GameProblem(-1, "unsound-game", str(e)))
            continue
        except (RecordError, BattlejudgeError, ValueError) as e:
            problems.append(GameProblem(-1, "bad-game", f"{name}: {e}"))
            continue
        first = games.get(game_id)
        if first is not None:
            problems.append(
                GameProblem(
                    -1,
                    "duplicate-game",
                    f"game {game_id} is in {first.name} and in {name}: the log cannot tell "
                    f"their claims apart (only {first.name} is checked)",
                )
            )
            continue
        games[game_id] = game
    return games


def _claim_problem(
    index: int, r: Any, game: _Game, canonical: dict[str, str | ValueError]
) -> GameProblem | None:
    """What is wrong with logged claim ``r`` of ``game``: ``question-mismatch`` or
    ``not-in-game``; None for a valid claim the game made with that very question, or a
    refused claim whose question the position asked that turn."""
    where = (r.turn, r.player, r.flag)
    question = _canonical_once(r.question, canonical)
    if isinstance(question, ValueError):
        return GameProblem(index, "question-mismatch", f"unreadable question: {question}")
    place = f"game {r.game} turn {r.turn} {r.player} flag {r.flag}"
    if r.verdict == "valid":
        made = game.claims.get(where)
        if made is None:
            return GameProblem(index, "not-in-game", f"{place}: no such claim in the game record")
        if made != question:
            return GameProblem(
                index,
                "question-mismatch",
                f"{place}: the logged question is not the one the position asks",
            )
        return None
    if question not in game.asked.get(where, set()):
        return GameProblem(
            index,
            "question-mismatch",
            f"{place}: the refused claim's question is not one the position asked that turn",
        )
    return None


def _unbound_note(unbound: list[str]) -> str:
    """The note naming the games whose headers the log does not bind (the first five)."""
    shown = ", ".join(unbound[:5]) + (f" and {len(unbound) - 5} more" if len(unbound) > 5 else "")
    return (
        f"the headers of {len(unbound)} game record{'s' if len(unbound) != 1 else ''} are "
        f"not bound by the log (logged before game records, format 3): {shown}"
    )
