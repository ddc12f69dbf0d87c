"""The guide's precomputed index: BM25 matrices and sentence vectors shipped as package data.

Building a guide means BM25 indexes (bm25s, which imports scipy: about 0.25 s) and a few hundred
sentence vectors. ``guide ask`` answers one question per process, so both are computed ahead and
shipped as ``data/<game>.index.npz``; at run time only numpy reads them.

The file is never trusted blindly: each part carries a fingerprint of exactly what it was built
from (the analysed terms of every document; the texts embedded and the model's weights file).
:class:`battlejudge.apps.guide.retrieve.Retriever` recomputes those inputs, cheap next to the
index, and uses a part only when its fingerprint matches; otherwise it builds that part as before
(logging why), so a stale file costs start-up time, never a wrong answer. A test checks that the
shipped files match the data; regenerate them after editing ``data/`` with::

    python -m battlejudge.apps.guide.reindex apps/guide/data
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

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


def read(game: str) -> Mapping[str, NDArray[np.generic]]:
    """The arrays of the shipped index of ``game``, or an empty mapping when there is none."""
    import numpy as np

    source = resources.files("battlejudge.apps.guide").joinpath("data", file_name(game))
    if not source.is_file():
        logger.info("no precomputed guide index for %s", game)
        return {}
    with source.open("rb") as f, np.load(f, allow_pickle=False) as stored:
        return {k: stored[k] for k in stored.files}


def write(path: Path, arrays: Mapping[str, NDArray[np.generic]]) -> None:
    """Save ``arrays`` to ``path`` (compressed; the vectors are most of its size)."""
    import numpy as np

    with path.open("wb") as f:
        np.savez_compressed(f, allow_pickle=False, **arrays)


def text_array(values: Sequence[str]) -> NDArray[np.str_]:
    """Strings as a numpy array that loads without pickle."""
    import numpy as np

    return np.array(list(values), dtype=np.str_)
