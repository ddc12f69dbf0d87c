"""The claim checker's routes: the checker at ``/`` (the question in the URL), its
certificate download (``/web/certificate``) and the certificate drop zone (``/web/verify``).

Every answer comes from the project's code, run the way the JSON API runs it: a question is
checked by :class:`~battlejudge.solver.battleline.ClaimQuestion` (its one-line message is
shown in place, status 422; a side still short of cards gets a neutral hint instead,
:func:`still_needed`), decided, proved and DRAT-verified in a worker process of the
service's fair queue within its limits (:func:`battlejudge.apps.claim_work.proved`, with its
cache of verified proofs), logged to the proof log when the service keeps one, and drawn by
the templates. A request from htmx (header ``HX-Request``) gets the checker's fragment only;
any other gets the whole page, so a shared link and a browser without JavaScript see the
same table.
"""

from __future__ import annotations

import json
from typing import Final

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from starlette.datastructures import UploadFile

from battlejudge.apps import claim_work
from battlejudge.apps.routes.common import client, judge
from battlejudge.apps.web import table
from battlejudge.apps.web.pages import MAX_UPLOAD, answer_view, is_fragment, render
from battlejudge.proofs.battleline.certificate import to_file_model
from battlejudge.solver import battleline as bl
from battlejudge.solver.battleline.cards import COLORS
from battlejudge.solver.errors import BattlejudgeError, UndecidedError

router = APIRouter(include_in_schema=False)


async def decide(request: Request, q: bl.ClaimQuestion) -> tuple[bl.ProvedClaim, bool]:
    """Proved and verified in a worker (the fair queue, the time and memory limits),
    and appended to the proof log when the service keeps one, as ``POST /v1/claims``."""
    j = judge(request)
    p, verified = await j.job(
        client(request),
        claim_work.proved,
        q,
        j.config.conflict_limit,
        what="deciding the claim",
    )
    if j.keeps_log:
        await j.record([(p, {})])
    return p, verified


TROOPS: Final = tuple(bl.Card.parse(f"{c}{v}") for c in COLORS for v in range(1, 11))


def _cards(n: int, side: str) -> str:
    return f"{n} more card{'s' if n > 1 else ''} for {side}"


def still_needed(t: table.Table) -> str | None:
    """A neutral hint (``3 more cards for your side``, ``1 more card for theirs``) when the
    table's question cannot be asked yet only because a side is short of cards: your side
    always needs a complete formation, theirs when it is said to have completed first. None
    when something else is wrong (a card twice, two Leaders, too many cards, a bad URL
    value): the question's own message says what, in red. The table is judged complete by
    :class:`~battlejudge.solver.battleline.ClaimQuestion` itself, its short sides filled with
    troops nobody holds, so the rules stay in one place."""
    if t.error is not None:
        return None
    short_mine = max(0, t.size - len(t.mine))
    short_theirs = max(0, t.size - len(t.theirs)) if t.first == "theirs" else 0
    if not short_mine and not short_theirs:
        return None
    used = {*t.mine, *t.theirs, *t.seen}
    spare = [c for c in TROOPS if c not in used]
    try:
        bl.ClaimQuestion(
            mine=(*t.mine, *spare[:short_mine]),
            theirs=(*t.theirs, *spare[short_mine : short_mine + short_theirs]),
            seen=t.seen,
            mud=t.mud,
            fog=t.fog,
            completed_first=t.first or None,
        )
    except ValueError:
        return None
    parts = [_cards(short_mine, "your side")] if short_mine else []
    parts += [_cards(short_theirs, "theirs")] if short_theirs else []
    return ", ".join(parts)


@router.get("/", response_class=HTMLResponse)
async def checker(request: Request) -> Response:
    """The claim checker: the table of the URL's question and, once the question is
    complete, its certified answer."""
    t = table.Table.from_query(request.query_params)
    status, problem, answer = 200, None, None
    hint = (
        f"Tap {t.size} cards for your side (My cards), then theirs and any seen "
        "elsewhere. The answer appears as soon as your side is complete."
    )
    if not t.is_empty or t.error:
        try:
            q = t.question()
        except ValueError as e:
            needed = still_needed(t)
            if needed is None:
                status, problem = 422, str(e)
            else:
                hint = needed
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
        "hint": hint,
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
        status, data = await judge(request).job(
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
        link = table.Table.of_question(q).url()
    return render("_verify.html", 200, problem=None, name=name, result=out, link=link)
