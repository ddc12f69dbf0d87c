"""Force Duel questions: the Force choice as an exact matrix game, and sure wins.

The questions are plain data (:class:`ForceQuestion`); the rules engine
(``battlejudge.engines.force_duel``) builds them from a table position.
"""

from __future__ import annotations

from battlejudge.solver.force_duel.force import (
    ForceAnswer,
    MatrixSolution,
    SolverMismatch,
    certified,
    solve_exact,
    solve_force,
    solve_lp,
)
from battlejudge.solver.force_duel.matrix import Payoffs, opponent_draws, payoffs
from battlejudge.solver.force_duel.question import (
    FORCES,
    BattleCard,
    ForceQuestion,
    Outcome,
    SideRules,
    cards_total,
    outcome,
    side_total,
)
from battlejudge.solver.force_duel.surewin import CounterExample, SureWinAnswer, sure_win

__all__ = [
    "FORCES",
    "BattleCard",
    "CounterExample",
    "ForceAnswer",
    "ForceQuestion",
    "MatrixSolution",
    "Outcome",
    "Payoffs",
    "SideRules",
    "SolverMismatch",
    "SureWinAnswer",
    "cards_total",
    "certified",
    "opponent_draws",
    "outcome",
    "payoffs",
    "side_total",
    "solve_exact",
    "solve_force",
    "solve_lp",
    "sure_win",
]
