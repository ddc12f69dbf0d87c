"""Lines of Battle bots: ``random`` and ``planner``.

The planner deploys a fixed formation (a front line of spearmen and swordsmen, archers
behind, cavalry on the wings) and on each turn plays the solver's ``best-attack`` plan:
the most expected kills, ties broken by the fewest of its units left exposed to the
opponent's side and rear attacks, then by standing nearer the enemy.
"""

from __future__ import annotations

import random

from battlejudge.engines.games import RandomBot as RandomBot
from battlejudge.engines.lines_of_battle.actions import (
    ATTACK,
    COMBAT,
    DEPLOY,
    END,
    Action,
)
from battlejudge.engines.lines_of_battle.plans import plan_actions
from battlejudge.engines.lines_of_battle.state import (
    DEPLOYING,
    FIGHTING,
    MOVING,
    LinesOfBattleState,
)
from battlejudge.solver.lines_of_battle.core import (
    ARCHER,
    CAVALRY,
    COMMANDER,
    SPEARMAN,
    SWORDSMAN,
)

# The planner's formation by column (B..I), front row then back row.
_FRONT = (SPEARMAN, SWORDSMAN, SPEARMAN, SWORDSMAN, SWORDSMAN, SPEARMAN, SWORDSMAN, SPEARMAN)
_BACK = (CAVALRY, ARCHER, CAVALRY, ARCHER, ARCHER, CAVALRY, ARCHER, CAVALRY)


class PlannerBot:
    """Plays the solver's best-attack plan each turn (CP-SAT, ``time_limit`` seconds at
    most per turn; None: no wall-clock limit). With ``deterministic_time`` (CP-SAT's
    deterministic time per turn) and ``time_limit=None`` its games do not depend on the
    machine's speed or load: what tests use."""

    name = "planner"

    def __init__(
        self,
        seed: int = 0,
        time_limit: float | None = 5.0,
        deterministic_time: float | None = None,
    ) -> None:
        self.rng = random.Random(seed)
        self.time_limit = time_limit
        self.deterministic_time = deterministic_time
        self._queue: list[Action] = []

    def _deploy(self, state: LinesOfBattleState) -> Action:
        b = state.board
        p = state.to_move
        front_row, back_row = (1, 0) if p == 0 else (b.height - 2, b.height - 1)
        wanted: list[tuple[int, int]] = []
        for i, col in enumerate(range(1, b.width - 1)):
            wanted.append((_FRONT[i % 8], front_row * b.width + col))
            wanted.append((_BACK[i % 8], back_row * b.width + col))
        if state.variant == "commander":
            mid = back_row * b.width + b.width // 2
            wanted = [(COMMANDER, mid)] + [(k, sq) for k, sq in wanted if sq != mid]
        legal = set(state.legal_actions())
        for kind, sq in wanted:
            a = Action(DEPLOY, kind, sq)
            if a in legal:
                return a
        # the square's kind is no longer allowed: any legal unit there
        return min(legal)

    def step(self, state: LinesOfBattleState) -> Action:
        """Its deployment; at the start of a turn, the first step of the best attack the planner
        finds (OR-Tools, the games extra), then the plan's next legal steps; when the plan is
        spent, combat (after moving) or the end of the fight; else a random legal action."""
        if state.phase == DEPLOYING:
            return self._deploy(state)
        legal = state.legal_actions()
        if state.phase == MOVING and state.at_turn_start():
            # OR-Tools (the games extra) is imported when the planner first plays.
            from battlejudge.solver.lines_of_battle.plan import best_attack

            plan = best_attack(
                state.position(),
                time_limit=self.time_limit,
                advance=True,
                deterministic_time=self.deterministic_time,
            )
            self._queue = plan_actions(plan)
        while self._queue:
            action = self._queue.pop(0)
            if action in legal:
                return action
            if action.kind == ATTACK and state.cells[action.b] is None:
                continue  # its target was already destroyed
            self._queue = []
        if state.phase == MOVING:
            return Action(COMBAT)
        if state.phase == FIGHTING:
            return Action(END)
        return self.rng.choice(legal)


BOTS = {"random": RandomBot, "planner": PlannerBot}
