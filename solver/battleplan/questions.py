"""The outcome questions about the rest of a BattlePlan round, answered with CP-SAT.

* :func:`can_kill`: can this piece be killed before the round ends?
* :func:`can_score`: can this player win (carry the flag into his Win Zone) this round?
* :func:`threats`: the squares each enemy piece could still reach, and which of the
  player's pieces could be killed by an enemy.

"Can" means: under some contents of every face-down stack and buff that the position
does not fix, and some choices of both players. A ``possible`` answer carries a witness
(the face-down contents chosen and the line of play in the engine's notation) which the
engine replays; ``impossible`` comes from CP-SAT proving the model infeasible. CP-SAT
gives no checkable refutation here, so the answer names its method and is never called
certified; ``unknown`` means a limit was hit and implies nothing.

Limits, per CP-SAT solve: ``time_limit`` seconds of wall clock (None: none), the bound a
person waiting wants; ``deterministic_time``, CP-SAT's deterministic time (None: none), a
count of the work done, so that with the one search worker used here the answer is the
same on every machine and under any load. Tests use ``deterministic_time`` alone
(``time_limit=None``): a wall-clock limit would let a busy machine change a test's outcome.
"""

from __future__ import annotations

from typing import Any, Literal

from ortools.sat.python import cp_model

from battlejudge.solver.battleplan.answers import (
    DEFAULT_TIME_LIMIT,
    METHOD,
    Answer,
    Threats,
    Verdict,
    Witness,
)
from battlejudge.solver.battleplan.model import ATK, DEF, DIAG, Encoding, build
from battlejudge.solver.battleplan.position import (
    HIDDEN_BUFF,
    KINDS,
    SEATS,
    ZONE_ROW,
    Position,
    piece_label,
    square_name,
)
from battlejudge.solver.errors import InputError


def _solve(
    enc: Encoding, time_limit: float | None, deterministic_time: float | None
) -> tuple[cp_model.CpSolver, Any]:
    solver = cp_model.CpSolver()
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = time_limit
    if deterministic_time is not None:
        solver.parameters.max_deterministic_time = deterministic_time
    # One worker: with several, which one finishes first depends on thread timing.
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    # Light presolve: these models are small and solved many times (threats).
    solver.parameters.cp_model_probing_level = 0
    solver.parameters.symmetry_level = 0
    solver.parameters.linearization_level = 0
    solver.parameters.max_presolve_iterations = 1
    status = solver.solve(enc.model)
    return solver, status


def _verdict(status: Any) -> Verdict:
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return "possible"
    if status == cp_model.INFEASIBLE:
        return "impossible"
    return "unknown"


def can_kill(
    pos: Position,
    piece: int,
    by: Literal["any", "enemy"] = "any",
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    *,
    deterministic_time: float | None = None,
) -> Answer:
    """Can ``piece`` die before the round ends (and before anyone wins)? ``by="enemy"``
    counts only a kill by an enemy attack (friendly fire may still break a shield)."""
    if pos.pieces[piece].square is None:
        raise InputError(f"{piece_label(piece)} is already dead")
    enc = build(pos)
    m = enc.model
    last = enc.states - 1
    if by == "any":
        m.add(enc.alive[last][piece] == 0)
    else:
        kills = []
        for slot in enc.slots:
            for (i, j), h in slot.hit.items():
                if j == piece and i // 3 != piece // 3:
                    k = m.new_bool_var("")
                    m.add_implication(k, h)
                    m.add_implication(k, enc.shield[slot.n][piece].negated())
                    kills.append(k)
        m.add_bool_or(kills or [m.new_constant(0)])
    for n in range(enc.states):
        for w in enc.win[n]:
            m.add_implication(w, enc.alive[n][piece].negated())
    solver, status = _solve(enc, time_limit, deterministic_time)
    verdict = _verdict(status)
    witness = None
    question = f"can-kill {piece_label(piece)}" + (" by an enemy" if by == "enemy" else "")
    if verdict == "possible":
        end = next(s.n + 1 for s in enc.slots if solver.value(s.killed[piece]))
        witness = extract(enc, solver, end)
    return Answer(question, verdict, witness, wall_s=solver.wall_time)


def can_score(
    pos: Position,
    player: int,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    *,
    deterministic_time: float | None = None,
) -> Answer:
    """Can ``player`` win this round: his carrier, or a piece that first takes the flag,
    entering his Win Zone before the other player does?"""
    enc = build(pos)
    m = enc.model
    mine = [enc.win[n][player] for n in range(enc.states)]
    m.add_bool_or(mine)
    for n in range(enc.states):
        m.add_bool_or([enc.win[n][1 - player].negated(), *mine[:n]])
    solver, status = _solve(enc, time_limit, deterministic_time)
    verdict = _verdict(status)
    witness = None
    if verdict == "possible":
        end = next(n for n in range(enc.states) if solver.value(enc.win[n][player]))
        witness = extract(enc, solver, end)
    return Answer(f"can-score {SEATS[player]}", verdict, witness, wall_s=solver.wall_time)


def threats(
    pos: Position,
    player: int,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    *,
    deterministic_time: float | None = None,
) -> Threats:
    """For each live enemy piece, every square it could stand on at some point of the
    rest of the round (before any win ends the game); for each of ``player``'s live
    pieces, whether an enemy could kill it (:func:`can_kill` with ``by="enemy"``).

    Each reach set is found by repeated solves, each asking for a line that visits a
    square not yet found, until CP-SAT proves none is left."""
    out = Threats(player)
    for e in range(3 * (1 - player), 3 * (1 - player) + 3):
        if pos.pieces[e].square is None:
            continue
        found, complete = _reach(pos, e, time_limit, deterministic_time)
        out.reach[e] = sorted(found)
        out.complete = out.complete and complete
    for g in range(3 * player, 3 * player + 3):
        if pos.pieces[g].square is not None:
            out.exposed[g] = can_kill(
                pos, g, "enemy", time_limit, deterministic_time=deterministic_time
            )
    return out


def reach(
    pos: Position,
    e: int,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    candidates: set[int] | None = None,
    *,
    deterministic_time: float | None = None,
) -> tuple[set[int], bool]:
    """The squares piece ``e`` can stand on at some point of the rest of the round
    (before anyone wins), and whether the search finished (False: a limit was hit, the
    set is then a lower bound). With ``candidates``, only those squares (and its own) are
    asked about: the caller knows the others are out of reach or already found.

    By repeated solves of one model (under assumptions), each asking for a line that
    visits a square not yet found, farthest first, until CP-SAT proves none is left."""
    return _reach(pos, e, time_limit, deterministic_time, candidates)


def _reach(
    pos: Position,
    e: int,
    time_limit: float | None,
    deterministic_time: float | None,
    candidates: set[int] | None = None,
) -> tuple[set[int], bool]:
    home = pos.pieces[e].square
    assert home is not None
    found: set[int] = {home}

    def dist(q: int) -> int:
        return abs(q % 8 - home % 8) + abs(q // 8 - home // 8)

    if candidates is None:
        # Each reveal moves a piece at most one square, its buff at most one more (two
        # Manhattan steps for a diagonal): squares beyond that bound are out of reach.
        bound = pos.pieces[e].hidden + (2 if pos.pieces[e].buff is not None else 0)
        left = {q for q in range(64) if q != home and dist(q) <= bound}
    else:
        left = set(candidates) - found
    if not left:
        return found, True
    enc = build(pos)
    m = enc.model
    # no_win[n]: nobody has won at any state before n (the game is still on).
    no_win = [m.new_constant(1)]
    for n in range(1, enc.states):
        b = m.new_bool_var("")
        prev = enc.win[n - 1]
        m.add_bool_and([no_win[n - 1], prev[0].negated(), prev[1].negated()]).only_enforce_if(b)
        m.add_bool_or([no_win[n - 1].negated(), prev[0], prev[1], b])
        no_win.append(b)
    sq_of = [8 * enc.y[n][e] + enc.x[n][e] for n in range(enc.states)]
    while left:
        # Ask for the farthest squares first: a line reaching one passes many others.
        far = max(dist(q) for q in left)
        ring = sorted(q for q in left if dist(q) == far)
        active = m.new_bool_var("")
        picks = []
        for n in range(enc.states):
            pick = m.new_bool_var("")
            m.add_implication(pick, active)
            m.add_implication(pick, no_win[n])
            m.add_implication(pick, enc.alive[n][e])
            m.add_linear_expression_in_domain(
                sq_of[n], cp_model.Domain.from_values(ring)
            ).only_enforce_if(pick)
            picks.append(pick)
        m.add_bool_or([active.negated(), *picks])
        m.clear_assumptions()
        m.add_assumptions([active])
        solver, status = _solve(enc, time_limit, deterministic_time)
        m.add(active == 0)
        if status == cp_model.INFEASIBLE:
            left -= set(ring)  # proved out of reach
            continue
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return found, False
        for n in range(enc.states):
            if not solver.value(no_win[n]):
                break
            if solver.value(enc.alive[n][e]):
                found.add(solver.value(sq_of[n]))
        left -= found
    return found, True


def extract(enc: Encoding, solver: cp_model.CpSolver, end: int) -> Witness:
    """The witness of a solution, up to state ``end`` (the line stops with the step
    that reaches it)."""
    pos = enc.position
    v = solver.value
    stacks = {
        i: tuple(next(c for c in range(3) if v(row[c])) for row in rows)
        for i, rows in enc.cards.items()
        if pos.pieces[i].cards is None
    }
    buffs = {
        i: next(b for b in range(4) if v(row[b]))
        for i, row in enc.buff_kind.items()
        if pos.pieces[i].buff == HIDDEN_BUFF
    }
    line: list[tuple[int, str]] = []
    has_buff = {i: True for i in enc.buff_kind}

    def square(n: int, i: int) -> int:
        return 8 * int(v(enc.y[n][i])) + int(v(enc.x[n][i]))

    for t, p in enumerate(enc.schedule):
        start = 2 * t
        if start >= end:
            break
        (i, _j) = next(k for k, r in enc.reveal[t].items() if v(r))
        line.append((p, f"reveal {KINDS[i % 3]}"))
        if not v(enc.alive[start][i]):
            continue
        if has_buff.get(i):
            use = enc.buff_use[t].get(i)
            if use is not None and v(use):
                has_buff[i] = False
                line.append((p, "buff before" if v(enc.before[t]) else "buff after"))
            else:
                line.append((p, "buff later"))
        for slot in enc.slots[2 * t : 2 * t + 2]:
            n = slot.n
            if n >= end:
                break
            mode = next((s for s in range(4) if v(slot.mode[i][s])), None)
            if mode is None:
                continue
            if mode == ATK:
                target = next((j for (a, j), h in slot.hit.items() if a == i and v(h)), None)
                where = "none" if target is None else square_name(square(n, target))
                line.append((p, f"attack {where}"))
            else:
                verb = "defend" if mode == DEF else "move"
                d = next(d for d in range(9) if v(slot.dirs[i][d]))
                line.append((p, f"{verb} {'none' if d == 8 else square_name(square(n + 1, i))}"))
                assert mode != DIAG or d >= 4 or d == 8
            # A dropped flag picked up by one of two pieces in the zone is a choice.
            for q in (0, 1):
                side = range(q * 3, q * 3 + 3)
                lost = any(v(enc.carrier[n][g]) and not v(enc.alive[n + 1][g]) for g in side)
                in_zone = [
                    g
                    for g in side
                    if v(enc.alive[n + 1][g]) and int(v(enc.y[n + 1][g])) == ZONE_ROW[q]
                ]
                if lost and len(in_zone) > 1:
                    new = next(g for g in side if v(enc.carrier[n + 1][g]))
                    line.append((q, f"pickup {KINDS[new % 3]}"))
    return Witness(stacks, buffs, tuple(line))


__all__ = [
    "DEFAULT_TIME_LIMIT",
    "METHOD",
    "Answer",
    "Threats",
    "Verdict",
    "Witness",
    "can_kill",
    "can_score",
    "extract",
    "reach",
    "threats",
]
