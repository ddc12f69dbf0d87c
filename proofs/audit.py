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

The audit reads the log once, line by line (:func:`~battlejudge.proofs.stream.iter_store`),
and keeps of each record only what the chain needs, in compact columns (its SHA-256, and
its ``seq``, line and ``prev`` where they do not simply follow the record before): about
35 bytes a record, so a log of a million records is audited in a few tens of megabytes.
The Merkle root the checkpoint is checked against is folded as the records go by
(:class:`MerkleRange`). A clean chain is known as soon as the last record is read; only a
damaged one is analysed further, on the columns. The report's ``records`` are read again
from the log when asked for (:class:`LoggedRecords`).

Certificates repeat in a long log (the same question asked again is certified alike): past
the first :data:`VERIFY_EACH` records, a certificate byte for byte like one verified
earlier in the same audit (the SHA-256 of its canonical JSON; the last
:data:`CERTIFICATES_KEPT` certificates are remembered) has the same findings, and is not
verified again.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import hashlib
import json
import operator
from array import array
from collections import OrderedDict
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any, Final, TypeAlias, overload

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from battlejudge.proofs.checkpoint import (
    Checkpoint,
    CheckpointError,
    SignedCheckpoint,
    parse_checkpoint,
)
from battlejudge.proofs.checkpoint import verify_checkpoint as verify_note
from battlejudge.proofs.keys import load_public_key
from battlejudge.proofs.kinds import CheckedCertificate, claim_kind
from battlejudge.proofs.log import (
    GENESIS,
    PROBLEM_KINDS,
    LogRecord,
    Problem,
    ProblemKind,
    signed_bytes,
)
from battlejudge.proofs.merkle import fold_root, leaf_hash, node_hash
from battlejudge.proofs.stream import LogReader, Mark, iter_store
from battlejudge.solver.errors import InputError

__all__ = [
    "AuditReport",
    "Check",
    "LogRecord",
    "LoggedRecords",
    "MerkleRange",
    "Problem",
    "ProblemKind",
    "Progress",
    "RecordSummary",
    "audit_log",
    "audit_records",
    "audit_store",
    "chain_problems",
    "checkpoint_problems",
    "record_problems",
]

Check: TypeAlias = Callable[[Sequence[LogRecord]], Iterable[Problem]]
"""An extra audit check: given every complete record, the problems it finds."""

Progress: TypeAlias = Callable[[int], None]
"""Called with the number of records just checked (``click.progressbar``'s ``update``)."""

PublicKeyInput: TypeAlias = Ed25519PublicKey | str | PathLike[str] | None

VERIFY_EACH: Final = 1000
"""The first records of a log have each certificate verified, however often it repeats
(a short log, or the start of a long one, is checked record by record)."""
CERTIFICATES_KEPT: Final = 4096
"""How many certificates' findings an audit remembers (the most recently seen)."""
MARK_EVERY: Final = 64
"""Every this many records the audit notes where the record is, so that the report's
records can be read again from near any of them."""

_GENESIS: Final = bytes.fromhex(GENESIS)
_NONE: Final = -3  # not placed (any value below -1 does: a place is >= -1)
_NARROW: Final = 1 << 62  # seqs below this fit the columns' 64-bit ints, with room to add


@dataclass(frozen=True)
class RecordSummary:
    """What the report says of the records as a whole, gathered while they were read: how
    many carry a signature, and the repair records (few, and kept whole)."""

    signed: int
    repairs: tuple[LogRecord, ...]


@dataclass(frozen=True)
class AuditReport:
    """The complete records of a log and every problem found, in file order, and whether
    the signatures were checked (only with a public key: a signature nobody checked
    proves nothing, and the report says so). ``records`` is a list for records audited in
    memory (:func:`audit_records`) and a :class:`LoggedRecords`, read again from the log
    when asked for, for a log audited where it lives (:func:`audit_log`)."""

    records: Sequence[LogRecord]
    problems: list[Problem]
    signatures_checked: bool = False
    checkpoint: Checkpoint | None = None
    """The latest checkpoint the log was checked against (None: it has none)."""
    summary: RecordSummary | None = None
    """The signed count and the repairs, gathered by the audit (None: counted from
    ``records``)."""

    @property
    def ok(self) -> bool:
        """True when the audit found no problem."""
        return not self.problems

    @property
    def repairs(self) -> list[LogRecord]:
        """The repair records, in file order."""
        if self.summary is not None:
            return list(self.summary.repairs)
        return [r for r in self.records if r.kind == "repair"]

    @property
    def signed(self) -> int:
        """How many records carry a signature (checked or not)."""
        if self.summary is not None:
            return self.summary.signed
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

    ``path`` is a file or a ``postgresql://`` URL, read once, line by line
    (:func:`~battlejudge.proofs.stream.iter_store`); the log is checked against its latest
    checkpoint too. Raises ``OSError`` (unreadable file), :class:`InputError` (not a proof
    log, a later log format, an unreadable key) or
    :class:`~battlejudge.proofs.store.StoreError` (database unreachable); every other kind
    of damage is a :class:`Problem` in the report.
    """
    key = _public_key(pubkey)
    with iter_store(path) as reader:
        return audit_store(reader, pubkey=key, deep=deep, progress=progress, checks=checks)


def audit_store(
    reader: LogReader,
    *,
    pubkey: PublicKeyInput = None,
    deep: bool = False,
    progress: Progress | None = None,
    checks: Sequence[Check] = (),
) -> AuditReport:
    """:func:`audit_log` on a log already opened for reading (from its start, so with its
    checkpoint): reads its lines to the end. The report's records are a
    :class:`LoggedRecords`, read again when asked for (``checks`` read them so)."""
    audit = _Audit(_public_key(pubkey), deep, reader.checkpoint, progress)
    for where, item in reader:
        if isinstance(item, LogRecord):
            audit.record(item, where)
        else:
            audit.lines.append(item)
    records = LoggedRecords(
        reader, audit.columns.n, audit.marks, audit.mark_lines, audit.columns.digests
    )
    return audit.finish(reader.lines, records, checks)


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
    audit = _Audit(_public_key(pubkey), deep, checkpoint, progress)
    audit.lines = list(problems)
    for record in records:
        audit.record(record, 0)
    end = lines if lines is not None else (records[-1].index + 1 if records else 0)
    return audit.finish(end, list(records), checks)


def _public_key(pubkey: PublicKeyInput) -> Ed25519PublicKey | None:
    if pubkey is None or isinstance(pubkey, Ed25519PublicKey):
        return pubkey
    return load_public_key(pubkey)


def _sorted(problems: Iterable[Problem]) -> list[Problem]:
    """One problem per record and kind (the first found), by record then kind; problems
    of no record (record -1: a game record missing a claim, two records of one game) are
    each kept, in the order found, since each names another game or claim."""
    unique: dict[tuple[int, str, str], Problem] = {}
    for p in problems:
        unique.setdefault((p.record, p.kind, p.detail if p.record < 0 else ""), p)
    order: dict[str, int] = {kind: i for i, kind in enumerate(PROBLEM_KINDS)}
    return sorted(unique.values(), key=lambda p: (p.record, order.get(p.kind, len(order))))


class _Audit:
    """One pass over a log's records: each record's own checks at once; for the chain and
    the checkpoint, what they need of it, in compact form; the report at the end."""

    def __init__(
        self,
        pubkey: Ed25519PublicKey | None,
        deep: bool,
        note: str | None,
        progress: Progress | None,
    ) -> None:
        self.pubkey = pubkey
        self.deep = deep
        self.progress = progress
        self.lines: list[Problem] = []  # the lines that are not records
        self.found: list[Problem] = []  # the records' own problems
        self.columns = _Columns()
        self.verdicts = _Verdicts()
        self.signed = 0
        self.repairs: list[LogRecord] = []
        self.marks = array("q")  # where record MARK_EVERY * k is ...
        self.mark_lines = array("q")  # ... and its index
        self.head = _Head(note)

    def record(self, record: LogRecord, where: int) -> None:
        p = self.columns.n
        if p % MARK_EVERY == 0:
            self.marks.append(where)
            self.mark_lines.append(record.index)
        self.columns.add(
            record.index, record.seq, bytes.fromhex(record.digest), bytes.fromhex(record.prev)
        )
        self.head.record(p, record)
        if record.sig is not None:
            self.signed += 1
        if record.kind == "repair":
            self.repairs.append(record)
        self.found += _record_problems(record, self.pubkey, self.deep, self.verdicts)
        if self.progress is not None:
            self.progress(1)

    def finish(
        self, lines: int, records: Sequence[LogRecord], checks: Sequence[Check]
    ) -> AuditReport:
        found = [*self.lines, *_chain_problems(self.columns)]
        head, more = self.head.problems(self.columns, self.pubkey, lines)
        found += more
        found += self.found
        for check in checks:
            found += check(records)
        return AuditReport(
            records,
            _sorted(found),
            signatures_checked=self.pubkey is not None,
            checkpoint=head,
            summary=RecordSummary(self.signed, tuple(self.repairs)),
        )


# -- the records, read again -------------------------------------------------------------
class LoggedRecords(Sequence[LogRecord]):
    """The complete records of a log audited where it lives, read again from it when asked
    for (iterating reads the log once more; a record by position reads from the nearest
    mark before it, at most :data:`MARK_EVERY` records). Only the records the audit saw
    are given, each checked against the SHA-256 the audit saw: a log changed since (not
    only grown) raises :class:`InputError`."""

    def __init__(
        self,
        reader: LogReader,
        n: int,
        marks: array[int],
        mark_lines: array[int],
        digests: bytearray,
    ) -> None:
        self._reader = reader
        self._n = n
        self._marks = marks
        self._mark_lines = mark_lines
        self._digests = digests

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, key: int) -> LogRecord: ...

    @overload
    def __getitem__(self, key: slice) -> list[LogRecord]: ...

    def __getitem__(self, key: int | slice) -> LogRecord | list[LogRecord]:
        if isinstance(key, slice):
            start, stop, step = key.indices(self._n)
            if step == 1:
                return list(self._read(start, stop))
            return [self[i] for i in range(start, stop, step)]
        i = operator.index(key)
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(f"record {key} of {self._n}")
        found = self._read(i, i + 1)
        try:
            return next(found)
        finally:
            found.close()

    def __iter__(self) -> Iterator[LogRecord]:
        return self._read(0, self._n)

    def _read(self, first: int, stop: int) -> Generator[LogRecord, None, None]:
        """Records ``first`` to ``stop - 1`` (positions among the records), read from the
        mark at or before ``first``."""
        if first >= stop:
            return
        k = first // MARK_EVERY
        p = k * MARK_EVERY
        name = self._reader.name
        with self._reader.reopen(Mark(self._marks[k], self._mark_lines[k])) as reader:
            for _, item in reader:
                if not isinstance(item, LogRecord):
                    continue
                if item.digest != self._digests[32 * p : 32 * p + 32].hex():
                    raise InputError(
                        f"{name}: record {item.index} is not the one audited: the log "
                        "changed since; audit it again"
                    )
                if p >= first:
                    yield item
                p += 1
                if p >= stop:
                    return
        raise InputError(f"{name}: records audited are gone: the log changed since; audit it again")


# -- one record ----------------------------------------------------------------------------
def record_problems(
    record: LogRecord, pubkey: Ed25519PublicKey | None, deep: bool
) -> list[Problem]:
    """The signature (with a key), the certificate, and the record's agreement with it
    (a repair record has a signature only)."""
    return _record_problems(record, pubkey, deep, None)


def _record_problems(
    record: LogRecord, pubkey: Ed25519PublicKey | None, deep: bool, verdicts: _Verdicts | None
) -> list[Problem]:
    problems = []
    if pubkey is not None:
        problems += _signature_problems(record, pubkey)
    if record.kind == "claim":
        problems += _certificate_problems(record, deep, verdicts)
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


def _check_certificate(certificate: Any, deep: bool) -> CheckedCertificate:
    return claim_kind().check(certificate, deep)


def _question(question: Any) -> Any:
    """The question a record asks (parsed by its claim kind), or why it is not one."""
    try:
        return claim_kind().question(question)
    except ValueError as e:
        return str(e)


def _text(question: Any) -> str:
    """A parsed question as one line of canonical JSON."""
    return json.dumps(claim_kind().canonical(question), separators=(",", ":"))


def _key(value: Any) -> bytes | None:
    """The SHA-256 of the value's canonical JSON (None: it is not JSON)."""
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):  # records made in memory may hold anything
        return None
    return hashlib.sha256(text.encode()).digest()


class _Verdicts:
    """The findings of the certificates an audit has checked, by the SHA-256 of their
    canonical JSON: the last :data:`CERTIFICATES_KEPT`, used from record
    :data:`VERIFY_EACH` on."""

    def __init__(self) -> None:
        self.seen: OrderedDict[bytes, CheckedCertificate] = OrderedDict()
        self.questions: OrderedDict[bytes, Any] = OrderedDict()
        self.count = 0

    def check(self, certificate: Any, deep: bool) -> CheckedCertificate:
        """The findings on ``certificate``: remembered from record :data:`VERIFY_EACH` on,
        checked (and remembered) before and when not known."""
        self.count += 1
        key = _key(certificate)
        if key is None:
            return _check_certificate(certificate, deep)
        found = self.seen.get(key)
        if found is None or self.count <= VERIFY_EACH:
            found = self.seen[key] = _check_certificate(certificate, deep)
        _remember(self.seen, key)
        return found

    def question(self, question: Any) -> Any:
        """The question a record asks (:func:`_question`), parsed once for each question."""
        key = _key(question)
        if key is None:
            return _question(question)
        found = self.questions.get(key)
        if found is None:
            found = self.questions[key] = _question(question)
        _remember(self.questions, key)
        return found


def _remember(cache: OrderedDict[bytes, Any], key: bytes) -> None:
    """Make ``key`` the most recent, and forget the oldest past :data:`CERTIFICATES_KEPT`."""
    cache.move_to_end(key)
    if len(cache) > CERTIFICATES_KEPT:
        cache.popitem(last=False)


def _certificate_problems(
    record: LogRecord, deep: bool, verdicts: _Verdicts | None = None
) -> list[Problem]:
    i = record.index
    certificate = record.data["certificate"]
    if verdicts is None:
        checked = _check_certificate(certificate, deep)
    else:
        checked = verdicts.check(certificate, deep)
    if checked.unreadable is not None:
        return [Problem(i, "bad-proof", checked.unreadable)]
    problems = []
    verdict = record.data["verdict"]
    if verdict != checked.verdict:
        problems.append(
            Problem(
                i,
                "mismatch",
                f"verdict {verdict!r} but the certificate says {checked.verdict!r}",
            )
        )
    question = record.data["question"]
    logged = _question(question) if verdicts is None else verdicts.question(question)
    certified = checked.certified
    if isinstance(logged, str):
        problems.append(Problem(i, "mismatch", f"the question is not a flag question: {logged}"))
    elif logged != certified:
        theirs = certified if isinstance(certified, str) else _text(certified)
        problems.append(
            Problem(i, "mismatch", f"question {_text(logged)} but the certificate is for {theirs}")
        )
    if checked.rejected is not None:
        problems.append(Problem(i, "bad-proof", checked.rejected))
    return problems


# -- the checkpoint ------------------------------------------------------------------------
class MerkleRange:
    """The RFC 9162 Merkle root of a growing list of leaves, in memory of O(log n): the
    hashes of its perfect subtrees left to right (one for each binary digit of the size),
    merged as leaves are added and folded from the right for the root
    (:func:`~battlejudge.proofs.merkle.fold_root`)."""

    def __init__(self) -> None:
        self.size = 0
        self.peaks: list[bytes] = []

    def append(self, leaf: bytes) -> None:
        """Add a leaf hash (``leaf_hash(line)``)."""
        self.peaks.append(leaf)
        self.size += 1
        n = self.size
        while not n & 1:  # each trailing zero of the new size closes a subtree
            right = self.peaks.pop()
            self.peaks[-1] = node_hash(self.peaks[-1], right)
            n >>= 1

    def root(self) -> bytes:
        """MTH of the leaves added so far (RFC 9162, 2.1.1)."""
        return fold_root(self.peaks)


class _Head:
    """The log's latest checkpoint, and what the audit needs of the records to check them
    against it: the root of the first ``size`` records, folded as they go by."""

    def __init__(self, note: str | None) -> None:
        self.note = note
        self.signed: SignedCheckpoint | None = None
        self.error: str | None = None
        self.leaves = MerkleRange()
        self.at = 0  # the index of the checkpoint's last record
        if note is not None:
            try:
                self.signed = parse_checkpoint(note)
            except CheckpointError as e:
                self.error = str(e)

    def record(self, p: int, record: LogRecord) -> None:
        if self.signed is not None and p < self.signed.checkpoint.size:
            self.leaves.append(leaf_hash(record.raw))
            self.at = record.index

    def problems(
        self, columns: _Columns, pubkey: Ed25519PublicKey | None, lines: int
    ) -> tuple[Checkpoint | None, list[Problem]]:
        n = columns.n
        last = columns.index(n - 1) if n else 0
        if self.note is None:
            return None, []
        if self.signed is None:
            return None, [
                Problem(last, "checkpoint", f"the checkpoint cannot be read: {self.error}")
            ]
        head = self.signed.checkpoint
        problems: list[Problem] = []
        if pubkey is not None:
            try:
                verify_note(self.note, pubkey)
            except CheckpointError as e:
                problems.append(Problem(last, "checkpoint", str(e)))
        end = columns.seq(n - 1) + 1 if n else 0
        if head.size > n and head.size <= end:  # the end is there: records went from inside
            problems.append(
                Problem(
                    last,
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
        if self.leaves.root() != head.root:
            problems.append(
                Problem(
                    self.at,
                    "checkpoint",
                    f"the first {head.size} records do not hash to the root of the checkpoint "
                    f"of {head.time}: a record among them was changed, removed, moved or "
                    "added since",
                )
            )
        return head, problems


def checkpoint_problems(
    records: Sequence[LogRecord], note: str, pubkey: Ed25519PublicKey | None, lines: int
) -> tuple[Checkpoint | None, list[Problem]]:
    """The checkpoint and what is wrong with the log against it: records it covers that
    are gone from the end (``truncated``, named at ``lines``, one past the last line),
    records whose Merkle root is not its root, or its signature (with a key), both
    ``checkpoint``. Records after the checkpoint are no problem (an append whose
    checkpoint had not been written yet). Leaf ``i`` is the ``i``-th record."""
    head = _Head(note)
    columns = _Columns()
    for p, r in enumerate(records):
        head.record(p, r)
        columns.add(r.index, r.seq, bytes.fromhex(r.digest), bytes.fromhex(r.prev))
    return head.problems(columns, pubkey, lines)


# -- the chain: what it needs of each record ----------------------------------------------
class _Columns:
    """What the chain analysis needs of each record, in compact form: its SHA-256 (32
    bytes), whether its ``prev`` is the hash of the record before it (one byte; the
    ``prev`` itself is kept only where it is not), and its ``seq`` and index as runs
    (each one more than the record before's, but where a run starts). A clean chain of
    records is one link of 33 bytes a record, and is known to be clean as it is read."""

    def __init__(self) -> None:
        self.n = 0
        self.digests = bytearray()
        self.links = bytearray()
        self.prevs: dict[int, bytes] = {}
        self._seq_at = array("q")  # the record where a run of seqs starts ...
        self._seq_from: list[int] = []  # ... and its seq
        self._index_at = array("q")
        self._index_from = array("q")
        self._last_digest = _GENESIS
        self._next_seq = self._next_index = -1

    def add(self, index: int, seq: int, digest: bytes, prev: bytes) -> None:
        p = self.n
        if prev == self._last_digest:
            self.links.append(1)
        else:
            self.links.append(0)
            self.prevs[p] = prev
        if seq != self._next_seq:
            self._seq_at.append(p)
            self._seq_from.append(seq)
        if index != self._next_index:
            self._index_at.append(p)
            self._index_from.append(index)
        self.digests += digest
        self._last_digest = digest
        self._next_seq, self._next_index = seq + 1, index + 1
        self.n = p + 1

    @property
    def clean(self) -> bool:
        """Every record links to the one before it (the first to the genesis hash) with
        the next seq from 0: the chain has nothing to say."""
        return not self.prevs and (self.n == 0 or self._seq_from == [0])

    def seq(self, p: int) -> int:
        k = bisect.bisect_right(self._seq_at, p) - 1
        return self._seq_from[k] + p - self._seq_at[k]

    def index(self, p: int) -> int:
        k = bisect.bisect_right(self._index_at, p) - 1
        return self._index_from[k] + p - self._index_at[k]

    def digest(self, p: int) -> bytes:
        return bytes(self.digests[32 * p : 32 * p + 32])

    def prev(self, p: int) -> bytes:
        if not self.links[p]:
            return self.prevs[p]
        return self.digest(p - 1) if p else _GENESIS

    def seqs(self) -> Sequence[int]:
        """Every record's seq: 64-bit ints, or Python ints when some are that large."""
        wide = any(s + self.n >= _NARROW for s in self._seq_from)
        out: list[int] | array[int] = [] if wide else array("q")
        bounds = [*self._seq_at, self.n]
        for k, s in enumerate(self._seq_from):
            out.extend(range(s, s + bounds[k + 1] - bounds[k]))
        return out


# -- the chain: the analysis ----------------------------------------------------------------
def chain_problems(records: Sequence[LogRecord]) -> list[Problem]:
    """Edited, deleted, reordered and inserted records, from ``prev`` links and ``seq``.

    First, records that belong to no chain are set aside as inserted: copies of another
    record, and runs of records that the chain links around (the record after them has
    the hash of the record before them as its ``prev``, and nothing outside the run links
    to them). Then each remaining record's ``seq`` is checked against its place in the
    chain (edited) and in the file (deleted, reordered, duplicated), and each link
    ``prev`` against the record with the seq before it (edited).
    """
    columns = _Columns()
    for r in records:
        columns.add(r.index, r.seq, bytes.fromhex(r.digest), bytes.fromhex(r.prev))
    return _chain_problems(columns)


def _chain_problems(columns: _Columns) -> list[Problem]:
    """:func:`chain_problems` on the columns; nothing to do for a clean chain. Records are
    named by their position among the records (``p``) or among those kept so far."""
    if columns.clean:
        return []
    problems: list[Problem] = []
    seqs = columns.seqs()
    kept, genuine = _drop_copies(columns, seqs, problems)
    chain = _Links(columns, kept, genuine)
    order = _drop_inserted(chain, problems)
    eff = _effective_seqs(chain, order, seqs, problems)
    del seqs  # the analysis holds a few columns at a time: the larger logs it sees
    kept3, holder = _check_order(chain, order, eff, problems)
    _check_links(chain, order, eff, kept3, holder, problems)
    return problems


def _limit(values: Sequence[int], n: int) -> int:
    """How many small values get a dense table (the rest a dict): up to the largest value,
    within reason."""
    return min(max(values, default=0) + 1, 4 * n + 1024)


def _drop_copies(
    columns: _Columns, seqs: Sequence[int], problems: list[Problem]
) -> tuple[Sequence[int], dict[int, int]]:
    """Byte-identical records: keep the copy that stands in order (on a longest rising
    run of seqs; else the first); the others are inserted. Copies have the same seq, so
    only records whose seq repeats are compared. Returns the positions kept and, for each
    copy dropped, the one kept."""
    n = columns.n
    limit = _limit(seqs, n)
    hits = bytearray(limit)
    more: dict[int, int] = {}
    for s in seqs:
        if s < limit:
            if hits[s] < 2:
                hits[s] += 1
        else:
            more[s] = more.get(s, 0) + 1
    groups: dict[bytes, list[int]] = {}
    for p, s in enumerate(seqs):
        if (hits[s] if s < limit else more[s]) > 1:
            groups.setdefault(columns.digest(p), []).append(p)
    copies = [g for g in groups.values() if len(g) > 1]
    if not copies:
        return range(n), {}
    rising = _longest_rising(seqs)
    dropped: dict[int, int] = {}
    for positions in copies:
        genuine = next((p for p in positions if rising[p]), positions[0])
        for p in positions:
            if p != genuine:
                dropped[p] = genuine
                problems.append(
                    Problem(
                        columns.index(p),
                        "inserted",
                        f"a copy of record {columns.index(genuine)} (seq {seqs[p]})",
                    )
                )
    return array("q", (p for p in range(n) if p not in dropped)), dropped


class _Links:
    """The records kept after the copies (``kept[i]`` is a position), and the chain
    between them: ``src[i]`` is the record whose hash is record ``i``'s ``prev`` (-1 the
    genesis hash, -2 no record's), and the records linking to each other."""

    def __init__(self, columns: _Columns, kept: Sequence[int], genuine: dict[int, int]) -> None:
        self.columns = columns
        self.kept = kept
        m = self.m = len(kept)
        if isinstance(kept, range):
            where: Callable[[int], int] = int
        else:
            inverse = array("q", [-1]) * columns.n
            for i, p in enumerate(kept):
                inverse[p] = i
            where = inverse.__getitem__
        src = array("q", [-2]) * m
        wanted: dict[bytes, list[int]] = {}
        for i, p in enumerate(kept):
            if columns.links[p]:
                src[i] = where(genuine.get(p - 1, p - 1)) if p else -1
                continue
            prev = columns.prevs[p]
            if prev == _GENESIS:
                src[i] = -1
            else:
                wanted.setdefault(prev, []).append(i)
        if wanted:  # prev hashes that do not name the record before: whose are they?
            view = memoryview(columns.digests)
            for j, p in enumerate(kept):
                found = wanted.get(bytes(view[32 * p : 32 * p + 32]))
                if found is not None:
                    for i in found:
                        src[i] = j
            view.release()
        self.src = src
        self.extra: dict[int, list[int]] = {}  # links but to the record just before
        for j in range(m):
            s = src[j]
            if s >= 0 and s != j - 1:
                self.extra.setdefault(s, []).append(j)

    def index(self, i: int) -> int:
        return self.columns.index(self.kept[i])

    def referrers(self, i: int) -> list[int]:
        """The records whose ``prev`` is record ``i``'s hash."""
        found = self.extra.get(i, [])
        if i + 1 < self.m and self.src[i + 1] == i:
            return [i + 1, *found]
        return found

    def lengths(self) -> array[int]:
        """For each record, how many records the chain holds from it on (following
        ``prev`` links forward in the file)."""
        lengths = array("q", [1]) * self.m
        for i in range(self.m - 1, -1, -1):
            after = [lengths[j] for j in self.referrers(i) if j > i]
            if after:
                lengths[i] = 1 + max(after)
        return lengths


def _drop_inserted(chain: _Links, problems: list[Problem]) -> array[int]:
    """Records the chain links around, and that nothing outside them links to. Returns
    the records kept, in file order."""
    lengths = chain.lengths()
    src = chain.src
    kept = array("q")
    place = array("q", [_NONE]) * chain.m  # record -> its place in kept
    for i in range(chain.m):
        s = src[i]
        q: int | None = -1 if s == -1 else (place[s] if s >= 0 and place[s] != _NONE else None)
        if q is None or q == len(kept) - 1 or _linked_elsewhere(chain, kept, place, q, i):
            place[i] = len(kept)  # in the chain, or moved (not inserted)
            kept.append(i)
            continue
        run = kept[q + 1 :]
        anchor = f"record {chain.index(kept[q])}" if q >= 0 else "the start of the log"
        if len(run) < lengths[i]:
            for x in run:
                place[x] = _NONE
                problems.append(
                    Problem(
                        chain.index(x),
                        "inserted",
                        f"not in the chain: record {chain.index(i)} follows {anchor} directly",
                    )
                )
            del kept[q + 1 :]
            place[i] = len(kept)
            kept.append(i)
        else:  # a shorter branch starting here: this record is the odd one
            problems.append(
                Problem(
                    chain.index(i),
                    "inserted",
                    f"not in the chain: it claims to follow {anchor}, which record "
                    f"{chain.index(run[0])} follows",
                )
            )
    return kept


def _linked_elsewhere(chain: _Links, kept: array[int], place: array[int], q: int, r: int) -> bool:
    """Whether a record of the run ``kept[q + 1:]`` that ``r`` links around is linked to
    or from a record outside the run (other than ``r``'s own anchor): then the run was
    moved, not inserted. Stops at the first such link, so a shuffled log costs little.
    A record outside the run stands before it, or is not kept yet."""
    src = chain.src
    for t in range(q + 1, len(kept)):
        x = kept[t]
        if any(place[j] <= q for j in chain.referrers(x)):
            return True
        s = src[x]
        if s != src[r] and s >= 0 and place[s] <= q:
            return True
    return False


def _effective_seqs(
    chain: _Links, order: array[int], seqs: Sequence[int], problems: list[Problem]
) -> Sequence[int]:
    """Each record's seq (by place in ``order``), corrected where the chain says
    otherwise: a record linked to the one before it must have the next seq."""
    eff: list[int] | array[int] = array("q") if isinstance(seqs, array) else []
    src, kept = chain.src, chain.kept
    for t, i in enumerate(order):
        want = eff[t - 1] + 1 if t else 0
        linked = src[i] == (order[t - 1] if t else -1)
        s = seqs[kept[i]]
        if linked and s != want:
            where = f"right after seq {want - 1}" if t else "at the start"
            problems.append(
                Problem(chain.index(i), "edited", f"seq is {s}, but the chain puts it {where}")
            )
            eff.append(want)
        else:
            eff.append(s)
    return eff


def _span(first: int, last: int) -> str:
    return f"seq {first}" if first == last else f"seqs {first} to {last}"


def _longest_rising(values: Sequence[int]) -> bytearray:
    """Which positions are on a longest strictly rising subsequence (patience sorting):
    1 for those, 0 for the others."""
    tops: list[int] | array[int] = array("q") if isinstance(values, array) else []
    ends = array("q")  # position holding that value
    back = array("q", [-1]) * len(values)
    for pos, v in enumerate(values):
        n = bisect.bisect_left(tops, v)
        back[pos] = ends[n - 1] if n else -1
        if n == len(tops):
            tops.append(v)
            ends.append(pos)
        else:
            tops[n], ends[n] = v, pos
    chosen = bytearray(len(values))
    pos = ends[-1] if ends else -1
    while pos >= 0:
        chosen[pos] = 1
        pos = back[pos]
    return chosen


class _Holders:
    """seq -> the place (in ``order``) of the first record that has it: a table for the
    seqs up to a limit, a dict beyond."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.table = array("q", [-1]) * limit
        self.more: dict[int, int] = {}

    def get(self, s: int) -> int:
        return self.table[s] if s < self.limit else self.more.get(s, -1)

    def set(self, s: int, t: int) -> None:
        if s < self.limit:
            self.table[s] = t
        else:
            self.more[s] = t

    def ascending(self) -> Iterator[tuple[int, int]]:
        for s, t in enumerate(self.table):
            if t >= 0:
                yield s, t
        for s in sorted(self.more):
            yield s, self.more[s]


def _check_order(
    chain: _Links, order: array[int], eff: Sequence[int], problems: list[Problem]
) -> tuple[array[int], _Holders]:
    """Seq must rise by one from 0. A repeated seq is an inserted record; records off a
    longest rising run of seqs are reordered (the fewest moves that sort the log); seqs
    that appear nowhere are deleted records, named at the record after the gap.
    Returns the places (in ``order``) of the records without the repeats, and who holds
    each seq."""
    holder = _Holders(_limit(eff, len(eff)))
    kept = array("q")
    for t, s in enumerate(eff):
        first = holder.get(s)
        if first >= 0:
            problems.append(
                Problem(
                    chain.index(order[t]),
                    "inserted",
                    f"seq {s} again (record {chain.index(order[first])} has it)",
                )
            )
            continue
        holder.set(s, t)
        kept.append(t)
    values = eff
    if len(kept) < len(eff):
        values = array("q") if isinstance(eff, array) else []
        values.extend(eff[t] for t in kept)
    rising = _longest_rising(values)
    for pos, t in enumerate(kept):
        if not rising[pos]:
            where = f"after seq {values[pos - 1]}" if pos else "first"
            problems.append(
                Problem(
                    chain.index(order[t]),
                    "reordered",
                    f"seq {values[pos]} is out of order (it comes {where} in the file)",
                )
            )
    before = -1
    for s, t in holder.ascending():
        if s > before + 1:
            gone = s - before - 1
            what = f"{gone} record{'s' if gone > 1 else ''} missing before it"
            problems.append(
                Problem(chain.index(order[t]), "deleted", f"{what} ({_span(before + 1, s - 1)})")
            )
        before = s
    return kept, holder


def _check_links(
    chain: _Links,
    order: array[int],
    eff: Sequence[int],
    kept: array[int],
    holder: _Holders,
    problems: list[Problem],
) -> None:
    """Each record's ``prev`` must be the hash of the record with the seq before it; if
    not, that record (or this ``prev``) was changed."""
    src = chain.src
    for t in kept:
        i, s = order[t], eff[t]
        if s == 0:
            if src[i] != -1:
                prev = chain.columns.prev(chain.kept[i]).hex()
                problems.append(
                    Problem(
                        chain.index(i),
                        "edited",
                        f"the first record's prev is {prev:.12}..., not the genesis hash",
                    )
                )
            continue
        b = holder.get(s - 1)
        if b >= 0 and src[i] != order[b]:
            r, before = chain.index(i), chain.index(order[b])
            problems.append(
                Problem(
                    before,
                    "edited",
                    f"its SHA-256 is not the prev of record {r}: it was changed "
                    f"after record {r} was written (or record {r}'s prev was)",
                )
            )
