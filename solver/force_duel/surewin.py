"""``sure-win``: a Force choice that wins the battle whatever the opponent does.

A choice is a sure win when it wins against every Force card the opponent may show
and every order his remaining cards may be in. When no choice is, each choice gets a
counter-example: the opponent's next cards and Force card that stop it (a loss if
there is one, else a tie), like a Battle Line witness: concrete, and replayed by the
rules engine before it is shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from battlejudge.solver.force_duel.matrix import merged_pool, opponent_draws
from battlejudge.solver.force_duel.question import (
    BattleCard,
    ForceQuestion,
    outcome,
    side_total,
)


@dataclass(frozen=True)
class CounterExample:
    """What stops the asker's ``force``: the opponent shows ``their_force`` with
    ``their_cards`` on top of his deck (top first)."""

    force: int
    my_total: int
    their_cards: tuple[BattleCard, ...]
    their_force: int
    their_total: int
    result: Literal["loss", "tie"]

    def to_json(self) -> dict[str, Any]:
        """The counter-example as JSON: my Force card and total, the opponent's cards and Force
        card, his total and the result."""
        return {
            "force": self.force,
            "my_total": self.my_total,
            "their_cards": [c.label for c in self.their_cards],
            "their_force": self.their_force,
            "their_total": self.their_total,
            "result": self.result,
        }

    def sentence(self) -> str:
        """The counter-example as said at the table."""
        shown = " ".join(c.label for c in self.their_cards[: self.their_force])
        verb = "beats" if self.result == "loss" else "ties"
        return (
            f"Force {self.force} is not sure: you total {self.my_total}, but the opponent can "
            f"show Force {self.their_force} with {shown} for {self.their_total}, which {verb} you."
        )


@dataclass(frozen=True)
class SureWinAnswer:
    """``wins``: every sure-winning Force card (the smallest, which spends fewest
    cards, is ``choice``); ``counters``: for every other choice, a counter-example."""

    question: ForceQuestion
    wins: tuple[int, ...]
    counters: tuple[CounterExample, ...]

    @property
    def choice(self) -> int | None:
        """The first Force card that wins whatever the opponent holds, or None when none does."""
        return self.wins[0] if self.wins else None

    @property
    def verdict(self) -> Literal["valid", "invalid"]:
        """``valid`` when some Force card wins for sure, else ``invalid``."""
        return "valid" if self.wins else "invalid"

    def to_json(self) -> dict[str, Any]:
        """The answer as JSON: the verdict, the choice, every sure-winning card and the
        counter-examples of the others."""
        return {
            "verdict": self.verdict,
            "choice": self.choice,
            "wins": list(self.wins),
            "counters": [c.to_json() for c in self.counters],
        }


def sure_win(q: ForceQuestion) -> SureWinAnswer:
    """Decide, for every Force choice of the asker, whether it wins against every
    opponent choice and every possible order of his cards (exhaustive: the draws are
    grouped by value, at most (kinds)^3 of them)."""
    depth = max(q.them.choices)
    draws = [d for d, _ in opponent_draws(merged_pool(q.pool), depth)]
    wins: list[int] = []
    counters: list[CounterExample] = []
    for i in q.me.choices:
        worst: CounterExample | None = None
        for j in q.them.choices:
            mine = q.my_total(i, j)
            for drawn in draws:
                theirs = side_total(drawn, q.them, j, i)
                res = outcome(mine, theirs, q.me, q.them)
                if res == 1:
                    continue
                if worst is None or (res == -1 and worst.result == "tie"):
                    worst = CounterExample(
                        i, mine, drawn, j, theirs, "loss" if res == -1 else "tie"
                    )
                if worst.result == "loss":
                    break
            if worst is not None and worst.result == "loss":
                break
        if worst is None:
            wins.append(i)
        else:
            counters.append(_labelled(q, worst))
    return SureWinAnswer(q, tuple(wins), tuple(counters))


def _labelled(q: ForceQuestion, c: CounterExample) -> CounterExample:
    """The counter-example with real cards of the pool (merging kept only one label
    per value): each drawn value is replaced by a distinct pool card of that value."""
    left = {card: n for card, n in q.pool}
    cards: list[BattleCard] = []
    for value in c.their_cards:
        card = next(
            k for k, n in left.items() if n > 0 and (k.power, k.extra) == (value.power, value.extra)
        )
        left[card] -= 1
        cards.append(card)
    return CounterExample(c.force, c.my_total, tuple(cards), c.their_force, c.their_total, c.result)
