"""The documentation site builds as the README says, offline: one docs command in the README,
the site's home page and CI; the Python API reference found with a plain editable install
(docs/hooks/sources.py); nothing loaded from another host (docs/hooks/offline.py, which fails
every build that would); and the CLI reference's command summaries whole."""

from __future__ import annotations

import html
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from test_cli_summaries import COMMANDS, words

from battlejudge.cli.common import first_sentence

ROOT = Path(__file__).resolve().parent.parent
HOOKS = ROOT / "docs" / "hooks"
FENCE = re.compile(r"^```sh\n(.*?)^```", re.DOTALL | re.MULTILINE)


def hook(name: str) -> ModuleType:
    """The mkdocs hook ``docs/hooks/NAME.py``, imported from its file."""
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", HOOKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def docs_commands(text: str) -> list[str]:
    """The shell command lines of ``text``'s ``sh`` blocks that install the docs extra."""
    return [
        line.strip()
        for block in FENCE.findall(text)
        for line in block.splitlines()
        if '".[docs]"' in line
    ]


def test_one_docs_command_in_the_readme_the_site_and_ci() -> None:
    """CI runs the command the README and the site's home page give, verbatim."""
    readme = docs_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    index = docs_commands((ROOT / "docs" / "index.md").read_text(encoding="utf-8"))
    ci = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if "[docs]" in line and not line.lstrip().startswith("#")
    ]
    assert len(readme) == 1, readme
    assert index == readme
    assert ci == readme
    assert "mkdocs build --strict" in readme[0]


def test_the_offline_check_sees_what_a_page_fetches(tmp_path: Path) -> None:
    offline = hook("offline")
    fetching = {
        "a.html": '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">',
        "b.html": '<link rel="preconnect" href="https://fonts.gstatic.com" crossorigin>',
        "c.html": '<script src="//cdn.example.org/x.js"></script>',
        "d.html": '<img srcset="img/a.png 1x, https://example.org/b.png 2x">',
        "e.html": "<style>body { background: url('https://example.org/b.png') }</style>",
        "f.html": '<pre class="mermaid">graph LR; a --> b</pre>',
        "g.css": '@import "https://example.org/font.css"; p { color: red }',
        "h.html": '<div style="background: url(http://example.org/x.png)"></div>',
    }
    quiet = {
        "links.html": '<a href="https://pypi.org/project/dratify/">dratify</a>'
        '<link rel="canonical" href="https://example.org/page/">'
        '<script src="../assets/bundle.js"></script><img src="img/a.png">',
        "local.css": "p { background: url(../img/a.png) } a::after { content: 'https://x' }",
    }
    for name, text in {**fetching, **quiet}.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    found = offline.external_resources(tmp_path)
    assert sorted({f.split(":")[0] for f in found}) == sorted(fetching)
    assert len(found) == len(fetching)


def test_the_python_reference_finds_the_package_in_the_checkout(tmp_path: Path) -> None:
    """The tree of links the docs hook lays out holds the package as an install does, so griffe
    finds ``battlejudge.apps.service`` there and only there (not in the bare checkout)."""
    pytest.importorskip("mkdocs", reason="the docs extra is not installed")
    griffe = pytest.importorskip("griffe", reason="the docs extra is not installed")
    sources = hook("sources")
    sources.link_tree(sources.package_dirs(ROOT / "pyproject.toml"), tmp_path)
    assert (tmp_path / "battlejudge" / "apps" / "service.py").is_file()
    assert (tmp_path / "battlejudge" / "openspiel.py").is_file()
    module = griffe.load("battlejudge.apps.service", search_paths=[str(tmp_path)])
    assert "create_app" in module.members
    with pytest.raises((ImportError, KeyError)):
        griffe.load("battlejudge.apps.service", search_paths=[str(ROOT)])


CLI_ITEM = re.compile(r'<li><em><a href="#(battlejudge-[\w-]+)">[\w-]+</a></em>: (.*?)</li>')


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built as CI builds it (``mkdocs build --strict``), into a temporary folder."""
    for name in ("mkdocs", "material", "mkdocstrings", "mkdocs_click"):
        pytest.importorskip(name, reason="the docs extra is not installed")
    out = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert build.returncode == 0, build.stderr[-3000:]
    return out


def test_the_site_loads_nothing_from_another_host(site: Path) -> None:
    pages = list(site.rglob("*.html"))
    assert len(pages) > 30
    assert "create_app" in (site / "reference/python/apps-service/index.html").read_text("utf-8")
    assert hook("offline").external_resources(site) == []


def test_the_cli_reference_lists_whole_summaries(site: Path) -> None:
    page = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    items = CLI_ITEM.findall(page)
    by_anchor = {"battlejudge-" + "-".join(path): command for path, command in COMMANDS}
    assert {anchor for anchor, _ in items} == set(by_anchor)
    for anchor, text in items:
        shown = html.unescape(re.sub(r"<[^>]+>", "", text))
        expected = first_sentence(by_anchor[anchor].help or "").replace("`", "")
        assert words(shown) == words(expected), anchor
