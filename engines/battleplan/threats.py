"""``threats`` answered fast: bounds to prune, engine playouts for witnesses, CP-SAT only
for what neither settles.

The question (:func:`battlejudge.solver.battleplan.questions.threats`): for each live
enemy piece, every square it could stand on at some point of the rest of the round
(before anyone wins); for each of the player's live pieces, whether an enemy could kill
it. The CP-SAT method answers it with one time-expanded model per piece and one solve per
ring of squares, which at the start of a battle (18 or more reveals) takes half a minute.
This module gives the same answer, and shows where each part of it comes from:

* **out of reach**: a square outside :func:`~battlejudge.solver.battleplan.bounds.reach_bound`
  (a walk with the piece's own step budget on an empty board) is never reached, and a
  piece that no enemy can ever attack from next to
  (:func:`~battlejudge.solver.battleplan.bounds.enemy_could_kill`) is safe;
* **reached**: guided playouts with the engine (the face-down contents chosen to suit the
  goal, every action legal by construction) reach a square or kill a piece; a kill's line
  is the witness the command replays;
* **the rest**: whatever the bounds cannot rule out and the playouts did not reach is
  asked of the CP-SAT model, as before (restricted to those squares).

So every square listed was stood on in an engine line of play, every square left out is
out of the bound or proved unreachable by CP-SAT, and the answer's ``method`` says which
were needed. Playouts are seeded (``seed``), so the witnesses are reproducible.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass

from battlejudge.engines.battleplan.actions import (
    BUFF_AFTER,
    BUFF_BEFORE,
    BUFF_LATER,
    NONE,
    REVEAL,
    TO,
    Action,
)
from battlejudge.engines.battleplan.board import ATTACK, CAPS, DEFEND, MOVE, OFF, ORTH
from battlejudge.engines.battleplan.position import settle_chance, state_from_position
from battlejudge.engines.battleplan.state import BattlePlanState
from battlejudge.solver.battleplan.answers import DEFAULT_TIME_LIMIT, Answer, Threats, Witness
from battlejudge.solver.battleplan.bounds import (
    DIAGONAL,
    EXTRA_ATTACK,
    EXTRA_MOVE,
    attack_bound,
    enemy_could_kill,
    reach_bound,
)
from battlejudge.solver.battleplan.position import HIDDEN_BUFF, Position, piece_label

log = logging.getLogger(__name__)

BOUND = "bound"
"""Method of an ``impossible`` found by the bounds (no enemy can stand next to it)."""
PLAYOUT = "engine-playout"
"""Method of a ``possible`` found by a guided engine playout (its line is the witness)."""
REACH_TRIES = 24
"""Playouts aimed at each square of a reach bound before CP-SAT is asked about it."""
REACH_PLAYOUTS = 400
"""Playouts per piece at most (a loose bound on a long round would otherwise cost
thousands before CP-SAT gets the squares left)."""
KILL_TRIES = 4
"""Playouts per (enemy, number of steps before its attack) before CP-SAT is asked."""

Policy = Callable[[BattlePlanState, list[Action]], Action]


@dataclass
class Playout:
    """One line of play from a position, with the face-down contents it assumed."""

    stacks: dict[int, tuple[int, ...]]
    buffs: dict[int, int]
    line: list[tuple[int, str]]
    visited: set[int]
    """The squares the followed piece stood on (before anyone won)."""
    killed: bool
    """The goal piece was killed by an enemy with the last action of ``line``."""

    def witness(self) -> Witness:
        """The line as a solver witness (:func:`replay_witness` replays it)."""
        return Witness(self.stacks, self.buffs, tuple(self.line))


def threats(
    pos: Position,
    player: int,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    seed: int = 0,
    *,
    deterministic_time: float | None = None,
) -> Threats:
    """The same answer as the CP-SAT method (see the module docstring for how it is
    found); ``time_limit`` (seconds, None: none) and ``deterministic_time`` (CP-SAT's
    deterministic time, None: none; what tests use) bound each CP-SAT solve when one is
    needed (:mod:`battlejudge.solver.battleplan.questions`)."""
    rng = random.Random(seed)
    used_cp_sat = False
    out = Threats(player)
    for e in range(3 * (1 - player), 3 * (1 - player) + 3):
        if pos.pieces[e].square is None:
            continue
        bound = set(reach_bound(pos, e))
        found = reach_by_playouts(pos, e, bound, rng)
        left = bound - found
        complete = True
        if left:
            from battlejudge.solver.battleplan.questions import reach

            log.info("%s: %d squares left to CP-SAT", piece_label(e), len(left))
            used_cp_sat = True
            more, complete = reach(pos, e, time_limit, left, deterministic_time=deterministic_time)
            found |= more
        out.reach[e] = sorted(found)
        out.complete = out.complete and complete
    for g in range(3 * player, 3 * player + 3):
        if pos.pieces[g].square is None:
            continue
        question = f"can-kill {piece_label(g)} by an enemy"
        if not enemy_could_kill(pos, g):
            out.exposed[g] = Answer(question, "impossible", method=BOUND)
            continue
        play = kill_by_playouts(pos, g, rng)
        if play is not None:
            out.exposed[g] = Answer(question, "possible", play.witness(), method=PLAYOUT)
            continue
        from battlejudge.solver.battleplan.questions import can_kill

        log.info("%s: no playout kills it, asking CP-SAT", piece_label(g))
        used_cp_sat = True
        out.exposed[g] = can_kill(
            pos, g, "enemy", time_limit, deterministic_time=deterministic_time
        )
    out.method = "bounds+engine-playouts" + ("+cp-sat" if used_cp_sat else "")
    return out


def reach_by_playouts(pos: Position, e: int, targets: set[int], rng: random.Random) -> set[int]:
    """Squares piece ``e`` stands on in guided playouts aimed at ``targets``, farthest
    first (every square of every playout counts, so most targets need none of their
    own), at most :data:`REACH_PLAYOUTS` of them. Each square returned was stood on in a
    legal engine line of play."""
    home = pos.pieces[e].square
    assert home is not None
    found = {home}
    order = sorted(targets, key=lambda q: -_manhattan(q, home))
    played = 0
    for q in order:
        for attempt in range(REACH_TRIES):
            if q in found or played >= REACH_PLAYOUTS:
                break
            played += 1
            # Some tries attack on the way (a piece on the square or in the way may
            # never leave it): next to the square, or at once.
            before = (None, None, max(0, _manhattan(home, q) - 1), 0)[attempt % 4]
            stacks = _fill(pos, rng, {e: _moving_first(pos, e, rng, before, attacks=1)})
            buffs = _buffs(pos, rng, {e: _reach_buff(pos, e, q, attempt)})
            found |= playout(
                pos, stacks, buffs, _reach_policy(e, q, rng, min(0.8, 0.1 * attempt)), follow=e
            ).visited
    return found


def kill_by_playouts(pos: Position, g: int, rng: random.Random) -> Playout | None:
    """A guided playout in which an enemy kills piece ``g``, or None if none was found
    (which proves nothing)."""
    enemies = range(3, 6) if g < 3 else range(3)
    mine = reach_bound(pos, g)
    for e in enemies:
        near = [a for a in attack_bound(pos, e) if any(_king(a, r) == 1 for r in mine)]
        if not near:
            continue
        pc = pos.pieces[e]
        moving = pc.hidden if pc.cards is None else 0
        for before in range(moving + 1):
            for attempt in range(KILL_TRIES):
                chosen = {
                    e: _moving_first(pos, e, rng, before),
                    g: _moving_first(pos, g, rng, None, shield_last=True),
                }
                stacks = _fill(pos, rng, chosen)
                # A face-down buff: strike twice, or take one step more (in turn).
                buffs = _buffs(pos, rng, {e: (EXTRA_ATTACK, EXTRA_MOVE, DIAGONAL)[attempt % 3]})
                play = playout(pos, stacks, buffs, _kill_policy(e, g, rng), goal=g)
                if play.killed:
                    return play
    return None


def playout(
    pos: Position,
    stacks: dict[int, tuple[int, ...]],
    buffs: dict[int, int],
    policy: Policy,
    follow: int | None = None,
    goal: int | None = None,
) -> Playout:
    """Play the rest of the round from ``pos`` with the engine, every choice made by
    ``policy`` among the legal actions; stop when ``goal`` is killed by an enemy or the
    round (or game) ends. Chance nodes are settled as :func:`replay_witness` does."""
    state = state_from_position(pos, stacks, buffs)
    settle_chance(state)
    line: list[tuple[int, str]] = []
    visited = set() if follow is None or state.pos[follow] == OFF else {state.pos[follow]}
    while not (state.is_terminal() or state.round_over()):
        player = state.current_player()
        actions = state.legal_actions()
        action = policy(state, actions)
        line.append((player, state.action_to_string(action)))
        actor = state.piece
        deaths = state.deaths[goal] if goal is not None else 0
        lives = state.deaths[follow] if follow is not None else 0
        was = state.pos[follow] if follow is not None else OFF
        state.apply_action_unchecked(action)  # one of legal_actions()
        settle_chance(state)
        # After the round's last action a dead piece is already back on its home row
        # (the next round's respawn): that square is not one it stood on this round.
        if follow is not None and was != OFF and state.deaths[follow] == lives:
            visited.add(state.pos[follow])
        if goal is not None and state.deaths[goal] > deaths and actor // 3 != goal // 3:
            return Playout(stacks, buffs, line, visited, True)
    return Playout(stacks, buffs, line, visited, False)


# -- face-down contents --------------------------------------------------------------------


def _moving_first(
    pos: Position,
    g: int,
    rng: random.Random,
    before: int | None,
    shield_last: bool = False,
    attacks: int = CAPS[ATTACK],
) -> tuple[int, ...]:
    """A stack for ``g`` (if its cards are unknown): ``before`` MOVE/DEFEND cards (all it
    may hold if None), then up to ``attacks`` ATTACKs, then the other moving cards, then
    the other ATTACKs, within the caps; with ``shield_last`` the DEFEND comes after the
    MOVEs (a shield would spoil a kill)."""
    pc = pos.pieces[g]
    if pc.cards is not None:
        return pc.cards
    moves = [MOVE] * (CAPS[MOVE] - pc.revealed.count(MOVE))
    defends = [DEFEND] * (CAPS[DEFEND] - pc.revealed.count(DEFEND))
    moving = moves + defends
    if not shield_last:
        rng.shuffle(moving)
    n = len(moving) if before is None else before
    hits = [ATTACK] * (CAPS[ATTACK] - pc.revealed.count(ATTACK))
    return tuple((moving[:n] + hits[:attacks] + moving[n:] + hits[attacks:])[: pc.hidden])


def _fill(
    pos: Position, rng: random.Random, chosen: dict[int, tuple[int, ...]]
) -> dict[int, tuple[int, ...]]:
    """Face-down cards for every piece whose cards the position leaves open: ``chosen``
    ones as given, the others drawn at random within the per-piece caps (half the time
    with the moving cards first, so that a piece in the way can step aside early)."""
    out: dict[int, tuple[int, ...]] = {}
    for g, pc in enumerate(pos.pieces):
        if pc.cards is not None or not pc.hidden:
            continue
        if g in chosen:
            out[g] = chosen[g]
            continue
        if rng.random() < 0.5:
            out[g] = _moving_first(pos, g, rng, None)
            continue
        left = [CAPS[c] - pc.revealed.count(c) for c in range(3)]
        cards = []
        for _ in range(pc.hidden):
            c = rng.choice([c for c in range(3) if left[c]])
            left[c] -= 1
            cards.append(c)
        out[g] = tuple(cards)
    return out


def _buffs(pos: Position, rng: random.Random, chosen: dict[int, int]) -> dict[int, int]:
    """Kinds for the face-down buffs: ``chosen`` ones as given, the others at random."""
    return {
        g: chosen.get(g, rng.randrange(4))
        for g, pc in enumerate(pos.pieces)
        if pc.buff == HIDDEN_BUFF
    }


def _reach_buff(pos: Position, e: int, q: int, attempt: int) -> int:
    """The buff kind to try for taking ``e`` to ``q``: first diagonal when the square is
    beyond the orthogonal budget (else extra-move), then the other one, in turn."""
    home = pos.pieces[e].square
    assert home is not None
    far = _manhattan(home, q) > pos.pieces[e].hidden + 1
    return 3 if far == (attempt % 2 == 0) else 0


# -- policies ------------------------------------------------------------------------------


def _manhattan(a: int, b: int) -> int:
    return abs(a % 8 - b % 8) + abs(a // 8 - b // 8)


def _king(a: int, b: int) -> int:
    return max(abs(a % 8 - b % 8), abs(a // 8 - b // 8))


def _next_card(state: BattlePlanState, g: int) -> int:
    return state.stacks[g][state.revealed[g]]


def _verb(state: BattlePlanState, actions: list[Action]) -> str:
    return state.action_to_string(actions[0]).split()[0]


def _best(actions: list[Action], score: Callable[[Action], float], rng: random.Random) -> Action:
    return max(actions, key=lambda a: score(a) + rng.random() * 0.5)


def _others_step(
    state: BattlePlanState,
    actions: list[Action],
    keep: tuple[int, ...],
    rng: random.Random,
    squares: tuple[int, ...] = (),
) -> Action:
    """A piece not in the plan acts: it attacks nothing (or anything but ``keep``) and
    steps away from the pieces in ``keep`` and from ``squares``."""
    where = [state.pos[k] for k in keep if state.pos[k] != OFF] + list(squares)
    if _verb(state, actions) == "attack":
        if NONE in actions:
            return NONE
        return _best(actions, lambda a: -10.0 * (a - TO in where), rng)

    def away(a: Action) -> float:
        if a == NONE or not where:
            return 0.0
        return float(min(min(_king(a - TO, w) for w in where), 3))

    return _best(actions, away, rng)


def _free_distance(state: BattlePlanState, frm: int, to: int) -> int:
    """Orthogonal steps from ``frm`` to ``to`` through free squares (64 if none)."""
    taken = set(state.pos)
    dist = {frm: 0}
    frontier = [frm]
    while frontier and to not in dist:
        nxt = []
        for sq in frontier:
            for n in ORTH[sq]:
                if n not in dist and (n not in taken or n == to):
                    dist[n] = dist[sq] + 1
                    nxt.append(n)
        frontier = nxt
    return dist.get(to, 64)


def _in_box(sq: int, a: int, b: int) -> bool:
    """``sq`` lies in the rectangle spanned by ``a`` and ``b`` (every shortest
    orthogonal path between them stays in it)."""
    x, y = sq % 8, sq // 8
    return min(a % 8, b % 8) <= x <= max(a % 8, b % 8) and min(a // 8, b // 8) <= y <= max(
        a // 8, b // 8
    )


def _reach_policy(e: int, q: int, rng: random.Random, wander: float) -> Policy:
    """Take ``e`` to ``q`` by the shortest free way, waiting (its side reveals another
    piece) while the way is blocked; everyone else keeps out of the rectangle between
    ``e`` and ``q``. With probability ``wander`` the side reveals another piece anyway."""

    def policy(state: BattlePlanState, actions: list[Action]) -> Action:
        first = actions[0]
        here = state.pos[e]
        if REVEAL <= first < REVEAL + 3:
            side = state.current_player()
            mine = REVEAL + e % 3
            if side == e // 3 and mine in actions and here not in (OFF, q):
                others = [a for a in actions if a != mine]
                blocked = _next_card(state, e) != ATTACK and _free_distance(state, here, q) >= 64
                if others and (blocked or rng.random() < wander):
                    return rng.choice(others)
                return mine
            if side != e // 3 and here != OFF:
                # An enemy next to e must attack someone when it reveals an ATTACK.
                safe = [
                    a
                    for a in actions
                    if _next_card(state, side * 3 + a - REVEAL) != ATTACK
                    or state.pos[side * 3 + a - REVEAL] == OFF
                    or _king(state.pos[side * 3 + a - REVEAL], here) > 1
                ]
                return rng.choice(safe or actions)
            return rng.choice(actions)
        if first in (BUFF_BEFORE, BUFF_AFTER, BUFF_LATER):
            return BUFF_BEFORE if state.piece == e and here != q else BUFF_LATER
        if first < NONE or first >= TO + 64:
            return rng.choice(actions)  # a pickup
        if state.piece != e:
            if _verb(state, actions) == "attack" or here == OFF:
                return _others_step(state, actions, (e,), rng, (q,))
            return _best(
                actions,
                lambda a: 0.0 if a == NONE else -10.0 * _in_box(a - TO, here, q),
                rng,
            )
        if _verb(state, actions) == "attack":
            # Clear the way: whoever stands on the square, or between, may never leave.
            if TO + q in actions:
                return TO + q
            blocking = [a for a in actions if a != NONE and _in_box(a - TO, here, q)]
            if blocking:
                return rng.choice(blocking)
            return NONE if NONE in actions else rng.choice(actions)

        def closer(a: Action) -> float:
            if a == NONE:
                return -100.0
            return -min(_free_distance(state, a - TO, q), 30 + _manhattan(a - TO, q))

        return _best(actions, closer, rng)

    return policy


def _kill_policy(e: int, g: int, rng: random.Random) -> Policy:
    """Bring enemy ``e`` and ``g`` next to each other, then have ``e`` attack ``g``."""

    def policy(state: BattlePlanState, actions: list[Action]) -> Action:
        first = actions[0]
        pe, pg = state.pos[e], state.pos[g]
        close = pe != OFF and pg != OFF and _king(pe, pg) == 1
        if REVEAL <= first < REVEAL + 3:
            if rng.random() < 0.15:
                return rng.choice(actions)
            piece = e if state.current_player() == e // 3 else g
            mine = REVEAL + piece % 3
            if mine in actions:
                card = _next_card(state, piece)
                if piece == e and (card == ATTACK) == close:
                    return mine
                if piece == g and card != ATTACK and not close:
                    return mine
            others = [a for a in actions if a != mine]
            return rng.choice(others or actions)
        if first in (BUFF_BEFORE, BUFF_AFTER, BUFF_LATER):
            if state.piece == e:
                return rng.choice([BUFF_BEFORE, BUFF_AFTER])
            return BUFF_LATER
        if first < NONE or first >= TO + 64:
            return rng.choice(actions)  # a pickup
        piece = state.piece
        if piece not in (e, g):
            return _others_step(state, actions, (e, g), rng)
        if _verb(state, actions) == "attack":
            if piece == e and TO + pg in actions:
                return TO + pg
            return NONE if NONE in actions else _others_step(state, actions, (e, g), rng)
        toward = pg if piece == e else pe
        if toward == OFF:
            return rng.choice(actions)
        return _best(actions, lambda a: 0.0 if a == NONE else -_king(a - TO, toward), rng)

    return policy


__all__ = [
    "BOUND",
    "PLAYOUT",
    "Playout",
    "kill_by_playouts",
    "playout",
    "reach_by_playouts",
    "threats",
]
