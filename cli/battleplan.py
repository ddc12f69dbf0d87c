"""Commands of battleplan (being written)."""

from __future__ import annotations

import click

COMMANDS: tuple[click.Command, ...] = ()
