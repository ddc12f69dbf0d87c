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
``"v": 2, "kind": "repair"`` and hold, instead of a claim, what the repair did. Claim
records are written as in version 1, so a version-1 log is a version-2 log and old logs
read and audit as before; a record of a later version is reported, not guessed at.

Writing is durable and crash-safe: one ``write`` per record under an exclusive
``flock`` (two writers never interleave), then ``fsync``. A write cut short by a crash
leaves a torn last line; the next writer starts a new line so the torn bytes stay a
line of their own, never glued to a record, and continues the chain from the last
complete record. Readers report torn lines and never take them for records.
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
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from battlejudge.proofs.battleline.certificate import to_file_model
from battlejudge.solver import battleline as bl
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
)
"""Every kind of problem the audit finds, in the order a record's problems are listed
(kinds of extra checks come after these)."""

VERDICTS: Final = ("valid", "invalid")
FIELDS: Final = frozenset(
    ("seq", "game", "turn", "player", "flag", "question", "verdict", "certificate", "time", "prev")
)
"""The fields of every claim record; ``sig`` is added when the log is signed."""
FORMAT_VERSION: Final = 2
"""The newest log format this code reads and writes (see the module's docstring)."""
REPAIR_FIELDS: Final = frozenset(("v", "kind", "seq", "prev", "time", "repair"))
"""The fields of a repair record (format 2); ``sig`` is added when it is signed."""

_HEX64 = re.compile(r"[0-9a-f]{64}")
_CHUNK = 1 << 16


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a log: the record (0-based line of the file), its kind and
    what is wrong, in one line."""

    record: int
    kind: str
    """One of :data:`PROBLEM_KINDS`, or a kind of an extra audit check's own."""
    detail: str

    def to_json(self) -> dict[str, Any]:
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
        seq: int = self.data["seq"]
        return seq

    @property
    def prev(self) -> str:
        prev: str = self.data["prev"]
        return prev

    @property
    def sig(self) -> str | None:
        sig: str | None = self.data.get("sig")
        return sig

    @property
    def kind(self) -> str:
        """``claim``, or ``repair`` for a record :func:`repair_log` wrote."""
        kind: str = self.data.get("kind", "claim")
        return kind

    @property
    def game(self) -> str | None:
        """None for a record that names no game (and for a repair record)."""
        game: str | None = self.data.get("game")
        return game

    @property
    def turn(self) -> int | None:
        turn: int | None = self.data.get("turn")
        return turn

    @property
    def player(self) -> str | None:
        player: str | None = self.data.get("player")
        return player

    @property
    def flag(self) -> int | None:
        """1-based."""
        flag: int | None = self.data.get("flag")
        return flag

    @property
    def question(self) -> dict[str, Any]:
        question: dict[str, Any] = self.data["question"]
        return question

    @property
    def verdict(self) -> str:
        verdict: str = self.data["verdict"]
        return verdict

    @property
    def certificate(self) -> dict[str, Any]:
        certificate: dict[str, Any] = self.data["certificate"]
        return certificate

    @property
    def time(self) -> str:
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


def _repair_error(obj: dict[str, Any]) -> str | None:
    """Why ``obj`` is not a repair record (format 2), or None."""
    v: Any = obj.get("v")
    if not _is_int(v) or v < 2:
        return f"v must be a format version (2), got {v!r}"
    if v > FORMAT_VERSION:
        return f"log format version {v}: this battlejudge reads versions 1 to {FORMAT_VERSION}"
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


def parse_log(data: bytes, path: str | Path = "") -> tuple[list[LogRecord], list[Problem]]:
    """:func:`read_log` on the bytes of a log (``path`` names it in errors)."""
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
    if not records and malformed:
        raise InputError(f"{path}: not a proof log (no line is a record)")
    return records, problems


def _lines_backward(fd: int, end: int) -> Iterator[bytes]:
    """The lines of ``fd[:end]``, last first, reading 64 KiB at a time from the end."""
    pos, buf = end, b""
    while pos > 0:
        start = max(0, pos - _CHUNK)
        buf = os.pread(fd, pos - start, start) + buf
        pos = start
        parts = buf.split(b"\n")
        buf = parts[0]
        yield from reversed(parts[1:])
    yield buf


def _tail(fd: int, size: int, path: Path) -> tuple[str, int, bool]:
    """Where the chain stands in a file of ``size`` bytes: the last complete record's
    hash, the next seq, and whether the file lacks its final newline (a torn write)."""
    if size == 0:
        return GENESIS, 0, False
    torn = os.pread(fd, 1, size - 1) != b"\n"
    malformed = False
    for raw in _lines_backward(fd, size if torn else size - 1):
        parsed = parse_line(raw)
        if isinstance(parsed, dict):
            return sha256_hex(raw), parsed["seq"] + 1, torn
        if raw and not (parsed.startswith("not JSON") and _looks_torn(raw)):
            malformed = True
    if malformed:
        raise InputError(f"{path}: not a proof log (no line is a record); not appending to it")
    return GENESIS, 0, torn


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


class ProofLog:
    """An append-only proof log; safe for a new file and for an existing log, whose chain
    and seq it continues. ``key`` signs every record. ``sync=False`` skips the fsync (a
    record then survives a crash of the process but not of the machine).

    One instance may be shared by threads; any number of processes may append to the same
    file (each record is written whole under an exclusive ``flock``). A log opened before
    a ``fork`` reopens the file in the child so the lock still separates them.
    """

    def __init__(
        self, path: str | Path, key: Ed25519PrivateKey | None = None, *, sync: bool = True
    ) -> None:
        self.path = Path(path)
        self.key = key
        self.sync = sync
        self._mutex = threading.Lock()
        self._fd = -1
        self._pid = 0
        self._size = -1  # bytes in the file after our last look; -1: look again
        self._last = GENESIS
        self._seq = 0
        self._torn = False
        self._open()
        try:
            fd = self._lock()
            try:
                self._refresh(os.fstat(fd).st_size)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        except BaseException:
            self.close()
            raise

    def _open(self) -> None:
        created = not self.path.exists()
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
        self._fd = os.open(self.path, flags, 0o644)
        self._pid = os.getpid()
        self._size = -1
        if created and self.sync:
            # The new name must reach the disk too, or a crash can lose the whole file.
            dfd = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)

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
        self._last, self._seq, self._torn = _tail(self._fd, size, self.path)
        self._size = size
        if self._torn:
            _logger.warning("%s: the last line is torn; starting a new line after it", self.path)

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
        """Append one record, durably, and return it (with ``seq``, ``prev`` and ``sig``).

        ``question`` is stored in canonical form; ``certificate`` is a certificate file's
        JSON (``to_file_model(cert).model_dump(mode="json")``) and must carry the same
        question and verdict. ``flag`` counts from 1; ``time`` defaults to now (UTC).
        Raises :class:`InputError` (a ``ValueError``) for a bad value, naming it.
        """
        canonical = bl.ClaimQuestion.from_json(question).to_json()
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
        record: dict[str, Any] = {
            "game": game,
            "turn": turn,
            "player": player,
            "flag": flag,
            "question": canonical,
            "verdict": verdict,
            "certificate": certificate,
            "time": time or utc_now(),
        }
        with self._mutex:
            if self._pid != os.getpid():
                os.close(self._fd)
                self._open()
            fd = self._lock()
            try:
                size = os.fstat(fd).st_size
                if size != self._size:  # another writer, or a torn write of ours
                    self._refresh(size)
                record["seq"] = self._seq
                record["prev"] = self._last
                if self.key is not None:
                    sig = self.key.sign(encode_record(record))
                    record["sig"] = base64.b64encode(sig).decode("ascii")
                line = encode_record(record)
                data = (b"\n" if self._torn else b"") + line + b"\n"
                self._size = -1  # until the record is known to be whole
                _write_all(fd, data)
                if self.sync:
                    os.fsync(fd)
                self._size = size + len(data)
                self._last = sha256_hex(line)
                self._seq += 1
                self._torn = False
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        return record

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


def append_proved(log: ProofLog, proved: bl.ProvedClaim, **context: Any) -> dict[str, Any]:
    """Append a proved claim: its question, verdict and certificate; ``context`` gives
    ``game``, ``turn``, ``player``, ``flag`` (1-based) and ``time``."""
    return log.append(
        question=proved.question.to_json(),
        verdict=proved.verdict,
        certificate=to_file_model(proved.certificate).model_dump(mode="json"),
        **context,
    )
