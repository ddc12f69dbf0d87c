"""Keyword search: Okapi BM25 (the ``bm25s`` library) over analysed terms, plus idf coverage.

Terms come from :class:`battlejudge.apps.guide.text.Analyzer` (stems, synonyms folded), so the
documents handed to bm25s are already token lists. ``bm25s`` is imported when an index is built,
not when this module is imported, so commands that never build an index do not load numpy.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

EMPTY = "zzempty"
"""Stands in for the terms of a document that has none (bm25s wants one token at least)."""


class Lexical:
    """BM25 (Lucene's variant, always-positive idf) over fixed documents of terms.

    ``b`` is lower than the usual 0.75: the documents are short paragraphs and questions, and a
    long paragraph that answers fully should not lose to a short one that merely names the topic.
    """

    def __init__(self, docs: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.5) -> None:
        import bm25s

        self._n = len(docs)
        self._bm25: Any = None
        if docs:
            self._bm25 = bm25s.BM25(k1=k1, b=b, method="lucene")
            self._bm25.index([list(d) or [EMPTY] for d in docs], show_progress=False)
        self._sets = [frozenset(d) for d in docs]
        df: Counter[str] = Counter()
        for terms in self._sets:
            df.update(terms)
        self._df = df

    def __len__(self) -> int:
        return self._n

    def idf(self, term: str) -> float:
        """Lucene's idf, ``ln(1 + (N - df + 0.5) / (df + 0.5))``; an unseen term weighs most."""
        df = self._df.get(term, 0)
        return math.log(1.0 + (self._n - df + 0.5) / (df + 0.5))

    def scores(self, query: Sequence[str]) -> NDArray[np.float32]:
        """The BM25 score of every document for ``query`` (repeated terms count again)."""
        import numpy as np

        known = [t for t in query if t in self._df]
        if not known:
            return np.zeros(self._n, dtype=np.float32)
        result: NDArray[np.float32] = self._bm25.get_scores(known)
        return result

    def coverage(self, query: Sequence[str], doc: int) -> float:
        """Share of the question's idf weight found in document ``doc``, in [0, 1].

        A question whose rarest words appear nowhere in a document is about something that
        document does not say.
        """
        terms = set(query)
        if not terms:
            return 0.0
        whole = sum(self.idf(t) for t in terms)
        found = sum(self.idf(t) for t in terms if t in self._sets[doc])
        return found / whole if whole else 0.0
