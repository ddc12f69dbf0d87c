"""Ed25519 key pairs for signing proof logs, stored as PEM files.

``PREFIX.key`` holds the private key (PKCS#8, unencrypted, file mode 0600) and
``PREFIX.pub`` the public key (SubjectPublicKeyInfo). Existing files are never
overwritten: a lost signing key cannot be replaced by accident.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from battlejudge.solver.errors import InputError


def key_paths(prefix: str | os.PathLike[str]) -> tuple[Path, Path]:
    """``PREFIX.key`` and ``PREFIX.pub`` (suffixes added, never replaced)."""
    return Path(f"{prefix}.key"), Path(f"{prefix}.pub")


def _write_new(path: Path, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        os.fchmod(fd, mode)  # exactly ``mode``, whatever the umask
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def new_key_pair(prefix: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Generate a key pair and write ``PREFIX.key`` (mode 0600) and ``PREFIX.pub``;
    returns their paths. Raises :class:`InputError` naming a file that already exists
    (nothing is written then)."""
    private_path, public_path = key_paths(prefix)
    for path in (private_path, public_path):
        if path.exists() or path.is_symlink():
            raise InputError(f"{path} already exists; not overwriting a key")
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    try:
        _write_new(private_path, private_pem, 0o600)
    except FileExistsError:
        raise InputError(f"{private_path} already exists; not overwriting a key") from None
    try:
        _write_new(public_path, public_pem, 0o644)
    except BaseException as e:
        private_path.unlink(missing_ok=True)
        if isinstance(e, FileExistsError):
            raise InputError(f"{public_path} already exists; not overwriting a key") from None
        raise
    return private_path, public_path


def _read(path: str | os.PathLike[str], what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot read the {what} ({e.strerror or e})") from e


def load_private_key(path: str | os.PathLike[str]) -> Ed25519PrivateKey:
    """Read a PEM Ed25519 private key; :class:`InputError` naming the file otherwise."""
    data = _read(path, "private key")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as e:
        raise InputError(f"{path}: not an unencrypted PEM private key") from e
    if not isinstance(key, Ed25519PrivateKey):
        raise InputError(f"{path}: not an Ed25519 private key")
    return key


def load_public_key(path: str | os.PathLike[str]) -> Ed25519PublicKey:
    """Read a PEM Ed25519 public key; :class:`InputError` naming the file otherwise."""
    data = _read(path, "public key")
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError, UnsupportedAlgorithm) as e:
        raise InputError(f"{path}: not a PEM public key") from e
    if not isinstance(key, Ed25519PublicKey):
        raise InputError(f"{path}: not an Ed25519 public key")
    return key


def key_id(key: Ed25519PublicKey | Ed25519PrivateKey) -> str:
    """A short name for a key pair: the first 16 hex digits of the SHA-256 of the raw
    public key (the same for the private key and its public key)."""
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]
