"""Battle Line actions: small frozen value objects, sorted by a fixed key.

The record notation of each action is its ``str`` (flags numbered 1-9 for people);
``Action.parse`` reads it back. Kinds, in sort order: claims first, then plays.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from battlejudge.engines.battleline import cards
from battlejudge.engines.battleline.cards import Naming, parse_card
from battlejudge.solver.errors import InputError

CLAIM, END_CLAIMS, PLAY, SCOUT, REDEPLOY, DESERTER, TRAITOR, PASS = range(8)
DRAW, RETURN, DISCARD, CARD = range(8, 12)
TROOP_DECK, TACTICS_DECK = 0, 1
DECK_NAMES = ("troop", "tactics")
DISCARD_PILE = -1
_DEFAULT_NAMING = Naming()
"""Destination of a Redeploy that discards the card."""


@dataclass(frozen=True, order=True)
class Action:
    """One decision (or one chance outcome: ``kind == CARD``, the card dealt or drawn).

    ``flag`` is the destination flag and ``source`` the flag a card is taken from, both
    numbered 1-9 as in the notation (``R7@3`` has ``flag == 3``; flag ``n`` is
    ``state.flags[n - 1]``); ``deck`` 0 (troops) or 1 (tactics).
    """

    kind: int
    card: int = -1
    flag: int = -1
    source: int = -1
    deck: int = -1

    def notation(self, naming: Naming | None = None) -> str:
        """The record token, e.g. ``R7@3``, ``redeploy R7@3>5``, ``claim 2``."""
        naming = naming or _DEFAULT_NAMING
        c = naming.card(self.card) if self.card >= 0 else ""
        f, s = self.flag, self.source
        if self.kind == CLAIM:
            return f"claim {f}"
        if self.kind == END_CLAIMS:
            return "done"
        if self.kind == PLAY:
            return f"{c}@{f}"
        if self.kind == SCOUT:
            return naming.card(cards.SCOUT)
        if self.kind == REDEPLOY:
            dest = "discard" if self.flag == DISCARD_PILE else str(f)
            return f"{naming.card(cards.REDEPLOY)} {c}@{s}>{dest}"
        if self.kind == DESERTER:
            return f"{naming.card(cards.DESERTER)} {c}@{s}"
        if self.kind == TRAITOR:
            return f"{naming.card(cards.TRAITOR)} {c}@{s}>{f}"
        if self.kind == PASS:
            return "pass"
        if self.kind == DRAW:
            return f"draw {DECK_NAMES[self.deck]}"
        if self.kind == RETURN:
            return f"return {c}"
        if self.kind == DISCARD:
            return f"discard {c}@{s}"
        return f"card {c}"

    def __str__(self) -> str:
        return self.notation()

    def __repr__(self) -> str:
        return f"Action.parse({self.notation()!r})"

    @classmethod
    def parse(cls, text: str) -> Action:
        """Read a record token (any theme's names, any case); raises InputError."""
        t = " ".join(text.strip().split())
        low = t.lower()

        def flag(s: str) -> int:
            if not s.isdigit() or not 1 <= int(s) <= 9:
                raise InputError(f"{s!r} in {t!r} is not a flag number 1-9")
            return int(s)

        m = re.fullmatch(r"claim (\S+)", low)
        if m:
            return cls(CLAIM, flag=flag(m.group(1)))
        if low == "done":
            return cls(END_CLAIMS)
        if low == "pass":
            return cls(PASS)
        m = re.fullmatch(r"draw (troop|tactics)", low)
        if m:
            return cls(DRAW, deck=DECK_NAMES.index(m.group(1)))
        m = re.fullmatch(r"(return|card) (.+)", t, re.IGNORECASE)
        if m:
            kind = RETURN if m.group(1).lower() == "return" else CARD
            return cls(kind, card=parse_card(m.group(2), t))
        m = re.fullmatch(r"discard (.+)@(\S+)", t, re.IGNORECASE)
        if m:
            return cls(DISCARD, card=parse_card(m.group(1), t), source=flag(m.group(2)))
        guile = _guile_match(t)
        if guile is not None:
            tactic, card_text, src_text, dest = guile
            card = parse_card(card_text, t)
            src = flag(src_text)
            if tactic == cards.REDEPLOY and dest is not None:
                to = DISCARD_PILE if dest.lower() == "discard" else flag(dest)
                return cls(REDEPLOY, card=card, source=src, flag=to)
            if tactic == cards.DESERTER and dest is None:
                return cls(DESERTER, card=card, source=src)
            if tactic == cards.TRAITOR and dest is not None:
                return cls(TRAITOR, card=card, source=src, flag=flag(dest))
            raise InputError(f"cannot read {t!r} as a Redeploy, Deserter or Traitor")
        m = re.fullmatch(r"(.+)@(\S+)", t)
        if m:
            return cls(PLAY, card=parse_card(m.group(1), t), flag=flag(m.group(2)))
        if parse_card(t, t) == cards.SCOUT:
            return cls(SCOUT, card=cards.SCOUT)
        raise InputError(f"cannot read {t!r} as a Battle Line action")


def _guile_match(t: str) -> tuple[int, str, str, str | None] | None:
    """Split ``TACTIC CARD@FROM[>TO]`` where the tactic name may have several words
    (Nine Circles: "Day off", "We have Cookies!"): the shortest prefix naming a guile
    tactic wins."""
    m = re.fullmatch(r"(.+)@(\S+?)(?:>(\S+))?", t)
    if m is None:
        return None
    words = m.group(1).split(" ")
    for k in range(1, len(words)):
        name = " ".join(words[:k])
        if _guile(name):
            return parse_card(name, t), " ".join(words[k:]), m.group(2), m.group(3)
    return None


def _guile(word: str) -> bool:
    try:
        return parse_card(word) in (cards.REDEPLOY, cards.DESERTER, cards.TRAITOR)
    except InputError:
        return False
