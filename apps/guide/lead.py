"""The one-sentence direct answer an answer leads with, built from the cited section's own words.

The guide writes no text of its own (issue 37, part 5): a direct answer is one sentence of the
section that answers, chosen and trimmed, or two joined into one, with at most a fixed ``Yes:`` or
``No:`` in front. What is chosen depends on what the question asks (:func:`question_kind`):

- ``difference`` ("what is the difference between a Wedge and a Phalanx?", "Fog vs Mud"): the
  section's definitions of both things (:func:`definition`), joined with a semicolon;
- ``define`` ("what is a Wedge?", "what does Envelopment mean?"): the thing's definition;
- ``wins`` ("same formation, who wins?", "who gets the flag on a tie?"): the sentence that decides,
  and the section's sentence on ties when it is another;
- ``yesno`` ("does the Leader count as a 10?"): the sentence that answers, with ``Yes:`` or ``No:``
  in front only when its reading (:func:`polarity`: ``No`` when it negates what is asked) and
  the project's written answer to that fact agree;
- anything else: the sentence that answers.

Examples after the rule (", for example green 6, 7 and 8", a colon followed by "a green Battalion
Order of 2, 6 and 9 ...") are trimmed off: the quote that follows still holds them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

QuestionKind = Literal["difference", "define", "wins", "yesno", "other"]

_ARTICLE = r"(?:(?:a|an|the|one|my|your)\s+)?"
_THING = r"([a-z0-9][a-z0-9' !-]*?)"
_END = r"\s*(?:\?|$|,|\.|\bin\b|\bwhen\b|\bexactly\b|\bagain\b)"

_DIFFERENCE = (
    re.compile(
        rf"\bdiff(?:erence|erences|s)?\s+(?:between|of)\s+{_ARTICLE}{_THING}\s+(?:and|&|vs\.?|versus)\s+{_ARTICLE}{_THING}{_END}"
    ),
    re.compile(rf"\b{_THING}\s+(?:vs\.?|versus)\s+{_ARTICLE}{_THING}{_END}"),
    re.compile(
        rf"\bhow (?:is|are|does|do)\s+{_ARTICLE}{_THING}\s+differ(?:ent)?\s+(?:from|to|than)\s+"
        rf"{_ARTICLE}{_THING}{_END}"
    ),
    re.compile(rf"\bcompare\s+{_ARTICLE}{_THING}\s+(?:and|with|to)\s+{_ARTICLE}{_THING}{_END}"),
)
"""Questions asking how two things differ; groups 1 and 2 are the things."""

_DEFINE = (
    re.compile(
        rf"^(?:so\s+|and\s+|ok\s+|okay\s+)?what(?:'s| is|s)\s+(?!in\b|on\b|at\b|inside\b|with\b)"
        rf"{_ARTICLE}{_THING}{_END}"
    ),
    re.compile(rf"\bwhat (?:does|do)\s+{_ARTICLE}{_THING}\s+mean\b"),
    re.compile(rf"\b(?:define|definition of|meaning of)\s+{_ARTICLE}{_THING}{_END}"),
)
"""Questions asking what one thing is; group 1 is the thing."""

_WINS = re.compile(
    r"\bwho(?:'s| is)?\s+(?:wins?|won|gets?|takes?|claims?|keeps?|is the winner)\b"
    r"|\bwhich\s+(?:\w+\s+)?(?:wins?|is stronger|is better|beats|takes|gets)\b"
    r"|\bwinner\b|\bties?\b|\btied\b|\btiebreak|\b(?:are|is|roll|rolls) (?:equal|the same)\b"
)
"""Questions asking who wins or what decides (a tie included)."""

_TIE = re.compile(r"\b(?:ties?|tied|equal|the same total)\b")
"""A sentence on what happens when the two sides are level."""

_AUX = frozenset(
    "do does did can could is are was were may might must will would should shall has have am "
    "dont doesnt cant cannot isnt arent wont wouldnt shouldnt couldnt mustnt didnt".split()
)
_LEAD_IN = frozenset(
    "so ok okay hey hi hello wait um uh and also but quick question q pls please then yo "
    "alright right well btw".split()
)
_WH = frozenset("what whats who whos whose which when where why how".split())

_NEGATIONS = re.compile(
    r"\b(?:not|never|no|none|nothing|nobody|neither|nor|cannot|only|without"
    r"|cant|dont|doesnt|isnt|arent|wont|didnt|couldnt|shouldnt|wouldnt|mustnt|havent|hasnt)\b"
    r"|n't\b|\bat most\b"
)
"""Words that negate or restrict what a sentence says ("cannot", "only one", "at most three")."""

POLARITY_COVERAGE = 0.6
"""Share of a yes/no question's terms (by idf) the answering clause must hold for a No to lead."""

YES_COVERAGE = 0.9
"""Share the clause must hold for a Yes: a clause that says nothing against the question but
leaves out part of it ("first the Movement phase, then the Combat phase" for "can I attack
first and then move?") is no yes."""

_LIGHT_VERBS = ("count", "counts", "use", "used", "play", "played", "get", "make", "work")
"""Verbs that say little of what a yes/no question asks: a clause need not hold them."""

_CONJUNCTION = re.compile(r"^(?:and|but|yet|so|though|while)\s+", re.IGNORECASE)
"""A clause cut at a comma before a conjunction starts with it; the lead drops it."""

_CLAUSE = re.compile(r";|:\s|,\s+(?=(?:and|but|yet|so|though|while)\s)")
"""Where a sentence is cut into clauses: semicolons, colons, and a comma before a conjunction."""

_NEGATED_OPENING = re.compile(
    r"^(?:\W*(?:so|ok|okay|wait|but|and|then|hey|um)\s+)*"
    r"(?:\w+n't|cant|dont|doesnt|isnt|arent|wont|didnt|couldnt|shouldnt|wouldnt|mustnt|havent"
    r"|hasnt|cannot|\w+ (?:i|you|we|he|she|it|they) not)\b"
)
"""A question opening with a negated auxiliary ("can't I ...", "don't we ...", "can I not ..."):
it asks the same as without the negation."""

_EXAMPLE = re.compile(
    r"(?:,|;|:)?\s*\(?\b(?:for example|for instance|e\.g\.|such as)\b.*$|\s*\(sum \d+\)",
    re.IGNORECASE,
)
"""An example (and what follows it) or a worked sum ("(sum 17)"): illustration, not rule."""

_EXAMPLE_OPENING = re.compile(r"^(?:For example|For instance|E\.g\.),?\s+", re.IGNORECASE)

_COLON_EXAMPLE = re.compile(r":\s+(?:a|an)\s+\w+.*\d.*$")
"""A colon followed by an instance with numbers ("wins: a green Battalion Order of 2, 6 and 9
(sum 17) is stronger..."): the rule is before it."""

_DEFINITION = re.compile(
    r"^(?:An?|The)?\s*(?P<subject>[A-Z0-9][^,:;()]*?)\s*(?:\([^)]*\)\s*)?"
    r"(?:is|are|means|counts as)\b"
)
"""A sentence that says what its subject is: "A Wedge is ...", "Fog (Mano a Mano! in Nine
Circles) is ...", "The Flags are ..."."""

_LEANS = re.compile(
    r"(?:it|its|they|them|their|this|that|these|those|he|his|she|then"
    r"|may|must|can|cannot|will|is|are)\b",
    re.I,
)
"""A clause opening like this leans on what came before it (a pronoun, or a verb whose subject
came before: "may not pass through other units") and cannot stand alone."""

_KEEP_CAPITAL = re.compile(r"^(?:I\b|[A-Z][a-z]*[A-Z]|[A-Z]{2,})")

_COMMON_FIRST = frozenset(
    "a an the when if each every both any you your in at on once after before only no this "
    "that it its they their there these those whoever whichever as to from with for all "
    "neither either nobody none nothing whenever while until unless he she we his her "
    "then".split()
)
"""First words a joined or prefixed sentence may lower-case (never a name: "Fog", "Leader")."""


@dataclass(frozen=True)
class Asked:
    """What a question asks, as far as its form tells: its kind and the things it names."""

    kind: QuestionKind
    things: tuple[str, ...] = ()


def _plain(question: str) -> str:
    text = question.lower().replace("\u2019", "'")
    return re.sub(r"\s+", " ", text).strip()


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.replace("'", ""))


def is_yes_no(question: str) -> bool:
    """Whether ``question`` asks yes or no: it opens with an auxiliary verb ("does", "can",
    "is"...), after any lead-in ("so", "wait"), or a clause after a comma does ("if he has two
    cards there, can I claim?"), and it is not a wh-question."""
    words = _words(_plain(question))
    while words and words[0] in _LEAD_IN:
        words = words[1:]
    if not words or words[0] in _WH or "or" in words or words[1:2] == ["there"]:
        # "is it the back row or one square?" asks which, not whether; "is there a variant?"
        # is answered by the variant, not by a Yes the rules never say
        return False
    if words[0] in _AUX:
        return True
    for clause in re.split(r"[,;:]", _plain(question))[1:]:
        first = _words(clause)[:1]
        if first and first[0] in _AUX:
            return True
    return False


def question_kind(question: str) -> Asked:
    """What ``question`` asks for (see the module docstring), with the things it names."""
    text = _plain(question)
    for pattern in _DIFFERENCE:
        m = pattern.search(text)
        if m:
            return Asked("difference", (m.group(1).strip(), m.group(2).strip()))
    yes_no = is_yes_no(question)
    if not yes_no:
        for pattern in _DEFINE:
            m = pattern.search(text)
            if m and len(_words(m.group(1))) <= 4:
                return Asked("define", (m.group(1).strip(),))
    if _WINS.search(text) and not yes_no:
        return Asked("wins")
    if yes_no:
        return Asked("yesno")
    return Asked("other")


def trim(sentence: str) -> str:
    """``sentence`` without its examples (see :data:`_EXAMPLE`), ending with a full stop; a
    sentence that is an example ("For example, a Wedge ... beats a Phalanx of three 10s.") loses
    only its opening words."""
    opening = _EXAMPLE_OPENING.match(sentence)
    if opening:
        rest = sentence[opening.end() :]
        return rest[:1].upper() + rest[1:]
    text = _COLON_EXAMPLE.sub("", sentence)
    text = _EXAMPLE.sub("", text).strip()
    text = text.rstrip(" ,;:")
    if not text:
        text = sentence.strip()
    return text if text.endswith((".", "!", "?")) else f"{text}."


def decapitalise(
    sentence: str, context: str = "", is_name: Callable[[str], bool] = lambda word: False
) -> str:
    """``sentence`` with its first letter in lower case, to follow a colon or a semicolon, when
    its first word is a common word, or a word that ``context`` (the section's text) never
    writes with a capital inside a sentence ("Values", "Picture"); never a name such as "Fog"
    or "Leader", nor a word ``is_name`` says is one ("Scout"), nor a title ("Battle Line")."""
    words = sentence.split(" ", 2)
    first = words[0]
    if _KEEP_CAPITAL.match(first) or not first[:1].isupper() or is_name(first):
        return sentence
    if len(words) > 1 and words[1][:1].isupper() and first.lower() not in _COMMON_FIRST:
        return sentence  # a title of two capitalised words
    word = re.escape(first.rstrip(",:;"))
    named = context and re.search(rf"(?<![.!?:]\s)(?<!^)(?<=\s|\(){word}\b", context)
    if first.lower() in _COMMON_FIRST or (context and not named):
        return sentence[:1].lower() + sentence[1:]
    return sentence


def join(first: str, second: str) -> str:
    """Two sentences as one: ``first; second`` (full stops handled)."""
    return f"{first.rstrip('.!?')}; {decapitalise(second)}"


_ASIDE = re.compile(
    r"\b(?:that|which|who)\s+(?:\w+\s+){0,2}?(?:not|never|\w+n't|cannot)\b"
    r"|,?\s*\b(?:since|because|as long as|unless)\b.*$"
    r"|\bif\b[^,]*,|\bwhether or not\b"
)
"""What a negation in a sentence may sit in without negating what the sentence says: a
relative clause ("Tactics cards that have not been played yet cannot stop a claim": the
cards are the unplayed ones), a reason after it ("... since nothing in the rules forbids
it") or a condition before it ("if neither player could do anything but pass, the game
ends")."""


_PARENTHESIS = re.compile(r"\([^)]*\)")
"""An aside in brackets ("(red, at most two per piece in a round)") negates nothing asked."""


def negations(text: str) -> int:
    """How many negating or restricting words ``text`` holds (:data:`_NEGATIONS`), those in a
    relative clause or a reason (:data:`_ASIDE`) aside."""
    plain_text = _ASIDE.sub(" ", _PARENTHESIS.sub(" ", text.lower().replace("\u2019", "'")))
    return len(_NEGATIONS.findall(plain_text))


def answering_clause(
    question: str,
    sentence: str,
    terms: Callable[[str], Sequence[str]],
    weight: Callable[[str], float] = lambda term: 1.0,
) -> str:
    """The clause of ``sentence`` (:data:`_CLAUSE`) that holds the most of ``question``'s terms
    by ``weight``, the first of equals."""
    wanted = set(terms(question))
    clauses = [c.strip() for c in _CLAUSE.split(sentence) if c.strip()] or [sentence]
    return max(clauses, key=lambda c: sum(weight(t) for t in wanted & set(terms(c))))


_NUMBER_WORDS = dict(
    zip(
        "zero one two three four five six seven eight nine ten eleven twelve".split(),
        range(13),
        strict=True,
    )
)


_NUMBER_TERMS = frozenset({*_NUMBER_WORDS, "zznumber"})
"""Number words, and the term the analyser adds for every number."""


def _numbers(text: str) -> set[int]:
    """The numbers ``text`` names, in digits or in words up to twelve."""
    found = {int(d) for d in re.findall(r"\b\d+\b", text)}
    return found | {_NUMBER_WORDS[w] for w in _words(_plain(text)) if w in _NUMBER_WORDS}


def polarity(
    question: str,
    sentence: str,
    terms: Callable[[str], Sequence[str]],
    weight: Callable[[str], float] = lambda term: 1.0,
    names: frozenset[str] = frozenset(),
) -> Literal["Yes", "No"] | None:
    """``No`` when ``sentence`` negates what ``question`` asks, ``Yes`` when it says it in so
    many words, None otherwise: then the sentence may answer, but no Yes or No is put in its
    mouth.

    Only the clause of ``sentence`` (:func:`answering_clause`) that holds the most of the
    question's ``terms``, by ``weight`` (the guide's idf), counts: "Values never wrap around: 9,
    10 and 1 are not consecutive" answers "do values wrap around?" with its first clause. It
    must hold :data:`POLARITY_COVERAGE` of the question's terms to say No, and
    :data:`YES_COVERAGE` to say Yes, and every term of ``names`` (the cards' names) the question
    uses: "can Traitor steal his Companion Cavalry?" is not answered Yes by "Traitor ... steals a
    troop". Light verbs ("count as", "use", "play") and numbers are not among the terms a clause
    must hold, nor, to say No, words the rules never use ("haven't" is "haven"); a Yes needs
    them too, so a question about what the rules never mention gets none.

    Any negation left in the clause says no ("only orthogonally, never diagonally" is one no).
    A negation in the question's body (not its "only") cancels one of the clause's ("tactics
    that haven't been played" against "Tactics cards that have not been played yet cannot"
    leaves one); one that opens the question ("can't I ...?") asks the same as without it. A
    Yes needs the numbers the question names, if the clause names any: "can three people
    play?" is not answered Yes by "a game for two players".
    """
    text = _plain(question)
    light = {t for w in _LIGHT_VERBS for t in terms(w)}
    unseen = weight("zzunseen")  # what a word the rules never use weighs: no clause holds it
    every = {t for t in terms(question) if t not in light and t not in _NUMBER_TERMS}
    wanted = {t for t in every if weight(t) < unseen and not t.isdigit()}
    clause = answering_clause(question, sentence, terms, weight)
    held = sum(weight(t) for t in wanted & set(terms(clause)))
    if held < POLARITY_COVERAGE * sum(weight(t) for t in wanted):
        return None
    if (wanted & names) - set(terms(clause)):
        return None
    asked_numbers, said_numbers = _numbers(question), _numbers(clause)
    different = bool(said_numbers) and not asked_numbers & said_numbers
    # a player's "only" sets the scene ("his side only has one card"), it asks nothing
    asked = negations(re.sub(r"\bonly\b", " ", text)) - (1 if _NEGATED_OPENING.match(text) else 0)
    said = negations(clause)
    # A negation of the question's own cancels one of the sentence's; never the other way: the
    # sentence must negate for the answer to be No ("is it 2 player only?" is not answered No
    # by "a game for two players").
    left = said - min(asked, said)
    if left > 0:
        # any negation left says no: "Units move only orthogonally, never diagonally" is two
        # words saying one no, where counting them two by two would make a yes
        return "No"
    if held < YES_COVERAGE * sum(weight(t) for t in every if not t.isdigit()):
        return None  # a Yes needs the question's every word: "first the Movement phase, then
        # the Combat phase" does not say yes to "can I attack first and then move?"
    # "can three people play?" is not answered Yes by "a game for two players"
    return None if asked_numbers and different else "Yes"


def definition(
    thing: str, candidates: Sequence[str], terms: Callable[[str], Sequence[str]]
) -> str | None:
    """The first of ``candidates`` that defines ``thing`` (:data:`_DEFINITION`), compared by
    ``terms`` (the analyser's: stems, synonyms folded): the subject's terms hold every term of
    ``thing`` and at most one more ("The two Leaders are ..." defines "leaders")."""
    wanted = set(terms(thing))
    if not wanted:
        return None
    subjects = []
    for sentence in candidates:
        m = _DEFINITION.match(sentence)
        if m is not None:
            subjects.append((set(terms(m.group("subject"))), sentence))
    # The thing itself first ("A Leader is ..."), then a subject holding one word more ("The
    # two Leaders are ...").
    for extra in (0, 1):
        for subject, sentence in subjects:
            if wanted <= subject and len(subject - wanted) == extra:
                return sentence
    return None


@dataclass(frozen=True)
class Lead:
    """A direct answer and the sentences of the section it was built from, in the order used."""

    text: str
    sources: tuple[str, ...]


def direct_answer(
    question: str,
    ranked: Sequence[str],
    section_sentences: Sequence[str],
    terms: Callable[[str], Sequence[str]],
    polarity_hint: Literal["Yes", "No"] | None = None,
    weight: Callable[[str], float] = lambda term: 1.0,
    names: frozenset[str] = frozenset(),
) -> Lead:
    """The one-sentence direct answer to ``question`` from one section, and its sources.

    ``ranked`` holds the section's sentences that may answer, best first (the guide's choice:
    the chosen fact's sentence, then by similarity to the question); ``section_sentences`` are
    all of the section's sentences in order, where definitions and the rule on ties are looked
    for; ``terms`` analyses text into the guide's terms, ``weight`` weighs them and ``names``
    are the terms of the cards' names (:func:`polarity`). ``polarity_hint`` is the project's
    own reading of a yes/no fact (its written answer opens with Yes or No): it leads when
    :func:`polarity` cannot tell, and when the two disagree neither does.
    """
    asked = question_kind(question)
    best = ranked[0]
    if asked.kind == "difference":
        found = [definition(t, section_sentences, terms) for t in asked.things]
        defined = [s for s in dict.fromkeys(found) if s is not None]
        if len(defined) == 2:
            return Lead(join(trim(defined[0]), trim(defined[1])), tuple(defined))
        if defined:
            return Lead(trim(defined[0]), (defined[0],))
    if asked.kind == "define":
        found_one = definition(asked.things[0], section_sentences, terms)
        if found_one is not None:
            return Lead(trim(found_one), (found_one,))
    lead = trim(best)
    if asked.kind == "wins":
        tie = next((s for s in section_sentences if _TIE.search(s)), None)
        if tie is not None and tie != best and not _TIE.search(best):
            return Lead(join(lead, trim(tie)), (best, tie))
        return Lead(lead, (best,))
    if asked.kind == "yesno":
        word = polarity(question, best, terms, weight, names)
        if polarity_hint is None or polarity_hint != word:
            # Only two readings that agree put a Yes or No in the rules' mouth: the fact's
            # written answer reads its main question, which this way of asking may not be
            # ("can a reloading archer move?" is Yes, its fact's answer No), and the reading
            # of the sentence alone was wrong in 4 of its 18 Yes/No leads on the sealed part
            # fresh8 ("are force cards put down face down?" got "No: ... face down"). A wrong
            # Yes or No misleads where the rule's own sentence, leading alone, cannot.
            word = None
        if word:
            # The clause that says it, when it stands alone (not "it stays in your hand").
            clause = answering_clause(question, best, terms, weight)
            clause = _CONJUNCTION.sub("", clause)
            if clause.lower() not in best.lower() or _LEANS.match(clause):
                clause = best  # "it stays in your hand" needs what comes before it
            if clause.strip() != best.strip():
                lead = trim(clause[:1].upper() + clause[1:])
            context = " ".join(section_sentences)

            def is_name(w: str) -> bool:
                return bool(set(terms(w)) & names)

            return Lead(f"{word}: {decapitalise(lead, context, is_name)}", (best,))
    return Lead(lead, (best,))
