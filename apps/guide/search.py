"""Ranked keyword search: Okapi BM25 over passages, plus a coverage figure used as confidence.

BM25 is a dozen lines, so it lives here rather than in a dependency (the maintained libraries pull
in numpy or scipy for the few hundred passages of a rulebook). Terms come from
:class:`battlejudge.apps.guide.text.Analyzer`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Hit:
    """One ranked passage: its index, its BM25 score and how much of the question it covers."""

    doc: int
    score: float
    coverage: float


class BM25:
    """Okapi BM25 with Lucene's always-positive idf, ``ln(1 + (N - df + 0.5) / (df + 0.5))``.

    ``b`` is lower than the usual 0.75: passages are short paragraphs, and a long one that
    answers fully should not lose to a short one that merely names the topic.
    """

    def __init__(self, docs: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.5) -> None:
        self.k1 = k1
        self.b = b
        self._tf = [Counter(d) for d in docs]
        self._len = [len(d) for d in docs]
        self._avg = (sum(self._len) / len(docs)) if docs else 1.0
        df: Counter[str] = Counter()
        for tf in self._tf:
            df.update(tf.keys())
        self._df = df
        self._n = len(docs)

    def idf(self, term: str) -> float:
        """Weight of a term; a term found in no passage gets the largest weight of all."""
        df = self._df.get(term, 0)
        return math.log(1.0 + (self._n - df + 0.5) / (df + 0.5))

    def score(
        self, query: Sequence[str], doc: int, hints: Sequence[str] = (), hint_weight: float = 0.3
    ) -> float:
        """BM25 of ``query`` against one passage; ``hints`` count ``hint_weight`` times as much."""
        tf = self._tf[doc]
        norm = self.k1 * (1.0 - self.b + self.b * self._len[doc] / self._avg)
        total = 0.0
        weights = dict.fromkeys(hints, hint_weight) | dict.fromkeys(query, 1.0)
        for term, weight in weights.items():
            f = tf.get(term, 0)
            if f:
                total += weight * self.idf(term) * f * (self.k1 + 1.0) / (f + norm)
        return total

    def coverage(self, query: Sequence[str], doc: int) -> float:
        """Share of the question's idf weight found in the passage, in [0, 1].

        A question whose rarest words appear nowhere near the best passage is about something the
        passage (and so the reference) does not say: the guide's confidence measure.
        """
        terms = set(query)
        if not terms:
            return 0.0
        tf = self._tf[doc]
        whole = sum(self.idf(t) for t in terms)
        found = sum(self.idf(t) for t in terms if t in tf)
        return found / whole if whole else 0.0

    def rank(self, query: Sequence[str], hints: Sequence[str] = ()) -> list[Hit]:
        """Every passage that shares a query term, best first (ties: earlier first)."""
        terms = set(query)
        hits = [
            Hit(i, self.score(query, i, hints), self.coverage(query, i))
            for i in range(self._n)
            if terms & self._tf[i].keys()
        ]
        hits.sort(key=lambda h: (-h.score, h.doc))
        return hits
