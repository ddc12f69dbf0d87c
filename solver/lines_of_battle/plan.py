"""Planning one turn with CP-SAT: ``exposure`` (how many of a player's units the
opponent can destroy for certain next turn) and ``best-attack`` (the movement and attack
plan with the most expected kills).

The model (one turn of the mover, every other unit standing still):

* each mover unit takes exactly one option: stay, one simple orthogonal path of at most
  its allowance that enters no enemy square, or a formation swap with a fresh adjacent
  friendly unit (seed: Movement Phase, Formation Swap);
* units move one after another: an integer order per unit; a path may cross the start
  square of a friendly unit only if that unit moved away earlier, and may not cross the
  square where a friendly unit that moved earlier now stands; swapped squares are
  never free; final squares are distinct;
* each unit ends with one facing (any, for one free re-face; swapped units keep theirs);
* each unit that can attack (not the Commander, not a reloading archer, not swapped)
  attacks at most one enemy straight ahead within range (docs/rulings.md, Lines of Battle);
  no mover unit may stand between; an enemy in between must have been destroyed for
  certain (side or rear) by an earlier attack (each target has a kill time).

Army Movement is left out on purpose: as implemented (every unit 0-1 square, no swaps)
every army-movement turn is also an individual-movement turn, so it never gives more.

``exposure`` counts side and rear attacks only (the kills that need no luck);
``best-attack`` maximises the exact expected number of kills: a target attacked frontally
by ``i`` units without a tie rule and ``j`` with one survives with probability
``(21/36)^i (15/36)^j``; one attack from the side or rear kills it. At most four units
can attack one target (one per direction: the nearest unit in a line blocks the rest),
so the expected value is an integer multiple of ``36^-4``. Ties are broken by the fewest
own units left exposed (see :func:`exposed_squares`).

Limits, per CP-SAT solve: ``time_limit`` seconds of wall clock (None: none), for a person
waiting; ``deterministic_time``, CP-SAT's deterministic time (None: none), a count of the
work done, so that with the one search worker used here the plan (and whether it is
proved optimal) is the same on every machine and under any load. Tests use
``deterministic_time`` alone (``time_limit=None``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ortools.sat.python import cp_model

from battlejudge.solver.errors import UndecidedError
from battlejudge.solver.lines_of_battle.core import (
    ARCHER,
    COMMANDER,
    FRONT,
    MOVE,
    RANGE,
    Board,
    Facing,
    Square,
    aspect,
    kill_probability,
    opposite,
    wins_ties,
)
from battlejudge.solver.lines_of_battle.position import Position, UnitAt

SCALE = 36**4
MAX_ATTACKERS = 4


@dataclass(frozen=True)
class PlannedMove:
    """One unit's move in a planned attack: from ``start`` to ``end`` along ``path``."""

    start: Square
    end: Square
    path: tuple[Square, ...]
    """The squares entered, in order (the last is ``end``)."""


@dataclass(frozen=True)
class PlannedAttack:
    """One attack of a plan: the attacker's square after movement, the target, the aspect and the
    exact kill probability."""

    attacker: Square
    """Where the attacker stands after movement."""
    target: Square
    aspect: int
    probability: Fraction


@dataclass(frozen=True)
class Plan:
    """One turn of ``mover``: swaps, moves in the order they are made, re-faces (by the
    unit's square after moving), then the attacks in order."""

    mover: int
    swaps: tuple[tuple[Square, Square], ...]
    moves: tuple[PlannedMove, ...]
    faces: tuple[tuple[Square, Facing], ...]
    attacks: tuple[PlannedAttack, ...]
    expected: Fraction
    """Expected number of enemy units destroyed (exposure: certain kills)."""
    exposed: tuple[Square, ...]
    """The mover's units left exposed after the plan (their final squares)."""
    optimal: bool
    """False when the time limit stopped the search before optimality was proved."""


@dataclass(frozen=True)
class Exposure:
    """The answer to ``exposure`` for ``player``'s units."""

    player: int
    count: int
    plan: Plan
    threatened: tuple[Square, ...]
    """Units some plan of the opponent destroys for certain."""
    safe: tuple[Square, ...]
    """Units no plan of the opponent can destroy for certain next turn."""
    optimal: bool


def paths_from(
    board: Board, start: Square, allowance: int, blocked: set[Square]
) -> list[tuple[Square, ...]]:
    """Every simple orthogonal path of 1..``allowance`` steps from ``start`` that enters
    no square in ``blocked``, one per (end square, set of squares crossed)."""
    out: dict[tuple[Square, frozenset[Square]], tuple[Square, ...]] = {}

    def walk(sq: Square, path: tuple[Square, ...]) -> None:
        if path:
            out.setdefault((path[-1], frozenset(path[:-1])), path)
        if len(path) == allowance:
            return
        for n in board.neighbours(sq):
            if n != start and n not in blocked and n not in path:
                walk(n, (*path, n))

    walk(start, ())
    return sorted(out.values(), key=lambda p: (len(p), p))


def can_attack(u: UnitAt) -> bool:
    """Not the Commander, not a reloading archer (seed: Archers, Commander variant)."""
    return RANGE[u.kind] > 0 and not (u.kind == ARCHER and u.reloading)


def threat_map(pos: Position, attacker_side: int) -> set[tuple[Square, Facing]]:
    """Every (square, facing) where a unit of the other side would be *exposed*: some
    unit of ``attacker_side`` that can attack next turn could step, within its
    allowance and ignoring every unit in the way, onto a square from which its attack
    line reaches that square from the side or rear. A cheap, conservative measure used
    only to break ties between equally good plans."""
    board = pos.board
    out: set[tuple[Square, Facing]] = set()
    for e in pos.side(attacker_side):
        if not can_attack(e):
            continue
        stands = [z for z in range(board.size) if board.distance(e.square, z) <= MOVE[e.kind]]
        for z in stands:
            for d in range(4):
                for sq in board.line(z, d, RANGE[e.kind]):
                    for f in range(4):
                        if aspect(d, f) != FRONT:
                            out.add((sq, f))
    return out


def exposed_squares(pos: Position, owner: int) -> list[Square]:
    """``owner``'s units that stand exposed in ``pos`` (see :func:`threat_map`)."""
    tm = threat_map(pos, 1 - owner)
    return [u.square for u in pos.side(owner) if (u.square, u.facing) in tm]


class _Model:
    """The CP-SAT model of one turn of ``pos.to_move``."""

    def __init__(
        self,
        pos: Position,
        certain_only: bool,
        tie_break: bool,
        advance: bool,
        objective: bool = True,
    ) -> None:
        self.pos = pos
        self.board = board = pos.board
        self.mover = pos.to_move
        self.certain_only = certain_only
        m = self.m = cp_model.CpModel()
        self.units = units = pos.side(self.mover)
        self.enemies = enemies = pos.side(1 - self.mover)
        enemy_sq = {e.square for e in enemies}
        n = len(units)
        start_of = {u.square: i for i, u in enumerate(units)}
        self.order = [m.new_int_var(0, max(n - 1, 0), f"o{i}") for i in range(n)]
        self.paths: list[list[tuple[tuple[Square, ...], Any]]] = []
        self.stay: list[Any] = []
        dest: list[dict[Square, list[Any]]] = []
        for i, u in enumerate(units):
            stay = m.new_bool_var(f"stay{i}")
            self.stay.append(stay)
            opts = []
            for p in paths_from(board, u.square, MOVE[u.kind], enemy_sq):
                opts.append((p, m.new_bool_var(f"p{i}_{board.name(p[-1])}")))
            self.paths.append(opts)
            d: dict[Square, list[Any]] = {u.square: [stay]}
            for p, x in opts:
                d.setdefault(p[-1], []).append(x)
            dest.append(d)
        # formation swaps between fresh adjacent friendly units
        self.swaps: list[tuple[int, int, Any]] = []
        swapped: list[list[Any]] = [[] for _ in units]
        for i, u in enumerate(units):
            for nb in board.neighbours(u.square):
                j = start_of.get(nb)
                if j is not None and j > i:
                    s = m.new_bool_var(f"sw{i}_{j}")
                    self.swaps.append((i, j, s))
                    swapped[i].append(s)
                    swapped[j].append(s)
                    dest[i].setdefault(units[j].square, []).append(s)
                    dest[j].setdefault(u.square, []).append(s)
        self.swapped = [m.new_bool_var(f"swapped{i}") for i in range(n)]
        for i in range(n):
            m.add(sum(swapped[i]) == self.swapped[i])
            m.add_exactly_one([self.stay[i], self.swapped[i], *(x for _, x in self.paths[i])])
        # D[i][sq]: unit i ends on sq
        self.D: list[dict[Square, Any]] = []
        for i in range(n):
            di: dict[Square, Any] = {}
            for sq, lits in dest[i].items():
                if len(lits) == 1:
                    di[sq] = lits[0]
                else:
                    v = m.new_bool_var(f"D{i}_{board.name(sq)}")
                    m.add(sum(lits) == v)
                    di[sq] = v
            self.D.append(di)
        ends: dict[Square, list[Any]] = {}
        for i in range(n):
            for sq, v in self.D[i].items():
                ends.setdefault(sq, []).append(v)
        for lits in ends.values():
            if len(lits) > 1:
                m.add_at_most_one(lits)
        self.occupied = ends
        # moving one after another
        for i in range(n):
            for p, x in self.paths[i]:
                for q in p:
                    j = start_of.get(q)
                    if j is not None:
                        m.add(self.order[j] < self.order[i]).only_enforce_if(x)
                        m.add_implication(x, self.stay[j].negated())
                        m.add_implication(x, self.swapped[j].negated())
                for q in p[:-1]:
                    for j in range(n):
                        if j != i and q in self.D[j] and q != units[j].square:
                            m.add(self.order[j] > self.order[i]).only_enforce_if([x, self.D[j][q]])
        # facing
        self.F = [[m.new_bool_var(f"f{i}_{f}") for f in range(4)] for i in range(n)]
        for i, u in enumerate(units):
            m.add_exactly_one(self.F[i])
            m.add_implication(self.swapped[i], self.F[i][u.facing])
        self._attacks()
        if objective:
            self._objective(tie_break, advance)

    def _attacks(self) -> None:
        m, board = self.m, self.board
        enemies = self.enemies
        enemy_at = {e.square: k for k, e in enumerate(enemies)}
        ne = len(enemies)
        self.kill_time = [m.new_int_var(0, max(ne - 1, 0), f"kt{k}") for k in range(ne)]
        self.w: list[tuple[int, int, Square, Facing, int, Any]] = []
        self.sure = [m.new_bool_var(f"sure{k}") for k in range(ne)]
        by_attacker: list[list[Any]] = [[] for _ in self.units]
        by_target: list[list[tuple[int, Any]]] = [[] for _ in enemies]
        for i, u in enumerate(self.units):
            if not can_attack(u):
                continue
            for k, t in enumerate(enemies):
                for d in range(4):
                    how = aspect(d, t.facing)
                    if self.certain_only and how == FRONT:
                        continue
                    back = board.line(t.square, opposite(d), RANGE[u.kind])
                    for dist, s in enumerate(back, start=1):
                        if s not in self.D[i]:
                            continue
                        between = back[: dist - 1]
                        w = m.new_bool_var(f"w{i}_{k}_{board.name(s)}_{d}")
                        m.add_implication(w, self.D[i][s])
                        m.add_implication(w, self.F[i][d])
                        m.add_implication(w, self.swapped[i].negated())
                        for q in between:
                            for v in self.occupied.get(q, []):
                                m.add_implication(w, v.negated())
                            kv = enemy_at.get(q)
                            if kv is not None and enemies[kv].kind == COMMANDER:
                                # destroying the Commander ends the game: it is
                                # attacked last and never opens a line
                                m.add(w == 0)
                            elif kv is not None:
                                m.add_implication(w, self.sure[kv])
                                m.add(self.kill_time[kv] < self.kill_time[k]).only_enforce_if(w)
                        kind = 2 if how != FRONT else (1 if wins_ties(u.kind, t.kind) else 0)
                        self.w.append((i, k, s, d, kind, w))
                        by_attacker[i].append(w)
                        by_target[k].append((kind, w))
        for lits in by_attacker:
            if len(lits) > 1:
                m.add_at_most_one(lits)
        self.value_terms: list[tuple[int, Any]] = []
        for k in range(ne):
            certain = [w for kind, w in by_target[k] if kind == 2]
            plain = [w for kind, w in by_target[k] if kind == 0]
            ties = [w for kind, w in by_target[k] if kind == 1]
            # sure[k]: destroyed for certain by a side or rear attack
            # at most one side or rear attack, and none frontal after it: a second
            # attack on a destroyed unit is never made
            m.add(sum(certain) == self.sure[k])
            if plain or ties:
                m.add(sum(plain) + sum(ties) == 0).only_enforce_if(self.sure[k])
            if self.certain_only:
                self.value_terms.append((1, self.sure[k]))
                continue
            self.value_terms.append((SCALE, self.sure[k]))
            if not plain and not ties:
                continue
            options = [self.sure[k]]
            for a in range(min(len(plain), MAX_ATTACKERS) + 1):
                for b in range(min(len(ties), MAX_ATTACKERS - a) + 1):
                    g = m.new_bool_var(f"g{k}_{a}_{b}")
                    options.append(g)
                    m.add(sum(plain) == a).only_enforce_if(g)
                    m.add(sum(ties) == b).only_enforce_if(g)
                    value = SCALE - 21**a * 15**b * 36 ** (MAX_ATTACKERS - a - b)
                    if value:
                        self.value_terms.append((value, g))
            m.add_exactly_one(options)

    def _objective(self, tie_break: bool, advance: bool) -> None:
        m, board = self.m, self.board
        n = len(self.units)
        value = sum(c * v for c, v in self.value_terms)
        self.exposed_vars: list[Any] = []
        if not tie_break:
            # then the fewest moves and re-faces: a plan that does only what it needs
            busy = sum(
                (1 - self.stay[i]) + (1 - self.F[i][u.facing]) for i, u in enumerate(self.units)
            )
            self.m.maximize((2 * n + 1) * value - busy)
            return
        tm = threat_map(self.pos, 1 - self.mover)
        for i in range(n):
            e = m.new_bool_var(f"exp{i}")
            self.exposed_vars.append(e)
            for sq, d in self.D[i].items():
                for f in range(4):
                    if (sq, f) in tm:
                        m.add_bool_or([d.negated(), self.F[i][f].negated(), e])
        exposed = sum(self.exposed_vars)
        far = 0
        bound = 0
        if advance and self.enemies:
            for i, u in enumerate(self.units):
                if u.kind == COMMANDER:
                    continue
                for sq, d in self.D[i].items():
                    near = min(board.distance(sq, e.square) for e in self.enemies)
                    far += near * d
                bound += board.width + board.height
        else:
            # otherwise the fewest moves and re-faces: a plan that does only what it needs
            for i, u in enumerate(self.units):
                far += (1 - self.stay[i]) + (1 - self.F[i][u.facing])
            bound = 2 * n
        w_exposed = bound + 1
        w_value = (n + 1) * w_exposed
        m.maximize(w_value * value - w_exposed * exposed - far)

    def require_kill(self, k: int) -> None:
        self.m.add(self.sure[k] == 1)

    def solve(
        self, time_limit: float | None, deterministic_time: float | None
    ) -> tuple[cp_model.CpSolver, bool]:
        solver = _solver(time_limit, deterministic_time)
        solver.parameters.random_seed = 0
        status = solver.solve(self.m)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            raise UndecidedError(
                f"CP-SAT found no plan within {_say_limits(time_limit, deterministic_time)} "
                f"({solver.status_name(status)})"
            )
        return solver, status == cp_model.OPTIMAL

    def extract(self, solver: cp_model.CpSolver, optimal: bool) -> Plan:
        units, enemies = self.units, self.enemies
        swaps = tuple(
            sorted(
                (min(units[i].square, units[j].square), max(units[i].square, units[j].square))
                for i, j, s in self.swaps
                if solver.boolean_value(s)
            )
        )
        moves: list[tuple[int, int, PlannedMove]] = []
        final: dict[int, Square] = {}
        for i, u in enumerate(units):
            final[i] = next(sq for sq, d in self.D[i].items() if solver.boolean_value(d))
            for p, x in self.paths[i]:
                if solver.boolean_value(x):
                    moves.append((solver.value(self.order[i]), i, PlannedMove(u.square, p[-1], p)))
        faces: list[tuple[Square, Facing]] = []
        facing: dict[int, Facing] = {}
        for i, u in enumerate(units):
            f = next(f for f in range(4) if solver.boolean_value(self.F[i][f]))
            facing[i] = f
            if f != u.facing:
                faces.append((final[i], f))
        chosen = [
            (
                enemies[k].kind == COMMANDER,  # last: destroying it ends the game
                solver.value(self.kill_time[k]),
                0 if kind == 2 else 1,
                i,
                k,
                s,
                d,
            )
            for i, k, s, d, kind, w in self.w
            if solver.boolean_value(w)
        ]
        attacks = []
        for _last, _t, _c, i, k, s, d in sorted(chosen):
            how = aspect(d, enemies[k].facing)
            prob = kill_probability(units[i].kind, enemies[k].kind, how)
            attacks.append(PlannedAttack(s, enemies[k].square, how, prob))
        after = Position(
            self.board,
            self.mover,
            tuple(
                UnitAt(final[i], u.owner, u.kind, facing[i], u.reloading)
                for i, u in enumerate(units)
            )
            + tuple(enemies),
        )
        return Plan(
            mover=self.mover,
            swaps=swaps,
            moves=tuple(mv for _o, _i, mv in sorted(moves, key=lambda t: (t[0], t[1]))),
            faces=tuple(sorted(faces)),
            attacks=tuple(attacks),
            expected=expected_kills(attacks),
            exposed=tuple(sorted(exposed_squares(after, self.mover))),
            optimal=optimal,
        )


def _solver(time_limit: float | None, deterministic_time: float | None) -> cp_model.CpSolver:
    """A CP-SAT solver with these limits (see the module) and one search worker: with
    several, which one finishes first depends on thread timing."""
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = time_limit
    if deterministic_time is not None:
        solver.parameters.max_deterministic_time = deterministic_time
    return solver


def _say_limits(time_limit: float | None, deterministic_time: float | None) -> str:
    said = [f"{time_limit:g} s"] if time_limit is not None else []
    if deterministic_time is not None:
        said.append(f"{deterministic_time:g} units of deterministic time")
    return " or ".join(said) or "no limit"


def expected_kills(attacks: Iterable[PlannedAttack]) -> Fraction:
    """Exact expected number of targets destroyed: a target survives only if every
    attack on it fails, and the attacks on it are independent."""
    survive: dict[Square, Fraction] = {}
    for a in attacks:
        survive[a.target] = survive.get(a.target, Fraction(1)) * (1 - a.probability)
    return sum((1 - s for s in survive.values()), Fraction(0))


def best_attack(
    pos: Position,
    *,
    time_limit: float | None = 20.0,
    advance: bool = False,
    deterministic_time: float | None = None,
) -> Plan:
    """The plan for ``pos.to_move`` with the most expected enemy kills this turn, ties
    broken by the fewest own units left exposed (then, with ``advance``, by standing
    nearer the enemy, the planner bot's preference; without it, by the fewest moves
    and re-faces). ``optimal`` says whether CP-SAT proved it within the limits
    (``time_limit`` seconds, ``deterministic_time``: see the module); no plan at all
    raises :class:`UndecidedError`."""
    model = _Model(pos, certain_only=False, tie_break=True, advance=advance)
    solver, optimal = model.solve(time_limit, deterministic_time)
    return model.extract(solver, optimal)


def exposure(
    pos: Position,
    player: int,
    *,
    time_limit: float | None = 20.0,
    deterministic_time: float | None = None,
) -> Exposure:
    """How many of ``player``'s units the opponent, moving next with fresh units, can
    destroy for certain (side and rear attacks, no dice) in his turn, with the plan that
    does it; and which units no plan of his can destroy for certain. The limits apply
    to each solve (see the module)."""
    attacker_view = Position(pos.board, 1 - player, pos.units)
    model = _Model(attacker_view, certain_only=True, tie_break=False, advance=False)
    solver, optimal = model.solve(time_limit, deterministic_time)
    plan = model.extract(solver, optimal)
    killed = {a.target for a in plan.attacks}
    threatened = set(killed)
    targets = model.enemies
    for k, t in enumerate(targets):
        if t.square in threatened:
            continue
        if not any(kk == k and kind == 2 for _i, kk, _s, _d, kind, _w in model.w):
            continue
        probe = _Model(
            attacker_view, certain_only=True, tie_break=False, advance=False, objective=False
        )
        probe.require_kill(k)
        sub = _solver(time_limit, deterministic_time)
        status = sub.solve(probe.m)
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            threatened.add(t.square)
        elif status != cp_model.INFEASIBLE:
            optimal = False
            threatened.add(t.square)  # unproved: never reported safe
    safe = tuple(sorted(t.square for t in targets if t.square not in threatened))
    return Exposure(
        player=player,
        count=len(killed),
        plan=plan,
        threatened=tuple(sorted(threatened)),
        safe=safe,
        optimal=optimal,
    )
