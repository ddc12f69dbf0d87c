"""Common English words, to tell a real word from a slip of the keyboard.

The guide reads a word the rules never use as a misspelling of the rules word a few edits away
(:meth:`~battlejudge.apps.guide.retrieve.Retriever.respell`). A common English word is no slip:
"rude" is not "rule", "heal" not "head", "lore" not "lose", "cheating" not "checking"; read so,
such questions (manners, healing, the story) looked like rules questions. The embedding model's
tokenizer keeps only the commonest words whole ("world", "charge"), so the guide also asks
wordfreq's English word list (the ``guide`` extra): its small list holds the 29,000 or so English
words used at least once in a million words.

The list is read straight from the data file wordfreq installs (``data/small_en.msgpack.gz``, a
header then words bucketed by frequency): importing wordfreq itself brings regex, ftfy and
langcodes, about 0.4 s, most of ``guide ask``'s budget, while reading the file takes 20 ms and is
done only when a question holds a word the rules never use.
"""

from __future__ import annotations

import gzip
import importlib
import importlib.util
import logging
from functools import cache
from pathlib import Path

logger = logging.getLogger(__name__)

WORD_LIST = "small_en.msgpack.gz"
"""wordfreq's English list of words used at least once in a million (Zipf frequency 3 or more)."""


@cache
def common_words() -> frozenset[str]:
    """Every word of wordfreq's small English list, lower case; empty when wordfreq (the
    ``guide`` extra) is not installed or its list cannot be read, and then every word a slip
    may be is read as one, as before."""
    spec = importlib.util.find_spec("wordfreq")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return frozenset()
    path = Path(next(iter(spec.submodule_search_locations)), "data", WORD_LIST)
    try:
        msgpack = importlib.import_module("msgpack")
        with gzip.open(path, "rb") as f:
            data = msgpack.load(f, raw=False)
    except (ImportError, OSError, ValueError) as e:
        logger.info("wordfreq's English list unreadable (%s): misspellings read as before", e)
        return frozenset()
    if not isinstance(data, list) or not data or not isinstance(data[0], dict):
        return frozenset()
    if data[0].get("format") != "cB":
        logger.info("wordfreq's English list has an unknown format: misspellings read as before")
        return frozenset()
    return frozenset(w for bucket in data[1:] if isinstance(bucket, list) for w in bucket)
