"""Commands of lines_of_battle (being written)."""

from __future__ import annotations

import click

COMMANDS: tuple[click.Command, ...] = ()
