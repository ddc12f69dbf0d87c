"""The rules references the guide reads: one Markdown file per game in ``data/``.

File format (see ``data/battleline.md``): TOML front matter between ``+++`` lines, then Markdown.

- ``## Name`` starts a section and ``### Name`` a subsection; both are cited by their name.
- A ``###`` under one of the front matter's ``card_groups`` is a card entry; under
  ``ruling_group`` it is a ruling (battlejudge's decision where the rules text is silent).
- ``## Setup walkthrough`` and ``## First turn walkthrough`` hold numbered steps followed by one
  paragraph, the follow-up question; they are not searched.
- Each paragraph or list item is one passage: the unit the guide quotes.

The front matter also gives ``title``, ``setup_section`` and ``turn_section`` (the rules sections
the walkthroughs come from), ``stopwords``, ``synonyms`` (groups, first member canonical) and
``card_names`` (section name -> other names, e.g. the other theme's), ``acting_cards`` (the
cards played on another card: Traitor, Deserter, Redeploy), ``open_sections`` (the sections that
say what the rules text leaves open, such as Force Duel's "What the Rules Leave Open") and
``same_rules_as`` (the id of a
game this one re-themes, whose name a question about this one may use: Nine Circles' Battle Line).

Beside each ``<id>.md``, ``<id>.toml`` holds the questions players ask, in the project's own
words: a list of ``[[faq]]`` tables, each with the ``section`` that answers it, ``questions``
(ways to ask it), an optional ``answer`` (the short direct answer the guide leads with) and an
optional ``quote`` (words of the one sentence of that section that answers it). A top-level
``out_of_scope`` list holds questions about this game its rules leave unanswered though another
game's rules answer them (how long a game takes, who moves first): the guide's examples of what
to fall back on for this game alone, beside the ones every game shares (``data/out-of-scope.toml``).
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Literal, TypeAlias

from battlejudge.apps.guide.text import plain
from battlejudge.solver.errors import InputError

SectionKind: TypeAlias = Literal["rules", "card", "ruling"]
WalkthroughKind: TypeAlias = Literal["setup", "turn"]

GAMES: tuple[str, ...] = (
    "battleline",
    "nine-circles",
    "battleplan",
    "lines-of-battle",
    "force-duel",
)
"""Game ids, in the order battlejudge lists them; each has ``data/<id>.md``."""

WALKTHROUGH_HEADINGS: Mapping[WalkthroughKind, str] = {
    "setup": "Setup walkthrough",
    "turn": "First turn walkthrough",
}

_FRONT = re.compile(r"\A\+\+\+\n(.*?)\n\+\+\+\n", re.S)
_HEADING = re.compile(r"^(#{1,3})\s+(.+?)\s*$")
_ITEM = re.compile(r"^(?:[-*]|\d+\.)\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")
_EMPHASIS = re.compile(r"\*\*|__|`|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])")


class UnknownGameError(InputError):
    """A game name the guide has no reference for."""


@dataclass(frozen=True)
class Section:
    """A named part of a reference; ``passages`` are its paragraphs and list items, in order."""

    name: str
    kind: SectionKind
    group: str | None
    passages: tuple[str, ...]
    names: tuple[str, ...] = ()
    """For a card: every name it goes by (its own first), under both themes."""

    @property
    def text(self) -> str:
        """The section's passages joined into one text."""
        return " ".join(self.passages)


@dataclass(frozen=True)
class Walkthrough:
    """Numbered steps and the follow-up question the guide asks after them."""

    kind: WalkthroughKind
    section: str
    steps: tuple[str, ...]
    follow_up: str


@dataclass(frozen=True)
class Faq:
    """One fact of a section and the ways players ask for it (``data/<game>.toml``)."""

    section: str
    questions: tuple[str, ...]
    answer: str | None = None
    """The direct answer, one short sentence, or None when the quoted rule is the answer."""
    quote: str | None = None
    """Words of the sentence of ``section`` that answers, or None to pick it by similarity."""


@dataclass(frozen=True, eq=False)
class Reference:
    """A game's rules reference, parsed and checked (compared by identity: one per game)."""

    game: str
    title: str
    intro: tuple[str, ...]
    sections: tuple[Section, ...]
    walkthroughs: Mapping[WalkthroughKind, Walkthrough]
    synonyms: tuple[tuple[str, ...], ...] = ()
    stopwords: tuple[str, ...] = ()
    faqs: tuple[Faq, ...] = ()
    acting_cards: frozenset[str] = frozenset()
    """Cards played on another card (Battle Line's Traitor, Deserter and Redeploy): named with a
    second card, their entry (or a ruling on their targets) answers, not the target's entry."""
    open_sections: frozenset[str] = frozenset()
    """Sections that say what the rules text leaves open (``open_sections`` in the front matter):
    a question near one of them may ask what the rules never settle, so an answer from another
    section is not confidently right (:data:`~battlejudge.apps.guide.retrieve.OPEN_MARGIN`)."""
    out_of_scope: tuple[str, ...] = ()
    """Questions about this game its rules do not answer (``out_of_scope`` in ``<id>.toml``),
    beside the examples every game shares (:func:`out_of_scope_questions`)."""
    _by_name: Mapping[str, Section] = field(default_factory=dict, repr=False, compare=False)

    def section(self, name: str) -> Section:
        """The section called ``name`` (exact heading text); KeyError if there is none."""
        return self._by_name[name]

    @property
    def cards(self) -> tuple[Section, ...]:
        """The sections that explain one card each."""
        return tuple(s for s in self.sections if s.kind == "card")

    @property
    def rulings(self) -> tuple[Section, ...]:
        """The sections taken from the project's rulings (docs/rulings.md)."""
        return tuple(s for s in self.sections if s.kind == "ruling")


def game_id(name: str) -> str:
    """The canonical id for a game name, leniently (``Nine Circles``, ``nine_circles``...).

    Raises UnknownGameError naming the value and the choices.
    """
    key = plain(name).replace(" ", "")
    for game in GAMES:
        if key == game.replace("-", ""):
            return game
    raise UnknownGameError(f"unknown game {name!r} (choose from {', '.join(GAMES)})")


@cache
def load(game: str, borrow: bool = True) -> Reference:
    """The reference of ``game`` (any spelling :func:`game_id` accepts), from the package data;
    without ``borrow``, with only the ways of asking written for it (see :func:`with_faqs`)."""
    gid = game_id(game)
    data = resources.files("battlejudge.apps.guide").joinpath("data")
    reference = parse(data.joinpath(f"{gid}.md").read_text(encoding="utf-8"), gid)
    faq_file = data.joinpath(f"{gid}.toml")
    if not faq_file.is_file():
        return reference
    return with_faqs(reference, faq_file.read_text(encoding="utf-8"), borrow)


@cache
def front_matter(game: str) -> Mapping[str, Any]:
    """The TOML front matter of ``data/<game>.md`` alone (``game`` an id of :data:`GAMES`),
    read without parsing the rest of the file: enough to name the other games cheaply."""
    data = resources.files("battlejudge.apps.guide").joinpath("data")
    m = _FRONT.match(data.joinpath(f"{game}.md").read_text(encoding="utf-8"))
    if not m:
        raise ValueError(f"guide data for {game!r}: missing +++ TOML front matter")
    return tomllib.loads(m.group(1))


def other_games(game: str) -> tuple[str, ...]:
    """The titles of the games whose rules are not ``game``'s: every game of :data:`GAMES` but
    ``game`` itself and the games that share its rules (``same_rules_as`` either way: Battle
    Line and Nine Circles). A question naming one of them is about that game, not this one."""
    gid = game_id(game)
    same = {gid, str(front_matter(gid).get("same_rules_as", gid))}
    same |= {g for g in GAMES if front_matter(g).get("same_rules_as") == gid}
    return tuple(str(front_matter(g).get("title", g)) for g in GAMES if g not in same)


OUT_OF_SCOPE_FILE = "out-of-scope.toml"


@cache
def out_of_scope_questions() -> tuple[str, ...]:
    """Questions no game's rules answer (``data/out-of-scope.toml``), shared by every game: the
    guide's examples of what to fall back on. ValueError naming the file if it is malformed."""
    source = resources.files("battlejudge.apps.guide").joinpath("data", OUT_OF_SCOPE_FILE)
    questions = tomllib.loads(source.read_text(encoding="utf-8")).get("questions")
    if not isinstance(questions, list) or not all(
        isinstance(q, str) and q.strip() for q in questions
    ):
        raise ValueError(f"{OUT_OF_SCOPE_FILE}: 'questions' must be a list of non-empty strings")
    return tuple(questions)


def sentences(text: str) -> list[str]:
    """A passage cut into sentences (after ``.``, ``!`` or ``?`` and a space before a capital)."""
    return [s for s in _SENTENCE_END.split(text) if s]


def with_faqs(reference: Reference, source: str, borrow: bool = True) -> Reference:
    """``reference`` with the questions of a ``<game>.toml`` file, checked against its sections.

    With ``borrow``, the ways of asking its ``[borrow]`` table takes from another game are
    added (:func:`_borrowed`). ValueError naming the game and the entry when a section is
    unknown, an entry has no question, or a ``quote`` matches no sentence (or several) of its
    section.
    """
    where = f"guide questions for {reference.game!r}"
    data = tomllib.loads(source)
    out_of_scope = _str_list(data, "out_of_scope", where)
    if not all(q.strip() for q in out_of_scope):
        raise ValueError(f"{where}: 'out_of_scope' holds an empty question")
    raw = data.get("faq", [])
    if not isinstance(raw, list):
        raise ValueError(f"{where}: 'faq' must be a list of tables")
    faqs: list[Faq] = []
    for i, entry in enumerate(raw, 1):
        if not isinstance(entry, dict):
            raise ValueError(f"{where}: faq {i} is not a table")
        name = entry.get("section")
        if not isinstance(name, str) or name not in reference._by_name:
            raise ValueError(f"{where}: faq {i} names unknown section {name!r}")
        questions = _str_list(entry, "questions", f"{where}, faq {i}")
        if not questions:
            raise ValueError(f"{where}: faq {i} ({name!r}) has no questions")
        answer, quote = entry.get("answer"), entry.get("quote")
        for key, value in (("answer", answer), ("quote", quote)):
            if value is not None and not (isinstance(value, str) and value.strip()):
                raise ValueError(f"{where}: faq {i} {key!r} must be a non-empty string")
        if quote is not None:
            section = reference._by_name[name]
            hits = [s for p in section.passages for s in sentences(p) if quote in s]
            if len(hits) != 1:
                found = "no" if not hits else "more than one"
                raise ValueError(
                    f"{where}: faq {i} quote {quote!r} matches {found} sentence of {name!r}"
                )
        faqs.append(Faq(name, questions, answer, quote))
    if borrow:
        faqs.extend(_borrowed(reference, data.get("borrow"), where))
    return dataclasses.replace(reference, faqs=tuple(faqs), out_of_scope=out_of_scope)


def _borrowed(reference: Reference, table: object, where: str) -> list[Faq]:
    """The ways of asking a ``[borrow]`` table takes from the game this one re-themes (or that
    re-themes it), as written for that game.

    ``[borrow]`` names a ``game`` and ``sections``, a table from a section of this game to the
    section of that game that says the same rule (Nine Circles' "Ruling 8: Mano a Mano! and
    Mud together" is Battle Line's "Ruling 8: Fog and Mud together"). Every way of asking of
    that section becomes a way of asking of this one, with no direct answer or quote of its
    own: a question players ask of one theme is asked of the other, and the synonyms and card
    names read the other theme's words. ValueError naming the entry for an unknown game or
    section.
    """
    if table is None:
        return []
    if not isinstance(table, dict) or not isinstance(table.get("sections"), dict):
        raise ValueError(f"{where}: 'borrow' must be a table with 'game' and 'sections'")
    # Only what was written for the other game: two games may borrow from each other.
    other = load(str(table.get("game", "")), borrow=False)
    sections: dict[str, object] = table["sections"]
    borrowed: list[Faq] = []
    for mine, theirs in sections.items():
        if mine not in reference._by_name:
            raise ValueError(f"{where}: borrow names unknown section {mine!r}")
        if not isinstance(theirs, str) or theirs not in other._by_name:
            raise ValueError(f"{where}: borrow names unknown {other.game} section {theirs!r}")
        borrowed.extend(Faq(mine, f.questions) for f in other.faqs if f.section == theirs)
    return borrowed


def clean(text: str) -> str:
    """Markdown inline marks removed, whitespace collapsed: the text as the guide says it."""
    return " ".join(_EMPHASIS.sub("", text).split())


def _blocks(lines: list[str]) -> list[tuple[bool, str]]:
    """Paragraphs and list items of a section body as (is_list_item, text)."""
    out: list[tuple[bool, str]] = []
    current: list[str] = []
    is_item = False

    def flush() -> None:
        nonlocal current
        if current:
            out.append((is_item, clean(" ".join(current))))
        current = []

    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("<!--"):
            flush()
            continue
        m = _ITEM.match(line)
        if m:
            flush()
            is_item = True
            current = [line[m.end() :]]
        else:
            if not current:
                is_item = False
            current.append(line)
    flush()
    return out


def _str_list(meta: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = meta.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where}: front matter {key!r} must be a list of strings")
    return tuple(value)


def parse(source: str, game: str) -> Reference:
    """Parse one reference file; ValueError naming the game and the problem if it is malformed."""
    where = f"guide data for {game!r}"
    m = _FRONT.match(source)
    if not m:
        raise ValueError(f"{where}: missing +++ TOML front matter")
    meta = tomllib.loads(m.group(1))
    body = source[m.end() :].splitlines()

    title = str(meta.get("title", game))
    groups = (
        set(_str_list(meta, "card_groups", where)),
        str(meta.get("ruling_group", "Rulings")),
    )
    raw_names = meta.get("card_names", {})
    if not isinstance(raw_names, dict):
        raise ValueError(f"{where}: front matter 'card_names' must be a table")
    synonyms_raw = meta.get("synonyms", [])
    if not isinstance(synonyms_raw, list) or not all(
        isinstance(g, list) and all(isinstance(w, str) for w in g) for g in synonyms_raw
    ):
        raise ValueError(f"{where}: front matter 'synonyms' must be a list of lists of strings")

    intro, sections, walkthroughs = _sections(_chunks(body, title), groups, meta, raw_names, where)
    by_name = _checked_names(sections, walkthroughs, raw_names, where)
    card_synonyms = tuple(c.names for c in sections if c.kind == "card")
    acting = frozenset(_str_list(meta, "acting_cards", where))
    card_names = {s.name for s in sections if s.kind == "card"}
    if acting - card_names:
        raise ValueError(f"{where}: acting_cards {sorted(acting - card_names)} are not cards")
    open_sections = frozenset(_str_list(meta, "open_sections", where))
    if open_sections - set(by_name):
        raise ValueError(
            f"{where}: open_sections {sorted(open_sections - set(by_name))} are not sections"
        )
    return Reference(
        game=game,
        title=title,
        intro=tuple(intro),
        sections=tuple(sections),
        walkthroughs=walkthroughs,
        synonyms=(*card_synonyms, *(tuple(g) for g in synonyms_raw)),
        stopwords=_str_list(meta, "stopwords", where),
        acting_cards=acting,
        open_sections=open_sections,
        _by_name=by_name,
    )


def _chunks(body: list[str], title: str) -> list[tuple[int, str, list[str]]]:
    """The body split at its headings into (level, heading, lines); level 1 is the intro."""
    chunks: list[tuple[int, str, list[str]]] = [(1, title, [])]
    for line in body:
        h = _HEADING.match(line)
        if h:
            chunks.append((len(h.group(1)), clean(h.group(2)), []))
        else:
            chunks[-1][2].append(line)
    return chunks


def _sections(
    chunks: list[tuple[int, str, list[str]]],
    groups: tuple[set[str], str],
    meta: Mapping[str, Any],
    raw_names: Mapping[str, Any],
    where: str,
) -> tuple[list[str], list[Section], dict[WalkthroughKind, Walkthrough]]:
    """The intro's paragraphs, the sections and the walkthroughs. Level-2 headings are groups
    (rules sections themselves); the level-3 sections of ``groups`` (the card groups, the
    ruling group) are cards and rulings. ValueError naming an empty card or ruling, a
    malformed walkthrough or a card's bad ``card_names``."""
    card_groups, ruling_group = groups
    intro: list[str] = []
    sections: list[Section] = []
    walkthroughs: dict[WalkthroughKind, Walkthrough] = {}
    headings_wt = {v: k for k, v in WALKTHROUGH_HEADINGS.items()}
    group: str | None = None
    for level, name, lines in chunks:
        blocks = _blocks(lines)
        if level == 1:
            intro.extend(text for _, text in blocks)
            continue
        if level == 2:
            group = name
            if name in headings_wt:
                kind = headings_wt[name]
                walkthroughs[kind] = _walkthrough(kind, name, blocks, meta, where)
                continue
            parent: str | None = None
            kind_s: SectionKind = "rules"
        else:
            parent = group
            kind_s = (
                "card" if group in card_groups else "ruling" if group == ruling_group else "rules"
            )
        passages = tuple(text for _, text in blocks)
        if not passages and kind_s != "rules":
            raise ValueError(f"{where}: section {name!r} is empty")
        names: tuple[str, ...] = ()
        if kind_s == "card":
            extra = raw_names.get(name, [])
            if not isinstance(extra, list) or not all(isinstance(x, str) for x in extra):
                raise ValueError(f"{where}: card_names[{name!r}] must be a list of strings")
            names = (name, *extra)
        if passages:
            sections.append(Section(name, kind_s, parent, passages, names))
    return intro, sections, walkthroughs


def _walkthrough(
    kind: WalkthroughKind,
    name: str,
    blocks: list[tuple[bool, str]],
    meta: Mapping[str, Any],
    where: str,
) -> Walkthrough:
    """The walkthrough under heading ``name``: its numbered steps, then one question."""
    steps = tuple(text for item, text in blocks if item)
    follow = [text for item, text in blocks if not item]
    if not steps or len(follow) != 1 or not follow[0].endswith("?"):
        raise ValueError(f"{where}: {name!r} needs numbered steps, then one question")
    key = f"{kind}_section"
    return Walkthrough(kind, str(meta.get(key, "")), steps, follow[0])


def _checked_names(
    sections: list[Section],
    walkthroughs: dict[WalkthroughKind, Walkthrough],
    raw_names: Mapping[str, Any],
    where: str,
) -> dict[str, Section]:
    """The sections by name; ValueError for two sections of one name, ``card_names`` of no
    card, a walkthrough's section that is none, a walkthrough missing, or a card name used
    twice."""
    by_name: dict[str, Section] = {}
    for s in sections:
        if s.name in by_name:
            raise ValueError(f"{where}: two sections are called {s.name!r}")
        by_name[s.name] = s
    unknown = set(raw_names) - {s.name for s in sections if s.kind == "card"}
    if unknown:
        raise ValueError(f"{where}: card_names for unknown cards {sorted(unknown)}")
    for wt in walkthroughs.values():
        if wt.section not in by_name:
            raise ValueError(f"{where}: {wt.kind}_section {wt.section!r} is not a section")
    missing = set(WALKTHROUGH_HEADINGS) - set(walkthroughs)
    if missing:
        raise ValueError(f"{where}: missing walkthrough(s) {sorted(missing)}")
    seen: dict[str, str] = {}
    for card in (s for s in sections if s.kind == "card"):
        for n in card.names:
            key = plain(n)
            if seen.setdefault(key, card.name) != card.name:
                raise ValueError(f"{where}: card name {n!r} is used twice")
    return by_name
