"""The judge's audit as the web page runs it in a worker process (module-level, so it
pickles; free of the web stack, so a worker imports only the audit and the rules).

The report is :func:`battlejudge.proofs.audit.audit_log`'s, the one ``battlejudge audit
--json`` prints (its ``to_json``), with ``--games`` done by
:func:`battlejudge.apps.audit_games.check_games` as the command does; this adds one row a
record for the page's table.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from battlejudge.apps.audit_games import check_games
from battlejudge.proofs.audit import audit_log
from battlejudge.proofs.keys import load_public_key
from battlejudge.proofs.log import LogRecord, Problem
from battlejudge.proofs.witness import parse_witness_key
from battlejudge.proofs.witnessing import cosignature_problem
from battlejudge.solver.errors import InputError

LOG_NAME: Final = "claims.log"
"""The uploaded log's name in the audit's folder (its checkpoint: ``claims.log.checkpoint``)."""
KEY_NAME: Final = "key.pub"
GAMES_DIR: Final = "games"


def audit_folder(
    folder: str,
    with_key: bool,
    with_games: bool,
    witness_keys: Sequence[str] = (),
    witnesses_needed: int | None = None,
) -> dict[str, Any]:
    """Audit ``folder``/claims.log (and its checkpoint when there), with the public key
    ``key.pub`` when ``with_key`` and against the ``games/*.blg`` records when
    ``with_games``: ``{"report": the JSON of battlejudge audit --json, "rows": [...]}``,
    a row a record (its place, game, turn, player, flag, verdict, question, and its first
    problem or None). With ``witness_keys`` (verifier keys), a checkpoint without
    ``witnesses_needed`` (all by default) valid cosignatures of them is a problem, as
    ``audit --witness-key`` reports it. Raises ``OSError`` or :class:`InputError` for a
    file that is not a proof log or a key, as the command exits 2 for them."""
    base = Path(folder)
    key = load_public_key(base / KEY_NAME) if with_key else None
    witnesses = [parse_witness_key(k, "witness key") for k in witness_keys]
    needed = len(witnesses) if witnesses_needed is None else witnesses_needed
    if needed > len(witnesses):
        raise InputError(f"{needed} witness cosignatures needed but {len(witnesses)} keys given")
    checks = []
    notes: list[str] = []
    if with_games:
        games = base / GAMES_DIR

        def against_games(records: Any) -> list[Problem]:
            found = check_games(records, games, notes)
            return [Problem(p.record, p.kind, p.detail) for p in found]

        checks.append(against_games)
    report = audit_log(base / LOG_NAME, key, checks=checks)
    if witnesses:
        note = base / f"{LOG_NAME}.checkpoint"
        text = note.read_text("utf-8", "replace") if note.exists() else None
        problem = cosignature_problem(text, witnesses, needed, len(report.records))
        if problem is not None:
            report.problems.append(problem)
    first: dict[int, Problem] = {}
    for p in report.problems:
        first.setdefault(p.record, p)
    rows = [_row(r, first.get(r.index)) for r in report.records]
    out = report.to_json()
    if with_games:
        out["notes"] = notes
    return {"report": out, "rows": rows}


def _row(r: LogRecord, problem: Problem | None) -> dict[str, Any]:
    data = r.data
    return {
        "record": r.index,
        "seq": data.get("seq"),
        "kind": r.kind,
        "game": data.get("game"),
        "turn": data.get("turn"),
        "player": data.get("player"),
        "flag": data.get("flag"),
        "verdict": data.get("verdict"),
        "question": data.get("question"),
        "problem": None if problem is None else problem.to_json(),
    }
