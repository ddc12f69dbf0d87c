"""Turning questions and rules text into search terms.

The same pipeline runs over the reference and over a question, so a question matches a passage when
both reduce to the same terms: lower case, a game's multi-word names (``Mano a Mano!``, ``set up``)
joined into one term, filler words dropped, Snowball (Porter 2) stemming, then each game's synonyms
(``stone`` and ``circle`` for ``flag``, ``wild`` for ``leader``) folded onto one term.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

_WORD = re.compile(r"[a-z0-9]+")
_NOT_WORD = re.compile(r"[^a-z0-9]+")

STOPWORDS = frozenset(
    """
    a about above actually again all allowed almost also am an and another any anybody anyone
    anything are aren as at be been being both but by can cannot come comes could did do does
    doesn doing don done during each either else ever everyone exactly explain far for from get
    gets getting go goes had happen happened happens has have having he her here him his
    how i if in into is isn it its itself just know legal let lets like many may me mean means
    mine more most much must my nearly need needs never no nor not now of off often ok okay on
    only or other our ours out over own permitted please possible really rule rulebook rulebooks
    rules s say says several should so some somebody someone something still such t take taken
    takes taking tell than that the their them then there these they this those to too took
    under until up us very want was way we were what whatever when where whether which whichever
    while who whom why will with work works would yes yet you your yours
    """.split()
)
"""Words that carry no rules content in a question (question words, auxiliaries, filler).

Kept deliberately short: words such as ``before``, ``first``, ``last`` or ``three`` do matter
in rules questions and stay searchable.
"""

GENERAL_SYNONYMS: tuple[tuple[str, ...], ...] = (
    ("win", "wins", "won", "winning", "winner", "winners", "victory", "victorious"),
    ("lose", "loses", "lost", "losing", "loser", "losers"),
    (
        "place",
        "put",
        "puts",
        "lay",
        "lays",
        "laid",
        "position",
        "drop",
        "drops",
        "dropped",
        "stick",
        "sticks",
        "slap",
        "slaps",
        "plonk",
        "plop",
    ),
    (
        "start",
        "starts",
        "begin",
        "begins",
        "beginning",
        "kick off",
        "kicks off",
        "kicked off",
        "lead off",
        "leads off",
        "led off",
    ),
    ("end", "ends", "finish", "finishes", "game over"),
    ("setup", "set up", "sets up", "setting up", "prepare", "preparation", "preparing"),
    (
        "opponent",
        "opponents",
        "enemy",
        "enemies",
        "foe",
        "foes",
        "opp",
        "opps",
        "rival",
        "rivals",
        "adversary",
        "adversaries",
    ),
    (
        "draw",
        "draws",
        "drawing",
        "drew",
        "drawn",
        "refill",
        "refresh",
        "replenish",
        "top up",
        "tops up",
        "dig up",
        "digs up",
    ),
    ("consecutive", "sequence", "sequences"),
    ("strongest", "highest", "best"),
    ("weakest", "lowest", "worst"),
    ("beside", "next to", "alongside", "adjacent to"),
    (
        "empty",
        "run out",
        "runs out",
        "ran out",
        "exhausted",
        "used up",
        "run dry",
        "runs dry",
        "ran dry",
    ),
    ("component", "components", "box", "contents", "equipment", "kit"),
    ("two", "2"),
    ("three", "3"),
    ("four", "4"),
    ("five", "5"),
    ("six", "6"),
    ("seven", "7"),
    ("eight", "8"),
    ("nine", "9"),
    ("ten", "10"),
    ("sixteen", "16"),
    ("twenty", "20"),
    ("sixty", "60"),
    ("move", "walk", "walks", "walking", "go to"),
    # Players' everyday words for the rules' own.
    ("take", "grab", "grabs", "nick", "snatch"),
    ("look", "peek", "peeks", "glance", "check out"),
    ("turn over", "flip", "flips", "flipped"),
    ("first", "1st", "initiative"),
    ("second", "2nd"),
    ("third", "3rd"),
    ("fourth", "4th"),
    ("fifth", "5th"),
    (
        "remove",
        "take away",
        "takes away",
        "get rid of",
        "gets rid of",
        "chuck",
        "chucks",
        "chucked",
        "throw out",
        "thrown out",
    ),
    # Irregular forms the stemmer leaves alone.
    ("deal", "dealt"),
    ("prove", "proof", "proofs", "evidence"),
    ("material", "materials", "made of"),
    ("choose", "chose", "chosen", "draft", "drafts", "drafting"),
    ("hold", "held"),
    ("keep", "kept"),
    ("make", "made"),
    ("give", "gave", "given"),
    ("steal", "steals", "stole", "stolen"),
    ("hide", "hid", "hidden"),
    ("fight", "fought"),
    ("see", "saw", "seen"),
    ("show", "shown"),
    ("spend", "spent"),
)
"""Synonyms every game shares; the first entry of a group is the term the others fold onto."""


FILLER = frozenset(
    """
    actually afterwards again ago ahead already also always anyhow anyway anywhere around away
    back basically before besides right soon sometimes somewhere straight sure then therefore
    though together vs versus well whenever wherever
    exactly just maybe perhaps probably quite rather really simply somehow later earlier twice
    thrice stuff thing things whatever kind sort okay ok
    got gotten supposed meant join joins joined without within instead spot spots bit lot lots
    guy guys bro mate folks somebody anybody everybody nobody thanks thx pls plz hey hi hello
    hmm um uh yeah yep nope alright wait confused confusing wondering wonder question quick
    cna hwo waht teh wat wut becuase cuz coz gonna wanna gotta kinda sorta
    running row rows consecutive consecutively straight successive succession streak repeatedly
    twice again anymore immediately instantly afterward meanwhile currently normally usually
    whole entire entirely full fully same different differently normal regular usual proper
    properly correct correctly wrong wrongly exact mistaken mistakenly possible impossible okay
    use uses used using try tries tried trying happen happening stay stays stayed staying leave
    leaves left leaving bring brings brought keep keeps keeping kept hold holds holding held
    put puts putting set sets setting getting gets goes went going come coming came
    mean meant means figure figured understand understood sure unsure allowed allow allows
    able unable enough extra else whats wheres whos hows cant dont doesnt isnt wont im ive id
    youre theyre thats theres heres lets
    care cares matter matters count counts counted work worked apply applies applied affect
    affects change changes changed stop stops stopped block blocks blocked hit hits let lets
    need needed want wanted ask asked tell told think thought guess know knew see seen look
    looks looked find found show shows showed give gives gave take took pick picks picked
    choose chose decide decided happen happened mean does did doing done make makes made
    forward forwards backward backwards sideways upward downward across along near far close
    wide deep tall long short high low big small large tiny huge width depth height length size
    side sides person people player guy each every any whole half part parts piece
    first second third last next previous later earlier early late before after during until
    start started end ended finish finished begin began middle moment time times turn turns
    still yet already even only also just instead otherwise anyway though although unless
    yes no maybe never always sometimes often ever again both either neither none all some
    many much more most less least few fewer several lot number numbers amount total
    lol btw idk tbh imo iirc fyi pal dude buddy friend friends insists reckons basically summary
    quick quickly briefly short recap
    legal illegal permitted forbidden banned valid invalid officially technically literally
    honestly seriously pretty super totally definitely legit forever
    strictly true false optional optionally mandatory compulsory required assume assuming weird
    talking asking check checking wife husband girlfriend boyfriend gf bf roommate cousin sister
    brother partner mom mum dad
    """.split()
)
"""Everyday words a player's question may hold that say nothing about any rule: they never make
a question look foreign to the rules (:meth:`battlejudge.apps.guide.retrieve.Retriever.novelty`),
though the ones the rules do use still count as keywords."""


QUESTION_CUES: dict[str, tuple[str, ...]] = {
    "when": ("turn", "before", "after", "time", "moment", "start", "end"),
    "who": ("player",),
    "where": ("beside", "side", "place", "zone", "square", "row"),
    "many": ("zznumber",),
    "far": ("square",),
    "often": ("once", "turn", "time"),
}
"""Words that tend to answer a question word; they nudge ranking but never count as coverage.

``zznumber`` is the term every number in the rules text also yields, so "how many" leans
towards passages that give a count.
"""

NUMBER_TERM = "zznumber"
_NUMBER_WORDS = frozenset(
    "two three four five six seven eight nine ten eleven twelve fifteen sixteen twenty thirty "
    "sixty hundred".split()
)


SHORTHAND: dict[str, str] = {
    "u": "you",
    "ur": "your",
    "ya": "you",
    "w/": "with",
    "w/o": "without",
    "b4": "before",
    "bc": "because",
    "b/c": "because",
    "cuz": "because",
    "coz": "because",
    "abt": "about",
    "smth": "something",
    "sth": "something",
    "ppl": "people",
    "pls": "please",
    "plz": "please",
    "thx": "thanks",
    "tho": "though",
    "thru": "through",
    "dunno": "do not know",
    "idk": "i do not know",
    "rn": "right now",
    "ofc": "of course",
    "wat": "what",
    "wut": "what",
    "whats": "what is",
    "wheres": "where is",
    "whos": "who is",
    "hows": "how is",
    "dont": "do not",
    "doesnt": "does not",
    "didnt": "did not",
    "cant": "cannot",
    "isnt": "is not",
    "wont": "will not",
    "im": "i am",
    "ive": "i have",
    "theres": "there is",
    "thats": "that is",
    "dmg": "damage",
    "hav": "have",
    "nxt": "next",
    "atk": "attack",
    "hp": "hit points",
    "pcs": "pieces",
    "pts": "points",
    "pt": "point",
    "tac": "tactic",
    "tacs": "tactics",
    "oppo": "opponent",
    "oppos": "opponents",
    "diff": "difference",
    "ea": "each",
    "approx": "about",
    "strat": "strategy",
    "strats": "strategies",
    "outta": "out of",
    "lemme": "let me",
    "gimme": "give me",
    "prolly": "probably",
    "gf": "friend",
    "bf": "friend",
    # Idioms whose words mean something else to the rules: "at what point" asks when, and its
    # "point" is no score (Force Duel's Points section took "at what point do I play it").
    "at what point": "when",
    "at which point": "when",
}
"""Chat shorthand players type, and the words they stand for. Expanded before anything else reads
a question (:func:`expand_shorthand`), so keywords, misspelling repair and the sentence vectors all
see ordinary words: the embedding model has seen "you" far more often than "u"."""

_SHORTHAND = re.compile(
    r"(?<![\w/-])("
    + "|".join(re.escape(k) for k in sorted(SHORTHAND, key=lambda k: (-len(k), k)))
    + r")(?![\w/'’-])",
    re.IGNORECASE,
)


def expand_shorthand(text: str) -> str:
    """``text`` with each chat shorthand of :data:`SHORTHAND` written out (``can u attack w/o
    a die`` -> ``can you attack without a die``); other words, case and punctuation unchanged.

    >>> expand_shorthand("whats the diff b/c im confused")
    'what is the difference because i am confused'
    """
    return _SHORTHAND.sub(lambda m: SHORTHAND[m.group(1).lower()], text)


@lru_cache(maxsize=1)
def _stemmer() -> object:
    # Imported on first use: the package loads every language's stemmer, and importing the guide
    # (which every battlejudge command does) should not pay for that.
    import snowballstemmer  # type: ignore[import-untyped]

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball English stem of one lower-case word (memoised: building a guide stems the
    same few hundred words thousands of times, and the stemmer is pure Python)."""
    result = _stemmer().stemWord(word)  # type: ignore[attr-defined]
    return str(result)


def plain(text: str) -> str:
    """Lower case, every run of non-alphanumerics a single space (the form names are matched in)."""
    return _NOT_WORD.sub(" ", text.lower()).strip()


class Analyzer:
    """Maps text to search terms for one game.

    ``synonyms`` are groups of words or phrases; every member of a group becomes the group's first
    member. A multi-word member is matched as a phrase before words are split, longest first.
    """

    def __init__(self, synonyms: Iterable[Sequence[str]], stopwords: Iterable[str] = ()) -> None:
        extra = [plain(w) for w in stopwords]
        self._stopwords = STOPWORDS | {w for w in extra if " " not in w}
        # Inflected stopwords go too ("needed", "allows"), but not "ruling": it names sections.
        self._stop_stems = frozenset(stem(w) for w in self._stopwords) - {stem("rule")}
        # Multi-word stopwords (a game's own title) are dropped from questions only: in the
        # rules text "the battle line" is also the row of Flags.
        stop_phrases = sorted({w for w in extra if " " in w}, key=lambda p: (-len(p), p))
        self._stop_phrases = (
            re.compile(r"\b(" + "|".join(re.escape(p) for p in stop_phrases) + r")\b")
            if stop_phrases
            else None
        )
        phrases: dict[str, str] = {}
        words: dict[str, str] = {}
        for group in (*synonyms, *GENERAL_SYNONYMS):
            if not group:
                continue
            canonical = self._term_of(plain(group[0]))
            for member in group:
                key = plain(member)
                if " " in key:
                    phrases.setdefault(key, canonical)
                elif key:
                    words.setdefault(stem(key), canonical)
        self._words = words
        self._phrase_terms = phrases
        ordered = sorted(phrases, key=lambda p: (-len(p), p))
        self._phrases = (
            re.compile(r"\b(" + "|".join(re.escape(p) for p in ordered) + r")\b")
            if ordered
            else None
        )

    @staticmethod
    def _term_of(key: str) -> str:
        # A phrase folds onto one term made of its words run together, so it cannot collide
        # with the separate words (``companion cavalry`` is not ``cavalry``).
        return key.replace(" ", "") if " " in key else stem(key)

    def without_phrases(self, text: str) -> str:
        """``text`` in plain form with every multi-word name or synonym the game knows blanked
        out ("day off", "ran out", "friendly fire"): their words say nothing foreign even when
        each word alone ("day", "ran") is one the rules never use."""
        s = plain(text)
        return self._phrases.sub(" ", s) if self._phrases is not None else s

    def without_title(self, text: str) -> str:
        """``text`` in plain form with the game's own title (its multi-word stopwords) blanked
        out, as :meth:`terms` does for a question."""
        s = plain(text)
        return self._stop_phrases.sub(" ", s) if self._stop_phrases is not None else s

    def cues(self, text: str) -> list[str]:
        """Terms hinted at by the question words of ``text`` (``when``: ``turn``, ``before``...)."""
        out: list[str] = []
        for word in _WORD.findall(plain(text)):
            for cue in QUESTION_CUES.get(word, ()):
                root = cue if cue == NUMBER_TERM else stem(cue)
                out.append(self._words.get(root, root))
        return out

    def terms(self, text: str, question: bool = False) -> list[str]:
        """The search terms of ``text``, in order, repeats kept (BM25 counts them).

        ``question=True`` also drops the game's multi-word stopwords (its title); otherwise each
        number also yields :data:`NUMBER_TERM`.
        """
        s = plain(text)
        if question and self._stop_phrases is not None:
            s = self._stop_phrases.sub(" ", s)
        marks: dict[str, str] = {}
        if self._phrases is not None:

            def mark(m: re.Match[str]) -> str:
                token = f"zzphrase{len(marks)}"
                marks[token] = self._phrase_terms[m.group(1)]
                return f" {token} "

            s = self._phrases.sub(mark, s)
        out: list[str] = []
        for word in _WORD.findall(s):
            if word in marks:
                out.append(marks[word])
                continue
            if not question and (word.isdigit() or word in _NUMBER_WORDS):
                out.append(NUMBER_TERM)
            root = stem(word)
            if word in self._stopwords or root in self._stop_stems:
                continue
            term = self._words.get(root, root)
            if term in self._stop_stems:
                continue  # a synonym of a stopword ("grab" for "take") says no more than it
            out.append(term)
        return out
