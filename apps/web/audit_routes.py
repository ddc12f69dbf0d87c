"""The judge's audit at ``/audit``: a proof log uploaded (optionally its checkpoint, a public
key, witness keys and game records), audited as ``battlejudge audit --json`` does in a
worker of the service within its limits (:mod:`.audit_work`), drawn as a table with a
checker link for each claim."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any, Final

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from starlette.datastructures import FormData, UploadFile

from battlejudge.apps.routes.common import client, judge
from battlejudge.apps.web import audit_work, table
from battlejudge.apps.web.pages import LONG_WORK, MAX_UPLOAD, is_fragment, render
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import BattlejudgeError, InputError, UndecidedError

MAX_GAMES: Final = 64
"""Game records one audit upload may carry."""
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")

router = APIRouter(include_in_schema=False)


@router.get("/audit", response_class=HTMLResponse)
async def audit_form() -> Response:
    """The judge's audit: a form to upload a proof log, optionally its checkpoint, a
    public key and game records."""
    return render("audit.html", page="audit", result=None, problem=None)


@router.post("/audit", response_class=HTMLResponse)
async def audit(request: Request) -> Response:
    """The uploaded log audited as ``battlejudge audit --json [--pubkey] [--games]``
    does, in a worker within the service's limits, drawn as a table (htmx gets the
    result alone)."""
    template = "_audit.html" if is_fragment(request) else "audit.html"

    def refused(status: int, message: str) -> Response:
        return render(template, status, page="audit", result=None, problem=message)

    form = await request.form(max_files=MAX_GAMES + 3, max_fields=10)
    log = form.get("log")
    if not isinstance(log, UploadFile) or not log.filename:
        return refused(422, "no proof log was sent: choose the log file to audit")
    games = [g for g in form.getlist("games") if isinstance(g, UploadFile) and g.filename]
    key = form.get("pubkey")
    has_key = isinstance(key, UploadFile) and bool(key.filename)
    vkeys = form.get("witness_keys")
    witness_keys = vkeys.split() if isinstance(vkeys, str) else []
    needed_text = form.get("witnesses_needed")
    needed = None
    if isinstance(needed_text, str) and needed_text.strip():
        if not needed_text.strip().isdigit() or len(needed_text.strip()) > 3:
            return refused(422, f"witnesses needed must be a number, got {needed_text[:20]!r}")
        needed = int(needed_text)
    with tempfile.TemporaryDirectory(prefix="battlejudge-audit-") as folder:
        await _save_upload(Path(folder), form, log, games)
        try:
            out = await judge(request).job(
                client(request),
                audit_work.audit_folder,
                folder,
                has_key,
                bool(games),
                witness_keys[:16],
                needed,
                what="auditing the log",
                scale=LONG_WORK,
            )
        except UndecidedError as e:
            why = f"the audit did not finish within the service's limits: {e}"
            return refused(503, _unplaced(why, folder))
        except (InputError, ValueError) as e:
            return refused(422, _unplaced(str(e), folder))
        except OSError as e:
            return refused(422, f"the upload cannot be read: {e.strerror}")
        except BattlejudgeError as e:
            return refused(503, _unplaced(f"the audit did not finish: {e}", folder))
    result = audit_view(out, log.filename, [g.filename or "" for g in games], has_key)
    return render(template, page="audit", result=result, problem=None)


async def _save_upload(
    base: Path, form: FormData, log: UploadFile, games: list[UploadFile]
) -> None:
    """The uploaded files in the folder :func:`~.audit_work.audit_folder` audits: the log,
    its checkpoint and the public key (when sent) under their fixed names, the game records
    under safe names of their own."""
    (base / audit_work.LOG_NAME).write_bytes(await log.read(MAX_UPLOAD))
    checkpoint = form.get("checkpoint")
    if isinstance(checkpoint, UploadFile) and checkpoint.filename:
        note = await checkpoint.read(MAX_UPLOAD)
        (base / f"{audit_work.LOG_NAME}.checkpoint").write_bytes(note)
    key = form.get("pubkey")
    if isinstance(key, UploadFile) and key.filename:
        (base / audit_work.KEY_NAME).write_bytes(await key.read(MAX_UPLOAD))
    if games:
        (base / audit_work.GAMES_DIR).mkdir()
        for i, g in enumerate(games):
            stem = _SAFE_NAME.sub("-", Path(g.filename or "").stem).strip(".-")
            name = f"{stem or f'game-{i + 1}'}.blg"
            target = base / audit_work.GAMES_DIR / name
            if target.exists():
                target = target.with_name(f"{stem}-{i + 1}.blg")
            target.write_bytes(await g.read(MAX_UPLOAD))


def _unplaced(message: str, folder: str) -> str:
    """``message`` without the folder an upload was checked in: its files are named as
    uploaded (``claims.log``, ``key.pub``), the folder itself *the upload*."""
    return message.replace(f"{folder}/", "").replace(folder, "the upload")


def audit_view(
    out: dict[str, Any], log_name: str, games: list[str], with_key: bool
) -> dict[str, Any]:
    """What the audit page shows: the report (``battlejudge audit --json``), its summary
    line as the command prints it, the first problem, and the rows with a checker link for
    each claim whose question reads."""
    report = out["report"]
    rows = [{**row, "link": _checker_link(row)} for row in out["rows"]]
    return {
        "report": report,
        "json": json.dumps(report, indent=1),
        "summary": _summary(report),
        "first": report["problems"][0] if report["problems"] else None,
        "rows": rows,
        "games": sorted({str(r["game"]) for r in rows if r["game"] is not None}),
        "flags": sorted({int(r["flag"]) for r in rows if isinstance(r["flag"], int)}),
        "log_name": log_name,
        "game_files": games,
        "with_key": with_key,
        "signatures": _signatures(report),
    }


def _summary(report: dict[str, Any]) -> str:
    """The audit's summary line, as ``battlejudge audit`` prints it."""
    n = report["records"]
    records = f"{n} record{'s' if n != 1 else ''}"
    if report["ok"]:
        signed = ", signatures good" if report["signatures"]["checked"] else ""
        return f"{records}, chain intact{signed}, every certificate verified."
    k = len(report["problems"])
    return f"{records}, {k} problem{'s' if k != 1 else ''}."


def _checker_link(row: dict[str, Any]) -> str | None:
    """The checker's link to a logged claim's question (None for other records and for a
    question that does not read)."""
    if row["kind"] != "claim" or not isinstance(row["question"], dict):
        return None
    try:
        q = bl.ClaimQuestion.from_json(row["question"])
    except ValueError:
        return None
    return table.Table.of_question(q).url()


def _signatures(report: dict[str, Any]) -> str | None:
    """What the page says of unchecked signatures (None when they were checked)."""
    sig = report["signatures"]
    if sig["checked"]:
        return None
    if sig["signed"] == 0:
        return "No record is signed."
    return (
        f"Signatures NOT checked: {sig['signed']} of {report['records']} records are signed; "
        "give the public key to check them."
    )
