"""The docs site's pages stay true to the code: every ``battlejudge`` command line they show
names commands and options that exist, and the Python example of the engine author's how-to
prints what the page says it prints. (The site itself is built with ``mkdocs build --strict``
in .ci/run; the reference pages are generated from the code and need no test here.)"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest

from battlejudge.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)


def command_lines(text: str) -> list[str]:
    """The ``battlejudge`` invocations shown in the console and shell blocks of ``text``,
    continuation lines joined (``$ `` prompts and ``PYTHONPATH=...`` prefixes dropped)."""
    found = []
    for lang, body in FENCE.findall(text):
        if lang not in ("console", "sh"):
            continue
        joined = re.sub(r"\\\n\s*", " ", body)
        for line in joined.splitlines():
            if lang == "console" and not line.startswith("$ "):
                continue  # the output of a command
            line = line.removeprefix("$ ").strip()
            line = re.sub(r"^(\w+=\S+ )+", "", line)
            if line.startswith("battlejudge "):
                found.append(line)
    return found


def unknown_options(line: str) -> list[str]:
    """The options of ``line`` that its command does not have, or the unknown command."""
    words = shlex.split(line.split(" #")[0].split(" > ")[0].split(" | ")[0].split(" && ")[0])
    command: click.Command = cli
    ctx = click.Context(cli, info_name="battlejudge")
    rest = words[1:]
    while isinstance(command, click.Group) and rest and not rest[0].startswith("-"):
        sub = command.get_command(ctx, rest[0])
        if sub is None:
            return [f"no command {rest[0]!r}"]
        command, rest = sub, rest[1:]
        ctx = click.Context(command, info_name=command.name, parent=ctx)
    names = {opt for p in command.params for opt in (*p.opts, *p.secondary_opts)}
    names |= {"-h", "--help"}
    return [w for w in rest if w.startswith("-") and w.split("=")[0] not in names]


PAGES = sorted(p for p in DOCS.rglob("*.md"))


def test_the_pages_show_commands() -> None:
    lines = [line for page in PAGES for line in command_lines(page.read_text(encoding="utf-8"))]
    assert len(lines) > 30
    assert unknown_options("battlejudge claim --mine R4 --no-such-option") == ["--no-such-option"]
    assert unknown_options("battlejudge no-such-command") == ["no command 'no-such-command'"]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_documented_commands_exist(page: Path) -> None:
    bad = {
        line: unknown
        for line in command_lines(page.read_text(encoding="utf-8"))
        if (unknown := unknown_options(line))
    }
    assert not bad


def test_engine_author_example_prints_what_the_page_says() -> None:
    text = (DOCS / "how-to" / "engine-author.md").read_text(encoding="utf-8")
    blocks = FENCE.findall(text)
    i = next(i for i, (lang, body) in enumerate(blocks) if lang == "python" and "new_game" in body)
    code, (lang, expected) = blocks[i][1], blocks[i + 1]
    assert lang == "text"
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == expected
