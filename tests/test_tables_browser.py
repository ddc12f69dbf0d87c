"""A whole game at a table in real browsers: two people, each on their own Chromium
context (a 360 px phone and a desktop), play a scripted game to its end through their
pages, a third context watches, the service is killed (``kill -9``) and started again in
the middle, and at every step no page holds a card of the other seat's hand.

The service is ``battlejudge serve --tables DIR`` in a subprocess, so that it can be killed
and started again on the same port and directory; the pages are never reloaded (their
events streams reconnect by themselves). The seat to move and its choices come from the
JSON API with the seat's token; the choice, made by a seeded generator, is taken by
clicking the seat's page as a person would: a card of the hand, then the button of the
move (``Here`` on a flag, or the move's own button), a claim's button, a draw's. The
record of the finished game is downloaded and ``battlejudge replay`` re-proves it.

Chromium comes from the system, as in test_web_browser.py: without it this test skips.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright
from playwright.sync_api import TimeoutError as PageTimeout
from web_server import Attributes

from battlejudge.apps.web.chromium import CHROMIUM_ARGS, WATCH_CSP, find_chromium, is_csp_violation
from battlejudge.apps.web.game_routes import face
from battlejudge.engines.battleline.cards import parse_card

CHROMIUM = find_chromium()
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium on this machine (apt-get install chromium; .ci/run installs it)",
)
MAIN = [sys.executable, "-c", "from battlejudge.cli.main import main; main()"]
SHOTS = Path(__file__).parent / "screenshots"
SEATS = ("north", "south")
SEED = 5
"""The deal's seed; the script's choices come from ``random.Random(SEED)``."""
RESTART_AFTER = 50
"""The service is killed and started again after this many actions (a game is ~130)."""
MAX_ACTIONS = 400
PAGE_TIMEOUT_MS = 20_000
"""How long a page may take to show a new version (generous: a busy 2-core machine)."""
API_TIMEOUT_S = 60.0
"""How long an action may take to change the table (a claim is judged by the solver)."""
GUILE = ("scout", "redeploy", "deserter", "traitor")
"""The tactics whose actions are named by the card (``redeploy R7@3>5``, ``scout``)."""
IS_OTHER_DOCUMENT = "() => window.stillTheFirstDocument !== true"
MARK_THE_DOCUMENT = "() => { window.stillTheFirstDocument = true; }"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Service:
    """``battlejudge serve --tables DIR --port PORT --workers 1`` in a subprocess of its
    own session (its forkserver and worker are ended with it); ``kill`` is ``kill -9``."""

    tables: Path
    port: int
    err: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        args = ["serve", "--tables", str(self.tables), "--port", str(self.port)]
        # a claim is judged in the worker: a generous limit, so that a busy machine does
        # not make the judge give up (503) and the game take another path
        args += ["--workers", "1", "--time-limit", "120"]
        with self.err.open("ab") as err:
            proc = subprocess.Popen([*MAIN, *args], stderr=err, start_new_session=True)
        self.procs.append(proc)
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=5).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            assert proc.poll() is None, f"serve ended: {self.err.read_text()[-2000:]}"
            assert time.monotonic() < deadline, "serve did not start in 120 s"
            time.sleep(0.05)

    def kill(self) -> None:
        """``kill -9`` the service's process (not its children: they see it gone)."""
        proc = self.procs[-1]
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(10)
            try:  # what is left of its session (its forkserver and worker), by its id
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture()
def service(tmp_path: Path) -> Iterator[Service]:
    tables = tmp_path / "tables"
    tables.mkdir()
    live = Service(tables, free_port(), tmp_path / "serve.err")
    live.start()
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        yield b
        b.close()


@dataclass
class Viewer:
    """A seat's page (``seat`` None: the spectator's), and what went wrong in it."""

    seat: str | None
    width: int
    context: BrowserContext
    page: Page
    errors: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.seat or "spectator"


def open_viewer(browser: Browser, url: str, seat: str | None, width: int) -> Viewer:
    """A page of its own context, ``width`` px wide (a phone's, touch, up to 400),
    watched for script errors and CSP violations, and marked: a reload loses the mark."""
    phone = width <= 400
    context = browser.new_context(
        viewport={"width": width, "height": 740 if phone else 900},
        has_touch=phone,
        accept_downloads=True,
    )
    context.add_init_script(WATCH_CSP)
    page = context.new_page()
    v = Viewer(seat, width, context, page)
    page.on("pageerror", lambda e: v.errors.append(str(e)))
    page.on("console", lambda m: v.violations.append(m.text) if is_csp_violation(m.text) else None)
    page.goto(url)
    page.wait_for_selector("#table[data-version]")
    page.evaluate(MARK_THE_DOCUMENT)
    return v


class Outside(HTMLParser):
    """A page's text and ``aria-label`` values, but for its claims' section and a refused
    claim's message (a claim's evidence and explanation may name any card that is not face
    up: the witness of a refused claim is drawn from the unseen cards, hands included,
    docs/tables.md) and the viewer's own last moves (the cards it drew, and those it put
    back with a Scout, which the other seat may have drawn since)."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.skipping: str | None = None  # the tag whose element is skipped (not nested)
        self.labels: list[str] = []
        self.text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        classes = (found.get("class") or "").split()
        if self.skipping is None and (
            (tag == "section" and "claims" in classes)
            or (tag == "p" and "problem" in classes)
            or (tag == "li" and found.get("data-who") == "you")
        ):
            self.skipping = tag  # none of them holds an element of its own kind
        if self.skipping is None and found.get("aria-label"):
            self.labels.append(found["aria-label"] or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == self.skipping:
            self.skipping = None

    def handle_data(self, data: str) -> None:
        if self.skipping is None:
            self.text.append(data)

    def words(self) -> set[str]:
        """The words of the text (text nodes kept apart: a card's letter and value are
        two nodes, "R" and "7", never the word "R7")."""
        return {w for t in self.text for w in re.findall(r"[A-Za-z0-9]+", t)}


def label(card: str) -> str:
    return face(parse_card(card), "battleline")["label"]


class Table:
    """The table through the JSON API, as the script sees it."""

    def __init__(self, url: str, table: str, tokens: dict[str, str]) -> None:
        self.http = httpx.Client(base_url=url, timeout=30)
        self.id = table
        self.tokens = tokens

    def view(self, seat: str | None = None) -> dict[str, Any]:
        headers = {"X-Seat-Token": self.tokens[seat]} if seat else {}
        for attempt in range(3):
            try:
                r = self.http.get(f"/v1/tables/{self.id}", headers=headers)
                break
            except httpx.TransportError:  # a connection kept alive across the restart
                if attempt == 2:
                    raise
        assert r.status_code == 200, r.text
        out: dict[str, Any] = r.json()
        return out

    def changed(self, since: int) -> dict[str, Any]:
        """The spectator's view once the table's version is past ``since``."""
        deadline = time.monotonic() + API_TIMEOUT_S
        while True:
            view = self.view()
            if view["version"] > since:
                return view
            assert time.monotonic() < deadline, f"the table stayed at version {since}"
            time.sleep(0.02)


def hand_card_of(action: str) -> str | None:
    """The card of the hand that ``action`` plays: ``R7@3`` plays R7, ``redeploy R7@3>5``
    the Redeploy, ``scout`` the Scout; None for a draw, a claim, done, a scout's return."""
    first = action.split()[0]
    if first in GUILE:
        return first
    if " " not in action and "@" in action:
        return action.split("@")[0]
    return None


def choose(rng: random.Random, view: dict[str, Any], tried: set[int]) -> str:
    """The script's choice among the seat's ``legal`` actions and ``may_claim`` flags:
    mostly plays and draws; a claim the API lists now and then; a claim it does not list
    (the judge may refuse it) sometimes, once a flag until a card is played."""
    legal: list[str] = view["legal"]
    claims = [a for a in legal if a.startswith("claim ")]
    risky = [f for f in view["may_claim"] if f"claim {f}" not in legal and f not in tried]
    if risky and rng.random() < 0.3:
        return f"claim {rng.choice(risky)}"
    if claims and rng.random() < 0.5:
        return rng.choice(claims)
    moves = [a for a in legal if not a.startswith("claim ") and a != "done"]
    if moves and rng.random() < 0.95:
        return rng.choice(moves)
    return rng.choice(legal)


def take(v: Viewer, action: str, view: dict[str, Any], rng: random.Random) -> None:
    """Take ``action`` through the page of its seat: pick the card of the hand it plays
    (the page then shows the card's moves, and a button on each flag it may go to), then
    click the move's button."""
    page, version = v.page, view["version"]
    here = f'#table[data-version="{version}"]'
    card = hand_card_of(action)
    if card is not None:
        assert card in view["hand"], (action, view["hand"])
        picked = f'{here} .moves button[data-move="{action}"]'
        for attempt in range(3):  # a redraw in flight may drop the pick: pick again
            page.click(f'{here} a[data-hand-card="{card}"]')
            try:
                page.wait_for_selector(picked, timeout=PAGE_TIMEOUT_MS // 2)
                break
            except PageTimeout:
                if attempt == 2:
                    raise
        assert page.get_attribute(f"{here} a.picked[data-hand-card]", "data-hand-card") == card
        on_flag = page.locator(f'{here} .flag .target-move[data-move="{action}"]')
        if on_flag.count() and rng.random() < 0.5:
            on_flag.first.click()  # "Here" on the flag (or the move, if several land there)
            return
        page.click(picked)
        return
    page.click(f'{here} .moves button[data-move="{action}"]')


def check_hidden(table: Table, viewers: list[Viewer], views: dict[str, dict[str, Any]]) -> None:
    """No page holds a card of the other seat's hand (as a hand card, a card on the table,
    a card's label or a word of its text, a drawn card in the last moves included) nor its
    token; each seat's page holds its own hand exactly; the spectator's holds no hand."""
    for v in viewers:
        assert v.errors == [], f"script errors on {v.name}'s page: {v.errors}"
        assert v.violations == [], f"CSP violations on {v.name}'s page: {v.violations}"
        html = v.page.content()
        found = Attributes(html).found
        hand = found.get("data-hand-card", [])
        on_table = set(found.get("data-card", []))
        outside = Outside(html)
        if v.seat is None:
            assert hand == [], f"the spectator's page holds hand cards {hand}"
            assert "data-hand=" not in html
            continue
        other = "south" if v.seat == "north" else "north"
        own, theirs = views[v.seat]["hand"], views[other]["hand"]
        assert sorted(hand) == sorted(own), f"{v.name}'s page shows {hand}, not its hand {own}"
        assert table.tokens[other] not in html, f"{v.name}'s page holds {other}'s token"
        leaked = set(theirs) & (set(hand) | on_table)
        assert not leaked, f"{v.name}'s page shows {other}'s cards {leaked} (hand {theirs})"
        labels = {label(c) for c in theirs} & set(outside.labels)
        assert not labels, f"{v.name}'s page names {other}'s cards {labels} (hand {theirs})"
        words = set(theirs) & outside.words()
        said = [t.strip() for t in outside.text if set(re.findall(r"[A-Za-z0-9]+", t)) & words]
        assert not words, f"{v.name}'s page says {other}'s cards {words} (hand {theirs}): {said}"


@needs_chromium
def test_two_browsers_play_a_whole_game_through_a_restart(
    browser: Browser, service: Service, tmp_path: Path
) -> None:
    started = time.monotonic()
    r = httpx.post(
        f"{service.url}/v1/tables", json={"north": "human", "south": "human", "seed": SEED}
    )
    assert r.status_code == 201, r.text
    made = r.json()
    tokens = {s: made["seats"][s]["token"] for s in SEATS}
    table = Table(service.url, made["table"], tokens)
    viewers = [
        open_viewer(browser, made["seats"]["north"]["url"], "north", 360),
        open_viewer(browser, made["seats"]["south"]["url"], "south", 1100),
        open_viewer(browser, made["spectate"], None, 360),
    ]
    by_seat = {v.seat: v for v in viewers if v.seat}
    rng = random.Random(SEED)
    tried: set[int] = set()  # flags claimed, perhaps refused, since the last card played
    counts: dict[str, int] = {}
    version = table.view()["version"]
    actions = 0
    restart_seconds = 0.0
    while True:
        for v in viewers:  # told by the events stream, never reloaded
            v.page.wait_for_selector(
                f'#table[data-version="{version}"]', state="attached", timeout=PAGE_TIMEOUT_MS
            )
        views = {s: table.view(s) for s in SEATS}
        spectator = table.view()
        assert {views["north"]["version"], views["south"]["version"]} == {version}
        check_hidden(table, viewers, views)
        if spectator["result"] is not None:
            break
        assert actions < MAX_ACTIONS, "the game did not end"
        seat = spectator["to_move"]
        view = views[seat]
        assert view["legal"], view
        action = choose(rng, view, tried)
        if action.startswith("claim "):
            tried.add(int(action.split()[1]))
        elif "@" in action:
            tried.clear()
        kind = "claim" if action.startswith("claim") else action.split()[0]
        kind = "play" if "@" in kind else kind
        counts[kind] = counts.get(kind, 0) + 1
        claims = len(spectator["claims"])
        take(by_seat[seat], action, view, rng)
        after = table.changed(version)
        assert after["version"] == version + 1, (action, version, after["version"])
        if action.startswith("claim "):
            assert len(after["claims"]) == claims + 1, "a claim not decided"
            verdict = "accepted" if after["claims"][-1]["accepted"] else "refused"
            counts[verdict] = counts.get(verdict, 0) + 1
        version = after["version"]
        actions += 1
        if actions == RESTART_AFTER:
            for v in viewers:  # every page has the last change before the service goes
                v.page.wait_for_selector(
                    f'#table[data-version="{version}"]', state="attached", timeout=PAGE_TIMEOUT_MS
                )
            down = time.monotonic()
            service.kill()
            service.start()
            restart_seconds = time.monotonic() - down
            assert table.view()["version"] == version  # nothing lost
    over = spectator["result"]
    winner = over["winner"] or "draw"
    for v in viewers:
        assert v.page.evaluate(IS_OTHER_DOCUMENT) is False, f"{v.name}'s page was reloaded"
        assert v.page.get_attribute(".status", "data-over") == "true"
        assert v.page.get_attribute("[data-winner]", "data-winner") == winner
        assert v.page.locator("#table-record").count() == 1
        assert v.page.locator("[data-move]").count() == 0  # nothing left to do
        width = v.page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= v.width, f"{v.name}'s page is {width} px wide on a {v.width} px screen"
        assert v.errors == [], (v.name, v.errors)
        assert v.violations == [], (v.name, v.violations)
    SHOTS.mkdir(exist_ok=True)
    north = by_seat["north"].page
    north.screenshot(path=str(SHOTS / "table-over-phone-360.png"), full_page=True)
    with north.expect_download() as info:  # the page's own link to the record
        north.click("#table-record")
    record = tmp_path / "game.blg"
    info.value.save_as(record)
    for v in viewers:
        v.context.close()
    print(
        f"{actions} actions {counts}, restart {restart_seconds:.1f} s, "
        f"whole test {time.monotonic() - started:.1f} s, result {over}"
    )
    assert counts.get("accepted", 0) > 0 and counts.get("refused", 0) > 0, counts
    r = table.http.get(f"/v1/tables/{table.id}/record")
    table.http.close()
    assert r.status_code == 200, r.text
    assert record.read_text() == r.text
    replayed = subprocess.run(
        [*MAIN, "replay", "--json", str(record)], capture_output=True, text=True, timeout=300
    )
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    report = json.loads(replayed.stdout)
    assert report["sound"] is True and report["problem"] is None, report
    assert report["result"] == winner, report
    assert report["claims"] == counts["accepted"], report  # the record holds accepted ones


def test_a_scouts_returned_cards_are_not_told_to_the_other_seat(tmp_path: Path) -> None:
    """A seat plays its Scout as soon as it can and puts two cards back: the other seat's
    view and page, and the spectator's, do not say which cards went back."""
    from fastapi.testclient import TestClient

    from battlejudge.apps.service import ServiceConfig, create_app

    with TestClient(create_app(ServiceConfig(tables=str(tmp_path / "tables")))) as c:
        made = c.post("/v1/tables", json={"north": "human", "south": "human", "seed": SEED})
        assert made.status_code == 201, made.text
        table, seats = made.json()["table"], made.json()["seats"]
        returned: dict[str, str] = {}  # each card put back, by the seat that did
        for _ in range(MAX_ACTIONS):
            spectator = c.get(f"/v1/tables/{table}").json()
            assert spectator["result"] is None, "the game ended with no Scout played"
            seat = spectator["to_move"]
            token = {"X-Seat-Token": seats[seat]["token"]}
            legal = c.get(f"/v1/tables/{table}", headers=token).json()["legal"]
            wanted = [a for a in legal if a in ("scout", "draw tactics")]
            wanted += [a for a in legal if a.startswith("return ")]
            action = (wanted or [a for a in legal if not a.startswith("claim ")] or legal)[0]
            r = c.post(f"/v1/tables/{table}/actions", json={"action": action}, headers=token)
            assert r.status_code == 200, r.text
            if action.startswith("return "):
                returned[action.split()[1]] = seat
                if len(returned) == 2:
                    break
        scout = next(iter(returned.values()))
        other = "south" if scout == "north" else "north"
        told = {
            "spectator": c.get(f"/v1/tables/{table}").json()["last"],
            other: c.get(
                f"/v1/tables/{table}", headers={"X-Seat-Token": seats[other]["token"]}
            ).json()["last"],
        }
        for who, last in told.items():
            named = [m["action"] for m in last if set(m["action"].split()[1:]) & set(returned)]
            assert named == [], f"the {who}'s view names the cards {scout} put back: {named}"
        page = c.get(f"/tables/{table}", params={"token": seats[other]["token"]}).text
        words = set(re.findall(r"[A-Za-z0-9]+", " ".join(Outside(page).text)))
        assert not words & set(returned), f"{other}'s page names {set(returned)}"
