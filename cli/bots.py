"""Bot commands (issue 4): placeholder until the bots land."""

from __future__ import annotations

import click

COMMANDS: tuple[click.Command, ...] = ()
