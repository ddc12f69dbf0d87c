"""Proof-log commands: ``audit``, ``log repair`` and ``keys new``.

``audit`` is a thin layer over :func:`battlejudge.proofs.audit.audit_records`; other
commands (or more options of this one) audit with extra checks through
:func:`run_audit`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import click

from battlejudge.cli.common import EXIT_NO, EXIT_OK, emit_json, stderr_is_tty
from battlejudge.proofs.audit import AuditReport, Check, audit_records
from battlejudge.proofs.keys import key_id, load_private_key, load_public_key, new_key_pair
from battlejudge.proofs.log import LogRecord, Problem, read_log

PROGRESS_MIN = 50
"""Logs with at least this many records get a progress bar (when stderr is a terminal)."""


def audit_report(
    log: str,
    *,
    pubkey: str | None = None,
    deep: bool = False,
    checks: Sequence[Check] = (),
    progress: bool | None = None,
) -> AuditReport:
    """Audit LOG as the ``audit`` command does, with a progress bar on stderr for a long
    log when stderr is a terminal (``progress`` forces it on or off). Raises ``OSError``
    or :class:`InputError` for an unreadable log or key (exit 2 at the CLI)."""
    key = load_public_key(pubkey) if pubkey is not None else None
    records, problems = read_log(log)
    if progress is None:
        progress = stderr_is_tty() and len(records) >= PROGRESS_MIN
    if not progress:
        return audit_records(records, problems, pubkey=key, deep=deep, checks=checks)
    with click.progressbar(length=len(records), label="auditing", file=sys.stderr) as bar:
        return audit_records(
            records, problems, pubkey=key, deep=deep, progress=bar.update, checks=checks
        )


def _signature_line(report: AuditReport, require: bool) -> str | None:
    """What the report says of signatures nobody checked (None once they were)."""
    if report.signatures_checked:
        return None
    n, signed = len(report.records), report.signed
    if signed == 0:
        return "No record is signed." + (" --require-signatures fails." if require else "")
    then = "--require-signatures needs --pubkey." if require else "give --pubkey to check them."
    return f"Signatures NOT checked: {signed} of {n} records are signed; {then}"


def _repair_text(repair: dict[str, Any]) -> str:
    n, k = len(repair["moved"]), repair["rechained"]
    lines = ", ".join(str(m["line"]) for m in repair["moved"])
    return (
        f"{n} line{'s' if n != 1 else ''} ({lines}) moved aside to {repair['to']}, "
        f"{k} record{'s' if k != 1 else ''} re-chained."
    )


def print_report(
    log: str, report: AuditReport, *, as_json: bool, require_signatures: bool = False
) -> NoReturn:
    """Print an audit report (JSON or one problem a line) and exit 0 clean, 1 problems.

    Signatures are only checked with a public key; without one the report says plainly
    that they were not, and ``require_signatures`` makes that a failure (exit 1)."""
    ok = report.ok and (report.signatures_checked or not require_signatures)
    if as_json:
        out = report.to_json()
        out["ok"] = ok
        if require_signatures:
            out["signatures"]["required"] = True
        emit_json(out)
    else:
        for p in report.problems:
            click.echo(f"record {p.record}: {p.kind}: {p.detail}")
        n = len(report.records)
        records = f"{n} record{'s' if n != 1 else ''}"
        if report.ok:
            what = "chain intact" + (", signatures good" if report.signatures_checked else "")
            click.secho(f"{log}: {records}, {what}, every certificate verified.", fg="green")
        else:
            k = len(report.problems)
            click.secho(f"{log}: {records}, {k} problem{'s' if k != 1 else ''}.", fg="red")
        line = _signature_line(report, require_signatures)
        if line is not None:
            click.secho(line, fg="red" if require_signatures else "yellow")
        for r in report.repairs:
            click.echo(f"record {r.index}: repaired at {r.time}: {_repair_text(r.data['repair'])}")
    raise click.exceptions.Exit(EXIT_OK if ok else EXIT_NO)


def run_audit(
    log: str,
    *,
    pubkey: str | None = None,
    deep: bool = False,
    as_json: bool = False,
    checks: Sequence[Check] = (),
    require_signatures: bool = False,
) -> NoReturn:
    """The whole ``audit`` command: audit, print, exit (0 clean, 1 problems or, with
    ``require_signatures``, signatures not checked; unreadable log or key: the error
    propagates to the group, exit 2)."""
    report = audit_report(log, pubkey=pubkey, deep=deep, checks=checks)
    print_report(log, report, as_json=as_json, require_signatures=require_signatures)


@click.command()
@click.argument("log", type=click.Path())
@click.option(
    "--pubkey",
    type=click.Path(),
    default=None,
    help="Check every record's signature with this public key (PEM); unsigned records "
    "are problems.",
)
@click.option(
    "--require-signatures",
    is_flag=True,
    help="Fail (exit 1) unless every record's signature was checked: needs --pubkey.",
)
@click.option("--deep", is_flag=True, help="Also re-decide every question by brute force.")
@click.option(
    "--games",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="Also check the log against the game records (.blg) in this folder.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def audit(
    log: str,
    pubkey: str | None,
    require_signatures: bool,
    deep: bool,
    games: str | None,
    as_json: bool,
) -> None:
    """Audit a proof LOG: hash chain, sequence numbers, signatures, and every certificate
    re-verified (DRAT proof or witness) against its record's question and verdict.

    Prints each problem with its record number (0-based line) and kind: edited, deleted,
    reordered, inserted, torn, malformed, bad-signature, unsigned, bad-proof, mismatch.
    With --games DIR, also: every logged question that names a game is exactly a
    question that game's position asked at that turn, and every claim in every game is in
    the log (kinds: missing-claim, not-in-game, question-mismatch, no-game-record,
    bad-game).
    Signatures are checked only with --pubkey; without it the report says they were not
    (and --require-signatures makes that exit 1).
    Exit 0 clean, 1 problems found, 2 unreadable log or key.
    """
    checks: list[Check] = []
    if games is not None:
        from battlejudge.apps.audit_games import check_games

        folder = Path(games)

        def against_games(records: Sequence[LogRecord]) -> list[Problem]:
            return [Problem(p.record, p.kind, p.detail) for p in check_games(list(records), folder)]

        checks.append(against_games)
    run_audit(
        log,
        pubkey=pubkey,
        deep=deep,
        as_json=as_json,
        checks=checks,
        require_signatures=require_signatures,
    )


@click.group()
def keys() -> None:
    """Ed25519 key pairs for signing proof logs."""


@keys.command("new")
@click.option(
    "--out",
    "prefix",
    default="battlejudge",
    show_default=True,
    metavar="PREFIX",
    help="Write PREFIX.key (private, mode 0600) and PREFIX.pub (public).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the file names as JSON.")
def keys_new(prefix: str, as_json: bool) -> None:
    """Generate a key pair for signing proof logs (PEM files). Never overwrites a file:
    exit 2 if PREFIX.key or PREFIX.pub exists."""
    private, public = new_key_pair(prefix)
    ident = key_id(load_private_key(private))
    if as_json:
        emit_json({"private": str(private), "public": str(public), "key_id": ident})
        return
    click.echo(f"Wrote {private} (private key: keep it secret) and {public} (public key).")
    click.echo(f"Key id {ident}.")


@click.group("log")
def log_group() -> None:
    """Proof-log upkeep."""


@log_group.command("repair")
@click.argument("log", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--key",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Sign the repair record, and the records re-chained after the lines moved aside "
    "(needed when those were signed).",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
def log_repair(log: str, key: str | None, as_json: bool) -> None:
    """Move the lines of a proof LOG that are not records (the ones audit calls malformed
    or torn) aside to LOG.moved-SEQ, re-chain the records after them, and append a
    repair record saying what was done; the log then audits clean of them and takes
    appends as before.

    Damage of any other kind (edited, deleted, inserted records...) is not re-chained
    around: the log is left as it is. Exit 0 repaired (or nothing to repair), 2 not
    repaired (the reason is printed).
    """
    from battlejudge.proofs.repair import repair_log

    done = repair_log(log, load_private_key(key) if key else None)
    if as_json:
        emit_json({"repaired": done is not None, **(done.to_json() if done else {})})
    elif done is None:
        click.echo(f"{log}: nothing to repair: every line is a record.")
    else:
        text = _repair_text(done.record["repair"])
        click.echo(f"{log}: {text[0].upper()}{text[1:-1]}; logged as record {done.record['seq']}.")


COMMANDS: tuple[click.Command, ...] = (audit, log_group, keys)
