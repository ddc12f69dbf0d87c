"""The ``battlejudge`` command: a thin click layer over the library.

Exit codes (every command): 0 valid / verified / done, 1 invalid / rejected,
2 bad input, 3 undecided (a solver limit was hit; no verdict is printed).

Commands are loaded when they run: ``battlejudge --help`` lists them from
:data:`COMMANDS` without importing any of them, and a command imports only what it
needs (OR-Tools, FastAPI, cryptography and rich stay out of ``battlejudge claim``).
``tests/test_startup.py`` checks that the table matches the commands' own help.
"""

from __future__ import annotations

import importlib

import click

from battlejudge.cli.common import BattlejudgeGroup, fail, summarize
from battlejudge.solver.errors import missing_extra

COMMANDS: dict[str, tuple[str, str, str]] = {
    "claim": (
        "claims",
        "claim",
        "Decide whether a flag can be claimed, with a checked proof or a beating completion.",
    ),
    "claims": ("claims", "claims", "Batch claim commands."),
    "formation": (
        "claims",
        "formation",
        'Name the best formation of CARDS, such as "R9 cavalry alexander", with wild choices.',
    ),
    "verify": (
        "claims",
        "verify",
        "Check a certificate file: DRAT proof (dratify), CNF re-encoding, witness replay.",
    ),
    "selfplay": (
        "games",
        "selfplay",
        "Bots play --games games, every game recorded (with --out), "
        "reproducible from the seed: game i uses chance seed seed*1000003+i, "
        "and the two bots swap seats every game.",
    ),
    "tournament": (
        "games",
        "tournament",
        "Play a round robin between bots and print each pair's win rate with "
        "its 95% confidence interval (Wilson score).",
    ),
    "play": (
        "games",
        "play",
        "Play a game against a bot in the terminal (Battle Line unless --game).",
    ),
    "replay": (
        "games",
        "replay",
        "Replay a game RECORD (.blg, .bpg, .lbg, .fdg, or - for stdin), "
        "checking every action; a Battle Line record re-adjudicates every claim"
        " with a fresh proof.",
    ),
    "show": (
        "games",
        "show",
        "Draw the table of a Battle Line POSITION.json, or of a game record of any game (at "
        "--turn N for Battle Line, --step N for the others; the end by default).",
    ),
    "schema": (
        "games",
        "schema",
        "Print the JSON Schema of one of the game's files (Battle Line: position, certificate).",
    ),
    "demo": (
        "demo",
        "demo",
        "Adjudicate the rulebook's flag examples (examples/rulebook.json): each"
        " verdict with its explanation or witness, every certificate checked.",
    ),
    "bench": (
        "bench",
        "bench",
        "Benchmarks: print their figures and the ratio against a baseline run in the same process.",
    ),
    "guide": (
        "guide",
        "guide",
        "A patient offline guide to the rules of GAME, answering from the rules alone.",
    ),
    "audit": (
        "logs",
        "audit",
        "Audit a proof LOG (a file or a postgresql:// URL): hash chain, "
        "sequence numbers, signatures, every certificate re-verified (DRAT "
        "proof or witness) against its record's question and verdict, and the "
        "records against the log's latest signed checkpoint.",
    ),
    "log": ("logs", "log_group", "Proof-log upkeep."),
    "keys": ("logs", "keys", "Ed25519 key pairs for signing proof logs."),
    "witness": ("witness", "witness", "A witness of proof logs: cosigns consistent checkpoints."),
    "referee": (
        "referee",
        "referee",
        "Referee games between two bot programs speaking the community Battle "
        "Line bot protocol (any language; each CMD is run as a subprocess, "
        "without a shell).",
    ),
    "bot": (
        "referee",
        "bot",
        "Play one of our bots through the community bot protocol on "
        "stdin/stdout (for ``battlejudge referee`` or any referee of the "
        "protocol).",
    ),
    "serve": (
        "serve",
        "serve",
        "Serve certified claims over HTTP (JSON API; Swagger UI at /docs; web table at /).",
    ),
    "api-keys": (
        "serve",
        "api_keys_group",
        "API keys for `battlejudge serve --api-keys FILE` (the file holds SHA-256 hashes only).",
    ),
    "battleplan": (
        "battleplan",
        "battleplan",
        "BattlePlan: questions about what the face-down stacks can still do this round.",
    ),
    "lines-of-battle": (
        "lines_of_battle",
        "group",
        "Lines of Battle questions: exact odds, exposure, best attack.",
    ),
    "force-duel": (
        "force_duel",
        "force_duel",
        "Force Duel: ask which Force card to show, and print the card-set schema.",
    ),
}
"""Command name -> (module under ``battlejudge.cli``, attribute, summary: the first sentence of
its help, whole, as :func:`~battlejudge.cli.common.first_sentence` reads it)."""


class LazyGroup(BattlejudgeGroup):
    """The top-level group: imports a command's module only when that command runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, sorted, read from :data:`COMMANDS` without importing any command."""
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name``, importing its module now (None for an unknown name), it and
        its subcommands summarized by their whole first sentence; a missing optional extra is
        exit 2 with the extra named."""
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module, attr, _ = entry
        try:
            loaded = importlib.import_module(f"battlejudge.cli.{module}")
        except ImportError as e:
            error = missing_extra(e)
            if error is None:
                raise
            fail(str(error))
        command = getattr(loaded, attr)
        assert isinstance(command, click.Command)
        return summarize(command)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The ``Commands`` section of ``--help``, from the summaries in :data:`COMMANDS` (no
        command is imported): each whole, wrapped rather than cut to the terminal's width."""
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="battlejudge")
def cli() -> None:
    """Rules adjudication and certified flag-claim proofs for tabletop battle games."""


def main() -> None:
    """Console-script entry point."""
    cli()


if __name__ == "__main__":
    main()
