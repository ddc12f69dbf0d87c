"""The guide: answers from a game's reference only, citing the section, or says it cannot.

Workflow (seed 000, the guide's instructions): setup and first-turn questions get numbered steps and
a follow-up question; a rules question gets a one-sentence direct answer built from the cited
section's own sentences (:mod:`.lead`), then the rules it comes from quoted with the section
named; a card question gets that card's entry, led by what the card is; anything the reference
does not cover gets :data:`FALLBACK`.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any, Literal

from battlejudge.apps.guide.embed import Embedder, shared_embedder
from battlejudge.apps.guide.lead import definition, direct_answer, join, question_kind, trim
from battlejudge.apps.guide.reference import (
    Faq,
    Reference,
    Section,
    WalkthroughKind,
    load,
    other_games,
    sentences,
)
from battlejudge.apps.guide.retrieve import HIGH, THRESHOLD, Result, Retriever
from battlejudge.apps.guide.text import Analyzer, expand_shorthand, plain
from battlejudge.solver.errors import InputError

FALLBACK = (
    "I am sorry, but the answer to your question is not provided in the rules I have access to."
)
"""The one answer to any question the reference does not cover (seed 000, guide workflow)."""

FACT = 0.55
"""Least similarity of the question to one of a fact's ways of asking for the guide to take it
as the fact asked for (with the embedding model); below it no fact is chosen."""

FACT_LEXICAL = 0.5
"""Weight of the keyword coverage of the question by a fact's closest way of asking (the
idf-weighted share of the question's keywords it uses) beside the vector similarity, when the
facts of the winning section are compared."""

FACT_MARGIN = 0.05
"""How far the chosen fact must lead the section's next fact (in that combined score): a close
second means the question may ask for either, so the fact's written Yes or No is not taken as
the project's reading of the question (:func:`~.lead.direct_answer`)."""

DEFINING_DEPTH = 3
"""How far down the ranking the guide looks for the section that defines what a "what is X" or
"difference between X and Y" question names, when the winner does not (:meth:`Guide._answering`)."""

_PRONOUN = re.compile(r"(?:It|Its|They|This|That|These|Those|He|His|Then)\b")
"""A sentence opening like this leans on the one before it, so both are quoted."""

_NEUTRAL = frozenset({"game", "play"})
_SETUP_INTENT = frozenset({"setup"})
_TURN_INTENT = frozenset({"turn", "first", "start"})
_FACT_WORDS = frozenset("who whose which many much can may when where".split())
"""Question words that ask for one fact ("who takes the first turn?"): such a question is
answered from the rules, not with a walkthrough."""
_CARD_WORDS = frozenset({"card", "tactic", "strategi", "buff", "action"})
_CARD_QUESTION = frozenset(
    "a an the card cards tactic tactics strategy buff action what whats is does do explain how "
    "work works about tell me please for of this that".split()
)
"""The words a question may hold besides a card's names and still ask just for that card's entry
("what does Fog do", "explain the Traitor card"); anything else ("how many", "get", "can i")
makes it a rules question ranked like any other."""

__all__ = ["FALLBACK", "HIGH", "THRESHOLD", "Answer", "Guide", "UnknownCardError"]


class UnknownCardError(InputError):
    """A card name that is not one of the game's cards under either theme."""


@dataclass(frozen=True)
class Answer:
    """What the guide says, the section it comes from (None for the fallback) and its confidence."""

    answer: str
    section: str | None
    score: float
    direct: str | None = None
    """The one-sentence direct answer the text leads with (a rules answer or a card's entry),
    built from the cited section's own sentences (:mod:`.lead`); None for walkthroughs, the
    fallback and the session's own lines."""

    def to_json(self) -> dict[str, Any]:
        """The answer as JSON (``guide --json``): the text, the direct answer it leads with, the
        section quoted and the confidence score."""
        return {
            "answer": self.answer,
            "direct": self.direct,
            "section": self.section,
            "score": round(self.score, 3),
        }

    @property
    def answered(self) -> bool:
        """Whether a section of the rules was found (False for the fallback answer)."""
        return self.section is not None


def according_to(section: str, text: str, direct: str | None = None) -> str:
    """``[direct answer] According to the 'X' section, "..."``: the rule quoted word for word."""
    lead = f"{direct} " if direct else ""
    return f"{lead}According to the '{section}' section, \"{text}\""


_POLARITY = re.compile(r"^(Yes|No)(?:[,:]| by default\b)")
"""A fact's written answer that opens with Yes or No: the project's reading of a yes/no fact."""


class Guide:
    """Answers questions about one game from its reference alone.

    ``embedder`` defaults to the shared embedding model when it is installed (the ``guide``
    extra); pass None to rank with keywords alone.
    """

    def __init__(
        self,
        reference: Reference,
        threshold: float = THRESHOLD,
        embedder: Embedder | Literal["default"] | None = "default",
    ) -> None:
        self.reference = reference
        self.threshold = threshold
        self.analyzer = Analyzer(reference.synonyms, reference.stopwords)
        self.embedder = shared_embedder() if embedder == "default" else embedder
        self.retriever = Retriever(reference, self.analyzer, self.embedder)
        self._cards: dict[str, Section] = {plain(n): c for c in reference.cards for n in c.names}
        self._name_terms = frozenset(
            t for c in reference.cards for t in self.analyzer.terms(c.name, True)
        )
        """The terms of the cards' names: a yes/no question naming a card is not answered Yes
        or No by a sentence that does not name it (:func:`~.lead.polarity`)."""
        titles = sorted(other_games(reference.game), key=lambda t: (-len(t), t))
        self._other_game = re.compile(
            r"(?<![a-z0-9])("
            + "|".join(r"[\s_-]*".join(re.escape(w) for w in plain(t).split()) for t in titles)
            + r")(?![a-z0-9])"
        )
        """Another game's name as a player may write it ("lines of battle", "battleplan",
        "force_duel"): a question naming it asks about that game."""

    @classmethod
    def for_game(cls, game: str) -> Guide:
        """The guide for a game name (lenient spelling; UnknownGameError if unknown)."""
        return cls(load(game))

    @property
    def title(self) -> str:
        """The game's title."""
        return self.reference.title

    def greeting(self) -> str:
        """The first words of a session: what the guide answers from and the commands it knows."""
        cards = " 'card NAME' explains a card;" if self.reference.cards else ""
        return (
            f"Hello! I am your guide to {self.title}, and I answer from its rules only. "
            f"Type 'setup' to set up the game, 'turn' for your first turn;{cards} "
            "or just ask a question. Type 'quit' to leave."
        )

    def search(self, question: str) -> Result:
        """Every section ranked for ``question``, best first, with the winner's confidence."""
        return self.retriever.rank(question)

    def ask(self, question: str) -> Answer:
        """Answer a rules question from the reference, or give :data:`FALLBACK`.

        Setup and first-turn questions get the walkthrough; a question naming only a card gets
        the card's entry. Otherwise the best section answers when the confidence reaches the
        threshold (a "what is X" question goes to the section that defines X:
        :meth:`_answering`): the answer leads with a one-sentence direct answer built from that
        section's sentences (:func:`~.lead.direct_answer`), then quotes the sentence it comes
        from (the fact's the question asks for, :meth:`_fact`, else the likeliest; not the
        section's first lines) and names the section.
        Chat shorthand is read as the words it stands for ("can u" is "can you").
        """
        question = expand_shorthand(question)
        if self._other_game.search(plain(question)):
            # "how do archers reload in lines of battle", asked of Battle Line's guide: these
            # rules do not answer it, however near its words come to them.
            return Answer(FALLBACK, None, 0.0)
        terms = self.analyzer.terms(question, True)
        unique = set(terms)
        intent = unique - _NEUTRAL
        walk = not set(plain(question).split()) & _FACT_WORDS
        if walk and intent and intent <= _SETUP_INTENT:
            return self.walkthrough("setup")
        if walk and "turn" in intent and intent <= _TURN_INTENT:
            return self.walkthrough("turn")
        words = set(plain(question).split())
        for card in self.reference.cards:
            card_terms = set(self.analyzer.terms(card.name))
            named = {w for n in card.names for w in plain(n).split()}
            if (
                unique
                and unique & card_terms
                and unique <= card_terms | _CARD_WORDS
                and words <= named | _CARD_QUESTION
            ):
                return self._card_answer(card)
        result = self.retriever.rank(question)
        if not result.ranking or result.confidence < self.threshold:
            return Answer(FALLBACK, None, result.confidence)
        section, score = self._answering(question, result)
        faq, clear = self._fact(section, question, result)
        units = _units(section)
        order = self._ranked_units(units, question, faq)
        quote = units[order[0]][1]
        # A yes/no fact the question plainly asks for: its written answer's Yes or No leads.
        said = _POLARITY.match(faq.answer or "") if faq is not None and clear else None
        hint: Literal["Yes", "No"] | None = None
        if said is not None:
            hint = "Yes" if said.group(1) == "Yes" else "No"
        leads = [_one_sentence(units[i]) for i in order]
        every = [s for s, _ in units]
        idf = self.retriever.passage_lexical.idf
        lead = direct_answer(
            question, leads, every, self.analyzer.terms, hint, idf, self._name_terms
        )
        direct = lead.text
        if len(lead.sources) > 1:
            # Built from two sentences (two definitions, a rule and its tie): both are quoted.
            quote = _quoted(units, lead.sources)
        elif direct == quote:
            # The rule is the direct answer word for word: quote its paragraph around it.
            quote = next((p for p in section.passages if quote in p), quote)
        return Answer(according_to(section.name, quote, direct), section.name, score, direct)

    def _answering(self, question: str, result: Result) -> tuple[Section, float]:
        """The section that answers and the confidence: the winner, unless the question asks
        what things are ("what is a Wedge?", "the difference between a Wedge and a Phalanx")
        and the winner defines not all of them while one of the next :data:`DEFINING_DEPTH`
        sections does (:func:`~.lead.definition`): that one answers, under :data:`HIGH`, as
        the confidence was the winner's."""
        top = self.reference.sections[result.ranking[0].section]
        asked = question_kind(question)
        if asked.kind not in ("define", "difference"):
            return top, result.confidence

        def defines(section: Section) -> bool:
            every = [s for s, _ in _units(section)]
            return all(definition(t, every, self.analyzer.terms) for t in asked.things)

        if defines(top):
            return top, result.confidence
        for ranked in result.ranking[1:DEFINING_DEPTH]:
            section = self.reference.sections[ranked.section]
            if defines(section):
                return section, min(result.confidence, HIGH - 0.01)
        return top, result.confidence

    def _fact(self, section: Section, question: str, result: Result) -> tuple[Faq | None, bool]:
        """The fact of ``section`` the question asks for, if any, and whether it clearly does.

        Each of the section's facts scores its nearest way of asking's similarity to the question
        plus :data:`FACT_LEXICAL` times the share of the question's keyword weight it holds. The
        best is chosen when its similarity reaches :data:`FACT`; it is clear when it also leads
        the section's next fact by :data:`FACT_MARGIN`. Only entries with an answer or a quote
        are facts: a section's broad ways of asking help find the section, not the sentence.
        Without the embedding model no fact is chosen: keywords alone are too weak to put words
        in the rules' mouth.
        """
        if not result.faq_similarity:
            return None, False
        terms = set(self.analyzer.terms(self.retriever.respell(question), True))
        idf = self.retriever.faq_lexical.idf
        whole = sum(idf(t) for t in terms)

        def covered(k: int) -> float:
            if not whole:
                return 0.0
            # Each way of asking on its own: not the fact's answer (an answer mentions more than
            # the question it answers, "attack" in how a swap works), nor all ways pooled (a
            # fact asked many ways would hold every word).
            return max(
                sum(idf(t) for t in terms if t in asked) / whole
                for asked in self.retriever.question_terms[k]
            )

        scored = sorted(
            (
                (result.faq_similarity[k] + FACT_LEXICAL * covered(k), k)
                for k, faq in enumerate(self.reference.faqs)
                if faq.section == section.name and (faq.answer or faq.quote)
            ),
            reverse=True,
        )
        if not scored or result.faq_similarity[scored[0][1]] < FACT:
            return None, False
        lead = scored[0][0] - scored[1][0] if len(scored) > 1 else scored[0][0]
        return self.reference.faqs[scored[0][1]], lead >= FACT_MARGIN

    def _ranked_units(
        self, units: list[tuple[str, str]], question: str, faq: Faq | None
    ) -> list[int]:
        """The indices of ``units`` (a section's sentences, :func:`_units`) best first: the
        chosen fact's sentence, then by how well each answers the question.

        Each sentence scores the share of the question's keywords it holds, plus (with the
        embedding model) its cosine to the question.
        """
        terms = set(self.analyzer.terms(question, True))
        scores = [
            len(terms & set(self.analyzer.terms(said))) / len(terms) if terms else 0.0
            for _, said in units
        ]
        if self.embedder is not None:
            vectors = self.embedder.embed([question, *(said for _, said in units)])
            scores = [k + float(v @ vectors[0]) for k, v in zip(scores, vectors[1:], strict=True)]
        order = sorted(range(len(units)), key=lambda i: (-scores[i], i))
        if faq is not None and faq.quote is not None:
            chosen = [i for i, (sentence, _) in enumerate(units) if faq.quote in sentence]
            order = chosen[:1] + [i for i in order if i not in chosen[:1]]
        return order

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
        return self._card_answer(section)

    def card_names(self) -> list[str]:
        """Every card's own name, in reference order."""
        return [c.name for c in self.reference.cards]

    def _display_name(self, key: str) -> str:
        for c in self.reference.cards:
            for n in c.names:
                if plain(n) == key:
                    return n
        return key

    def _card_answer(self, section: Section, score: float = 1.0) -> Answer:
        """A card's whole entry, led by the sentence that says what the card is (its
        definition, else the entry's first sentence)."""
        every = [s for s, _ in _units(section)]
        found = definition(section.name, every, self.analyzer.terms)
        direct = trim(found if found is not None else every[0])
        text = according_to(section.name, " ".join(section.passages), direct)
        return Answer(text, section.name, score, direct)

    def walkthrough(self, kind: WalkthroughKind) -> Answer:
        """The numbered steps for setup or the first turn, then the follow-up question."""
        wt = self.reference.walkthroughs[kind]
        lines = [f"{i}. {step}" for i, step in enumerate(wt.steps, 1)]
        return Answer("\n".join([*lines, "", wt.follow_up]), wt.section, 1.0)


def _units(section: Section) -> list[tuple[str, str]]:
    """Every sentence of ``section`` in order, each with what it is quoted as: a sentence that
    opens with a pronoun is quoted with the sentence before it."""
    units: list[tuple[str, str]] = []
    for passage in section.passages:
        previous = ""
        for sentence in sentences(passage):
            said = f"{previous} {sentence}" if _PRONOUN.match(sentence) and previous else sentence
            units.append((sentence, said))
            previous = sentence
    return units


def _one_sentence(unit: tuple[str, str]) -> str:
    """What a unit of :func:`_units` says as one sentence: a sentence quoted with the one before
    it is joined to it with a semicolon."""
    sentence, said = unit
    if said == sentence:
        return sentence
    return join(said[: -len(sentence)].strip(), sentence)


def _quoted(units: list[tuple[str, str]], sources: tuple[str, ...]) -> str:
    """The sentences ``sources`` (as :func:`_one_sentence` gives them) quoted in the section's
    order, each with the sentence it leans on."""
    said: list[str] = []
    for sentence, quoted in units:
        if any(sentence in source for source in sources):
            for part in (quoted[: -len(sentence)].strip(), sentence):
                if part and part not in said:
                    said.append(part)
    return " ".join(said)
