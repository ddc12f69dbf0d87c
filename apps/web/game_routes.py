"""The table viewer at ``/game``: a game record (``.blg``) or a position file, uploaded or
from the bundled examples, stepped through turn by turn; both hands shown or one hidden;
any flag asked about for north or south, answered by the checker's panel. In the Battle Line
or the Nine Circles theme (names only: the rules are the same).

The state is the URL, as in ``/game?src=ex:games/every-tactic.blg&step=12&hide=south&flag=3&
player=north``: ``src`` names a bundled example (``ex:FOLDER/NAME``) or an upload
(``up:HASH``, kept in this process's memory, the last :data:`KEPT` of them); ``step`` the
turn about to be played (past the last: the game's end). The engine replays the record in a
worker of the service, under its limits (:mod:`.game_work`).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from importlib import resources
from typing import Any, Final
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.datastructures import UploadFile

from battlejudge.apps.routes.common import client, judge
from battlejudge.apps.web import game_work, table
from battlejudge.apps.web.pages import LONG_WORK, answer_view, is_fragment, render
from battlejudge.engines.battleline.cards import FLAG_WORD, THEMES, display_name
from battlejudge.engines.battleline.state import FLAGS, PLAYERS
from battlejudge.solver.battleline.cards import COLOR_NAMES, COLORS, TROOP_COUNT
from battlejudge.solver.errors import BattlejudgeError, InputError, UndecidedError

KEPT: Final = 32
"""Uploaded records and positions kept in memory (the oldest goes first)."""
MAX_FILE: Final = 256 * 1024
"""Largest record or position accepted (bytes)."""
EXAMPLE_FOLDERS: Final[dict[str, game_work.Kind]] = {"games": "record", "positions": "position"}
_uploads: OrderedDict[str, tuple[game_work.Kind, str, str]] = OrderedDict()


def examples() -> dict[str, game_work.Kind]:
    """The bundled examples shipped in the package: ``FOLDER/NAME`` -> kind."""
    root = resources.files("battlejudge.examples")
    found: dict[str, game_work.Kind] = {}
    for folder, kind in EXAMPLE_FOLDERS.items():
        suffix = ".blg" if kind == "record" else ".json"
        for entry in sorted((root / folder).iterdir(), key=lambda e: e.name):
            if entry.name.endswith(suffix):
                found[f"{folder}/{entry.name}"] = kind
    return found


def source(src: str) -> tuple[game_work.Kind, str, str]:
    """The kind, text and name of ``src``; :class:`InputError` naming it when unknown."""
    origin, _, name = src.partition(":")
    if origin == "ex":
        kind = examples().get(name)
        if kind is None:
            raise InputError(f"src: no bundled example {name!r}")
        folder, _, file = name.partition("/")
        text = (resources.files("battlejudge.examples") / folder / file).read_text("utf-8")
        return kind, text, file
    if origin == "up" and name in _uploads:
        _uploads.move_to_end(name)
        return _uploads[name]
    if origin == "up":
        raise InputError(f"src: upload {name!r} is no longer kept here: upload the file again")
    raise InputError(f"src must be ex:FOLDER/NAME or up:HASH, got {src!r}")


def face(code: int, theme: str) -> dict[str, str]:
    """How a card of the engine (0-69, tactics in ``theme``'s names) is drawn: its color
    class, letter, value and shape, and its name for screen readers."""
    if code < TROOP_COUNT:
        letter = COLORS[code // 10]
        return {
            "cls": f"c-{letter}",
            "letter": letter,
            "value": str(code % 10 + 1),
            "symbol": table.SYMBOLS[letter],
            "label": f"{COLOR_NAMES[code // 10]} {code % 10 + 1}",
        }
    name = display_name(code, theme)  # type: ignore[arg-type]
    return {"cls": "c-T tactic", "letter": name[0], "value": name, "symbol": "", "label": name}


router = APIRouter(include_in_schema=False)


@router.get("/game", response_class=HTMLResponse)
async def game(request: Request) -> Response:
    """The table of the URL's record or position at its step, with the answer about
    the flag asked (if any)."""
    qp = request.query_params
    context: dict[str, Any] = {
        "page": "game",
        "examples": list(examples()),
        "problem": None,
        "view": None,
    }
    template = "_game.html" if is_fragment(request) else "game.html"
    src = qp.get("src", "")
    if not src:
        return render(template, **context)
    try:
        kind, text, name = source(src)
        step, flag, player, hide, theme = _view_options(qp)
    except InputError as e:
        return render(template, 422, **{**context, "problem": str(e)})
    ask = (flag, PLAYERS.index(player)) if flag is not None and player else None
    j = judge(request)
    try:
        out = await j.job(
            client(request),
            game_work.view,
            kind,
            text,
            step,
            ask,
            j.config.conflict_limit,
            what="replaying the game",
            scale=LONG_WORK,
        )
    except UndecidedError as e:
        return render(template, 503, **{**context, "problem": f"undecided: {e}"})
    except (InputError, ValueError) as e:
        return render(template, 422, **{**context, "problem": f"{name}: {e}"})
    except BattlejudgeError as e:
        return render(template, 503, **{**context, "problem": f"undecided: {e}"})
    theme = theme or out["theme"]
    state = {"src": src, "step": out["step"], "hide": hide, "theme": qp.get("theme", "")}

    def url(**changes: Any) -> str:
        params = {**state, **changes}
        return "/game?" + urlencode({k: v for k, v in params.items() if v not in ("", None)})

    asked = None
    if ask is not None:
        asked = {"flag": flag, "player": player, "error": out.get("ask_error")}
        if "proved" in out:
            p, verified = out["proved"]
            t = table.Table.of_question(out["question"])
            asked.update(answer=answer_view(p, verified), t=t, link=t.url())
    view = {
        **out,
        "name": name,
        "theme": theme,
        "word": FLAG_WORD[theme],  # type: ignore[index]
        "hide": hide,
        "asked": asked,
        "url": url,
        "face": lambda code: face(code, theme),
        "line": next((line for n, line in out["turns"] if n == out["step"]), None),
    }
    return render(template, **{**context, "view": view})


@router.post("/game")
async def upload(request: Request) -> Response:
    """A record (``.blg``) or position (``.json``) uploaded: kept in memory, and the
    viewer opened on it (303 to ``/game?src=up:HASH``)."""
    form = await request.form(max_files=1, max_fields=2)
    file = form.get("file")
    if not isinstance(file, UploadFile) or not file.filename:
        return render("game.html", 422, page="game", examples=list(examples()),
                      problem="no file was sent: choose a .blg record or a position .json",
                      view=None)  # fmt: skip
    data = await file.read(MAX_FILE + 1)
    problem = None
    if len(data) > MAX_FILE:
        problem = f"{file.filename}: over {MAX_FILE // 1024} KiB"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        problem = f"{file.filename}: not UTF-8 text"
    if problem is not None:
        return render("game.html", 422, page="game", examples=list(examples()),
                      problem=problem, view=None)  # fmt: skip
    kind: game_work.Kind = "position" if text.lstrip().startswith("{") else "record"
    key = hashlib.sha256(data).hexdigest()[:16]
    _uploads[key] = (kind, text, file.filename)
    _uploads.move_to_end(key)
    while len(_uploads) > KEPT:
        _uploads.popitem(last=False)
    return RedirectResponse(f"/game?src=up:{key}", status_code=303)


def _view_options(qp: Any) -> tuple[int, int | None, str, str, str]:
    """The step, flag, player, hidden hand and theme the URL asks for; :class:`InputError`
    naming the first bad one."""
    step = _int(qp, "step", 1, 10_000) or 1
    flag = _int(qp, "flag", 1, FLAGS)
    player = qp.get("player", "")
    if player not in ("", *PLAYERS):
        raise InputError(f"player must be north or south, got {player!r}")
    hide = qp.get("hide", "")
    if hide not in ("", *PLAYERS):
        raise InputError(f"hide must be north, south or empty, got {hide!r}")
    theme = qp.get("theme", "")
    if theme not in ("", *THEMES):
        raise InputError(f"theme must be battleline or nine-circles, got {theme!r}")
    return step, flag, player, hide, theme


def _int(qp: Any, name: str, low: int, high: int) -> int | None:
    raw = qp.get(name, "")
    if raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise InputError(f"{name} must be a number {low}-{high}, got {raw!r}") from None
    if not low <= value <= high:
        raise InputError(f"{name} must be a number {low}-{high}, got {raw!r}")
    return value
