"""The tutorial's terminal game is what ``battlejudge play`` prints today (issue 37: the
first-game page showed ``chance: north draws O2`` and no legend long after play changed)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from click.testing import CliRunner

from battlejudge.cli.main import cli

PAGE = Path(__file__).resolve().parent.parent / "docs" / "tutorial" / "first-game.md"
PROMPT = "your move> "


def _transcript() -> tuple[list[str], list[str], str]:
    """The page's play transcript: the command's arguments, the lines typed, and the
    whole terminal (typing echoed)."""
    pattern = r"```console\n\$ battlejudge (play [^\n]*)\n(.*?)\n```"
    block = re.search(pattern, PAGE.read_text(), re.S)
    assert block is not None, "docs/tutorial/first-game.md has no play transcript"
    args = shlex.split(block.group(1))
    typed = re.findall(rf"^{re.escape(PROMPT)}(.*)$", block.group(2), re.M)
    return args, typed, block.group(2)


def _plain(text: str) -> str:
    """Lines without their trailing blanks (the page drops them)."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def test_the_first_game_transcript_is_what_play_prints() -> None:
    args, typed, shown = _transcript()
    assert typed and typed[-1] == "quit"
    result = CliRunner().invoke(cli, args, input="".join(t + "\n" for t in typed))
    assert result.exit_code == 0, result.output
    assert _plain(result.output) == _plain(shown)
