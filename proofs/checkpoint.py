"""Signed checkpoints of a proof log: C2SP signed notes (c2sp.org/signed-note) whose text
is a C2SP transparency-log checkpoint (c2sp.org/tlog-checkpoint), signed with Ed25519.

A checkpoint says: the log named ``origin`` held ``size`` records, the RFC 9162 Merkle
root of those records was ``root``, at ``time``::

    battlejudge/4f1c0e6a2b9d8e77
    1042
    Q2x0sZ0mLm8vZ0l2a3u6QHk0m4yq1mUrc8cQ2oGqJ0Y=
    time 2026-11-23T20:14:03.118Z

    — battlejudge/4f1c0e6a2b9d8e77 AbCdEf...==

Line 1 is the origin (``battlejudge/`` and the signing key's id, or ``battlejudge/unsigned``),
line 2 the tree size in decimal, line 3 the root hash in standard base64, line 4 an
extension line with the time (UTC, ISO-8601). After a blank line come the signature lines:
an em dash, a space, the key name (the origin), a space, and the base64 of the 4-byte key
ID followed by the 64-byte Ed25519 signature of the note text (lines 1-4 with their
newlines). The key ID is ``SHA-256(key name || 0x0A || 0x01 || public key)[:4]``.

A log without a signing key writes the note text alone: it still shows a cut end to an
honest reader, but proves nothing to anyone else. See docs/checkpoints.md.
This module imports no part of the solver: a checkpoint is checked without it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from battlejudge.proofs.keys import key_id
from battlejudge.solver.errors import InputError

__all__ = [
    "Checkpoint",
    "CheckpointError",
    "SignedCheckpoint",
    "note_key_id",
    "origin_for",
    "parse_checkpoint",
    "verify_checkpoint",
]

DASH: Final = "\u2014"
ED25519: Final = b"\x01"
"""The signed-note signature type of Ed25519 (c2sp.org/signed-note)."""
MAX_NOTE: Final = 64 * 1024
"""A checkpoint longer than this is refused unread (the spec asks verifiers for a limit)."""
_DECIMAL = re.compile(r"0|[1-9][0-9]*")


class CheckpointError(InputError):
    """A checkpoint that cannot be read, or whose signature does not verify."""


def origin_for(key: Ed25519PrivateKey | Ed25519PublicKey | None) -> str:
    """The origin (and key name) of the checkpoints a key signs: ``battlejudge/KEYID``."""
    return f"battlejudge/{key_id(key)}" if key is not None else "battlejudge/unsigned"


def note_key_id(name: str, key: Ed25519PublicKey) -> bytes:
    """``SHA-256(key name || 0x0A || 0x01 || public key)[:4]`` (c2sp.org/signed-note)."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(name.encode() + b"\n" + ED25519 + raw).digest()[:4]


@dataclass(frozen=True)
class Checkpoint:
    """A tree head: the log ``origin`` held ``size`` records with Merkle root ``root``
    (32 bytes) at ``time``."""

    origin: str
    size: int
    root: bytes
    time: str

    def text(self) -> str:
        """The note text: origin, size, root (base64), ``time ...``, each with a newline."""
        root = base64.b64encode(self.root).decode("ascii")
        return f"{self.origin}\n{self.size}\n{root}\ntime {self.time}\n"

    def sign(self, key: Ed25519PrivateKey | None) -> str:
        """The checkpoint as a signed note (the note text alone without a key)."""
        text = self.text()
        if key is None:
            return text
        sig = note_key_id(self.origin, key.public_key()) + key.sign(text.encode())
        return f"{text}\n{DASH} {self.origin} {base64.b64encode(sig).decode('ascii')}\n"

    def to_json(self) -> dict[str, object]:
        """The checkpoint as JSON: origin, size, root (hex) and time."""
        return {
            "origin": self.origin,
            "size": self.size,
            "root": self.root.hex(),
            "time": self.time,
        }


@dataclass(frozen=True)
class SignedCheckpoint:
    """A parsed checkpoint note: the checkpoint, its note text, and each signature line
    as (key name, key ID, signature)."""

    checkpoint: Checkpoint
    text: str
    signatures: tuple[tuple[str, bytes, bytes], ...]


def parse_checkpoint(note: str | bytes, where: str = "checkpoint") -> SignedCheckpoint:
    """Read a checkpoint note (signed or not) without checking any signature.
    Raises :class:`CheckpointError` naming ``where`` and what is wrong."""
    if isinstance(note, bytes):
        if len(note) > MAX_NOTE:
            raise CheckpointError(f"{where}: {len(note)} bytes, more than a checkpoint has")
        try:
            note = note.decode("utf-8")
        except UnicodeDecodeError:
            raise CheckpointError(f"{where}: not UTF-8 text") from None
    if len(note) > MAX_NOTE:
        raise CheckpointError(f"{where}: {len(note)} characters, more than a checkpoint has")
    if not note.endswith("\n"):
        raise CheckpointError(f"{where}: a checkpoint ends with a newline")
    if any(c < " " and c != "\n" for c in note):
        raise CheckpointError(f"{where}: control characters in a checkpoint")
    text, sep, sigs = note.rpartition("\n\n")
    if sep:
        text += "\n"
    else:
        text, sigs = note, ""
    lines = text[:-1].split("\n")
    if len(lines) < 3 or any(not line for line in lines):
        raise CheckpointError(
            f"{where}: a checkpoint has an origin, a tree size and a root hash, each on "
            "a line of its own"
        )
    origin, size_text, root_text, *extensions = lines
    if not _DECIMAL.fullmatch(size_text):
        raise CheckpointError(f"{where}: tree size {size_text!r} is not a decimal number")
    try:
        root = base64.b64decode(root_text, validate=True)
    except binascii.Error:
        root = b""
    if len(root) != 32:
        raise CheckpointError(f"{where}: root {root_text!r} is not a base64 SHA-256 hash")
    times = [x[5:] for x in extensions if x.startswith("time ")]
    if len(times) != 1:
        raise CheckpointError(f"{where}: no 'time ...' line")
    try:
        datetime.fromisoformat(times[0])
    except ValueError:
        raise CheckpointError(f"{where}: time {times[0]!r} is not ISO-8601") from None
    signatures = []
    for line in sigs.split("\n")[:-1] if sigs else []:
        parts = line.split(" ")
        if len(parts) != 3 or parts[0] != DASH:
            raise CheckpointError(f"{where}: {line[:40]!r} is not a signature line")
        try:
            raw = base64.b64decode(parts[2], validate=True)
        except binascii.Error:
            raise CheckpointError(f"{where}: signature of {parts[1]!r} is not base64") from None
        if len(raw) < 5:
            raise CheckpointError(f"{where}: signature of {parts[1]!r} is too short")
        signatures.append((parts[1], raw[:4], raw[4:]))
    checkpoint = Checkpoint(origin, int(size_text), root, times[0])
    return SignedCheckpoint(checkpoint, text, tuple(signatures))


def verify_checkpoint(
    note: str | bytes, key: Ed25519PublicKey, where: str = "checkpoint"
) -> Checkpoint:
    """The checkpoint, once a signature by ``key`` is found on it and verifies (other
    keys' signatures are ignored, as c2sp.org/signed-note requires). Raises
    :class:`CheckpointError` when none does."""
    signed = parse_checkpoint(note, where)
    found = False
    for name, kid, sig in signed.signatures:
        if kid != note_key_id(name, key):
            continue
        found = True
        try:
            key.verify(sig, signed.text.encode())
        except InvalidSignature:
            raise CheckpointError(
                f"{where}: the signature of {name} does not match the checkpoint (it was "
                "changed after it was signed)"
            ) from None
    if not found:
        what = "not signed" if not signed.signatures else "not signed by this key"
        raise CheckpointError(f"{where}: {what} (key id {key_id(key)})")
    return signed.checkpoint
