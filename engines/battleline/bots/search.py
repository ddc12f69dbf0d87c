"""The search bot: Monte Carlo search over determinized information sets.

At each play decision the bot reads only its own view (:func:`observe`). An iteration
deals the hidden cards afresh (:meth:`Observation.determinize`: the opponent's hand and
the deck order, consistent with everything the bot has seen) and plays every candidate
move on that same deal in the light model (:mod:`sim`):

1. the candidate (any card or tactic, or pass), then the bot's claims and its draw;
2. the opponent's reply: the heuristic's choice (any card or tactic) from the
   opponent's point of view on this deal (he knows his own hand, not the bot's), then
   his claims and draw;
3. ``horizon - 2`` more turns of the light model's fast policy, if any;
4. the value: 1 / 0 / 0.5 if the game ended, else the heuristic's game value from the
   bot's point of view (tactics still in hand at the heuristic's price for playing
   them), squashed to a win chance.

Candidates are the heuristic's best ``candidates`` actions. Playing all of them on the
same deals (common random numbers) compares them far more precisely than sampling each
on its own deals; after every ``block`` deals the candidate with the lowest mean is
dropped (successive rejects), down to two. The move is the best mean.

We also tried a single-observer ISMCTS tree (UCB1 on the candidates, availability
counts below them) with full or depth-limited playouts: at equal budget it was weaker
against the heuristic than this design (see the tournament figures in the report).

Claims are never searched: a claim the solver proves is made at once, and flags already
decided count as won or lost in every evaluation (the exact claim rule in :mod:`sim`).
Other decisions (which deck to draw, Scout returns, Mud discards) are the heuristic's.

With ``iterations`` set (candidate evaluations per decision) the bot is exactly
reproducible from its seed; with only ``budget_s`` it stops on the clock, and the number
of iterations (hence the move) then depends on the machine's speed.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from typing import Literal

from battlejudge.engines.battleline.actions import Action
from battlejudge.engines.battleline.bots import heuristic
from battlejudge.engines.battleline.bots.base import Bot
from battlejudge.engines.battleline.bots.evaluate import Evaluator, game_value
from battlejudge.engines.battleline.bots.observation import Observation, observe
from battlejudge.engines.battleline.bots.sim import DRAW, Sim
from battlejudge.engines.battleline.state import BattleLineState
from battlejudge.solver.errors import InputError

EVEN = 4.5
"""The game value of an even position (every flag a coin flip)."""
SCALE = 1.5
"""Game value per unit of log-odds when a leaf's value is turned into a win chance."""
Reply = Literal["heuristic", "policy"]


@dataclass
class SearchStats:
    """What the last search did (for benchmarks and logs)."""

    iterations: int = 0
    deals: int = 0
    seconds: float = 0.0
    means: dict[str, float] = field(default_factory=dict)


class SearchBot(Bot):
    """Determinized search with heuristic replies and leaf values (see the module).

    ``budget_s``: seconds per decision; ``iterations``: candidate evaluations per
    decision instead (exactly reproducible); ``candidates``: how many of the
    heuristic's best moves are searched; ``block``: deals between rejections;
    ``horizon``: turns simulated per evaluation (2 = the move and the reply);
    ``reply``: the opponent model (``heuristic``, or the light model's ``policy``,
    faster and weaker); ``epsilon``: the light policy's random-move rate.
    """

    name: str = "search"

    def __init__(
        self,
        seed: int | None = None,
        *,
        rng: random.Random | None = None,
        budget_s: float | None = 1.0,
        iterations: int | None = None,
        candidates: int = 8,
        block: int = 3,
        horizon: int = 2,
        reply: Reply = "heuristic",
        epsilon: float = 0.1,
    ) -> None:
        super().__init__(seed, rng=rng)
        if iterations is None and (budget_s is None or budget_s <= 0):
            raise InputError("the search bot needs budget_s > 0 or iterations >= 1")
        if iterations is not None and iterations < 1:
            raise InputError(f"iterations must be at least 1, got {iterations}")
        if candidates < 1 or block < 1 or horizon < 1:
            raise InputError("candidates, block and horizon must be at least 1")
        if reply not in ("heuristic", "policy"):
            raise InputError(f"reply must be 'heuristic' or 'policy', got {reply!r}")
        self.budget_s = budget_s
        self.iterations = iterations
        self.candidates = candidates
        self.block = block
        self.horizon = horizon
        self.reply = reply
        self.epsilon = epsilon
        self.last = SearchStats()

    def step(self, state: BattleLineState) -> Action:
        start = time.perf_counter()
        actions = state.legal_actions()
        forced = heuristic.obvious(actions)
        if forced is not None:
            return forced
        obs = observe(state, state.current_player())
        if obs.phase != "play":
            return heuristic.choose(obs, actions)
        ranked = heuristic.score_plays(obs, actions)
        cands = [a for _, a in ranked[: self.candidates]]
        if len(cands) == 1:
            return cands[0]
        return self.search(obs, cands, start)

    def search(self, obs: Observation, cands: list[Action], start: float | None = None) -> Action:
        """The candidate with the best mean value over shared deals (see the module);
        ties go to the earlier candidate (the heuristic's order). With a time budget,
        the clock runs from ``start`` (default: now), and no deal is begun that the
        average deal so far says would end after the budget (one deal always runs)."""
        start = time.perf_counter() if start is None else start
        t0 = time.perf_counter()
        me = obs.player
        template = Sim.template(obs)
        alive = list(range(len(cands)))
        total = [0.0] * len(cands)
        count = [0] * len(cands)
        n = deals = 0
        while True:
            if self.iterations is not None:
                if n >= self.iterations:
                    break
            elif deals >= 1:
                now = time.perf_counter()
                per_deal = (now - t0) / deals
                if now + per_deal - start > (self.budget_s or 0.0):
                    break
            det = obs.determinize(self.rng)
            deal = template.dealt(me, obs.hand, det)
            seed = self.rng.getrandbits(64)
            # One evaluator of the opponent's view for the whole deal: his replies to
            # the candidates differ in a flag or two, and share everything else.
            opp_ev = Evaluator(deal.position(1 - me)) if self.reply == "heuristic" else None
            for i in alive:
                value = self._evaluate(deal.copy(), me, cands[i], random.Random(seed), opp_ev)
                total[i] += value
                count[i] += 1
                n += 1
            deals += 1
            if deals % self.block == 0 and len(alive) > 2:
                alive.remove(min(alive, key=lambda j: (total[j] / count[j], -j)))
        best = max(alive, key=lambda j: (total[j] / count[j], -j))
        self.last = SearchStats(
            iterations=n,
            deals=deals,
            seconds=time.perf_counter() - start,
            means={str(cands[j]): round(total[j] / count[j], 4) for j in range(len(cands))},
        )
        return cands[best]

    def _evaluate(
        self,
        sim: Sim,
        me: int,
        action: Action,
        rng: random.Random,
        opp_ev: Evaluator | None,
    ) -> float:
        """One candidate on one deal: its value for ``me`` in [0, 1]."""
        sim.apply_engine_action(me, action, rng)
        sim.end_turn(me)
        for turn in range(1, self.horizon):
            if sim.winner >= 0:
                break
            p = sim.to_move
            if turn == 1 and opp_ev is not None:
                sim.apply_engine_action(p, heuristic_action(sim, p, opp_ev), rng)
            else:
                sim.play(p, sim.policy_move(p, rng, self.epsilon))
            sim.end_turn(p)
        if sim.winner >= 0:
            return 0.5 if sim.winner == DRAW else 1.0 if sim.winner == me else 0.0
        v = game_value(Evaluator(sim.position(me)).chances())
        # Tactics still in hand count as the heuristic prices them, so that spending
        # one is not free here either.
        v += heuristic.tactics_held_value(sim.hands[me], sim.leader_played[me])
        return 1.0 / (1.0 + math.exp(-(v - EVEN) / SCALE))


def heuristic_action(sim: Sim, player: int, ev: Evaluator | None = None) -> Action:
    """The heuristic's play-phase action for ``player`` in this deal, from his point of
    view (his hand, the table). ``ev``: an evaluator of an earlier position of this deal
    from the same view, whose caches are reused (its flags are replaced by the current
    ones)."""
    actions = sim.play_actions(player)
    if len(actions) == 1:
        return actions[0]
    pos = sim.position(player)
    shared = ev.with_flags(pos.flags) if ev is not None else None
    return heuristic.score_plays(pos, actions, shared)[0][1]
