"""A time-expanded CP-SAT model of the rest of a BattlePlan round.

The reveal schedule is public (who reveals at each remaining turn follows from the card
counts), so the model unrolls it: turn ``t`` has states ``2t`` (before), ``2t+1`` (after
the first step) and ``2t+2`` (after the second). The first step is the card, or the buff
when it is used before the card; the second is the buff used after the card, or nothing.
Free choices: the face-down cards (within the per-piece caps), the kinds of face-down
buffs, which piece reveals, when a buff is used, where each step goes and what each
attack hits, who picks up a dropped flag. The rules encoded (seed 002 pages 3-4, with
docs/rulings.md and the engine's house rules): a move goes one free orthogonal square (a
diagonal one for the Diagonal buff) and may stay only when every such square is off the
board or occupied; an attack kills an adjacent piece, a friend only when an enemy is
adjacent too (docs/rulings.md BP8), unless it has a shield, which it then loses, and has
no effect when no enemy is adjacent; a
DEFEND is a move followed by a shield; a reveal removes the piece's shield; a dead
piece's reveal does nothing; a piece entering the enemy zone takes the flag if its side
has no carrier; when a carrier dies a piece of its side in the enemy zone takes it; a
carrier entering its Win Zone wins. The Buff Token is left out: a buff drawn this round
goes to the hand and cannot be used before the next round, and the token never blocks.

Encoding is pure: :func:`build` returns the model and its variables and never solves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ortools.sat.python import cp_model

from battlejudge.solver.battleplan.position import (
    CAPS,
    HIDDEN_BUFF,
    WIN_SQUARE,
    ZONE_ROW,
    Position,
)

ORTH, DIAG, ATK, DEF = 0, 1, 2, 3
"""What a step does."""
_CARD_STEP = (ORTH, ATK, DEF)  # move, attack, defend
_BUFF_STEP = (ORTH, ATK, DEF, DIAG)  # extra-move, extra-attack, extra-defend, diagonal
DIRS: tuple[tuple[int, int], ...] = (
    (0, 1),
    (0, -1),
    (1, 0),
    (-1, 0),
    (1, 1),
    (1, -1),
    (-1, 1),
    (-1, -1),
)
"""The first four are orthogonal."""
PLAYER_CARDS = (9, 6, 3)

Lit = Any
"""A CP-SAT literal (an IntVar of domain 0..1 or its negation)."""


@dataclass
class Slot:
    """The variables of one step (state ``n`` -> ``n + 1``) for the acting side."""

    n: int
    turn: int
    mode: dict[int, list[Lit]] = field(default_factory=dict)
    """piece -> [ORTH, DIAG, ATK, DEF] literals (the piece acts, alive, in that mode)."""
    dirs: dict[int, list[Lit]] = field(default_factory=dict)
    """piece -> 8 direction literals then STAY."""
    hit: dict[tuple[int, int], Lit] = field(default_factory=dict)
    """(attacker, target) -> literal."""
    killed: list[Lit] = field(default_factory=list)


@dataclass
class Encoding:
    """The model and the variables a question or a witness needs."""

    model: cp_model.CpModel
    position: Position
    schedule: list[int]
    alive: list[list[Lit]]
    x: list[list[Any]]
    y: list[list[Any]]
    shield: list[list[Lit]]
    carrier: list[list[Lit]]
    win: list[list[Lit]]
    """win[n][p]: player p's carrier stands on his Win Zone at state n."""
    cards: dict[int, list[list[Lit]]]
    """piece -> per face-down card, [move, attack, defend] literals."""
    buff_kind: dict[int, list[Lit]]
    """piece -> [4 buff kinds] for every piece with an unused buff."""
    reveal: list[dict[tuple[int, int], Lit]]
    """reveal[t][(piece, j)]: turn t reveals the j-th face-down card of piece."""
    buff_use: list[dict[int, Lit]]
    before: list[Lit]
    slots: list[Slot]

    @property
    def states(self) -> int:
        """How many board states the model tracks through the rest of the round (two per
        remaining turn, plus the start)."""
        return len(self.alive)


def _and(m: cp_model.CpModel, lits: list[Lit], name: str = "") -> Lit:
    b = m.new_bool_var(name)
    for lit in lits:
        m.add_implication(b, lit)
    m.add_bool_or([b] + [lit.negated() for lit in lits])
    return b


def _sum_bool(m: cp_model.CpModel, lits: list[Lit], name: str = "") -> Lit:
    """A literal equal to ``sum(lits)``, which the caller guarantees is at most 1."""
    if not lits:
        return m.new_constant(0)
    b = m.new_bool_var(name)
    m.add(b == sum(lits))
    return b


def build(pos: Position) -> Encoding:
    """Encode the rest of the round from ``pos`` (see the module docstring): the board at
    each state, the position, the face-down cards, which card each turn reveals, and each
    turn's moves (variables made in that order, so the model is always the same)."""
    m = cp_model.CpModel()
    sched = pos.schedule()
    n_states = 2 * len(sched) + 1
    alive, xs, ys, sh, car, win = _board(m, n_states)
    _start(m, pos, alive, xs, ys, sh, car)
    cards, buff_kind = _face_down(m, pos)
    reveal = _reveals(m, pos, sched)
    buff_use, before, slots = _turns(m, pos, sched, alive, xs, ys, sh, cards, buff_kind, reveal)
    return Encoding(
        m,
        pos,
        sched,
        alive,
        xs,
        ys,
        sh,
        car,
        win,
        cards,
        buff_kind,
        reveal,
        buff_use,
        before,
        slots,
    )


Grid = list[list[Any]]
"""One variable per board state and piece (or side)."""


def _board(m: cp_model.CpModel, n_states: int) -> tuple[Grid, Grid, Grid, Grid, Grid, Grid]:
    """Each state's board: who is alive, where (a square, or off the board), with a shield
    or the flag, and whether a side has won; the board's own rules at every state."""
    N = n_states
    alive = [[m.new_bool_var(f"alive{n}_{i}") for i in range(6)] for n in range(N)]
    xs = [[m.new_int_var(0, 7, f"x{n}_{i}") for i in range(6)] for n in range(N)]
    ys = [[m.new_int_var(0, 7, f"y{n}_{i}") for i in range(6)] for n in range(N)]
    sqs = [[m.new_int_var(0, 69, f"sq{n}_{i}") for i in range(6)] for n in range(N)]
    sh = [[m.new_bool_var(f"sh{n}_{i}") for i in range(6)] for n in range(N)]
    car = [[m.new_bool_var(f"car{n}_{i}") for i in range(6)] for n in range(N)]
    win = [[m.new_bool_var(f"win{n}_{p}") for p in range(2)] for n in range(N)]

    for n in range(N):
        for i in range(6):
            a = alive[n][i]
            m.add(sqs[n][i] == 8 * ys[n][i] + xs[n][i]).only_enforce_if(a)
            m.add(sqs[n][i] == 64 + i).only_enforce_if(a.negated())
            m.add(xs[n][i] == 0).only_enforce_if(a.negated())
            m.add(ys[n][i] == 0).only_enforce_if(a.negated())
            m.add_implication(sh[n][i], a)
            m.add_implication(car[n][i], a)
        m.add_all_different(sqs[n])
        for p in (0, 1):
            _flag_rules(m, n, p, alive, ys, sqs, car, win)
    return alive, xs, ys, sh, car, win


def _flag_rules(
    m: cp_model.CpModel, n: int, p: int, alive: Grid, ys: Grid, sqs: Grid, car: Grid, win: Grid
) -> None:
    """Side ``p``'s flag at state ``n``: at most one carrier, a win when the carrier stands
    on the side's winning square, and who may carry it."""
    side = range(p * 3, p * 3 + 3)
    m.add(sum(car[n][i] for i in side) <= 1)
    on_win = []
    for i in side:
        at = m.new_bool_var(f"onwin{n}_{i}")
        m.add(sqs[n][i] == WIN_SQUARE[p]).only_enforce_if(at)
        m.add(sqs[n][i] != WIN_SQUARE[p]).only_enforce_if(at.negated())
        on_win.append(_and(m, [at, car[n][i]]))
    m.add(win[n][p] == sum(on_win))
    # Anyone of the side in the enemy zone means the side has a carrier.
    for i in side:
        zone = m.new_bool_var(f"zone{n}_{i}")
        m.add(ys[n][i] == ZONE_ROW[p]).only_enforce_if(zone)
        m.add(ys[n][i] != ZONE_ROW[p]).only_enforce_if(zone.negated())
        in_zone = _and(m, [zone, alive[n][i]])
        m.add(sum(car[n][j] for j in side) >= 1).only_enforce_if(in_zone)
        if n > 0:
            # A carrier keeps the flag while alive; a new carrier is in the zone.
            m.add_bool_or([car[n - 1][i].negated(), alive[n][i].negated(), car[n][i]])
            m.add_bool_or([car[n][i].negated(), car[n - 1][i], in_zone])


def _start(
    m: cp_model.CpModel, pos: Position, alive: Grid, xs: Grid, ys: Grid, sh: Grid, car: Grid
) -> None:
    """The first state is the position."""
    for i, pc in enumerate(pos.pieces):
        if pc.square is None:
            m.add(alive[0][i] == 0)
        else:
            m.add(alive[0][i] == 1)
            m.add(xs[0][i] == pc.square % 8)
            m.add(ys[0][i] == pc.square // 8)
        m.add(sh[0][i] == int(pc.shield))
        m.add(car[0][i] == int(pc.carrier))


def _face_down(
    m: cp_model.CpModel, pos: Position
) -> tuple[dict[int, list[list[Lit]]], dict[int, list[Lit]]]:
    """The face-down cards, within the per-piece and per-player caps, and each buff's kind."""
    P = pos.pieces
    cards: dict[int, list[list[Lit]]] = {}
    for i, pc in enumerate(P):
        if not pc.hidden:
            continue
        rows = []
        for j in range(pc.hidden):
            row = [m.new_bool_var(f"card{i}_{j}_{c}") for c in range(3)]
            m.add_exactly_one(row)
            if pc.cards is not None:
                m.add(row[pc.cards[j]] == 1)
            rows.append(row)
        for c in range(3):
            m.add(sum(r[c] for r in rows) + pc.revealed.count(c) <= CAPS[c])
        cards[i] = rows
    for p in (0, 1):
        for c in range(3):
            m.add(
                sum(r[c] for i in range(p * 3, p * 3 + 3) for r in cards.get(i, []))
                + sum(P[i].revealed.count(c) for i in range(p * 3, p * 3 + 3))
                <= PLAYER_CARDS[c]
            )
    buff_kind: dict[int, list[Lit]] = {}
    for i, pc in enumerate(P):
        if pc.buff is not None:
            row = [m.new_bool_var(f"bk{i}_{b}") for b in range(4)]
            m.add_exactly_one(row)
            if pc.buff != HIDDEN_BUFF:
                m.add(row[pc.buff] == 1)
            buff_kind[i] = row
    return cards, buff_kind


def _reveals(m: cp_model.CpModel, pos: Position, sched: Any) -> list[dict[tuple[int, int], Lit]]:
    """Which card each turn reveals: one per turn, each card once, a piece's cards in order."""
    P = pos.pieces
    reveal: list[dict[tuple[int, int], Lit]] = []
    for t, p in enumerate(sched):
        reveal.append(
            {
                (i, j): m.new_bool_var(f"rev{t}_{i}_{j}")
                for i in range(p * 3, p * 3 + 3)
                for j in range(P[i].hidden)
            }
        )
        m.add_exactly_one(reveal[t].values())
    for i, pc in enumerate(P):
        turns = [t for t, p in enumerate(sched) if p == i // 3]
        for j in range(pc.hidden):
            m.add_exactly_one([reveal[t][(i, j)] for t in turns])
            if j + 1 < pc.hidden:
                m.add(
                    sum(t * reveal[t][(i, j)] for t in turns)
                    < sum(t * reveal[t][(i, j + 1)] for t in turns)
                )
    return reveal


def _turns(
    m: cp_model.CpModel,
    pos: Position,
    sched: Any,
    alive: Grid,
    xs: Grid,
    ys: Grid,
    sh: Grid,
    cards: dict[int, list[list[Lit]]],
    buff_kind: dict[int, list[Lit]],
    reveal: list[dict[tuple[int, int], Lit]],
) -> tuple[list[dict[int, Lit]], list[Lit], list[Slot]]:
    """Each turn: the revealed card's kind, a buff used before or after it (each buff at
    most once a round), and the two half-steps they make (:func:`_transition`)."""
    P = pos.pieces
    buff_use: list[dict[int, Lit]] = []
    before: list[Lit] = []
    slots: list[Slot] = []
    uses: dict[int, list[Lit]] = {i: [] for i in buff_kind}
    for t, p in enumerate(sched):
        side = range(p * 3, p * 3 + 3)
        start = 2 * t
        sel = {i: _sum_bool(m, [reveal[t][(i, j)] for j in range(P[i].hidden)]) for i in side}
        card_kind = [m.new_bool_var(f"ck{t}_{c}") for c in range(3)]
        m.add_exactly_one(card_kind)
        for (i, j), r in reveal[t].items():
            for c in range(3):
                m.add(card_kind[c] == cards[i][j][c]).only_enforce_if(r)
        bu: dict[int, Lit] = {}
        for i in side:
            if i in buff_kind:
                b = m.new_bool_var(f"bu{t}_{i}")
                m.add_implication(b, sel[i])
                m.add_implication(b, alive[start][i])
                uses[i].append(b)
                bu[i] = b
        buff_use.append(bu)
        used = _sum_bool(m, list(bu.values()), f"used{t}")
        bk = [m.new_bool_var(f"bkt{t}_{b}") for b in range(4)]
        m.add_exactly_one(bk)
        for i, b in bu.items():
            for k in range(4):
                m.add(bk[k] == buff_kind[i][k]).only_enforce_if(b)
        bef = m.new_bool_var(f"before{t}")
        m.add_implication(bef, used)
        before.append(bef)
        after = _and(m, [used, bef.negated()])
        card_step = [card_kind[0], m.new_constant(0), card_kind[1], card_kind[2]]
        buff_step = [bk[0], bk[3], bk[1], bk[2]]
        kinds1 = [m.new_bool_var(f"k1_{t}_{s}") for s in range(4)]
        kinds2 = [m.new_bool_var(f"k2_{t}_{s}") for s in range(4)]
        for s in range(4):
            m.add(kinds1[s] == card_step[s]).only_enforce_if(bef.negated())
            m.add(kinds1[s] == buff_step[s]).only_enforce_if(bef)
            m.add(kinds2[s] == card_step[s]).only_enforce_if(bef)
            m.add(kinds2[s] == buff_step[s]).only_enforce_if(after)
            m.add(kinds2[s] == 0).only_enforce_if(used.negated())
        act = {i: _and(m, [sel[i], alive[start][i]]) for i in side}
        for half, kinds in ((0, kinds1), (1, kinds2)):
            n = start + half
            slot = Slot(n, t)
            for i in side:
                slot.mode[i] = [_and(m, [act[i], kinds[s]]) for s in range(4)]
            _transition(m, slot, p, n, alive, xs, ys, sh, reveal_start=sel if half == 0 else None)
            slots.append(slot)
    for _i, lits in uses.items():
        m.add(sum(lits) <= 1)
    return buff_use, before, slots


def _moves(
    m: cp_model.CpModel,
    slot: Slot,
    n: int,
    i: int,
    alive: Grid,
    x0: list[Any],
    y0: list[Any],
    x1: list[Any],
    y1: list[Any],
) -> Lit:
    """Piece ``i``'s move at state ``n`` in its mode (one step in a direction the mode
    allows, or staying put only when every such square is off the board or taken);
    returns the literal of its moving at all."""
    orth_m, diag_m, def_m = slot.mode[i][ORTH], slot.mode[i][DIAG], slot.mode[i][DEF]
    mov = _sum_bool(m, [orth_m, diag_m, def_m], f"mov{n}_{i}")
    orthlike = _sum_bool(m, [orth_m, def_m])
    dirs = [m.new_bool_var(f"d{n}_{i}_{d}") for d in range(9)]
    m.add(sum(dirs) == mov)
    for d, (dx, dy) in enumerate(DIRS):
        if d < 4:
            m.add_implication(dirs[d], orthlike)
        else:
            m.add_implication(dirs[d], diag_m)
        m.add(x1[i] == x0[i] + dx).only_enforce_if(dirs[d])
        m.add(y1[i] == y0[i] + dy).only_enforce_if(dirs[d])
    stay = dirs[8]
    m.add(x1[i] == x0[i]).only_enforce_if(stay)
    m.add(y1[i] == y0[i]).only_enforce_if(stay)
    slot.dirs[i] = dirs
    # Staying is allowed only when every square of the mode is off the board or taken.
    edge = {}
    for name, var, value in (
        ("e", x0[i], 7),
        ("w", x0[i], 0),
        ("n", y0[i], 7),
        ("s", y0[i], 0),
    ):
        b = m.new_bool_var(f"edge{n}_{i}_{name}")
        m.add(var == value).only_enforce_if(b)
        edge[name] = b
    for d, (dx, dy) in enumerate(DIRS):
        off = []
        if dx == 1:
            off.append(edge["e"])
        if dx == -1:
            off.append(edge["w"])
        if dy == 1:
            off.append(edge["n"])
        if dy == -1:
            off.append(edge["s"])
        blockers = []
        for j in range(6):
            if j == i:
                continue
            b = m.new_bool_var(f"bl{n}_{i}_{j}_{d}")
            m.add_implication(b, alive[n][j])
            m.add(x0[j] == x0[i] + dx).only_enforce_if(b)
            m.add(y0[j] == y0[i] + dy).only_enforce_if(b)
            blockers.append(b)
        mode_lit = orthlike if d < 4 else diag_m
        m.add_bool_or([stay.negated(), mode_lit.negated(), *off, *blockers])
    return mov


def _attacks(
    m: cp_model.CpModel,
    slot: Slot,
    p: int,
    n: int,
    i: int,
    alive: Grid,
    x0: list[Any],
    y0: list[Any],
    hit_on: dict[int, list[Lit]],
) -> None:
    """Piece ``i``'s attack at state ``n`` (side ``p``): at most one adjacent live piece
    hit, an enemy whenever one is adjacent; each hit is added to ``hit_on`` of its target."""
    atk_m = slot.mode[i][ATK]
    hits = []
    for j in range(6):
        if j == i:
            continue
        h = m.new_bool_var(f"hit{n}_{i}_{j}")
        m.add_implication(h, atk_m)
        m.add_implication(h, alive[n][j])
        m.add(x0[j] - x0[i] <= 1).only_enforce_if(h)
        m.add(x0[i] - x0[j] <= 1).only_enforce_if(h)
        m.add(y0[j] - y0[i] <= 1).only_enforce_if(h)
        m.add(y0[i] - y0[j] <= 1).only_enforce_if(h)
        slot.hit[(i, j)] = h
        hit_on[j].append(h)
        hits.append(h)
    m.add(sum(hits) <= atk_m)
    no_hit = m.new_bool_var(f"nohit{n}_{i}")
    m.add(no_hit == atk_m - sum(hits))
    near = []
    for e in range(3 * (1 - p), 3 * (1 - p) + 3):
        far = [m.new_bool_var(f"far{n}_{i}_{e}_{k}") for k in range(4)]
        m.add(x0[e] - x0[i] >= 2).only_enforce_if(far[0])
        m.add(x0[i] - x0[e] >= 2).only_enforce_if(far[1])
        m.add(y0[e] - y0[i] >= 2).only_enforce_if(far[2])
        m.add(y0[i] - y0[e] >= 2).only_enforce_if(far[3])
        m.add_bool_or([no_hit.negated(), alive[n][e].negated(), *far])
        # e is a live enemy adjacent to i (allows hitting a friend instead)
        ne = m.new_bool_var(f"near{n}_{i}_{e}")
        m.add_implication(ne, alive[n][e])
        m.add(x0[e] - x0[i] <= 1).only_enforce_if(ne)
        m.add(x0[i] - x0[e] <= 1).only_enforce_if(ne)
        m.add(y0[e] - y0[i] <= 1).only_enforce_if(ne)
        m.add(y0[i] - y0[e] <= 1).only_enforce_if(ne)
        near.append(ne)
    # Seed 002, ATTACK (docs/rulings.md BP8): with no adjacent enemy the attack has no
    # effect, so a friend is hit only by choice, with an enemy adjacent.
    for j in range(3 * p, 3 * p + 3):
        if j != i:
            m.add_bool_or([slot.hit[(i, j)].negated(), *near])


def _transition(
    m: cp_model.CpModel,
    slot: Slot,
    p: int,
    n: int,
    alive: list[list[Lit]],
    xs: list[list[Any]],
    ys: list[list[Any]],
    sh: list[list[Lit]],
    reveal_start: dict[int, Lit] | None,
) -> None:
    """One step of the side ``p``: moves, attacks, kills, shields (state n -> n+1)."""
    x0, y0, x1, y1 = xs[n], ys[n], xs[n + 1], ys[n + 1]
    hit_on: dict[int, list[Lit]] = {j: [] for j in range(6)}
    moving: dict[int, Lit] = {}
    for i in range(p * 3, p * 3 + 3):
        moving[i] = _moves(m, slot, n, i, alive, x0, y0, x1, y1)
        _attacks(m, slot, p, n, i, alive, x0, y0, hit_on)
    for j in range(6):
        struck = _sum_bool(m, hit_on[j], f"struck{n}_{j}")
        killed = _and(m, [struck, sh[n][j].negated()], f"killed{n}_{j}")
        slot.killed.append(killed)
        m.add(alive[n + 1][j] == alive[n][j] - killed)
        still = [alive[n + 1][j]] + ([moving[j].negated()] if j in moving else [])
        m.add(x1[j] == x0[j]).only_enforce_if(still)
        m.add(y1[j] == y0[j]).only_enforce_if(still)
        removed = [struck] + ([reveal_start[j]] if reveal_start and j in reveal_start else [])
        keep = _and(m, [sh[n][j]] + [r.negated() for r in removed])
        gain = slot.mode[j][DEF] if j in slot.mode else None
        if gain is None:
            m.add(sh[n + 1][j] == keep)
        else:
            m.add_max_equality(sh[n + 1][j], [keep, gain])
