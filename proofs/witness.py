"""The witness of a proof log: a second party that cosigns a log's checkpoints, each only
if it is consistent with every checkpoint of that log it cosigned before, so that a log
cannot show one history to some readers and another to others (a split view) without
the witnesses seeing both. Three C2SP specifications, followed where they speak:

- **cosignature/v1** (c2sp.org/tlog-cosignature, Ed25519): a cosignature is a signed-note
  signature line ``— NAME base64(key ID || timestamp || signature)``. The key ID is
  ``SHA-256(NAME || 0x0A || 0x04 || 32-byte public key)[:4]`` (0x04 is the signature type
  of timestamped Ed25519 cosignatures in c2sp.org/signed-note), the timestamp 8 bytes
  big-endian (POSIX seconds, at most 2**63 - 1) and the signature 64 bytes of Ed25519
  over ``cosignature/v1\\n``, ``time T\\n`` and the checkpoint's note text;
  :func:`cosign`, :func:`verify_cosignatures`.
- **verifier keys** (the vkeys of c2sp.org/signed-note): ``NAME+KEYID+base64(type ||
  public key)``, KEYID 8 hex digits; a witness's vkey has type 0x04
  (:func:`witness_vkey`, :func:`parse_witness_key`).
- **add-checkpoint** (c2sp.org/tlog-witness): the request body is ``old N``, up to 63
  base64 consistency-proof hashes, one per line, an empty line, then the signed
  checkpoint; :class:`Witness` answers it, :func:`request_cosignature` asks a witness
  over HTTP. Refusals carry the spec's HTTP status (:class:`WitnessRefusal`): 400
  malformed or an old size above the checkpoint's, 403 no valid signature of the log,
  404 a log it does not witness, 409 an old size other than the latest it cosigned (the
  body is that size) or the same size with another root, 422 a consistency proof that
  does not verify.

A witness keeps, per log, the size, root and note of the latest checkpoint it cosigned
(``STATE/ORIGIN.json``, ORIGIN percent-encoded), replaced atomically under an exclusive
``flock`` of ``STATE/ORIGIN.lock`` that is held from reading the old state to writing the
new, so two requests, two processes or a restart can never make it cosign two
inconsistent checkpoints. The new state is on disk before a cosignature leaves.

This module imports only the standard library, ``cryptography`` and the checkpoint,
Merkle and key modules: a witness runs without the solver. See docs/witness.md.
"""

from __future__ import annotations

import base64
import binascii
import fcntl
import hashlib
import http.client
import json
import logging
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from battlejudge.proofs.atomic import write_atomic
from battlejudge.proofs.checkpoint import (
    DASH,
    ED25519,
    MAX_NOTE,
    Checkpoint,
    CheckpointError,
    note_key_id,
    origin_for,
)
from battlejudge.proofs.merkle import EMPTY_ROOT, HASH_SIZE, verify_consistency
from battlejudge.solver.errors import BattlejudgeError, InputError

__all__ = [
    "COSIGNATURE",
    "MAX_BODY",
    "MAX_PROOF_LINES",
    "AddCheckpoint",
    "Note",
    "TreeHead",
    "Witness",
    "WitnessError",
    "WitnessKey",
    "WitnessRefusal",
    "WitnessStateError",
    "WitnessedState",
    "add_checkpoint_body",
    "add_signature_lines",
    "battlejudge_logs",
    "cosign",
    "cosignature_message",
    "cosigner_key_id",
    "format_vkey",
    "parse_add_checkpoint",
    "parse_vkey",
    "parse_witness_key",
    "read_note",
    "read_tree_head",
    "request_cosignature",
    "verify_cosignatures",
    "verify_note_signature",
    "witness_vkey",
]

log = logging.getLogger(__name__)

COSIGNATURE: Final = b"\x04"
"""The signed-note signature type of timestamped Ed25519 cosignatures (c2sp.org/signed-note,
c2sp.org/tlog-cosignature)."""
MAX_PROOF_LINES: Final = 63
"""At most this many consistency-proof lines in an add-checkpoint request
(c2sp.org/tlog-witness)."""
MAX_BODY: Final = MAX_NOTE + 64 * (MAX_PROOF_LINES + 1)
"""The largest add-checkpoint request body read: a checkpoint of :data:`MAX_NOTE` and 63 proof
lines of a SHA-256 hash each, with room to spare."""
MAX_TIMESTAMP: Final = 2**63 - 1
"""A cosignature's timestamp is at most this (c2sp.org/tlog-cosignature)."""
MAX_RESPONSE: Final = 64 * 1024
"""The largest answer read from a witness."""
MAX_VKEY_FILE: Final = 4096
"""A file holding a vkey is at most this long."""
_COSIGNED_SIZE: Final = 8 + 64
_DECIMAL = re.compile(r"0|[1-9][0-9]{0,19}")
_HEX8 = re.compile(r"[0-9a-fA-F]{8}")


# -- errors ------------------------------------------------------------------------------------
class WitnessRefusal(BattlejudgeError):
    """The witness refused to cosign: ``status`` is the HTTP status c2sp.org/tlog-witness
    gives the case, and for 409 ``latest`` is the size of the latest checkpoint the witness
    cosigned for that log (the body of the HTTP answer). The message is one line that starts
    with what happened (``rollback:``, ``fork:``, ``conflict:``...)."""

    def __init__(self, status: int, message: str, latest: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.latest = latest


class MalformedRequest(WitnessRefusal, InputError):
    """An add-checkpoint body that is not one (400): bad input rather than a refusal."""

    def __init__(self, message: str) -> None:
        super().__init__(400, message)


class WitnessStateError(BattlejudgeError):
    """The witness's own state cannot be read or written: it cosigns nothing until an
    operator looks (HTTP 500)."""


class WitnessError(InputError):
    """Asking a witness failed: unreachable, refused, or an answer that is not cosignatures.
    The message names the witness by its URL without credentials, query or fragment."""


# -- signed notes (c2sp.org/signed-note) ------------------------------------------------------
@dataclass(frozen=True)
class Note:
    """A signed note read without checking a signature: its ``text`` (with the final newline)
    and its signature ``lines`` (without newlines), each also as (key name, key ID,
    signature bytes) in ``signatures``."""

    text: str
    lines: tuple[str, ...]
    signatures: tuple[tuple[str, bytes, bytes], ...]


def _check_name(name: str, what: str) -> str:
    """Key names are non-empty, with no Unicode space and no ``+`` (c2sp.org/signed-note)."""
    if not name or "+" in name or any(c.isspace() for c in name):
        raise InputError(f"{what}: key name {name[:60]!r} is empty or has a space or a '+'")
    if any(c < " " for c in name):
        raise InputError(f"{what}: key name {name[:60]!r} has control characters")
    return name


def _signature_line(line: str, where: str) -> tuple[str, bytes, bytes]:
    """(key name, key ID, signature) of ``— NAME BASE64`` (no newline)."""
    parts = line.split(" ")
    if len(parts) != 3 or parts[0] != DASH or not parts[1]:
        raise CheckpointError(f"{where}: {line[:60]!r} is not a signature line")
    try:
        _check_name(parts[1], where)
    except InputError as e:
        raise CheckpointError(str(e)) from None
    try:
        raw = base64.b64decode(parts[2], validate=True)
    except binascii.Error:
        raise CheckpointError(f"{where}: signature of {parts[1]!r} is not base64") from None
    if len(raw) < 5:
        raise CheckpointError(f"{where}: signature of {parts[1]!r} is too short")
    return parts[1], raw[:4], raw[4:]


def read_note(note: str | bytes, where: str = "note", signed: bool = True) -> Note:
    """Read a signed note (c2sp.org/signed-note, Format) without checking signatures: UTF-8,
    no control character but newline, text ending in a newline, then (after the last empty
    line) signature lines. With ``signed=False`` a note with no empty line is read as text
    without signatures. At most :data:`~battlejudge.proofs.checkpoint.MAX_NOTE` long.
    Raises :class:`~battlejudge.proofs.checkpoint.CheckpointError` naming ``where``."""
    if len(note) > MAX_NOTE:
        raise CheckpointError(f"{where}: {len(note)} bytes, more than a note has")
    if isinstance(note, bytes):
        try:
            note = note.decode("utf-8")
        except UnicodeDecodeError:
            raise CheckpointError(f"{where}: not UTF-8 text") from None
    if not note.endswith("\n"):
        raise CheckpointError(f"{where}: a note ends with a newline")
    if any(c < " " and c != "\n" for c in note):
        raise CheckpointError(f"{where}: control characters in a note")
    text, sep, sigs = note.rpartition("\n\n")
    if not sep:
        if signed:
            raise CheckpointError(f"{where}: not signed (no signature lines)")
        return Note(note, (), ())
    lines = tuple(sigs[:-1].split("\n")) if sigs else ()
    if not lines:
        raise CheckpointError(f"{where}: an empty line but no signature lines after it")
    signatures = tuple(_signature_line(line, where) for line in lines)
    return Note(text + "\n", lines, signatures)


def verify_note_signature(
    note: str | bytes, name: str, key: Ed25519PublicKey, where: str = "note"
) -> str:
    """The note's text, once the plain Ed25519 signature (type 0x01) of key ``name`` is on
    it and verifies (c2sp.org/signed-note, Signatures and Ed25519 signatures): lines whose
    key name or key ID differ are ignored; a matching one that does not verify rejects the
    note. Raises :class:`~battlejudge.proofs.checkpoint.CheckpointError` otherwise."""
    read = read_note(note, where)
    kid = note_key_id(name, key)
    found = False
    for signer, sig_id, sig in read.signatures:
        if signer != name or sig_id != kid:
            continue
        try:
            key.verify(sig, read.text.encode())
        except InvalidSignature:
            raise CheckpointError(
                f"{where}: the signature of {name} does not match the note"
            ) from None
        found = True
    if not found:
        raise CheckpointError(f"{where}: no signature of {name} (key id {kid.hex()})")
    return read.text


def add_signature_lines(note: str, lines: Sequence[str]) -> str:
    """``note`` with the signature ``lines`` (a trailing newline allowed) appended after its
    own, each line once: the order of the note's lines, then the new ones in the order
    given. The result is still a signed note (a checkpoint stays one for
    :func:`~battlejudge.proofs.checkpoint.parse_checkpoint`). A note without signatures
    gets the blank line and the lines. Raises
    :class:`~battlejudge.proofs.checkpoint.CheckpointError` for a line that is not a
    signature line, or a result over :data:`~battlejudge.proofs.checkpoint.MAX_NOTE`."""
    read = read_note(note, "the note", signed=False)
    have = list(read.lines)
    for line in lines:
        line = line.removesuffix("\n")
        if "\n" in line:
            raise CheckpointError(f"{line[:60]!r} is more than one signature line")
        _signature_line(line, "signature line")
        if line not in have:
            have.append(line)
    if not have:
        return read.text
    out = read.text + "\n" + "".join(f"{line}\n" for line in have)
    if len(out.encode()) > MAX_NOTE:
        raise CheckpointError(f"{len(have)} signature lines make the note longer than a note is")
    return out


@dataclass(frozen=True)
class TreeHead:
    """The first three lines of a checkpoint's note text (c2sp.org/tlog-checkpoint, Note
    text): the log's ``origin``, the tree ``size`` and the ``root`` hash (32 bytes)."""

    origin: str
    size: int
    root: bytes


def read_tree_head(text: str, where: str = "checkpoint") -> TreeHead:
    """Origin, size and root of a checkpoint's note text (c2sp.org/tlog-checkpoint): at
    least three non-empty lines, the size decimal without leading zeros, the root a base64
    SHA-256 hash; extension lines (such as this project's ``time ...``) are allowed and
    not read. Raises :class:`~battlejudge.proofs.checkpoint.CheckpointError`."""
    lines = text.removesuffix("\n").split("\n")
    if len(lines) < 3 or any(not line for line in lines):
        raise CheckpointError(
            f"{where}: a checkpoint has an origin, a tree size and a root hash, each on a "
            "line of its own"
        )
    origin, size_text, root_text = lines[:3]
    if not _DECIMAL.fullmatch(size_text):
        raise CheckpointError(f"{where}: tree size {size_text[:30]!r} is not a decimal number")
    try:
        root = base64.b64decode(root_text, validate=True)
    except binascii.Error:
        root = b""
    if len(root) != HASH_SIZE:
        raise CheckpointError(f"{where}: root {root_text[:60]!r} is not a base64 SHA-256 hash")
    return TreeHead(origin, int(size_text), root)


# -- cosignatures (c2sp.org/tlog-cosignature) -------------------------------------------------
def _raw(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def cosigner_key_id(name: str, key: Ed25519PublicKey) -> bytes:
    """``SHA-256(name || 0x0A || 0x04 || 32-byte public key)[:4]`` (c2sp.org/tlog-cosignature,
    Format)."""
    return hashlib.sha256(name.encode() + b"\n" + COSIGNATURE + _raw(key)).digest()[:4]


def cosignature_message(text: str, timestamp: int) -> bytes:
    """What a cosignature/v1 signs (c2sp.org/tlog-cosignature, Ed25519 signed message):
    ``cosignature/v1``, ``time TIMESTAMP`` and the checkpoint's note text (with its final
    newline, without signature lines)."""
    return f"cosignature/v1\ntime {timestamp}\n{text}".encode()


def _note_text(note: str | Checkpoint) -> str:
    if isinstance(note, Checkpoint):
        return note.text()
    text = read_note(note, "checkpoint", signed=False).text
    read_tree_head(text)
    return text


def cosign(note: str | Checkpoint, key: Ed25519PrivateKey, name: str, timestamp: int) -> str:
    """The cosignature/v1 line (no newline) of witness ``name`` with ``key`` on a checkpoint
    (a :class:`~battlejudge.proofs.checkpoint.Checkpoint`, or a note: its text, signed or
    not) at ``timestamp`` (POSIX seconds): ``— NAME base64(key ID || timestamp, 8 bytes
    big-endian || Ed25519 signature)`` (c2sp.org/tlog-cosignature). This signs whatever it
    is given: a witness cosigns only through :meth:`Witness.add_checkpoint`."""
    _check_name(name, "witness")
    if not 0 <= timestamp <= MAX_TIMESTAMP:
        raise InputError(f"cosignature timestamp {timestamp} is not between 0 and 2**63 - 1")
    text = _note_text(note)
    stamp = timestamp.to_bytes(8, "big")
    sig = key.sign(cosignature_message(text, timestamp))
    blob = cosigner_key_id(name, key.public_key()) + stamp + sig
    return f"{DASH} {name} {base64.b64encode(blob).decode('ascii')}"


# -- verifier keys (c2sp.org/signed-note) ------------------------------------------------------
def format_vkey(name: str, sig_type: bytes, key: Ed25519PublicKey) -> str:
    """``NAME+KEYID+base64(type || public key)``: the verifier key of an Ed25519 key under
    signature type 0x01 (a note signer, such as a log) or 0x04 (a witness), KEYID the
    8 lowercase hex digits of its key ID."""
    _check_name(name, "vkey")
    kid = hashlib.sha256(name.encode() + b"\n" + sig_type + _raw(key)).digest()[:4]
    blob = base64.b64encode(sig_type + _raw(key)).decode("ascii")
    return f"{name}+{kid.hex()}+{blob}"


def parse_vkey(text: str, where: str = "vkey") -> tuple[str, bytes, Ed25519PublicKey]:
    """(key name, signature type, public key) of a verifier key ``NAME+KEYID+base64(type ||
    key)`` of an Ed25519 type (0x01 or 0x04), once its KEYID is found to be the key's hash.
    Raises :class:`~battlejudge.solver.errors.InputError` naming ``where``."""
    text = text.strip()
    name, plus, rest = text.partition("+")
    kid_text, plus2, blob = rest.partition("+")
    if not plus or not plus2:
        raise InputError(f"{where}: {text[:60]!r} is not a verifier key NAME+KEYID+KEY")
    _check_name(name, where)
    if not _HEX8.fullmatch(kid_text):
        raise InputError(f"{where}: key id {kid_text[:20]!r} is not 8 hex digits")
    try:
        raw = base64.b64decode(blob, validate=True)
    except binascii.Error:
        raise InputError(f"{where}: the key of {name!r} is not base64") from None
    if len(raw) != 33 or raw[:1] not in (ED25519, COSIGNATURE):
        raise InputError(f"{where}: the key of {name!r} is not an Ed25519 key of type 0x01 or 0x04")
    try:
        key = Ed25519PublicKey.from_public_bytes(raw[1:])
    except ValueError:
        raise InputError(f"{where}: the key of {name!r} is not an Ed25519 public key") from None
    kid = hashlib.sha256(name.encode() + b"\n" + raw).digest()[:4]
    if kid.hex() != kid_text.lower():
        raise InputError(
            f"{where}: key id {kid_text} does not match the key of {name!r} ({kid.hex()})"
        )
    return name, raw[:1], key


@dataclass(frozen=True)
class WitnessKey:
    """A witness a verifier trusts: its key ``name`` and Ed25519 public ``key``, used for
    cosignature/v1 (key type 0x04)."""

    name: str
    key: Ed25519PublicKey

    @property
    def key_id(self) -> bytes:
        """Its cosignature key ID (:func:`cosigner_key_id`)."""
        return cosigner_key_id(self.name, self.key)

    @property
    def raw(self) -> bytes:
        """The 32 bytes of its public key."""
        return _raw(self.key)

    def vkey(self) -> str:
        """Its verifier key (:func:`witness_vkey`)."""
        return witness_vkey(self.name, self.key)

    def __repr__(self) -> str:
        return f"parse_witness_key({self.vkey()!r})"


def witness_vkey(name: str, key: Ed25519PublicKey | Ed25519PrivateKey) -> str:
    """The verifier key of witness ``name``: ``NAME+KEYID+base64(0x04 || public key)`` (what a
    log and an auditor are given to check its cosignatures)."""
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    return format_vkey(name, COSIGNATURE, public)


def parse_witness_key(text: str, where: str = "--witness-key") -> WitnessKey:
    """A witness's key from its verifier key ``NAME+KEYID+base64(0x04 || key)``, or from the
    path of a file holding one (and nothing else but white space). Only type 0x04 is a
    witness key (a 0x01 vkey is a note signer's, such as a log's). The KEYID must be the
    key's hash. Raises :class:`~battlejudge.solver.errors.InputError` naming ``where``."""
    try:
        name, sig_type, key = parse_vkey(text, where)
    except InputError as first:
        path = Path(text)
        if not path.is_file():
            raise
        try:
            with path.open("rb") as f:
                data = f.read(MAX_VKEY_FILE + 1)
        except OSError as e:
            raise InputError(f"{where}: cannot read {text} ({e.strerror or e})") from None
        if len(data) > MAX_VKEY_FILE:
            raise InputError(f"{where}: {text} is too long for a verifier key") from first
        try:
            name, sig_type, key = parse_vkey(data.decode("utf-8"), f"{where} ({text})")
        except UnicodeDecodeError:
            raise InputError(f"{where}: {text} is not a verifier key") from None
    if sig_type != COSIGNATURE:
        raise InputError(
            f"{where}: {name!r} is a note signer's key (type 0x01), not a witness key (0x04)"
        )
    return WitnessKey(name, key)


def verify_cosignatures(
    note: str | bytes, keys: Sequence[WitnessKey], needed: int, where: str = "checkpoint"
) -> int:
    """How many distinct witnesses of ``keys`` have a valid cosignature/v1 on ``note``, when
    at least ``needed`` do. Signature lines of other keys (another name or key ID) are
    ignored (c2sp.org/signed-note); a line of a known witness that does not verify rejects
    the note (the spec's SHOULD), and so do fewer than ``needed`` valid ones: a
    :class:`~battlejudge.proofs.checkpoint.CheckpointError` of one line saying how many
    were needed, how many are valid, and which witnesses are missing or bad. Timestamps are
    not compared with the clock."""
    if needed < 0:
        raise InputError(f"{where}: {needed} witnesses needed is below zero")
    read = read_note(note, where, signed=False)
    distinct: dict[tuple[str, bytes], WitnessKey] = {}
    for k in keys:
        distinct.setdefault((k.name, k.raw), k)
    if needed > len(distinct):
        raise InputError(
            f"{where}: {needed} witness cosignatures needed but only {len(distinct)} "
            "witness keys given"
        )
    valid: list[str] = []
    missing: list[str] = []
    bad: list[str] = []
    for k in distinct.values():
        kid = k.key_id
        seen = ok = failed = False
        for name, sig_id, sig in read.signatures:
            if name != k.name or sig_id != kid:
                continue
            seen = True
            if len(sig) != _COSIGNED_SIZE:
                failed = True
                continue
            stamp = int.from_bytes(sig[:8], "big")
            if stamp > MAX_TIMESTAMP:
                failed = True
                continue
            try:
                k.key.verify(sig[8:], cosignature_message(read.text, stamp))
                ok = True
            except InvalidSignature:
                failed = True
        label = f"{k.name} ({kid.hex()})"
        if failed:
            bad.append(label)
        elif ok:
            valid.append(label)
        elif not seen:
            missing.append(label)
    if bad:
        raise CheckpointError(
            f"{where}: {len(valid)} valid witness cosignatures of {needed} needed; bad "
            f"cosignature of {', '.join(bad)} (the checkpoint was changed after it was "
            "cosigned, or the line is forged)"
        )
    if len(valid) < needed:
        raise CheckpointError(
            f"{where}: {len(valid)} valid witness cosignatures of {needed} needed; "
            f"missing: {', '.join(missing)}"
        )
    return len(valid)


# -- the add-checkpoint request (c2sp.org/tlog-witness) ----------------------------------------
@dataclass(frozen=True)
class AddCheckpoint:
    """An add-checkpoint request: the ``old`` size the client believes the witness last
    cosigned, the consistency ``proof`` from it to the checkpoint, and the signed ``note``."""

    old: int
    proof: tuple[bytes, ...]
    note: str


def add_checkpoint_body(old: int, proof: Sequence[bytes], note: str) -> bytes:
    """The body of an add-checkpoint request (c2sp.org/tlog-witness): ``old N``, one base64
    hash per line, an empty line, the signed checkpoint."""
    if old < 0:
        raise InputError(f"old size {old} is below zero")
    if len(proof) > MAX_PROOF_LINES:
        raise InputError(f"{len(proof)} consistency proof hashes, more than {MAX_PROOF_LINES}")
    lines = [f"old {old}\n", *(base64.b64encode(h).decode("ascii") + "\n" for h in proof), "\n"]
    return ("".join(lines) + note).encode()


def parse_add_checkpoint(body: bytes) -> AddCheckpoint:
    """Read an add-checkpoint request body (c2sp.org/tlog-witness): ``old N`` (decimal, no
    leading zero), at most 63 lines of a base64 SHA-256 hash, an empty line, the checkpoint
    note (not yet checked). At most :data:`MAX_BODY` bytes. Raises
    :class:`MalformedRequest` (400)."""
    if len(body) > MAX_BODY:
        raise MalformedRequest(f"the request is {len(body)} bytes, more than {MAX_BODY}")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedRequest("the request is not UTF-8 text") from None
    first, nl, rest = text.partition("\n")
    size_text = first.removeprefix("old ")
    if not nl or not first.startswith("old ") or not _DECIMAL.fullmatch(size_text):
        raise MalformedRequest(f"the request starts with {first[:40]!r}, not 'old SIZE'")
    proof: list[bytes] = []
    while True:
        line, nl, rest = rest.partition("\n")
        if not nl:
            raise MalformedRequest("the request has no empty line before the checkpoint")
        if not line:
            break
        if len(proof) == MAX_PROOF_LINES:
            raise MalformedRequest(f"more than {MAX_PROOF_LINES} consistency proof lines")
        try:
            h = base64.b64decode(line, validate=True)
        except binascii.Error:
            h = b""
        if len(h) != HASH_SIZE:
            raise MalformedRequest(f"proof line {line[:60]!r} is not a base64 SHA-256 hash")
        proof.append(h)
    return AddCheckpoint(int(size_text), tuple(proof), rest)


# -- the witness -------------------------------------------------------------------------------
@dataclass(frozen=True)
class WitnessedState:
    """The latest checkpoint a witness cosigned for a log: its ``size``, ``root``, the signed
    ``note`` as received and the ``timestamp`` of the cosignature."""

    origin: str
    size: int
    root: bytes
    note: str
    timestamp: int

    def to_json(self) -> dict[str, object]:
        """The state file's JSON: origin, size, root (base64), note, timestamp."""
        return {
            "origin": self.origin,
            "size": self.size,
            "root": base64.b64encode(self.root).decode("ascii"),
            "note": self.note,
            "timestamp": self.timestamp,
        }


def battlejudge_logs(keys: Sequence[Ed25519PublicKey]) -> dict[str, Ed25519PublicKey]:
    """Origin -> public key of battlejudge logs: each key's checkpoints have the origin
    ``battlejudge/KEYID`` (:func:`~battlejudge.proofs.checkpoint.origin_for`)."""
    return {origin_for(k): k for k in keys}


def _unix_now() -> int:
    return int(time.time())


class Witness:
    """A witness of the logs in ``logs`` (origin -> the log's Ed25519 key, whose note
    signatures name the origin), cosigning as ``name`` with ``key``, keeping its state in
    the folder ``state`` (made if missing). ``clock`` gives the cosignatures' timestamps
    (POSIX seconds).

    The same folder may be shared by several :class:`Witness` objects and processes:
    :meth:`add_checkpoint` holds the log's lock from reading the latest cosigned checkpoint
    to writing the new one."""

    def __init__(
        self,
        state: str | os.PathLike[str],
        key: Ed25519PrivateKey,
        name: str,
        logs: Mapping[str, Ed25519PublicKey],
        clock: Callable[[], int] = _unix_now,
    ) -> None:
        self.name = _check_name(name, "witness name")
        self.key = key
        self.logs = dict(logs)
        self.clock = clock
        self.state = Path(state)
        for origin in self.logs:
            if not origin or len(origin.encode()) > 200 or any(c < " " for c in origin):
                raise InputError(f"log origin {origin[:60]!r} is empty, too long or has controls")
        try:
            self.state.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise WitnessStateError(
                f"{self.state}: cannot make the witness state folder ({e.strerror or e})"
            ) from None

    @property
    def public_key(self) -> Ed25519PublicKey:
        """The witness's public key."""
        return self.key.public_key()

    def vkey(self) -> str:
        """The witness's verifier key (:func:`witness_vkey`)."""
        return witness_vkey(self.name, self.key)

    def witness_key(self) -> WitnessKey:
        """The witness as a verifier trusts it."""
        return WitnessKey(self.name, self.public_key)

    def _path(self, origin: str, suffix: str) -> Path:
        return self.state / (urllib.parse.quote(origin, safe="") + suffix)

    @contextmanager
    def _locked(self, origin: str) -> Iterator[None]:
        path = self._path(origin, ".lock")
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as e:
            raise WitnessStateError(f"{path}: cannot open the lock ({e.strerror or e})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def latest(self, origin: str) -> WitnessedState | None:
        """The latest checkpoint cosigned for ``origin`` (None if none), as on disk now."""
        path = self._path(origin, ".json")
        try:
            with path.open("rb") as f:
                data = f.read(8 * MAX_NOTE)  # a note's JSON escapes make it longer
        except FileNotFoundError:
            return None
        except OSError as e:
            raise WitnessStateError(f"{path}: cannot read ({e.strerror or e})") from None
        try:
            doc = json.loads(data)
            size, root = doc["size"], base64.b64decode(doc["root"], validate=True)
            note, stamp = doc["note"], doc["timestamp"]
            ok = (
                doc["origin"] == origin
                and isinstance(size, int)
                and size >= 0
                and len(root) == HASH_SIZE
                and isinstance(note, str)
                and isinstance(stamp, int)
            )
        except (ValueError, KeyError, TypeError, binascii.Error):
            ok = False
        if not ok:
            raise WitnessStateError(f"{path}: not a witness state file; cosigning nothing")
        return WitnessedState(origin, size, root, note, stamp)

    def _save(self, state: WitnessedState) -> None:
        path = self._path(state.origin, ".json")
        try:
            write_atomic(path, json.dumps(state.to_json(), sort_keys=True) + "\n")
        except OSError as e:
            raise WitnessStateError(f"{path}: cannot write ({e.strerror or e})") from None

    def add_checkpoint(self, body: bytes) -> str:
        """Answer an add-checkpoint request (c2sp.org/tlog-witness): the cosignature line,
        with its newline (the 200 answer's body), once the checkpoint is signed by the log
        it names, ``old`` is the size this witness last cosigned for it (0 at first), and
        the proof shows the checkpoint extends that one. The new latest checkpoint is
        written before the cosignature is made. Raises :class:`WitnessRefusal` with the
        spec's status otherwise (400 :class:`MalformedRequest`, 403, 404, 409, 422) and
        :class:`WitnessStateError` when the state cannot be read or written."""
        request = parse_add_checkpoint(body)
        try:
            note = read_note(request.note, "checkpoint", signed=False)
            head = read_tree_head(note.text)
        except CheckpointError as e:
            raise MalformedRequest(str(e)) from None
        key = self.logs.get(head.origin)
        if key is None:
            raise WitnessRefusal(404, f"unknown log: this witness does not witness {head.origin}")
        self._check_log_signature(note, head.origin, key)
        with self._locked(head.origin):
            latest = self.latest(head.origin)
            size, root = (latest.size, latest.root) if latest else (0, EMPTY_ROOT)
            self._check(request, head, size, root)
            stamp = self.clock()
            if latest is None or head.size != size:
                self._save(WitnessedState(head.origin, head.size, head.root, request.note, stamp))
        return cosign(note.text, self.key, self.name, stamp) + "\n"

    def _check_log_signature(self, note: Note, origin: str, key: Ed25519PublicKey) -> None:
        """403 unless a signature of the log's key (name = origin, type 0x01) verifies;
        other keys' lines are ignored."""
        kid = note_key_id(origin, key)
        for name, sig_id, sig in note.signatures:
            if name != origin or sig_id != kid:
                continue
            try:
                key.verify(sig, note.text.encode())
                return
            except InvalidSignature:
                continue
        what = (
            "its signature does not verify"
            if any(n == origin and i == kid for n, i, _ in note.signatures)
            else "it is not signed by the log's key"
        )
        raise WitnessRefusal(403, f"bad signature: {what} ({origin})")

    def _check(self, request: AddCheckpoint, head: TreeHead, size: int, root: bytes) -> None:
        """The checks of c2sp.org/tlog-witness against the latest cosigned ``size`` and
        ``root``, in the spec's order; raises the refusal."""
        old = request.old
        if old > head.size:
            if head.size < size:
                msg = (
                    f"rollback: the checkpoint of {head.origin} has {head.size} records, this "
                    f"witness already cosigned {size}"
                )
            else:
                msg = f"old size {old} is larger than the checkpoint's size {head.size}"
            raise WitnessRefusal(400, msg)
        if old != size:
            if head.size < size:
                msg = (
                    f"rollback: the checkpoint of {head.origin} has {head.size} records, this "
                    f"witness already cosigned {size}"
                )
            else:
                msg = (
                    f"conflict: old size {old} is not {size}, the size this witness last "
                    f"cosigned for {head.origin}"
                )
            raise WitnessRefusal(409, msg, latest=size)
        if old == head.size:
            if head.root != root:
                log.warning("fork of %s at size %d: %r", head.origin, size, request.note)
                raise WitnessRefusal(
                    409,
                    f"fork: the checkpoint of {head.origin} at {size} records has another "
                    "root than the one this witness cosigned",
                    latest=size,
                )
            if request.proof:
                raise WitnessRefusal(422, "inconsistent: a proof between equal sizes is empty")
            return
        if not verify_consistency(old, head.size, root, head.root, request.proof):
            log.warning(
                "inconsistent checkpoint of %s from %d to %d: %r",
                head.origin,
                old,
                head.size,
                request.note,
            )
            if old == 0:
                msg = "inconsistent: the proof from size 0 must be empty"
            else:
                msg = (
                    f"fork: the consistency proof from {old} to {head.size} records does not "
                    f"lead from the root this witness cosigned for {head.origin} to this "
                    "checkpoint's (another history, or a wrong proof)"
                )
            raise WitnessRefusal(422, msg)


# -- asking a witness over HTTP ----------------------------------------------------------------
def _shown(url: str) -> str:
    """The URL without credentials, query or fragment: what messages may print."""
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(a malformed URL)"
    if ":" in host:
        host = f"[{host}]"
    return urllib.parse.urlunsplit((parts.scheme, host + port, parts.path, "", ""))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer, not a place to resend a checkpoint to."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def _first_line(data: bytes) -> str:
    line = data.decode("utf-8", "replace").strip().split("\n")[0]
    return "".join(c if c >= " " else "?" for c in line)[:200]


def request_cosignature(
    url: str,
    old_size: int,
    proof: Sequence[bytes],
    note: str,
    *,
    timeout: float = 5.0,
    witness: WitnessKey | None = None,
) -> tuple[list[str], int | None]:
    """Ask the witness at ``url`` (its submission prefix) to cosign the signed checkpoint
    ``note``: POST ``URL/add-checkpoint`` with ``old_size`` and the consistency ``proof``
    from it (c2sp.org/tlog-witness). Returns ``(lines, None)``, the cosignature lines
    (without newlines; with ``witness`` only those of that witness that verify on the
    note, at least one), or ``([], latest)`` when the witness answered 409 with the size it
    last cosigned, other than ``old_size``: ask again with a proof from that size. Raises
    :class:`WitnessError` naming the witness (never with credentials) when it cannot be
    reached, refuses (a 409 at ``old_size`` itself is a fork), or answers something else.

    ``user:password@`` in the URL is sent as HTTP basic authentication; a query or fragment
    is dropped. Redirects are not followed (a witness answers where it was asked), the
    answer is read up to :data:`MAX_RESPONSE` bytes, and each try waits at most
    ``timeout`` seconds for the connection and for each read."""
    shown = _shown(url)
    try:
        parts = urllib.parse.urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:
        raise WitnessError(f"witness {shown}: not a URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WitnessError(f"witness {shown}: not an http:// or https:// URL")
    headers = {"Content-Type": "text/plain; charset=utf-8"}
    if user is not None or password is not None:
        # credentials in the URL go as HTTP basic auth, and never into a message
        pair = f"{urllib.parse.unquote(user or '')}:{urllib.parse.unquote(password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
    body = add_checkpoint_body(old_size, proof, note)
    target = shown.rstrip("/") + "/add-checkpoint"
    request = urllib.request.Request(target, data=body, method="POST", headers=headers)
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=timeout) as answer:
            status, data = answer.status, answer.read(MAX_RESPONSE + 1)
    except urllib.error.HTTPError as e:
        status = e.code
        try:
            data = e.read(MAX_RESPONSE + 1)
        except (OSError, http.client.HTTPException):
            data = b""
        finally:
            e.close()
        if status == 409:
            text = data.decode("ascii", "replace")
            size = text.removesuffix("\n")
            if not text.endswith("\n") or not _DECIMAL.fullmatch(size):
                raise WitnessError(f"witness {shown}: 409 without its latest size") from None
            if int(size) == old_size:
                raise WitnessError(
                    f"witness {shown}: refused: it cosigned another checkpoint of the same "
                    f"size {old_size} (a fork)"
                ) from None
            return [], int(size)
        raise WitnessError(f"witness {shown}: refused ({status}): {_first_line(data)}") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as e:
        reason = getattr(e, "reason", None) or e
        raise WitnessError(f"witness {shown}: unreachable ({reason})") from None
    if status != 200:
        raise WitnessError(f"witness {shown}: answered {status}, not 200")
    if len(data) > MAX_RESPONSE:
        raise WitnessError(f"witness {shown}: an answer over {MAX_RESPONSE} bytes")
    try:
        text = data.decode("utf-8")
        if not text.endswith("\n"):
            raise CheckpointError("the answer does not end with a newline")
        lines = text[:-1].split("\n")
        for line in lines:
            _signature_line(line, "answer")
    except (UnicodeDecodeError, CheckpointError) as e:
        raise WitnessError(f"witness {shown}: the answer is not cosignatures ({e})") from None
    if witness is None:
        return lines, None
    mine = [line for line in lines if _verifies(note, line, witness)]
    if not mine:
        raise WitnessError(f"witness {shown}: no valid cosignature of {witness.name} in its answer")
    return mine, None


def _verifies(note: str, line: str, witness: WitnessKey) -> bool:
    try:
        verify_cosignatures(add_signature_lines(note, [line]), [witness], 1)
    except InputError:
        return False
    return True
