"""The web pages' routes: the claim checker at ``/``, its certificate download and the
certificate drop zone, and the pages' static files.

Every answer comes from the project's code, run the way the JSON API runs it: a question is
checked by :class:`~battlejudge.solver.battleline.ClaimQuestion` (its one-line message is
shown in place, status 422), decided, proved and DRAT-verified in a worker process of the
service's fair queue within its limits (:func:`battlejudge.apps.jobs.proved`, with its cache
of verified proofs), logged to the proof log when the
service keeps one, and drawn by the templates. A request from htmx (header ``HX-Request``)
gets the checker's fragment only; any other gets the whole page, so a shared link and a
browser without JavaScript see the same table.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import jinja2
from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, Response
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException

from battlejudge.apps import jobs
from battlejudge.apps.limits import CLIENT_KEY
from battlejudge.apps.web import table
from battlejudge.proofs.battleline.certificate import to_file_model
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import BattlejudgeError, UndecidedError

if TYPE_CHECKING:
    from battlejudge.apps.service import Adjudicator

HERE: Final = Path(__file__).parent
STATIC: Final = HERE / "static"
ASSETS: Final = {
    "htmx.min.js": "text/javascript",
    "web.js": "text/javascript",
    "web.css": "text/css",
}
"""The pages' static files (served from the package: nothing comes from a CDN)."""
MAX_UPLOAD: Final = 1 << 20
"""Largest uploaded file read (the service refuses bodies over 1 MiB before this)."""
_logger = logging.getLogger(__name__)

_env = jinja2.Environment(
    loader=jinja2.FileSystemLoader(HERE / "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def render(template: str, status: int = 200, /, **context: Any) -> HTMLResponse:
    """The template drawn with ``context``, as an HTML response (``Vary: HX-Request``: a
    fragment for htmx, the whole page otherwise)."""
    html = _env.get_template(template).render(**context)
    return HTMLResponse(html, status, headers={"Vary": "HX-Request"})


def _client(request: Request) -> str:
    name: str = request.scope.get(CLIENT_KEY, "local")
    return name


def _is_fragment(request: Request) -> bool:
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


def build_router(judge: Callable[[], Adjudicator], conflict_limit: int | None) -> APIRouter:
    """The pages' routes; ``judge`` gives the running service's :class:`Adjudicator`."""
    router = APIRouter(include_in_schema=False)

    async def decide(request: Request, q: bl.ClaimQuestion) -> tuple[bl.ProvedClaim, bool]:
        """Proved and verified in a worker (the fair queue, the time and memory limits),
        and appended to the proof log when the service keeps one, as ``POST /v1/claims``."""
        j = judge()
        p, verified = await j.job(
            _client(request), jobs.proved, q, conflict_limit, what="deciding the claim"
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
            "cell": table.cell,
            "zones": table.ZONES,
            "zone_names": table.ZONE_NAMES,
            "problem": problem,
            "answer": answer,
            "blocking": highlight,
            "added": added,
        }
        name = "_checker.html" if _is_fragment(request) else "checker.html"
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
                _client(request),
                jobs.answer_verify,
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

    @router.get("/static/web/{name}")
    async def asset(name: str) -> Response:
        """The pages' own scripts and styles, from the installed package."""
        if name not in ASSETS:
            raise StarletteHTTPException(404)
        return FileResponse(STATIC / name, media_type=ASSETS[name])

    return router
