"""The search bot: Monte Carlo search over determinized information sets.

At each play decision the bot reads only its own view (:func:`observe`). An iteration
deals the hidden cards afresh (:meth:`Observation.determinize`: the opponent's hand and
the deck order, consistent with everything the bot has seen) into a copy of the game
(:meth:`BattleLineState.fix_hidden`), and plays every candidate move on that same deal
through the engine's own rules (its legal actions, claims and draws; chance draws take
the deal's deck order):

1. the candidate (any card or tactic, or pass), then the bot's claims (every claim the
   rules allow, at once) and its draw (the heuristic's deck);
2. the opponent's claims and reply: the heuristic's choice (any card or tactic) from
   the opponent's point of view on this deal (he knows his own hand, not the bot's),
   then his claims and draw;
3. ``horizon - 2`` more turns of the fast playout policy (:func:`policy_moves`), if any;
4. the value: 1 / 0 / 0.5 if the game ended, else the heuristic's game value from the
   bot's point of view (tactics still in hand at the heuristic's price for playing
   them), squashed to a win chance.

Other decisions inside a playout are the heuristic's (the deck to draw from, Mud
discards), except Scout returns: the lowest cards go back (the heuristic's way costs
more than the rest of the playout).
Candidates are the heuristic's best ``candidates`` actions. Playing all of them on the
same deals (common random numbers) compares them far more precisely than sampling each
on its own deals; after every ``block`` deals the candidate with the lowest mean is
dropped (successive rejects), down to two. The move is the best mean.

We also tried a single-observer ISMCTS tree (UCB1 on the candidates, availability
counts below them) with full or depth-limited playouts: at equal budget it was weaker
against the heuristic than this design (see the tournament figures in the report).

Claims are never searched: a claim the rules allow is made at once, and flags already
decided count as won or lost in every evaluation.

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

from battlejudge.engines.battleline.actions import DRAW, PASS, PLAY, RETURN, Action
from battlejudge.engines.battleline.bots import heuristic
from battlejudge.engines.battleline.bots.base import Bot
from battlejudge.engines.battleline.bots.evaluate import Evaluator, Position, game_value
from battlejudge.engines.battleline.bots.observation import (
    Determinization,
    Observation,
    observe,
)
from battlejudge.engines.battleline.cards import FOG, LEADERS, MORALE
from battlejudge.engines.battleline.state import DRAW_GAME, PLAY_PHASE, BattleLineState
from battlejudge.engines.game import CHANCE
from battlejudge.solver.battleline import decider
from battlejudge.solver.battleline.cards import TROOP_COUNT
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
    ``reply``: the opponent model (``heuristic``, or the fast playout ``policy``,
    faster and weaker); ``epsilon``: the playout policy's random-move rate.
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
        """The forced action when there is one; outside the play phase the heuristic's choice;
        else the best of the heuristic's top candidate plays after sampled rollouts within the
        bot's time budget."""
        start = time.perf_counter()
        actions = state.legal_actions()
        forced = heuristic.obvious(actions)
        if forced is not None:
            return forced
        obs = observe(state, state.current_player())
        if obs.phase != "play":
            return heuristic.choose(obs, actions)
        ranked = self.rank(obs, actions)
        cands = [a for _, a in ranked[: self.candidates]]
        if len(cands) == 1:
            return cands[0]
        return self.search(state, obs, cands, start)

    def rank(self, obs: Observation, actions: list[Action]) -> list[tuple[float, Action]]:
        """The play-phase actions scored, best first: the candidates are the first
        ``candidates`` of them (here the heuristic's ranking)."""
        return heuristic.score_plays(obs, actions)

    def sample(self, obs: Observation) -> Determinization:
        """One deal of the cards ``obs``'s player cannot see (here uniform over what is
        consistent with his view)."""
        return obs.determinize(self.rng)

    def search(
        self,
        state: BattleLineState,
        obs: Observation,
        cands: list[Action],
        start: float | None = None,
    ) -> Action:
        """The candidate with the best mean value over shared deals (see the module);
        ties go to the earlier candidate (the heuristic's order). ``obs`` is the view
        of the player to move in ``state``; every card he cannot see is dealt afresh in
        each deal. With a time budget, the clock runs from ``start`` (default: now),
        and no deal is begun that the average deal so far says would end after the
        budget (one deal always runs)."""
        start = time.perf_counter() if start is None else start
        t0 = time.perf_counter()
        me = obs.player
        template = state.clone()
        template.certify = False  # the playouts' claims need no proof
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
            det = self.sample(obs)
            deal = template.clone()
            deal.fix_hidden({1 - me: det.opp_hand}, det.decks)
            seed = self.rng.getrandbits(64)
            # One evaluator of the opponent's view for the whole deal: his replies to
            # the candidates differ in a flag or two, and share everything else.
            opp_ev = (
                Evaluator(Position.from_state(deal, 1 - me)) if self.reply == "heuristic" else None
            )
            for i in alive:
                value = self._evaluate(deal.clone(), me, cands[i], random.Random(seed), opp_ev)
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
        s: BattleLineState,
        me: int,
        action: Action,
        rng: random.Random,
        opp_ev: Evaluator | None,
    ) -> float:
        """One candidate on one deal (``s``, played on): its value for ``me`` in [0, 1]."""
        reply_turn = s.turn + 1
        end = s.turn + self.horizon
        s.apply_action_unchecked(action)
        while not s.is_terminal() and s.turn < end:
            p = s.current_player()
            if p == CHANCE:  # a draw: the deal fixed the order, one outcome
                s.apply_action_unchecked(s.chance_outcomes()[0][0])
                continue
            if s.phase == PLAY_PHASE:
                if s.turn == reply_turn and opp_ev is not None:
                    a = heuristic_action(s, p, opp_ev)
                else:
                    a = self.later_action(s, p, rng)
            else:
                a = playout_decision(s, p)
            s.apply_action_unchecked(a)
        if s.is_terminal():
            return result_value(s, me)
        return self.leaf_value(s, me)

    def later_action(self, s: BattleLineState, player: int, rng: random.Random) -> Action:
        """A play-phase action in a simulation after the opponent's reply (``horizon`` > 2):
        here the fast playout policy's."""
        return policy_action(s, player, rng, self.epsilon)

    def leaf_value(self, s: BattleLineState, me: int) -> float:
        """The value for ``me`` in [0, 1] of a deal's position where the simulation stops:
        the heuristic's game value, tactics still in hand counted as the heuristic prices
        them (so that spending one is not free here either), squashed to a win chance."""
        v = game_value(Evaluator(Position.from_state(s, me)).chances())
        v += heuristic.tactics_held_value(s.hands[me], s.leader_played[me])
        return 1.0 / (1.0 + math.exp(-(v - EVEN) / SCALE))


def result_value(s: BattleLineState, me: int) -> float:
    """A finished game's value for ``me``: 1 won, 0 lost, 0.5 drawn."""
    return 0.5 if s.winner == DRAW_GAME else 1.0 if s.winner == me else 0.0


def playout_decision(state: BattleLineState, player: int) -> Action:
    """``player``'s decision outside the play phase, in a playout: a claim the rules
    allow at once, the heuristic's deck to draw from, the lowest cards back after a
    Scout, and the heuristic's Mud discards (from his view of this deal)."""
    actions = state.legal_actions()
    forced = heuristic.obvious(actions)
    if forced is not None:
        return forced
    if actions[0].kind == DRAW:
        decks = {a.deck: a for a in actions}
        mine_on_top = [bool(top) and top[-1][1] == player for top in state.known_top]
        open_slots = sum(
            max(0, f.size - len(f.sides[player])) for f in state.flags if f.claimed_by < 0
        )
        return decks[heuristic.deck_choice(state.hands[player], open_slots, mine_on_top)]
    if actions[0].kind == RETURN:
        # The playout's Scout rule, much cheaper than the heuristic's: put back the
        # lowest troops (a tactic counts as a 6).
        return min(actions, key=lambda a: (a.card % 10 if a.card < TROOP_COUNT else 5, a.card))
    return heuristic.choose(observe(state, player), actions)


def heuristic_action(state: BattleLineState, player: int, ev: Evaluator | None = None) -> Action:
    """The heuristic's play-phase action for ``player`` in this deal, from his point of
    view (his hand, the table). ``ev``: an evaluator of an earlier position of this deal
    from the same view, whose caches are reused (its flags are replaced by the current
    ones)."""
    actions = state.legal_actions()
    if len(actions) == 1:
        return actions[0]
    pos = Position.from_state(state, player)
    shared = ev.with_flags(pos.flags) if ev is not None else None
    return heuristic.score_plays(pos, actions, shared)[0][1]


# -- the fast playout policy (turns beyond the reply, or reply="policy") ---------------------
_RANK_VALUE = 25
_WIN_FLAG = 100.0
_LOSE_FLAG = -20.0
"""A card on a flag it can no longer win (a dump: the lower the card, the better)."""


def key_value(key: int) -> float:
    """A complete formation on the policy's scale (rank dominates, sum breaks ties)."""
    if key < 0:
        return 0.0
    return float(decider.rank_of(key) * _RANK_VALUE + decider.sum_of(key))


def _pair_value(a: int, b: int) -> float:
    """How promising two troops are as the start of a three-card formation."""
    va, vb = a % 10 + 1, b % 10 + 1
    s = va + vb
    d = abs(va - vb)
    if a // 10 == b // 10:
        if d == 1:
            return 60.0 + s
        if d == 2:
            return 50.0 + s
        return 35.0 + s
    if d == 0:
        return 55.0 + 2 * va
    if d <= 2:
        return 25.0 + s
    return 5.0 + s


def potential(cards: list[int], size: int, fog: bool) -> float:
    """A cheap estimate of what an incomplete side is worth (a complete one: its key)."""
    n = len(cards)
    if n == 0:
        return 0.0
    if n >= size:
        return key_value(decider.strength(cards[:size], size, fog))
    if fog:
        return 4.0 * sum(decider.WILD_TOP[c] if c >= TROOP_COUNT else c % 10 + 1 for c in cards)
    if n == 1:
        c = cards[0]
        return 5.0 + (9.0 if c >= TROOP_COUNT else c % 10 + 1)
    if n == 2 and cards[0] < TROOP_COUNT and cards[1] < TROOP_COUNT and size == 3:
        return _pair_value(cards[0], cards[1])
    # Wild cards or Mud: what the cards can still reach with any troop, discounted.
    return 0.7 * key_value(decider.best_key(cards, decider.FULL_POOL, size, fog))


def policy_moves(state: BattleLineState, player: int) -> list[tuple[float, Action]]:
    """The fast playout policy's scored plays for ``player`` (troops, and Morale tactics
    when he may play a tactic), best first; a pass when no troop can be played. Only
    legal actions: cards in his hand on flags with a free slot on his side."""
    hand = state.hands[player]
    flags = [i for i, f in enumerate(state.flags) if f.open_slot(player)]
    opp = 1 - player
    scored: list[tuple[float, Action]] = []
    wild_ok = state.can_play_tactic(player)
    cards = sorted({c for c in hand if c < TROOP_COUNT or (wild_ok and c in MORALE)})
    if state.leader_played[player]:
        cards = [c for c in cards if c not in LEADERS]
    reachable = state.claim_pool()  # every troop not face up (his hand's included)
    for f in flags:
        flag = state.flags[f]
        mine = [p.card for p in flag.sides[player]]
        theirs = [p.card for p in flag.sides[opp]]
        n = flag.size
        fog = flag.has(FOG)
        base = potential(mine, n, fog)
        their_key = decider.strength(theirs, n, fog) if len(theirs) == n else -1
        for c in cards:
            new = [*mine, c]
            if len(new) == n:
                k = decider.strength(new, n, fog)
                if their_key >= 0:
                    score = _WIN_FLAG if k > their_key else _LOSE_FLAG - (c % 10)
                else:
                    score = key_value(k) - base
                    if k >= decider.PHALANX * decider.RANK_SCALE:
                        score += 10.0
            else:
                score = potential(new, n, fog) - base
                rest = decider.pool_without(reachable, [c])
                if their_key >= 0 and decider.best_key(new, rest, n, fog) < their_key:
                    score = _LOSE_FLAG - (c % 10)
            if c >= TROOP_COUNT:
                score -= 25.0  # keep wild cards for completing strong formations
            scored.append((score, Action(PLAY, card=c, flag=f + 1)))
    if not any(c < TROOP_COUNT for c in hand) or not flags:
        scored.append((0.0, Action(PASS)))
    scored.sort(key=lambda t: -t[0])
    return scored


def policy_action(
    state: BattleLineState, player: int, rng: random.Random, epsilon: float
) -> Action:
    """The playout policy's play: the best-scored move, a random one with chance
    ``epsilon``."""
    scored = policy_moves(state, player)
    if rng.random() < epsilon:
        return scored[rng.randrange(len(scored))][1]
    return scored[0][1]
