"""Each game's table as one player sees it, as a flat ``float32`` tensor.

Every tensor holds what that player's information state holds and nothing else (the
hidden-information rule lives in the engines: Battle Line's tensor is read through
:func:`battlejudge.engines.battleline.bots.observation.observe`, which reads only the
player's information-state string; the other games copy the masking their
``information_state_string`` documents). Pieces, cards and squares are seen from the
player's side: "mine" first, then "theirs". The layouts are listed in docs/rl.md.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from battlejudge.engines.battleline.bots.observation import UNKNOWN, observe
from battlejudge.engines.battleline.state import FLAGS, BattleLineState
from battlejudge.engines.battleline.state import PHASE_NAMES as BL_PHASES
from battlejudge.engines.battleplan import board as bpb
from battlejudge.engines.battleplan.state import PHASE_NAMES as BP_PHASES
from battlejudge.engines.battleplan.state import BattlePlanState
from battlejudge.engines.force_duel.state import PHASES as FD_PHASES
from battlejudge.engines.force_duel.state import ForceDuelState
from battlejudge.engines.game import CHANCE
from battlejudge.engines.lines_of_battle.state import PHASE_NAMES as LB_PHASES
from battlejudge.engines.lines_of_battle.state import LinesOfBattleState
from battlejudge.solver.battleline.cards import TROOP_COUNT
from battlejudge.solver.lines_of_battle.core import KIND_NAMES

Tensor = npt.NDArray[np.float32]
Pieces = list[tuple[str, tuple[int, ...]]]
"""A tensor's layout: each piece's name and shape, in order."""


class Planes:
    """A flat tensor filled piece by piece: each named piece is a view of the tensor."""

    def __init__(self, pieces: Pieces) -> None:
        size, layout = _layout(tuple(pieces))
        self.tensor: Tensor = np.zeros(size, np.float32)
        self.views: dict[str, Tensor] = {
            name: self.tensor[start : start + n].reshape(shape) for name, start, n, shape in layout
        }

    def __getitem__(self, name: str) -> Tensor:
        return self.views[name]

    def copy(self) -> Planes:
        """An independent copy (its own tensor and views)."""
        twin = Planes.__new__(Planes)
        twin.tensor = self.tensor.copy()
        twin.views = {}
        start = 0
        for name, view in self.views.items():
            twin.views[name] = twin.tensor[start : start + view.size].reshape(view.shape)
            start += view.size
        return twin


@functools.lru_cache(maxsize=64)
def _layout(
    pieces: tuple[tuple[str, tuple[int, ...]], ...],
) -> tuple[int, tuple[tuple[str, int, int, tuple[int, ...]], ...]]:
    """A layout's total size and each piece's name, start, size and shape."""
    out = []
    start = 0
    for name, shape in pieces:
        n = math.prod(shape)
        out.append((name, start, n, shape))
        start += n
    return start, tuple(out)


def tensor_size(pieces: Pieces) -> int:
    """How many floats a tensor of these pieces holds."""
    return _layout(tuple(pieces))[0]


# -- Battle Line -----------------------------------------------------------------------

BL_CARDS = 70
BL_FLAGS = FLAGS
BL_PLACES = ("hand", *(f"mine@{i}" for i in range(9)), *(f"theirs@{i}" for i in range(9)))
BL_PLACES += (*(f"environment@{i}" for i in range(9)), "my-discards", "their-discards")
BL_PLACES += ("known-on-deck",)


def battleline_pieces() -> Pieces:
    """Battle Line: where each of the 70 cards is, as far as the player knows (one of
    :data:`BL_PLACES`, or nowhere: unseen); who holds each flag; the phase; whose turn;
    the opponent's hand size, the deck sizes and the tactics each side has played."""
    return [
        ("cards", (BL_CARDS, len(BL_PLACES))),
        ("claimed", (BL_FLAGS, 2)),
        ("phase", (len(BL_PHASES),)),
        ("my_turn", (1,)),
        ("counts", (5,)),
        ("leaders", (2,)),
    ]


def battleline_tensor(state: BattleLineState, player: int) -> Planes:
    """The Battle Line tensor of ``player`` (:func:`battleline_pieces`)."""
    t = Planes(battleline_pieces())
    obs = observe(state, player)
    me, opp = player, 1 - player
    cards = t["cards"]
    for c in obs.hand:
        cards[c, 0] = 1
    for f in range(BL_FLAGS):
        for c, _ in obs.sides[f][me]:
            cards[c, 1 + f] = 1
        for c, _ in obs.sides[f][opp]:
            cards[c, 10 + f] = 1
        for c, _ in obs.environment[f]:
            cards[c, 19 + f] = 1
        if obs.claimed_by[f] >= 0:
            t["claimed"][f, 0 if obs.claimed_by[f] == me else 1] = 1
    for c in obs.discards[me]:
        cards[c, 28] = 1
    for c in obs.discards[opp]:
        cards[c, 29] = 1
    for deck in obs.known_top:
        for c in deck:
            if c != UNKNOWN:
                cards[c, 30] = 1
    t["phase"][BL_PHASES.index(obs.phase)] = 1
    t["my_turn"][0] = float(obs.to_move == me and state.current_player() != CHANCE)
    t["counts"][:] = (
        obs.opp_hand_size / 7,
        obs.deck_sizes[0] / TROOP_COUNT,
        obs.deck_sizes[1] / 10,
        obs.tactics_played[me] / 10,
        obs.tactics_played[opp] / 10,
    )
    t["leaders"][:] = (obs.leader_played[me], obs.leader_played[opp])
    return t


# -- BattlePlan ------------------------------------------------------------------------

BP_SQUARES = 64
BP_STACK = 6
"""A piece's stack holds at most 6 cards (the highest die)."""


def battleplan_pieces() -> Pieces:
    """BattlePlan: each piece's square (or off the board), shield, die and stack (each
    card move/attack/defend, or unknown for the opponent's unrevealed cards), cards
    revealed and buff (none, one of four, or unknown); who carries a flag; the buff
    token; the dice; the player's hand and the opponent's hand size; the deck and
    discards; the phase; whose turn."""
    return [
        ("square", (6, BP_SQUARES + 1)),
        ("shield", (6,)),
        ("die", (6, 7)),
        ("stack", (6, BP_STACK, 4)),
        ("revealed", (6,)),
        ("buff", (6, 6)),
        ("carrier", (2, 7)),
        ("token", (BP_SQUARES + 1,)),
        ("dice", (3, 7)),
        ("hand", (4,)),
        ("counts", (7,)),
        ("phase", (len(BP_PHASES),)),
        ("my_turn", (1,)),
    ]


def _seen_piece(g: int, player: int) -> int:
    """Pieces renumbered from the player's side: his three first."""
    return g if player == 0 else (g + 3) % 6


def battleplan_tensor(state: BattlePlanState, player: int) -> Planes:
    """The BattlePlan tensor of ``player`` (:func:`battleplan_pieces`); the opponent's
    unrevealed cards, unused buffs and hand are hidden, as in
    :meth:`BattlePlanState.information_state_string`."""
    t = Planes(battleplan_pieces())
    for g in range(6):
        i = _seen_piece(g, player)
        mine = g // 3 == player
        sq = state.pos[g]
        t["square"][i, BP_SQUARES if sq == bpb.OFF else sq] = 1
        t["shield"][i] = state.shield[g]
        t["die"][i, state.assigned[g]] = 1
        for k, card in enumerate(state.stacks[g][:BP_STACK]):
            shown = mine or k < state.revealed[g]
            t["stack"][i, k, card if shown else 3] = 1
        t["revealed"][i] = state.revealed[g] / BP_STACK
        buff = state.buff[g]
        t["buff"][i, 0 if buff == bpb.OFF else (1 + buff if mine else 5)] = 1
    for p in (0, 1):
        carrier = state.carrier[p]
        side = 0 if p == player else 1
        t["carrier"][side, 6 if carrier == bpb.OFF else _seen_piece(carrier, player)] = 1
    t["token"][BP_SQUARES if state.token == bpb.OFF else state.token] = 1
    for k, value in enumerate(state.dice[:3]):
        t["dice"][k, value] = 1
    t["hand"][:] = [n / 5 for n in state.hand[player]]
    t["counts"][:] = [
        sum(state.hand[1 - player]) / 5,
        sum(state.deck) / 20,
        *(n / 5 for n in state.discard),
        state.round / max(state.rounds, 1),
    ]
    t["phase"][state.phase] = 1
    t["my_turn"][0] = float(state.current_player() == player)
    return t


# -- Lines of Battle -------------------------------------------------------------------

LB_FLAGS = 5
"""Per unit: moved, faced, swapped, attacked, reloading (the engine's turn flags)."""


def lines_of_battle_pieces(squares: int) -> Pieces:
    """Lines of Battle (everything is public): per square, whose unit (mine or theirs),
    its type, facing and turn flags; the square attacking and the square attacked while
    the dice are rolled; the phase; whose turn; Army Movement; the turn count."""
    return [
        ("owner", (squares, 2)),
        ("kind", (squares, len(KIND_NAMES))),
        ("facing", (squares, 4)),
        ("flags", (squares, LB_FLAGS)),
        ("pending", (2, squares)),
        ("phase", (len(LB_PHASES),)),
        ("my_turn", (1,)),
        ("army", (1,)),
        ("turn", (1,)),
    ]


def lines_of_battle_tensor(state: LinesOfBattleState, player: int) -> Planes:
    """The Lines of Battle tensor of ``player`` (:func:`lines_of_battle_pieces`)."""
    t = Planes(lines_of_battle_pieces(state.board.size))
    for sq, u in enumerate(state.cells):
        if u is None:
            continue
        t["owner"][sq, 0 if u.owner == player else 1] = 1
        t["kind"][sq, u.kind] = 1
        t["facing"][sq, u.facing] = 1
        for bit in range(LB_FLAGS):
            t["flags"][sq, bit] = float(bool(u.flags & (1 << bit)))
    if state.pending is not None:
        t["pending"][0, state.pending[0]] = 1
        t["pending"][1, state.pending[1]] = 1
    t["phase"][state.phase] = 1
    t["my_turn"][0] = float(state.current_player() == player)
    t["army"][0] = float(state.army)
    t["turn"][0] = state.turn / state.turn_limit
    return t


# -- Force Duel ------------------------------------------------------------------------


def force_duel_pieces(state: ForceDuelState) -> Pieces:
    """Force Duel: the player's battle deck in order (top first, one kind per place), the
    opponent's deck size; both players' cards out of the game and units in play or
    cancelled (per kind); the player's strategy hand (per card) and the opponent's hand
    size; the strategy deck and discards; both weapons; both strategy cards (the
    opponent's only once both are down); the player's Force and whether the opponent
    has chosen his; units alive and lost; the phase; whose turn; who attacks."""
    book = state.book
    kinds, strategies, weapons = book.kinds, len(book.strategy), len(book.weapons)
    return [
        ("my_deck", (book.deck_size, kinds)),
        ("counts", (6,)),
        ("out", (2, kinds)),
        ("in_play", (2, kinds)),
        ("cancelled", (2, kinds)),
        ("hand", (strategies,)),
        ("strategy_discard", (strategies,)),
        ("weapons", (2, weapons + 1)),
        ("strategy", (2, strategies + 2)),
        ("forces", (5,)),
        ("phase", (len(FD_PHASES),)),
        ("flags", (2,)),
    ]


def force_duel_tensor(state: ForceDuelState, player: int) -> Planes:
    """The Force Duel tensor of ``player`` (:func:`force_duel_pieces`); what is hidden
    is what :meth:`ForceDuelState.information_state_string` hides."""
    t = Planes(force_duel_pieces(state))
    book = state.book
    other = 1 - player
    units = max(state.units, 1)
    for k, kind in enumerate(state.decks[player][: book.deck_size]):
        t["my_deck"][k, kind] = 1
    t["counts"][:] = [
        len(state.decks[other]) / book.deck_size,
        len(state.hands[other]) / 3,
        sum(state.strat_deck) / max(sum(book.strategy_deck), 1),
        state.alive[player] / units,
        state.alive[other] / units,
        (state.graves[player] - state.graves[other]) / units,
    ]
    for side, p in enumerate((player, other)):
        t["out"][side, :] = [n / max(m, 1) for n, m in zip(state.out[p], book.deck, strict=True)]
        for owner, kind in state.in_play:
            if owner == p:
                t["in_play"][side, kind] += 1
        for owner, kind in state.cancelled:
            if owner == p:
                t["cancelled"][side, kind] += 1
        w = state.weapons[p]
        t["weapons"][side, len(book.weapons) if w is None else w] = 1
    for card in state.hands[player]:
        t["hand"][card] += 1
    t["strategy_discard"][:] = state.strat_discard
    both_down = None not in state.strategy
    for side, p in enumerate((player, other)):
        s = state.strategy[p]
        hidden = len(book.strategy) + 1
        if s is None:
            t["strategy"][side, len(book.strategy)] = 1
        else:
            t["strategy"][side, hidden if p != player and not both_down else s] = 1
    mine = state.forces[player]
    t["forces"][0 if mine is None else mine] = 1
    t["forces"][4] = float(state.forces[other] is not None)
    t["phase"][state.phase] = 1
    t["flags"][:] = [float(state.current_player() == player), float(state.attacker == player)]
    return t


def tensor_of(state: Any, player: int) -> Planes:
    """The tensor of any of the games' states, as ``player`` sees it."""
    if isinstance(state, BattleLineState):
        return battleline_tensor(state, player)
    if isinstance(state, BattlePlanState):
        return battleplan_tensor(state, player)
    if isinstance(state, LinesOfBattleState):
        return lines_of_battle_tensor(state, player)
    if isinstance(state, ForceDuelState):
        return force_duel_tensor(state, player)
    raise TypeError(f"no tensor for {type(state).__name__}")


def pieces_of(state: Any) -> Pieces:
    """The named pieces (and so the size) of the tensor of a game's states."""
    if isinstance(state, BattleLineState):
        return battleline_pieces()
    if isinstance(state, BattlePlanState):
        return battleplan_pieces()
    if isinstance(state, LinesOfBattleState):
        return lines_of_battle_pieces(state.board.size)
    if isinstance(state, ForceDuelState):
        return force_duel_pieces(state)
    raise TypeError(f"no tensor for {type(state).__name__}")
