"""The web table in a real browser: the system's Chromium driven by Playwright, clicking and
typing as a player would, on a live service. Screenshots go to tests/screenshots/ (ignored
by git) for a person to look at.

Chromium comes from the system (``apt-get install chromium``; .ci/run installs it) and is
launched by path: Playwright's own browser downloads are never used. Without it these tests
skip, saying so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright
from web_server import LiveServer

from battlejudge.apps.web.chromium import (
    CHROMIUM_ARGS,
    SWAP_SETTLED,
    TIME_THE_SWAP,
    WATCH_CSP,
    find_chromium,
    is_csp_violation,
)

SHOTS = Path(__file__).parent / "screenshots"
CHROMIUM = find_chromium()
ARGS = list(CHROMIUM_ARGS)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium on this machine (apt-get install chromium; .ci/run installs it)",
)


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with LiveServer() as live:
        yield live


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture()
def page(browser: Browser, server: LiveServer) -> Iterator[Page]:
    """A fresh desktop-sized page that fails the test on any script error or violation of
    the Content-Security-Policy, and may load nothing but the service's own URLs (the pages
    must work offline)."""
    context = browser.new_context(viewport={"width": 1100, "height": 900}, accept_downloads=True)
    context.add_init_script(WATCH_CSP)
    pg = context.new_page()
    errors: list[str] = []
    elsewhere: list[str] = []
    violations: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("console", lambda m: violations.append(m.text) if is_csp_violation(m.text) else None)

    def only_here(route, request) -> None:  # type: ignore[no-untyped-def]
        if request.url.startswith(server.url):
            route.continue_()
        else:
            elsewhere.append(request.url)
            route.abort()

    pg.route("**/*", only_here)
    yield pg
    context.close()
    assert errors == [], errors
    assert violations == [], violations
    assert elsewhere == [], f"the page asked for URLs outside the service: {elsewhere}"


def shot(page: Page, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


TIMES: list[float] = []
"""Seconds from each tap to its answer on the page (printed with ``-s``; never asserted)."""


def swapped(page: Page, act: Callable[[], None]) -> None:
    """Do ``act`` (a click, a key), then wait until htmx has swapped in the server's answer;
    the time from the click to the swap, measured in the page, is kept in ``TIMES``.
    The page's scripts must have run first: a key pressed before its handler is attached
    asks nothing (seen once under load, after a navigation)."""
    page.wait_for_load_state("load")
    page.evaluate(TIME_THE_SWAP)
    act()
    page.wait_for_function(SWAP_SETTLED)
    TIMES.append(page.evaluate("window.swapMs") / 1000)


def tap(page: Page, selector: str) -> None:
    """Click, as a player taps, and wait for the answer."""
    swapped(page, lambda: page.click(selector))


def press(page: Page, key: str) -> None:
    """Press a key that asks the server, and wait for the answer."""
    swapped(page, lambda: page.keyboard.press(key))


def test_tapping_a_claim_in_shows_its_proof_and_keeps_it_in_the_url(
    page: Page, server: LiveServer
) -> None:
    page.goto(server.url + "/")
    assert page.locator("[data-verdict]").count() == 0
    for card in ("R4", "R5"):
        tap(page, f"#card-{card}")
        assert page.get_attribute(f"#card-{card}", "data-zone") == "mine"
    tap(page, "#card-R3")
    assert page.get_attribute("[data-verdict]", "data-verdict") == "invalid"  # theirs empty
    tap(page, "#zone-theirs")
    tap(page, "#card-B8")
    tap(page, "#zone-seen")
    tap(page, "#card-B7")
    assert page.get_attribute("[data-witness]", "data-witness") == "B9 B10"
    tap(page, "#card-B10")
    assert page.get_attribute("[data-verdict]", "data-verdict") == "valid"
    print(f"tap to answer, ms: {', '.join(f'{t * 1000:.0f}' for t in TIMES)}")
    assert page.get_attribute("[data-blocking]", "data-blocking") == "B7 B10"
    for card in ("B7", "B10"):
        assert "blocking" in (page.get_attribute(f"#card-{card}", "class") or "")
    assert "blocking" not in (page.get_attribute("#card-B8", "class") or "")
    assert "Wedge 12" in page.inner_text(".formations")
    assert "Blue 7 and Blue 10 are face up" in page.inner_text(".why")
    assert page.url.startswith(server.url + "/?mine=R4,R5,R3&theirs=B8&seen=B7,B10&mud=0&fog=0")
    shot(page, "checker-valid-desktop")
    page.reload()  # the URL is the whole state
    assert page.get_attribute("[data-blocking]", "data-blocking") == "B7 B10"
    page.go_back()  # and the history is the taps
    page.wait_for_selector("[data-witness]")
    assert page.get_attribute("[data-witness]", "data-witness") == "B9 B10"


def test_a_shared_link_shows_the_answer_on_load(page: Page, server: LiveServer) -> None:
    page.goto(server.url + "/?mine=R4,R5,R3&theirs=B8&seen=B7&mud=0&fog=0&first=")
    assert page.get_attribute("[data-verdict]", "data-verdict") == "invalid"
    assert page.get_attribute("[data-witness]", "data-witness") == "B9 B10"
    assert page.locator(".evidence .card").count() == 3  # B8 + B9 B10 drawn as cards
    assert "added" in (page.get_attribute("#card-B9", "class") or "")


def test_mud_fog_and_who_completed_first(page: Page, server: LiveServer) -> None:
    page.goto(server.url + "/?mine=R8,O8,Y8&theirs=G8,B8,P8")
    assert page.locator("[data-verdict]").count() == 0  # a tie needs who completed first
    assert "completed_first must say" in page.inner_text(".problem")
    tap(page, "#first-mine")
    assert page.get_attribute("[data-verdict]", "data-verdict") == "valid"
    tap(page, "#first-theirs")
    assert page.get_attribute("[data-verdict]", "data-verdict") == "invalid"
    tap(page, "#switch-mud")
    assert page.get_attribute("#switch-mud", "aria-checked") == "true"
    hint = page.inner_text(".hint")  # four a side under Mud: not an error, a hint
    assert hint == "1 more card for your side, 1 more card for theirs"
    assert page.locator(".problem").count() == 0
    tap(page, "#switch-mud")
    tap(page, "#switch-fog")
    assert "fog=1" in page.url
    assert page.locator("[data-verdict]").count() == 1


def test_bad_input_is_refused_in_place(page: Page, server: LiveServer) -> None:
    page.goto(server.url + "/")
    tap(page, "#card-alexander")
    tap(page, "#card-darius")
    tap(page, "#card-R3")
    problem = page.inner_text(".problem")
    assert problem == "mine has two Leaders (alexander darius); a player may have only one"
    assert page.locator('[data-verdict="valid"], [data-verdict="invalid"]').count() == 0
    shot(page, "checker-bad-input")
    tap(page, "#card-darius")  # taken back: the table is fixed in place
    tap(page, "#card-R4")
    assert page.locator("[data-verdict]").count() == 1
    page.goto(server.url + "/?mine=R4,R4,R3")
    assert page.inner_text(".problem") == "card R4 is given in mine twice; every card exists once"
    assert page.locator("[data-verdict]").count() == 0


def test_the_keyboard_alone_can_ask(page: Page, server: LiveServer) -> None:
    page.goto(server.url + "/")
    page.focus("#card-R1")
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    press(page, "Enter")  # R4
    assert page.evaluate("document.activeElement.id") == "card-R4"  # focus kept after the swap
    page.keyboard.press("ArrowRight")
    press(page, " ")  # R5
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    press(page, "Enter")  # R3
    assert page.get_attribute("[data-verdict]", "data-verdict") == "invalid"
    page.keyboard.press("ArrowDown")  # O3
    assert page.evaluate("document.activeElement.id") == "card-O3"
    page.focus("#zone-theirs")
    press(page, "Enter")
    assert page.get_attribute("#zone-theirs", "aria-pressed") == "true"


def test_typing_the_cards_asks_the_same(page: Page, server: LiveServer) -> None:
    page.goto(server.url + "/")
    page.click(".typed summary")
    page.fill(".typed input[name=mine]", "r4 r5 r3")
    page.fill(".typed input[name=theirs]", "B8")
    page.fill(".typed input[name=seen]", "b7, b10")
    page.click(".typed button")
    page.wait_for_selector("[data-verdict]")
    assert page.get_attribute("[data-blocking]", "data-blocking") == "B7 B10"


def test_a_phone_can_read_and_tap_it(browser: Browser, server: LiveServer) -> None:
    context = browser.new_context(viewport={"width": 360, "height": 740}, has_touch=True)
    page = context.new_page()
    page.goto(server.url + "/?mine=R4,R5,R3&theirs=B8&seen=B7,B10")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, f"the page is {width} px wide on a 360 px phone"
    box = page.locator("#card-R10").bounding_box()
    assert box is not None and box["width"] >= 28 and box["height"] >= 40  # tappable
    assert page.inner_text("#card-G7").split() == ["G", "7", "◆"]  # letter, value, shape
    swapped(page, lambda: page.tap("#card-B10"))  # taken back: B10 no longer blocks
    assert page.get_attribute("[data-verdict]", "data-verdict") == "invalid"
    shot(page, "checker-phone-360")
    context.close()


def test_certificate_download_then_drop_verifies(
    page: Page, server: LiveServer, tmp_path: Path
) -> None:
    page.goto(server.url + "/?mine=R4,R5,R3&theirs=B8&seen=B7,B10")
    with page.expect_download() as info:
        page.click("text=Download the certificate")
    saved = tmp_path / info.value.suggested_filename
    info.value.save_as(saved)
    assert json.loads(saved.read_text())["verdict"] == "valid"
    page.set_input_files("#certificate-file", str(saved))
    page.wait_for_selector("[data-verified]")
    assert page.get_attribute("[data-verified]", "data-verified") == "true"
    # the same file dropped on the zone, as a person drags it from their files
    tampered = json.loads(saved.read_text())
    tampered["blocking"] = ["B7"]
    page.evaluate(
        """(text) => {
            const zone = document.querySelector('.dropzone');
            const data = new DataTransfer();
            data.items.add(new File([text], 'tampered.json', {type: 'application/json'}));
            document.querySelector('#verify-result').innerHTML = '';
            zone.dispatchEvent(new DragEvent('drop', {dataTransfer: data, bubbles: true}));
        }""",
        json.dumps(tampered),
    )
    page.wait_for_selector("[data-verified]")
    assert page.get_attribute("[data-verified]", "data-verified") == "false"
    assert "tampered.json" in page.inner_text("#verify-result")
    shot(page, "checker-certificate-checked")
    page.set_input_files("#certificate-file", str(saved))
    page.wait_for_selector('[data-verified="true"]')
    page.click("#verify-result a")
    page.wait_for_selector("[data-verdict]")
    assert page.get_attribute("[data-blocking]", "data-blocking") == "B7 B10"


def test_the_api_docs_work_offline(page: Page, server: LiveServer) -> None:
    page.goto(server.url + "/docs")
    page.wait_for_selector(".swagger-ui .info .title")
    assert "battlejudge" in page.inner_text(".swagger-ui .info .title")
    shot(page, "api-docs")


def test_a_judge_audits_a_log_and_opens_a_claim(
    page: Page, server: LiveServer, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from battlejudge.cli.main import cli

    runner = CliRunner()
    assert runner.invoke(cli, ["keys", "new", "--out", str(tmp_path / "judge")]).exit_code == 0
    args = ["selfplay", "--games", "2", "--bots", "heuristic,random", "--seed", "3"]
    args += ["--out", str(tmp_path / "games"), "--log", str(tmp_path / "claims.log")]
    assert runner.invoke(cli, [*args, "--key", str(tmp_path / "judge.key")]).exit_code == 0
    page.goto(server.url + "/audit")
    page.set_input_files("#audit-log", str(tmp_path / "claims.log"))
    page.set_input_files("#audit-key", str(tmp_path / "judge.pub"))
    page.set_input_files("#audit-games", sorted(str(g) for g in (tmp_path / "games").iterdir()))
    page.click("#audit-run")
    page.wait_for_selector("[data-audit]")
    assert page.get_attribute("[data-audit]", "data-audit") == "ok"
    assert "signatures good, every certificate verified" in page.inner_text(".audit-report")
    rows = page.locator("table.records tbody tr")
    total = rows.count()
    assert total > 0
    game = page.locator("#filter-game option").nth(1).inner_text()
    page.select_option("#filter-game", game)
    visible = page.locator("table.records tbody tr:visible")
    assert 0 < visible.count() < total
    assert all(visible.nth(i).get_attribute("data-game") == game for i in range(visible.count()))
    shot(page, "audit")
    verdict = visible.first.get_attribute("data-row-verdict")
    visible.first.locator("a").click()
    page.wait_for_selector("[data-verdict]")
    assert page.get_attribute("[data-verdict]", "data-verdict") == verdict


def test_a_game_steps_with_the_keys_and_a_flag_is_asked(page: Page, server: LiveServer) -> None:
    page.goto(server.url + "/game")
    page.click("text=games/every-tactic.blg")
    page.wait_for_selector("[data-step]")
    assert page.get_attribute("[data-step]", "data-step") == "1"
    page.focus("body")
    for _ in range(3):
        swapped(page, lambda: page.keyboard.press("ArrowRight"))
    assert page.get_attribute("[data-step]", "data-step") == "4"
    swapped(page, lambda: page.keyboard.press("End"))
    assert page.get_attribute(".status", "data-turn") == "59"
    tap(page, "#hide-south")
    assert "7 cards, hidden" in page.inner_text(
        '[data-hand="south"]'
    ) or "hidden" in page.inner_text('[data-hand="south"]')
    tap(page, "#theme-nine-circles")
    assert "Circle 1" in page.inner_text(".flags")
    assert "Circle" in page.inner_text(".flags")
    page.goto(server.url + "/game?src=ex:positions/wedge-beats-blue-8.json&theme=nine-circles")
    tap(page, "#ask-1-north")
    assert page.get_attribute("[data-verdict]", "data-verdict") == "valid"
    assert page.get_attribute("[data-blocking]", "data-blocking") == "B7 B10"
    assert "Can north claim circle 1?" in page.inner_text(".asked-panel")
    shot(page, "game-asked-nine-circles")
    page.click("text=Open this question in the claim checker")
    page.wait_for_selector("#checker [data-verdict]")
    assert page.get_attribute("[data-verdict]", "data-verdict") == "valid"


def test_a_game_on_a_phone(browser: Browser, server: LiveServer) -> None:
    context = browser.new_context(viewport={"width": 360, "height": 740}, has_touch=True)
    page = context.new_page()
    page.goto(server.url + "/game?src=ex:games/every-tactic.blg&step=40&flag=2&player=north")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, f"the viewer is {width} px wide on a 360 px phone"
    shot(page, "game-phone-360")
    context.close()


def test_playing_against_a_bot_in_the_browser(page: Page, server: LiveServer) -> None:
    page.goto(server.url + "/play")
    page.check("input[name=opponent][value=heuristic]")
    page.fill("input[name=seed]", "21")
    page.click("#play-start")
    page.wait_for_selector('[data-mine="true"]')
    assert "/tables/" in page.url and "token=" in page.url
    hand = page.locator(".hand.mine a.card")
    assert hand.count() == 7
    swapped(page, lambda: hand.first.click())
    targets = page.locator('.flag[data-target="true"]')
    assert targets.count() == 9  # an empty table: every flag takes a troop
    shot(page, "play-card-picked")
    swapped(page, lambda: page.locator('.flag[data-flag="5"] .target-move').click())
    assert page.locator('.flag[data-flag="5"] .side.below .card').count() == 1  # mine, below
    draw = page.locator("button.move", has_text="draw troop")
    swapped(page, lambda: draw.click())
    # the bot moves in the background; the events stream has the page redrawn
    page.wait_for_selector('.status[data-turn="3"][data-mine="true"]')
    assert page.locator(".flag .side.above .card").count() == 1  # the bot's card, above
    page.reload()  # the table lives in the store
    assert page.locator('.flag[data-flag="5"] .side.below .card').count() == 1
    assert page.get_attribute(".status", "data-turn") == "3"


def test_a_table_for_two_stays_live_on_both_phones(browser: Browser, server: LiveServer) -> None:
    """The lobby opens a table for two people; each seat's page, 360 px wide, follows the
    other's moves through the events stream, and a spectator's too."""
    phones = [
        browser.new_context(viewport={"width": 360, "height": 740}, has_touch=True)
        for _ in range(3)
    ]
    north, south, watcher = (c.new_page() for c in phones)
    north.goto(server.url + "/tables")
    assert north.evaluate("document.documentElement.scrollWidth") <= 360
    shot(north, "tables-lobby-phone-360")
    north.fill("input[name=seed]", "6")
    north.fill("input[name=minutes]", "10")
    north.click("#table-open")
    south_url = server.url + (north.get_attribute("#sit-south", "href") or "")
    watch_url = server.url + (north.get_attribute("a:has-text('Watch')", "href") or "")
    north.click("#sit-north")
    south.goto(south_url)
    watcher.goto(watch_url)
    north.wait_for_selector('[data-mine="true"]')
    north.locator(".hand.mine a.card").first.click()
    north.wait_for_selector(".target-move")
    width = north.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, f"the table is {width} px wide on a 360 px phone"
    shot(north, "table-seat-phone-360")
    north.locator('.flag[data-flag="2"] .target-move').click()
    north.wait_for_selector('.flag[data-flag="2"] .side.below .card')
    for pg in (south, watcher):  # told by the events stream, no reload
        pg.wait_for_selector('.flag[data-flag="2"] .side.north .card')
    assert south.locator('.flag[data-flag="2"] .side.above .card').count() == 1
    north.locator("button.move", has_text="draw troop").click()
    south.wait_for_selector('[data-mine="true"]')
    assert south.evaluate("document.documentElement.scrollWidth") <= 360
    shot(south, "table-other-seat-phone-360")
    assert watcher.locator("[data-hand-card]").count() == 0
    for c in phones:
        c.close()


def test_bench_web_times_taps_and_checks_every_verdict() -> None:
    """``battlejudge bench web`` taps the last card of each question in Chromium and
    compares the page's verdict with the solver's (it stops on a wrong one); its figures
    are printed, never asserted."""
    import subprocess
    import sys

    args = ["bench", "web", "--questions", "5", "--chromium", str(CHROMIUM), "--json"]
    r = subprocess.run(
        [sys.executable, "-c", "from battlejudge.cli.main import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["questions"] == 5 and sum(data["verdicts"].values()) == 5
    assert set(data["tap_to_answer_ms"]) == {"p50", "p90", "max"}
    assert data["tap_to_answer_ms"]["max"] > 0 and data["api_ms"]["p50"] > 0
