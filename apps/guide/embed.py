"""Sentence vectors for the guide: a static word-embedding model that ships inside a PyPI package.

The model is WordLlama's ``l2_supercat`` at 256 dimensions (MIT licence): a table of one vector per
token of the Llama 2 tokenizer, and a sentence's vector is the mean of its tokens' vectors,
normalised to length 1. The ``wordllama`` wheel carries both files (the 16 MB table as
safetensors, the tokenizer as JSON), so nothing is fetched at run time.

Two things about wordllama 0.4 make this module read those files itself, with ``safetensors`` and
``tokenizers`` (the libraries wordllama uses), instead of calling ``WordLlama.load()``:

- its loader looks for the tokenizer under ``wordllama/tokenizer/`` while the wheel ships it under
  ``wordllama/tokenizers/``, so ``load()`` downloads the tokenizer from the Hugging Face hub (and
  fails with downloads disabled or no network);
- importing the package calls ``logging.basicConfig(level=INFO)``, reconfiguring the root logger
  of whatever program imports it.

The pooling is the same as wordllama's ``embed(norm=True)``: the mean of the token vectors.

The model is optional (the ``guide`` extra): without it :func:`shared_embedder` returns None and the
guide ranks with keywords alone.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

logger = logging.getLogger(__name__)

MODEL_PACKAGE = "wordllama"
WEIGHTS = Path("weights", "l2_supercat_256.safetensors")
TOKENIZER = Path("tokenizers", "l2_supercat_tokenizer_config.json")
TENSOR = "embedding.weight"

DISABLE_VARIABLE = "BATTLEJUDGE_GUIDE_EMBEDDINGS"
"""Set to ``0`` to rank with keywords alone even when the model is installed (for comparison)."""


class Embedder:
    """Maps texts to unit vectors: the mean of their tokens' rows in a static embedding table."""

    def __init__(self, table: NDArray[np.floating], tokenizer: Any, identity: str = "") -> None:
        self.table = table
        self.tokenizer = tokenizer
        self.identity = identity
        """Names the model and its weights file (name and size), so a precomputed index built
        with another model is not used (:mod:`.index`)."""

    @property
    def dimensions(self) -> int:
        """The length of the sentence vectors (the embedding table's width)."""
        return int(self.table.shape[1])

    def is_whole_word(self, word: str) -> bool:
        """True when the tokenizer has ``word`` as one token of its own (a word common enough in
        its training text to be kept whole: "world", "charge"), not split into pieces the way a
        misspelling is ("meny" is "men" + "y")."""
        pieces = self.tokenizer.encode(" " + word, add_special_tokens=False).tokens
        return len([p for p in pieces if p != "\u2581"]) == 1

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One row per text, each of length 1 (a text with no token gives a zero row)."""
        import numpy as np

        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        encodings = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        rows = self.table.shape[0]
        ids_per_text = [[t for t in e.ids if 0 <= t < rows] for e in encodings]
        counts = np.array([len(ids) for ids in ids_per_text], dtype=np.int64)
        filled = np.flatnonzero(counts)
        if len(filled):
            # One gather and one segmented sum for the whole batch (building a guide embeds a
            # few hundred texts, and a mean per text costs more in overhead than in arithmetic).
            flat = np.fromiter((t for ids in ids_per_text for t in ids), dtype=np.int64)
            starts = np.concatenate(([0], np.cumsum(counts)[:-1]))[filled]
            sums = np.add.reduceat(self.table[flat].astype(np.float32), starts, axis=0)
            out[filled] = sums / counts[filled, None]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0.0] = 1.0
        result: NDArray[np.float32] = out / norms
        return result


def model_files() -> tuple[Path, Path] | None:
    """The weights and tokenizer files inside the installed model package, or None.

    Finds the package without importing it (see the module docstring for why).
    """
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    weights, tokenizer = root / WEIGHTS, root / TOKENIZER
    if not (weights.is_file() and tokenizer.is_file()):
        logger.warning(
            "%s is installed but does not ship %s and %s", MODEL_PACKAGE, *(WEIGHTS, TOKENIZER)
        )
        return None
    return weights, tokenizer


@cache
def shared_embedder() -> Embedder | None:
    """The embedder, loaded once per process; None when the model is missing or disabled.

    Reads only local files: the table with safetensors, the tokenizer with tokenizers.
    """
    if os.environ.get(DISABLE_VARIABLE, "").strip().lower() in {"0", "false", "no", "off"}:
        return None
    files = model_files()
    if files is None:
        return None
    try:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer
    except ImportError as e:  # the extra is half installed
        logger.warning("guide embeddings unavailable: %s", e)
        return None
    weights, tokenizer_file = files
    # Kept as stored (float16): rows are averaged in float32, and converting the whole 16 MB
    # table up front would cost start-up time for nothing.
    table = load_file(str(weights))[TENSOR]
    identity = f"{MODEL_PACKAGE}/{WEIGHTS.name}/{weights.stat().st_size}"
    return Embedder(table, Tokenizer.from_file(str(tokenizer_file)), identity)
