"""The guide: answers from a game's reference only, citing the section, or says it cannot.

Workflow (seed 000, the guide's instructions): setup and first-turn questions get numbered steps and
a follow-up question; a rules question gets the passage that answers it with its section named; a
card question gets that card's entry; anything the reference does not cover gets :data:`FALLBACK`.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from battlejudge.apps.guide.reference import (
    Reference,
    Section,
    WalkthroughKind,
    load,
)
from battlejudge.apps.guide.search import BM25, Hit
from battlejudge.apps.guide.text import Analyzer, plain
from battlejudge.solver.errors import InputError

FALLBACK = (
    "I am sorry, but the answer to your question is not provided in the rules I have access to."
)
"""The one answer to any question the reference does not cover (seed 000, guide workflow)."""

THRESHOLD = 0.5
"""Least coverage (share of the question's idf weight found in the best passage) to answer."""

HEADING_WEIGHT = 2
"""How many times a section's name counts among the terms of each of its passages."""

SECTION_WEIGHT = 0.5
"""Share of the whole section's BM25 score added to each of its passages' (topic context)."""

COORD_POWER = 1.0
"""Exponent of the coverage factor in ranking (0 turns it off)."""

RULING_FACTOR = 0.75
"""Rulings fill the rules' gaps: where a rules section answers as well, the rules come first."""

_NEUTRAL = frozenset({"game", "play"})
_SETUP_INTENT = frozenset({"setup"})
_TURN_INTENT = frozenset({"turn", "first", "start"})
_DEFINES = re.compile(r"(?:An?|The) ((?:[A-Z][\w-]* ?){1,3}) (?:is|are) |([A-Z][\w' ,-]{2,40}): ")
"""A passage that opens by defining something (``A Wedge is ...``, ``Frontal combat: ...``) is
about that thing."""
_CARD_WORDS = frozenset({"card", "tactic", "strategi", "buff", "action"})


class UnknownCardError(InputError):
    """A card name that is not one of the game's cards under either theme."""


@dataclass(frozen=True)
class Answer:
    """What the guide says, the section it comes from (None for the fallback) and its confidence."""

    answer: str
    section: str | None
    score: float

    def to_json(self) -> dict[str, Any]:
        return {"answer": self.answer, "section": self.section, "score": round(self.score, 3)}

    @property
    def answered(self) -> bool:
        return self.section is not None


@dataclass(frozen=True)
class Passage:
    """One paragraph or list item of a section: the unit the guide ranks and quotes."""

    section: Section
    text: str


def according_to(section: str, text: str) -> str:
    """``According to the 'X' section, "..."``: the passage quoted word for word."""
    return f"According to the '{section}' section, \"{text}\""


class Guide:
    """Answers questions about one game from its reference alone."""

    def __init__(self, reference: Reference, threshold: float = THRESHOLD) -> None:
        self.reference = reference
        self.threshold = threshold
        self.analyzer = Analyzer(reference.synonyms, reference.stopwords)
        self.passages: tuple[Passage, ...] = tuple(
            Passage(s, p) for s in reference.sections for p in s.passages
        )
        docs = []
        for p in self.passages:
            heading = self.analyzer.terms(p.section.name) * HEADING_WEIGHT
            defined = _DEFINES.match(p.text)
            subject = (
                self.analyzer.terms(defined.group(1) or defined.group(2)) * HEADING_WEIGHT
                if defined
                else []
            )
            docs.append([*heading, *subject, *self.analyzer.terms(p.text)])
        self.index = BM25(docs)
        self._section_of = [reference.sections.index(p.section) for p in self.passages]
        self.section_index = BM25(
            [
                [*self.analyzer.terms(s.name) * HEADING_WEIGHT, *self.analyzer.terms(s.text)]
                for s in reference.sections
            ]
        )
        self._cards: dict[str, Section] = {plain(n): c for c in reference.cards for n in c.names}

    @classmethod
    def for_game(cls, game: str) -> Guide:
        """The guide for a game name (lenient spelling; UnknownGameError if unknown)."""
        return cls(load(game))

    @property
    def title(self) -> str:
        return self.reference.title

    def greeting(self) -> str:
        cards = " 'card NAME' explains a card;" if self.reference.cards else ""
        return (
            f"Hello! I am your guide to {self.title}, and I answer from its rules only. "
            f"Type 'setup' to set up the game, 'turn' for your first turn;{cards} "
            "or just ask a question. Type 'quit' to leave."
        )

    def search(self, question: str) -> list[Hit]:
        """Ranked passages for a question (indices into :attr:`passages`), best first.

        A passage's score is its own BM25 score plus a share of its section's, so a passage in a
        section about the question's topic wins over a stray mention elsewhere; it is then scaled
        by the share of the question it covers, and rulings by :data:`RULING_FACTOR`.
        """
        return self._rank(self.analyzer.terms(question, True), self.analyzer.cues(question))

    def _rank(self, terms: list[str], hints: list[str]) -> list[Hit]:
        section_scores = [
            self.section_index.score(terms, i) for i in range(len(self.reference.sections))
        ]
        hits = []
        for hit in self.index.rank(terms, hints):
            passage = self.passages[hit.doc]
            score = hit.score + SECTION_WEIGHT * section_scores[self._section_of[hit.doc]]
            if passage.section.kind == "ruling":
                score *= RULING_FACTOR
            # Lucene's classic coordination factor, weighted by idf: a passage holding the
            # question's rarest words beats one repeating its commonest.
            score *= hit.coverage**COORD_POWER
            hits.append(Hit(hit.doc, score, hit.coverage))
        hits.sort(key=lambda h: (-h.score, h.doc))
        return hits

    def ask(self, question: str) -> Answer:
        """Answer a rules question: the best passage and its section, or the fallback.

        Setup and first-turn questions get the walkthrough; a question naming only a card gets
        the card's entry.
        """
        terms = self.analyzer.terms(question, True)
        unique = set(terms)
        intent = unique - _NEUTRAL
        if intent and intent <= _SETUP_INTENT:
            return self.walkthrough("setup")
        if "turn" in intent and intent <= _TURN_INTENT:
            return self.walkthrough("turn")
        for card in self.reference.cards:
            card_terms = set(self.analyzer.terms(card.name))
            if unique and unique & card_terms and unique <= card_terms | _CARD_WORDS:
                return Answer(self._card_text(card), card.name, 1.0)
        hits = self._rank(terms, self.analyzer.cues(question))
        if not hits:
            return Answer(FALLBACK, None, 0.0)
        best = hits[0]
        if best.coverage < self.threshold:
            return Answer(FALLBACK, None, best.coverage)
        passage = self.passages[best.doc]
        section = passage.section
        return Answer(according_to(section.name, passage.text), section.name, best.coverage)

    def card(self, name: str) -> Answer:
        """Explain a card, found by any of its names under either theme.

        Raises UnknownCardError naming the value (and the nearest name, if one is close).
        """
        key = plain(name)
        section = self._cards.get(key) or self._cards.get(key.rstrip("s"))
        if section is None:
            matches = [c for k, c in self._cards.items() if key and k.startswith(key)]
            if len({c.name for c in matches}) == 1:
                section = matches[0]
        if section is None:
            if not self.reference.cards:
                raise UnknownCardError(f"unknown card {name!r}: {self.title} has no cards")
            close = difflib.get_close_matches(key, list(self._cards), n=1, cutoff=0.6)
            hint = ""
            if close:
                hint = f" (did you mean {self._display_name(close[0])!r}?)"
            raise UnknownCardError(f"unknown card {name!r} for {self.title}{hint}")
        return Answer(self._card_text(section), section.name, 1.0)

    def card_names(self) -> list[str]:
        """Every card's own name, in reference order."""
        return [c.name for c in self.reference.cards]

    def _display_name(self, key: str) -> str:
        for c in self.reference.cards:
            for n in c.names:
                if plain(n) == key:
                    return n
        return key

    def _card_text(self, section: Section) -> str:
        return according_to(section.name, " ".join(section.passages))

    def walkthrough(self, kind: WalkthroughKind) -> Answer:
        """The numbered steps for setup or the first turn, then the follow-up question."""
        wt = self.reference.walkthroughs[kind]
        lines = [f"{i}. {step}" for i, step in enumerate(wt.steps, 1)]
        return Answer("\n".join([*lines, "", wt.follow_up]), wt.section, 1.0)
