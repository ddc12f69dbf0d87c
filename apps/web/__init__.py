"""The web table, served by ``battlejudge serve`` beside the JSON API (docs/web.md).

Pages: the claim checker at ``/`` (the question in the URL; the answer, the certificate to
download and a drop zone to verify one; :mod:`.routes`), the table viewer at ``/game``
(:mod:`.game_routes`), play at ``/play`` (:mod:`.play_routes`) and the judge's audit at
``/audit``. Work that takes time runs in the service's worker processes, in modules free of
the web stack (:mod:`.game_work`, :mod:`.play_work`, :mod:`.audit_work`). Everything the
pages load comes from this package (``static/``: htmx, vendored from the npm registry, and
the pages' own style and scripts), so they work offline. The pages hold no model of the
rules: every answer is the server's, from the project's own code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

    from battlejudge.apps.adjudicator import Adjudicator


def mount(app: FastAPI, judge: Callable[[], Adjudicator], conflict_limit: int | None) -> None:
    """Add the web pages to the service's ``app``; ``judge`` gives its running
    :class:`~battlejudge.apps.adjudicator.Adjudicator` (the fair queue and worker processes
    every answer is computed in), ``conflict_limit`` the service's limit per question."""
    from battlejudge.apps.web.routes import build_router

    app.include_router(build_router(judge, conflict_limit))
