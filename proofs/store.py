"""Where a proof log lives: a local file (the default) or a PostgreSQL database, behind one
interface.

``open_store(target)`` opens a log to append to, ``read_store(target)`` reads one whole
(records, lines that are not records, latest checkpoint) and ``iter_store(target)`` reads
one line by line, in memory that does not grow with the log
(:mod:`battlejudge.proofs.stream`), for ``target`` a file path or a ``postgresql://`` URL.
Every command that takes ``--log`` or a log path goes through them.
The PostgreSQL backend (:mod:`battlejudge.proofs.pglog`) needs the ``postgres`` extra and is
imported only for a URL.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from battlejudge.proofs.backends import (
    LogStore,
    StoredLog,
    StoreError,
    is_url,
    redact,
    redact_message,
    redact_urls,
)
from battlejudge.proofs.log import (
    ProofLog,
    checkpoint_path,
    newer_format,
    parse_log,
)
from battlejudge.proofs.stream import LogReader, Mark, iter_store

__all__ = [
    "LogReader",
    "LogStore",
    "Mark",
    "StoreError",
    "StoredLog",
    "is_url",
    "iter_store",
    "open_store",
    "read_checkpoint",
    "read_store",
    "redact",
    "redact_message",
    "redact_urls",
]


def open_store(
    target: str | os.PathLike[str],
    key: Ed25519PrivateKey | None = None,
    *,
    sync: bool = True,
    create: bool = False,
    adopt: bool = False,
    cosign: Any = None,
) -> Any:
    """A log to append to: :class:`ProofLog` for a path, ``PgProofLog`` for a
    ``postgresql://`` URL (``create``: make the tables if the database has none yet).
    The writer refuses a log it cannot vouch for (:class:`~battlejudge.proofs.log.VouchError`)
    unless ``adopt`` (take it as it is: ``log checkpoint --write``); ``cosign`` gathers
    witnesses' cosignatures on each checkpoint. Raises :class:`StoreError` for a log
    that cannot be reached or used, ``OSError`` for a file that cannot be opened."""
    if is_url(target):
        from battlejudge.proofs.pglog import PgProofLog

        return PgProofLog(str(target), key, create=create, adopt=adopt, cosign=cosign)
    return ProofLog(Path(target), key, sync=sync, adopt=adopt, cosign=cosign)


def read_checkpoint(target: str | os.PathLike[str]) -> str | None:
    """The log's latest checkpoint note, or None."""
    if is_url(target):
        from battlejudge.proofs.pglog import read_pg

        return read_pg(str(target)).checkpoint
    try:
        return checkpoint_path(Path(target)).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def read_store(target: str | os.PathLike[str]) -> StoredLog:
    """Read a whole log and its latest checkpoint. For a file, the checkpoint is read
    first: the log only grows, so every record it covers is in what is read after it.
    Raises ``OSError``, :class:`InputError` (not a proof log, a later format) or
    :class:`StoreError`."""
    if is_url(target):
        from battlejudge.proofs.pglog import read_pg

        return read_pg(str(target))
    path = Path(target)
    try:
        note: str | None = checkpoint_path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        note = None
    except UnicodeDecodeError:
        note = checkpoint_path(path).read_bytes().decode("utf-8", "replace")
    data = path.read_bytes()
    records, problems = parse_log(data, path)
    newer_format(problems, path)
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    return StoredLog(str(path), records, problems, note, lines)
