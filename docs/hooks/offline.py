"""mkdocs hook: the built site loads nothing from another host.

After every build the site's pages and stylesheets are read for what a browser would fetch
when showing them: scripts, stylesheets, fonts, images, frames, ``url()`` and ``@import`` in
CSS, and the two theme features that fetch on their own (Mermaid diagrams load Mermaid from
unpkg.com; a GitHub ``repo_url`` asks api.github.com for the repository's stars). Any of them
on another host fails the build, naming the file and the URL: the site must read the same
offline (no Google Fonts: ``theme.font: false`` in mkdocs.yml). Links (``<a href>``) to other
sites are not fetched and stay allowed.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig

EXTERNAL = re.compile(r"^\s*(?:[a-zA-Z][a-zA-Z0-9+.-]*:)?//", re.ASCII)
"""A URL on another host: ``https://...``, ``http://...`` or protocol-relative ``//...``."""
CSS_URL = re.compile(r"""url\(\s*['"]?([^'")]+)|@import\s+['"]([^'"]+)""")

FETCHED = {
    "script": ("src",),
    "img": ("src", "srcset"),
    "iframe": ("src",),
    "frame": ("src",),
    "embed": ("src",),
    "object": ("data",),
    "source": ("src", "srcset"),
    "track": ("src",),
    "video": ("src", "poster"),
    "audio": ("src",),
    "input": ("src",),
    "link": ("href",),
}
"""Tag -> the attributes whose URL a browser fetches when it shows the page."""
NOT_FETCHED_LINKS = {"canonical", "alternate", "author", "license", "me", "help", "search"}
"""``<link rel=...>`` values that name a page rather than load anything."""


class _Resources(HTMLParser):
    """Collects the URLs an HTML page makes the browser fetch from another host."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Resource attributes, inline styles, and the theme's self-fetching components."""
        values = {name: value or "" for name, value in attrs}
        rels = set(values.get("rel", "").lower().split())
        if tag == "link" and rels and rels <= NOT_FETCHED_LINKS:
            return
        for name in FETCHED.get(tag, ()):
            value = values.get(name, "")
            for url in value.split(",") if name == "srcset" else [value]:
                if EXTERNAL.match(url):
                    self.found.append(f"<{tag} {name}> {url.split()[0]}")
        self.found += [f"style attribute {u}" for u in css_urls(values.get("style", ""))]
        if "mermaid" in values.get("class", "").split():
            self.found.append("a Mermaid diagram (the theme loads Mermaid from unpkg.com)")
        if values.get("data-md-component") == "source" and "github.com" in values.get("href", ""):
            self.found.append("the GitHub repository widget (it asks api.github.com)")
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        """The end of a ``<style>`` block."""
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        """The CSS of a ``<style>`` block."""
        if self._in_style:
            self.found += [f"<style> {u}" for u in css_urls(data)]


def css_urls(css: str) -> list[str]:
    """The URLs on another host that ``css`` loads (``url(...)``, ``@import``)."""
    urls = (a or b for a, b in CSS_URL.findall(css))
    return [u.strip() for u in urls if EXTERNAL.match(u)]


def html_resources(html: str) -> list[str]:
    """What the page ``html`` fetches from another host, one description per resource."""
    parser = _Resources()
    parser.feed(html)
    parser.close()
    return parser.found


def external_resources(site: Path) -> list[str]:
    """Every resource from another host that the built ``site`` loads, as ``file: what``."""
    found = []
    for path in sorted(site.rglob("*")):
        if path.suffix == ".html":
            items = html_resources(path.read_text(encoding="utf-8"))
        elif path.suffix == ".css":
            items = css_urls(path.read_text(encoding="utf-8"))
        else:
            continue
        found += [f"{path.relative_to(site)}: {item}" for item in items]
    return found


def on_post_build(config: MkDocsConfig) -> None:
    """Fail the build if the site loads anything from another host."""
    found = external_resources(Path(config.site_dir))
    if found:
        from mkdocs.exceptions import PluginError

        shown = "\n  ".join(found[:20])
        more = f"\n  ... and {len(found) - 20} more" if len(found) > 20 else ""
        raise PluginError(
            f"the site loads {len(found)} resources from other hosts (it must read the same "
            f"offline):\n  {shown}{more}"
        )
