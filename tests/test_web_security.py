"""Pages a browser can trust (issue 34): what another site's page can make a judge's browser
send to his service is refused before any work or log record is made, every response
carries the security headers, the pages run under their Content-Security-Policy, and no
error shows a path on disk.

Over HTTP (httpx against a live service that keeps a file proof log): the JSON API takes
only ``application/json`` (415 otherwise); every state-changing route refuses a request
whose ``Origin`` or ``Sec-Fetch-Site`` says another site (403), and a GET from another
site's page that is not the browser opening it; the headers on every kind of answer; no
inline script or style in any page; the log routes' 404s and the audit's upload errors
name no path. In Chromium (skipped without it): a page on another origin (another port of
127.0.0.1) that auto-submits forms to the service and sends ``no-cors`` requests gets
nothing done and nothing logged, while the service's own pages and Swagger UI still work,
with no CSP violation reported.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from web_server import Attributes, LiveServer

from battlejudge.apps.browsers import json_type_problem
from battlejudge.apps.service import ServiceConfig, create_app
from battlejudge.apps.web.chromium import CHROMIUM_ARGS, WATCH_CSP, find_chromium, is_csp_violation
from battlejudge.proofs.log import read_log

EXAMPLES = Path(__file__).parents[1] / "examples"
VALID = {"mine": ["R4", "R5", "R3"], "theirs": ["B8"], "seen": ["B7", "B10"]}
QUESTION_PAGE = "/?mine=R4,R5,R3&theirs=B8&seen=B7,B10&mud=0&fog=0&first="
POSITION = json.loads((EXAMPLES / "positions" / "wedge-beats-blue-8.json").read_text())
JSON_BODIES = {
    "/v1/claims": VALID,
    "/v1/claims:batch": {"questions": [VALID]},
    "/v1/verify": {"verdict": "valid"},
    "/v1/positions/claim": {"position": POSITION, "flag": 1, "player": "north"},
    "/v1/tables": {"north": "human", "south": "human", "seed": 1},
    "/v1/tables/{table_id}/actions": {"action": "draw troop"},
    "/v1/tables/{table_id}/resign": {},
}
"""A body for each JSON endpoint (the verify one is refused as a certificate: 422; the
tables' actions and resignation need a seat's token: 401)."""
ANOTHER_SITE = "http://127.0.0.1:9"
"""Another origin: the same machine, another port (browsers call it the same site)."""
CHROMIUM = find_chromium()
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium on this machine (apt-get install chromium; .ci/run installs it)",
)


def logged(log: Path) -> int:
    """Records in the service's file proof log (0 before the first)."""
    return len(read_log(log)[0]) if log.exists() and log.stat().st_size else 0


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("judges-own-folder") / "claims.log"


@pytest.fixture(scope="module")
def live(log: Path) -> Iterator[LiveServer]:
    with LiveServer(ServiceConfig(log_path=str(log))) as server:
        yield server


@pytest.fixture(scope="module")
def client(live: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live.url, timeout=60) as c:
        yield c


# -- the JSON API takes JSON only ---------------------------------------------------------------
WRONG_TYPES = [
    None,
    "text/plain",
    "text/plain;charset=UTF-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/json; charset=latin-1",
    "application/jsonp",
    "text/json",
]


@pytest.mark.parametrize("path", sorted(JSON_BODIES))
def test_the_json_api_refuses_any_other_content_type_with_415(
    client: httpx.Client, log: Path, path: str
) -> None:
    before = logged(log)
    body = json.dumps(JSON_BODIES[path]).encode()
    for content_type in WRONG_TYPES:
        headers = {} if content_type is None else {"Content-Type": content_type}
        r = client.post(path, content=body, headers=headers)
        assert r.request.headers.get("content-type") == content_type
        assert r.status_code == 415, (content_type, r.text)
        error = r.json()["error"]
        assert list(r.json()) == ["error"] and "\n" not in error
        assert "application/json" in error
        if content_type is None:
            assert error.startswith("no Content-Type")
        else:
            assert repr(content_type) in error  # what was received, quoted
    assert logged(log) == before  # nothing was decided, nothing logged


def test_json_with_or_without_a_utf8_charset_is_answered(client: httpx.Client, log: Path) -> None:
    before = logged(log)
    body = json.dumps(VALID).encode()
    for content_type in (
        "application/json",
        "application/json; charset=utf-8",
        'Application/JSON;charset="UTF-8"',
    ):
        r = client.post("/v1/claims", content=body, headers={"Content-Type": content_type})
        assert r.status_code == 200 and r.json()["verdict"] == "valid", r.text
    assert logged(log) == before + 3


def test_the_content_type_rule() -> None:
    assert json_type_problem("application/json") is None
    assert json_type_problem("application/json ; Charset=utf8") is None
    assert json_type_problem(None) == (
        "no Content-Type: send the body as JSON with 'Content-Type: application/json'"
    )
    assert json_type_problem("text/plain") == (
        "Content-Type 'text/plain' is not accepted: send the body as JSON with "
        "'Content-Type: application/json'"
    )
    assert json_type_problem("application/json; boundary=x") is not None
    assert json_type_problem("") is not None


# -- requests from another site's page ----------------------------------------------------------
def post_routes() -> set[str]:
    """Every POST route of the service (the JSON API's and the web table's forms)."""
    from fastapi.routing import APIRoute

    def walk(routes: list[Any]) -> Iterator[APIRoute]:
        for r in routes:
            if isinstance(r, APIRoute):
                yield r
            inner = getattr(r, "original_router", None) or getattr(r, "router", None)
            if inner is not None:  # an included router (FastAPI includes them lazily)
                yield from walk(inner.routes)

    return {r.path for r in walk(create_app().routes) if "POST" in (r.methods or ())}


FORMS: dict[str, dict[str, Any]] = {
    "/web/verify": {"files": {"certificate": ("c.json", b"{}")}},
    "/audit": {"files": {"log": ("claims.log", b"hello\n")}},
    "/game": {"files": {"file": ("g.blg", b"1. N: nonsense\n")}},
    "/play": {"data": {"seat": "north", "opponent": "heuristic", "seed": "1"}},
    "/tables": {"data": {"north": "human", "south": "human", "seed": "1"}},
    "/tables/{table_id}/act": {"data": {"token": "t", "version": "1", "action": "draw troop"}},
    "/tables/{table_id}/resign": {"data": {"token": "t"}},
    **{path: {"json": body} for path, body in JSON_BODIES.items()},
}
"""A request for each POST route, as its own page (or an engine) would send it."""
FOREIGN = [
    {"Origin": ANOTHER_SITE},
    {"Origin": "http://judge.example"},
    {"Origin": "null"},  # a sandboxed frame, a file:// page
    {"Origin": "null", "Sec-Fetch-Site": "cross-site"},
    {"Origin": "http://127.0.0.1"},  # the same host on port 80
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},  # another port of the same machine
]


def test_every_post_route_is_checked_here() -> None:
    assert post_routes() == set(FORMS)


@pytest.mark.parametrize("path", sorted(FORMS))
def test_a_post_from_another_site_is_refused_with_403(
    client: httpx.Client, live: LiveServer, log: Path, path: str
) -> None:
    url = path.replace("{table_id}", "0123456789abcdef")
    before = logged(log)
    for headers in FOREIGN:
        r = client.post(url, **FORMS[path], headers=headers)
        assert r.status_code == 403, (headers, r.text)
        error = r.json()["error"]
        assert "another site" in error and "\n" not in error
    assert logged(log) == before
    # the service's own page, and a client that is not a browser, pass
    for headers in (
        {"Origin": live.url},
        {"Origin": live.url.upper()},
        {"Sec-Fetch-Site": "same-origin"},
        {"Origin": "null", "Sec-Fetch-Site": "same-origin"},  # its origin withheld
        {},
    ):
        r = client.post(url, **FORMS[path], headers=headers)
        assert r.status_code not in (403, 415), (headers, r.text)


def fetch_metadata(site: str, mode: str, dest: str) -> dict[str, str]:
    """The Sec-Fetch-* headers a browser sends."""
    return {"Sec-Fetch-Site": site, "Sec-Fetch-Mode": mode, "Sec-Fetch-Dest": dest}


def test_another_sites_page_cannot_ask_by_get_but_a_shared_link_opens(
    client: httpx.Client, log: Path
) -> None:
    before = logged(log)
    image = fetch_metadata("cross-site", "no-cors", "image")
    fetched = fetch_metadata("same-site", "cors", "empty")
    framed = fetch_metadata("cross-site", "navigate", "iframe")
    for path in (QUESTION_PAGE, "/web/certificate" + QUESTION_PAGE[1:]):
        for headers in (image, fetched, {**fetched, "Origin": ANOTHER_SITE}, framed):
            r = client.get(path, headers=headers)
            assert r.status_code == 403, (path, headers)
    assert logged(log) == before
    opened = fetch_metadata("cross-site", "navigate", "document")
    r = client.get(QUESTION_PAGE, headers=opened)  # a link in a chat, followed
    assert r.status_code == 200 and Attributes(r.text).found["data-verdict"] == ["valid"]
    r = client.get(QUESTION_PAGE, headers={"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate"})
    assert r.status_code == 200  # typed, or a bookmark


# -- headers ------------------------------------------------------------------------------------
def csp(value: str) -> dict[str, list[str]]:
    directives = (d.split() for d in value.split(";") if d.strip())
    return {d[0]: d[1:] for d in directives}


def assert_secure_headers(r: httpx.Response) -> None:
    policy = csp(r.headers["content-security-policy"])
    assert policy["default-src"] == ["'self'"]
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["base-uri"] == ["'none'"]
    assert policy["form-action"] == ["'self'"]
    assert policy["object-src"] == ["'none'"]
    assert "unsafe" not in r.headers["content-security-policy"]
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["x-frame-options"] == "DENY"
    assert r.headers["referrer-policy"] in ("no-referrer", "same-origin")


def test_every_answer_carries_the_security_headers(client: httpx.Client) -> None:
    big = json.dumps({**VALID, "pad": "x" * (1 << 20)})
    answers = [
        client.get("/"),
        client.get(QUESTION_PAGE),
        client.get(QUESTION_PAGE, headers={"HX-Request": "true"}),
        client.get("/game?src=ex:games/every-tactic.blg&step=3"),
        client.get("/play"),
        client.get("/audit"),
        client.get("/docs"),
        client.get("/openapi.json"),
        client.get("/healthz"),
        client.get("/static/web/web.js"),
        client.get("/static/web/htmx.min.js"),
        client.get("/static/swagger-ui/swagger-ui-init.js"),
        client.get("/web/certificate" + QUESTION_PAGE[1:]),
        client.get("/checkpoint"),
        client.get("/tile/0/000"),
        client.get("/nothing/here"),  # 404
        client.get("/v1/claims"),  # 405
        client.post("/v1/claims", json=VALID),
        client.post("/v1/claims", content=b"{}"),  # 415
        client.post("/v1/claims", json=VALID, headers={"Origin": ANOTHER_SITE}),  # 403
        client.post("/v1/claims", content=big, headers={"Content-Type": "application/json"}),
    ]
    assert {r.status_code for r in answers} >= {200, 403, 404, 405, 413, 415}
    for r in answers:
        assert_secure_headers(r)
    for r in answers[9:12]:
        assert r.headers["content-type"].startswith("text/javascript")  # served as scripts
    docs = csp(answers[6].headers["content-security-policy"])
    assert docs["img-src"] == ["'self'", "data:"]  # Swagger UI's icons are data: SVGs
    assert csp(answers[0].headers["content-security-policy"])["img-src"] == ["'self'"]


class Inline(HTMLParser):
    """What a page would run or style inline: scripts without ``src`` or with a body,
    ``<style>`` blocks, ``style=`` and ``on...=`` attributes, ``javascript:`` links."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.found: list[str] = []
        self.in_script = False
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = dict(attrs)
        if tag == "script":
            self.in_script = True
            if not names.get("src"):
                self.found.append("<script> without src")
        if tag == "style":
            self.found.append("<style>")
        for name, value in attrs:
            if name == "style" or name.startswith("on"):
                self.found.append(f"<{tag} {name}=...>")
            if (value or "").strip().lower().startswith("javascript:"):
                self.found.append(f"<{tag} {name}=javascript:...>")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self.in_script = False

    def handle_data(self, data: str) -> None:
        if self.in_script and data.strip():
            self.found.append("an inline script body")


def test_no_page_has_inline_script_or_style(client: httpx.Client) -> None:
    started = client.post("/play", data={"seat": "north", "opponent": "heuristic", "seed": "3"})
    table = started.headers["location"]
    pages = [
        "/",
        QUESTION_PAGE,
        "/?mine=R4,R4,R3",  # a problem shown
        "/game",
        "/game?src=ex:games/every-tactic.blg&step=40&flag=2&player=north",
        "/play",
        table,
        table.split("?")[0],  # a spectator's page
        "/tables",
        "/audit",
        "/docs",
    ]
    for path in pages:
        r = client.get(path)
        assert r.headers["content-type"].startswith("text/html"), path
        assert Inline(r.text).found == [], path
    verified = client.post("/web/verify", files={"certificate": ("c.json", b"{}")})
    audited = client.post("/audit", files={"log": ("claims.log", b"hello\n")})
    for r in (verified, audited):
        assert Inline(r.text).found == []


# -- no path on disk in an error ------------------------------------------------------------------
def assert_no_path(text: str, *paths: Path) -> None:
    for p in paths:
        assert str(p) not in text and p.name not in text, text
    assert tempfile.gettempdir() not in text, text
    assert "battlejudge-audit-" not in text, text


def test_the_log_routes_404s_name_no_path(tmp_path: Path) -> None:
    folder = tmp_path / "a-folder-of-the-judge"
    folder.mkdir()
    log = folder / "claims.log"
    gets = [
        "/checkpoint",
        "/v1/log/checkpoint",
        "/v1/log/proof/0",
        "/v1/log/proof/7",
        "/tile/0/000",
        "/tile/entries/000",
        "/tile/0/x001/234.p/5",
        "/tile/not-a-tile",
    ]
    with (
        LiveServer(ServiceConfig(log_path=str(log))) as live,
        httpx.Client(base_url=live.url, timeout=60) as c,
    ):
        for path in gets:  # before the first record: no checkpoint yet
            r = c.get(path)
            assert r.status_code == 404, (path, r.text)
            assert_no_path(r.text, folder)
        assert c.post("/v1/claims", json=VALID).json()["log_seq"] == 0
        for tile in (folder / "claims.log.tiles" / "tile").rglob("*"):
            if tile.is_file():
                tile.unlink()  # the tiles lost: the proof cannot be made
        r = c.get("/v1/log/proof/0")
        assert r.status_code == 404 and "missing" in r.text, r.text
        assert_no_path(r.text, folder)
        for path in gets[3:]:  # no such record or tile
            r = c.get(path)
            assert r.status_code == 404, (path, r.text)
            assert_no_path(r.text, folder)


def test_the_audits_upload_errors_name_no_path(
    client: httpx.Client, log: Path, live: LiveServer
) -> None:
    assert client.post("/v1/claims", json=VALID).status_code == 200  # a log to upload
    good = log.read_bytes()
    checkpoint = client.get("/checkpoint")
    for _ in range(100):  # the checkpoint may follow its records by a moment
        if checkpoint.status_code == 200:
            break
        time.sleep(0.1)
        checkpoint = client.get("/checkpoint")
    assert checkpoint.status_code == 200
    uploads: list[tuple[list[tuple[str, Any]], dict[str, str]]] = [
        ([("log", ("claims.log", b"hello\n"))], {}),
        ([("log", ("claims.log", b"\x00\xff\xfe" * 100))], {}),
        ([("log", ("claims.log", good[:-40]))], {}),  # torn
        ([("log", ("claims.log", good)), ("pubkey", ("judge.pub", b"not a key"))], {}),
        ([("log", ("claims.log", good)), ("checkpoint", ("c", b"garbage\n"))], {}),
        ([("log", ("claims.log", good)), ("checkpoint", ("c", checkpoint.content))], {}),
        ([("log", ("claims.log", good)), ("games", ("../../etc/passwd.blg", b"1. N: x\n"))], {}),
        ([("log", ("claims.log", good))], {"witness_keys": "not-a-witness-key"}),
        ([("log", ("claims.log", good))], {"witnesses_needed": "3"}),
        ([("log", ("claims.log", good))], {"witnesses_needed": "x" * 100}),
    ]
    statuses = []
    for files, form in uploads:
        r = client.post("/audit", files=files, data=form)
        statuses.append(r.status_code)
        assert r.status_code in (200, 422), r.text
        assert_no_path(r.text, log.parent)
        fragment = client.post("/audit", files=files, data=form, headers={"HX-Request": "true"})
        assert_no_path(fragment.text, log.parent)
    assert 200 in statuses and 422 in statuses


# -- in Chromium ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        yield b
        b.close()


class Watched:
    """A page that keeps what went wrong: script errors and CSP violations (its own
    :data:`WATCH_CSP` report, and Chromium's console messages)."""

    def __init__(self, browser: Any) -> None:
        self.context = browser.new_context(accept_downloads=True)
        self.context.add_init_script(WATCH_CSP)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.violations: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", self._console)

    def _console(self, message: Any) -> None:
        if is_csp_violation(message.text):
            self.violations.append(message.text)

    def close(self) -> None:
        self.context.close()


@pytest.fixture()
def watched(browser: Any) -> Iterator[Watched]:
    w = Watched(browser)
    yield w
    w.close()
    assert w.violations == [], w.violations
    assert w.errors == [], w.errors


ATTACKS = {
    # a form posting JSON smuggled in a text/plain body, as forms can
    "/claims-form.html": """<form method="post" enctype="text/plain" action="{service}/v1/claims">
<input name='{{"mine": ["R4", "R5", "R3"], "theirs": ["B8"], "seen": ["B7", "B10"], "x": "'
 value='"}}'>
</form><script>document.forms[0].submit()</script>""",
    # a form starting a game at the judge's table
    "/play-form.html": """<form method="post" action="{service}/play">
<input name="seat" value="north"><input name="opponent" value="heuristic"></form>
<script>document.forms[0].submit()</script>""",
    # a multipart form posting a batch of questions
    "/batch-form.html": """<form method="post" enctype="multipart/form-data"
action="{service}/v1/claims:batch"><input name="questions" value="[]"></form>
<script>document.forms[0].submit()</script>""",
    # requests the page need not read: fetch in no-cors mode, an image, a hidden frame
    "/fetches.html": """<img src="{service}{question}">
<iframe src="{service}{question}"></iframe>
<script>
const body = JSON.stringify({{mine: ["R4", "R5", "R3"], theirs: ["B8"], seen: ["B7", "B10"]}});
const sent = [
  fetch("{service}/v1/claims", {{method: "POST", mode: "no-cors", body: body,
                                 headers: {{"Content-Type": "text/plain"}}}}),
  fetch("{service}/v1/claims", {{method: "POST", mode: "no-cors", body: body}}),
  fetch("{service}{question}", {{mode: "no-cors"}}),
  fetch("{service}/web/certificate{query}", {{mode: "no-cors"}}),
];
Promise.allSettled(sent).then(() => {{ document.title = "sent"; }});
</script>""",
}
"""The pages another site serves, each sending its requests to the judge's service."""


class Answered:
    """ASGI wrapper of the service: every request's method, path and answer's status, as the
    service saw them (the browser keeps another site's page from seeing them)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[tuple[str, str, int]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def tap(message: Any) -> None:
            if message["type"] == "http.response.start":
                self.seen.append((scope["method"], scope["path"], message["status"]))
            await send(message)

        await self.app(scope, receive, tap if scope["type"] == "http" else send)


class AnotherSite:
    """A tiny HTTP server on another port of 127.0.0.1 serving :data:`ATTACKS`."""

    def __init__(self, service: str) -> None:
        pages = {
            path: html.format(service=service, question=QUESTION_PAGE, query=QUESTION_PAGE[1:])
            for path, html in ATTACKS.items()
        }

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                data = pages.get(self.path, "").encode()
                self.send_response(200 if data else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> AnotherSite:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@needs_chromium
def test_another_sites_page_gets_nothing_done_and_the_services_pages_still_work(
    browser: Any, tmp_path: Path
) -> None:
    log = tmp_path / "claims.log"
    live = LiveServer(ServiceConfig(log_path=str(log)))
    answered = live.server.config.app = Answered(live.server.config.app)
    with live, AnotherSite(live.url) as site:
        attacker = Watched(browser)
        page = attacker.page
        for form in ("/claims-form.html", "/play-form.html", "/batch-form.html"):
            page.goto(site.url + form)
            page.wait_for_url(live.url + "/**")  # submitted, and answered
            assert "another site" in page.inner_text("body"), form
        page.goto(site.url + "/fetches.html")
        page.wait_for_function("() => document.title === 'sent'")
        page.wait_for_load_state("load")  # the image and the frame have been answered too
        attacker.close()
        # (the browser asks for the favicon of the refusal it shows: not the page's doing)
        seen = [a for a in answered.seen if a[1] != "/favicon.ico"]
        asked = sorted((method, path) for method, path, _ in seen)
        assert asked == [
            ("GET", "/"),  # the image
            ("GET", "/"),  # the frame
            ("GET", "/"),  # fetch(), no-cors
            ("GET", "/web/certificate"),
            ("POST", "/play"),
            ("POST", "/v1/claims"),  # the text/plain form
            ("POST", "/v1/claims"),  # fetch(), no-cors, text/plain
            ("POST", "/v1/claims"),  # fetch(), no-cors, no type given
            ("POST", "/v1/claims:batch"),
        ], asked
        assert {status for _, _, status in seen} == {403}, seen
        assert logged(log) == 0  # nothing was decided for another site
        del answered.seen[:]

        own = Watched(browser)
        page = own.page
        page.goto(live.url + QUESTION_PAGE)  # the service's own pages still work
        assert page.get_attribute("[data-verdict]", "data-verdict") == "valid"
        assert logged(log) == 1
        with page.expect_download() as download:
            page.click("text=Download the certificate")
        certificate = tmp_path / "certificate.json"
        download.value.save_as(certificate)
        page.set_input_files("#certificate-file", str(certificate))  # the drop zone (htmx)
        page.wait_for_selector("[data-verified]")
        assert page.get_attribute("[data-verified]", "data-verified") == "true"
        page.goto(live.url + "/play")  # a plain form post, then htmx posts
        page.check("input[name=opponent][value=heuristic]")
        page.click("#play-start")
        page.wait_for_selector('[data-mine="true"]')
        page.locator(".hand.mine a.card").first.click()  # hx-get
        page.locator('.flag[data-target="true"] .target-move').first.click()  # hx-post
        page.wait_for_selector(".flag .side.below .card")
        page.goto(live.url + "/game")  # an upload form
        page.set_input_files("#game-file", str(EXAMPLES / "games" / "every-tactic.blg"))
        page.click("#game-open")
        page.wait_for_selector("[data-step]")
        page.goto(live.url + "/audit")  # an upload by htmx: the service's own log
        records = logged(log)  # the question asked, and again for its certificate
        assert records == 2
        page.set_input_files("#audit-log", str(log))
        page.click("#audit-run")
        page.wait_for_selector("[data-audit]")
        assert page.get_attribute("[data-audit]", "data-audit") == "ok"
        page.select_option("#filter-verdict", "invalid")  # audit.js, under the policy
        assert page.inner_text(".filters .shown") == f"0 of {records} records shown"
        own.close()
        assert own.violations == [] and own.errors == [], (own.violations, own.errors)
        assert {status for _, _, status in answered.seen} <= {200, 303, 304}, answered.seen


@needs_chromium
def test_swagger_ui_loads_and_posts_under_the_policy(watched: Watched, live: LiveServer) -> None:
    page = watched.page
    page.goto(live.url + "/docs")
    page.wait_for_selector(".swagger-ui .info .title")
    assert "battlejudge" in page.inner_text(".swagger-ui .info .title")
    claims = "#operations-default-claims_v1_claims_post"  # POST /v1/claims
    page.click(f"{claims} .opblock-summary")
    page.click(f"{claims} .try-out__btn")
    page.fill(f"{claims} textarea.body-param__text", json.dumps(VALID))
    with page.expect_response(lambda r: r.url.startswith(live.url + "/v1/claims")) as answer:
        page.click(f"{claims} .execute")  # fetch(), application/json, from /docs itself
    assert answer.value.status == 200 and answer.value.json()["verdict"] == "valid"
    page.wait_for_selector(f"{claims} .live-responses-table")
