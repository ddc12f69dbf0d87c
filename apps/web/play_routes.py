"""Play at ``/play``: a whole Battle Line game against one of the service's bots (heuristic,
search, expert) or a friend, on the tables' machinery (:mod:`.tables_routes`).

The form at ``GET /play`` picks your seat, the opponent, the theme and a seed; ``POST /play``
opens a table through :meth:`~battlejudge.apps.tables.room.Tables.create` and sends you to
your seat's page (303 to ``/tables/ID?token=T``), kept in the store, so a reload or the same
link on another device continues the game. Against a friend it shows the table's invite
links instead, since the friend's link is shown only once. Links of the older in-memory
tables (``/play/ID``) answer 404.
"""

from __future__ import annotations

from typing import Final

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from battlejudge.apps.adjudicator import ServiceError
from battlejudge.apps.routes.common import client
from battlejudge.apps.web.pages import render
from battlejudge.apps.web.tables_routes import _tables, invite, one_line, seat_path
from battlejudge.engines.battleline.cards import THEMES
from battlejudge.engines.battleline.state import PLAYERS

BOTS: Final = ("heuristic", "search", "expert")
"""The bots offered (the tables' bots, :data:`battlejudge.apps.tables.work.BOTS`)."""

router = APIRouter(include_in_schema=False)


def _form(status: int = 200, problem: str | None = None) -> Response:
    return render("play.html", status, page="play", bots=BOTS, problem=problem)


@router.get("/play", response_class=HTMLResponse)
async def new_game_form() -> Response:
    """The form that starts a game."""
    return _form()


def new_game_problem(seat: str, opponent: str, theme: str, raw_seed: str) -> str | None:
    """What is wrong with the new game's form (None: nothing)."""
    if seat not in PLAYERS:
        return f"seat must be north or south, got {seat!r:.40}"
    if opponent not in (*BOTS, "friend"):
        return f"opponent must be one of {', '.join(BOTS)} or friend, got {opponent!r:.40}"
    if theme not in THEMES:
        return f"theme must be battleline or nine-circles, got {theme!r:.40}"
    if raw_seed and not raw_seed.isdigit():
        return f"seed must be a whole number, got {raw_seed!r:.40}"
    return None


@router.post("/play")
async def new_game(request: Request) -> Response:
    """Open a table (your seat, the opponent: a bot or ``friend``, the theme, a seed) and
    go to your seat: 303 to ``/tables/ID?token=...`` (with a friend, the invite links)."""
    form = await request.form(max_files=0, max_fields=8)
    seat, opponent = str(form.get("seat", "north")), str(form.get("opponent", "heuristic"))
    theme, raw_seed = str(form.get("theme", "battleline")), str(form.get("seed", "")).strip()
    problem = new_game_problem(seat, opponent, theme, raw_seed)
    if problem is not None:
        return _form(422, problem)
    other = "south" if seat == "north" else "north"
    body = {
        "game": "battleline",
        seat: "human",
        other: "human" if opponent == "friend" else f"bot:{opponent}",
        "options": {"theme": theme},
        **({"seed": int(raw_seed)} if raw_seed else {}),
    }
    try:
        made = await _tables(request).create(body, client(request))
    except ServiceError as e:
        return _form(e.status, one_line(e))
    if opponent == "friend":
        return render("tables.html", 201, page="play", mode="invite", invite=invite(request, made))
    token = made.tokens[seat]
    assert token is not None
    return RedirectResponse(seat_path(made.table_id, token), status_code=303)


@router.get("/play/{table_id}", response_class=HTMLResponse)
async def old_table(table_id: str) -> Response:
    """The in-memory tables of earlier versions are gone: 404, saying where games are now."""
    problem = "no such table: games are at /tables now (start a new one here)"
    return _form(404, problem)
