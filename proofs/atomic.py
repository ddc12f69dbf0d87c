"""Writing files so that a crash never leaves a half-written or clobbered file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: str | os.PathLike[str], data: str | bytes, *, folder: bool = True) -> None:
    """Write ``data`` (text as UTF-8, or bytes) to ``path`` all at once: a temporary file
    in the same folder, flushed and fsynced, then renamed over the target, and the folder
    fsynced so the rename is durable too (``folder=False`` skips that: after a crash the
    path may then hold the file it replaced, whole). Readers see the old file or the new
    one, never a mix; on failure the old file is untouched."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if folder:
        sync_folder(target.parent or Path("."))


def sync_folder(folder: str | os.PathLike[str]) -> None:
    """fsync a folder, so that names just created or renamed in it survive a crash."""
    dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
