"""The tables' pages: the lobby (``/tables``: open a table, share its invite links, watch the
recent ones), the table page of each seat (``/tables/ID?token=T``) and of a spectator
(``/tables/ID``), and the forms that act and resign (``POST /tables/ID/act``, ``/resign``).

Every page is drawn from the viewer's view alone (:meth:`~battlejudge.apps.tables.room.
Tables.view`, the JSON the API gives that viewer), never from the game: the service's
process holds no game, and no page can show a hand but its own seat's. The table lives in
the store, so a reload, or the same link on another device, continues the game; the page
stays live through the events stream (``static/web/tables.js`` asks htmx to redraw the
table's fragment when a newer version is announced). Each seat sees the opponent at the
top and itself at the bottom, next to its hand; a spectator sees north on top.
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from battlejudge.apps.adjudicator import ServiceError
from battlejudge.apps.routes.common import client, running_tables
from battlejudge.apps.tables.room import SEATS, Made, Tables
from battlejudge.apps.web.game_routes import face
from battlejudge.apps.web.pages import is_fragment, render
from battlejudge.engines.battleline import cards as card_codes
from battlejudge.engines.battleline.actions import (
    CLAIM,
    DESERTER,
    PLAY,
    REDEPLOY,
    SCOUT,
    TRAITOR,
    Action,
)
from battlejudge.engines.battleline.cards import FLAG_WORD, parse_card
from battlejudge.solver.errors import InputError

KINDS: Final = ("human", "bot:heuristic", "bot:search", "bot:expert")
"""Who may sit at a seat: a person, or one of the service's bots."""
CHOICES: Final[dict[str, tuple[str, ...]]] = {
    "theme": ("battleline", "nine-circles"),
    "deck": ("full", "troops"),
    "claim_timing": ("standard", "advanced"),
    "environment_removable": ("false", "true"),
    "stalemate": ("dead", "idle"),
}
"""The lobby's game options and their values, the first being the default (the engine's
house rules, docs/rulings.md)."""
_GUILE: Final = {
    SCOUT: card_codes.SCOUT,
    REDEPLOY: card_codes.REDEPLOY,
    DESERTER: card_codes.DESERTER,
    TRAITOR: card_codes.TRAITOR,
}
"""The tactic in hand that each guile action plays."""

router = APIRouter(include_in_schema=False)


def _tables(request: Request) -> Tables:
    found = running_tables(request.app)
    if found is None:
        raise ServiceError(404, {"error": "this service keeps no tables"})
    return found


def one_line(e: ServiceError) -> str:
    """An error answer's message on one line (the page shows it in place)."""
    return " ".join(str(e.body.get("error", e)).split())


# -- the lobby -------------------------------------------------------------------------------
async def _lobby(request: Request, status: int = 200, **extra: Any) -> Response:
    """The lobby page: the form (as last sent, with ``problem``) and the recent tables."""
    try:
        recent = await _tables(request).recent(20)
    except ServiceError as e:
        recent, extra["problem"] = [], extra.get("problem") or one_line(e)
    context: dict[str, Any] = {
        "page": "tables",
        "mode": "lobby",
        "kinds": KINDS,
        "choices": CHOICES,
        "sent": {},
        "problem": None,
        "recent": recent,
        **extra,
    }
    return render("tables.html", status, **context)


@router.get("/tables", response_class=HTMLResponse)
async def lobby(request: Request) -> Response:
    """The lobby: open a table (each seat a person or a bot, the theme, deck, claim
    timing, house rules, clock and seed) and the tables changed most recently."""
    return await _lobby(request)


def new_table_body(form: dict[str, str]) -> dict[str, Any]:
    """The ``POST /v1/tables`` body of the lobby's form; :class:`InputError` naming a
    value the form cannot send (the service checks the rest and names it)."""
    body: dict[str, Any] = {
        "game": "battleline",
        "north": form.get("north", "human"),
        "south": form.get("south", "human"),
        "options": {k: form.get(k) or v[0] for k, v in CHOICES.items()},
    }
    minutes, increment = form.get("minutes", "").strip(), form.get("increment", "").strip()
    if minutes or increment:
        body["clock"] = {
            "minutes": _number(minutes or "0", "minutes"),
            "increment": _number(increment or "0", "seconds per move"),
        }
    seed = form.get("seed", "").strip()
    if seed:
        if not seed.isdigit():
            raise InputError(f"seed must be a whole number, got {seed!r:.40}")
        body["seed"] = int(seed)
    return body


def _number(text: str, name: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{name} must be a number, got {text!r:.40}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise InputError(f"{name} must be a number, got {text!r:.40}")
    return value


@router.post("/tables", response_class=HTMLResponse)
async def new_table(request: Request) -> Response:
    """Open a table from the lobby's form (422 with the one-line reason on the form), and
    show each person's seat link to share, with a button to sit at it."""
    raw = await request.form(max_files=0, max_fields=16)
    form = {k: str(v) for k, v in raw.items()}
    try:
        body = new_table_body(form)
        made = await _tables(request).create(body, client(request))
    except InputError as e:
        return await _lobby(request, 422, sent=form, problem=str(e))
    except ServiceError as e:
        return await _lobby(request, e.status, sent=form, problem=one_line(e))
    return render("tables.html", 201, page="tables", mode="invite", invite=invite(request, made))


def invite(request: Request, made: Made) -> dict[str, Any]:
    """What the page of a new table shows: each seat's kind and, for a person's seat, its
    link (the full URL, to share) and path (to sit there), and the spectators' link."""
    base = str(request.base_url).rstrip("/")
    seats = []
    for seat in SEATS:
        token = made.tokens[seat]
        path = None if token is None else seat_path(made.table_id, token)
        seats.append(
            {
                "seat": seat,
                "kind": made.seats[seat],
                "path": path,
                "url": None if path is None else base + path,
            }
        )
    watch = seat_path(made.table_id, None)
    return {"table": made.table_id, "seats": seats, "watch": base + watch, "watch_path": watch}


def seat_path(table_id: str, token: str | None, **params: str) -> str:
    """The page of a seat (a spectator's without a token), with extra query ``params``."""
    query = {"token": token} if token else {}
    query.update({k: v for k, v in params.items() if v})
    return f"/tables/{quote(table_id)}" + (f"?{urlencode(query)}" if query else "")


# -- the table page --------------------------------------------------------------------------
def _card(name: str, theme: str, **extra: Any) -> dict[str, Any]:
    """A card as the page draws it: its name in the view's notation and its face."""
    return {"name": name, **face(parse_card(name), theme), **extra}


def _hand_card(a: Action) -> int | None:
    """The card of the hand an action plays (None: it plays none, as a draw or a claim)."""
    if a.kind == PLAY:
        return a.card
    return _GUILE.get(a.kind)


def _target(a: Action) -> int | None:
    """The flag a picked card's move lands on (highlighted, with a button there)."""
    if a.kind in (PLAY, TRAITOR) or (a.kind == REDEPLOY and a.flag > 0):
        return a.flag
    if a.kind == DESERTER:
        return a.source
    return None


def moves(view: dict[str, Any], pick: str | None) -> dict[str, Any]:
    """The viewer's moves from its view's ``legal`` and ``may_claim``: the hand's cards
    that can be played, the picked card's moves (by the flag they land on, and all of
    them), the claims to try, and every other move."""
    codes = {parse_card(n): n for n in view.get("hand") or []}
    picked = parse_card(pick) if pick in codes.values() and pick is not None else None
    playable: set[str] = set()
    by_flag: dict[int, list[str]] = {}
    mine: list[str] = []
    other: list[str] = []
    claims = set(view.get("may_claim") or [])
    for text in view.get("legal") or []:
        a = Action.parse(text)
        card = _hand_card(a)
        if a.kind == CLAIM:
            claims.add(a.flag)
        elif card is not None and card in codes:
            playable.add(codes[card])
            if card == picked:
                mine.append(text)
                flag = _target(a)
                if flag is not None:
                    by_flag.setdefault(flag, []).append(text)
        else:
            other.append(text)
    return {
        "playable": playable,
        "pick": codes.get(picked) if picked is not None else None,
        "picked": mine,
        "by_flag": by_flag,
        "claims": sorted(claims),
        "other": other,
    }


def _clock(clock: dict[str, Any] | None) -> dict[str, Any] | None:
    if clock is None:
        return None
    left = {s: float(v) for s, v in clock["remaining"].items()}
    return {
        "left": left,
        "shown": {s: f"{int(v) // 60}:{int(v) % 60:02d}" for s, v in left.items()},
        "running": clock.get("running"),
        "minutes": clock["minutes"],
        "increment": clock["increment"],
    }


def _claim(c: dict[str, Any], number: int, seat: str | None, theme: str) -> dict[str, Any]:
    witness = c.get("witness") or {}
    return {
        "number": number,
        "turn": c["turn"],
        "who": "you" if c["player"] == seat else c["player"],
        "flag": c["flag"],
        "accepted": c["accepted"],
        "verdict": c.get("verdict"),
        "explanation": c.get("explanation") or [],
        "mine": [_card(n, theme) for n in (c.get("mine") or {}).get("cards", [])],
        "blocking": [_card(n, theme) for n in c.get("blocking") or []],
        "witness": [_card(n, theme) for n in witness.get("added") or []],
        "witness_text": " ".join(witness.get("added") or []),
        "blocking_text": " ".join(c.get("blocking") or []),
        "verified": c.get("verified"),
        "log_seq": c.get("log_seq"),
        "certificate_url": c["certificate_url"],
    }


def board(view: dict[str, Any], token: str | None, pick: str | None) -> dict[str, Any]:
    """What the table page shows, drawn from ``view`` (a seat's or a spectator's JSON view)
    alone: the opponent (or north) on top, the viewer (or south) below next to its hand,
    the moves, the claims with their evidence, the last moves by whom, the clock, and how
    the game ended."""
    theme = view["theme"]
    seat = view["seat"]
    bottom = seat or "south"
    top = "north" if bottom == "south" else "south"
    result = view.get("result")
    table_id = view["table"]
    last = view["last"][::-1]
    return {
        "id": table_id,
        "token": token,
        "seat": seat,
        "top": top,
        "bottom": bottom,
        "seats": view["seats"],
        "version": view["version"],
        "theme": theme,
        "word": FLAG_WORD.get(theme, "flag"),
        "turn": view["turn"],
        "to_move": view["to_move"],
        "phase": view["phase"],
        "mine": seat is not None and view["to_move"] == seat and bool(view["legal"]),
        "over": result is not None,
        "result": result,
        "hand": [_card(n, theme) for n in view.get("hand") or []] if seat else None,
        "hand_sizes": view["hand_sizes"],
        "flags": [
            {
                "n": f["flag"],
                "top": [_card(n, theme) for n in reversed(f[top])],
                "bottom": [_card(n, theme) for n in f[bottom]],
                "environment": [_card(n, theme) for n in f["environment"]],
                "claimed_by": f["claimed_by"],
                "size": f["size"],
            }
            for f in view["flags"]
        ],
        "moves": moves(view, pick),
        "claims": [_claim(c, i, seat, theme) for i, c in enumerate(view["claims"], 1)][::-1],
        "decks": view["decks"],
        "discards": {s: [_card(n, theme) for n in cs] for s, cs in view["discards"].items()},
        "last": [{**m, "who": "you" if m["seat"] == seat else m["seat"]} for m in last],
        "clock": _clock(view.get("clock")),
        "options": view.get("options") or {},
        "here": seat_path(table_id, token),
        "events": f"/v1/tables/{quote(table_id)}/events"
        + (f"?{urlencode({'token': token})}" if token else ""),
        "record": f"/v1/tables/{quote(table_id)}/record",
    }


def _show(
    request: Request,
    status: int,
    view: dict[str, Any] | None,
    token: str | None,
    *,
    pick: str | None = None,
    problem: str | None = None,
    confirm: bool = False,
) -> Response:
    """The table page (or its fragment, for htmx) of ``view``; with no view, the problem
    alone."""
    template = "_table.html" if is_fragment(request) else "tables.html"
    return render(
        template,
        status,
        page="tables",
        mode="table",
        t=None if view is None else board(view, token, pick),
        problem=problem,
        confirm=confirm,
    )


async def _view(request: Request, table_id: str, token: str | None) -> dict[str, Any]:
    return await _tables(request).view(table_id, token)


@router.get("/tables/{table_id}", response_class=HTMLResponse)
async def table_page(request: Request, table_id: str) -> Response:
    """The table as the token's seat sees it (a spectator's view without a token); ``pick``
    a card of the hand to see where it goes, ``confirm=resign`` to be asked to resign."""
    qp = request.query_params
    token = qp.get("token") or None
    try:
        view = await _view(request, table_id, token)
    except ServiceError as e:
        return _show(request, e.status, None, None, problem=one_line(e))
    confirm = token is not None and qp.get("confirm") == "resign" and view["result"] is None
    return _show(request, 200, view, token, pick=qp.get("pick") or None, confirm=confirm)


@router.post("/tables/{table_id}/act", response_class=HTMLResponse)
async def act(request: Request, table_id: str) -> Response:
    """The seat of ``token`` takes ``action`` if the page it came from (``version``) is
    still the table's; a 409 (not its turn, the table moved on) or 422 (not legal; a
    refused claim, whose witness the page then shows) is shown in place on one line."""
    form = await request.form(max_files=0, max_fields=8)
    token = str(form.get("token", "")) or None
    action, version = str(form.get("action", "")), str(form.get("version", ""))
    try:
        tables = _tables(request)
        view = await tables.view(table_id, token)
    except ServiceError as e:
        return _show(request, e.status, None, None, problem=one_line(e))
    if str(view["version"]) != version:
        return _show(request, 409, view, token, problem="the table moved on: here it is now")
    try:
        status, out = await tables.act(
            table_id,
            token,
            action,
            client(request),
            int(version),  # closes a race of tabs
        )
    except ServiceError as e:
        return _show(request, e.status, view, token, problem=one_line(e))
    if status != 200:  # a refused claim: the claim, with its witness, is in the new view
        return _show(request, status, out["view"], token, problem=" ".join(out["error"].split()))
    return _show(request, 200, out, token)


@router.post("/tables/{table_id}/resign", response_class=HTMLResponse)
async def resign(request: Request, table_id: str) -> Response:
    """The seat of ``token`` resigns (the page's second, confirming form sends this)."""
    form = await request.form(max_files=0, max_fields=4)
    token = str(form.get("token", "")) or None
    try:
        tables = _tables(request)
    except ServiceError as e:
        return _show(request, e.status, None, None, problem=one_line(e))
    try:
        out = await tables.resign(table_id, token)
    except ServiceError as e:
        try:
            view = await tables.view(table_id, token)
        except ServiceError:
            return _show(request, e.status, None, None, problem=one_line(e))
        return _show(request, e.status, view, token, problem=one_line(e))
    return _show(request, 200, out, token)
