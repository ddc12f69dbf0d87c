"""Play at ``/play``: a whole Battle Line game, every tactics card in, against a bot (random,
heuristic, search) or a friend in another browser at the same table.

The table lives in this process (``/play/ID?seat=north`` resumes it after a reload, and the
same link with the other seat seats a friend); every move is the engine's, made in a worker
of the service under its limits (:mod:`.play_work`): a human's move, then each bot decision
as a job of its own, run by a task of the table until a human must move. The page shows the
viewer's hand only, the legal moves as buttons (a picked card's target flags highlighted),
every claim with its proof, and, once the game is over, the record to download
(``/play/ID/record.blg``; not before, as it shows both hands).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Final

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.applications import Starlette

from battlejudge.apps.routes.common import client, judge, running
from battlejudge.apps.web import play_work
from battlejudge.apps.web import table as table_mod
from battlejudge.apps.web.game_routes import face
from battlejudge.apps.web.game_work import flag_views
from battlejudge.apps.web.pages import answer_view, is_fragment, render
from battlejudge.engines.battleline.actions import CLAIM
from battlejudge.engines.battleline.cards import FLAG_WORD, THEMES
from battlejudge.engines.battleline.state import PLAYERS
from battlejudge.engines.games import GameMeta, Setup, get_game
from battlejudge.engines.records import record_format
from battlejudge.solver.errors import BattlejudgeError, InputError

BOTS: Final = ("random", "heuristic", "search")
"""The bots offered (the registry's Battle Line bots)."""
BOT_WORK: Final = 5.0
"""How many times the service's time limit one bot decision may take (the search bot thinks
for a second of wall time, longer on a busy machine)."""
TABLES: Final = 64
"""Tables kept in memory (the least recently used goes first)."""
_logger = logging.getLogger(__name__)


@dataclass
class Table:
    """A table of this process: its game, a lock for its moves, the task that runs its
    bots, and the game's seed and theme."""

    id: str
    game: play_work.Game
    seed: int
    theme: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    runner: asyncio.Task[None] | None = None
    error: str | None = None


_tables: OrderedDict[str, Table] = OrderedDict()


def _seat(raw: str) -> int | None:
    return PLAYERS.index(raw) if raw in PLAYERS else None


router = APIRouter(include_in_schema=False)


async def _run_bots(table: Table, who: str, app: Starlette) -> None:
    """Bot decisions, one job each, until a human must move or the game ends."""
    while not table.game.waiting_for_human():
        async with table.lock:
            try:
                table.game = await running(app).job(
                    who, play_work.bot_move, table.game, what="the bot's move", scale=BOT_WORK
                )
            except Exception as e:  # a limit ran out, or the service is stopping
                table.error = f"the bot could not move: {e} (reload the page to try again)"
                _logger.warning("table %s: %s", table.id, e)
                return
    table.error = None


def _start_bots(table: Table, request: Request) -> None:
    """Let the table's bots move (as jobs of the client of ``request``), unless they are
    moving already."""
    if table.runner is None or table.runner.done():
        table.runner = asyncio.ensure_future(_run_bots(table, client(request), request.app))


@router.get("/play", response_class=HTMLResponse)
async def new_game_form() -> Response:
    """The form that starts a game."""
    return render("play.html", page="play", bots=BOTS, view=None, problem=None)


@router.post("/play")
async def new_game(request: Request) -> Response:
    """Start a game (your seat, the opponent: a bot or ``friend``, the theme, a seed)
    and open it: 303 to ``/play/ID?seat=...``."""
    form = await request.form(max_files=0, max_fields=8)
    seat, opponent = str(form.get("seat", "north")), str(form.get("opponent", "heuristic"))
    theme, raw_seed = str(form.get("theme", "battleline")), str(form.get("seed", ""))
    problem = _new_game_problem(seat, opponent, theme, raw_seed)
    if problem is not None:
        return render("play.html", 422, page="play", bots=BOTS, view=None, problem=problem)
    seed = int(raw_seed) if raw_seed else secrets.randbelow(1 << 30)
    table = _new_table(PLAYERS.index(seat), opponent, theme, seed)
    _tables[table.id] = table
    while len(_tables) > TABLES:
        _tables.popitem(last=False)
    _start_bots(table, request)
    return RedirectResponse(f"/play/{table.id}?seat={seat}", status_code=303)


def _new_game_problem(seat: str, opponent: str, theme: str, raw_seed: str) -> str | None:
    """What is wrong with the new game's form (None: nothing)."""
    if seat not in PLAYERS:
        return f"seat must be north or south, got {seat!r}"
    if opponent not in (*BOTS, "friend"):
        return f"opponent must be one of {', '.join(BOTS)} or friend, got {opponent!r}"
    if theme not in THEMES:
        return f"theme must be battleline or nine-circles, got {theme!r}"
    if raw_seed and not raw_seed.isdigit():
        return f"seed must be a whole number, got {raw_seed!r}"
    return None


def _new_table(me: int, opponent: str, theme: str, seed: int) -> Table:
    """A new table: the human at seat ``me``, the opponent a bot or ``friend`` (a second
    human), the registry's bots seeded from ``seed``."""
    info = get_game("battleline")
    other = "human" if opponent == "friend" else opponent
    seats = ("human", other) if me == 0 else (other, "human")
    bots = {i: info.make_bot(s, seed + 1 + i) for i, s in enumerate(seats) if s != "human"}
    state = info.start({"theme": theme}, Setup(game_id=f"play-{seed}"))
    game = play_work.Game(state, seats, bots, random.Random(seed))  # type: ignore[arg-type]
    return Table(secrets.token_urlsafe(9), game, seed, theme)


def _find(table_id: str) -> Table | None:
    """The table ``table_id`` (now the most recently used), if this process keeps it."""
    table = _tables.get(table_id)
    if table is not None:
        _tables.move_to_end(table_id)
    return table


def _show(request: Request, table: Table | None, seat: int | None, **extra: Any) -> Response:
    """The table as ``seat`` sees it (the page, or its fragment for htmx); 404 for a table
    not kept here, 422 without a seat."""
    template = "_play.html" if is_fragment(request) else "play.html"
    status = int(extra.pop("status", 200))
    if table is None:
        problem = "no such table here (a table is kept until the server restarts)"
        return render(template, 404, page="play", bots=BOTS, view=None, problem=problem)
    if seat is None:
        problem = "seat must be north or south (add ?seat=north or ?seat=south)"
        return render(template, 422, page="play", bots=BOTS, view=None, problem=problem)
    return render(template, status, page="play", bots=BOTS, problem=extra.get("problem"),
                  view=play_view(table, seat, extra.get("pick")))  # fmt: skip


@router.get("/play/{table_id}", response_class=HTMLResponse)
async def table_page(request: Request, table_id: str) -> Response:
    """The table as ``seat`` sees it; ``pick`` a card of the hand to see its moves."""
    table = _find(table_id)
    if table is not None and table.error is not None:  # a reload retries the bot
        table.error = None
        _start_bots(table, request)
    pick = request.query_params.get("pick", "")
    return _show(request, table, _seat(request.query_params.get("seat", "")),
                 pick=int(pick) if pick.isdigit() else None)  # fmt: skip


@router.post("/play/{table_id}/move", response_class=HTMLResponse)
async def move(request: Request, table_id: str) -> Response:
    """The human at ``seat`` plays ``move`` (a legal move's notation) if ``version``
    (the number of moves the page saw) is still current; then the bots move."""
    table = _find(table_id)
    form = await request.form(max_files=0, max_fields=8)
    seat = _seat(str(form.get("seat", "")))
    if table is None or seat is None:
        return _show(request, table, seat)
    async with table.lock:
        if str(form.get("version", "")) != str(len(table.game.moves)):
            return _show(request, table, seat, problem="the table moved on: here it is now")
        try:
            table.game = await judge(request).job(
                client(request),
                play_work.human_move,
                table.game,
                seat,
                str(form.get("move", "")),
                what="your move",
            )
        except InputError as e:
            return _show(request, table, seat, problem=str(e), status=422)
        except BattlejudgeError as e:
            return _show(request, table, seat, problem=f"not played: {e}", status=503)
    _start_bots(table, request)
    if not table.game.waiting_for_human():  # show the bot's answer when it is quick
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(table.runner), 0.3)  # type: ignore[arg-type]
    return _show(request, table, seat)


@router.get("/play/{table_id}/record.blg")
async def record(table_id: str) -> Response:
    """The game's record (``.blg``, as ``battlejudge play`` writes it), once the game
    is over (409 before: it holds both hands and the cards drawn)."""
    table = _find(table_id)
    if table is None:
        return Response("no such table here\n", 404, media_type="text/plain")
    if not table.game.state.is_terminal():
        why = "the record shows both hands: it can be downloaded when the game is over\n"
        return Response(why, 409, media_type="text/plain")
    info = get_game("battleline")
    g = table.game
    names: dict[str, str] = {str(PLAYERS[i]): s for i, s in enumerate(g.seats)}
    meta = GameMeta(seed=table.seed, bots=names, options={"theme": table.theme})
    text = record_format(info).write(info, g.state, g.moves, meta)
    return Response(
        text,
        media_type="text/plain; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="play-{table.seed}.blg"'},
    )


def play_view(table: Table, seat: int, pick: int | None) -> dict[str, Any]:
    """What ``seat`` sees: the flags, the own hand, the opponent's hand size, the legal
    moves (those of the picked card apart, with the flags they reach), the claims with
    their proofs, whose turn it is and how the game ended."""
    g = table.game
    state = g.state
    theme = table.theme
    mine = state.current_player() == seat and not state.is_terminal()
    moves: list[dict[str, Any]] = []
    picked: list[dict[str, Any]] = []
    targets: set[int] = set()
    hand = list(state.hands[seat])
    if mine:
        for action in state.legal_actions():
            item = {"notation": state.action_to_string(action), "claim": action.kind == CLAIM}
            if action.card in hand:
                if action.card == pick:
                    picked.append(item)
                    for f in (action.flag, action.source):
                        if 1 <= f <= 9:
                            targets.add(f)
            else:
                moves.append(item)
    playable = {a.card for a in state.legal_actions()} & set(hand) if mine else set()
    claims = [
        {
            "turn": c.turn,
            "player": PLAYERS[c.player],
            "flag": c.flag,
            "answer": answer_view(c.proof, g.verified[i] if i < len(g.verified) else False),
            "question": table_mod.Table.of_question(c.proof.question).query_string(zone=False),
        }
        for i, c in enumerate(state.claims)
    ]
    return {
        "id": table.id,
        "seat": PLAYERS[seat],
        "other": PLAYERS[1 - seat],
        "seats": {PLAYERS[i]: s for i, s in enumerate(g.seats)},
        "version": len(g.moves),
        "theme": theme,
        "word": FLAG_WORD[theme],  # type: ignore[index]
        "turn": state.turn,
        "to_move": PLAYERS[state.current_player()] if state.current_player() >= 0 else None,
        "mine": mine,
        "over": state.is_terminal(),
        "winner": PLAYERS[state.winner] if state.winner in (0, 1) else None,
        "end_reason": state.end_reason,
        "flags": flag_views(state),
        "hand": hand,
        "playable": playable,
        "other_hand": len(state.hands[1 - seat]),
        "decks": {"troop": state.deck_size(0), "tactics": state.deck_size(1)},
        "pick": pick if pick in playable else None,
        "picked": picked,
        "targets": targets,
        "moves": moves,
        "claims": claims,
        "last": [m for who, m in g.moves if who >= 0][-6:],  # chance moves would show hands
        "error": table.error,
        "face": lambda code: face(code, theme),
    }
