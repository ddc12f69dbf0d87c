"""Proof-log commands (issue 4): placeholder until the proof logs land."""

from __future__ import annotations

import click

COMMANDS: tuple[click.Command, ...] = ()
