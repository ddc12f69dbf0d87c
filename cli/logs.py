"""Proof-log commands: ``audit``, ``log ...`` (repair, init, checkpoint, prove,
verify-inclusion, prove-consistency, verify-consistency, export, import) and ``keys new``.

``audit`` is a thin layer over :func:`battlejudge.proofs.audit.audit_store`; other
commands (or more options of this one) audit with extra checks through
:func:`run_audit`. A log is a file or a ``postgresql://`` URL everywhere
(:func:`battlejudge.proofs.store.open_store`). The audit and the log's own modules are
imported by the commands that need them, so that ``log verify-inclusion`` and
``log verify-consistency`` load neither the log nor the solver.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from battlejudge.cli.common import EXIT_NO, EXIT_OK, emit_json, fail
from battlejudge.cli.common import progress as show_progress
from battlejudge.proofs.keys import key_id, load_private_key, load_public_key, new_key_pair

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import IO

    from battlejudge.proofs.audit import AuditReport, Check
    from battlejudge.proofs.log import LogRecord, Problem

PROGRESS_MIN = 50
"""Logs with at least this many records get a progress bar (when stderr is a terminal)."""


def _shown(log: str) -> str:
    """The log as printed: a URL without its password."""
    from battlejudge.proofs.store import redact

    return redact(log)


def witness_key_options(f: Any) -> Any:
    """``--witness-key VKEY`` (repeatable) and ``--witnesses-needed K``: a checkpoint is
    taken only with K valid cosignatures of those witnesses (all of them by default)."""
    f = click.option(
        "--witnesses-needed",
        type=click.IntRange(min=0),
        default=None,
        metavar="K",
        help="Refuse a checkpoint without K valid cosignatures of the --witness-key "
        "witnesses (default: all of them).",
    )(f)
    return click.option(
        "--witness-key",
        "witness_keys",
        multiple=True,
        metavar="VKEY",
        help="A witness's verifier key (battlejudge witness vkey), or a file holding it; "
        "repeatable.",
    )(f)


def _witness_check(keys: tuple[str, ...], needed: int | None) -> Any:
    """What checks a checkpoint note's cosignatures (None without --witness-key)."""
    if not keys:
        if needed:
            raise click.UsageError("--witnesses-needed goes with --witness-key")
        return None
    from battlejudge.proofs.witness import parse_witness_key, verify_cosignatures

    parsed = [parse_witness_key(k) for k in keys]
    want = len(parsed) if needed is None else needed
    if want > len(parsed):
        raise click.UsageError(f"--witnesses-needed {want} is more than the {len(parsed)} keys")

    def check(note: str, where: str) -> int:
        return verify_cosignatures(note, parsed, want, where)

    check.keys = parsed  # type: ignore[attr-defined]
    check.needed = want  # type: ignore[attr-defined]
    return check


def audit_report(
    log: str,
    *,
    pubkey: str | None = None,
    deep: bool = False,
    checks: Sequence[Check] = (),
    progress: bool | None = None,
    witnesses: Any = None,
) -> AuditReport:
    """Audit LOG as the ``audit`` command does, reading it once, line by line (memory does
    not grow with the log), with a progress bar on stderr for a long log when stderr is a
    terminal (``progress`` forces it on or off); ``witnesses`` (:func:`_witness_check`)
    makes a checkpoint without the cosignatures it needs a ``checkpoint`` problem. Raises
    ``OSError`` or :class:`InputError` for an unreadable log or key (exit 2 at the CLI)."""
    from battlejudge.proofs.audit import audit_store
    from battlejudge.proofs.store import iter_store

    key = load_public_key(pubkey) if pubkey is not None else None
    with iter_store(log) as reader:
        if progress is None:
            progress = reader.count_lines() >= PROGRESS_MIN
        if not progress:
            report = audit_store(reader, pubkey=key, deep=deep, checks=checks)
        else:
            # a bar on a terminal, plain lines with an estimate when piped (cli.common.progress)
            with show_progress(reader.count_lines(), "auditing", "records") as tick:
                report = audit_store(
                    reader, pubkey=key, deep=deep, checks=checks, progress=lambda n: tick()
                )
        if witnesses is not None:
            witness_problems(report, reader.checkpoint, witnesses)
    return report


def witness_problems(report: AuditReport, note: str | None, witnesses: Any) -> None:
    """Add to ``report`` a ``checkpoint`` problem when ``note`` (the checkpoint the log was
    audited against) lacks the witnesses' cosignatures ``witnesses`` requires."""
    from battlejudge.proofs.witnessing import cosignature_problem

    problem = cosignature_problem(note, witnesses.keys, witnesses.needed, len(report.records))
    if problem is not None:
        report.problems.append(problem)


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
    log: str,
    report: AuditReport,
    *,
    as_json: bool,
    require_signatures: bool = False,
    notes: Sequence[str] | None = None,
) -> NoReturn:
    """Print an audit report (JSON or one problem a line) and exit 0 clean, 1 problems.

    Signatures are only checked with a public key; without one the report says plainly
    that they were not, and ``require_signatures`` makes that a failure (exit 1)."""
    ok = report.ok and (report.signatures_checked or not require_signatures)
    log = _shown(log)
    if as_json:
        out = report.to_json()
        out["ok"] = ok
        if require_signatures:
            out["signatures"]["required"] = True
        if notes is not None:
            out["notes"] = list(notes)
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
        head = report.checkpoint
        if head is None:
            click.secho(
                "No checkpoint: records cut from the end would not show "
                "(battlejudge log checkpoint LOG --write writes one).",
                fg="yellow",
            )
        else:
            click.echo(f"Checked against its checkpoint of {head.time} ({head.size} records).")
        line = _signature_line(report, require_signatures)
        if line is not None:
            click.secho(line, fg="red" if require_signatures else "yellow")
        for r in report.repairs:
            click.echo(f"record {r.index}: repaired at {r.time}: {_repair_text(r.data['repair'])}")
        for note in notes or ():
            click.secho(f"Note: {note}.", fg="yellow")
    raise click.exceptions.Exit(EXIT_OK if ok else EXIT_NO)


def run_audit(
    log: str,
    *,
    pubkey: str | None = None,
    deep: bool = False,
    as_json: bool = False,
    checks: Sequence[Check] = (),
    require_signatures: bool = False,
    witnesses: Any = None,
    notes: list[str] | None = None,
) -> NoReturn:
    """The whole ``audit`` command: audit, print, exit (0 clean, 1 problems or, with
    ``require_signatures``, signatures not checked; unreadable log or key: the error
    propagates to the group, exit 2); ``notes`` (filled by the checks) are printed too."""
    report = audit_report(log, pubkey=pubkey, deep=deep, checks=checks, witnesses=witnesses)
    print_report(log, report, as_json=as_json, require_signatures=require_signatures, notes=notes)


@click.command()
@click.argument("log", metavar="LOG")
@click.option(
    "--pubkey",
    type=click.Path(),
    default=None,
    help="Check every record's signature, and the checkpoint's, with this public key "
    "(PEM); unsigned records are problems.",
)
@click.option(
    "--require-signatures",
    is_flag=True,
    help="Fail (exit 1) unless every record's signature was checked: needs --pubkey.",
)
@click.option("--deep", is_flag=True, help="Also re-decide every question by brute force.")
@click.option(
    "--games",
    "games",
    multiple=True,
    metavar="FOLDER|PATTERN",
    help="Also check the log against the game records (.blg) in this folder; repeat it "
    "for more folders, or give a quoted glob pattern ('runs/*', 'runs/**/*.blg'): the "
    "records are audited together, each named by its path.",
)
@witness_key_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def audit(
    log: str,
    pubkey: str | None,
    require_signatures: bool,
    deep: bool,
    games: tuple[str, ...],
    witness_keys: tuple[str, ...],
    witnesses_needed: int | None,
    as_json: bool,
) -> None:
    """Audit a proof LOG (a file or a postgresql:// URL): hash chain, sequence numbers,
    signatures, every certificate re-verified (DRAT proof or witness) against its record's
    question and verdict, and the records against the log's latest signed checkpoint.

    Prints each problem with its record number (0-based line) and kind: edited, deleted,
    reordered, inserted, torn, malformed, bad-signature, unsigned, bad-proof, mismatch,
    truncated (records the checkpoint covers are gone from the end), checkpoint (the
    records do not hash to its root, or its signature fails).
    With --games DIR, also: every logged question that names a game is exactly a
    question that game's position asked at that turn, and every claim in every game is in
    the log (kinds: missing-claim, not-in-game, question-mismatch, no-game-record,
    bad-game, duplicate-game: one game id in two records), and every header of each
    record is the one the log bound (header-mismatch, naming the header; a note for games
    logged before headers were). --games may be repeated, and takes glob patterns; a
    missing folder or a pattern that matches nothing is exit 2, naming it.
    Signatures are checked only with --pubkey; without it the report says they were not
    (and --require-signatures makes that exit 1). With --witness-key, a checkpoint
    without --witnesses-needed valid cosignatures of those witnesses is a checkpoint
    problem.
    Exit 0 clean, 1 problems found, 2 unreadable log or key.
    """
    from battlejudge.proofs.log import Problem

    witnesses = _witness_check(witness_keys, witnesses_needed)
    checks: list[Check] = []
    notes: list[str] | None = None
    if games:
        from battlejudge.apps.audit_games import check_games, find_records

        sources = find_records(games)  # bad paths are exit 2 before the log is read
        notes = []

        def against_games(records: Sequence[LogRecord]) -> list[Problem]:
            found = check_games(records, sources, notes)
            return [Problem(p.record, p.kind, p.detail) for p in found]

        checks.append(against_games)
    run_audit(
        log,
        pubkey=pubkey,
        deep=deep,
        as_json=as_json,
        checks=checks,
        require_signatures=require_signatures,
        witnesses=witnesses,
        notes=notes,
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
@click.argument("log", metavar="LOG")
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
    around: the log is left as it is. A log whose writers refuse it (no checkpoint, one
    of another key, records cut from its end) is named with the ways on. Exit 0 repaired
    (or nothing to repair), 2 not repaired or not writable (the reason is printed).
    """
    from battlejudge.proofs.repair import repair_log
    from battlejudge.proofs.store import is_url

    if is_url(log):
        fail(f"{_shown(log)}: log repair mends file logs (a database log has no torn lines)")
    if not Path(log).is_file():
        fail(f"{log}: no such log file")
    signer = load_private_key(key) if key else None
    done = repair_log(log, signer)
    _writable_or_say_why(log, signer)
    if as_json:
        emit_json({"repaired": done is not None, **(done.to_json() if done else {})})
    elif done is None:
        click.echo(f"{log}: nothing to repair: every line is a record.")
    else:
        text = _repair_text(done.record["repair"])
        click.echo(f"{log}: {text[0].upper()}{text[1:-1]}; logged as record {done.record['seq']}.")


def _writable_or_say_why(log: str, key: Any) -> None:
    """Exit 2 with the ways on when a writer with ``key`` would refuse the log."""
    from battlejudge.proofs.log import ProofLog, VouchError

    try:
        ProofLog(log, key, sync=False).close()
    except VouchError as e:
        problem = str(e).split(": not appending")[0].split("; not appending")[0]
        fail(
            f"{problem}. No writer appends to it until it is vouched for: if records were "
            f"cut, put them back from a copy (a backup, or battlejudge log export of a "
            f"mirror) and run this again; if you audited it (battlejudge audit {log}) and "
            f"take it as it is, sign a checkpoint of it: battlejudge log checkpoint {log} "
            "--write --key KEY (the audit and the witnesses will still show any cut)"
        )


# -- transparency: checkpoints and proofs ----------------------------------------------------
def _pubkey(path: str) -> Any:
    return load_public_key(path)


@log_group.command("init")
@click.argument("url", metavar="URL")
def log_init(url: str) -> None:
    """Make an empty proof log in the PostgreSQL database at URL (its tables; nothing if
    they are there). Exit 0 done, 2 unreachable database or not a URL."""
    from battlejudge.proofs.store import is_url, redact

    if not is_url(url):
        fail(
            f"{redact(url)}: log init takes a postgresql:// URL (a file log is made by its "
            "first append)"
        )
    from battlejudge.proofs.pglog import init_pg

    made = init_pg(url)
    click.echo(f"{redact(url)}: {'proof log made' if made else 'a proof log is there already'}.")


@log_group.command("checkpoint")
@click.argument("log", metavar="LOG")
@click.option(
    "--write",
    is_flag=True,
    help="Write a fresh checkpoint of the log as it is now (a log written before "
    "checkpoints has none), signed with --key.",
)
@click.option(
    "--key",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Sign the checkpoint --write writes with this private key.",
)
@click.option("--json", "as_json", is_flag=True, help="Print its fields as JSON too.")
def log_checkpoint(log: str, write: bool, key: str | None, as_json: bool) -> None:
    """Print the latest signed checkpoint of LOG (a file or a postgresql:// URL): the tree
    size, the Merkle root of its records and the time, as a signed note (docs/checkpoints.md).
    Exit 0, 2 no checkpoint (without --write) or unreadable log."""
    from battlejudge.proofs.checkpoint import parse_checkpoint
    from battlejudge.proofs.store import is_url, open_store, read_checkpoint

    if key is not None and not write:
        raise click.UsageError("--key goes with --write")
    if write:
        if not is_url(log) and not Path(log).is_file():
            fail(f"{_shown(log)}: no such log")
        # vouching for the log as it is now: what the judge does after auditing it
        store = open_store(log, load_private_key(key) if key else None, adopt=True)
        try:
            note = store.write_checkpoint()
        finally:
            store.close()
    else:
        found = read_checkpoint(log)
        if found is None:
            fail(
                f"{_shown(log)}: no checkpoint yet: battlejudge log checkpoint LOG --write "
                "--key KEY"
            )
        note = found
    if as_json:
        head = parse_checkpoint(note, f"{_shown(log)} checkpoint").checkpoint
        emit_json({**head.to_json(), "note": note})
    else:
        click.echo(note, nl=False)


@log_group.command("prove")
@click.argument("log", metavar="LOG")
@click.option("--record", "seq", required=True, type=click.IntRange(min=0), help="Its seq.")
def log_prove(log: str, seq: int) -> None:
    """Print, as JSON, the proof that record SEQ is in LOG: the record, its index, the
    RFC 9162 audit path and the signed checkpoint it leads to. Anyone with the log's
    public key checks it with log verify-inclusion, without the log. Exit 0, 2 no such
    record, no checkpoint covering it, or a log that does not match its checkpoint."""
    from battlejudge.proofs.transparency import inclusion_proof

    emit_json(inclusion_proof(log, seq))


def _tiles_source(tiles: str) -> Any:
    from battlejudge.proofs.logview import open_view

    return open_view(tiles)


def _verdict(
    check: Any,
    data: dict[str, Any],
    proof: str,
    pubkey: str,
    as_json: bool,
    witnesses: Any = None,
) -> NoReturn:
    from battlejudge.proofs.checkpoint import CheckpointError
    from battlejudge.proofs.transparency import ProofFailed

    key = _pubkey(pubkey)
    try:
        held = check(data, key)
        note = data.get("checkpoint", data.get("new"))
        if witnesses is not None and isinstance(note, str):
            witnesses(note, "checkpoint")  # the one the proof leads to
    except (ProofFailed, CheckpointError) as e:
        if as_json:
            emit_json({"holds": False, "reason": str(e)})
        else:
            click.secho(f"{proof}: does NOT hold: {e}", fg="red")
        raise click.exceptions.Exit(EXIT_NO) from None
    head = held.checkpoint
    if as_json:
        out: dict[str, Any] = {"holds": True, "checkpoint": head.to_json()}
        if held.old is not None:
            out["old"] = held.old.to_json()
        emit_json(out)
    elif held.old is not None:
        click.secho(
            f"{proof}: holds: the log of {held.old.size} records ({held.old.time}) grew into "
            f"the log of {head.size} records ({head.time}), nothing changed or removed.",
            fg="green",
        )
    else:
        record = held.record or {}
        click.secho(
            f"{proof}: holds: record {record.get('seq')} is in {head.origin}, signed "
            f"checkpoint of {head.time} ({head.size} records).",
            fg="green",
        )
    raise click.exceptions.Exit(EXIT_OK)


@log_group.command("verify-inclusion")
@click.argument("proof", metavar="[PROOF.json]", required=False)
@click.option("--pubkey", required=True, type=click.Path(), help="The log's public key (PEM).")
@click.option(
    "--record",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="With --tiles: a file holding the record's line, exactly as logged.",
)
@click.option(
    "--tiles",
    default=None,
    metavar="URL|DIR",
    help="Work out the proof from the log's tiles: a tlog-tiles URL (battlejudge serve's "
    "root) or a folder of tiles (LOG.tiles, or a copy of it).",
)
@witness_key_options
@click.option("--json", "as_json", is_flag=True)
def log_verify_inclusion(
    proof: str | None,
    pubkey: str,
    record: str | None,
    tiles: str | None,
    witness_keys: tuple[str, ...],
    witnesses_needed: int | None,
    as_json: bool,
) -> None:
    """Check an inclusion proof (from log prove or GET /v1/log/proof/SEQ) with the log's
    public key alone: the checkpoint's signature, and the audit path from the record to
    its root. Or, with --record and --tiles, as a client holding only a record: fetch the
    latest checkpoint and the few tiles that prove it from the log's tiles. With
    --witness-key, the checkpoint must carry the witnesses' cosignatures too. Exit 0
    holds, 1 does not hold, 2 unreadable proof, record, tiles or key."""
    from battlejudge.proofs.transparency import INCLUSION_TYPE, load_proof, verify_inclusion_proof

    witnesses = _witness_check(witness_keys, witnesses_needed)
    if (record is None) != (tiles is None) or (proof is None) == (tiles is None):
        raise click.UsageError("give PROOF.json, or --record and --tiles")
    if proof is not None:
        data = load_proof(proof, INCLUSION_TYPE)
        _verdict(verify_inclusion_proof, data, proof, pubkey, as_json, witnesses)
    assert record is not None and tiles is not None
    data = _proof_from_tiles(record, tiles)
    _verdict(verify_inclusion_proof, data, record, pubkey, as_json, witnesses)


def _proof_from_tiles(record: str, tiles: str) -> dict[str, Any]:
    """The inclusion proof of the record in the file ``record``, worked out from the tiles
    (which are not trusted: the proof is checked against the signed checkpoint)."""
    from battlejudge.proofs.transparency import INCLUSION_TYPE

    raw = Path(record).read_bytes()[: 1 << 17].rstrip(b"\r\n")
    try:
        seq = json.loads(raw)["seq"]
    except (ValueError, TypeError, KeyError):
        fail(f"{record}: not a record of a proof log (one JSON line with its seq)")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        fail(f"{record}: its seq is not a record number: {seq!r}")
    view = _tiles_source(tiles)
    try:
        note, head = view.head()
        if seq >= head.size:
            fail(f"{view.name}: its latest checkpoint covers {head.size} records, not {seq}")
        path = view.reader(head.size).inclusion_path(seq)
    finally:
        view.close()
    return {
        "type": INCLUSION_TYPE,
        "index": seq,
        "tree_size": head.size,
        "record": raw.decode("ascii", "replace"),
        "audit_path": [h.hex() for h in path],
        "checkpoint": note,
    }


@log_group.command("prove-consistency")
@click.argument("log", metavar="LOG")
@click.option(
    "--from",
    "old",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="An older checkpoint of the log (a file holding its note).",
)
def log_prove_consistency(log: str, old: str) -> None:
    """Print, as JSON, the proof that LOG only grew since the checkpoint in --from: both
    checkpoints and the RFC 9162 consistency proof. Exit 0, 1 it did not (it was
    rewritten or shrank), 2 unreadable log or checkpoint."""
    from battlejudge.proofs.transparency import ProofFailed, consistency_proof

    note = Path(old).read_text(encoding="utf-8", errors="replace")
    try:
        emit_json(consistency_proof(log, note))
    except ProofFailed as e:
        fail(str(e), EXIT_NO)


@log_group.command("verify-consistency")
@click.argument("proof", metavar="[PROOF.json]", required=False)
@click.option("--pubkey", required=True, type=click.Path(), help="The log's public key (PEM).")
@click.option(
    "--from",
    "old",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="With --tiles: an older checkpoint of the log (a file holding its note).",
)
@click.option(
    "--tiles",
    default=None,
    metavar="URL|DIR",
    help="Work out the proof from the log's tiles (a tlog-tiles URL or a folder of tiles) "
    "against its latest checkpoint.",
)
@witness_key_options
@click.option("--json", "as_json", is_flag=True)
def log_verify_consistency(
    proof: str | None,
    pubkey: str,
    old: str | None,
    tiles: str | None,
    witness_keys: tuple[str, ...],
    witnesses_needed: int | None,
    as_json: bool,
) -> None:
    """Check a consistency proof (from log prove-consistency) with the log's public key
    alone; or, with --from and --tiles, check that the log served as tiles only grew
    since the checkpoint you kept (a log rolled back or rewritten does not hold). With
    --witness-key, the newer checkpoint must carry the witnesses' cosignatures. Exit 0
    holds, 1 does not hold, 2 unreadable proof, tiles or key."""
    from battlejudge.proofs.transparency import (
        CONSISTENCY_TYPE,
        ProofFailed,
        load_proof,
        verify_consistency_proof,
    )

    witnesses = _witness_check(witness_keys, witnesses_needed)
    if (old is None) != (tiles is None) or (proof is None) == (tiles is None):
        raise click.UsageError("give PROOF.json, or --from and --tiles")
    if proof is not None:
        data = load_proof(proof, CONSISTENCY_TYPE)
        _verdict(verify_consistency_proof, data, proof, pubkey, as_json, witnesses)
    assert old is not None and tiles is not None
    view = _tiles_source(tiles)
    try:
        data = view.consistency_proof(Path(old).read_text(encoding="utf-8", errors="replace"))
    except ProofFailed as e:
        if as_json:
            emit_json({"holds": False, "reason": str(e)})
        else:
            click.secho(f"{view.name}: does NOT hold: {e}", fg="red")
        raise click.exceptions.Exit(EXIT_NO) from None
    finally:
        view.close()
    _verdict(verify_consistency_proof, data, view.name, pubkey, as_json, witnesses)


# -- export and import -----------------------------------------------------------------------
@log_group.command("export")
@click.argument("log", metavar="LOG")
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write FILE (and its checkpoint, FILE.checkpoint) instead of stdout.",
)
def log_export(log: str, out: str | None) -> None:
    """Write every line of LOG (a postgresql:// URL or a file) as JSON lines, in seq order,
    byte for byte: an audit of the export gives the report of the log (with --out, its
    checkpoint too). The log is read line by line, in memory that does not grow with it,
    and checked to be a proof log before anything is written. Exit 0, 2 unreadable log."""
    import contextlib
    import tempfile

    from battlejudge.proofs.atomic import write_atomic
    from battlejudge.proofs.log import LogRecord, checkpoint_path
    from battlejudge.proofs.store import is_url, iter_store

    records = 0
    with contextlib.ExitStack() as stack:
        # a database's rows go to a spool file first: nothing is written until all are read
        spool = stack.enter_context(tempfile.TemporaryFile()) if is_url(log) else None
        with iter_store(log) as reader:
            for _, item in reader:
                raw = b""  # a row that is not a record is exported as an empty line
                if isinstance(item, LogRecord):
                    records += 1
                    raw = item.raw
                if spool is not None:
                    spool.write(raw + b"\n")
        source: IO[bytes]
        if spool is None:
            source = stack.enter_context(open(log, "rb"))  # the bytes read, no more
            size = reader.end
        else:
            source, size = spool, spool.tell()
            spool.seek(0)
        chunks = _chunks(source, size)
        if out is None:
            sys.stdout.flush()
            for chunk in chunks:
                sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.flush()
            return
        if Path(out).exists():
            fail(f"{out} exists; not overwriting it")
        _write_atomic_chunks(out, chunks)
    if reader.checkpoint is not None:
        write_atomic(checkpoint_path(out), reader.checkpoint)
    click.echo(f"{reader.name}: {records} records written to {out}.", err=True)


def _chunks(source: IO[bytes], size: int) -> Iterator[bytes]:
    """The next ``size`` bytes of ``source``, a megabyte at a time (fewer if it ends)."""
    while size > 0:
        chunk = source.read(min(size, 1 << 20))
        if not chunk:
            return
        size -= len(chunk)
        yield chunk


def _write_atomic_chunks(path: str, chunks: Iterable[bytes]) -> None:
    """:func:`~battlejudge.proofs.atomic.write_atomic` for data that comes in chunks: a
    temporary file in the same folder, fsynced, renamed over ``path``, the folder fsynced."""
    import os
    import tempfile

    from battlejudge.proofs.atomic import sync_folder

    target = Path(path)
    folder = target.parent
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    sync_folder(folder)


@log_group.command("import")
@click.argument("file", metavar="FILE", type=click.Path(exists=True, dir_okay=False))
@click.argument("target", metavar="URL")
@click.option(
    "--key",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Sign the checkpoint written after the import, when FILE's own checkpoint does "
    "not cover every record.",
)
def log_import(file: str, target: str, key: str | None) -> None:
    """Copy the file log FILE into the empty log at URL (a postgresql:// URL, made if
    needed, or a new file): every record byte for byte, with FILE's checkpoint when it
    matches. FILE must be sound: a chain with no problems and no line that is not a
    record (audit and log repair it first). Exit 0, 2 refused (the reason is printed)."""
    from battlejudge.proofs.audit import chain_problems
    from battlejudge.proofs.store import open_store, read_store

    stored = read_store(file)
    trouble = [*stored.problems, *chain_problems(stored.records)]
    if trouble:
        p = trouble[0]
        fail(f"{file}: record {p.record}: {p.kind}: {p.detail}; import takes a sound log")
    # adopt: an empty log has nothing to vouch for, and any other is refused below
    store = open_store(target, load_private_key(key) if key else None, create=True, adopt=True)
    try:
        if store.next_seq:
            fail(
                f"{store.name}: the log has {store.next_seq} records; import goes into an empty log"
            )
        store.import_lines([r.raw for r in stored.records], stored.checkpoint)
        click.echo(f"{store.name}: {len(stored.records)} records imported from {file}.")
    finally:
        store.close()


COMMANDS: tuple[click.Command, ...] = (audit, log_group, keys)
