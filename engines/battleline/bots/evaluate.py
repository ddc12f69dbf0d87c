"""The heuristic's judgement of a position: how likely each flag is won, and what that
is worth.

For each side of a flag it lists the formations the side can still reach (every
Wedge and Skirmish run, Phalanx value and Battalion color, and a Host), each with the
probability that the cards it still needs arrive: a card already in the player's hand
counts ``HAND_P``; an unseen card (deck or the opponent's hand) counts the chance that
it reaches that player before the game ends. Taking the strongest reachable
formation first gives a distribution of the side's final strength; comparing the two
sides' distributions gives the chance of winning the flag. Flags a claim already
decides (:func:`battlejudge.solver.battleline.decider.claim_holds`, the rules' exact
decider) count 1 or 0.

The game value sums the flags and adds, for every three adjacent flags
(:data:`~battlejudge.engines.battleline.state.ADJACENT_TRIPLES`), the chance of holding
all three minus the opponent's (Breakthrough); the heuristic plays to raise it.
Everything here uses only one player's view: a :class:`Position` built from his
:class:`Observation`, or, inside the search, from a determinized game state seen from
his side (:meth:`Position.from_state`: his hand, the table, how many troops the
opponent holds).
"""

from __future__ import annotations

import copy
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from battlejudge.engines.battleline.bots.observation import Observation
from battlejudge.engines.battleline.cards import FOG
from battlejudge.engines.battleline.state import ADJACENT_TRIPLES, FLAGS, BattleLineState
from battlejudge.solver.battleline import decider
from battlejudge.solver.battleline.cards import TROOP_COUNT

HAND_P = 0.6
"""The chance that a troop in hand ends up at a given flag if it suits it."""
BREAKTHROUGH = 1.0
"""Weight of three adjacent flags in the game value."""
EPS = 0.002


class Dist:
    """A side's final strength: ``items`` (key, probability), strongest first, and
    ``fail``, the probability that the side never completes."""

    __slots__ = ("_asc", "fail", "items")

    def __init__(self, items: tuple[tuple[int, float], ...], fail: float) -> None:
        self.items = items
        self.fail = fail
        self._asc: tuple[list[int], list[float], dict[int, float]] | None = None

    def ascending(self) -> tuple[list[int], list[float], dict[int, float]]:
        """Keys ascending, the mass strictly below each, and the mass at each key."""
        if self._asc is None:
            asc = sorted(self.items)
            keys = [k for k, _ in asc]
            cum = [0.0]
            at: dict[int, float] = {}
            for k, p in asc:
                cum.append(cum[-1] + p)
                at[k] = at.get(k, 0.0) + p
            self._asc = (keys, cum, at)
        return self._asc


class Probs:
    """Per-troop chances that a player gets each troop, with derived summaries
    (cached: a side's targets depend only on these)."""

    def __init__(self, p: Sequence[float], tag: object) -> None:
        self.p = list(p)
        self.tag = tag
        self.any_value = [
            1.0 - _prod(1.0 - self.p[c * 10 + v] for c in range(6)) for v in range(10)
        ]
        """Per value (index v-1): the chance to get at least one troop of that value."""
        items = sorted(
            ((c % 10 + 1, pc) for c, pc in enumerate(self.p) if pc > 0), key=lambda t: -t[0]
        )
        self.host = _top_all(items)
        self._battalion: dict[int, list[tuple[float, float]]] = {}
        self._phalanx: dict[tuple[int, int], float] = {}
        self._wedge: dict[tuple[int, int, tuple[int, ...]], float] = {}
        self._skirmish: dict[tuple[int, tuple[int, ...]], float] = {}

    def without(self, cards: Sequence[int], tag: object) -> Probs:
        """These probabilities with the troops ``cards`` known to be out of reach (probability
        0), cached under ``tag``."""
        p = list(self.p)
        for c in cards:
            if c < TROOP_COUNT:
                p[c] = 0.0
        return Probs(p, tag)

    def battalion(self, col: int, k: int) -> tuple[float, float]:
        """(expected sum of the k best troops of ``col`` obtained, P(k obtained))."""
        got = self._battalion.get(col)
        if got is None:
            p = self.p
            items = [(v, p[col * 10 + v - 1]) for v in range(10, 0, -1)]
            got = _top_all([it for it in items if it[1] > 0])
            self._battalion[col] = got
        return got[k]

    def phalanx(self, v: int, k: int) -> float:
        """P(at least k troops of value v obtained)."""
        got = self._phalanx.get((v, k))
        if got is None:
            got = _at_least([self.p[c * 10 + v - 1] for c in range(6)], k)
            self._phalanx[(v, k)] = got
        return got

    def wedge(self, col: int, missing: int, wilds: tuple[int, ...]) -> float:
        """The chance to fill ``missing`` places of a Wedge in color ``col`` with the wild cards
        ``wilds`` (memoised)."""
        got = self._wedge.get((col, missing, wilds))
        if got is None:
            got = _fill_p(missing, wilds, self.p[col * 10 : col * 10 + 10])
            self._wedge[(col, missing, wilds)] = got
        return got

    def skirmish(self, missing: int, wilds: tuple[int, ...]) -> float:
        """The chance to fill ``missing`` places of a Skirmish Line with the wild cards ``wilds``
        (memoised)."""
        got = self._skirmish.get((missing, wilds))
        if got is None:
            got = _fill_p(missing, wilds, self.any_value)
            self._skirmish[(missing, wilds)] = got
        return got


def _prod(xs: Iterable[float]) -> float:
    out = 1.0
    for x in xs:
        out *= x
    return out


_KMAX = 4


def _top_all(items: Sequence[tuple[int, float]]) -> list[tuple[float, float]]:
    """For k = 0..4: (expected sum of the k best values obtained, scaled to k cards;
    P(at least k obtained)) for independent items (value, probability), best first."""
    # m0..m4: the mass of 0..3 and "4 or more" obtained so far; a1..a4: the expected
    # sums. Unrolled (the search's hottest loop), in the same floating-point order.
    m0, m1, m2, m3, m4 = 1.0, 0.0, 0.0, 0.0, 0.0
    a1 = a2 = a3 = a4 = 0.0
    for v, p in items:
        vp = v * p
        below = m0
        a1 += vp * below
        below += m1
        a2 += vp * below
        below += m2
        a3 += vp * below
        below += m3
        a4 += vp * below
        moved = m3 * p
        m3 -= moved
        m4 += moved
        moved = m2 * p
        m2 -= moved
        m3 += moved
        moved = m1 * p
        m1 -= moved
        m2 += moved
        moved = m0 * p
        m0 -= moved
        m1 += moved
    mass = [m0, m1, m2, m3, m4]
    acc = [0.0, a1, a2, a3, a4]
    out = [(0.0, 1.0)]
    for k in range(1, _KMAX + 1):
        at_least = sum(mass[k:])
        expected = sum(c * mass[c] for c in range(k)) + k * at_least
        out.append((acc[k] / expected * k, at_least) if expected > 0 else (0.0, 0.0))
    return out


def _at_least(ps: Sequence[float], k: int) -> float:
    """P(at least k successes) of independent trials."""
    if k <= 0:
        return 1.0
    mass = [1.0] + [0.0] * k
    for p in ps:
        if p <= 0:
            continue
        for c in range(k - 1, -1, -1):
            moved = mass[c] * p
            mass[c] -= moved
            mass[c + 1] += moved
    return mass[k]


def _fill_p(missing: int, wilds: Sequence[int], pv: Sequence[float]) -> float:
    """The best chance to fill the ``missing`` values (bits) when the wilds take some
    of them (one each) and every other value needs its card (chance ``pv[v-1]``)."""
    if not wilds:
        p = 1.0
        m = missing
        while m:
            bit = m & -m
            p *= pv[bit.bit_length() - 1]
            if p <= 0:
                return 0.0
            m &= ~bit
        return p
    best = 0.0
    w = decider.WILD_MASK[wilds[0]] & missing
    while w:
        bit = w & -w
        best = max(best, _fill_p(missing & ~bit, wilds[1:], pv))
        w &= ~bit
    return best


def side_dist(cards: Sequence[int], size: int, fog: bool, probs: Probs) -> Dist:
    """The distribution of the strongest formation this side ends with (see module). The
    categories, runs, values and colors still open are the rules' (:func:`decider.shape`,
    as :func:`decider.best_key` reads them); only the chances are this module's."""
    k = size - len(cards)
    if k <= 0:
        return Dist(((decider.strength(cards[:size], size, fog), 1.0),), 0.0)
    side = decider.shape(cards, size)
    wilds = tuple(sorted(side.wilds))
    tmask = side.values
    base = side.troop_sum + side.wild_top
    host_sum, host_p = probs.host[k] if k < len(probs.host) else (0.0, 0.0)
    targets: list[tuple[int, float]] = []
    if fog:
        if host_p > EPS:
            targets.append((round(base + host_sum), host_p))
        return _combine(targets)
    if side.one_color:
        for col in side.colors:
            for rsum, rmask in side.runs:
                pr = probs.wedge(col, rmask & ~tmask, wilds)
                if pr > EPS:
                    targets.append((decider.WEDGE * decider.RANK_SCALE + rsum, pr))
    for v in side.phalanx:
        pr = probs.phalanx(v, k)
        if pr > EPS:
            targets.append((decider.PHALANX * decider.RANK_SCALE + size * v, pr))
    if side.one_color:
        for col in side.colors:
            top, pr = probs.battalion(col, k)
            if pr > EPS:
                targets.append((decider.BATTALION * decider.RANK_SCALE + round(base + top), pr))
    if side.runs:
        for rsum, rmask in side.runs:
            pr = probs.skirmish(rmask & ~tmask, wilds)
            if pr > EPS:
                targets.append((decider.SKIRMISH * decider.RANK_SCALE + rsum, pr))
    if host_p > EPS:
        targets.append((round(base + host_sum), host_p))
    return _combine(targets)


def _combine(targets: list[tuple[int, float]]) -> Dist:
    """Strongest first: each target counts when it succeeds and no stronger one did."""
    targets.sort(key=lambda t: -t[0])
    out: list[tuple[int, float]] = []
    left = 1.0
    for key, p in targets:
        share = left * p
        if share > EPS / 10:
            out.append((key, share))
            left -= share
    return Dist(tuple(out), left)


def win_chance(mine: Dist, theirs: Dist, tie_mine: float) -> float:
    """P(my final strength beats theirs); a tie counts ``tie_mine`` (who completes last
    loses it); a side that never completes loses to one that does."""
    keys, cum, at = theirs.ascending()
    t_fail = theirs.fail
    total = 0.0
    for key, p in mine.items:
        i = bisect_left(keys, key)
        total += p * (cum[i] + t_fail + at.get(key, 0.0) * tie_mine)
    total += mine.fail * t_fail * 0.5
    return min(1.0, max(0.0, total))


def game_value(p: Sequence[float]) -> float:
    """Flags expected plus the Breakthrough term (see module)."""
    v = sum(p)
    for i, j, k in ADJACENT_TRIPLES:
        a, b, c = p[i], p[j], p[k]
        v += BREAKTHROUGH * (a * b * c - (1 - a) * (1 - b) * (1 - c))
    return v


@dataclass
class FlagView:
    """One flag as an evaluation sees it (cards as lists, the environment as flags)."""

    mine: list[int]
    theirs: list[int]
    size: int
    fog: bool
    claimed: int
    mine_done: int
    theirs_done: int
    """The turn each side completed (-1 if incomplete), for ties (docs/rulings.md 7)."""


@dataclass
class Position:
    """What an evaluation needs, from one player's point of view."""

    player: int
    hand: list[int]
    flags: list[FlagView]
    face_up: AbstractSet[int]
    """Every troop on the table or discarded."""
    unseen: list[int]
    """Troops the player cannot see (the opponent's hand and the troop deck)."""
    troop_deck: int
    opp_troops: int
    """How many troops the opponent holds."""

    @classmethod
    def from_observation(cls, obs: Observation) -> Position:
        """The evaluator's view of what ``obs``'s player sees: each flag's sides and environment,
        the troops face up, the troops unseen and how many troops the opponent holds."""
        me, opp = obs.player, obs.opponent
        views = []
        for f in range(FLAGS):
            size = obs.size(f)
            mine = obs.sides[f][me]
            theirs = obs.sides[f][opp]
            views.append(
                FlagView(
                    [c for c, _ in mine],
                    [c for c, _ in theirs],
                    size,
                    obs.has_env(f, FOG),
                    obs.claimed_by[f],
                    max(t for _, t in mine) if len(mine) >= size else -1,
                    max(t for _, t in theirs) if len(theirs) >= size else -1,
                )
            )
        return cls(
            me,
            list(obs.hand),
            views,
            {c for c in obs.face_up() if c < TROOP_COUNT},
            list(obs.unseen[0]),
            obs.deck_sizes[0],
            obs.opp_hand_counts()[0],
        )

    @classmethod
    def from_state(cls, state: BattleLineState, player: int) -> Position:
        """``player``'s position in a game state, read directly (no JSON): equal to
        ``from_observation(observe(state, player))``, and as fast as a search's
        playouts need. Reads only what ``player`` may know, apart from the number of
        troops the opponent holds, which the public counts give anyway."""
        opp = 1 - player
        views = []
        for f in state.flags:
            size = f.size
            mine, theirs = f.sides[player], f.sides[opp]
            views.append(
                FlagView(
                    [p.card for p in mine],
                    [p.card for p in theirs],
                    size,
                    f.has(FOG),
                    f.claimed_by,
                    max([p.turn for p in mine]) if len(mine) >= size else -1,
                    max([p.turn for p in theirs]) if len(theirs) >= size else -1,
                )
            )
        face_up = state.face_up_troops()
        known = set(state.hands[player])
        known.update(c for c, who in state.known_top[0] if who == player)
        known |= face_up
        return cls(
            player,
            list(state.hands[player]),
            views,
            face_up,
            [c for c in range(TROOP_COUNT) if c not in known],
            state.deck_size(0),
            sum(1 for c in state.hands[opp] if c < TROOP_COUNT),
        )


class Evaluator:
    """Flag win chances and the game value from one player's position."""

    def __init__(self, pos: Position | Observation, *, hand_p: float = HAND_P) -> None:
        if isinstance(pos, Observation):
            pos = Position.from_observation(pos)
        self.pos = pos
        self.player = pos.player
        self.flags = pos.flags
        self.rules_pool = decider.claim_pool(pos.face_up)
        unseen = pos.unseen
        n_unseen = max(1, len(unseen))
        troop_deck = pos.troop_deck
        open_me = sum(max(0, v.size - len(v.mine)) for v in self.flags if v.claimed < 0)
        open_opp = sum(max(0, v.size - len(v.theirs)) for v in self.flags if v.claimed < 0)
        draws_me = min(troop_deck / 2, max(1.0, open_me / 2))
        draws_opp = min(troop_deck / 2, max(1.0, open_opp / 2))
        q_me = min(0.9, draws_me / n_unseen)
        q_opp = min(0.9, (max(0, pos.opp_troops) + draws_opp) / n_unseen)
        p_me = [0.0] * TROOP_COUNT
        p_opp = [0.0] * TROOP_COUNT
        for c in unseen:
            p_me[c] = q_me
            p_opp[c] = q_opp
        for c in pos.hand:
            if c < TROOP_COUNT:
                p_me[c] = hand_p
        self._set_probabilities(p_me, p_opp)

    def _set_probabilities(self, p_me: list[float], p_opp: list[float]) -> None:
        self.p_me = Probs(p_me, "me")
        self.p_opp = Probs(p_opp, "opp")
        self._variants: dict[tuple[int, ...], Probs] = {(): self.p_me}
        self._dists: dict[tuple[object, ...], Dist] = {}
        self._chances: dict[tuple[object, ...], float] = {}

    @classmethod
    def with_probabilities(
        cls, pos: Position, p_me: Sequence[float], p_opp: Sequence[float]
    ) -> Evaluator:
        """The evaluation of ``pos`` with given chances, per troop, that each player gets
        it (instead of the ones worked out from the cards he cannot see): a search that
        knows one deal of the hidden cards says who holds or will draw what."""
        ev = cls.__new__(cls)
        ev.pos = pos
        ev.player = pos.player
        ev.flags = pos.flags
        ev.rules_pool = decider.claim_pool(pos.face_up)
        ev._set_probabilities(list(p_me), list(p_opp))
        return ev

    def with_flags(self, flags: list[FlagView]) -> Evaluator:
        """The same player's evaluation of a table changed at a few flags, sharing this
        one's chances and caches (the hand and the unseen cards are taken as they were:
        exact for the flags, an approximation for cards that came face up since)."""
        other = copy.copy(self)
        other.flags = flags
        return other

    def my_probs(self, removed: Sequence[int] = ()) -> Probs:
        """My chances with the given hand cards spent (played elsewhere)."""
        key = tuple(sorted(c for c in removed if c < TROOP_COUNT))
        got = self._variants.get(key)
        if got is None:
            got = self.p_me.without(key, key)
            self._variants[key] = got
        return got

    def dist(self, cards: Sequence[int], size: int, fog: bool, probs: Probs) -> Dist:
        """The distribution of the best formation strength a side with ``cards`` reaches at a
        flag of ``size`` cards (memoised by cards, size, Fog and the probabilities' tag)."""
        key = (tuple(sorted(cards)), size, fog, probs.tag)
        got = self._dists.get(key)
        if got is None:
            got = side_dist(cards, size, fog, probs)
            self._dists[key] = got
        return got

    def flag_chance(
        self,
        view: FlagView,
        mine: Sequence[int] | None = None,
        theirs: Sequence[int] | None = None,
        *,
        size: int | None = None,
        fog: bool | None = None,
        removed: Sequence[int] = (),
    ) -> float:
        """P(I win this flag), with optional changes: other cards on either side, a
        different size (Mud) or Fog, and hand cards ``removed`` (spent elsewhere or
        played here). A side changed now counts as completed now for ties."""
        if view.claimed >= 0:
            return 1.0 if view.claimed == self.player else 0.0
        key = (
            tuple(view.mine),
            tuple(view.theirs),
            view.size,
            view.fog,
            view.mine_done,
            view.theirs_done,
            None if mine is None else tuple(mine),
            None if theirs is None else tuple(theirs),
            size,
            fog,
            tuple(removed),
        )
        got = self._chances.get(key)
        if got is None:
            got = self._flag_chance(view, mine, theirs, size, fog, removed)
            self._chances[key] = got
        return got

    def _flag_chance(
        self,
        view: FlagView,
        mine: Sequence[int] | None,
        theirs: Sequence[int] | None,
        size: int | None,
        fog: bool | None,
        removed: Sequence[int],
    ) -> float:
        m = list(view.mine if mine is None else mine)
        t = list(view.theirs if theirs is None else theirs)
        n = view.size if size is None else size
        fg = view.fog if fog is None else fog
        if len(m) > n:
            m = _best_subset(m, n, fg)
        if len(t) > n:
            t = _best_subset(t, n, fg)
        pool = decider.pool_without(self.rules_pool, [*removed, *m, *t])
        if len(m) == n and len(t) == n:
            # A side changed now completes now, after any side left as it was.
            m_done = 10**6 if mine is not None else view.mine_done
            t_done = 10**6 if theirs is not None else view.theirs_done
            mk, tk = decider.strength(m, n, fg), decider.strength(t, n, fg)
            if mk == tk and m_done == t_done:
                return 0.5  # both changed now: who completes first is open
            return 1.0 if decider.wins_flag(mk, tk, m_done < t_done) else 0.0
        if len(m) == n and decider.claim_holds(m, t, pool, n, fg, False):
            return 1.0
        if len(t) == n and decider.claim_holds(t, m, pool, n, fg, False):
            return 0.0
        probs = self.my_probs(removed)
        dm = self.dist(m, n, fg, probs)
        dt = self.dist(t, n, fg, self.p_opp)
        tie_mine = 1.0 if len(m) == n else 0.0 if len(t) == n else 0.5
        return win_chance(dm, dt, tie_mine)

    def chances(self, removed: Sequence[int] = ()) -> list[float]:
        """My chance to win each flag, with the hand cards ``removed`` spent elsewhere."""
        return [self.flag_chance(v, removed=removed) for v in self.flags]


def _best_subset(cards: Sequence[int], n: int, fog: bool) -> list[int]:
    """The strongest n of the cards (the owner's choice when Mud leaves, docs/rulings.md 10)."""
    best: list[int] = list(cards[:n])
    best_key = -1
    for drop in range(len(cards)):
        rest = [c for i, c in enumerate(cards) if i != drop]
        if len(rest) != n:
            continue
        k = decider.strength(rest, n, fog)
        if k > best_key:
            best, best_key = rest, k
    return best
