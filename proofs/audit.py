"""Auditing a proof log: the hash chain, the signatures and every certificate.

The chain (``prev``) and the sequence numbers (``seq``) together tell what happened to a
damaged log, record by record:

- ``edited``: a record's SHA-256 is not the ``prev`` of the record that follows it in the
  chain, or its ``seq`` disagrees with its place in the chain;
- ``deleted``: seq numbers are missing (named at the record after the gap);
- ``reordered``: a record stands before or after records it should not;
- ``inserted``: a record that belongs to no chain (its neighbours link to each other
  around it), a copy of another record, or a second record with the same seq;
- ``torn`` and ``malformed``: lines that are not records (see :func:`read_log`);
- ``bad-signature`` and ``unsigned`` (with a public key); ``bad-proof`` (the certificate
  does not verify); ``mismatch`` (question or verdict differ from the certificate's).

A repair record (``battlejudge log repair``) is a link of the chain like any record and
is signed like one; it carries no certificate. The report lists the repairs: they are
not problems, but a reader should know the log was repaired.

What a chain cannot show: records cut from the end of the log, or an edit of the last
record; with signatures an edit shows anyway, as a bad signature. The log's latest
checkpoint (``LOG.checkpoint``: tree size and Merkle root of the records, signed) shows
both:

- ``truncated``: the checkpoint covers more records than the log holds (named: which
  seqs are missing from the end);
- ``checkpoint``: the records it covers do not hash to its root, or (with a public key)
  its signature is missing or does not verify.

A log without a checkpoint (written before checkpoints, or exported without one) is
audited by its chain alone, as before, and the report says so.
"""

from __future__ import annotations

import base64
import binascii
import bisect
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any, TypeAlias

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pydantic import ValidationError

from battlejudge.proofs.battleline.certificate import CertificateFile, from_file_model
from battlejudge.proofs.checkpoint import Checkpoint, CheckpointError, parse_checkpoint
from battlejudge.proofs.checkpoint import verify_checkpoint as verify_note
from battlejudge.proofs.keys import load_public_key
from battlejudge.proofs.log import (
    GENESIS,
    PROBLEM_KINDS,
    LogRecord,
    Problem,
    ProblemKind,
    signed_bytes,
)
from battlejudge.proofs.merkle import MerkleTree, leaf_hash
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import BattlejudgeError, VerificationError, invalid

__all__ = [
    "AuditReport",
    "Check",
    "LogRecord",
    "Problem",
    "ProblemKind",
    "Progress",
    "audit_log",
    "audit_records",
    "chain_problems",
    "checkpoint_problems",
    "record_problems",
]

Check: TypeAlias = Callable[[Sequence[LogRecord]], Iterable[Problem]]
"""An extra audit check: given every complete record, the problems it finds."""

Progress: TypeAlias = Callable[[int], None]
"""Called with the number of records just checked (``click.progressbar``'s ``update``)."""

PublicKeyInput: TypeAlias = Ed25519PublicKey | str | PathLike[str] | None


@dataclass(frozen=True)
class AuditReport:
    """The complete records of a log and every problem found, in file order, and whether
    the signatures were checked (only with a public key: a signature nobody checked
    proves nothing, and the report says so)."""

    records: list[LogRecord]
    problems: list[Problem]
    signatures_checked: bool = False
    checkpoint: Checkpoint | None = None
    """The latest checkpoint the log was checked against (None: it has none)."""

    @property
    def ok(self) -> bool:
        """True when the audit found no problem."""
        return not self.problems

    @property
    def repairs(self) -> list[LogRecord]:
        """The repair records, in file order."""
        return [r for r in self.records if r.kind == "repair"]

    @property
    def signed(self) -> int:
        """How many records carry a signature (checked or not)."""
        return sum(1 for r in self.records if r.sig is not None)

    def signatures_json(self) -> dict[str, Any]:
        """``{"checked": ..., "signed": ..., "unsigned": ...}``: record counts."""
        signed = self.signed
        return {
            "checked": self.signatures_checked,
            "signed": signed,
            "unsigned": len(self.records) - signed,
        }

    def to_json(self) -> dict[str, Any]:
        """The report as JSON (``audit --json``): ok, the number of records, every problem, the
        signature summary, the repairs recorded in the log and the checkpoint checked."""
        return {
            "ok": self.ok,
            "records": len(self.records),
            "problems": [p.to_json() for p in self.problems],
            "signatures": self.signatures_json(),
            "repairs": [{"record": r.index, **r.data["repair"]} for r in self.repairs],
            "checkpoint": None if self.checkpoint is None else self.checkpoint.to_json(),
        }


def audit_log(
    path: str | Path,
    pubkey: PublicKeyInput = None,
    deep: bool = False,
    progress: Progress | None = None,
    checks: Sequence[Check] = (),
) -> AuditReport:
    """Read and audit a log: chain, signatures (with ``pubkey``, a key or a PEM file),
    certificates (DRAT or witness; ``deep`` adds the brute-force oracle) and their
    agreement with each record; then each of ``checks``.

    ``path`` is a file or a ``postgresql://`` URL (:func:`battlejudge.proofs.store.read_store`);
    the log is checked against its latest checkpoint too. Raises ``OSError`` (unreadable
    file), :class:`InputError` (not a proof log, a later log format, an unreadable key) or
    :class:`~battlejudge.proofs.store.StoreError` (database unreachable); every other kind
    of damage is a :class:`Problem` in the report.
    """
    from battlejudge.proofs.store import read_store

    key = _public_key(pubkey)
    stored = read_store(path)
    return audit_records(
        stored.records,
        stored.problems,
        pubkey=key,
        deep=deep,
        progress=progress,
        checks=checks,
        checkpoint=stored.checkpoint,
        lines=stored.lines,
    )


def audit_records(
    records: Sequence[LogRecord],
    problems: Iterable[Problem] = (),
    *,
    pubkey: PublicKeyInput = None,
    deep: bool = False,
    progress: Progress | None = None,
    checks: Sequence[Check] = (),
    checkpoint: str | None = None,
    lines: int | None = None,
) -> AuditReport:
    """Audit records already read (``read_log``), adding to the ``problems`` found then;
    with ``checkpoint`` (a checkpoint note), check the records against it too (``lines``:
    how many lines the log has, where a cut end is named; the records' count by default).
    """
    key = _public_key(pubkey)
    found = [*problems, *chain_problems(records)]
    head: Checkpoint | None = None
    if checkpoint is not None:
        end = lines if lines is not None else (records[-1].index + 1 if records else 0)
        head, more = checkpoint_problems(records, checkpoint, key, end)
        found += more
    for record in records:
        found += record_problems(record, key, deep)
        if progress is not None:
            progress(1)
    for check in checks:
        found += check(records)
    return AuditReport(
        list(records), _sorted(found), signatures_checked=key is not None, checkpoint=head
    )


def _public_key(pubkey: PublicKeyInput) -> Ed25519PublicKey | None:
    if pubkey is None or isinstance(pubkey, Ed25519PublicKey):
        return pubkey
    return load_public_key(pubkey)


def _sorted(problems: Iterable[Problem]) -> list[Problem]:
    """One problem per record and kind (the first found), by record then kind."""
    unique: dict[tuple[int, str], Problem] = {}
    for p in problems:
        unique.setdefault((p.record, p.kind), p)
    order: dict[str, int] = {kind: i for i, kind in enumerate(PROBLEM_KINDS)}
    return sorted(unique.values(), key=lambda p: (p.record, order.get(p.kind, len(order))))


# -- one record ----------------------------------------------------------------------------
def record_problems(
    record: LogRecord, pubkey: Ed25519PublicKey | None, deep: bool
) -> list[Problem]:
    """The signature (with a key), the certificate, and the record's agreement with it
    (a repair record has a signature only)."""
    problems = []
    if pubkey is not None:
        problems += _signature_problems(record, pubkey)
    if record.kind == "claim":
        problems += _certificate_problems(record, deep)
    return problems


def _signature_problems(record: LogRecord, pubkey: Ed25519PublicKey) -> list[Problem]:
    sig = record.sig
    if sig is None:
        return [Problem(record.index, "unsigned", "the record has no signature")]
    try:
        pubkey.verify(base64.b64decode(sig, validate=True), signed_bytes(record.data))
    except binascii.Error:
        return [Problem(record.index, "bad-signature", f"sig {sig:.20}... is not base64")]
    except InvalidSignature:
        return [
            Problem(
                record.index,
                "bad-signature",
                "the signature does not match the record (it was changed, or signed "
                "with another key)",
            )
        ]
    return []


def _certificate_problems(record: LogRecord, deep: bool) -> list[Problem]:
    i = record.index
    try:
        file_model = CertificateFile.model_validate(record.data["certificate"])
    except ValidationError as e:
        return [Problem(i, "bad-proof", f"not a certificate: {invalid(e)}")]
    problems = []
    verdict = record.data["verdict"]
    if verdict != file_model.verdict:
        problems.append(
            Problem(
                i,
                "mismatch",
                f"verdict {verdict!r} but the certificate says {file_model.verdict!r}",
            )
        )
    try:
        logged: bl.ClaimQuestion | str = bl.ClaimQuestion.from_json(record.data["question"])
    except ValueError as e:
        logged = str(e)
    try:
        certified: bl.ClaimQuestion | str = bl.ClaimQuestion.from_json(
            file_model.question.model_dump()
        )
    except ValueError as e:
        certified = str(e)
    if isinstance(logged, str):
        problems.append(Problem(i, "mismatch", f"the question is not a flag question: {logged}"))
    elif logged != certified:
        theirs = certified if isinstance(certified, str) else certified.canonical()
        problems.append(
            Problem(
                i, "mismatch", f"question {logged.canonical()} but the certificate is for {theirs}"
            )
        )
    try:
        bl.verify(from_file_model(file_model), deep=deep)
    except VerificationError as e:
        problems.append(Problem(i, "bad-proof", str(e)))
    except (ValueError, BattlejudgeError) as e:
        problems.append(Problem(i, "bad-proof", f"certificate rejected: {e}"))
    return problems


# -- the checkpoint ------------------------------------------------------------------------
def checkpoint_problems(
    records: Sequence[LogRecord], note: str, pubkey: Ed25519PublicKey | None, lines: int
) -> tuple[Checkpoint | None, list[Problem]]:
    """The checkpoint and what is wrong with the log against it: records it covers that
    are gone from the end (``truncated``, named at ``lines``, one past the last line),
    records whose Merkle root is not its root, or its signature (with a key), both
    ``checkpoint``. Records after the checkpoint are no problem (an append whose
    checkpoint had not been written yet). Leaf ``i`` is the ``i``-th record."""
    last = records[-1].index if records else 0
    try:
        signed = parse_checkpoint(note)
    except CheckpointError as e:
        return None, [Problem(last, "checkpoint", f"the checkpoint cannot be read: {e}")]
    head = signed.checkpoint
    problems: list[Problem] = []
    if pubkey is not None:
        try:
            verify_note(note, pubkey)
        except CheckpointError as e:
            problems.append(Problem(last, "checkpoint", str(e)))
    n = len(records)
    end = records[-1].seq + 1 if records else 0
    if head.size > n and head.size <= end:  # the end is there: records went from inside
        problems.append(
            Problem(
                records[-1].index,
                "checkpoint",
                f"the checkpoint of {head.time} covers {head.size} records but the log holds "
                f"{n}: records it covered were removed or damaged (the problems above)",
            )
        )
        return head, problems
    if head.size > n:
        gone = head.size - end
        first = end
        problems.append(
            Problem(
                lines,
                "truncated",
                f"the checkpoint of {head.time} covers {head.size} records but the log holds "
                f"{n}: {gone} record{'s' if gone > 1 else ''} missing from the end "
                f"({_span(first, first + gone - 1)}; deleted, or the log was cut)",
            )
        )
        return head, problems
    tree = MerkleTree(leaf_hash(r.raw) for r in records[: head.size])
    if tree.root() != head.root:
        at = records[head.size - 1].index if head.size else 0
        problems.append(
            Problem(
                at,
                "checkpoint",
                f"the first {head.size} records do not hash to the root of the checkpoint "
                f"of {head.time}: a record among them was changed, removed, moved or "
                "added since",
            )
        )
    return head, problems


# -- the chain -----------------------------------------------------------------------------
def chain_problems(records: Sequence[LogRecord]) -> list[Problem]:
    """Edited, deleted, reordered and inserted records, from ``prev`` links and ``seq``.

    First, records that belong to no chain are set aside as inserted: copies of another
    record, and runs of records that the chain links around (the record after them has
    the hash of the record before them as its ``prev``, and nothing outside the run links
    to them). Then each remaining record's ``seq`` is checked against its place in the
    chain (edited) and in the file (deleted, reordered, duplicated), and each link
    ``prev`` against the record with the seq before it (edited).
    """
    problems: list[Problem] = []
    kept = _drop_copies(records, problems)
    kept = _drop_inserted(kept, problems)
    seqs = _effective_seqs(kept, problems)
    kept = _check_order(kept, seqs, problems)
    _check_links(kept, seqs, problems)
    return problems


def _drop_copies(records: Sequence[LogRecord], problems: list[Problem]) -> list[LogRecord]:
    """Byte-identical records: keep the copy that stands in order (on a longest rising
    run of seqs; else the first); the others are inserted."""
    groups: dict[str, list[int]] = defaultdict(list)
    for pos, r in enumerate(records):
        groups[r.digest].append(pos)
    if all(len(g) == 1 for g in groups.values()):
        return list(records)
    rising = _longest_rising([r.seq for r in records])
    dropped: set[int] = set()
    for positions in groups.values():
        if len(positions) < 2:
            continue
        genuine = next((p for p in positions if p in rising), positions[0])
        for p in positions:
            if p != genuine:
                dropped.add(p)
                problems.append(
                    Problem(
                        records[p].index,
                        "inserted",
                        f"a copy of record {records[genuine].index} (seq {records[p].seq})",
                    )
                )
    return [r for p, r in enumerate(records) if p not in dropped]


def _chain_lengths(records: Sequence[LogRecord]) -> list[int]:
    """For each record, how many records the chain holds from it on (following ``prev``
    links forward in the file)."""
    referrers: dict[str, list[int]] = defaultdict(list)
    for pos, r in enumerate(records):
        referrers[r.prev].append(pos)
    lengths = [1] * len(records)
    for pos in range(len(records) - 1, -1, -1):
        after = [lengths[j] for j in referrers.get(records[pos].digest, ()) if j > pos]
        lengths[pos] = 1 + max(after, default=0)
    return lengths


def _drop_inserted(records: Sequence[LogRecord], problems: list[Problem]) -> list[LogRecord]:
    """Records the chain links around, and that nothing outside them links to."""
    referrers: dict[str, set[str]] = defaultdict(set)
    for r in records:
        referrers[r.prev].add(r.digest)
    lengths = _chain_lengths(records)
    digests = {r.digest for r in records}
    kept: list[LogRecord] = []
    place: dict[str, int] = {GENESIS: -1}  # digest -> position in kept
    for pos, r in enumerate(records):
        q = place.get(r.prev)
        if q is None or q == len(kept) - 1:
            place[r.digest] = len(kept)
            kept.append(r)
            continue
        if _linked_elsewhere(kept, q, r, referrers, digests, place):
            place[r.digest] = len(kept)  # moved, not inserted
            kept.append(r)
            continue
        run = kept[q + 1 :]
        anchor = f"record {kept[q].index}" if q >= 0 else "the start of the log"
        if len(run) < lengths[pos]:
            for x in run:
                del place[x.digest]
                problems.append(
                    Problem(
                        x.index,
                        "inserted",
                        f"not in the chain: record {r.index} follows {anchor} directly",
                    )
                )
            del kept[q + 1 :]
            place[r.digest] = len(kept)
            kept.append(r)
        else:  # a shorter branch starting here: this record is the odd one
            problems.append(
                Problem(
                    r.index,
                    "inserted",
                    f"not in the chain: it claims to follow {anchor}, which record "
                    f"{run[0].index} follows",
                )
            )
    return kept


def _linked_elsewhere(
    kept: list[LogRecord],
    q: int,
    r: LogRecord,
    referrers: dict[str, set[str]],
    digests: set[str],
    place: dict[str, int],
) -> bool:
    """Whether a record of the run ``kept[q + 1:]`` that ``r`` links around is linked to
    or from a record outside the run (other than ``r``'s own anchor): then the run was
    moved, not inserted. Stops at the first such link, so a shuffled log costs little."""

    def outside(digest: str) -> bool:  # a record before the run, or not kept yet
        return place.get(digest, -2) <= q

    for i in range(q + 1, len(kept)):
        x = kept[i]
        if any(outside(d) for d in referrers.get(x.digest, ())):
            return True
        if x.prev != r.prev and x.prev in digests and outside(x.prev):
            return True
    return False


def _effective_seqs(records: Sequence[LogRecord], problems: list[Problem]) -> dict[int, int]:
    """Each record's seq (by index), corrected where the chain says otherwise: a record
    linked to the one before it must have the next seq."""
    seqs: dict[int, int] = {}
    before: LogRecord | None = None
    for r in records:
        want = 0 if before is None else seqs[before.index] + 1
        linked = r.prev == (GENESIS if before is None else before.digest)
        if linked and r.seq != want:
            where = "at the start" if before is None else f"right after seq {want - 1}"
            problems.append(
                Problem(r.index, "edited", f"seq is {r.seq}, but the chain puts it {where}")
            )
            seqs[r.index] = want
        else:
            seqs[r.index] = r.seq
        before = r
    return seqs


def _span(first: int, last: int) -> str:
    return f"seq {first}" if first == last else f"seqs {first} to {last}"


def _longest_rising(values: Sequence[int]) -> set[int]:
    """Positions of a longest strictly rising subsequence (patience sorting)."""
    tops: list[int] = []  # smallest last value of a rising run of each length
    ends: list[int] = []  # position holding that value
    back = [-1] * len(values)
    for pos, v in enumerate(values):
        n = bisect.bisect_left(tops, v)
        back[pos] = ends[n - 1] if n else -1
        if n == len(tops):
            tops.append(v)
            ends.append(pos)
        else:
            tops[n], ends[n] = v, pos
    chosen, pos = set(), ends[-1] if ends else -1
    while pos >= 0:
        chosen.add(pos)
        pos = back[pos]
    return chosen


def _check_order(
    records: Sequence[LogRecord], seqs: dict[int, int], problems: list[Problem]
) -> list[LogRecord]:
    """Seq must rise by one from 0. A repeated seq is an inserted record; records off a
    longest rising run of seqs are reordered (the fewest moves that sort the log); seqs
    that appear nowhere are deleted records, named at the record after the gap.
    Returns the records without the repeats."""
    seen: dict[int, LogRecord] = {}
    kept = []
    for r in records:
        s = seqs[r.index]
        if s in seen:
            problems.append(
                Problem(r.index, "inserted", f"seq {s} again (record {seen[s].index} has it)")
            )
            continue
        seen[s] = r
        kept.append(r)
    values = [seqs[r.index] for r in kept]
    rising = _longest_rising(values)
    for pos, r in enumerate(kept):
        if pos not in rising:
            where = f"after seq {values[pos - 1]}" if pos else "first"
            problems.append(
                Problem(
                    r.index,
                    "reordered",
                    f"seq {values[pos]} is out of order (it comes {where} in the file)",
                )
            )
    before = -1
    for s in sorted(seen):
        if s > before + 1:
            gone = s - before - 1
            what = f"{gone} record{'s' if gone > 1 else ''} missing before it"
            problems.append(
                Problem(seen[s].index, "deleted", f"{what} ({_span(before + 1, s - 1)})")
            )
        before = s
    return kept


def _check_links(
    records: Sequence[LogRecord], seqs: dict[int, int], problems: list[Problem]
) -> None:
    """Each record's ``prev`` must be the hash of the record with the seq before it; if
    not, that record (or this ``prev``) was changed."""
    by_seq = {seqs[r.index]: r for r in records}
    for r in records:
        s = seqs[r.index]
        if s == 0:
            if r.prev != GENESIS:
                problems.append(
                    Problem(
                        r.index,
                        "edited",
                        f"the first record's prev is {r.prev:.12}..., not the genesis hash",
                    )
                )
            continue
        before = by_seq.get(s - 1)
        if before is not None and r.prev != before.digest:
            problems.append(
                Problem(
                    before.index,
                    "edited",
                    f"its SHA-256 is not the prev of record {r.index}: it was changed "
                    f"after record {r.index} was written (or record {r.index}'s prev was)",
                )
            )
