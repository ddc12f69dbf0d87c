"""Regenerate the guide's precomputed index files (:mod:`.index`) after editing ``data/``::

    python -m battlejudge.apps.guide.reindex apps/guide/data

A module of its own, not imported by the guide, so running it does not re-import the index.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from battlejudge.apps.guide.index import file_name, write

logger = logging.getLogger(__name__)


def rebuild(directory: Path) -> list[Path]:
    """Write the index of every game into ``directory`` (the source ``data/`` folder), built from
    the installed package's references with the embedding model when it is installed."""
    from battlejudge.apps.guide.embed import shared_embedder
    from battlejudge.apps.guide.reference import GAMES, load
    from battlejudge.apps.guide.retrieve import Retriever
    from battlejudge.apps.guide.text import Analyzer

    embedder = shared_embedder()
    if embedder is None:
        logger.warning("embedding model not installed: the index holds no sentence vectors")
    written = []
    for game in GAMES:
        reference = load(game)
        analyzer = Analyzer(reference.synonyms, reference.stopwords)
        retriever = Retriever(reference, analyzer, embedder, stored={})
        path = directory / file_name(game)
        write(path, retriever.index_arrays())
        written.append(path)
    return written


def main(argv: Sequence[str]) -> int:
    """``python -m battlejudge.apps.guide.reindex DATA_DIR``: regenerate every game's index."""
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        sys.stderr.write("usage: python -m battlejudge.apps.guide.reindex DATA_DIR\n")
        return 2
    for path in rebuild(Path(argv[0])):
        sys.stdout.write(f"wrote {path}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
