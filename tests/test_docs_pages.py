"""The docs site's pages stay true to the code: every ``battlejudge`` command line they show
names commands and options that exist, by their current names (the README too: never an old name
the CLI still accepts unlisted), and the Python example of the engine author's how-to
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


INVOCATION = re.compile(r"(?<![\w./-])battlejudge((?:[ \t]+[^\s`\"'\]|)]+)+)")
"""A ``battlejudge`` command line anywhere in a page (code block, inline code or prose), up to
the end of its code span, quotes or brackets (so a command quoted inside another is its own)."""
FLAG = re.compile(r"(?<![\w-])(--?[\w][\w-]*)")


def hidden_names() -> dict[tuple[str, ...], dict[str, str]]:
    """Command path -> {option name that ``--help`` does not show: the name it shows}, for every
    command of the CLI: the old names of a renamed option, and every name of a hidden one."""
    found: dict[tuple[str, ...], dict[str, str]] = {}

    def walk(command: click.Command, path: tuple[str, ...], ctx: click.Context) -> None:
        for param in command.params:
            if not isinstance(param, click.Option):
                continue
            record = param.get_help_record(ctx)
            shown = set(FLAG.findall(record[0])) if record else set()
            current = next((name for name in param.opts if name in shown), "(none, hidden)")
            for name in (*param.opts, *param.secondary_opts):
                if name not in shown:
                    found.setdefault(path, {})[name] = current
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None
                walk(sub, (*path, name), click.Context(sub, info_name=name, parent=ctx))

    walk(cli, (), click.Context(cli, info_name="battlejudge"))
    return found


HIDDEN = hidden_names()


def hidden_uses(text: str) -> list[str]:
    """Every ``battlejudge`` command line of ``text`` that uses an option name its command
    hides, as ``'LINE': OLD (now NEW)``."""
    found = []
    for match in INVOCATION.finditer(re.sub(r"\\\n\s*", " ", text)):
        words = match[1].split()
        command: click.Command = cli
        path: tuple[str, ...] = ()
        ctx = click.Context(cli, info_name="battlejudge")
        while isinstance(command, click.Group) and words and not words[0].startswith("-"):
            sub = command.get_command(ctx, words[0])
            if sub is None:
                break
            command, path, words = sub, (*path, words[0]), words[1:]
            ctx = click.Context(command, info_name=command.name, parent=ctx)
        hidden = HIDDEN.get(path, {})
        for word in words:
            name = word.split("=")[0]
            if name in hidden:
                found.append(f"{match[0].strip()!r}: {name} (now {hidden[name]})")
    return found


def test_the_check_sees_every_hidden_name_in_use() -> None:
    assert HIDDEN, "no hidden option names: this check has nothing to look for"
    for path, names in HIDDEN.items():
        command = " ".join(("battlejudge", *path))
        for old, new in names.items():
            line = f"run `{command} {old}=x`, or `{command}` alone"
            assert hidden_uses(line) == [f"'{command} {old}=x': {old} (now {new})"]
            assert hidden_uses(f'run "{command} {new} x" (not `{old}`)') == []


README_AND_PAGES = [ROOT / "README.md", *PAGES]


@pytest.mark.parametrize(
    "page", README_AND_PAGES, ids=[str(p.relative_to(ROOT)) for p in README_AND_PAGES]
)
def test_pages_use_the_current_option_names(page: Path) -> None:
    """The old names still work, unlisted, for one release: the pages teach the current ones."""
    assert hidden_uses(page.read_text(encoding="utf-8")) == []
