"""The system's Chromium, for the web table's browser tests and ``battlejudge bench web``:
where it is, and the flags that keep it headless and off the network (this machine's
network is closed, and Playwright's own browser downloads are never used)."""

from __future__ import annotations

import shutil
from pathlib import Path

CHROMIUM_ARGS: tuple[str, ...] = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
"""Headless, and no connections of Chromium's own."""


def find_chromium() -> str | None:
    """The path of the system's Chromium (``apt-get install chromium``), or None."""
    for candidate in (
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate and Path(candidate).exists():
            return candidate
    return None


TIME_THE_SWAP = """() => {
    window.swapMs = null;
    document.addEventListener('click', () => { window.tapAt = performance.now(); },
                              {capture: true, once: true});
    document.body.addEventListener('htmx:afterSettle', () => {
        window.swapMs = performance.now() - window.tapAt; }, {once: true});
}"""
"""A script for ``page.evaluate``: times, in the page, the next click until htmx has settled
the server's answer (``window.swapMs``, null until then)."""
SWAP_SETTLED = "() => window.swapMs !== null"
"""A predicate for ``page.wait_for_function``: the swap :data:`TIME_THE_SWAP` times has
settled. A function, not an expression: Playwright evaluates an expression with ``eval``
in the page, which the pages' Content-Security-Policy refuses."""


WATCH_CSP = """document.addEventListener('securitypolicyviolation', (e) => {
    console.error('CSP violation: ' + e.effectiveDirective + ' refused '
                  + (e.blockedURI || 'an inline script or style') + ' at '
                  + e.sourceFile + ':' + e.lineNumber);
}, {capture: true});"""
"""A script for ``add_init_script``: the page says every Content-Security-Policy violation
on its console (Chromium says most of them there itself, and this catches the rest), where
the browser tests look for them (:func:`is_csp_violation`)."""


def is_csp_violation(console_text: str) -> bool:
    """Whether a console message of a page watched by :data:`WATCH_CSP` reports a
    Content-Security-Policy violation."""
    return "CSP violation" in console_text or "Content Security Policy" in console_text
