"""Keyword search: Okapi BM25 (the ``bm25s`` library) over analysed terms, plus idf coverage.

Terms come from :class:`battlejudge.apps.guide.text.Analyzer` (stems, synonyms folded), so the
documents handed to bm25s are already token lists. ``bm25s`` is imported only when an index is
built here; a guide whose precomputed index (:mod:`.index`) is up to date scores from bm25s's own
matrix as stored (:meth:`Lexical.arrays`), so ``guide ask`` never imports bm25s and scipy. The
scoring is plain Python over that matrix's columns (a question has a handful of terms), in
float32 as bm25s's numpy backend adds, so the keyword path imports no numpy either.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from numpy.typing import NDArray

EMPTY = "zzempty"
"""Stands in for the terms of a document that has none (bm25s wants one token at least)."""


class Lexical:
    """BM25 (Lucene's variant, always-positive idf) over fixed documents of terms.

    ``b`` is lower than the usual 0.75: the documents are short paragraphs and questions, and a
    long paragraph that answers fully should not lose to a short one that merely names the topic.
    """

    def __init__(
        self,
        docs: Sequence[Sequence[str]],
        k1: float = 1.2,
        b: float = 0.5,
        stored: Mapping[str, Any] | None = None,
    ) -> None:
        """Index ``docs`` with bm25s, or take ``stored`` (arrays with ``tolist()``: numpy's,
        or the index file's :class:`~battlejudge.apps.guide.index.Stored`) as its index."""
        self._n = len(docs)
        if stored is None:
            stored = self._build(docs, k1, b)
        self._vocab = {str(t): i for i, t in enumerate(stored["vocab"].tolist())}
        # float32 values, as bm25s stores and adds them
        self._data = array("f", stored["data"].tolist())
        self._indices: list[int] = [int(i) for i in stored["indices"].tolist()]
        self._indptr: list[int] = [int(i) for i in stored["indptr"].tolist()]
        self._sets = [frozenset(d) for d in docs]
        df: Counter[str] = Counter()
        for terms in self._sets:
            df.update(terms)
        self._df = df

    @staticmethod
    def _build(docs: Sequence[Sequence[str]], k1: float, b: float) -> dict[str, NDArray[Any]]:
        """bm25s's index of ``docs``: its vocabulary in id order and its term-by-document scores
        as a compressed sparse column matrix (``data``, ``indices``, ``indptr``)."""
        import numpy as np

        if not docs:
            empty = np.zeros(0, dtype=np.float32)
            return {
                "vocab": np.array([], dtype=np.str_),
                "data": empty,
                "indices": empty.astype(np.int64),
                "indptr": np.zeros(1, dtype=np.int64),
            }
        import bm25s

        bm25: Any = bm25s.BM25(k1=k1, b=b, method="lucene")
        bm25.index([list(d) or [EMPTY] for d in docs], show_progress=False)
        by_id = sorted(bm25.vocab_dict.items(), key=lambda kv: kv[1])
        if [i for _, i in by_id] != list(range(len(by_id))):
            raise RuntimeError("bm25s vocabulary ids are not 0..n-1")
        return {
            "vocab": np.array([t for t, _ in by_id], dtype=np.str_),
            "data": np.asarray(bm25.scores["data"], dtype=np.float32),
            "indices": np.asarray(bm25.scores["indices"], dtype=np.int64),
            "indptr": np.asarray(bm25.scores["indptr"], dtype=np.int64),
        }

    def arrays(self) -> dict[str, NDArray[Any]]:
        """The index as arrays, to be stored and handed back as ``stored`` (:mod:`.index`)."""
        import numpy as np

        vocab = sorted(self._vocab, key=self._vocab.__getitem__)
        return {
            "vocab": np.array(vocab, dtype=np.str_),
            "data": np.array(self._data, dtype=np.float32),
            "indices": np.array(self._indices, dtype=np.int64),
            "indptr": np.array(self._indptr, dtype=np.int64),
        }

    def __len__(self) -> int:
        return self._n

    def idf(self, term: str) -> float:
        """Lucene's idf, ``ln(1 + (N - df + 0.5) / (df + 0.5))``; an unseen term weighs most."""
        df = self._df.get(term, 0)
        return math.log(1.0 + (self._n - df + 0.5) / (df + 0.5))

    def scores(self, query: Sequence[str]) -> list[float]:
        """The BM25 score of every document for ``query`` (repeated terms count again)."""
        # bm25s's own scoring (its numpy backend): each term's column of precomputed scores,
        # summed in float32 (an array of type "f" rounds every sum to float32 as numpy does).
        result = array("f", bytes(4 * self._n))
        indices, data = self._indices, self._data
        for term in query:
            i = self._vocab.get(term)
            if i is not None and i + 1 < len(self._indptr):
                for j in range(self._indptr[i], self._indptr[i + 1]):
                    result[indices[j]] += data[j]
        return result.tolist()

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
