"""``battlejudge bench web``: the claim checker in a real browser. For each question, the
page with all but the claimant's last troop in place, then the tap on that troop, timed in
the page from the click to the swapped-in answer (Chromium driven by Playwright, against
``battlejudge serve`` on loopback with 2 workers); beside the same kind of question asked of
``POST /v1/claims`` from Python in the same run. Target: the answer within 100 ms of the
tap (p90)."""

from __future__ import annotations

import json
import random
import shutil
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from battlejudge.bench.serve import ServiceError, percentile, running_service

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from battlejudge.solver.battleline import ClaimQuestion

__all__ = ["TARGET_P90_MS", "WebBench", "run_web"]

TARGET_P90_MS: Final = 100
"""The answer within this many ms of the tap, at the 90th percentile."""


def _questions(seed: int, count: int) -> tuple[list[ClaimQuestion], list[ClaimQuestion]]:
    """Questions of every split (3-card, Mud, wild cards; valid and invalid), each asked
    once: the even ones of the page, the odd ones of the API, so neither finds the other's
    proof in the workers' cache."""
    from battlejudge.bench.claims import split_suite

    pool = [q for _, q in split_suite(seed, count) if any(c.is_troop for c in q.mine)]
    random.Random(seed).shuffle(pool)
    return pool[0 : 2 * count : 2], pool[1 : 2 * count : 2]


def _tap(page: Page, url: str, q: ClaimQuestion) -> tuple[float, str]:
    """Open the page with all but the claimant's last troop in place, tap that troop and
    wait for the answer; the ms from the click to the swapped-in answer, and the verdict."""
    from battlejudge.apps.web.chromium import SWAP_SETTLED, TIME_THE_SWAP

    last = [c for c in q.mine if c.is_troop][-1]
    mine = [str(c) for c in q.mine if c != last]
    query = {
        "mine": ",".join(mine),
        "theirs": ",".join(map(str, q.theirs)),
        "seen": ",".join(map(str, q.seen)),
        "mud": "1" if q.mud else "0",
        "fog": "1" if q.fog else "0",
        "zone": "mine",
    }
    page.goto(f"{url}/?{urllib.parse.urlencode(query)}")
    page.evaluate(TIME_THE_SWAP)
    page.click(f"#card-{last}")
    page.wait_for_function(SWAP_SETTLED)  # a function: the page's CSP forbids eval
    ms = float(page.evaluate("window.swapMs"))
    return ms, str(page.get_attribute("[data-verdict]", "data-verdict"))


def _ask_api(url: str, q: ClaimQuestion) -> float:
    """The ms of ``POST /v1/claims`` for ``q`` from this process."""
    body = json.dumps(q.to_json()).encode()
    request = urllib.request.Request(f"{url}/v1/claims", body, {"Content-Type": "application/json"})
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=30) as r:
        r.read()
    return (time.perf_counter() - start) * 1e3


@dataclass(frozen=True)
class WebBench:
    """The figures: questions asked of the page and of the API, the page's verdicts, and
    the p50, p90 and max of the page's tap-to-answer ms and the p50 and p90 of the API's."""

    questions: int
    api_questions: int
    verdicts: dict[str, int]
    tap_to_answer_ms: dict[str, float]
    api_ms: dict[str, float]

    @property
    def target_met(self) -> bool:
        """The answer within :data:`TARGET_P90_MS` of the tap, at the 90th percentile."""
        return self.tap_to_answer_ms["p90"] <= TARGET_P90_MS

    def to_json(self) -> dict[str, Any]:
        """The figures as ``bench web --json`` prints them."""
        return {
            "questions": self.questions,
            "verdicts": self.verdicts,
            "tap_to_answer_ms": self.tap_to_answer_ms,
            "api_ms": self.api_ms,
            "target_met": self.target_met,
        }


def run_web(chromium: str, count: int, seed: int) -> WebBench:
    """The whole benchmark (see the module) with the Chromium at ``chromium``.
    ServiceError if the service does not start or the page's verdict is not the solver's."""
    from playwright.sync_api import sync_playwright

    from battlejudge.apps.web.chromium import CHROMIUM_ARGS
    from battlejudge.solver import battleline as bl

    suite, api_suite = _questions(seed, count)
    page_ms: list[float] = []
    api_ms: list[float] = []
    verdicts = {"valid": 0, "invalid": 0}
    with running_service(2) as port, sync_playwright() as pw:
        url = f"http://127.0.0.1:{port}"
        browser = pw.chromium.launch(
            executable_path=shutil.which(chromium), args=list(CHROMIUM_ARGS)
        )
        page = browser.new_page()
        for q in suite:
            ms, got = _tap(page, url, q)
            page_ms.append(ms)
            want = bl.decide(q).status
            if got != want:
                raise ServiceError(f"the page said {got} for {q!r}, the solver {want}")
            verdicts[want] += 1
        api_ms = [_ask_api(url, q) for q in api_suite]
        browser.close()
    t = {
        "p50": percentile(page_ms, 0.5),
        "p90": percentile(page_ms, 0.9),
        "max": max(page_ms),
    }
    a = {"p50": percentile(api_ms, 0.5), "p90": percentile(api_ms, 0.9)}
    return WebBench(len(suite), len(api_suite), verdicts, t, a)
