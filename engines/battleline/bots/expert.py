"""The expert bot: the search bot's determinized search with a match-aware value, leaves
judged on each deal's cards, and deals weighted by what the opponent's plays reveal.

It keeps the search bot's loop (:class:`~.search.SearchBot`: candidates played on the same
sampled deals, the opponent's reply by the heuristic from his view of the deal, successive
rejects) and changes what the loop measures:

1. **Match-aware value** (:func:`match_value`): the flags' win chances become the chance
   of winning the game, over every way the nine flags can fall, with the rules' own test of
   a win (:func:`~battlejudge.engines.battleline.state.flags_win`: three adjacent flags or
   five). A flag decided by a claim, or decided already though unclaimed (the exact
   decider inside the evaluation), counts with probability 1 or 0, so a flag is worth what
   it changes in the match: the fifth flag of a 4-4 match is worth everything, a flag
   next to two lost ones less. The heuristic and the search bot add the flags up instead.
   Each open flag's chance is first drawn towards even (:func:`calibrated`, log-odds times
   :data:`TAU`): the evaluator's chances, fitted against the results of 1,000 games, are far
   too sure, and taken as they are they make the match value play as if flags were settled
   long before they are.
2. **Candidates** are ranked by the heuristic's one-ply scores on that value
   (:func:`rank`), tactics at their price scaled to the new value (:data:`COST_SCALE`).
   Played alone, that ranking wins 80-87% against the heuristic (200-game runs; 60-69%
   without the calibration).
3. **Leaves judged on the deal** (:func:`deal_probabilities`): a deal fixes the
   opponent's hand and the deck order, so the leaf's evaluation gives each player his own
   hand (:data:`LEAF_HAND_P`) and the troops he will draw next (:data:`DRAW_P`,
   :data:`DRAWS` per open place), and nothing else, instead of spreading the unseen cards
   evenly; the search's average over deals then carries the uncertainty.
   In the troops-only game the leaf is learnt (:func:`learned_value`, weights
   :data:`LEARNED` fitted on 2,000 games): how much a flag's chance counts grows as the
   deck runs down, the cards placed and the complete sides at each flag and the players'
   open places count as well; the calibrated value stayed too sure late in that game.
4. **Inference** (:func:`strong_completions`, :meth:`ExpertBot.sample`): a flag where the
   opponent has one card to go and has played elsewhere since says he probably holds
   none of the troops that would give him a Phalanx or better there. Deals are drawn
   uniformly and kept with the likelihood that he held such troops and still played
   elsewhere (each kept with chance ``1 - PLAY_RATE`` unless it was his latest draw), by
   rejection (at most :data:`TRIES` draws, the last one kept).

Claims, draws, Scout returns and Mud discards are the heuristic's, as in the search bot.
``budget_s`` seconds per decision, or ``iterations`` candidate evaluations (exactly
reproducible from the seed). It plays the full game and the troops-only game (the
community protocol's) alike.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from battlejudge.engines.battleline.actions import Action
from battlejudge.engines.battleline.bots import heuristic
from battlejudge.engines.battleline.bots.evaluate import Evaluator, Position
from battlejudge.engines.battleline.bots.observation import Determinization, Observation
from battlejudge.engines.battleline.bots.search import (
    SearchBot,
    SearchStats,
    playout_decision,
    result_value,
)
from battlejudge.engines.battleline.cards import FOG
from battlejudge.engines.battleline.record import is_troops_only
from battlejudge.engines.battleline.state import (
    FLAGS,
    HAND_SIZE,
    PLAY_PHASE,
    BattleLineState,
    flags_win,
)
from battlejudge.engines.game import CHANCE
from battlejudge.solver.battleline import decider
from battlejudge.solver.battleline.cards import TROOP_COUNT

COST_SCALE = 0.4
"""Tactics' prices (:data:`heuristic.TACTIC_COST`, in flags) on the win-probability scale:
0.4 won the 1-ply trials among 0.05-1.0."""
TAU = 0.25
"""How far each flag's win chance is drawn towards even, in log-odds, before the match
value (:func:`match_value`): the evaluator's flag chances are far too sure of themselves
(see :func:`calibrated`)."""
HAND_P = 0.4
"""The chance that a troop in hand ends up at a flag it suits (the heuristic's is 0.6), in
the one-ply ranking."""
LEAF_HAND_P = 0.6
"""The same in a deal's leaf, where the hand is known."""
DRAW_P = 0.6
"""The chance that a troop a player will draw in this deal ends up at a flag it suits."""
DRAWS = 0.75
"""How many of the deck's next troops a leaf gives each player, per open place he has."""
PLAY_RATE = 0.7
"""The chance that a player holding a troop that completes a Phalanx or better plays it."""
TRIES = 12
"""Deals drawn at most for one kept deal (the inference's rejection sampling)."""
REPLIES = 6
"""The opponent's replies the endgame search tries against each candidate."""
LEARNED = (0.526, -0.5299, 0.4315, -0.5134, 1.7242, 0.2418, 0.507)
"""The troops-only leaf's weights (:func:`learned_value`), fitted by
:func:`battlejudge.bench.calibration.fit_learned` on 83,978 positions of 2,000 troops-only
games (the expert at 40 iterations and at one ply against the heuristic, seats alternating;
a fifth of the games held out): held-out log loss 0.442, where the calibrated leaf
(:data:`TAU`) scores 0.484."""
DEAL_DECK = TROOP_COUNT - 2 * HAND_SIZE
"""Troops in the troop deck after the deal (60 less the two hands): a stage of 1."""
LOGIT_CAP = 12.0
"""Log-odds are kept within this (a chance of 6e-6 from sure), so that none overflows."""


def _outcome(mask: int) -> float:
    """1 if the player holding the flags in ``mask`` (bit i: flag i) wins the game, 0 if his
    opponent does, 0.5 if both hold a winning set (which came first is not known)."""
    held = [bool(mask >> i & 1) for i in range(FLAGS)]
    mine = flags_win(held) is not None
    theirs = flags_win([not h for h in held]) is not None
    if mine == theirs:
        return 0.5
    return 1.0 if mine else 0.0


OUTCOME = tuple(_outcome(m) for m in range(1 << FLAGS))
"""The game's result for every way the nine flags can fall (see :func:`_outcome`)."""


def win_probability(p: Sequence[float]) -> float:
    """The chance of winning the game when flag i is won with chance ``p[i]``,
    independently: the sum over the 512 ways the flags can fall of its chance times its
    :data:`OUTCOME`."""
    dist = [1.0]
    for pi in p:
        qi = 1.0 - pi
        dist = [x * qi for x in dist] + [x * pi for x in dist]
    return sum(w * o for w, o in zip(dist, OUTCOME, strict=True))


def calibrated(p: Sequence[float], tau: float = TAU) -> list[float]:
    """Each flag's win chance with its log-odds scaled by ``tau`` (a flag already decided,
    0 or 1, stays so). Fitted on 50,000 positions of 1,000 games (the heuristic and the
    one-ply expert ranking against each other): the game's result from the leaf's flag
    chances had a log loss of 0.70, worse than a coin's 0.69, and 0.54 with the chances
    drawn in at 0.3. Played greedily at one ply with ``tau`` 0.2-0.3, the match value won
    80-87% of 200-game runs against the heuristic (60% without)."""
    out = []
    for x in p:
        if 0.0 < x < 1.0:
            a, b = x**tau, (1.0 - x) ** tau  # the log-odds times tau, without overflow
            x = a / (a + b)
        out.append(x)
    return out


def match_value(p: Sequence[float]) -> float:
    """The expert's value of flag chances ``p``: :func:`win_probability` of the
    :func:`calibrated` chances."""
    return win_probability(calibrated(p))


def logit(x: float) -> float:
    """The log-odds of ``x``, within :data:`LOGIT_CAP`."""
    x = min(1.0 - 1e-12, max(1e-12, x))
    return max(-LOGIT_CAP, min(LOGIT_CAP, math.log(x / (1.0 - x))))


def sigmoid(z: float) -> float:
    """The chance of log-odds ``z``."""
    return 1.0 / (1.0 + math.exp(-max(-LOGIT_CAP, min(LOGIT_CAP, z))))


@dataclass(frozen=True)
class LeafFeatures:
    """What the troops-only leaf (:func:`learned_value`) reads of a deal, for one player."""

    chances: tuple[float, ...]
    """Each flag's chance judged on the deal's cards (:func:`deal_chances`)."""
    placed: tuple[float, ...]
    """Per flag, his cards there less the opponent's, over the flag's size."""
    complete: tuple[float, ...]
    """Per flag, 1 if only his side is complete, -1 if only the opponent's, else 0."""
    stage: float
    """Troops left in the troop deck over :data:`DEAL_DECK`: 1 at the deal, 0 when empty."""
    tempo: float
    """The opponent's open places on unclaimed flags less his own, over 10."""


def leaf_features(s: BattleLineState, me: int) -> LeafFeatures:
    """The :class:`LeafFeatures` of the deal ``s`` (every card fixed) for ``me``."""
    opp = 1 - me
    placed, complete = [], []
    open_places = [0, 0]
    for f in s.flags:
        mine, theirs = len(f.sides[me]), len(f.sides[opp])
        placed.append((mine - theirs) / f.size)
        complete.append(float(mine >= f.size) - float(theirs >= f.size))
        if f.claimed_by < 0:
            open_places[0] += max(0, f.size - mine)
            open_places[1] += max(0, f.size - theirs)
    return LeafFeatures(
        tuple(deal_chances(s, me)),
        tuple(placed),
        tuple(complete),
        s.deck_size(0) / DEAL_DECK,
        (open_places[1] - open_places[0]) / 10.0,
    )


def learned_value(x: LeafFeatures, w: Sequence[float] = LEARNED) -> float:
    """The troops-only leaf: each open flag's log-odds become ``(w0 + w1 stage)`` times its
    chance's, plus ``w2`` times the cards placed and ``w3`` times the complete sides there
    (a decided flag stays 0 or 1); the game's chance over those (:func:`win_probability`)
    then has its log-odds scaled by ``w4``, plus ``w5`` times the tempo and ``w6`` times the
    tempo as the deck runs out. Every term changes sign with the player, so a position is
    worth 1 less its value to the opponent, up to the rounding."""
    slope = w[0] + w[1] * x.stage
    p = [
        c if c <= 0.0 or c >= 1.0 else sigmoid(slope * logit(c) + w[2] * d + w[3] * k)
        for c, d, k in zip(x.chances, x.placed, x.complete, strict=True)
    ]
    z = w[4] * logit(win_probability(p)) + (w[5] + w[6] * (1.0 - x.stage)) * x.tempo
    return sigmoid(z)


def rank(obs: Observation | Position, actions: list[Action]) -> list[tuple[float, Action]]:
    """The play-phase actions scored by the change they bring to :func:`match_value`
    (tactics net of their scaled price), best first: the expert's one-ply judgement."""
    ev = Evaluator(obs, hand_p=HAND_P)
    return heuristic.score_plays(obs, actions, ev, match_value, COST_SCALE)


def deal_probabilities(
    s: BattleLineState,
    me: int,
    hand_p: float = LEAF_HAND_P,
    draw_p: float = DRAW_P,
    draws: float = DRAWS,
) -> tuple[list[float], list[float]]:
    """Per troop, the chance that ``me`` and that his opponent get it, in a deal (a state
    whose hidden cards are fixed), at the start of ``me``'s turn: each player's hand
    troops count ``hand_p``; the troop deck's top cards go to them in turn (``me``
    first), ``draws`` per open place he has (at least one), at ``draw_p``; every
    other troop 0."""
    opp = 1 - me
    order = [*s.unknown[0], *(c for c, _ in s.known_top[0])]  # bottom first
    open_slots = [0, 0]
    for f in s.flags:
        if f.claimed_by < 0:
            for p in (0, 1):
                open_slots[p] += max(0, f.size - len(f.sides[p]))
    probs = ([0.0] * TROOP_COUNT, [0.0] * TROOP_COUNT)
    for p in (me, opp):
        for c in s.hands[p]:
            if c < TROOP_COUNT:
                probs[p][c] = hand_p
    n = len(order)
    for p, first in ((me, 1), (opp, 2)):
        available = (n - first) // 2 + 1 if n >= first else 0
        for i in range(min(available, max(1, int(open_slots[p] * draws)))):
            probs[p][order[n - first - 2 * i]] = draw_p
    return probs[me], probs[opp]


def deal_chances(
    s: BattleLineState,
    me: int,
    hand_p: float = LEAF_HAND_P,
    draw_p: float = DRAW_P,
    draws: float = DRAWS,
) -> list[float]:
    """Each flag's chance for ``me`` in the deal ``s``, judged on the deal's cards
    (:func:`deal_probabilities` with these parameters), before the calibration."""
    p_me, p_opp = deal_probabilities(s, me, hand_p, draw_p, draws)
    return Evaluator.with_probabilities(Position.from_state(s, me), p_me, p_opp).chances()


def strong_completions(obs: Observation) -> list[frozenset[int]]:
    """For each flag where the opponent has one card to go, all placed before his latest
    play (he has played elsewhere since), no Fog: the unseen troops that would give
    him a Phalanx or better there."""
    opp = obs.opponent
    turns = [t for f in range(FLAGS) for _, t in obs.sides[f][opp]]
    if not turns:
        return []
    latest = max(turns)
    out = []
    for f in range(FLAGS):
        side = obs.sides[f][opp]
        size = obs.size(f)
        if obs.claimed_by[f] >= 0 or obs.has_env(f, FOG) or len(side) != size - 1:
            continue
        if max(t for _, t in side) >= latest:
            continue
        cards = [c for c, _ in side]
        good = frozenset(
            c
            for c in obs.unseen[0]
            if decider.strength([*cards, c], size, False) >= decider.PHALANX * decider.RANK_SCALE
        )
        if good:
            out.append(good)
    return out


def likelihood(opp_hand: Sequence[int], completions: list[frozenset[int]]) -> float:
    """The chance that the opponent, holding ``opp_hand``, played as he did: each troop of
    his hand that completes one of ``completions`` was held at his latest play unless it
    was the card he drew after it (one in his hand), and then left with chance
    ``1 - PLAY_RATE``."""
    hand = set(opp_hand)
    held_then = 1.0 - 1.0 / max(1, len(opp_hand))
    like = 1.0
    for good in completions:
        for _ in good & hand:
            like *= 1.0 - PLAY_RATE * held_then
    return like


class ExpertBot(SearchBot):
    """The search bot's loop with the expert's value, leaves and deals (see the module).
    ``budget_s``: seconds per decision; ``iterations``: candidate evaluations per
    decision instead (exactly reproducible); the other options are the search bot's."""

    name: str = "expert"

    _inferred: tuple[Observation | None, list[frozenset[int]]] = (None, [])
    """The view the inference last read, and what it read there (per bot, once set)."""
    troops_only: bool = False
    """Whether the game searched is troops-only (set by :meth:`search`): its leaves are
    then :func:`learned_value`'s."""

    def rank(self, obs: Observation, actions: list[Action]) -> list[tuple[float, Action]]:
        """The candidates in the order of :func:`rank` (the match-aware one-ply scores)."""
        return rank(obs, actions)

    def sample(self, obs: Observation) -> Determinization:
        """A deal weighted by :func:`likelihood` (rejection; see the module)."""
        if self._inferred[0] is not obs:
            self._inferred = (obs, strong_completions(obs))
        completions = self._inferred[1]
        det = obs.determinize(self.rng)
        if not completions:
            return det
        for _ in range(TRIES - 1):
            if self.rng.random() < likelihood(det.opp_hand, completions):
                return det
            det = obs.determinize(self.rng)
        return det

    def search(
        self,
        state: BattleLineState,
        obs: Observation,
        cands: list[Action],
        start: float | None = None,
    ) -> Action:
        """With both decks empty, :meth:`endgame`; else the search bot's loop."""
        self.troops_only = is_troops_only(state)
        if known_hands(obs):
            return self.endgame(state, obs, cands, start)
        return super().search(state, obs, cands, start)

    def endgame(
        self,
        state: BattleLineState,
        obs: Observation,
        cands: list[Action],
        start: float | None = None,
    ) -> Action:
        """Both decks empty: the one deal there is, searched two plies deep. Each candidate
        (in rank order) meets the opponent's ``REPLIES`` best replies by :func:`rank` from his
        (now complete) view, and is worth its worst outcome; the best candidate is played.
        The budget (or ``iterations`` leaves) stops the search after the candidate under way,
        and the best of the candidates done is played."""
        start = time.perf_counter() if start is None else start
        me = obs.player
        deal = state.clone()
        deal.certify = False
        det = obs.determinize(self.rng)
        deal.fix_hidden({1 - me: det.opp_hand}, det.decks)
        best, best_value, leaves = cands[0], -1.0, 0
        means: dict[str, float] = {}
        for cand in cands:
            s = deal.clone()
            s.apply_action_unchecked(cand)
            settle(s)
            value = self._reply_value(s, me)
            leaves += max(1, REPLIES)
            means[str(cand)] = round(value, 4)
            if value > best_value:
                best, best_value = cand, value
            if self.iterations is not None:
                if leaves >= self.iterations:
                    break
            elif time.perf_counter() - start > (self.budget_s or 0.0):
                break
        self.last = SearchStats(
            iterations=leaves, deals=1, seconds=time.perf_counter() - start, means=means
        )
        return best

    def _reply_value(self, s: BattleLineState, me: int) -> float:
        """The worst, for ``me``, of the opponent's best replies in ``s`` (his play-phase
        decision, or the game's end)."""
        if s.is_terminal():
            return result_value(s, me)
        opp = s.current_player()
        replies = [a for _, a in rank(Position.from_state(s, opp), s.legal_actions())[:REPLIES]]
        worst = 1.0
        for reply in replies:
            t = s.clone()
            t.apply_action_unchecked(reply)
            settle(t)
            worst = min(worst, result_value(t, me) if t.is_terminal() else self.leaf_value(t, me))
        return worst

    def leaf_value(self, s: BattleLineState, me: int) -> float:
        """In a troops-only game, :func:`learned_value`; else :func:`match_value` of the
        flags judged on the deal's cards (:func:`deal_probabilities`), plus the tactics still
        in hand at their scaled price (so that spending one is not free)."""
        if self.troops_only:
            return learned_value(leaf_features(s, me))
        held = heuristic.tactics_held_value(s.hands[me], s.leader_played[me])
        return match_value(deal_chances(s, me)) + COST_SCALE * held


def settle(s: BattleLineState) -> None:
    """Play ``s`` on to the next play-phase decision, or its end: claims the rules allow are
    made, other decisions are the playouts' (:func:`~.search.playout_decision`), and chance
    takes the deal's fixed order."""
    while not s.is_terminal():
        p = s.current_player()
        if p == CHANCE:
            s.apply_action_unchecked(s.chance_outcomes()[0][0])
        elif s.phase == PLAY_PHASE:
            return
        else:
            s.apply_action_unchecked(playout_decision(s, p))


def known_hands(obs: Observation) -> bool:
    """Whether nothing is hidden from ``obs``'s player: both decks are empty, so every card
    he cannot see is in the opponent's hand."""
    return obs.deck_sizes == (0, 0)
