"""The audit reads a log once, line by line, in memory that does not grow with it: the same
reports as the whole-log audit it replaced (kept below as the reference, word for word), on
logs damaged every way Hypothesis finds, file and PostgreSQL; its memory beyond the compact
columns does not grow with the log; the report's records are read again, and refused if the
log changed since; ``log export`` streams too."""

from __future__ import annotations

import base64
import bisect
import gc
import hashlib
import json
import tempfile
import tracemalloc
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from click.testing import CliRunner, Result
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import battlejudge.proofs.audit as audit_module
from battlejudge.bench.synthetic_log import build_synthetic_log
from battlejudge.cli.main import cli
from battlejudge.proofs.audit import (
    LoggedRecords,
    MerkleRange,
    audit_log,
    chain_problems,
)
from battlejudge.proofs.battleline.certificate import CertificateFile, from_file_model
from battlejudge.proofs.checkpoint import Checkpoint, CheckpointError, parse_checkpoint
from battlejudge.proofs.checkpoint import verify_checkpoint as verify_note
from battlejudge.proofs.log import (
    FORMAT_VERSION,
    GENESIS,
    PROBLEM_KINDS,
    LogRecord,
    Problem,
    ProofLog,
    append_proved,
    checkpoint_path,
    encode_record,
    signed_bytes,
)
from battlejudge.proofs.merkle import MerkleTree, leaf_hash
from battlejudge.proofs.repair import repair_log
from battlejudge.proofs.store import Mark, iter_store, read_store
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import BattlejudgeError, InputError, VerificationError, invalid

VALID = bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10"))
INVALID = bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8"))
KEY = Ed25519PrivateKey.generate()
PUB = KEY.public_key()


# == the reference: the whole-log audit as it was before the streaming one ==================
# Copied from proofs/audit.py before the change, only renamed: every record read into memory
# (read_store), the chain analysed with dicts and sets of whole records, the checkpoint's root
# from a MerkleTree of every leaf. The streaming audit must give exactly its reports.
def _ref_audit(
    target: str | Path, pubkey: Ed25519PublicKey | None = None, deep: bool = False
) -> tuple[list[Problem], dict[str, Any], list[tuple[int, str]]]:
    stored = read_store(target)
    records = stored.records
    found = [*stored.problems, *_ref_chain_problems(records)]
    head: Checkpoint | None = None
    if stored.checkpoint is not None:
        head, more = _ref_checkpoint_problems(records, stored.checkpoint, pubkey, stored.lines)
        found += more
    for record in records:
        found += _ref_record_problems(record, pubkey, deep)
    problems = _ref_sorted(found)
    signed = sum(1 for r in records if r.sig is not None)
    report = {
        "ok": not problems,
        "records": len(records),
        "problems": [p.to_json() for p in problems],
        "signatures": {
            "checked": pubkey is not None,
            "signed": signed,
            "unsigned": len(records) - signed,
        },
        "repairs": [{"record": r.index, **r.data["repair"]} for r in records if r.kind == "repair"],
        "checkpoint": None if head is None else head.to_json(),
    }
    return problems, report, [(r.index, r.digest) for r in records]


def _ref_sorted(problems: Iterable[Problem]) -> list[Problem]:
    unique: dict[tuple[int, str, str], Problem] = {}
    for p in problems:
        unique.setdefault((p.record, p.kind, p.detail if p.record < 0 else ""), p)
    order: dict[str, int] = {kind: i for i, kind in enumerate(PROBLEM_KINDS)}
    return sorted(unique.values(), key=lambda p: (p.record, order.get(p.kind, len(order))))


def _ref_record_problems(
    record: LogRecord, pubkey: Ed25519PublicKey | None, deep: bool
) -> list[Problem]:
    problems = []
    if pubkey is not None:
        problems += _ref_signature_problems(record, pubkey)
    if record.kind == "claim":
        problems += _ref_certificate_problems(record, deep)
    return problems


def _ref_signature_problems(record: LogRecord, pubkey: Ed25519PublicKey) -> list[Problem]:
    sig = record.sig
    if sig is None:
        return [Problem(record.index, "unsigned", "the record has no signature")]
    try:
        pubkey.verify(base64.b64decode(sig, validate=True), signed_bytes(record.data))
    except ValueError:  # binascii.Error
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


def _ref_certificate_problems(record: LogRecord, deep: bool) -> list[Problem]:
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


def _ref_checkpoint_problems(
    records: Sequence[LogRecord], note: str, pubkey: Ed25519PublicKey | None, lines: int
) -> tuple[Checkpoint | None, list[Problem]]:
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
    if head.size > n and head.size <= end:
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
                f"({_ref_span(first, first + gone - 1)}; deleted, or the log was cut)",
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


def _ref_chain_problems(records: Sequence[LogRecord]) -> list[Problem]:
    problems: list[Problem] = []
    kept = _ref_drop_copies(records, problems)
    kept = _ref_drop_inserted(kept, problems)
    seqs = _ref_effective_seqs(kept, problems)
    kept = _ref_check_order(kept, seqs, problems)
    _ref_check_links(kept, seqs, problems)
    return problems


def _ref_drop_copies(records: Sequence[LogRecord], problems: list[Problem]) -> list[LogRecord]:
    groups: dict[str, list[int]] = defaultdict(list)
    for pos, r in enumerate(records):
        groups[r.digest].append(pos)
    if all(len(g) == 1 for g in groups.values()):
        return list(records)
    rising = _ref_longest_rising([r.seq for r in records])
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


def _ref_chain_lengths(records: Sequence[LogRecord]) -> list[int]:
    referrers: dict[str, list[int]] = defaultdict(list)
    for pos, r in enumerate(records):
        referrers[r.prev].append(pos)
    lengths = [1] * len(records)
    for pos in range(len(records) - 1, -1, -1):
        after = [lengths[j] for j in referrers.get(records[pos].digest, ()) if j > pos]
        lengths[pos] = 1 + max(after, default=0)
    return lengths


def _ref_drop_inserted(records: Sequence[LogRecord], problems: list[Problem]) -> list[LogRecord]:
    referrers: dict[str, set[str]] = defaultdict(set)
    for r in records:
        referrers[r.prev].add(r.digest)
    lengths = _ref_chain_lengths(records)
    digests = {r.digest for r in records}
    kept: list[LogRecord] = []
    place: dict[str, int] = {GENESIS: -1}
    for pos, r in enumerate(records):
        q = place.get(r.prev)
        if q is None or q == len(kept) - 1:
            place[r.digest] = len(kept)
            kept.append(r)
            continue
        if _ref_linked_elsewhere(kept, q, r, referrers, digests, place):
            place[r.digest] = len(kept)
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
        else:
            problems.append(
                Problem(
                    r.index,
                    "inserted",
                    f"not in the chain: it claims to follow {anchor}, which record "
                    f"{run[0].index} follows",
                )
            )
    return kept


def _ref_linked_elsewhere(
    kept: list[LogRecord],
    q: int,
    r: LogRecord,
    referrers: dict[str, set[str]],
    digests: set[str],
    place: dict[str, int],
) -> bool:
    def outside(digest: str) -> bool:
        return place.get(digest, -2) <= q

    for i in range(q + 1, len(kept)):
        x = kept[i]
        if any(outside(d) for d in referrers.get(x.digest, ())):
            return True
        if x.prev != r.prev and x.prev in digests and outside(x.prev):
            return True
    return False


def _ref_effective_seqs(records: Sequence[LogRecord], problems: list[Problem]) -> dict[int, int]:
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


def _ref_span(first: int, last: int) -> str:
    return f"seq {first}" if first == last else f"seqs {first} to {last}"


def _ref_longest_rising(values: Sequence[int]) -> set[int]:
    tops: list[int] = []
    ends: list[int] = []
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


def _ref_check_order(
    records: Sequence[LogRecord], seqs: dict[int, int], problems: list[Problem]
) -> list[LogRecord]:
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
    rising = _ref_longest_rising(values)
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
                Problem(seen[s].index, "deleted", f"{what} ({_ref_span(before + 1, s - 1)})")
            )
        before = s
    return kept


def _ref_check_links(
    records: Sequence[LogRecord], seqs: dict[int, int], problems: list[Problem]
) -> None:
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


# == logs to damage ==========================================================================
N = 9
_BASES: dict[str, tuple[list[bytes], str | None]] = {}


def _base(kind: str) -> tuple[list[bytes], str | None]:
    """A log's lines and checkpoint, built once: ``signed`` (record 3 a valid claim with its
    DRAT proof, the others refused claims), ``unsigned`` and ``repaired`` (signed, with a
    repair record)."""
    if kind not in _BASES:
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "base.log"
            key = None if kind == "unsigned" else KEY
            with ProofLog(path, key, sync=False) as log:
                for i in range(N):
                    proved = VALID if i == 3 else INVALID
                    append_proved(log, proved, game="g", turn=i, player="north", flag=1 + i % 9)
            if kind == "repaired":
                lines = path.read_bytes().splitlines()
                path.write_bytes(b"\n".join([*lines[:5], b"[1, 2]", *lines[5:]]) + b"\n")
                repair_log(path, KEY)
            note = checkpoint_path(path).read_text()
            _BASES[kind] = path.read_bytes().splitlines(), note
    return _BASES[kind]


def _line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, sort_keys=True, separators=(",", ":")).encode()


EDITS: dict[str, Any] = {
    "turn": 77,
    "game": "g9",
    "player": "south",
    "time": "2030-01-01T00:00:00Z",
    "seq": 4,
    "prev": "ab" * 32,
    "verdict": "valid",
    "flag": 9,
}
JUNK = [b"", b"[1, 2]", b"{", b"\0\0\0", b"not json", b'{"v": 3, "kind": "repair"}']


@st.composite
def damaged_logs(draw: st.DrawFn) -> tuple[str, bytes, str | None]:
    """A base log with a few of: edits, deletions, moves, swaps, copies, forgeries, junk
    lines, torn lines, a cut end; ending with a newline or not; with its checkpoint, none,
    an unreadable one or an older one."""
    kind = draw(st.sampled_from(["signed", "unsigned", "repaired"]))
    base, note = _base(kind)
    lines = list(base)
    for _ in range(draw(st.integers(0, 3))):
        n = len(lines)
        op = draw(
            st.sampled_from(
                ["delete", "move", "swap", "copy", "edit", "forge", "junk", "tear", "cut"]
            )
        )
        if n == 0 and op != "junk":
            continue
        i = draw(st.integers(0, max(n - 1, 0)))
        j = draw(st.integers(0, n))
        if op == "delete":
            del lines[i : i + draw(st.integers(1, 3))]
        elif op == "move":
            lines.insert(min(j, n - 1), lines.pop(i))
        elif op == "swap":
            j = min(j, n - 1)
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "copy":
            lines.insert(j, lines[i])
        elif op in ("edit", "forge"):
            try:
                record = json.loads(lines[i])
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            field = draw(st.sampled_from(sorted(EDITS)))
            changed = record | {field: EDITS[field]}
            if op == "edit":
                lines[i] = _line(changed)
            else:
                try:
                    prev = json.loads(lines[min(j, n - 1)]).get("prev", GENESIS)
                except (ValueError, AttributeError):
                    prev = GENESIS
                lines.insert(j, _line(changed | {"prev": prev}))
        elif op == "junk":
            lines.insert(j, draw(st.sampled_from(JUNK)))
        elif op == "tear":
            if len(lines[i]) > 1:
                lines[i] = lines[i][: draw(st.integers(1, len(lines[i]) - 1))]
        else:  # cut the end
            del lines[max(n - draw(st.integers(1, 3)), 0) :]
    data = b"\n".join(lines)
    if lines and draw(st.booleans()):
        data += b"\n"
    which = draw(st.sampled_from(["kept", "none", "garbage", "older"]))
    if which == "none":
        note = None
    elif which == "garbage":
        note = "not a checkpoint\n"
    elif which == "older" and note is not None:
        head = parse_checkpoint(note).checkpoint
        size = draw(st.integers(0, head.size))
        tree = MerkleTree(leaf_hash(x) for x in base[:size])
        key = None if kind == "unsigned" else KEY
        note = Checkpoint(head.origin, size, tree.root(), head.time).sign(key)
    return kind, data, note


def _outcome(call: Any) -> Any:
    try:
        return call()
    except InputError as e:
        return type(e), str(e)


def _streamed(path: Path, pubkey: Ed25519PublicKey | None, deep: bool = False) -> Any:
    report = audit_log(path, pubkey, deep=deep)
    return report.problems, report.to_json(), [(r.index, r.digest) for r in report.records]


def _write(folder: Path, data: bytes, note: str | None) -> Path:
    path = folder / "damaged.log"
    path.write_bytes(data)
    if note is not None:
        checkpoint_path(path).write_text(note)
    return path


@settings(max_examples=150)
@given(damaged_logs(), st.booleans())
def test_the_streaming_audit_reports_as_the_whole_log_audit(
    case: tuple[str, bytes, str | None], with_key: bool
) -> None:
    kind, data, note = case
    pubkey = PUB if with_key else None
    with tempfile.TemporaryDirectory() as d:
        path = _write(Path(d), data, note)
        expected = _outcome(lambda: _ref_audit(path, pubkey))
        assert _outcome(lambda: _streamed(path, pubkey)) == expected, kind
        if isinstance(expected, tuple) and len(expected) == 3:
            records = read_store(path).records
            assert chain_problems(records) == _ref_chain_problems(records)  # in their order
            # past VERIFY_EACH, repeated certificates are remembered: the same report
            with mock.patch.object(audit_module, "VERIFY_EACH", 0):
                assert _streamed(path, pubkey) == expected


@settings(max_examples=60)
@given(damaged_logs())
def test_the_audit_command_prints_the_reference_report(
    case: tuple[str, bytes, str | None],
) -> None:
    _, data, note = case
    with tempfile.TemporaryDirectory() as d:
        path = _write(Path(d), data, note)
        expected = _outcome(lambda: _ref_audit(path))
        r = CliRunner().invoke(cli, ["audit", str(path), "--json"])
        if len(expected) == 2:  # not a proof log, a later format: exit 2 with the message
            assert r.exit_code == 2 and expected[1] in r.stderr
            return
        assert r.exit_code == (0 if expected[1]["ok"] else 1), r.output
        assert json.loads(r.stdout) == expected[1]


@settings(max_examples=40)
@given(st.lists(st.sampled_from(range(12)), max_size=40), st.lists(st.integers(0, 20)))
def test_chain_problems_on_shuffled_records(order: list[int], seqs: list[int]) -> None:
    """Records in any order, any number of times, some with another seq (resealed so the
    chain links them anyway): the same problems, in the same order, as the reference."""
    lines, _ = _base("unsigned")
    records = []
    for k, i in enumerate(order):
        raw = lines[i % len(lines)]
        data = json.loads(raw)
        if k < len(seqs) and seqs[k] < 10:
            data["seq"] = seqs[k]
            raw = encode_record(data)
        records.append(LogRecord(k, data, raw, hashlib.sha256(raw).hexdigest()))
    assert chain_problems(records) == _ref_chain_problems(records)


def test_deep_and_the_certificate_memory(tmp_path: Path) -> None:
    lines, note = _base("signed")
    path = _write(tmp_path, b"\n".join(lines) + b"\n", note)
    assert _streamed(path, PUB, deep=True) == _ref_audit(path, PUB, deep=True)
    calls: list[bool] = []
    real = bl.verify

    def spy(cert: bl.Certificate, *, deep: bool = False) -> bool:
        calls.append(deep)
        return real(cert, deep=deep)

    with mock.patch.object(bl, "verify", spy):
        assert audit_log(path, deep=True).ok and calls == [True] * N
        calls.clear()
        with mock.patch.object(audit_module, "VERIFY_EACH", 0):
            assert audit_log(path, deep=True).ok
    assert calls == [True, True]  # the refused claim's certificate, then the valid one's


# == the records, read again ==================================================================
def test_the_reports_records_are_read_again(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    build_synthetic_log(path, 300, KEY)
    with path.open("ab") as f:  # a line that is not a record, then more records
        f.write(b"[1]\n")
    lines = path.read_bytes().splitlines()
    path.write_bytes(b"\n".join([*lines[:100], b"{torn", *lines[100:]]) + b"\n")
    report = audit_log(path, PUB)
    records = read_store(path).records
    assert isinstance(report.records, LoggedRecords) and len(report.records) == 300
    assert list(report.records) == records
    for i in (0, 63, 64, 99, 100, 101, 255, 299, -1, -300):
        assert report.records[i] == records[i]
    assert report.records[60:70] == records[60:70] and report.records[::97] == records[::97]
    with pytest.raises(IndexError):
        report.records[300]
    # the log grows: the audited records are still those; it is changed: refused
    with ProofLog(tmp_path / "other.log", KEY, sync=False) as other:
        append_proved(other, INVALID)
    with path.open("ab") as f:
        f.write((tmp_path / "other.log").read_bytes())
    assert report.records[-1] == records[-1] and len(list(report.records)) == 300
    lines = path.read_bytes().splitlines()
    lines[150] = _line(json.loads(lines[150]) | {"turn": 3})
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(InputError, match="the log changed since"):
        list(report.records)
    with pytest.raises(InputError, match="the log changed since"):
        report.records[160]
    assert report.records[10] == records[10]  # a mark before the change


def test_merkle_range_is_the_rfc_root() -> None:
    leaves = [leaf_hash(bytes([i])) for i in range(70)]
    for n in range(len(leaves) + 1):
        compact = MerkleRange()
        for h in leaves[:n]:
            compact.append(h)
        assert compact.root() == MerkleTree(leaves[:n]).root(), n
        assert len(compact.peaks) == n.bit_count()


def test_a_synthetic_log_is_a_sound_log(tmp_path: Path) -> None:
    path = tmp_path / "synthetic.log"
    size, root = build_synthetic_log(path, 130, KEY)
    lines = path.read_bytes().splitlines()
    assert len(lines) == 130 and size == path.stat().st_size
    assert all(encode_record(json.loads(x)) == x for x in lines)
    assert [json.loads(x)["seq"] for x in lines] == list(range(130))
    report = audit_log(path, PUB)
    assert report.ok and report.checkpoint is not None and report.checkpoint.root == root
    assert report.signatures_json() == {"checked": True, "signed": 130, "unsigned": 0}
    build_synthetic_log(path, 0, None)
    assert audit_log(path).ok and path.read_bytes() == b""


# == memory ===================================================================================
def _peak(path: Path) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        assert audit_log(path).problems is not None
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("damage", ["none", "one record deleted"])
def test_memory_beyond_the_columns_does_not_grow_with_the_log(tmp_path: Path, damage: str) -> None:
    """The audit keeps 33 bytes a record for a clean chain (its hash and one link byte), and
    a damaged chain's analysis some 8-byte columns more: what it holds beyond those does not
    grow with the log. Four times the records, at most that many more bytes a record."""
    per_record = 48 if damage == "none" else 160
    peaks = {}
    for n in (5_000, 20_000):
        path = tmp_path / f"{n}.log"
        build_synthetic_log(path, n, None)
        if damage != "none":
            lines = path.read_bytes().splitlines()
            del lines[n // 2]
            path.write_bytes(b"\n".join(lines) + b"\n")
        audit_log(path)  # first use: imports and the solver's own caches
        peaks[n] = _peak(path)
    assert peaks[20_000] - peaks[5_000] < per_record * 15_000, peaks
    assert peaks[20_000] < per_record * 20_000 + 4_000_000, peaks  # the rest is a constant


# == export ===================================================================================
def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def test_export_streams_the_bytes_read(tmp_path: Path) -> None:
    lines, note = _base("repaired")
    torn = b"\n".join([*lines, b"[junk]", lines[2][:40]])  # a torn last line, no newline
    path = _write(tmp_path, torn, note)
    r = run("log", "export", str(path))
    assert r.exit_code == 0 and r.stdout_bytes == torn
    out = tmp_path / "out.log"
    r = run("log", "export", str(path), "--out", str(out))
    assert r.exit_code == 0, r.output
    assert out.read_bytes() == torn and checkpoint_path(out).read_text() == note
    assert f"{len(lines)} records written" in r.stderr
    assert run("log", "export", str(path), "--out", str(out)).exit_code == 2  # exists
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"hello\n" * 3)
    r = run("log", "export", str(notes))
    assert r.exit_code == 2 and r.stdout_bytes == b"" and "not a proof log" in r.stderr
    future = FORMAT_VERSION + 1
    later = _write(tmp_path, b"\n".join([*lines, b'{"v": %d}' % future]) + b"\n", None)
    r = run("log", "export", str(later))
    assert r.exit_code == 2 and r.stdout_bytes == b""
    assert f"log format version {future}" in r.stderr


def test_iter_store_counts_and_restarts(tmp_path: Path) -> None:
    lines, note = _base("signed")
    path = _write(tmp_path, b"\n".join([*lines, b"", lines[0][:9]]), note)
    with iter_store(path) as reader:
        assert reader.checkpoint == note and reader.count_lines() == N + 2
        items = list(reader)
        assert reader.lines == N + 2 and reader.end == path.stat().st_size
    starts = [0]
    for x in path.read_bytes().splitlines(keepends=True)[:-1]:
        starts.append(starts[-1] + len(x))
    assert [w for w, _ in items] == starts
    kinds = [x.kind if isinstance(x, Problem) else "record" for _, x in items]
    assert kinds == ["record"] * N + ["malformed", "torn"]
    where, record = items[4]
    with iter_store(path, start=Mark(where, 4)) as again:
        assert again.checkpoint is None and next(iter(again)) == (where, record)


# == PostgreSQL ===============================================================================
def test_a_damaged_database_log_streams_like_the_reference(pg_url: str, tmp_path: Path) -> None:
    import psycopg

    from battlejudge.proofs.pglog import init_pg

    init_pg(pg_url)
    lines, note = _base("signed")
    rows = [*lines[:2], lines[3], b"[1, 2]", lines[2], *lines[4:], lines[5]]
    keys = [0, 1, 2, 5, 6, 7, 9, 10, 11, 12, 13, 14, 20][: len(rows)]
    with psycopg.connect(pg_url) as conn:
        for seq, line in zip(keys, rows, strict=True):
            conn.execute(
                "INSERT INTO battlejudge_log (seq, line, digest, leaf) VALUES (%s, %s, %s, %s)",
                (seq, line.decode(), hashlib.sha256(line).hexdigest(), leaf_hash(line)),
            )
        conn.execute("INSERT INTO battlejudge_checkpoint VALUES (%s, %s)", (N, note))
    expected = _ref_audit(pg_url, PUB)
    assert not expected[1]["ok"]
    with mock.patch.object(audit_module, "MARK_EVERY", 4):
        report = audit_log(pg_url, PUB)
        assert (report.problems, report.to_json()) == expected[:2]
        assert [(r.index, r.digest) for r in report.records] == expected[2]
        assert report.records[-2].index == expected[2][-2][0]
    r = run("audit", pg_url, "--json")
    assert r.exit_code == 1 and json.loads(r.stdout) == _ref_audit(pg_url)[1]
    r = run("log", "export", pg_url)
    assert r.exit_code == 0
    assert r.stdout_bytes == b"".join((b"" if x == b"[1, 2]" else x) + b"\n" for x in rows)
