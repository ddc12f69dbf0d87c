"""What every command shares: error handling, exit codes, JSON output."""

from __future__ import annotations

import inspect
import json
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final, NoReturn, TypeVar

import click

from battlejudge.solver.errors import (
    BattlejudgeError,
    InputError,
    UndecidedError,
    VerificationError,
    missing_extra,
)

EXIT_OK = 0
EXIT_NO = 1
"""Invalid claim, rejected certificate, unsound record."""
EXIT_BAD_INPUT = 2
EXIT_UNDECIDED = 3


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    """Print a one-line error on stderr and exit (2 by default: bad input). A PostgreSQL
    URL or libpq keyword string in it is shown without its secrets, whoever built it."""
    if "=" in message or "postgres" in message.lower():  # (not always: it loads cryptography)
        from battlejudge.proofs.store import redact_urls

        message = redact_urls(message)
    click.echo(f"battlejudge: error: {message}", err=True)
    raise click.exceptions.Exit(code)


SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bcf)(?<!\bvs)[.?!][)\]\"'`]*(?=\s|$)")
"""Where a help text's sentence ends: a full stop, question or exclamation mark (and any closing
bracket or quote after it) before a space, except in "e.g.", "i.e.", "cf." and "vs."."""


def first_sentence(help_text: str) -> str:
    """The first sentence of a command's help, whole, on one line: its summary in ``--help``
    and in the CLI reference (click would cut it with "..." to fit the terminal, and
    mkdocs-click at the end of its first line)."""
    paragraph = inspect.cleandoc(help_text).split("\n\n")[0]
    words = " ".join(word for word in paragraph.split() if word != "\b")
    end = SENTENCE_END.search(words)
    return words[: end.end()] if end else words


def summarize(command: click.Command) -> click.Command:
    """Give ``command`` and every command under it its whole first sentence as its summary
    (``short_help``), unless it sets one itself; returns ``command``."""
    if command.short_help is None and command.help:
        command.short_help = first_sentence(command.help)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            summarize(sub)
    return command


class BattlejudgeGroup(click.Group):
    """A group whose commands turn library errors into one line and an exit code.

    Bad input (``ValueError`` from parsing or rules checks, unreadable files) exits 2
    with the message, never a traceback; an undecided solve exits 3.
    """

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command, turning the library's errors into the documented exit codes: one line
        on stderr, exit 3 for an undecided question, 1 for a failed verification, 2 for bad
        input or a missing extra (named); never a traceback for bad input."""
        try:
            return super().invoke(ctx)
        except UndecidedError as e:
            fail(f"undecided: {e}", EXIT_UNDECIDED)
        except VerificationError as e:
            fail(str(e), EXIT_NO)
        except (ValueError, BattlejudgeError) as e:
            fail(str(e))
        except ImportError as e:
            error = missing_extra(e)
            if error is None:
                raise
            fail(str(error))
        except BrokenPipeError:
            # The reader went away (``battlejudge demo | head``): nothing left to say.
            raise click.exceptions.Exit(EXIT_OK) from None
        except OSError as e:
            name = f" {e.filename!r}" if e.filename else ""
            fail(f"cannot read or write{name}: {e.strerror or e}")


def emit_json(obj: Any) -> None:
    """One JSON document on stdout."""
    click.echo(json.dumps(obj, sort_keys=False))


F = TypeVar("F", bound=Callable[..., Any])


def log_options(what: str) -> Callable[[F], F]:
    """The ``--log LOG`` and ``--key KEY`` options of commands that append to a proof log;
    ``what`` says what is appended ("the decided claim", "every claim")."""

    def decorate(f: F) -> F:
        f = click.option(
            "--witness",
            "witnesses",
            multiple=True,
            metavar="URL=VKEY",
            expose_value=False,
            callback=_keep_witnesses,
            help="A witness that cosigns each checkpoint of the --log (battlejudge witness "
            "serve): its URL and its verifier key (or a file holding it); repeatable. A "
            "witness that refuses (a rollback, a fork) stops the appends.",
        )(f)
        f = click.option(
            "--key",
            type=click.Path(exists=True, dir_okay=False),
            default=None,
            help="Sign the log records with this private key (battlejudge keys new).",
        )(f)
        return click.option(
            "--log",
            "log_path",
            type=click.Path(dir_okay=False),
            default=None,
            help=f"Append {what} to this proof log: a file, or a postgresql:// URL "
            "(battlejudge log init URL makes the log there).",
        )(f)

    return decorate


WITNESSES: Final = "battlejudge.witnesses"
"""Where ``--witness`` leaves its values in the click context (:func:`witness_options`)."""


def _keep_witnesses(ctx: click.Context, _: click.Parameter, value: tuple[str, ...]) -> None:
    if value:
        from battlejudge.proofs.witnessing import parse_witness_option

        try:
            for text in value:
                parse_witness_option(text)
        except InputError as e:
            fail(str(e))
    ctx.meta[WITNESSES] = value


def witness_options() -> tuple[str, ...]:
    """The ``--witness URL=VKEY`` values of the running command (none outside one)."""
    ctx = click.get_current_context(silent=True)
    found: tuple[str, ...] = ctx.meta.get(WITNESSES, ()) if ctx is not None else ()
    return found


def open_log(path: str | None, key: str | None) -> Any:
    """The proof log to append to (None without --log): a file, or a ``postgresql://``
    URL (:func:`battlejudge.proofs.store.open_store`), whose checkpoints the command's
    ``--witness`` witnesses cosign; --key or --witness alone is a usage error. A database
    that cannot be reached or holds no log, or a log the writer cannot vouch for, is bad
    input (exit 2), named without its password."""
    witnesses = witness_options()
    if path is None:
        if key is not None:
            raise click.UsageError("--key goes with --log")
        if witnesses:
            raise click.UsageError("--witness goes with --log")
        return None
    from battlejudge.proofs.keys import load_private_key
    from battlejudge.proofs.store import open_store

    cosign = None
    if witnesses:
        from battlejudge.proofs.witnessing import Cosigners, parse_witness_option

        cosign = Cosigners([parse_witness_option(w) for w in witnesses])
    return open_store(path, load_private_key(key) if key else None, cosign=cosign)


class Renamed(click.Option):
    """An option whose first name is the one the commands share (``--seat``, ``--bot``);
    the names after it are the old ones, still accepted for one release but left out of
    ``--help`` (issue 21: one option name per concept)."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        """The help line with the current name only."""
        names = self.opts
        self.opts = names[:1]
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = names


PROGRESS_EVERY = 10.0
"""Seconds between the plain progress lines of a long run whose stderr is not a terminal."""


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


@contextmanager
def progress(
    total: int, label: str, unit: str, every: float | None = None
) -> Iterator[Callable[[], None]]:
    """Progress of a long run on stderr, with an estimate of the time left: a bar on a
    terminal; otherwise (piped, a CI log) a plain line every ``every`` seconds, e.g.
    ``tournament: 12/120 games, 1m20s so far, about 9m00s left``. A run shorter than
    ``every`` prints nothing when piped. Yields the function to call once per item done.
    """
    if sys.stderr.isatty():
        with click.progressbar(length=total, label=label, file=sys.stderr, show_eta=True) as bar:
            yield lambda: bar.update(1)
        return
    every = PROGRESS_EVERY if every is None else every
    start = time.monotonic()
    state = {"done": 0, "said": start}

    def tick() -> None:
        state["done"] += 1
        now = time.monotonic()
        if now - state["said"] < every and state["done"] < total:
            return
        if now - start < every:
            return  # a short run says nothing
        state["said"] = now
        done = int(state["done"])
        elapsed = now - start
        left = elapsed / done * (total - done)
        rest = f", about {_duration(left)} left" if done < total else ", done"
        click.echo(f"{label}: {done}/{total} {unit}, {_duration(elapsed)} so far{rest}", err=True)

    yield tick


def cp_sat_limit_options(default_seconds: float, what: str) -> Callable[[F], F]:
    """``--time-limit`` (``what``: the seconds CP-SAT may take, ``default_seconds`` unless
    a deterministic limit is given) and ``--deterministic-time`` (CP-SAT's count of its
    work: the same answer on any machine and under any load); :func:`wall_limit` reads
    the two."""

    def decorate(f: F) -> F:
        f = click.option(
            "--deterministic-time",
            type=click.FloatRange(min=0.001),
            default=None,
            help="CP-SAT's deterministic time per solve instead: a count of its work, so the "
            "answer is the same on any machine and under any load.",
        )(f)
        return click.option(
            "--time-limit",
            type=click.FloatRange(min=0.1),
            default=None,
            help=f"{what} [default: {default_seconds:g}, none with --deterministic-time].",
        )(f)

    return decorate


def wall_limit(
    default_seconds: float, time_limit: float | None, deterministic_time: float | None
) -> float | None:
    """The wall-clock limit: the default applies unless a deterministic limit is asked
    for (and --time-limit is not given)."""
    if time_limit is None and deterministic_time is None:
        return default_seconds
    return time_limit
