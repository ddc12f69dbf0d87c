"""A stateful Hypothesis machine over the Battle Line engine: it plays random legal actions
(any player, chance included) and checks after each step that every claim the engine
offers is one the brute-force oracle agrees is claimable, and that the record printed so
far round-trips. Rules: Flags; docs/rulings.md 5-7, 16."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from battlejudge.engines.battleline.actions import CLAIM
from battlejudge.engines.battleline.config import RulesConfig
from battlejudge.engines.battleline.record import GameRecord, record_from_state
from battlejudge.engines.battleline.state import BattleLineState, new_game
from battlejudge.solver import battleline as bl

ORACLE_BUDGET = 40_000
"""Hands the oracle may classify per question; larger ones (an empty side under Mud
early in the game) are checked by the solver's certificate only."""


class BattleLineMachine(RuleBasedStateMachine):
    state: BattleLineState
    oracle_checks: int

    @initialize(
        timing=st.sampled_from(["standard", "advanced"]),
        removable=st.booleans(),
        first=st.sampled_from([0, 1]),
    )
    def start(self, timing: str, removable: bool, first: int) -> None:
        self.state = new_game(RulesConfig(removable, timing), first)  # type: ignore[arg-type]
        self.oracle_checks = 0

    @rule(data=st.data())
    def step(self, data: st.DataObject) -> None:
        if self.state.is_terminal():
            return
        legal = self.state.legal_actions()
        self.state.apply_action(data.draw(st.sampled_from(legal), label="action"))

    @invariant()
    def offered_claims_are_claimable_by_the_oracle(self) -> None:
        if self.state.is_terminal():
            return
        for action in self.state.legal_actions():
            if action.kind != CLAIM:
                continue
            q = self.state.claim_question(action.flag, self.state.to_move)
            if bl.oracle.work(q.theirs, len(q.seen), q.mud, len(q.mine_troops)) > ORACLE_BUDGET:
                continue
            answer = bl.oracle.decide(q.mine, q.theirs, q.seen, q.mud, q.fog, q.completed_first)
            assert answer.valid, f"engine offers {action} but the oracle refutes {q!r}"
            self.oracle_checks += 1

    @invariant()
    def record_so_far_round_trips(self) -> None:
        # Every 16 actions and at the end: printing replays the whole history.
        if len(self.state.history) % 16 and not self.state.is_terminal():
            return
        text = record_from_state(self.state).dumps()
        assert GameRecord.loads(text).dumps() == text

    @invariant()
    def cards_are_conserved(self) -> None:
        assert self.state.card_count() == 70


TestBattleLine = BattleLineMachine.TestCase
TestBattleLine.settings = settings(max_examples=30, stateful_step_count=250)
