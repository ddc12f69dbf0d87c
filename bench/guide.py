"""Measuring the guide against a question set: top-1 section accuracy, direct answers, fallback,
latency.

A question set is a TOML file with one table per game (see tests/guide/eval/): ``questions``, each
with ``q``, the ``sections`` that answer it (citing any of them is right) and optionally ``lead``,
words or phrases at least one of which the answer's first sentence must hold (case-insensitive:
``lead = ["yes"]``, ``lead = ["higher sum", "completed first"]``), and ``out_of_scope``, questions
the rules do not answer (the fallback is right). ``battlejudge bench guide`` prints these figures
and the share of answers that lead with a direct answer; the tests hold them above a floor.
"""

from __future__ import annotations

import re
import statistics
import time
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from battlejudge.apps.guide.guide import HIGH, Answer, Guide
from battlejudge.apps.guide.reference import GAMES, WALKTHROUGH_HEADINGS, game_id


@dataclass(frozen=True)
class Case:
    """One question of a set; ``sections`` is empty for an out-of-scope question."""

    game: str
    question: str
    sections: tuple[str, ...]
    lead: tuple[str, ...] = ()
    """Words or phrases, one of which the answer's first sentence must hold (empty: not
    checked)."""

    @property
    def in_scope(self) -> bool:
        """Whether the rules answer this question (it names at least one expected section);
        out-of-scope questions should get the fallback."""
        return bool(self.sections)


@dataclass(frozen=True)
class Outcome:
    """What the guide said to one case, and how long it took."""

    case: Case
    answer: Answer
    seconds: float
    walkthrough: str | None = None
    """The heading of the walkthrough the answer is (``Setup walkthrough``...), if it is one."""

    @property
    def right(self) -> bool:
        """In scope: a section that answers was cited (or the walkthrough the case names as
        one, by its heading). Out of scope: the fallback was given."""
        if self.case.in_scope:
            return (
                self.answer.section in self.case.sections or self.walkthrough in self.case.sections
            )
        return not self.answer.answered

    @property
    def confident_wrong(self) -> bool:
        """Wrong, and said with at least :data:`HIGH` confidence."""
        return not self.right and self.answer.answered and self.answer.score >= HIGH

    @property
    def first_sentence(self) -> str:
        """The answer's first sentence (:func:`first_sentence`)."""
        return first_sentence(self.answer.answer)

    @property
    def leads_directly(self) -> bool:
        """An answer (not the fallback) whose first sentence is not the citation of the rule:
        it leads with a direct answer (or a walkthrough's first step)."""
        return self.answer.answered and not self.answer.answer.startswith(CITATION)

    @property
    def lead_right(self) -> bool | None:
        """Whether the first sentence holds one of the case's ``lead`` words or phrases, as
        whole words and in any case (None: the case names none; the fallback holds none)."""
        if not self.case.lead:
            return None
        first = self.first_sentence if self.answer.answered else ""
        # Whole words: "no" is not found in "nothing", nor "3" in "13".
        return any(
            re.search(rf"(?<!\w){re.escape(w.strip())}(?!\w)", first, re.IGNORECASE)
            for w in self.case.lead
        )


CITATION = "According to the '"
"""How the guide names the section it quotes; an answer that opens with it gives no direct
answer first."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n")


def first_sentence(text: str) -> str:
    """The first sentence of an answer: what comes before the citation of the rule when
    something does, else up to the first full stop or line break."""
    before = text.split(f" {CITATION}", 1)[0] if f" {CITATION}" in text else ""
    if before.strip():
        return before.strip()
    return _SENTENCE_END.split(text.strip(), 1)[0]


@dataclass
class Figures:
    """The measured figures for one game (or all games) of one part of a set."""

    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def in_scope(self) -> list[Outcome]:
        """The outcomes of the questions the rules answer."""
        return [o for o in self.outcomes if o.case.in_scope]

    @property
    def out_of_scope(self) -> list[Outcome]:
        """The outcomes of the questions the rules do not answer."""
        return [o for o in self.outcomes if not o.case.in_scope]

    @property
    def accuracy(self) -> float:
        """Share of in-scope questions whose answer cites a section that answers them."""
        cases = self.in_scope
        return sum(o.right for o in cases) / len(cases) if cases else 1.0

    @property
    def fallback_precision(self) -> float | None:
        """Share of fallbacks given that went to out-of-scope questions (None: none given)."""
        given = [o for o in self.outcomes if not o.answer.answered]
        if not given:
            return None
        return sum(not o.case.in_scope for o in given) / len(given)

    @property
    def fallback_recall(self) -> float | None:
        """Share of out-of-scope questions that got the fallback (None: there were none)."""
        cases = self.out_of_scope
        return sum(o.right for o in cases) / len(cases) if cases else None

    @property
    def confident_wrong(self) -> list[Outcome]:
        """The outcomes answered confidently with a wrong section: the worst kind of answer."""
        return [o for o in self.outcomes if o.confident_wrong]

    @property
    def answered(self) -> list[Outcome]:
        """The outcomes that got an answer, not the fallback (in scope or not)."""
        return [o for o in self.outcomes if o.answer.answered]

    @property
    def direct_share(self) -> float | None:
        """Share of answers (fallbacks aside) whose first sentence is a direct answer (None:
        nothing was answered)."""
        given = self.answered
        return sum(o.leads_directly for o in given) / len(given) if given else None

    @property
    def with_lead(self) -> list[Outcome]:
        """The outcomes of the cases that name ``lead`` words."""
        return [o for o in self.outcomes if o.case.lead]

    @property
    def lead_accuracy(self) -> float | None:
        """Share of the cases naming ``lead`` words whose answer's first sentence holds one
        (None: no case names any)."""
        cases = self.with_lead
        return sum(bool(o.lead_right) for o in cases) / len(cases) if cases else None

    def latency_ms(self, quantile: float) -> float:
        """A quantile (0.5 the median, 1.0 the slowest) of the time per question, in ms."""
        times = sorted(o.seconds for o in self.outcomes)
        if not times:
            return 0.0
        if quantile >= 1.0:
            return 1000.0 * times[-1]
        if quantile == 0.5:
            return 1000.0 * statistics.median(times)
        return 1000.0 * times[min(len(times) - 1, int(quantile * len(times)))]


def load_cases(path: Path) -> list[Case]:
    """The cases of one question-set file, games in :data:`GAMES` order.

    ValueError naming the file and the entry for a malformed set or an unknown game.
    """
    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: not valid TOML: {e}") from None
    cases: list[Case] = []
    for raw_game, table in data.items():
        try:
            game = game_id(raw_game)
        except ValueError as e:
            raise ValueError(f"{path}: [{raw_game}]: {e}") from None
        if not isinstance(table, dict):
            raise ValueError(f"{path}: [{raw_game}] must be a table")
        for i, item in enumerate(table.get("questions", []), 1):
            sections = item.get("sections") if isinstance(item, dict) else None
            question = item.get("q") if isinstance(item, dict) else None
            if (
                not isinstance(question, str)
                or not isinstance(sections, list)
                or not sections
                or not all(isinstance(s, str) for s in sections)
            ):
                raise ValueError(f"{path}: [{raw_game}] question {i} needs q and sections")
            lead = item.get("lead", [])
            if (
                not isinstance(lead, list)
                or not all(isinstance(w, str) and w.strip() for w in lead)
                or ("lead" in item and not lead)
            ):
                raise ValueError(
                    f"{path}: [{raw_game}] question {i}: lead must be a list of words or "
                    f"phrases, got {lead!r}"
                )
            cases.append(Case(game, question, tuple(sections), tuple(lead)))
        for question in table.get("out_of_scope", []):
            if not isinstance(question, str):
                raise ValueError(f"{path}: [{raw_game}] out_of_scope holds a non-string")
            cases.append(Case(game, question, ()))
    return sorted(cases, key=lambda c: GAMES.index(c.game))


def run(
    cases: Iterable[Case],
    guide_for: Callable[[str], Guide],
    clock: Callable[[], float] = time.perf_counter,
) -> list[Outcome]:
    """Ask every case of the guide ``guide_for(game)`` gives, timing each answer and noting
    which answers are walkthroughs (a case may cite one by its heading)."""
    outcomes = []
    for case in cases:
        guide = guide_for(case.game)
        start = clock()
        answer = guide.ask(case.question)
        seconds = clock() - start
        walked = (
            heading
            for kind, heading in WALKTHROUGH_HEADINGS.items()
            if kind in guide.reference.walkthroughs and answer == guide.walkthrough(kind)
        )
        outcomes.append(Outcome(case, answer, seconds, next(walked, None)))
    return outcomes


def by_game(outcomes: Sequence[Outcome]) -> Mapping[str, Figures]:
    """The figures per game, in :data:`GAMES` order, then ``all``."""
    table: dict[str, Figures] = {}
    for game in GAMES:
        mine = [o for o in outcomes if o.case.game == game]
        if mine:
            table[game] = Figures(mine)
    table["all"] = Figures(list(outcomes))
    return table


PARTS: tuple[str, ...] = ("tuned", "heldout", "formal", "fresh8")
"""The parts of the evaluation set the bench knows by name, files ``<part>.toml``, measured
first: the part the guide was tuned on, the held-out part it never was, the formal questions of
the first guide (also tuned on), and fresh8, written for issue 37 with lead words by someone who
never saw the guide's code or data and sealed until one run after the direct answers were built.
Any other ``*.toml`` in the folder is a part too (:func:`discover_parts`), such as a fresh
held-out part written by someone who never saw the guide's data."""


def discover_parts(directory: Path) -> tuple[str, ...]:
    """Every part in ``directory``: the stem of each ``*.toml`` file there.

    The parts of :data:`PARTS` come first, in that order, then the others by name, so a part
    dropped into the folder is measured without any change to the code.
    """
    found = {p.stem for p in directory.glob("*.toml") if p.is_file()}
    return tuple(p for p in PARTS if p in found) + tuple(sorted(found - set(PARTS)))


@dataclass(frozen=True)
class Row:
    """One line of the benchmark: a part and a game (or ``all``) and its figures."""

    part: str
    game: str
    figures: Figures

    def to_json(self) -> dict[str, object]:
        """The row as JSON: the questions counted, top-1 accuracy, the fallback's precision and
        recall, confident wrong answers, the share of answers leading with a direct answer, the
        questions naming lead words and the share whose lead is right, and latencies."""
        f = self.figures
        return {
            "part": self.part,
            "game": self.game,
            "questions": len(f.in_scope),
            "out_of_scope": len(f.out_of_scope),
            "top1_accuracy": round(f.accuracy, 4),
            "fallback_precision": _round(f.fallback_precision),
            "fallback_recall": _round(f.fallback_recall),
            "confident_wrong": len(f.confident_wrong),
            "direct_share": _round(f.direct_share),
            "lead_questions": len(f.with_lead),
            "lead_accuracy": _round(f.lead_accuracy),
            "latency_median_ms": round(f.latency_ms(0.5), 3),
            "latency_max_ms": round(f.latency_ms(1.0), 3),
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def measure(directory: Path, parts: Sequence[str], guide_for: Callable[[str], Guide]) -> list[Row]:
    """The figures of each part in ``directory``, per game and for all games.

    ``parts`` empty means every part found there (:func:`discover_parts`). ValueError naming
    the file when a part's file is missing or malformed, or the folder holds no part at all.
    """
    available = discover_parts(directory)
    if not parts:
        if not available:
            raise ValueError(f"no question set (*.toml) in {str(directory)!r}")
        parts = available
    rows: list[Row] = []
    for part in parts:
        path = directory / f"{part}.toml"
        if not path.is_file():
            listed = ", ".join(available) or "none"
            raise ValueError(f"no question set {str(path)!r} (parts there: {listed})")
        outcomes = run(load_cases(path), guide_for)
        rows.extend(Row(part, game, figures) for game, figures in by_game(outcomes).items())
    return rows


@dataclass(frozen=True)
class GuideBench:
    """``battlejudge bench guide``'s figures: how the guides ranked (``retrieval``), each
    game's guide build time in ms (timed on its own, the first time the game is asked), and
    the rows of :func:`measure`."""

    retrieval: str
    build_ms: dict[str, float]
    rows: list[Row]


def bench_guides(directory: Path, parts: Sequence[str], keywords_only: bool) -> GuideBench:
    """:func:`measure` on each game's guide, built once (warm latency per question), with
    the embedding model unless ``keywords_only``. ValueError as :func:`measure` says."""
    from battlejudge.apps.guide import load
    from battlejudge.apps.guide.embed import shared_embedder

    embedder = None if keywords_only else shared_embedder()
    guides: dict[str, Guide] = {}
    build_ms: dict[str, float] = {}

    def guide_for(game: str) -> Guide:
        if game not in guides:
            start = time.perf_counter()
            guides[game] = Guide(load(game), embedder=embedder)
            build_ms[game] = 1000 * (time.perf_counter() - start)
        return guides[game]

    rows = measure(directory, parts, guide_for)
    model = "keywords only" if embedder is None else "keywords + sentence vectors"
    return GuideBench(model, build_ms, rows)
