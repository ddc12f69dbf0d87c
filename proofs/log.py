"""The proof log: an append-only JSON-lines file with one record per decided claim.

A record holds the game context (game id, turn, player, 1-based flag), the canonical
question, the verdict, the certificate (a DRAT proof or a witness, as the certificate
file's JSON), the time, its sequence number ``seq`` (0-based, one more than the record
before) and ``prev``, the SHA-256 of the previous record's line (``GENESIS`` for the
first): a hash chain, so a record cannot be edited, dropped, moved or slipped in without
breaking a link. With a key, ``sig`` is an Ed25519 signature of the record without
``sig``. Each line is ``json.dumps(record, sort_keys=True, separators=(",", ":"))``;
hashes and signatures cover those bytes (without the newline).

The format is versioned. Version 1 has claim records only, and they carry no version
field; version 2 adds ``repair`` records (written by :func:`repair_log`), which say
``"v": 2, "kind": "repair"`` and hold, instead of a claim, what the repair did; version 3
adds ``game`` records (``"v": 3, "kind": "game"``, :func:`game_record`): a game's id and
its record file's header lines, written with the game's claims, which bind every header
of the record. Claim records are written as in version 1, so older logs read and audit as
before; a record of a later version is reported, not guessed at.

Writing is durable and crash-safe: one ``write`` per record under an exclusive
``flock`` (two writers never interleave), then ``fsync``. A write cut short by a crash
leaves a torn last line; the next writer starts a new line so the torn bytes stay a
line of their own, never glued to a record, and continues the chain from the last
complete record. Readers report torn lines and never take them for records.

Every complete record is a leaf of an RFC 9162 Merkle tree (:mod:`battlejudge.proofs.merkle`;
leaf ``i`` is the ``i``-th record in the file, its line's bytes). After every append the
writer replaces ``LOG.checkpoint`` with a signed checkpoint of the tree
(:mod:`battlejudge.proofs.checkpoint`), so a cut end, which the chain cannot show, shows
against it, and anyone can be given a proof that a record is in the log.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from battlejudge.proofs.atomic import sync_folder, write_atomic
from battlejudge.proofs.checkpoint import (
    Checkpoint,
    origin_for,
    parse_checkpoint,
    verify_checkpoint,
)
from battlejudge.proofs.kinds import claim_kind
from battlejudge.proofs.merkle import leaf_hash
from battlejudge.proofs.tiles import (
    HEIGHT,
    MAX_ENTRY,
    WIDTH,
    DirTiles,
    TileError,
    TileReader,
    TileState,
    tile_path,
)
from battlejudge.solver.errors import InputError
from battlejudge.solver.json_input import parse_json

_logger = logging.getLogger(__name__)

GENESIS: Final = "0" * 64
"""The ``prev`` of the first record."""

ProblemKind: TypeAlias = Literal[
    "edited",
    "deleted",
    "reordered",
    "inserted",
    "torn",
    "bad-signature",
    "unsigned",
    "bad-proof",
    "mismatch",
    "malformed",
    "truncated",
    "checkpoint",
]
PROBLEM_KINDS: Final[tuple[ProblemKind, ...]] = (
    "torn",
    "malformed",
    "edited",
    "deleted",
    "reordered",
    "inserted",
    "bad-signature",
    "unsigned",
    "bad-proof",
    "mismatch",
    "truncated",
    "checkpoint",
)
"""Every kind of problem the audit finds, in the order a record's problems are listed
(kinds of extra checks come after these)."""

VERDICTS: Final = ("valid", "invalid")
FIELDS: Final = frozenset(
    ("seq", "game", "turn", "player", "flag", "question", "verdict", "certificate", "time", "prev")
)
"""The fields of every claim record; ``sig`` is added when the log is signed."""
FORMAT_VERSION: Final = 3
"""The newest log format this code reads and writes (see the module's docstring)."""
REPAIR_FORMAT: Final = 2
"""The format of repair records (:func:`repair_log` writes ``"v": 2``)."""
GAME_FORMAT: Final = 3
"""The format of game records (``"v": 3, "kind": "game"``): a game's header block."""
REPAIR_FIELDS: Final = frozenset(("v", "kind", "seq", "prev", "time", "repair"))
"""The fields of a repair record (format 2); ``sig`` is added when it is signed."""
GAME_FIELDS: Final = frozenset(("v", "kind", "seq", "prev", "time", "game", "headers"))
"""The fields of a game record (format 3); ``sig`` is added when it is signed."""
MAX_HEADERS: Final = 64
MAX_HEADER_LINE: Final = 4096

_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a log: the record (0-based line of the file), its kind and
    what is wrong, in one line."""

    record: int
    kind: str
    """One of :data:`PROBLEM_KINDS`, or a kind of an extra audit check's own."""
    detail: str

    def to_json(self) -> dict[str, Any]:
        """The problem as JSON: the record's index, the kind of problem and the detail."""
        return {"record": self.record, "kind": self.kind, "detail": self.detail}


@dataclass(frozen=True)
class LogRecord:
    """A complete record as read back: its place in the file (``index``, the 0-based line;
    equal to ``seq`` in an undamaged log), its data, its line bytes and their SHA-256.
    Each field of the record is also an attribute (``record.question``, ``record.flag``).
    """

    index: int
    data: dict[str, Any]
    raw: bytes
    digest: str

    @property
    def seq(self) -> int:
        """The record's sequence number (0-based, one more than the record before it)."""
        seq: int = self.data["seq"]
        return seq

    @property
    def prev(self) -> str:
        """The hash of the previous record's line (the hash chain)."""
        prev: str = self.data["prev"]
        return prev

    @property
    def sig(self) -> str | None:
        """The record's Ed25519 signature (base64), or None for an unsigned log."""
        sig: str | None = self.data.get("sig")
        return sig

    @property
    def kind(self) -> str:
        """``claim``, ``repair`` for a record :func:`repair_log` wrote, or ``game`` for a
        game's header block (:func:`game_record`)."""
        kind: str = self.data.get("kind", "claim")
        return kind

    @property
    def headers(self) -> list[str] | None:
        """A game record's header lines, as the game's record file has them (else None)."""
        headers: list[str] | None = self.data.get("headers")
        return headers

    @property
    def game(self) -> str | None:
        """None for a record that names no game (and for a repair record)."""
        game: str | None = self.data.get("game")
        return game

    @property
    def turn(self) -> int | None:
        """The game turn of the claim, when the writer gave one."""
        turn: int | None = self.data.get("turn")
        return turn

    @property
    def player(self) -> str | None:
        """The player who claimed, when the writer gave one."""
        player: str | None = self.data.get("player")
        return player

    @property
    def flag(self) -> int | None:
        """1-based."""
        flag: int | None = self.data.get("flag")
        return flag

    @property
    def question(self) -> dict[str, Any]:
        """The canonical claim question, as JSON."""
        question: dict[str, Any] = self.data["question"]
        return question

    @property
    def verdict(self) -> str:
        """The verdict recorded: ``valid`` or ``invalid``."""
        verdict: str = self.data["verdict"]
        return verdict

    @property
    def certificate(self) -> dict[str, Any]:
        """The certificate (a DRAT proof or a witness), as the certificate file's JSON."""
        certificate: dict[str, Any] = self.data["certificate"]
        return certificate

    @property
    def time(self) -> str:
        """When the record was appended (UTC, ISO 8601)."""
        time: str = self.data["time"]
        return time


# -- the line format -----------------------------------------------------------------------
def encode_record(record: Mapping[str, Any]) -> bytes:
    """The record's line, without the newline: sorted keys, no spaces, ASCII only (no
    NaN: it is not JSON). Raises ``TypeError`` or ``ValueError`` for data JSON cannot hold."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), allow_nan=False).encode(
        "ascii"
    )


def signed_bytes(record: Mapping[str, Any]) -> bytes:
    """What the signature covers: the record's line without its ``sig``."""
    return encode_record({k: v for k, v in record.items() if k != "sig"})


def sha256_hex(data: bytes) -> str:
    """The lowercase hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _time_error(value: object) -> str | None:
    if not isinstance(value, str):
        return f"time must be an ISO-8601 string, got {value!r}"
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return f"time {value!r} is not ISO-8601"
    return None


def _game_error(obj: dict[str, Any]) -> str | None:
    """Why ``obj`` is not a game record (format 3), or None."""
    missing = sorted(GAME_FIELDS - obj.keys())
    if missing:
        return f"no {missing[0]!r} field"
    unknown = sorted(obj.keys() - GAME_FIELDS - {"sig"})
    if unknown:
        return f"unknown field {unknown[0]!r}"
    return _link_error(obj) or header_error(obj["game"], obj["headers"]) or _time_error(obj["time"])


def header_error(game: object, headers: object) -> str | None:
    """Why ``game`` and ``headers`` are not a game record's (a game id, and its record's
    header lines as written: ``[Tag "value"]``), or None."""
    if not isinstance(game, str) or not game or len(game) > 200:
        return f"game must be a game id (a string), got {game!r:.60}"
    if not isinstance(headers, list) or len(headers) > MAX_HEADERS:
        return f"headers must be a list of at most {MAX_HEADERS} header lines"
    for line in headers:
        if not isinstance(line, str) or not line.startswith("[") or len(line) > MAX_HEADER_LINE:
            return f'headers: {line!r:.60} is not a header line ([Tag "value"])'
    return None


def _repair_error(obj: dict[str, Any]) -> str | None:
    """Why ``obj`` is not a repair record (format 2) or a game record (format 3), or None."""
    v: Any = obj.get("v")
    if not _is_int(v) or v < REPAIR_FORMAT:
        return f"v must be a format version (2 or 3), got {v!r}"
    if v > FORMAT_VERSION:
        return f"log format version {v}: this battlejudge reads versions 1 to {FORMAT_VERSION}"
    if obj.get("kind") == "game":
        if v < GAME_FORMAT:
            return f"a game record is of format {GAME_FORMAT}, got v {v}"
        return _game_error(obj)
    if obj.get("kind") != "repair":
        return f"kind must be 'repair' in a format {v} record, got {obj.get('kind')!r}"
    missing = sorted(REPAIR_FIELDS - obj.keys())
    if missing:
        return f"no {missing[0]!r} field"
    unknown = sorted(obj.keys() - REPAIR_FIELDS - {"sig"})
    if unknown:
        return f"unknown field {unknown[0]!r}"
    why = _link_error(obj)
    if why:
        return why
    repair = obj["repair"]
    if not isinstance(repair, dict) or set(repair) != {"moved", "to", "before", "rechained"}:
        return "repair must be an object with moved, to, before and rechained"
    moved = repair["moved"]
    if not isinstance(moved, list) or not all(
        isinstance(m, dict)
        and set(m) == {"line", "sha256"}
        and _is_int(m["line"])
        and m["line"] >= 0
        and isinstance(m["sha256"], str)
        and _HEX64.fullmatch(m["sha256"])
        for m in moved
    ):
        return "repair.moved must list {line, sha256} objects"
    if not isinstance(repair["to"], str):
        return f"repair.to must be a file name, got {repair['to']!r}"
    if not isinstance(repair["before"], str) or not _HEX64.fullmatch(repair["before"]):
        return f"repair.before must be a SHA-256 in hex, got {repair['before']!r}"
    if not _is_int(repair["rechained"]) or repair["rechained"] < 0:
        return f"repair.rechained must be a whole number, got {repair['rechained']!r}"
    if "sig" in obj and not isinstance(obj["sig"], str):
        return f"sig must be a base64 string, got {obj['sig']!r}"
    return _time_error(obj["time"])


def _link_error(obj: dict[str, Any]) -> str | None:
    seq, prev = obj["seq"], obj["prev"]
    if not _is_int(seq) or seq < 0:
        return f"seq must be a whole number >= 0, got {seq!r}"
    if not isinstance(prev, str) or not _HEX64.fullmatch(prev):
        return f"prev must be 64 lowercase hex digits, got {prev!r}"
    return None


def record_error(obj: object) -> str | None:
    """Why ``obj`` is not a record (one line), or None if it has the shape of one: a claim
    record (format 1, no ``v``) or a repair record (format 2)."""
    if not isinstance(obj, dict):
        return f"a record is a JSON object, got {type(obj).__name__}"
    if "v" in obj or "kind" in obj:
        return _repair_error(obj)
    missing = sorted(FIELDS - obj.keys())
    if missing:
        return f"no {missing[0]!r} field"
    unknown = sorted(obj.keys() - FIELDS - {"sig"})
    if unknown:
        return f"unknown field {unknown[0]!r}"
    why = _link_error(obj)
    if why:
        return why
    for name in ("game", "player"):
        if obj[name] is not None and not isinstance(obj[name], str):
            return f"{name} must be a string or null, got {obj[name]!r}"
    turn, flag = obj["turn"], obj["flag"]
    if turn is not None and (not _is_int(turn) or turn < 0):
        return f"turn must be a whole number >= 0 or null, got {turn!r}"
    if flag is not None and (not _is_int(flag) or flag < 1):
        return f"flag must be a number >= 1 (flags count from 1) or null, got {flag!r}"
    for name in ("question", "certificate"):
        if not isinstance(obj[name], dict):
            return f"{name} must be a JSON object, got {obj[name]!r:.60}"
    if obj["verdict"] not in VERDICTS:
        return f"verdict must be 'valid' or 'invalid', got {obj['verdict']!r}"
    if "sig" in obj and not isinstance(obj["sig"], str):
        return f"sig must be a base64 string, got {obj['sig']!r}"
    return _time_error(obj["time"])


def parse_line(raw: bytes) -> dict[str, Any] | str:
    """A line's record, or why it is not one."""
    try:
        obj = parse_json(raw)
    except InputError as e:  # not JSON, or beyond the JSON limits (named by path)
        return str(e)
    return record_error(obj) or obj


def _looks_torn(raw: bytes) -> bool:
    """Heuristic for a line that is not JSON: the start of a record (every line starts
    with ``{``) or the zeros a crash can leave where data never reached the disk."""
    return raw.startswith(b"{") or (raw != b"" and raw.strip(b"\0") == b"")


# -- reading -------------------------------------------------------------------------------
def read_log(path: str | Path) -> tuple[list[LogRecord], list[Problem]]:
    """Parse a log into its complete records and the lines that are not records: ``torn``
    (a write cut short: the unfinished last line, or an earlier one the next writer left
    behind) or ``malformed``. Checks the shape of each line only, not the chain, the
    signatures or the certificates (see :func:`battlejudge.proofs.audit.audit_log`).

    A last line lacking only its newline is a complete record. Raises ``OSError`` if the
    file cannot be read and :class:`InputError` if it is not a proof log at all (no
    record, and some line that is not a torn write).
    """
    return parse_log(Path(path).read_bytes(), path)


def parse_log(
    data: bytes, path: str | Path = "", *, whole: bool = True
) -> tuple[list[LogRecord], list[Problem]]:
    """:func:`read_log` on the bytes of a log (``path`` names it in errors); ``whole=False``
    for a part of one (the lines appended since some point), which is never refused."""
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    records: list[LogRecord] = []
    problems: list[Problem] = []
    malformed = False
    for index, raw in enumerate(lines):
        parsed = parse_line(raw)
        if isinstance(parsed, dict):
            records.append(LogRecord(index, parsed, raw, sha256_hex(raw)))
        elif not raw:
            malformed = True
            problems.append(Problem(index, "malformed", "blank line"))
        elif parsed.startswith("not JSON") and _looks_torn(raw):
            problems.append(
                Problem(
                    index,
                    "torn",
                    f"line cut short ({len(raw)} bytes): a write that did not finish, not a record",
                )
            )
        else:
            malformed = True
            problems.append(Problem(index, "malformed", parsed))
    if tail:
        index = len(lines)
        parsed = parse_line(tail)
        if isinstance(parsed, dict):
            records.append(LogRecord(index, parsed, tail, sha256_hex(tail)))
        else:
            problems.append(
                Problem(
                    index,
                    "torn",
                    f"the last line is cut short ({len(tail)} bytes, no "
                    "newline): a write that did not finish, not a record",
                )
            )
    if whole and not records and malformed:
        raise InputError(f"{path}: not a proof log (no line is a record)")
    return records, problems


def newer_format(problems: list[Problem], path: str | Path) -> None:
    """Raise :class:`InputError` if a line is a record of a later log format than this
    code reads: such a log is refused, never guessed at (nor appended to)."""
    for p in problems:
        if p.kind == "malformed" and p.detail.startswith("log format version"):
            raise InputError(
                f"{path}: record {p.record}: {p.detail}; upgrade battlejudge to read this log"
            )


def _read_range(fd: int, start: int, end: int) -> bytes:
    chunks, at = [], start
    while at < end:
        chunk = os.pread(fd, min(end - at, 1 << 24), at)
        if not chunk:
            break
        chunks.append(chunk)
        at += len(chunk)
    return b"".join(chunks)


def checkpoint_path(path: str | Path) -> Path:
    """Where a file log keeps its latest signed checkpoint: ``LOG.checkpoint``."""
    p = Path(path)
    return p.with_name(p.name + ".checkpoint")


# -- writing -------------------------------------------------------------------------------
def utc_now() -> str:
    """Now, in UTC, ISO-8601 with milliseconds and a ``Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _check_context(
    game: str | None, turn: int | None, player: str | None, flag: int | None, time: str | None
) -> None:
    for name, value in (("game", game), ("player", player)):
        if value is not None and not isinstance(value, str):
            raise InputError(f"{name} must be a string, got {value!r}")
    if turn is not None and (not _is_int(turn) or turn < 0):
        raise InputError(f"turn must be a whole number >= 0, got {turn!r}")
    if flag is not None and (not _is_int(flag) or flag < 1):
        raise InputError(f"flag must be a number >= 1 (flags count from 1), got {flag!r}")
    if time is not None and (why := _time_error(time)):
        raise InputError(why)


def claim_record(
    *,
    question: dict[str, Any],
    verdict: str,
    certificate: dict[str, Any],
    game: str | None = None,
    turn: int | None = None,
    player: str | None = None,
    flag: int | None = None,
    time: str | None = None,
) -> dict[str, Any]:
    """A claim record without its place in the chain (``seq``, ``prev``, ``sig``), its
    values checked: ``question`` is stored in canonical form; ``certificate`` is a
    certificate file's JSON and must carry the same question and verdict; ``flag`` counts
    from 1; ``time`` defaults to now (UTC). Raises :class:`InputError` naming a bad value.
    """
    kind = claim_kind()
    canonical = kind.canonical(kind.question(question))
    if verdict not in VERDICTS:
        raise InputError(f"verdict must be 'valid' or 'invalid', got {verdict!r}")
    if not isinstance(certificate, dict):
        raise InputError(f"certificate must be a JSON object, got {certificate!r:.60}")
    if certificate.get("verdict") != verdict:
        raise InputError(
            f"verdict {verdict!r} is not the certificate's {certificate.get('verdict')!r}"
        )
    if certificate.get("question") != canonical:
        raise InputError(
            f"question {json.dumps(canonical)} is not the certificate's "
            f"{json.dumps(certificate.get('question'))}"
        )
    _check_context(game, turn, player, flag, time)
    return {
        "game": game,
        "turn": turn,
        "player": player,
        "flag": flag,
        "question": canonical,
        "verdict": verdict,
        "certificate": certificate,
        "time": time or utc_now(),
    }


def game_record(game: str, headers: Sequence[str], time: str | None = None) -> dict[str, Any]:
    """A game record without its place in the chain: the game's id and its record file's
    header lines exactly as written (every tag, the ``Result`` too), so that the audit can
    show any header changed since (``audit --games``). :class:`InputError` for bad values."""
    lines = list(headers)
    why = header_error(game, lines) or (_time_error(time) if time is not None else None)
    if why:
        raise InputError(why)
    return {
        "v": GAME_FORMAT,
        "kind": "game",
        "game": game,
        "headers": lines,
        "time": time or utc_now(),
    }


_PREV: Final = b'"prev":"!PREV!"'
_SEQ: Final = b'"seq":"!SEQ!"'


@dataclass(frozen=True)
class PreparedRecord:
    """A record encoded before it has its place in the chain (made where the claim was
    proved, e.g. in a service worker): its line in three pieces around ``prev`` and
    ``seq``, so the log's one writer only puts those in, signs and writes. JSON escapes
    every quote inside a string, so the pieces are found without doubt (tested equal to
    encoding the chained record)."""

    head: bytes
    middle: bytes
    tail: bytes

    def line(self, seq: int, prev: str) -> bytes:
        """The line with ``seq`` and ``prev`` in place (no ``sig``)."""
        return b"".join(
            (self.head, b'"prev":"', prev.encode("ascii"), b'"', self.middle, b'"seq":',
             str(seq).encode("ascii"), self.tail)
        )  # fmt: skip


def prepare_record(record: Mapping[str, Any]) -> PreparedRecord:
    """``record`` (:func:`claim_record`, :func:`game_record`) encoded ahead of the chain."""
    line = encode_record(
        {k: v for k, v in record.items() if k not in ("sig", "seq", "prev")}
        | {"prev": "!PREV!", "seq": "!SEQ!"}
    )
    head, found, rest = line.partition(_PREV)
    middle, found2, tail = rest.partition(_SEQ)
    if not found or not found2:  # cannot happen for a record: JSON escapes quotes
        raise ValueError("not a record to prepare")
    return PreparedRecord(head, middle, tail)


def chain_prepared(
    record: PreparedRecord, seq: int, prev: str, key: Ed25519PrivateKey | None
) -> tuple[dict[str, Any], bytes]:
    """:func:`chain_record` for a prepared record: its line with ``seq``, ``prev`` and
    (with ``key``) ``sig``; the record as ``{"seq", "prev", "sig"}``."""
    line = record.line(seq, prev)
    out: dict[str, Any] = {"seq": seq, "prev": prev}
    if key is None:
        return out, line
    sig = base64.b64encode(key.sign(line)).decode("ascii")
    out["sig"] = sig
    at = line.rfind(b',"time":')
    return out, line[:at] + b',"sig":"' + sig.encode("ascii") + b'"' + line[at:]


def chain_any(
    record: Mapping[str, Any] | PreparedRecord, seq: int, prev: str, key: Ed25519PrivateKey | None
) -> tuple[dict[str, Any], bytes]:
    """:func:`chain_record` or :func:`chain_prepared`, as ``record`` is."""
    if isinstance(record, PreparedRecord):
        return chain_prepared(record, seq, prev, key)
    return chain_record(record, seq, prev, key)


def chain_record(
    record: Mapping[str, Any], seq: int, prev: str, key: Ed25519PrivateKey | None
) -> tuple[dict[str, Any], bytes]:
    """The record with its ``seq``, ``prev`` and (with ``key``) ``sig``, and its line.

    The line is encoded once: the signature covers the line without ``sig``, and ``sig``
    sorts just before the top-level ``time`` (every record has one, followed only by
    ``turn`` and ``verdict``, or ``v``, whose values hold no ``,"time":``), so the signed
    line is that one with ``,"sig":...`` put in there: byte for byte what
    :func:`encode_record` gives for the signed record (tested), at half the cost."""
    out = {k: v for k, v in record.items() if k != "sig"} | {"seq": seq, "prev": prev}
    line = encode_record(out)
    if key is None:
        return out, line
    sig = base64.b64encode(key.sign(line)).decode("ascii")
    out["sig"] = sig
    at = line.rfind(b',"time":')
    if at < 0 or "time" not in out:
        return out, encode_record(out)
    return out, line[:at] + b',"sig":"' + sig.encode("ascii") + b'"' + line[at:]


def continue_chain(lines: Sequence[bytes], seq: int, last: str, name: str) -> tuple[str, int]:
    """Check that the record lines continue a chain whose next seq is ``seq`` and whose
    last hash is ``last``; return the chain's new end. :class:`InputError` otherwise."""
    for i, raw in enumerate(lines):
        parsed = parse_line(raw)
        if not isinstance(parsed, dict):
            raise InputError(f"{name}: line {i} to import is not a record: {parsed}")
        if parsed["seq"] != seq or parsed["prev"] != last:
            raise InputError(
                f"{name}: line {i} to import (seq {parsed['seq']}) does not continue the "
                f"log's chain (next seq {seq})"
            )
        seq, last = seq + 1, sha256_hex(raw)
    return last, seq


def _read_note(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read the checkpoint ({e})") from None


class VouchError(InputError):
    """A log its writer cannot vouch for: no checkpoint, one of another log or key, one
    not signed, or one the records do not match (cut from the end, changed). Appending
    would sign a checkpoint over the damage, so the writer refuses; the message says how
    to recover."""


def recovery(name: str) -> str:
    """How to recover a log a writer refused (the end of its message)."""
    return (
        f"not appending to a log this writer cannot vouch for. Audit it (battlejudge audit "
        f"{name} --pubkey KEY.pub); battlejudge log repair {name} says what to do next"
    )


def vouch(note: str | None, key: Ed25519PrivateKey | None, name: str) -> Checkpoint:
    """The log's latest checkpoint, if it is one this writer can vouch for: there, of the
    writer's own log (origin), and signed by its key (a writer without a key keeps an
    unsigned log). :class:`VouchError` naming the problem otherwise."""
    if note is None:
        raise VouchError(f"{name}: the log holds records but has no checkpoint: {recovery(name)}")
    try:
        signed = parse_checkpoint(note, f"{name} checkpoint")
    except InputError as e:
        raise VouchError(f"{e}: {recovery(name)}") from None
    head = signed.checkpoint
    origin = origin_for(key)
    if head.origin != origin:
        mine = "this writer's key" if key is not None else "an unsigned log: give its --key"
        raise VouchError(
            f"{name}: the checkpoint is of log {head.origin!r}, not {origin!r} ({mine}): "
            f"{recovery(name)}"
        )
    if key is not None:
        try:
            verify_checkpoint(note, key.public_key(), f"{name} checkpoint")
        except InputError as e:
            raise VouchError(f"{e}: {recovery(name)}") from None
    return head


def head_note(note: str | None, state: TileState) -> str | None:
    """``note`` if it is a checkpoint of exactly this tree (size and root), else None."""
    if note is None:
        return None
    try:
        head = parse_checkpoint(note).checkpoint
    except InputError:
        return None
    return note if head.size == state.size and head.root == state.root() else None


def tiles_path(path: str | Path) -> Path:
    """Where a file log keeps its tiles: the folder ``LOG.tiles``, holding ``tile/...`` and
    a copy of the latest ``checkpoint``, as a static C2SP tlog-tiles log."""
    p = Path(path)
    return p.with_name(p.name + ".tiles")


Cosigner: TypeAlias = Callable[[str, TileReader], str]
"""What gathers witnesses' cosignatures: given a signed checkpoint note and a reader of
the tree it covers (for consistency proofs), the note with the cosignatures added."""

EPOCH: Final = "epoch"
"""A file of the tiles folder naming this generation of it (random): a log started again
at the same path, or tiles rebuilt, get a new one, so that no reader takes a tile it
cached from before for one of now."""
TAIL_WINDOW: Final = 1 << 20
MAX_TAIL: Final = 1 << 26
"""How far from its end a writer looks for the last record its checkpoint covers (more
than that: the tiles are rebuilt from the whole log)."""


class ProofLog:
    """An append-only proof log in a file; safe for a new file and for an existing log,
    whose chain and seq it continues. ``key`` signs every record and every checkpoint.
    ``sync=False`` skips the fsyncs (a record then survives a crash of the process but
    not of the machine).

    The writer vouches for what it appends to: an existing log must have a checkpoint of
    this writer's log, signed by its key, that the records match (:class:`VouchError`
    otherwise); ``adopt=True`` takes the log as it is instead (``log checkpoint
    --write``, after an audit). After every append (one record, or a batch) the records
    are fsynced, the tiles of the tree (``LOG.tiles``, :mod:`battlejudge.proofs.tiles`)
    written, and a signed checkpoint (tree size, RFC 9162 root, time; cosigned by
    witnesses through ``cosign``) replaces ``LOG.checkpoint``, while the lock is held.

    One instance may be shared by threads; any number of processes may append to the same
    file (each batch is written whole under an exclusive ``flock``). A log opened before
    a ``fork`` reopens the file in the child so the lock still separates them. Opening
    reads the checkpoint, the partial tiles and the end of the log (the whole log only
    when its tiles are missing or stale); later appends read only what other writers
    added. Memory is O(log n) in the log's size.
    """

    def __init__(
        self,
        path: str | Path,
        key: Ed25519PrivateKey | None = None,
        *,
        sync: bool = True,
        adopt: bool = False,
        cosign: Cosigner | None = None,
    ) -> None:
        self.path = Path(path)
        self.key = key
        self.sync = sync
        self.origin = origin_for(key)
        self.tiles = DirTiles(tiles_path(self.path))
        self.cosign = cosign
        self._adopt = adopt
        self._mutex = threading.Lock()
        self._fd = -1
        self._pid = 0
        self._size = -1  # bytes in the file after our last look; -1: look from the start
        self._last = GENESIS
        self._seq = 0
        self._torn = False
        self._dirty = False  # records beyond the published checkpoint
        self._state = TileState()
        self._held: dict[str, bytes] = {}  # full tiles not written yet
        self._open()
        try:
            fd = self._lock()
            try:
                self._refresh(os.fstat(fd).st_size)
                if self._dirty:
                    self._write_checkpoint()
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        except BaseException:
            self.close()
            raise

    @property
    def name(self) -> str:
        """The log as a person names it: its path."""
        return str(self.path)

    def _open(self) -> None:
        created = not self.path.exists()
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
        self._fd = os.open(self.path, flags, 0o644)
        self._pid = os.getpid()
        self._size = -1
        if created and self.sync:
            # The new name must reach the disk too, or a crash can lose the whole file.
            sync_folder(self.path.parent)

    def _lock(self) -> int:
        """Take the file's exclusive lock and return its descriptor, reopening first when
        the path names another file than ours (:func:`repair_log` replaces the log
        whole, under the lock): records always go to the file that is the log."""
        while True:
            fd = self._fd
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = True  # removed: nothing to follow
            if same:
                return fd
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            self._open()

    def _refresh(self, size: int) -> None:
        """Bring the chain's end (last hash, next seq, torn tail) and the tree's right
        edge up to the file's first ``size`` bytes: the bytes other writers added since
        our last look, or a first look when we have not looked yet or the file shrank."""
        if self._size < 0 or size < self._size:
            self._first_look(size)
            return
        data = _read_range(self._fd, self._size, size)
        if self._torn and data:
            # The first line's start was the torn tail we saw last time (and took as a
            # record if it was one): whoever wrote next began by ending that line.
            cut = data.find(b"\n")
            data = b"" if cut < 0 else data[cut + 1 :]
        records, problems = parse_log(data, self.path, whole=False)
        newer_format(problems, self.path)
        self._grow([r.raw for r in records])
        if records:
            self._last, self._seq = records[-1].digest, records[-1].seq + 1
        if size > self._size:
            self._torn = _read_range(self._fd, size - 1, size) != b"\n"
        self._size = size
        if self._torn:
            _logger.warning("%s: the last line is torn; starting a new line after it", self.path)

    def _first_look(self, size: int) -> None:
        self._last, self._seq, self._torn, self._state = GENESIS, 0, False, TileState()
        self._held = {}
        note = _read_note(checkpoint_path(self.path))
        if self._adopt:
            self._rebuild(size, None)
        elif size == 0:
            if note is None:
                self._new_tiles()  # a new log: tiles left by a log that was here are not its
            head = parse_checkpoint(note, f"{self.name} checkpoint").checkpoint if note else None
            if head is not None and head.size:
                raise VouchError(
                    f"{self.name}: the log is empty but its checkpoint covers {head.size} "
                    f"records: they were cut; {recovery(self.name)}"
                )
        elif note is None and not self._records_in(size):
            self._rebuild(size, None)  # torn or blank lines only: nothing to vouch for
        else:
            head = vouch(note, self.key, self.name)
            try:
                self._fast(size, head)
            except TileError as e:
                _logger.warning("%s: %s; rebuilding the tiles from the log", self.name, e)
                self._last, self._seq, self._state = GENESIS, 0, TileState()
                self._rebuild(size, head)
        self._size = size
        self._torn = size > 0 and _read_range(self._fd, size - 1, size) != b"\n"

    def _records_in(self, size: int) -> bool:
        records, problems = parse_log(_read_range(self._fd, 0, size), self.path, whole=False)
        newer_format(problems, self.path)
        return bool(records)

    def _fast(self, size: int, head: Checkpoint) -> None:
        """A first look from the tiles: the right edge at the checkpoint's size must hash
        to its root, and the record it ends with must be the log's last (or be followed
        only by records that continue the chain: a writer stopped between its fsync and
        its checkpoint)."""
        if head.size == 0:
            raise TileError("the checkpoint is of an empty tree")
        state = TileState.load(self.tiles.read, head.size)
        if state.root() != head.root:
            raise TileError("the tiles do not match the checkpoint")
        self._check_full_tiles(head.size)
        leaf = state.last_leaf(self.tiles.read)
        last, after = self._tail(size, head)
        if leaf is None or leaf_hash(last.raw) != leaf:
            raise VouchError(
                f"{self.name}: record {head.size - 1}, the last its checkpoint of {head.time} "
                f"covers, was changed; {recovery(self.name)}"
            )
        digest = last.digest
        for r in after:
            if r.prev != digest:
                raise VouchError(
                    f"{self.name}: record {r.seq} after the checkpoint does not continue the "
                    f"chain; {recovery(self.name)}"
                )
            digest = r.digest
        self._state = state
        self._last, self._seq = last.digest, head.size
        self._grow([r.raw for r in after])
        if after:
            self._last, self._seq = after[-1].digest, after[-1].seq + 1
            self._dirty = True

    def _check_full_tiles(self, size: int) -> None:
        """:class:`TileError` when a full tile or bundle of the tree of ``size`` leaves is
        missing or of the wrong length (a crash can take back a name never synced): one
        ``stat`` per 256 records."""
        level, hashes = 0, size >> HEIGHT
        while hashes:
            for index in range(hashes):
                wanted: dict[str, int | None] = {tile_path(level, index): WIDTH * 32}
                if level == 0:
                    wanted[tile_path(None, index)] = None  # a bundle: any length but none
                for path, want in wanted.items():
                    try:
                        length = os.stat(self.tiles.root / path).st_size
                    except OSError:
                        raise TileError(f"{path}: missing") from None
                    if length == 0 or (want is not None and length != want):
                        raise TileError(f"{path}: {length} bytes")
            level, hashes = level + 1, hashes >> HEIGHT

    def _tail(self, size: int, head: Checkpoint) -> tuple[LogRecord, list[LogRecord]]:
        """The record with seq ``head.size - 1`` and the records after it, read from the
        end of the file; :class:`VouchError` when the log ends before it (cut)."""
        want, window = head.size - 1, TAIL_WINDOW
        while True:
            start = max(0, size - window)
            data = _read_range(self._fd, start, size)
            if start:
                data = data[data.find(b"\n") + 1 :]
            records, problems = parse_log(data, self.path, whole=False)
            newer_format(problems, self.path)
            for i in range(len(records) - 1, -1, -1):
                if records[i].seq == want:
                    return records[i], records[i + 1 :]
                if records[i].seq < want:
                    break
            else:
                if start and window < MAX_TAIL:
                    window *= 4
                    continue
                if start:
                    raise TileError("the last record the checkpoint covers is far from the end")
            raise VouchError(
                f"{self.name}: records were cut from its end: record {want}, the last its "
                f"checkpoint of {head.time} covers, is not in the log; {recovery(self.name)}"
            )

    def _rebuild(self, size: int, head: Checkpoint | None) -> None:
        """A first look from the whole log: its tree's tiles written again; with a
        checkpoint, the records it covers must hash to its root."""
        records, problems = parse_log(_read_range(self._fd, 0, size), self.path)
        newer_format(problems, self.path)
        self._new_tiles()
        if head is not None and head.size > len(records):
            raise VouchError(
                f"{self.name}: records were cut from its end: its checkpoint of {head.time} "
                f"covers {head.size} records, the log holds {len(records)}; "
                f"{recovery(self.name)}"
            )
        covered = [] if head is None else records[: head.size]
        self._grow([r.raw for r in covered])
        self._flush_tiles()  # the partial tiles a reader of that checkpoint needs
        if head is not None and self._state.root() != head.root:
            raise VouchError(
                f"{self.name}: the log does not match its checkpoint of {head.time} "
                f"({head.size} records): records were changed; {recovery(self.name)}"
            )
        rest = records[len(covered) :]
        self._grow([r.raw for r in rest])
        if records:
            self._last, self._seq = records[-1].digest, records[-1].seq + 1
        self._dirty = head is None or bool(rest)

    def _new_tiles(self) -> None:
        """Start the tiles folder afresh, with a new epoch (readers cache tiles by it)."""
        shutil.rmtree(self.tiles.root, ignore_errors=True)
        self.tiles = DirTiles(self.tiles.root)  # it remembers the folders it made
        self._held = {}
        self.tiles.write({EPOCH: secrets.token_hex(16).encode("ascii")}, durable=[EPOCH])

    def _grow(self, lines: Sequence[bytes]) -> None:
        """Add record lines to the tree's right edge; the full tiles they complete are
        written (64 at a time), the partial ones with the next checkpoint."""
        for line in lines:
            self._held.update(self._state.append(leaf_hash(line), line))
            if len(self._held) >= 64:
                self._flush_tiles(partial=False)

    def _flush_tiles(self, partial: bool = True) -> None:
        """Write the full tiles held, and with ``partial`` the partial tiles of the size
        the tree has now (what a checkpoint of that size needs)."""
        tiles = self._held | (self._state.partial() if partial else {})
        if tiles:
            self.tiles.write(tiles, durable=self._held if self.sync else ())
        self._held = {}

    @property
    def next_seq(self) -> int:
        """The seq of the next record this writer would write (as of its last look)."""
        return self._seq

    def append(
        self,
        *,
        question: dict[str, Any],
        verdict: str,
        certificate: dict[str, Any],
        game: str | None = None,
        turn: int | None = None,
        player: str | None = None,
        flag: int | None = None,
        time: str | None = None,
    ) -> dict[str, Any]:
        """Append one record, durably, then the checkpoint; return the record (with
        ``seq``, ``prev`` and ``sig``). See :func:`claim_record` for the values.
        Raises :class:`InputError` (a ``ValueError``) for a bad value, naming it.
        """
        record = claim_record(
            question=question,
            verdict=verdict,
            certificate=certificate,
            game=game,
            turn=turn,
            player=player,
            flag=flag,
            time=time,
        )
        return self.append_records([record])[0]

    def append_batch(self, entries: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Append several claims (each the keyword arguments of :meth:`append`) in one
        write, with one checkpoint after them; all or none are checked first."""
        return self.append_records([claim_record(**e) for e in entries])

    def append_records(
        self, records: Sequence[Mapping[str, Any] | PreparedRecord], *, publish: bool = True
    ) -> list[dict[str, Any]]:
        """Chain, sign and append records already checked (:func:`claim_record`, or
        records read from another log: their ``seq``, ``prev`` and ``sig`` are replaced),
        durably, then write the tiles and the checkpoint (``publish=False`` leaves those
        to :meth:`publish`: the sequencer commits records as they come and publishes a
        checkpoint at most every interval). Returns the records as written."""
        out: list[dict[str, Any]] = []
        if not records:
            return out
        with self._mutex:
            fd = self._locked()
            try:
                lines = []
                last, seq = self._last, self._seq
                for record in records:
                    chained, line = chain_any(record, seq, last, self.key)
                    out.append(chained)
                    lines.append(line)
                    last, seq = sha256_hex(line), seq + 1
                self._write_lines(fd, lines)
                self._last, self._seq = last, seq
                self._grow(lines)
                if publish:
                    self._write_checkpoint()
                else:
                    self._dirty = True
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        return out

    def publish(self) -> None:
        """Write the tiles and a signed (and cosigned) checkpoint of every record appended
        so far, when one is due (records appended with ``publish=False``)."""
        with self._mutex:
            fd = self._locked()
            try:
                if self._dirty or self._held:
                    self._write_checkpoint()
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def _locked(self) -> int:
        """Lock the file (reopened after a fork) and catch up with other writers."""
        if self._pid != os.getpid():
            os.close(self._fd)
            self._open()
        fd = self._lock()
        try:
            size = os.fstat(fd).st_size
            if size != self._size:  # another writer, or a torn write of ours
                self._refresh(size)
        except BaseException:
            fcntl.flock(fd, fcntl.LOCK_UN)
            raise
        return fd

    def _write_lines(self, fd: int, lines: Sequence[bytes]) -> None:
        for line in lines:
            if len(line) > MAX_ENTRY:
                raise InputError(
                    f"a record of {len(line)} bytes: a log entry is at most {MAX_ENTRY} "
                    "bytes (a tile's entry bundle holds no more)"
                )
        data = (b"\n" if self._torn else b"") + b"".join(x + b"\n" for x in lines)
        size, self._size = self._size, -1  # until the records are known to be whole
        _write_all(fd, data)
        if self.sync:
            os.fsync(fd)
        self._size, self._torn = size + len(data), False

    def import_lines(self, lines: Sequence[bytes], checkpoint: str | None = None) -> None:
        """Append records byte for byte (an import: their ``seq``, ``prev`` and ``sig``
        kept), which must continue the chain; then ``checkpoint`` if it is the tree head
        after them, else a fresh one. Raises :class:`InputError` naming the first line
        that does not continue the chain."""
        with self._mutex:
            fd = self._locked()
            try:
                last, seq = continue_chain(lines, self._seq, self._last, self.name)
                self._write_lines(fd, lines)
                self._last, self._seq = last, seq
                self._grow(lines)
                self._write_checkpoint(checkpoint)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def checkpoint(self) -> Checkpoint:
        """The tree head as of this writer's last look (not signed, not written)."""
        return Checkpoint(self.origin, self._state.size, self._state.root(), utc_now())

    def reader(self) -> TileReader:
        """A reader of the tree as of this writer's last look, from its tiles."""
        return TileReader(self.tiles.read, self._state.size)

    def _write_checkpoint(self, given: str | None = None) -> None:
        self._flush_tiles()
        note = head_note(given, self._state) or self.checkpoint().sign(self.key)
        if self.cosign is not None:
            note = self.cosign(note, self.reader())
        target = checkpoint_path(self.path)
        if self.sync:
            # The records are durable already; a checkpoint the crash took back leaves
            # the one before it, and the next writer takes the records after it in
            # (:meth:`_fast`): one fsync here, none for the folder.
            write_atomic(target, note, folder=False)
        else:
            tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            tmp.write_text(note, encoding="utf-8")
            os.replace(tmp, target)
        self.tiles.write({"checkpoint": note.encode("utf-8")})
        self._dirty = False

    def write_checkpoint(self) -> str:
        """Bring the tree up to date, write a fresh signed checkpoint, return its note
        (for a log last written by a version without checkpoints, or after a repair)."""
        with self._mutex:
            fd = self._locked()
            try:
                self._write_checkpoint()
                return checkpoint_path(self.path).read_text(encoding="utf-8")
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the file (appending again is an error)."""
        fd, self._fd = getattr(self, "_fd", -1), -1
        if fd >= 0:
            os.close(fd)

    def __enter__(self) -> ProofLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at interpreter exit ``os`` may be gone
            self.close()

    def __repr__(self) -> str:
        signed = ", signed" if self.key is not None else ""
        return f"<ProofLog {str(self.path)!r}{signed}, next seq {self._seq}>"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def proved_record(
    proved: Any, certificate: dict[str, Any] | None = None, **context: Any
) -> dict[str, Any]:
    """The claim record of a proved claim (:func:`claim_record`; ``proved`` as the claim
    kind makes it, e.g. :class:`battlejudge.solver.battleline.ProvedClaim`), without its
    place in the chain: its question, verdict and certificate (``certificate``: the
    certificate file's JSON when the caller has it already); ``context`` gives ``game``,
    ``turn``, ``player``, ``flag`` (1-based) and ``time``."""
    question, verdict, certificate = claim_kind().parts(proved, certificate)
    return claim_record(question=question, verdict=verdict, certificate=certificate, **context)


def append_proved(log: ProofLog, proved: Any, **context: Any) -> dict[str, Any]:
    """Append a proved claim: its question, verdict and certificate; ``context`` gives
    ``game``, ``turn``, ``player``, ``flag`` (1-based) and ``time``."""
    question, verdict, certificate = claim_kind().parts(proved)
    return log.append(question=question, verdict=verdict, certificate=certificate, **context)
