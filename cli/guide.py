"""``battlejudge guide``: placeholder until the rules guide lands (issue 5)."""

from __future__ import annotations

import click

COMMANDS: tuple[click.Command, ...] = ()
