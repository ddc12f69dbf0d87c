"""Proofs about a proof log that anyone can check with the log's public key alone: that a
record is in the log (inclusion), and that the log only grew between two checkpoints
(consistency). RFC 9162 proofs (:mod:`battlejudge.proofs.merkle`) against signed
checkpoints (:mod:`battlejudge.proofs.checkpoint`), as JSON documents:

- inclusion: ``{"type": "battlejudge.inclusion/1", "index", "tree_size", "record",
  "leaf_hash", "audit_path", "checkpoint"}``; ``record`` is the record's line exactly as
  logged (the leaf is ``SHA-256(0x00 || record)``), ``audit_path`` the RFC 9162 path,
  bottom up, hex, and ``checkpoint`` the signed note whose root it leads to;
- consistency: ``{"type": "battlejudge.consistency/1", "old", "new", "path"}``, two
  signed checkpoints and the RFC 9162 consistency proof between them.

Checking (:func:`verify_inclusion_proof`, :func:`verify_consistency_proof`) needs neither
the log nor the solver: this module imports only the standard library, ``cryptography``
and the two modules above; making proofs reads the log, whose modules are imported then.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from battlejudge.proofs.checkpoint import Checkpoint, parse_checkpoint, verify_checkpoint
from battlejudge.proofs.merkle import (
    MerkleTree,
    leaf_hash,
    verify_consistency,
    verify_inclusion,
)
from battlejudge.proofs.proof_files import CONSISTENCY_TYPE, INCLUSION_TYPE, ProofFailed
from battlejudge.solver.errors import InputError

__all__ = [
    "CONSISTENCY_TYPE",
    "INCLUSION_TYPE",
    "ProofFailed",
    "consistency_proof",
    "inclusion_proof",
    "verify_consistency_proof",
    "verify_inclusion_proof",
]

MAX_PROOF_BYTES: Final = 16 * 2**20
"""A proof file larger than this is refused unread (a record with its certificate is far
smaller)."""


@dataclass(frozen=True)
class Held:
    """What a proof that holds shows: the checkpoint it is proved against (and, for
    consistency, the older one)."""

    checkpoint: Checkpoint
    old: Checkpoint | None = None
    record: dict[str, Any] | None = None


# -- making proofs (reads the log) -----------------------------------------------------------
def _tree_and_head(target: str | os.PathLike[str]) -> tuple[Any, MerkleTree, str, Checkpoint]:
    from battlejudge.proofs.store import read_store

    stored = read_store(target)
    if stored.checkpoint is None:
        raise InputError(
            f"{stored.name}: the log has no checkpoint yet: write one with "
            "battlejudge log checkpoint LOG --write --key KEY"
        )
    head = parse_checkpoint(stored.checkpoint, f"{stored.name} checkpoint").checkpoint
    records = stored.records
    if head.size > len(records):
        raise InputError(
            f"{stored.name}: its checkpoint covers {head.size} records but the log holds "
            f"{len(records)}: audit it"
        )
    tree = MerkleTree(leaf_hash(r.raw) for r in records[: head.size])
    if tree.root() != head.root:
        raise InputError(
            f"{stored.name}: the records do not hash to the root of its checkpoint: audit it"
        )
    return stored, tree, stored.checkpoint, head


def inclusion_proof(target: str | os.PathLike[str], seq: int) -> dict[str, Any]:
    """The proof that the record with ``seq`` is in the log at ``target`` (a path or a
    URL), against the log's latest checkpoint, read from the log's tiles in O(log n)
    (:mod:`battlejudge.proofs.logview`); a log without tiles (written before them) is
    read whole. Raises :class:`InputError` when there is no such record, no checkpoint,
    or the log does not match its checkpoint."""
    return _from_tiles(
        target,
        lambda view: view.inclusion_proof(seq),
        lambda: _whole_inclusion_proof(target, seq),
    )


def consistency_proof(target: str | os.PathLike[str], old_note: str) -> dict[str, Any]:
    """The proof that the log at ``target`` grew from the older checkpoint ``old_note``
    to its latest one, from its tiles (or the whole log, for a log without them). Raises
    :class:`ProofFailed` when it did not (its first records do not hash to the old root:
    it was rewritten) and :class:`InputError` for an unreadable checkpoint or log."""
    return _from_tiles(
        target,
        lambda view: view.consistency_proof(old_note),
        lambda: _whole_consistency_proof(target, old_note),
    )


def _from_tiles(
    target: str | os.PathLike[str],
    tiled: Callable[[Any], dict[str, Any]],
    whole: Callable[[], dict[str, Any]],
) -> dict[str, Any]:
    """``tiled``'s proof from the log's view (:mod:`battlejudge.proofs.logview`: its
    tiles), or ``whole``'s from the whole log when it has no tiles."""
    from battlejudge.proofs.logview import open_view  # reads the log's tiles
    from battlejudge.proofs.tiles import TileError

    view = open_view(target)
    try:
        return tiled(view)
    except TileError:
        return whole()
    finally:
        view.close()


def _whole_inclusion_proof(target: str | os.PathLike[str], seq: int) -> dict[str, Any]:
    """The proof that the record with ``seq`` is in the log at ``target`` (a path or a
    URL), against the log's latest checkpoint. Raises :class:`InputError` when there is
    no such record, no checkpoint, or the log does not match its checkpoint."""
    stored, tree, note, head = _tree_and_head(target)
    records = stored.records
    if not 0 <= seq < len(records):
        raise InputError(f"{stored.name}: no record {seq} (the log holds {len(records)})")
    if records[seq].seq != seq:
        raise InputError(f"{stored.name}: record {seq} is not where its seq says: audit the log")
    if seq >= head.size:
        raise InputError(
            f"{stored.name}: record {seq} came after the latest checkpoint "
            f"({head.size} records); write a new one with battlejudge log checkpoint"
        )
    record = records[seq]
    return {
        "type": INCLUSION_TYPE,
        "index": seq,
        "tree_size": head.size,
        "record": record.raw.decode("ascii"),
        "leaf_hash": tree.leaf(seq).hex(),
        "audit_path": [h.hex() for h in tree.inclusion_path(seq)],
        "checkpoint": note,
    }


def _whole_consistency_proof(target: str | os.PathLike[str], old_note: str) -> dict[str, Any]:
    """The proof that the log at ``target`` grew from the older checkpoint ``old_note``
    to its latest one. Raises :class:`ProofFailed` when it did not (its first records do
    not hash to the old root: it was rewritten) and :class:`InputError` for an unreadable
    checkpoint or log."""
    stored, tree, note, head = _tree_and_head(target)
    old = parse_checkpoint(old_note, "the older checkpoint").checkpoint
    if old.size > head.size:
        raise ProofFailed(
            f"{stored.name}: the older checkpoint has {old.size} records, the latest "
            f"{head.size}: the log shrank"
        )
    if tree.root(old.size) != old.root:
        raise ProofFailed(
            f"{stored.name}: its first {old.size} records do not hash to the root of the "
            f"checkpoint of {old.time}: the log was rewritten since"
        )
    return {
        "type": CONSISTENCY_TYPE,
        "old": old_note,
        "new": note,
        "path": [h.hex() for h in tree.consistency_path(old.size)],
    }


# -- checking proofs (light) ---------------------------------------------------------------
def load_proof(path: str | os.PathLike[str], kind: str) -> dict[str, Any]:
    """Read a proof file; :class:`InputError` naming it if it is not one of ``kind``."""
    try:
        size = os.stat(path).st_size
        if size > MAX_PROOF_BYTES:
            raise InputError(f"{path}: {size} bytes, more than a proof has")
        with open(path, "rb") as f:
            data = json.loads(f.read())
    except OSError as e:
        raise InputError(f"{path}: cannot read the proof ({e.strerror or e})") from None
    except (ValueError, RecursionError) as e:
        raise InputError(f"{path}: not JSON ({e})") from None
    if not isinstance(data, dict) or data.get("type") != kind:
        got = data.get("type") if isinstance(data, dict) else type(data).__name__
        raise InputError(f"{path}: not a {kind} proof (type {got!r})")
    return data


def _hashes(value: object, what: str) -> list[bytes]:
    if not isinstance(value, list) or len(value) > 128:
        raise InputError(f"{what} must be a list of at most 128 hex hashes")
    out = []
    for h in value:
        try:
            raw = bytes.fromhex(h) if isinstance(h, str) else b""
        except ValueError:
            raw = b""
        if len(raw) != 32:
            raise InputError(f"{what}: {str(h)[:70]!r} is not a SHA-256 hash in hex")
        out.append(raw)
    return out


def _whole(value: object, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InputError(f"{what} must be a whole number, got {value!r}")
    return value


def _note(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"{what} must be a checkpoint note (text)")
    return value


def _signed(note: str, key: Ed25519PublicKey, what: str) -> Checkpoint:
    parse_checkpoint(note, what)  # unreadable: InputError (exit 2)
    try:
        return verify_checkpoint(note, key, what)
    except InputError as e:
        raise ProofFailed(str(e)) from None


def verify_inclusion_proof(proof: dict[str, Any], key: Ed25519PublicKey) -> Held:
    """Check an inclusion proof: the checkpoint is signed by ``key``, the record's leaf
    hash and the audit path lead to its root at its size, and the record says it is the
    record with that seq. Raises :class:`InputError` when the proof cannot be read and
    :class:`ProofFailed` when it does not hold."""
    index = _whole(proof.get("index"), "index")
    size = _whole(proof.get("tree_size"), "tree_size")
    record = proof.get("record")
    if not isinstance(record, str):
        raise InputError("record must be the record's line (a string)")
    path = _hashes(proof.get("audit_path"), "audit_path")
    head = _signed(_note(proof.get("checkpoint"), "checkpoint"), key, "checkpoint")
    if head.size != size:
        raise ProofFailed(f"tree_size {size} is not the checkpoint's {head.size}")
    try:
        raw = record.encode("ascii")
    except UnicodeEncodeError:
        raise ProofFailed("the record is not a logged line (not ASCII)") from None
    leaf = leaf_hash(raw)
    if "leaf_hash" in proof and proof["leaf_hash"] != leaf.hex():
        raise ProofFailed("leaf_hash is not the hash of the record")
    if not verify_inclusion(index, size, leaf, path, head.root):
        raise ProofFailed(
            f"the audit path does not lead from record {index} to the root of the "
            f"checkpoint of {head.time} ({size} records)"
        )
    try:
        data = json.loads(raw)
    except ValueError:
        raise ProofFailed("the record is not JSON") from None
    if not isinstance(data, dict) or data.get("seq") != index:
        raise ProofFailed(f"the record's seq is not {index}")
    return Held(head, record=data)


def verify_consistency_proof(proof: dict[str, Any], key: Ed25519PublicKey) -> Held:
    """Check a consistency proof: both checkpoints are signed by ``key`` and the path
    shows the older tree is a prefix of the newer one. Raises :class:`InputError` when
    the proof cannot be read and :class:`ProofFailed` when it does not hold."""
    old_note = _note(proof.get("old"), "old")
    new_note = _note(proof.get("new"), "new")
    path = _hashes(proof.get("path"), "path")
    old = _signed(old_note, key, "old checkpoint")
    new = _signed(new_note, key, "new checkpoint")
    if old.origin != new.origin:
        raise ProofFailed(f"the checkpoints are of two logs: {old.origin} and {new.origin}")
    if not verify_consistency(old.size, new.size, old.root, new.root, path):
        raise ProofFailed(
            f"the path does not show the log of {old.size} records ({old.time}) grew into "
            f"the log of {new.size} records ({new.time})"
        )
    return Held(new, old=old)
