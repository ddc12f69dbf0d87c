"""BattlePlan bots: ``random`` (any legal action) and ``greedy`` (plans stacks toward the
flag and away from threats, and plays each battle turn for the best position one turn on).
Neither reads hidden information: the greedy bot looks at its own stacks and the board."""

from __future__ import annotations

import random

from battlejudge.engines.battleplan.actions import (
    ASSIGN,
    BUFF,
    CARD,
    DONE,
    PICKUP,
    PLACE,
    Action,
)
from battlejudge.engines.battleplan.board import (
    ATTACK,
    CAPS,
    DEFEND,
    DIAGONAL,
    EXTRA_ATTACK,
    EXTRA_DEFEND,
    EXTRA_MOVE,
    HOME_ROW,
    MOVE,
    OFF,
    WIN_SQUARE,
)
from battlejudge.engines.battleplan.state import (
    ASSIGNING,
    BATTLE,
    PLACING,
    PLANNING,
    S_CHOICE,
    BattlePlanState,
)
from battlejudge.engines.games import RandomBot as RandomBot


def _dist(a: int, b: int) -> int:
    return abs(a % 8 - b % 8) + abs(a // 8 - b // 8)


def _king(a: int, b: int) -> int:
    return max(abs(a % 8 - b % 8), abs(a // 8 - b // 8))


def goal_distance(state: BattlePlanState, g: int) -> int:
    """How far piece ``g`` is from what it should do next: its carrier from the Win Zone,
    the others from the enemy's defensive zone."""
    p = g // 3
    sq = state.pos[g]
    if sq == OFF:
        return 20
    if state.carrier[p] == g:
        return _dist(sq, WIN_SQUARE[p])
    return abs(sq // 8 - HOME_ROW[1 - p])


def evaluate(state: BattlePlanState, me: int) -> float:
    """Higher is better for ``me``: a win, live pieces, carriers near home, pieces near the
    enemy zone, shields, and no unshielded piece next to an enemy."""
    if state.winner == me:
        return 1e6
    if state.winner == 1 - me:
        return -1e6
    score = 0.0
    for p in (0, 1):
        sign = 1 if p == me else -1
        for g in range(p * 3, p * 3 + 3):
            sq = state.pos[g]
            if sq == OFF:
                continue
            value = 50.0 + (5 if state.shield[g] else 0)
            if state.carrier[p] == g:
                value += 100 - 8 * _dist(sq, WIN_SQUARE[p])
            else:
                value -= 2 * abs(sq // 8 - HOME_ROW[1 - p])
            enemies = [state.pos[e] for e in range(3 - 3 * p, 6 - 3 * p) if state.pos[e] != OFF]
            if not state.shield[g] and any(_king(sq, e) == 1 for e in enemies):
                value -= 15
            score += sign * value
    return score


class GreedyBot:
    """Plans toward the flag (moves first, attacks when enemies are near, the biggest die
    to the piece nearest its goal) and plays each battle turn for the best evaluation."""

    name = "greedy"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def step(self, state: BattlePlanState) -> Action:
        """A greedy legal action: on a pickup the piece nearest its goal; placements in a fixed
        order of files; the biggest die to the piece nearest its goal; then the plan and the
        battle turns as the class says; a random legal action in any other phase."""
        legal = state.legal_actions()
        me = state.current_player()
        if state.pending:
            picks = [a for a in legal if a >= PICKUP]
            return min(picks, key=lambda a: goal_distance(state, me * 3 + a - PICKUP))
        if state.phase == PLACING:
            order = [2, 5, 3, 4, 1, 6, 0, 7]
            return min(legal, key=lambda a: order.index((a - PLACE) % 64 % 8))
        if state.phase == ASSIGNING:
            return min(
                legal,
                key=lambda a: (
                    -((a - ASSIGN) % 8),
                    goal_distance(state, me * 3 + (a - ASSIGN) // 8),
                ),
            )
        if state.phase == PLANNING:
            return self._plan(state, me, legal)
        if state.phase == BATTLE:
            return self._battle(state, me, legal)
        return self.rng.choice(legal)

    def _plan(self, state: BattlePlanState, me: int, legal: list[Action]) -> Action:
        for k in range(3):
            g = me * 3 + k
            stack = state.stacks[g]
            if len(stack) >= state.assigned[g]:
                continue
            near = any(
                _king(state.pos[g], state.pos[e]) <= 2
                for e in range(3 - 3 * me, 6 - 3 * me)
                if state.pos[e] != OFF
            )
            pattern = (
                [ATTACK, MOVE, ATTACK, DEFEND, MOVE, MOVE]
                if near
                else [MOVE, MOVE, DEFEND, MOVE, ATTACK, ATTACK]
            )
            for c in pattern[len(stack) :] + pattern:
                if stack.count(c) < CAPS[c]:
                    return CARD + k * 3 + c
        buffs = [a for a in legal if BUFF <= a < DONE]
        if buffs:
            by_goal = sorted(range(3), key=lambda k: goal_distance(state, me * 3 + k))
            for a in buffs:
                k, b = divmod(a - BUFF, 4)
                if b in (EXTRA_MOVE, DIAGONAL) and k == by_goal[0]:
                    return a
                if b == EXTRA_DEFEND and state.carrier[me] == me * 3 + k:
                    return a
                if b == EXTRA_ATTACK and ATTACK in state.stacks[me * 3 + k]:
                    return a
        return DONE

    def _battle(self, state: BattlePlanState, me: int, legal: list[Action]) -> Action:
        best, best_value = legal[0], -1e18
        for a in legal:
            s = state.clone()
            s.apply_action_unchecked(a)
            value = self._finish_turn(s, me)
            if value > best_value:
                best, best_value = a, value
        return best

    def _finish_turn(self, s: BattlePlanState, me: int) -> float:
        """Play the rest of the turn one step at a time, each step for the best
        evaluation, and evaluate the result."""
        while s.current_player() == me and s.steps and not s.pending:
            options = s.legal_actions()
            if s.steps[0] == S_CHOICE:
                values = []
                for a in options:
                    t = s.clone()
                    t.apply_action_unchecked(a)
                    values.append(self._finish_turn(t, me))
                return max(values)
            scored = []
            for a in options:
                t = s.clone()
                t.apply_action_unchecked(a)
                scored.append((evaluate(t, me), a))
            s.apply_action_unchecked(max(scored)[1])
        return evaluate(s, me)
