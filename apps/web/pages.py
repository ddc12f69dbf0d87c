"""What the web pages' routers share: the templates (:func:`render`), whether htmx asked
(:func:`is_fragment`), the answer panel of a proved claim (:func:`answer_view`) and the
limits of the pages' work and uploads."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import jinja2
from fastapi import Request
from fastapi.responses import HTMLResponse

from battlejudge.apps.web import table
from battlejudge.solver import battleline as bl

HERE: Final = Path(__file__).parent
MAX_UPLOAD: Final = 1 << 20
"""Largest uploaded file read (the service refuses bodies over 1 MiB before this)."""
LONG_WORK: Final = 15.0
"""How many times the service's time limit a page's work made of many questions may take
(an audit re-verifies every certificate of a log; a record's replay re-proves its claims)."""

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
