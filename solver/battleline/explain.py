"""Explanations: why a claim holds, in the words a player uses at the table.

Given the minimal blocking set, each card is tied to the formations it rules out:
with that one card back in the pool, some completion of that formation beats the
claim. Formations the opponent's own cards already rule out are named separately.
Rules: Flags (proof from the open layout); docs/rulings.md 16.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from battlejudge.solver.battleline.cards import Card, format_cards
from battlejudge.solver.battleline.formation import DISPLAY, Formation

IMPOSSIBLE = "impossible"
COMPLETE = "complete"


@dataclass(frozen=True)
class Reason:
    """One line of the argument: ``cards`` rule out ``formation`` (a name from
    ``CATEGORIES``; ``'impossible'`` for formations the opponent's own cards rule out;
    ``'complete'`` when the opponent's side is already complete)."""

    formation: str
    cards: tuple[Card, ...]
    text: str

    def to_json(self) -> dict[str, object]:
        """The reason as JSON: the formation it rules out, the blocking cards and the sentence."""
        cards = [str(c) for c in self.cards]
        return {"formation": self.formation, "cards": cards, "text": self.text}


def _names(cards: Sequence[Card], mine: frozenset[Card]) -> str:
    parts = [c.long_name + (" (in your formation)" if c in mine else "") for c in cards]
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _target(name: str, mine: Formation, ties_lost: bool, conditional: bool) -> str:
    what = "a total" if mine.fog else f"a {DISPLAY[name]}"
    if not conditional:
        return what
    return f"{what} of {mine.total} or more" if ties_lost else f"{what} above {mine.total}"


def explain_valid(
    theirs: Sequence[Card],
    mine_cards: Sequence[Card],
    mine: Formation,
    blocking: Sequence[Card],
    selectors: Sequence[tuple[str, bool]],
    ties_lost: bool,
    possible: Callable[[str, Sequence[Card]], bool],
) -> tuple[Reason, ...]:
    """Group the blocking cards by the formation each one rules out.

    ``selectors`` lists the formations that could beat the claim, best first, each
    with whether only a higher sum would do; ``possible(name, blocked)`` says whether
    that formation can still beat the claim when only ``blocked`` cards are face up.
    """
    subject = (
        f"{format_cards(theirs)} can no longer become"
        if theirs
        else ("the opponent can no longer build")
    )
    own = frozenset(mine_cards)
    reasons: list[Reason] = []
    never: list[str] = []
    for name, conditional in selectors:
        target = _target(name, mine, ties_lost, conditional)
        if not possible(name, ()):
            never.append(target)
            continue
        cards = tuple(b for b in blocking if possible(name, [c for c in blocking if c != b]))
        if cards:
            verb = "is" if len(cards) == 1 else "are"
            reasons.append(
                Reason(name, cards, f"{_names(cards, own)} {verb} face up, so {subject} {target}.")
            )
    if never:
        listed = ", ".join(never[:-1]) + (" or " if len(never) > 1 else "") + never[-1]
        if theirs:
            text = f"Whatever is added, {format_cards(theirs)} cannot become {listed}."
        else:
            text = f"No completion from the unseen troops can make {listed}."
        reasons.append(Reason(IMPOSSIBLE, (), text))
    return tuple(reasons)


def explain_complete(theirs: Formation, mine: Formation) -> Reason:
    """The opponent's side is complete: the comparison itself is the argument.

    Only called for a valid claim, so a tie here means the opponent completed last.
    """
    if theirs.strength == mine.strength:
        text = (
            f"Their formation is complete and ties yours at {mine.label}; they completed "
            f"last, so the tie is yours."
        )
    else:
        text = f"Their formation is complete and weaker: {theirs.label} against your {mine.label}."
    return Reason(COMPLETE, (), text)
