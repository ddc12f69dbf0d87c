"""The guide's precomputed index: BM25 matrices and sentence vectors shipped as package data.

Building a guide means BM25 indexes (bm25s, which imports scipy: about 0.25 s) and a few hundred
sentence vectors. ``guide ask`` answers one question per process, so both are computed ahead and
shipped as ``data/<game>.index.npz``. At run time the file is read without numpy
(:class:`Stored`: ``.npz`` is a zip of ``.npy`` files, a short header then the raw values), so
the keyword path of the guide never imports it; only the sentence vectors, which the ``guide``
extra's embedding model uses, become numpy arrays (:meth:`Stored.numpy`).

The file is never trusted blindly: each part carries a fingerprint of exactly what it was built
from (the analysed terms of every document; the texts embedded and the model's weights file).
:class:`battlejudge.apps.guide.retrieve.Retriever` recomputes those inputs, cheap next to the
index, and uses a part only when its fingerprint matches; otherwise it builds that part as before
(logging why), so a stale file costs start-up time, never a wrong answer. A test checks that the
shipped files match the data; regenerate them after editing ``data/`` with::

    python -m battlejudge.apps.guide.reindex apps/guide/data
"""

from __future__ import annotations

import ast
import hashlib
import json
import logging
import struct
import sys
import zipfile
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

logger = logging.getLogger(__name__)

FORMAT = 1
"""Bumped whenever what the file holds changes meaning; part of every fingerprint."""

SUFFIX = ".index.npz"


def fingerprint(*inputs: object) -> str:
    """A SHA-256 of the JSON of ``inputs`` and :data:`FORMAT`: equal only for equal inputs."""
    text = json.dumps([FORMAT, *inputs], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_name(game: str) -> str:
    """The index file's name for a game id (``battleline.index.npz``)."""
    return f"{game}{SUFFIX}"


_MAGIC = b"\x93NUMPY"
_ITEM = {"<f4": ("f", 4), "<f8": ("d", 8), "<i8": ("q", 8), "<i4": ("i", 4), "<f2": ("e", 2)}
"""The numeric ``.npy`` types the index holds: the array (or struct) code and the item size."""


@dataclass(frozen=True)
class Stored:
    """One array of the index as stored in its ``.npy`` member: type, shape and raw bytes.

    Its values come out as Python lists (:meth:`tolist`) without numpy, or as a numpy array
    (:meth:`numpy`) where numpy is wanted anyway (the sentence vectors).
    """

    descr: str
    shape: tuple[int, ...]
    raw: bytes

    @property
    def size(self) -> int:
        """How many values it holds."""
        count = 1
        for n in self.shape:
            count *= n
        return count

    def tolist(self) -> list[Any]:
        """The values, flat, as Python numbers or strings (a 2-d array is not nested)."""
        if self.descr.startswith("<U"):
            width = int(self.descr[2:]) * 4
            return [
                self.raw[i : i + width].decode("utf-32-le").rstrip("\x00")
                for i in range(0, self.size * width, width)
            ]
        code, size = _ITEM[self.descr]
        if code == "e":  # no array type for float16
            return [v for (v,) in struct.iter_unpack("<e", self.raw[: self.size * size])]
        values = array(code)
        values.frombytes(self.raw[: self.size * size])
        if sys.byteorder != "little":
            values.byteswap()
        return values.tolist()

    def numpy(self) -> NDArray[Any]:
        """The values as a numpy array of the stored type and shape."""
        import numpy as np

        return np.frombuffer(self.raw, dtype=np.dtype(self.descr), count=self.size).reshape(
            self.shape
        )


def parse_npy(data: bytes, where: str) -> Stored:
    """One ``.npy`` file's array (format versions 1 to 3, C order, little-endian numbers or
    strings). ValueError naming ``where`` for anything else: the index is then rebuilt."""
    if not data.startswith(_MAGIC) or len(data) < 10:
        raise ValueError(f"{where}: not a .npy array")
    major = data[6]
    if major == 1:
        (length,), start = struct.unpack("<H", data[8:10]), 10
    elif major in (2, 3):
        (length,), start = struct.unpack("<I", data[8:12]), 12
    else:
        raise ValueError(f"{where}: .npy format version {major}")
    encoding = "utf-8" if major == 3 else "latin-1"
    header = ast.literal_eval(data[start : start + length].decode(encoding))
    descr = header.get("descr") if isinstance(header, dict) else None
    shape = header.get("shape") if isinstance(header, dict) else None
    if (
        not isinstance(descr, str)
        or not (descr in _ITEM or (descr.startswith("<U") and descr[2:].isdigit()))
        or header.get("fortran_order")
        or not isinstance(shape, tuple)
        or not all(isinstance(n, int) for n in shape)
    ):
        raise ValueError(f"{where}: unsupported .npy header {header!r}")
    return Stored(descr, shape, data[start + length :])


def read(game: str) -> Mapping[str, Stored]:
    """The arrays of the shipped index of ``game``, or an empty mapping when there is none or
    it cannot be read (then every part is rebuilt, logged)."""
    source = resources.files("battlejudge.apps.guide").joinpath("data", file_name(game))
    if not source.is_file():
        logger.info("no precomputed guide index for %s", game)
        return {}
    try:
        with source.open("rb") as f, zipfile.ZipFile(f) as zipped:
            return {
                name.removesuffix(".npy"): parse_npy(zipped.read(name), f"{source}:{name}")
                for name in zipped.namelist()
                if name.endswith(".npy")
            }
    except (zipfile.BadZipFile, ValueError, SyntaxError) as e:
        logger.warning("guide index of %s unreadable, rebuilding it: %s", game, e)
        return {}


def write(path: Path, arrays: Mapping[str, NDArray[np.generic]]) -> None:
    """Save ``arrays`` to ``path`` (compressed; the vectors are most of its size)."""
    import numpy as np

    with path.open("wb") as f:
        np.savez_compressed(f, allow_pickle=False, **arrays)


def text_array(values: Sequence[str]) -> NDArray[np.str_]:
    """Strings as a numpy array that loads without pickle."""
    import numpy as np

    return np.array(list(values), dtype=np.str_)
