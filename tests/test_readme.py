"""The README's examples run and print what the README says (python-chess doctests its
README the same way): every ``>>>`` example through doctest, and every ``$ battlejudge
...`` transcript of a ``text`` block through the command, its output compared line by line
(a line ``...`` stands for any lines, as doctest's ELLIPSIS)."""

from __future__ import annotations

import doctest
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from battlejudge.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def transcripts(text: str) -> list[tuple[str, str]]:
    """``(command, expected output)`` for every ``$ battlejudge`` line of a ``text`` block."""
    found = []
    for block in re.findall(r"```text\n(.*?)```", text, re.DOTALL):
        lines = block.splitlines()
        i = 0
        while i < len(lines):
            if lines[i].startswith("$ battlejudge "):
                command = lines[i][2:]
                out = []
                i += 1
                while i < len(lines) and not lines[i].startswith("$ "):
                    out.append(lines[i])
                    i += 1
                while out and not out[-1].strip():
                    out.pop()
                found.append((command, "\n".join(out) + "\n"))
            else:
                i += 1
    return found


TRANSCRIPTS = transcripts(README.read_text(encoding="utf-8"))


def matches(expected: str, got: str) -> bool:
    """Does ``got`` read as ``expected``, where an ``...`` line in ``expected`` stands for
    any number of lines?"""
    parts = [re.escape(p) for p in re.split(r"^\s*\.\.\.\n", expected, flags=re.MULTILINE)]
    return re.fullmatch("(?:.*\n)*?".join(parts), got, re.DOTALL) is not None


def test_the_readme_has_transcripts() -> None:
    assert len(TRANSCRIPTS) >= 3
    assert matches("a\n...\nd\n", "a\nb\nc\nd\n")
    assert not matches("a\n...\nd\n", "a\nb\nc\ne\n")


@pytest.mark.parametrize("command,expected", TRANSCRIPTS, ids=[c for c, _ in TRANSCRIPTS])
def test_readme_transcript(command: str, expected: str) -> None:
    args = shlex.split(command)[1:]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    got = result.output
    assert matches(expected, got), f"$ {command}\n--- README\n{expected}--- got\n{got}"


def test_readme_python_examples(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the examples name files from a clone's top folder
    result = doctest.testfile(
        str(README), module_relative=False, optionflags=doctest.ELLIPSIS, verbose=False
    )
    assert result.attempted >= 10
    assert result.failed == 0


def test_python_dash_m_battlejudge() -> None:
    """``python -m battlejudge`` is the command (battlejudge/__main__.py)."""
    run = subprocess.run(
        [sys.executable, "-m", "battlejudge", "formation", "R4 R5 R3"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "R4 R5 R3: Wedge 12"
    bad = subprocess.run(
        [sys.executable, "-m", "battlejudge", "formation", "R1 R1 R1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2
    assert "R1" in bad.stderr and "Traceback" not in bad.stderr
