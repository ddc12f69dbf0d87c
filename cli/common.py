"""What every command shares: error handling, exit codes, JSON output."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import click

from battlejudge.solver.errors import BattlejudgeError, UndecidedError, VerificationError

EXIT_OK = 0
EXIT_NO = 1
"""Invalid claim, rejected certificate, unsound record."""
EXIT_BAD_INPUT = 2
EXIT_UNDECIDED = 3


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    """Print a one-line error on stderr and exit (2 by default: bad input)."""
    click.echo(f"battlejudge: error: {message}", err=True)
    raise click.exceptions.Exit(code)


class BattlejudgeGroup(click.Group):
    """A group whose commands turn library errors into one line and an exit code.

    Bad input (``ValueError`` from parsing or rules checks, unreadable files) exits 2
    with the message, never a traceback; an undecided solve exits 3.
    """

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except UndecidedError as e:
            fail(f"undecided: {e}", EXIT_UNDECIDED)
        except VerificationError as e:
            fail(str(e), EXIT_NO)
        except (ValueError, BattlejudgeError) as e:
            fail(str(e))
        except BrokenPipeError:
            # The reader went away (``battlejudge demo | head``): nothing left to say.
            raise click.exceptions.Exit(EXIT_OK) from None
        except OSError as e:
            name = f" {e.filename!r}" if e.filename else ""
            fail(f"cannot read or write{name}: {e.strerror or e}")


def emit_json(obj: Any) -> None:
    """One JSON document on stdout."""
    click.echo(json.dumps(obj, sort_keys=False))


def stderr_is_tty() -> bool:
    return sys.stderr.isatty()
