"""Force Duel bots: ``random`` and ``equilibrium``.

Both are seeded (``Bot(seed)``) and choose one legal action for the player to act
without changing the state (the generic runner's ``step`` protocol).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from fractions import Fraction

from battlejudge.engines.force_duel.battle import effective
from battlejudge.engines.force_duel.state import (
    FORCE,
    FORCE_BASE,
    WEAPON,
    WEAPON_BASE,
    Action,
    ForceDuelState,
)
from battlejudge.engines.games import RandomBot as RandomBot
from battlejudge.solver.force_duel import cards_total, solve_force


class EquilibriumBot:
    """Shows its Force card by the exact equilibrium of the Force question (it samples
    the optimal mixed strategy of :func:`~battlejudge.solver.force_duel.solve_force`,
    from what it knows). It names the weapon whose best use of its next cards (with
    the points of the cards in play) is highest, and plays its strategy cards at
    random."""

    name = "equilibrium"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def step(self, state: ForceDuelState) -> Action:
        """The Force card sampled from the optimal mixed strategy of the Force question (solved
        exactly); the weapon whose best use of the next battle cards scores highest; a random
        legal action in any other phase."""
        player = state.current_player()
        if state.phase == FORCE:
            answer = solve_force(state.force_question(player))
            return FORCE_BASE + _sample(self.rng, answer.strategy)
        if state.phase == WEAPON:
            return WEAPON_BASE + self._weapon(state, player)
        return self.rng.choice(state.legal_actions())

    def _weapon(self, state: ForceDuelState, player: int) -> int:
        book = state.book
        nxt = [k for k in state.decks[player] if k < state.nb][:3]
        best, choice = -(10**9), 0
        for w in state.weapon_choices(player):
            cards = tuple(effective(book, k, w) for k in nxt)
            score = max(cards_total(cards, n) for n in range(1, len(cards) + 1))
            if score > best:
                best, choice = score, w
        return choice


def _sample(rng: random.Random, strategy: tuple[tuple[int, Fraction], ...]) -> int:
    """A choice drawn with the exact probabilities (one uniform draw)."""
    r = Fraction(rng.random())
    acc = Fraction(0)
    last = strategy[0][0]
    for choice, p in strategy:
        if p <= 0:
            continue
        acc += p
        last = choice
        if r < acc:
            return choice
    return last


BOTS: dict[str, Callable[[int], RandomBot | EquilibriumBot]] = {
    "random": RandomBot,
    "equilibrium": EquilibriumBot,
}
