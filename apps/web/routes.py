"""The web pages' router, as :func:`battlejudge.apps.service.create_app` includes it: the
claim checker (:mod:`.checker_routes`), the judge's audit (:mod:`.audit_routes`), the table
viewer (:mod:`.game_routes`), play (:mod:`.play_routes`), the tables' lobby and pages
(:mod:`.tables_routes`), and the pages' static files."""

from __future__ import annotations

from typing import Final

from fastapi import APIRouter
from fastapi.responses import FileResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from battlejudge.apps.web import (
    audit_routes,
    checker_routes,
    game_routes,
    play_routes,
    tables_routes,
)
from battlejudge.apps.web.pages import HERE

STATIC: Final = HERE / "static"
ASSETS: Final = {
    "htmx.min.js": "text/javascript",
    "web.js": "text/javascript",
    "web.css": "text/css",
    "audit.js": "text/javascript",
    "tables.js": "text/javascript",
}
"""The pages' static files (served from the package: nothing comes from a CDN)."""

router = APIRouter(include_in_schema=False)
for _pages in (checker_routes, audit_routes, game_routes, play_routes, tables_routes):
    router.include_router(_pages.router)


@router.get("/static/web/{name}")
async def asset(name: str) -> Response:
    """The pages' own scripts and styles, from the installed package."""
    if name not in ASSETS:
        raise StarletteHTTPException(404)
    return FileResponse(STATIC / name, media_type=ASSETS[name])
