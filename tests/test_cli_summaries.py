"""Every command's summary is a whole sentence: in ``battlejudge --help``, in each group's
``--help`` and in the CLI reference (mkdocs-click lists a group's commands by their
``short_help``), never cut with "..." to fit the terminal nor at the end of a docstring line."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from battlejudge.cli import main
from battlejudge.cli.common import first_sentence


def commands() -> list[tuple[tuple[str, ...], click.Command]]:
    """Every command and group under ``battlejudge``, as the CLI loads them, with its path."""
    found: list[tuple[tuple[str, ...], click.Command]] = []

    def walk(group: click.Group, path: tuple[str, ...], ctx: click.Context) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            assert command is not None
            found.append(((*path, name), command))
            if isinstance(command, click.Group):
                walk(command, (*path, name), click.Context(command, info_name=name, parent=ctx))

    walk(main.cli, (), click.Context(main.cli, info_name="battlejudge"))
    return found


COMMANDS = commands()
GROUPS = [((), main.cli)] + [(path, c) for path, c in COMMANDS if isinstance(c, click.Group)]


def words(text: str) -> str:
    """``text`` without its whitespace (``--help`` wraps lines, and may break at a hyphen)."""
    return "".join(text.split())


def listed(help_text: str) -> dict[str, str]:
    """The ``Commands`` section of a ``--help``: name -> its summary, wrapped lines joined."""
    rows: dict[str, str] = {}
    name = ""
    for line in help_text.split("Commands:\n", 1)[1].splitlines():
        if line.startswith("  ") and not line.startswith("   "):
            name, _, text = line.strip().partition(" ")
            rows[name] = text.strip()
        elif line.strip():
            rows[name] += " " + line.strip()
    return rows


def test_first_sentence() -> None:
    assert first_sentence("Check a file.  Then more.\n\nDetails.") == "Check a file."
    assert first_sentence("Can PIECE (e.g. 'p2 rook') be\n    killed? Yes.") == (
        "Can PIECE (e.g. 'p2 rook') be killed?"
    )
    assert first_sentence("Version 0.25 of the file (see x.md). Next") == (
        "Version 0.25 of the file (see x.md)."
    )
    assert first_sentence("No full stop here\nat all\n\nOther paragraph.") == (
        "No full stop here at all"
    )


@pytest.mark.parametrize("path,command", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_summary_is_the_help_s_whole_first_sentence(
    path: tuple[str, ...], command: click.Command
) -> None:
    summary = command.get_short_help_str()  # click's default width: 45 characters
    assert not summary.endswith("..."), summary
    help_text = " ".join((command.help or "").split())
    assert help_text.startswith(summary)
    assert summary == first_sentence(command.help or "")


def test_the_table_of_commands_holds_their_summaries() -> None:
    """The top-level ``--help`` is printed from ``COMMANDS`` without loading a command."""
    loaded = {path[0]: c.get_short_help_str() for path, c in COMMANDS if len(path) == 1}
    assert {name: entry[2] for name, entry in main.COMMANDS.items()} == loaded


@pytest.mark.parametrize(
    "path,group", GROUPS, ids=[" ".join(p) or "battlejudge" for p, _ in GROUPS]
)
def test_help_lists_whole_summaries(path: tuple[str, ...], group: click.Group) -> None:
    result = CliRunner().invoke(main.cli, [*path, "--help"], terminal_width=80)
    assert result.exit_code == 0, result.output
    rows = listed(result.output)
    ctx = click.Context(group, info_name=path[-1] if path else "battlejudge")
    expected = {}
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        expected[name] = first_sentence(command.help or "")
    assert sorted(rows) == sorted(expected)
    for name, text in rows.items():
        assert not text.endswith("..."), f"{name}: {text}"
        assert words(text) == words(expected[name]), name
