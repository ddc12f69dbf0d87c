"""Solver plans played by the rules: every movement and attack plan the solver returns
is turned into actions and replayed by the engine, which recomputes its value.

A plan's attacks are made in order; an attack whose target an earlier attack already
destroyed is skipped (it is not made). The engine's value is the exact expected number
of enemy units destroyed, over the dice of every frontal attack.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from battlejudge.engines.game import CHANCE, IllegalActionError
from battlejudge.engines.lines_of_battle.actions import (
    ATTACK,
    COMBAT,
    END,
    FACE,
    MOVE,
    SWAP,
    Action,
)
from battlejudge.engines.lines_of_battle.state import FIGHTING, LinesOfBattleState

if TYPE_CHECKING:  # the planner needs OR-Tools (the games extra); replaying a plan does not
    from battlejudge.solver.lines_of_battle.plan import Plan


def movement_actions(plan: Plan) -> list[Action]:
    """The movement phase of ``plan``: swaps, moves in the solver's order, re-faces,
    then ``combat``."""
    out = [Action(SWAP, a, b) for a, b in plan.swaps]
    out += [Action(MOVE, m.start, m.end) for m in plan.moves]
    out += [Action(FACE, sq, f) for sq, f in plan.faces]
    out.append(Action(COMBAT))
    return out


def plan_actions(plan: Plan) -> list[Action]:
    """The whole turn as actions (attacks in order, then ``end``)."""
    return (
        movement_actions(plan)
        + [Action(ATTACK, a.attacker, a.target) for a in plan.attacks]
        + [Action(END)]
    )


def replay_plan(state: LinesOfBattleState, plan: Plan) -> tuple[Fraction, int]:
    """Play ``plan`` from ``state`` (the start of the mover's turn) with checked actions;
    return the exact expected number of enemy units destroyed and the number destroyed
    for certain (when every frontal attack fails). :class:`IllegalActionError` says
    which action of the plan the rules refuse."""
    s = state.clone()
    enemy = 1 - s.to_move
    before = len(s.units_of(enemy))
    for action in movement_actions(plan):
        s.apply_action(action)
    assert s.phase == FIGHTING
    attacks = [Action(ATTACK, a.attacker, a.target) for a in plan.attacks]

    def walk(s: LinesOfBattleState, i: int) -> tuple[Fraction, int]:
        if i == len(attacks) or s.is_terminal():
            return Fraction(before - len(s.units_of(enemy))), before - len(s.units_of(enemy))
        a = attacks[i]
        if s.cells[a.b] is None:
            return walk(s, i + 1)  # already destroyed: the attack is not made
        s = s.clone()
        s.apply_action(a)
        if s.current_player() != CHANCE:
            return walk(s, i + 1)
        groups: dict[bool, tuple[Action, Fraction]] = {}
        for roll, p in s.chance_outcomes():
            t = s.clone()
            t.apply_action(roll)
            killed = t.cells[a.b] is None
            first, q = groups.get(killed, (roll, Fraction(0)))
            groups[killed] = (first, q + p)
        value = Fraction(0)
        sure = None
        for killed, (roll, p) in groups.items():
            t = s.clone()
            t.apply_action(roll)
            v, c = walk(t, i + 1)
            value += p * v
            if not killed:
                sure = c
        assert sure is not None
        return value, sure

    try:
        return walk(s, 0)
    except IllegalActionError as e:
        raise IllegalActionError(f"the plan does not replay: {e}") from None
