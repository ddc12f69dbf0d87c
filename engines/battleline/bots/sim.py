"""A light Battle Line model for the search bot's playouts.

The engine is exact and checks every claim with the SAT solver (tens of milliseconds
per game, most of it in claim checks), too slow for thousands of playouts per move.
This model plays a *determinized* position (every hidden card fixed: see
:meth:`Observation.determinize`) much faster:

- claims use :func:`formations.claim_holds` (tested equal to the solver's verdicts),
  made once per turn for the player to move, after his play;
- the turn is play one card (or pass when no troop can be played), claim, draw;
- every tactic's effect is modelled for the move the search makes at its root; the
  playout policy itself plays troops and Morale tactics only (other tactics stay in
  hand), draws as the heuristic does, resolves Scout and Mud discards with
  simple rules;
- the game ends as the rules say (three adjacent flags, any five), or when neither
  player can play for two turns (the house rule: more flags wins, equal is a draw).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from battlejudge.engines.battleline.actions import (
    DESERTER,
    DISCARD_PILE,
    PASS,
    PLAY,
    REDEPLOY,
    SCOUT,
    TRAITOR,
    Action,
)
from battlejudge.engines.battleline.bots import formations as fm
from battlejudge.engines.battleline.bots.evaluate import FlagView, Position
from battlejudge.engines.battleline.bots.observation import (
    FLAGS,
    Determinization,
    Observation,
)
from battlejudge.engines.battleline.cards import FOG, LEADERS, MORALE, MUD

HAND_SIZE = 7
DRAW = 2
"""``winner`` of a game the idle rule ends with equal flags."""
Move = tuple[int, int]
"""A playout move: (card, flag), or :data:`PASS_MOVE`."""
PASS_MOVE: Move = (-1, -1)

# Playout scores: a pattern value for an incomplete side, a key value for a complete one.
_RANK_VALUE = 25
_WIN_FLAG = 100.0
_LOSE_FLAG = -20.0
"""A card on a flag it can no longer win (a dump: the lower the card, the better)."""


def key_value(key: int) -> float:
    """A complete formation on the playout's scale (rank dominates, sum breaks ties)."""
    if key < 0:
        return 0.0
    return float(fm.rank_of(key) * _RANK_VALUE + fm.sum_of(key))


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
        return key_value(fm.strength(cards[:size], size, fog))
    if fog:
        return 4.0 * sum(fm.WILD_TOP[c] if c >= 60 else c % 10 + 1 for c in cards)
    if n == 1:
        c = cards[0]
        return 5.0 + (9.0 if c >= 60 else c % 10 + 1)
    if n == 2 and cards[0] < 60 and cards[1] < 60 and size == 3:
        return _pair_value(cards[0], cards[1])
    # Wild cards or Mud: what the cards can still reach with any troop, discounted.
    return 0.7 * key_value(fm.best_key(cards, fm.FULL_POOL, size, fog))


@dataclass
class Sim:
    """A determinized position: every card's place is known."""

    hands: list[list[int]]
    sides: list[list[list[int]]]
    done: list[list[int]]
    """Per flag, per player: the turn the side completed, or -1."""
    size: list[int]
    fog: list[bool]
    env: list[list[tuple[int, int]]]
    claimed: list[int]
    decks: list[list[int]]
    pool: list[int]
    """Troops not face up, as six 10-bit masks (the rules' pool for claims)."""
    tactics_played: list[int]
    leader_played: list[bool]
    turn: int
    to_move: int
    winner: int = -1
    idle: int = 0

    # -- building -----------------------------------------------------------------------
    @classmethod
    def template(cls, obs: Observation) -> Sim:
        """The public part of the position; hands and decks are filled by :meth:`dealt`."""
        sides = [[obs.side(f, 0), obs.side(f, 1)] for f in range(FLAGS)]
        size = [obs.size(f) for f in range(FLAGS)]
        done = [
            [
                max(t for _, t in obs.sides[f][p]) if len(obs.sides[f][p]) >= size[f] else -1
                for p in (0, 1)
            ]
            for f in range(FLAGS)
        ]
        face_up = obs.face_up()
        pool = list(fm.pool_from([c for c in range(60) if c not in face_up]))
        return cls(
            hands=[[], []],
            sides=sides,
            done=done,
            size=size,
            fog=[obs.has_env(f, FOG) for f in range(FLAGS)],
            env=[list(e) for e in obs.environment],
            claimed=list(obs.claimed_by),
            decks=[[], []],
            pool=pool,
            tactics_played=list(obs.tactics_played),
            leader_played=list(obs.leader_played),
            turn=obs.turn,
            to_move=obs.to_move,
        )

    def dealt(self, player: int, hand: list[int], det: Determinization) -> Sim:
        """A copy with the hidden cards of ``det`` in place (``hand`` is ``player``'s)."""
        out = self.copy()
        out.hands[player] = list(hand)
        out.hands[1 - player] = list(det.opp_hand)
        out.decks = [list(det.decks[0]), list(det.decks[1])]
        return out

    def copy(self) -> Sim:
        """An independent copy."""
        return Sim(
            hands=[list(self.hands[0]), list(self.hands[1])],
            sides=[[list(s[0]), list(s[1])] for s in self.sides],
            done=[list(d) for d in self.done],
            size=list(self.size),
            fog=list(self.fog),
            env=[list(e) for e in self.env],
            claimed=list(self.claimed),
            decks=[list(self.decks[0]), list(self.decks[1])],
            pool=list(self.pool),
            tactics_played=list(self.tactics_played),
            leader_played=list(self.leader_played),
            turn=self.turn,
            to_move=self.to_move,
            winner=self.winner,
            idle=self.idle,
        )

    # -- rules ----------------------------------------------------------------------------
    def open_flags(self, player: int) -> list[int]:
        return [
            f
            for f in range(FLAGS)
            if self.claimed[f] < 0 and len(self.sides[f][player]) < self.size[f]
        ]

    def tactic_ok(self, player: int) -> bool:
        return self.tactics_played[player] <= self.tactics_played[1 - player]

    def _face_up(self, card: int) -> None:
        if card < 60:
            self.pool[card // 10] &= ~(1 << (card % 10))

    def _place(self, player: int, card: int, flag: int) -> None:
        side = self.sides[flag][player]
        side.append(card)
        self._face_up(card)
        if len(side) == self.size[flag]:
            self.done[flag][player] = self.turn

    def _take(self, player: int, card: int, flag: int) -> None:
        self.sides[flag][player].remove(card)
        self.done[flag][player] = -1

    def _spend(self, player: int, card: int) -> None:
        self.hands[player].remove(card)
        if card >= 60:
            self.tactics_played[player] += 1
            if card in LEADERS:
                self.leader_played[player] = True

    def play(self, player: int, move: Move) -> None:
        """Play a troop or Morale tactic at a flag, or pass."""
        if move == PASS_MOVE:
            return
        card, flag = move
        self._spend(player, card)
        self._place(player, card, flag)
        self.idle = -1  # progress this turn

    def apply_engine_action(self, player: int, a: Action, rng: random.Random) -> None:
        """Apply a play-phase engine action (any tactic) for ``player``."""
        if a.kind == PASS:
            return
        self.idle = -1
        if a.kind == PLAY:
            if a.card in (FOG, MUD):
                self._spend(player, a.card)
                self._add_env(player, a.card, a.flag)
            else:
                self.play(player, (a.card, a.flag))
            return
        if a.kind == SCOUT:
            self._spend(player, 66)
            self._scout(player, rng)
            return
        tactic = {REDEPLOY: 67, DESERTER: 68, TRAITOR: 69}[a.kind]
        self._spend(player, tactic)
        opp = 1 - player
        if a.kind == TRAITOR:
            self._take(opp, a.card, a.source)
            self._place(player, a.card, a.flag)
            return
        owner = player if a.kind == REDEPLOY else opp
        if a.card in (FOG, MUD):
            self._remove_env(a.card, a.source)
            if a.kind == REDEPLOY and a.flag != DISCARD_PILE:
                self._add_env(player, a.card, a.flag)
            return
        self._take(owner, a.card, a.source)
        if a.kind == REDEPLOY and a.flag != DISCARD_PILE:
            self._place(player, a.card, a.flag)

    def _add_env(self, player: int, card: int, flag: int) -> None:
        self.env[flag].append((card, player))
        if card == FOG:
            self.fog[flag] = True
        else:
            self.size[flag] = 4
            for p in (0, 1):
                if len(self.sides[flag][p]) < 4:
                    self.done[flag][p] = -1

    def _remove_env(self, card: int, flag: int) -> None:
        self.env[flag] = [e for e in self.env[flag] if e[0] != card]
        if card == FOG:
            self.fog[flag] = any(e[0] == FOG for e in self.env[flag])
            return
        self.size[flag] = 3
        for p in (0, 1):
            side = self.sides[flag][p]
            if len(side) > 3:
                # RULINGS.md 10: the owner discards one; keep the strongest three.
                best = max(
                    range(len(side)),
                    key=lambda i: fm.strength(side[:i] + side[i + 1 :], 3, self.fog[flag]),
                )
                side.pop(best)
            if len(side) == 3:
                self.done[flag][p] = self.turn

    def _scout(self, player: int, rng: random.Random) -> None:
        """Draw three (troops first), put back the two lowest troops (or tactics)."""
        hand = self.hands[player]
        for _ in range(3):
            deck = self.decks[0] if self.decks[0] else self.decks[1]
            if not deck:
                break
            hand.append(deck.pop())
        for _ in range(min(2, len(hand))):
            worst = min(hand, key=lambda c: c % 10 if c < 60 else 5)
            hand.remove(worst)
            self.decks[0 if worst < 60 else 1].append(worst)

    def claims(self, player: int) -> None:
        """Claim every flag the rules allow ``player`` to claim now; stop at a win."""
        opp = 1 - player
        for f in range(FLAGS):
            if self.claimed[f] >= 0 or len(self.sides[f][player]) != self.size[f]:
                continue
            mine, theirs = self.sides[f][player], self.sides[f][opp]
            last = len(theirs) == self.size[f] and self.done[f][player] > self.done[f][opp]
            pool = (
                self.pool[0],
                self.pool[1],
                self.pool[2],
                self.pool[3],
                self.pool[4],
                self.pool[5],
            )
            if fm.claim_holds(mine, theirs, pool, self.size[f], self.fog[f], last):
                self.claimed[f] = player
                self.idle = -1
                if self._won(player):
                    self.winner = player
                    return

    def _won(self, player: int) -> bool:
        held = [c == player for c in self.claimed]
        if sum(held) >= 5:
            return True
        return any(held[i] and held[i + 1] and held[i + 2] for i in range(FLAGS - 2))

    def end_turn(self, player: int) -> None:
        """Claims, the draw (troops unless the hand holds no tactic), the next player."""
        self.claims(player)
        if self.winner >= 0:
            return
        hand = self.hands[player]
        if len(hand) < HAND_SIZE:
            deck = self._deck_choice(player)
            if deck >= 0:
                hand.append(self.decks[deck].pop())
                self.idle = -1
        self.idle += 1
        if self.idle >= 2:
            mine = self.claimed.count(player)
            theirs = self.claimed.count(1 - player)
            self.winner = player if mine > theirs else 1 - player if theirs > mine else DRAW
            return
        self.to_move = 1 - player
        self.turn += 1

    def _deck_choice(self, player: int) -> int:
        """As the heuristic draws: troops while they have somewhere to go, tactics when
        the hand has none (and four troops) or more troops than open slots."""
        troops, tactics = self.decks
        if not troops:
            return 1 if tactics else -1
        if not tactics:
            return 0
        hand = self.hands[player]
        n_troops = sum(1 for c in hand if c < 60)
        open_slots = sum(
            self.size[f] - len(self.sides[f][player]) for f in range(FLAGS) if self.claimed[f] < 0
        )
        if n_troops >= open_slots or (n_troops == len(hand) and n_troops >= 4):
            return 1
        return 0

    def position(self, player: int) -> Position:
        """The position as ``player`` sees it, for :class:`evaluate.Evaluator`."""
        opp = 1 - player
        flags = [
            FlagView(
                list(self.sides[f][player]),
                list(self.sides[f][opp]),
                self.size[f],
                self.fog[f],
                self.claimed[f],
                self.done[f][player],
                self.done[f][opp],
            )
            for f in range(FLAGS)
        ]
        hand = self.hands[player]
        in_hand = set(hand)
        pool = self.pool
        hidden = [c for c in range(60) if pool[c // 10] >> (c % 10) & 1]
        return Position(
            player,
            list(hand),
            flags,
            {c for c in range(60) if not pool[c // 10] >> (c % 10) & 1},
            [c for c in hidden if c not in in_hand],
            len(self.decks[0]),
            sum(1 for c in self.hands[opp] if c < 60),
        )

    def play_actions(self, player: int, environment_removable: bool = True) -> list[Action]:
        """Every legal play-phase action of ``player``, as the engine lists them
        (RULINGS.md 3, 9-12): troops, tactics within the limit, pass when no troop can
        be played."""
        out: list[Action] = []
        opp = 1 - player
        hand = self.hands[player]
        open_flags = self.open_flags(player)
        live = [f for f in range(FLAGS) if self.claimed[f] < 0]
        tactic_ok = self.tactic_ok(player)
        for c in sorted(set(hand)):
            if c < 60:
                out += [Action(PLAY, card=c, flag=f) for f in open_flags]
                continue
            if not tactic_ok:
                continue
            if c in MORALE:
                if c in LEADERS and self.leader_played[player]:
                    continue
                out += [Action(PLAY, card=c, flag=f) for f in open_flags]
            elif c in (FOG, MUD):
                out += [Action(PLAY, card=c, flag=f) for f in live]
            elif c == 66:
                out.append(Action(SCOUT, card=66))
            elif c == 67:
                for f in live:
                    for card in self.sides[f][player]:
                        dests = [g for g in open_flags if g != f] + [DISCARD_PILE]
                        out += [Action(REDEPLOY, card=card, source=f, flag=g) for g in dests]
                    for env, owner in self.env[f]:
                        if environment_removable and owner == player:
                            dests = [g for g in live if g != f] + [DISCARD_PILE]
                            out += [Action(REDEPLOY, card=env, source=f, flag=g) for g in dests]
            elif c == 68:
                for f in live:
                    out += [Action(DESERTER, card=card, source=f) for card in self.sides[f][opp]]
                    if environment_removable:
                        out += [
                            Action(DESERTER, card=env, source=f)
                            for env, owner in self.env[f]
                            if owner == opp
                        ]
            elif c == 69:
                for f in live:
                    for card in self.sides[f][opp]:
                        if card < 60:
                            out += [
                                Action(TRAITOR, card=card, source=f, flag=g) for g in open_flags
                            ]
        if not (any(c < 60 for c in hand) and open_flags):
            out.append(Action(PASS))
        return sorted(out)

    # -- the playout policy -----------------------------------------------------------------
    def moves(self, player: int) -> list[tuple[float, Move]]:
        """Scored plays for ``player`` (troops, and Morale tactics when allowed), best
        first; a pass when no troop can be played and no Morale tactic helps."""
        hand = self.hands[player]
        flags = self.open_flags(player)
        opp = 1 - player
        scored: list[tuple[float, Move]] = []
        wild_ok = self.tactic_ok(player)
        cards = sorted({c for c in hand if c < 60 or (wild_ok and c in MORALE)})
        avail = list(self.pool)
        for c in hand:
            if c < 60:
                avail[c // 10] |= 1 << (c % 10)
        reachable = (avail[0], avail[1], avail[2], avail[3], avail[4], avail[5])
        if self.leader_played[player]:
            cards = [c for c in cards if c not in LEADERS]
        for f in flags:
            mine = self.sides[f][player]
            theirs = self.sides[f][opp]
            n = self.size[f]
            fog = self.fog[f]
            base = potential(mine, n, fog)
            their_key = fm.strength(theirs, n, fog) if len(theirs) == n else -1
            for c in cards:
                new = [*mine, c]
                if len(new) == n:
                    k = fm.strength(new, n, fog)
                    if their_key >= 0:
                        score = _WIN_FLAG if k > their_key else _LOSE_FLAG - (c % 10)
                    else:
                        score = key_value(k) - base
                        if k >= 3 * fm.RANK_SCALE:
                            score += 10.0
                else:
                    score = potential(new, n, fog) - base
                    if their_key >= 0:
                        reach = fm.best_key(new, reachable, n, fog)
                        if reach < their_key:
                            score = _LOSE_FLAG - (c % 10)
                if c >= 60:
                    score -= 25.0  # keep wild cards for completing strong formations
                scored.append((score, (c, f)))
        if not any(c < 60 for c in hand) or not flags:
            scored.append((0.0, PASS_MOVE))
        scored.sort(key=lambda t: -t[0])
        return scored

    def policy_move(self, player: int, rng: random.Random, epsilon: float) -> Move:
        """The playout policy: the best-scored move, a random one with chance ``epsilon``."""
        scored = self.moves(player)
        if not scored:
            return PASS_MOVE
        if rng.random() < epsilon:
            return scored[rng.randrange(len(scored))][1]
        return scored[0][1]
