"""API keys of the HTTP service (``battlejudge serve --api-keys FILE``), hashed at rest.

A key is 32 random bytes from :mod:`secrets` written as ``bj_`` and URL-safe base64;
the service never stores it, only its SHA-256. The key file is text, one client a line:

    # battlejudge API keys: CLIENT sha256:HEX
    alice sha256:4f1c...

(``#`` starts a comment; blank lines are ignored). A client sends its key as
``Authorization: Bearer bj_...``; the service hashes it and looks the hash up, so a
stolen key file lets nobody in. SHA-256 without salt or stretching is enough here
because the keys are random 256-bit secrets, not passwords: there is nothing to guess.
``battlejudge api-keys add FILE --client NAME`` makes a key, prints it once and appends
its line; deleting the line revokes the key (the service reads the file at start).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from battlejudge.solver.errors import InputError

__all__ = ["KEY_PREFIX", "add_key", "hash_key", "load_keys", "lookup", "new_key"]

KEY_PREFIX: Final = "bj_"
_HASH_PREFIX: Final = "sha256:"
_CLIENT = re.compile(r"[A-Za-z0-9._@-]{1,64}")
_HEX = re.compile(r"[0-9a-f]{64}")
_HEADER: Final = "# battlejudge API keys: CLIENT sha256:HEX (battlejudge api-keys add)\n"


def new_key() -> str:
    """A fresh API key: ``bj_`` and 43 URL-safe base64 characters (256 random bits)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_key(key: str) -> str:
    """The SHA-256 of a key, in hex: what the key file stores."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def load_keys(path: str | Path) -> dict[str, str]:
    """The key file's hashes, ``{sha256 hex: client}``; raises :class:`InputError` naming
    the file and line of anything else, or when the file holds no key (a client named
    twice is allowed: one client may have several keys, e.g. while one is replaced)."""
    keys = _read(Path(path))
    if not keys:
        raise InputError(f"{path}: no API key in the file")
    return keys


def _read(p: Path) -> dict[str, str]:
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{p}: not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise InputError(f"cannot read the API key file {str(p)!r}: {e.strerror or e}") from None
    keys: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        where = f"{p}, line {number}"
        if len(parts) != 2 or not parts[1].startswith(_HASH_PREFIX):
            raise InputError(f"{where}: expected 'CLIENT sha256:HEX', got {line[:80]!r}")
        client, digest = parts[0], parts[1].removeprefix(_HASH_PREFIX)
        if not _CLIENT.fullmatch(client):
            raise InputError(f"{where}: bad client name {client[:80]!r} (letters, digits, ._@-)")
        if not _HEX.fullmatch(digest):
            raise InputError(f"{where}: not a SHA-256 in lowercase hex: {digest[:80]!r}")
        if digest in keys:
            raise InputError(f"{where}: the same key hash is listed twice")
        keys[digest] = client
    return keys


def lookup(keys: Mapping[str, str], key: str) -> str | None:
    """The client a presented key belongs to, or None. The key is hashed before the
    lookup, so how long a lookup takes tells nothing about the stored hashes' keys."""
    return keys.get(hash_key(key))


def add_key(path: str | Path, client: str) -> str:
    """Make a key for ``client``, append its hash to the key file (created with mode 0600
    when missing) and return the key, which is stored nowhere else."""
    if not _CLIENT.fullmatch(client):
        raise InputError(f"bad client name {client!r}: 1-64 letters, digits or ._@-")
    p = Path(path)
    if p.exists():
        _read(p)  # never append to a file that does not read back
    key = new_key()
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        if f.tell() == 0:
            f.write(_HEADER)
        f.write(f"{client} {_HASH_PREFIX}{hash_key(key)}\n")
    return key
