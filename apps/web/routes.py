"""The web pages' routes: the claim checker at ``/``, its certificate download and the
certificate drop zone, the judge's audit at ``/audit``, and the pages' static files.

Every answer comes from the project's code, run the way the JSON API runs it: a question is
checked by :class:`~battlejudge.solver.battleline.ClaimQuestion` (its one-line message is
shown in place, status 422), decided, proved and DRAT-verified in a worker process of the
service's fair queue within its limits (:func:`battlejudge.apps.claim_work.proved`, with its cache
of verified proofs), logged to the proof log when the
service keeps one, and drawn by the templates. A request from htmx (header ``HX-Request``)
gets the checker's fragment only; any other gets the whole page, so a shared link and a
browser without JavaScript see the same table.
"""

from __future__ import annotations

import json
import logging
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import jinja2
from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, Response
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException

from battlejudge.apps import claim_work
from battlejudge.apps.limits import CLIENT_KEY
from battlejudge.apps.web import audit_work, table
from battlejudge.proofs.battleline.certificate import to_file_model
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import BattlejudgeError, InputError, UndecidedError

if TYPE_CHECKING:
    from battlejudge.apps.adjudicator import Adjudicator

HERE: Final = Path(__file__).parent
STATIC: Final = HERE / "static"
ASSETS: Final = {
    "htmx.min.js": "text/javascript",
    "web.js": "text/javascript",
    "web.css": "text/css",
    "audit.js": "text/javascript",
}
"""The pages' static files (served from the package: nothing comes from a CDN)."""
MAX_UPLOAD: Final = 1 << 20
"""Largest uploaded file read (the service refuses bodies over 1 MiB before this)."""
LONG_WORK: Final = 15.0
"""How many times the service's time limit a page's work made of many questions may take
(an audit re-verifies every certificate of a log; a record's replay re-proves its claims)."""
MAX_GAMES: Final = 64
"""Game records one audit upload may carry."""
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_logger = logging.getLogger(__name__)

_env = jinja2.Environment(
    loader=jinja2.FileSystemLoader(HERE / "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.globals["cell"] = table.cell


def render(template: str, status: int = 200, /, **context: Any) -> HTMLResponse:
    """The template drawn with ``context``, as an HTML response (``Vary: HX-Request``: a
    fragment for htmx, the whole page otherwise)."""
    html = _env.get_template(template).render(**context)
    return HTMLResponse(html, status, headers={"Vary": "HX-Request"})


def client(request: Request) -> str:
    """Who asks, for the fair queue: the API key's name, or the address without keys."""
    name: str = request.scope.get(CLIENT_KEY, "local")
    return name


def is_fragment(request: Request) -> bool:
    """Whether htmx asked (a fragment will do) rather than the browser (the whole page)."""
    h = request.headers
    return h.get("HX-Request") == "true" and h.get("HX-History-Restore-Request") != "true"


def answer_view(p: bl.ProvedClaim, verified: bool) -> dict[str, Any]:
    """What the answer panel shows of a proved claim: the verdict, each side's best
    formation with its wild cards' identities, the explanation sentences, the blocking
    cards (valid) or the witness's added cards (invalid)."""
    q = p.question
    theirs: dict[str, Any]
    if q.theirs_complete:
        f = bl.best_formation(q.theirs, mud=q.mud, fog=q.fog)
        theirs = {"label": f.label, "wilds": f.wild_choices(), "state": "complete"}
    elif p.witness is not None:
        f = p.witness.formation
        theirs = {"label": f.label, "wilds": f.wild_choices(), "state": "can reach"}
    else:
        theirs = {"label": None, "wilds": {}, "state": f"{len(q.theirs)} of {q.size} cards"}
    return {
        "verdict": p.verdict,
        "verified": verified,
        "mine": {"label": p.mine.label, "wilds": p.mine.wild_choices(), "cards": q.mine},
        "theirs": {**theirs, "cards": q.theirs},
        "explanation": p.explanation,
        "blocking": p.blocking,
        "blocking_text": bl.format_cards(p.blocking),
        "witness": None if p.witness is None else p.witness.added,
        "witness_text": "" if p.witness is None else bl.format_cards(p.witness.added),
    }


def audit_view(
    out: dict[str, Any], log_name: str, games: list[str], with_key: bool
) -> dict[str, Any]:
    """What the audit page shows: the report (``battlejudge audit --json``), its summary
    line as the command prints it, the first problem, and the rows with a checker link for
    each claim whose question reads."""
    report = out["report"]
    n = report["records"]
    records = f"{n} record{'s' if n != 1 else ''}"
    if report["ok"]:
        signed = ", signatures good" if report["signatures"]["checked"] else ""
        summary = f"{records}, chain intact{signed}, every certificate verified."
    else:
        k = len(report["problems"])
        summary = f"{records}, {k} problem{'s' if k != 1 else ''}."
    rows = []
    for row in out["rows"]:
        link = None
        if row["kind"] == "claim" and isinstance(row["question"], dict):
            try:
                q = bl.ClaimQuestion.from_json(row["question"])
            except ValueError:
                pass
            else:
                t = table.Table(q.mine, q.theirs, q.seen, q.mud, q.fog, q.completed_first or "")
                link = t.url()
        rows.append({**row, "link": link})
    sig = report["signatures"]
    if sig["checked"]:
        signatures = None
    elif sig["signed"] == 0:
        signatures = "No record is signed."
    else:
        signatures = (
            f"Signatures NOT checked: {sig['signed']} of {n} records are signed; "
            "give the public key to check them."
        )
    return {
        "report": report,
        "json": json.dumps(report, indent=1),
        "summary": summary,
        "first": report["problems"][0] if report["problems"] else None,
        "rows": rows,
        "games": sorted({str(r["game"]) for r in rows if r["game"] is not None}),
        "flags": sorted({int(r["flag"]) for r in rows if isinstance(r["flag"], int)}),
        "log_name": log_name,
        "game_files": games,
        "with_key": with_key,
        "signatures": signatures,
    }


def _unplaced(message: str, folder: str) -> str:
    """``message`` without the folder an upload was checked in: its files are named as
    uploaded (``claims.log``, ``key.pub``), the folder itself *the upload*."""
    return message.replace(f"{folder}/", "").replace(folder, "the upload")


def build_router(judge: Callable[[], Adjudicator], conflict_limit: int | None) -> APIRouter:
    """The pages' routes; ``judge`` gives the running service's :class:`Adjudicator`."""
    router = APIRouter(include_in_schema=False)

    async def decide(request: Request, q: bl.ClaimQuestion) -> tuple[bl.ProvedClaim, bool]:
        """Proved and verified in a worker (the fair queue, the time and memory limits),
        and appended to the proof log when the service keeps one, as ``POST /v1/claims``."""
        j = judge()
        p, verified = await j.job(
            client(request), claim_work.proved, q, conflict_limit, what="deciding the claim"
        )
        if j.keeps_log:
            await j.record([(p, {})])
        return p, verified

    @router.get("/", response_class=HTMLResponse)
    async def checker(request: Request) -> Response:
        """The claim checker: the table of the URL's question and, once the question is
        complete, its certified answer."""
        t = table.Table.from_query(request.query_params)
        status, problem, answer = 200, None, None
        if not t.is_empty or t.error:
            try:
                q = t.question()
            except ValueError as e:
                status, problem = 422, str(e)
            else:
                try:
                    p, verified = await decide(request, q)
                except UndecidedError as e:
                    status, problem = 503, f"undecided: {e}"
                except BattlejudgeError as e:
                    status, problem = 503, f"undecided: {e}"
                else:
                    answer = answer_view(p, verified)
        highlight = set(answer["blocking"] if answer else ())
        added = set(answer["witness"] or () if answer else ())
        context = {
            "t": t,
            "grid": table.grid(t),
            "tactics": table.tactics(t),
            "zones": table.ZONES,
            "zone_names": table.ZONE_NAMES,
            "problem": problem,
            "answer": answer,
            "blocking": highlight,
            "added": added,
            "hint": f"Tap {t.size} cards for your side (My cards), then theirs and any seen "
            "elsewhere. The answer appears as soon as your side is complete.",
        }
        name = "_checker.html" if is_fragment(request) else "checker.html"
        return render(name, status, **context)

    @router.get("/web/certificate")
    async def certificate(request: Request) -> Response:
        """The certificate of the URL's question as a file to keep (the JSON of
        ``battlejudge claim --certificate``; ``battlejudge verify`` checks it)."""
        t = table.Table.from_query(request.query_params)
        try:
            q = t.question()
        except ValueError as e:
            return Response(json.dumps({"error": str(e)}), 422, media_type="application/json")
        try:
            p, _ = await decide(request, q)
        except BattlejudgeError as e:
            body = {"verdict": "undecided", "error": f"undecided: {e}"}
            return Response(json.dumps(body), 503, media_type="application/json")
        data = to_file_model(p.certificate).model_dump(mode="json")
        name = f"claim-{p.verdict}-{p.certificate.question_sha256[:12]}.json"
        return Response(
            json.dumps(data, indent=1),
            media_type="application/json",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    @router.post("/web/verify", response_class=HTMLResponse)
    async def verify(request: Request) -> Response:
        """A dropped certificate file checked as ``battlejudge verify`` does (in a worker,
        within the limits); the result as an HTML fragment, with a link that opens the
        certificate's question in the checker."""
        form = await request.form(max_files=1, max_fields=4)
        upload = form.get("certificate")
        if not isinstance(upload, UploadFile):
            return render("_verify.html", 422, problem="no certificate file was sent")
        body = await upload.read(MAX_UPLOAD + 1)
        name = upload.filename or "the file"
        try:
            status, data = await judge().job(
                client(request),
                claim_work.answer_verify,
                body,
                False,
                what="checking the certificate",
            )
        except BattlejudgeError as e:
            return render("_verify.html", 503, problem=f"{name}: undecided: {e}")
        out = json.loads(data)
        if status != 200:
            return render("_verify.html", status, problem=f"{name}: {out['error']}")
        link = None
        if out["verified"]:
            q = bl.ClaimQuestion.from_json(json.loads(body)["question"])
            link = table.Table(
                q.mine, q.theirs, q.seen, q.mud, q.fog, q.completed_first or ""
            ).url()
        return render("_verify.html", 200, problem=None, name=name, result=out, link=link)

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
        fragment = is_fragment(request)
        template = "_audit.html" if fragment else "audit.html"

        def refused(status: int, message: str) -> Response:
            return render(template, status, page="audit", result=None, problem=message)

        form = await request.form(max_files=MAX_GAMES + 3, max_fields=10)
        log = form.get("log")
        if not isinstance(log, UploadFile) or not log.filename:
            return refused(422, "no proof log was sent: choose the log file to audit")
        games = [g for g in form.getlist("games") if isinstance(g, UploadFile) and g.filename]
        key = form.get("pubkey")
        has_key = isinstance(key, UploadFile) and bool(key.filename)
        checkpoint = form.get("checkpoint")
        vkeys = form.get("witness_keys")
        witness_keys = vkeys.split() if isinstance(vkeys, str) else []
        needed_text = form.get("witnesses_needed")
        needed = None
        if isinstance(needed_text, str) and needed_text.strip():
            if not needed_text.strip().isdigit() or len(needed_text.strip()) > 3:
                return refused(422, f"witnesses needed must be a number, got {needed_text[:20]!r}")
            needed = int(needed_text)
        with tempfile.TemporaryDirectory(prefix="battlejudge-audit-") as folder:
            base = Path(folder)
            (base / audit_work.LOG_NAME).write_bytes(await log.read(MAX_UPLOAD))
            if isinstance(checkpoint, UploadFile) and checkpoint.filename:
                note = await checkpoint.read(MAX_UPLOAD)
                (base / f"{audit_work.LOG_NAME}.checkpoint").write_bytes(note)
            if has_key and isinstance(key, UploadFile):
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
            try:
                out = await judge().job(
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

    from battlejudge.apps.web.game_routes import add_game_routes
    from battlejudge.apps.web.play_routes import add_play_routes

    add_game_routes(router, judge, conflict_limit)
    add_play_routes(router, judge)

    @router.get("/static/web/{name}")
    async def asset(name: str) -> Response:
        """The pages' own scripts and styles, from the installed package."""
        if name not in ASSETS:
            raise StarletteHTTPException(404)
        return FileResponse(STATIC / name, media_type=ASSETS[name])

    return router
