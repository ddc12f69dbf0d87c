"""The random bot: claims every flag the solver proves, otherwise a uniform legal action."""

from __future__ import annotations

from battlejudge.engines.battleline.actions import CLAIM, Action
from battlejudge.engines.battleline.bots.base import Bot
from battlejudge.engines.battleline.state import BattleLineState


class RandomBot(Bot):
    """Whenever a claim is legal (the solver proves it), the first such claim;
    otherwise an action drawn uniformly from ``state.legal_actions()``."""

    name: str = "random"

    def step(self, state: BattleLineState) -> Action:
        """A valid claim when one is offered, else a uniformly random legal action from the bot's
        seeded ``rng``."""
        actions = state.legal_actions()
        for a in actions:
            if a.kind == CLAIM:
                return a
        return self.rng.choice(actions)
