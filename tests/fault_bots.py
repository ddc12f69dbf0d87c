"""Bots that misbehave, for tests/test_faults.py: plugged in by ``module:Class`` as a user's
own bot is (``--bots fault_bots:Passer,random``; pytest puts tests/ on the path)."""

from __future__ import annotations

from typing import Any

from battlejudge.engines.battleline.actions import END_CLAIMS, PASS, Action
from battlejudge.engines.game import GameState
from battlejudge.engines.games import RandomBot


class Passer(RandomBot):
    """Battle Line: passes whenever passing is legal, even while it could play a tactic,
    and never claims; otherwise it plays as the random bot. Legal at every step, yet under
    ``stalemate=dead`` (docs/rulings.md 17) passing with a tactic to play is acting, so a
    game against a bot that cannot break the deadlock never ends."""

    name = "passer"

    def step(self, state: GameState[Any]) -> Any:
        """Pass, or decline every claim, when allowed; else a random legal action."""
        legal = state.legal_actions()
        for wanted in (Action(PASS), Action(END_CLAIMS)):
            if wanted in legal:
                return wanted
        return self.rng.choice(legal)
