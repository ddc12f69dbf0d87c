"""Battle Line claim commands: ``claim``, ``claims check``, ``formation``, ``verify``."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import IO, Any

import click

from battlejudge.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_NO,
    EXIT_OK,
    EXIT_UNDECIDED,
    Renamed,
    emit_json,
    fail,
    log_options,
    open_log,
    progress,
)
from battlejudge.engines.battleline.answer_json import claim_json, formation_json
from battlejudge.proofs.budget import DEFAULT_TIME_LIMIT
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import UndecidedError
from battlejudge.solver.json_input import parse_json


def _print_claim(p: bl.ProvedClaim, verified: bool, certificate: str | None) -> None:
    q = p.question
    env = " ".join(name for name, on in (("Mud", q.mud), ("Fog", q.fog)) if on)
    if p.valid:
        click.secho("VALID: the flag can be claimed.", fg="green", bold=True)
    else:
        click.secho("INVALID: the flag cannot be claimed yet.", fg="red", bold=True)
    click.echo(f"  mine    {bl.format_cards(q.mine):<22} {p.mine.label}")
    theirs = bl.format_cards(q.theirs) or "-"
    state = "complete" if q.theirs_complete else f"{len(q.theirs)} of {q.size} cards"
    click.echo(f"  theirs  {theirs:<22} {state}")
    click.echo(f"  seen    {bl.format_cards(q.seen) or '-'}")
    if env:
        click.echo(f"  flag    {env}")
    click.echo("Why:" if p.valid else "Witness:")
    for line in p.explanation:
        click.echo(f"  {line}")
    if p.valid:
        click.echo(f"Blocking set: {bl.format_cards(p.blocking) or '(none: no card needed)'}")
        cert = p.certificate
        assert cert.proof is not None and cert.cnf is not None
        lines = cert.proof.count("\n")
        clauses = cert.cnf.split("\n", 3)[2].split()[3]
        status = "verified by dratify" if verified else "NOT verified"
        click.echo(f"Proof: DRAT refutation of a {clauses}-clause CNF, {lines} lines, {status}.")
    if certificate:
        click.echo(f"Certificate written to {certificate}")


@click.command()
@click.argument("position", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--flag", type=click.IntRange(1, 9), default=None, help="With POSITION: the flag claimed (1-9)."
)
@click.option(
    "--seat",
    "--player",
    "player",
    cls=Renamed,
    type=click.Choice(["north", "south"]),
    default=None,
    help="With POSITION: the claimant's seat.",
)
@click.option("--mine", default=None, help="The claimant's cards at the flag, e.g. 'R4 R5 R3'.")
@click.option("--theirs", default="", help="The opponent's cards at the flag.")
@click.option("--seen", default="", help="Every other face-up troop (other flags, discards).")
@click.option("--mud", is_flag=True, help="Mud lies at this flag: formations of four.")
@click.option("--fog", is_flag=True, help="Fog lies at this flag: only sums count.")
@click.option(
    "--completed-first",
    type=click.Choice(["mine", "theirs"]),
    default=None,
    help="Who completed first, when both sides are complete (the side that completed last "
    "loses a tie).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option(
    "--certificate",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Write the certificate (proof or witness) to this file.",
)
@click.option(
    "--conflict-limit",
    type=click.IntRange(min=1),
    default=None,
    help="Give up after this many solver conflicts (exit 3, no verdict).",
)
@log_options("the decided claim")
def claim(
    position: str | None,
    flag: int | None,
    player: str | None,
    mine: str | None,
    theirs: str,
    seen: str,
    mud: bool,
    fog: bool,
    completed_first: str | None,
    as_json: bool,
    certificate: str | None,
    conflict_limit: int | None,
    log_path: str | None,
    key: str | None,
) -> None:
    """Decide whether a flag can be claimed, with a checked proof or a beating completion.

    Either give the flag's cards (--mine, --theirs, --seen, ...) or a POSITION.json with
    --flag N --seat north|south: the question is then derived from the table.
    Exit 0 valid, 1 invalid, 2 bad input, 3 undecided.
    """
    if position is not None:
        flag_options = {
            "--mine": mine,
            "--theirs": theirs,
            "--seen": seen,
            "--mud": mud,
            "--fog": fog,
            "--completed-first": completed_first,
        }
        given = [name for name, value in flag_options.items() if value]
        if given:
            raise click.UsageError(f"{given[0]} does not go with a POSITION file")
        if flag is None or player is None:
            raise click.UsageError("a POSITION needs --flag N and --seat north|south")
        from battlejudge.engines.battleline.position import claim_question, read_state

        state = read_state(position)
        q = claim_question(state, flag, player)
    else:
        if mine is None:
            raise click.UsageError("give --mine CARDS, or a POSITION with --flag and --seat")
        if flag is not None or player is not None:
            raise click.UsageError("--flag and --seat go with a POSITION file")
        q = bl.ClaimQuestion(mine, theirs, seen, mud=mud, fog=fog, completed_first=completed_first)
    start = time.perf_counter()
    p = bl.prove(q, conflict_limit=conflict_limit)
    micros = round((time.perf_counter() - start) * 1e6)
    verified = bl.verify(p)
    if certificate:
        from battlejudge.proofs.battleline import save_certificate

        save_certificate(p.certificate, certificate)
    proof_log = open_log(log_path, key)
    if proof_log is not None:
        from battlejudge.proofs.log import append_proved

        context: dict[str, Any] = {}
        if position is not None and flag is not None:
            context = {
                "game": Path(position).stem,
                "turn": state.turn,
                "player": player,
                "flag": flag,
            }
        with proof_log:
            append_proved(proof_log, p, **context)
    if as_json:
        emit_json(claim_json(p, verified=verified, certificate=certificate, micros=micros))
    else:
        _print_claim(p, verified, certificate)
    raise click.exceptions.Exit(EXIT_OK if p.valid else EXIT_NO)


def _lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines with their numbers, as bytes: each is decoded on its own, so a
    line that is not UTF-8 spoils no other."""
    for number, line in enumerate(stream, start=1):
        if line.strip():
            yield number, line


def check_line(line: str | bytes, conflict_limit: int | None) -> dict[str, Any]:
    """Answer one JSON-lines question (UTF-8 bytes or text, within the JSON limits of
    :func:`parse_json`); bad input becomes an ``error`` result."""
    try:
        q = bl.ClaimQuestion.from_json(parse_json(line))
        start = time.perf_counter()
        p = bl.prove(q, conflict_limit=conflict_limit)
        micros = round((time.perf_counter() - start) * 1e6)
    except UndecidedError:
        return {"verdict": "unknown"}
    except ValueError as e:
        return {"error": str(e)}
    return {
        "verdict": p.verdict,
        "witness": None if p.witness is None else p.witness.to_json(),
        "blocking": [str(c) for c in p.blocking],
        "explanation": p.explanation,
        "micros": micros,
    }


@click.group()
def claims() -> None:
    """Batch claim commands."""


@claims.command("check")
@click.argument("file", type=click.File("rb"))
@click.option(
    "--conflict-limit",
    type=click.IntRange(min=1),
    default=None,
    help="Give up on a question after this many solver conflicts.",
)
def claims_check(file: IO[bytes], conflict_limit: int | None) -> None:
    """Answer every flag question of a JSON-lines FILE (``-`` for stdin), in order.

    One JSON result per non-blank line, with its line number. Bad lines get an
    ``error`` result and the rest are still answered. Exit 0 when every line was
    answered, 2 if some line was bad input, 3 if some question was undecided.
    """
    worst = EXIT_OK
    items = list(_lines(file)) if file is not sys.stdin.buffer else None
    source: Any = items if items is not None else _lines(file)
    counted = progress(len(items), "claims", "lines") if items is not None else nullcontext(None)
    with counted as tick:
        for number, line in source:
            if tick is not None:
                tick()
            result = {"line": number, **check_line(line, conflict_limit)}
            if "error" in result:
                worst = EXIT_BAD_INPUT
            elif result["verdict"] == "unknown" and worst == EXIT_OK:
                worst = EXIT_UNDECIDED
            emit_json(result)
    raise click.exceptions.Exit(worst)


@click.command()
@click.argument("cards")
@click.option("--mud", is_flag=True, help="Four-card formation.")
@click.option("--fog", is_flag=True, help="Only the sum counts.")
@click.option("--json", "as_json", is_flag=True)
def formation(cards: str, mud: bool, fog: bool, as_json: bool) -> None:
    """Name the best formation of CARDS, such as "R9 cavalry alexander", with wild choices."""
    parsed = bl.parse_cards(cards, "CARDS")
    f = bl.best_formation(parsed, mud=mud, fog=fog)
    if as_json:
        emit_json(formation_json(f, parsed))
        return
    wilds = ", ".join(f"{w} as {t}" for w, t in f.wild_choices().items())
    click.echo(f"{bl.format_cards(parsed)}: {f.label}" + (f" ({wilds})" if wilds else ""))


@click.command()
@click.argument("certificate", type=click.Path(exists=True, dir_okay=False))
@click.option("--deep", is_flag=True, help="Also re-decide the question by brute force.")
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_TIME_LIMIT,
    show_default=True,
    metavar="SECONDS",
    help="Stop the check after this long (exit 3, no verdict).",
)
@click.option("--json", "as_json", is_flag=True)
def verify(certificate: str, deep: bool, time_limit: float, as_json: bool) -> None:
    """Check a certificate file: DRAT proof (dratify), CNF re-encoding, witness replay.

    A proof out of proportion to its CNF is refused before checking; the check runs in
    a worker process that is stopped after --time-limit seconds or 512 MiB.
    Exit 0 verified, 1 rejected (the reason is printed), 2 not a certificate,
    3 out of time or memory (no verdict).
    """
    from battlejudge.solver.errors import VerificationError

    try:
        from battlejudge.proofs.battleline import verify_file

        cert = verify_file(certificate, deep=deep, time_limit=time_limit)
    except VerificationError as e:
        if as_json:
            emit_json({"verified": False, "reason": str(e)})
        else:
            click.secho(str(e), fg="red", err=True)
        raise click.exceptions.Exit(EXIT_NO) from None
    except UndecidedError as e:
        if not as_json:
            fail(f"undecided: {e}", EXIT_UNDECIDED)
        emit_json({"verified": None, "reason": str(e)})
        raise click.exceptions.Exit(EXIT_UNDECIDED) from None
    what = (
        "valid claim, DRAT proof checked"
        if cert.verdict == "valid"
        else ("invalid claim, witness replayed")
    )
    if as_json:
        emit_json({"verified": True, "verdict": cert.verdict, "deep": deep})
    else:
        extra = " and confirmed by brute force" if deep else ""
        click.secho(f"VERIFIED: {what}{extra}.", fg="green")


COMMANDS: tuple[click.Command, ...] = (claim, claims, formation, verify)
