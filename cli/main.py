"""The ``battlejudge`` command: a thin click layer over the library.

Exit codes (every command): 0 valid / verified / done, 1 invalid / rejected,
2 bad input, 3 undecided (a solver limit was hit; no verdict is printed).
"""

from __future__ import annotations

import click

from battlejudge.cli.common import BattlejudgeGroup


@click.group(cls=BattlejudgeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="battlejudge")
def cli() -> None:
    """Rules adjudication and certified flag-claim proofs for tabletop battle games."""


def _register() -> None:
    from battlejudge.cli import (
        battleplan,
        bench,
        claims,
        demo,
        force_duel,
        games,
        guide,
        lines_of_battle,
        logs,
        referee,
    )

    groups = (
        claims,
        games,
        demo,
        bench,
        guide,
        logs,
        referee,
        battleplan,
        lines_of_battle,
        force_duel,
    )
    for command in (c for g in groups for c in g.COMMANDS):
        cli.add_command(command)


_register()


def main() -> None:
    """Console-script entry point."""
    cli()


if __name__ == "__main__":
    main()
