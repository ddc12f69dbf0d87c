"""Between engine states and the solver's public positions: what a player may know of a
battle-phase state, a state built back from a position (with chosen face-down contents),
the replay of a solver witness, and a plain exhaustive search over the rest of a round
(the independent check of the solver on small positions)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from battlejudge.engines.battleplan.actions import TOKEN
from battlejudge.engines.battleplan.board import CAPS, OFF, SEATS
from battlejudge.engines.battleplan.state import (
    BATTLE,
    EV_TOKEN,
    BattlePlanState,
)
from battlejudge.engines.game import CHANCE
from battlejudge.solver.battleplan.answers import Witness
from battlejudge.solver.battleplan.position import HIDDEN_BUFF, PieceState, Position
from battlejudge.solver.errors import InputError


def position_of(state: BattlePlanState, viewer: int | None = None) -> Position:
    """The public position at the start of a battle turn; ``viewer``'s own face-down
    cards and buffs are included. :class:`InputError` if the state is elsewhere."""
    if state.phase != BATTLE or state.steps or state.pending or state.round_over():
        raise InputError("a position can only be taken at the start of a battle turn")
    pieces = []
    for g in range(6):
        own = viewer == g // 3
        stack = state.stacks[g]
        r = state.revealed[g]
        buff = None if state.buff[g] == OFF else (state.buff[g] if own else HIDDEN_BUFF)
        pieces.append(
            PieceState(
                square=None if state.pos[g] == OFF else state.pos[g],
                shield=state.shield[g],
                carrier=state.carrier[g // 3] == g,
                revealed=tuple(stack[:r]),
                hidden=len(stack) - r,
                cards=tuple(stack[r:]) if own else None,
                buff=buff,
            )
        )
    return Position(state.turn, tuple(pieces), None if state.token == OFF else state.token)


def state_from_position(
    pos: Position,
    stacks: dict[int, tuple[int, ...]] | None = None,
    buffs: dict[int, int] | None = None,
) -> BattlePlanState:
    """A battle-phase state matching ``pos``; face-down cards and buff kinds that the
    position leaves open are taken from ``stacks`` and ``buffs`` (:class:`InputError`
    if one is missing or does not fit). Hands are empty and the buff deck full: neither
    matters before the next round."""
    stacks = stacks or {}
    buffs = buffs or {}
    s = BattlePlanState()
    s.phase = BATTLE
    s.round = 1
    s.first = s.turn = pos.to_move
    s.done = [True, True]
    s.token = OFF if pos.token is None else pos.token
    for g, pc in enumerate(pos.pieces):
        s.pos[g] = OFF if pc.square is None else pc.square
        s.shield[g] = pc.shield
        if pc.carrier:
            s.carrier[g // 3] = g
        hidden = pc.cards if pc.cards is not None else stacks.get(g)
        if hidden is None and pc.hidden:
            raise InputError(f"no face-down cards given for {SEATS[g // 3]} piece {g % 3}")
        hidden = tuple(hidden or ())
        if len(hidden) != pc.hidden:
            raise InputError(f"piece {g}: {len(hidden)} face-down cards, expected {pc.hidden}")
        stack = list(pc.revealed) + list(hidden)
        if any(stack.count(c) > CAPS[c] for c in range(3)):
            raise InputError(f"piece {g}: the cards break the per-piece caps")
        s.stacks[g] = stack
        s.revealed[g] = len(pc.revealed)
        s.assigned[g] = len(stack)
        if pc.buff is not None:
            kind = pc.buff if pc.buff != HIDDEN_BUFF else buffs.get(g)
            if kind is None:
                raise InputError(f"no buff kind given for piece {g}")
            s.buff[g] = kind
    s.last_revealer = 1 - pos.to_move
    s._advance()
    return s


def settle_chance(state: BattlePlanState) -> None:
    """Resolve pending chance nodes the same fixed way (the first buff; the first free
    square for the token). Within a round neither matters: a drawn buff goes to the hand
    and the token never blocks a piece."""
    while state.pending and state.current_player() == CHANCE:
        kind = state.pending[0][0]
        outcomes = [a for a, _ in state.chance_outcomes()]
        if kind == EV_TOKEN:
            free = [a for a in outcomes if a - TOKEN not in state.pos]
            state.apply_action(free[0] if free else outcomes[0])
        else:
            state.apply_action(outcomes[0])


@dataclass
class Replay:
    """The engine's replay of a witness."""

    state: BattlePlanState
    ok: bool
    detail: str


def replay_witness(pos: Position, witness: Witness, goal: Goal) -> Replay:
    """Replay ``witness`` from ``pos`` with the engine, checking every action; ``ok``
    when every action is legal and the last one reaches ``goal``."""
    state = state_from_position(pos, witness.stacks, witness.buffs)
    reached = False
    for step, (seat, text) in enumerate(witness.line):
        settle_chance(state)
        if state.current_player() != seat:
            return Replay(state, False, f"step {step + 1}: {SEATS[seat]} is not to act")
        before = state.clone()
        try:
            state.apply_action(state.parse_action(text))
        except ValueError as e:
            return Replay(state, False, f"step {step + 1} ({SEATS[seat]}: {text}): {e}")
        reached = goal(before, state)
    settle_chance(state)
    if not reached:
        return Replay(state, False, "the line does not reach the goal with its last action")
    return Replay(state, True, f"replayed {len(witness.line)} actions with the engine")


def fillings(pos: Position) -> Iterator[tuple[dict[int, tuple[int, ...]], dict[int, int]]]:
    """Every assignment of the face-down cards (within the caps) and buff kinds that the
    position leaves open."""
    per_piece: list[list[tuple[int, tuple[int, ...]]]] = []
    for g, pc in enumerate(pos.pieces):
        if pc.cards is None and pc.hidden:
            options = [
                (g, combo)
                for combo in itertools.product(range(3), repeat=pc.hidden)
                if all((pc.revealed + combo).count(c) <= CAPS[c] for c in range(3))
            ]
            per_piece.append(options)
    buff_pieces = [g for g, pc in enumerate(pos.pieces) if pc.buff == HIDDEN_BUFF]
    for combo in itertools.product(*per_piece):
        for kinds in itertools.product(range(4), repeat=len(buff_pieces)):
            yield dict(combo), dict(zip(buff_pieces, kinds, strict=True))


Goal = Callable[[BattlePlanState, BattlePlanState], bool]
"""goal(before, after) for one action."""


@dataclass
class SearchResult:
    """The result of an exhaustive search over the face-down stacks and buffs of a position:
    whether the goal can be reached, the stacks and buffs that reach it, the line of play, and
    the nodes searched."""

    found: bool
    stacks: dict[int, tuple[int, ...]]
    buffs: dict[int, int]
    line: list[tuple[int, str]]
    nodes: int
    complete: bool
    """False when the node budget ran out before the search finished."""
    visited: list[BattlePlanState]


def exhaustive(
    pos: Position, goal: Goal, budget: int = 200_000, collect: bool = False
) -> SearchResult:
    """Depth-first search of every line of play to the end of the round (or the end of
    the game), for every filling of the face-down cards and buffs, with the engine's
    rules; stops at the first action satisfying ``goal``. ``collect`` keeps every state
    visited (and searches everything)."""
    seen: set[str] = set()
    nodes = 0
    visited: list[BattlePlanState] = []
    for stacks, buffs in fillings(pos):
        root = state_from_position(pos, stacks, buffs)
        stack: list[tuple[BattlePlanState, list[tuple[int, str]]]] = [(root, [])]
        if collect:
            visited.append(root)
        while stack:
            state, line = stack.pop()
            if state.is_terminal() or state.round_over():
                continue
            player = state.current_player()
            for action in state.legal_actions():
                nxt = state.clone()
                text = nxt.action_to_string(action)
                nxt.apply_action(action)
                settle_chance(nxt)
                nodes += 1
                if nodes > budget:
                    return SearchResult(False, {}, {}, [], nodes, False, visited)
                if goal(state, nxt) and not collect:
                    return SearchResult(
                        True, stacks, buffs, [*line, (player, text)], nodes, True, visited
                    )
                key = nxt.serialize()
                if key in seen:
                    continue
                seen.add(key)
                if collect:
                    visited.append(nxt)
                stack.append((nxt, [*line, (player, text)]))
    return SearchResult(False, {}, {}, [], nodes, True, visited)


def kill_goal(piece: int, by_enemy: bool = False) -> Goal:
    """The piece dies on this action (by an enemy's attack if ``by_enemy``)."""

    def goal(before: BattlePlanState, after: BattlePlanState) -> bool:
        if after.deaths[piece] == before.deaths[piece]:
            return False
        return not by_enemy or before.piece // 3 != piece // 3

    return goal


def score_goal(player: int) -> Goal:
    """The goal that ``player`` wins the game with the action."""

    def goal(before: BattlePlanState, after: BattlePlanState) -> bool:
        return after.winner == player

    return goal
