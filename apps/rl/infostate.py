"""Tensors kept up to date action by action: each player's observation tensor and his
information-state tensor (perfect recall), for :class:`~battlejudge.apps.rl.specs.Table`.

An information-state tensor is the observation tensor (:mod:`.observations`) followed by
history pieces:

* ``told`` (every game): the lines the player has been told (``public_action_string``),
  in order, one float each: the dense id of the action (:mod:`.encoding`; chance
  outcomes after the player actions) when he was told the whole action, else a code of
  the masked line's text; a line's code is a function of the line alone, so equal
  information-state strings give equal tensors, and the log of codes gives the lines
  back, so different ones give different tensors. :data:`LOG_CAP` lines at most.
* Battle Line, also ``seen``: for each card and place of the observation's ``cards``
  piece, the step (lines told so far, scaled) at which the player last saw the card
  arrive there, kept after it leaves; ``claim_step``: when each flag was claimed.

:class:`Tracker` rebuilds the observation tensor from scratch (cheap for BattlePlan,
Lines of Battle and Force Duel) and keeps the ``told`` log; :class:`BattleLineTracker`
keeps Battle Line's observation incrementally, touching only the cards an action moves
(the from-scratch :func:`~.observations.battleline_tensor` is its reference, and the
tests compare them after every action).
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from battlejudge.apps.rl.encoding import Codec
from battlejudge.apps.rl.observations import (
    BL_PLACES,
    Pieces,
    Tensor,
    battleline_pieces,
    pieces_of,
    tensor_of,
    tensor_size,
)
from battlejudge.engines.battleline import actions as bla
from battlejudge.engines.battleline.cards import DESERTER, REDEPLOY, SCOUT, TRAITOR
from battlejudge.engines.battleline.state import FLAGS, HAND_SIZE, BattleLineState
from battlejudge.engines.battleline.state import PHASE_NAMES as BL_PHASES
from battlejudge.engines.game import CHANCE, GameState
from battlejudge.solver.battleline.cards import TROOP_COUNT

LOG_CAP = 8192
"""The ``told`` log holds at most this many lines (or the game's ``max_length``, if
smaller). Battle Line tells a player about 150 lines a game, Force Duel about 100,
BattlePlan about 3,000 (random play): a longer game keeps its first :data:`LOG_CAP`."""
_UNIT = 2.0**-24
"""Codes are whole numbers below 2**24, stored times 2**-24: exact in float32."""
_MASKED = 1 << 23
"""Masked lines' codes start here (above every dense id)."""


def log_size(state: GameState[Any]) -> int:
    """How many lines a player's ``told`` log holds in this game."""
    return min(state.facts.max_length, LOG_CAP)


def line_code(line: str, full: str, code: int, chance: bool, codec: Codec) -> int:
    """A told line's code (see the module docstring): ``1 +`` the action's dense id
    (chance outcomes after the ``codec.num_actions`` player ids) when the line is the
    whole action (``full``, its notation), else a 20-bit CRC of the masked line's text
    above :data:`_MASKED`."""
    if line == full:
        return 1 + code + (codec.num_actions if chance else 0)
    return _MASKED + (zlib.crc32(line.encode()) & 0xFFFFF)


def observation_pieces(state: GameState[Any]) -> Pieces:
    """The named pieces of a game's observation tensor (:func:`.observations.pieces_of`)."""
    return pieces_of(state)


def information_state_pieces(state: GameState[Any]) -> Pieces:
    """The named pieces of a game's information-state tensor: the observation's, then
    the history (see the module docstring)."""
    extra: Pieces = []
    if isinstance(state, BattleLineState):
        extra = [("seen", (BL_CARDS, len(BL_PLACES))), ("claim_step", (FLAGS,))]
    return [*pieces_of(state), *extra, ("told", (log_size(state),))]


BL_CARDS = 70


class Tracker:
    """Each player's observation tensor (rebuilt from scratch when asked) and the
    history part of his information-state tensor (kept as actions come), in one flat
    array per player."""

    def __init__(self, state: GameState[Any], codec: Codec) -> None:
        self.players = state.facts.players
        pieces = information_state_pieces(state)
        self.obs_size = tensor_size(pieces_of(state))
        self.at = _offsets(pieces)
        """Where each piece starts in the flat tensor."""
        self.info = [np.zeros(tensor_size(pieces), np.float32) for _ in range(self.players)]
        self.cap = log_size(state)
        self.lines = [0] * self.players
        self._told = self.at["told"]

    def clone(self) -> Tracker:
        """An independent copy."""
        twin = self.__class__.__new__(self.__class__)
        twin.__dict__.update(self.__dict__)
        twin.info = [t.copy() for t in self.info]
        twin.lines = list(self.lines)
        return twin

    def before(self, state: GameState[Any], action: Any) -> Any:
        """What the tracker needs to know before ``action`` is applied (nothing here)."""
        return None

    def after(self, state: GameState[Any], before: Any) -> None:
        """Update after the action (lines told are added by :meth:`told` first)."""

    def told(self, player: int, code: int) -> None:
        """``player`` was told one more line, of this code (:func:`line_code`)."""
        n = self.lines[player]
        if n < self.cap:
            self.info[player][self._told + n] = code * _UNIT
        self.lines[player] = n + 1

    def observation(self, state: GameState[Any], player: int) -> Tensor:
        """``player``'s observation tensor now (a fresh array)."""
        return tensor_of(state, player).tensor

    def information(self, state: GameState[Any], player: int) -> Tensor:
        """``player``'s information-state tensor now (a fresh array)."""
        out = self.info[player].copy()
        out[: self.obs_size] = self.observation(state, player)
        return out

    def rebuild(self, state: GameState[Any], player: int) -> None:
        """Bring ``player``'s observation up to date after the state was changed other
        than by an action (a resample); his history is kept."""


class BattleLineTracker(Tracker):
    """Battle Line: each player's observation tensor kept incrementally (only the cards
    an action names move), and the ``seen`` and ``claim_step`` history pieces."""

    def __init__(self, state: GameState[Any], codec: Codec) -> None:
        super().__init__(state, codec)
        assert isinstance(state, BattleLineState)
        self.places = [[-1] * BL_CARDS for _ in range(self.players)]
        self._base = self.at["phase"]
        self._seen = self.at["seen"]
        self._claimed = self.at["claimed"]
        self._claim_step = self.at["claim_step"]
        assert self.at["cards"] == 0 and self.at["leaders"] - self._base == _BL_SMALL - 2
        self.claimed = [-1] * FLAGS
        for p in range(self.players):
            self.rebuild(state, p)
            self._scalars(state, p)

    def clone(self) -> BattleLineTracker:
        """An independent copy."""
        twin = super().clone()
        assert isinstance(twin, BattleLineTracker)
        twin.places = [list(p) for p in self.places]
        twin.claimed = list(self.claimed)
        return twin

    def rebuild(self, state: GameState[Any], player: int) -> None:
        """Every card's place as ``player`` sees it, from the state (a new or resampled
        table); cards newly seen are stamped now."""
        assert isinstance(state, BattleLineState)
        for card, place in enumerate(_bl_places(state, player)):
            self._move(player, card, place)
        for f, flag in enumerate(state.flags):
            if flag.claimed_by != self.claimed[f]:
                self._claim(f, flag.claimed_by)

    def before(self, state: GameState[Any], action: Any) -> Any:
        """The cards ``action`` may move (a drawn known top card is known only now)."""
        assert isinstance(state, BattleLineState)
        kind = action.kind
        if kind in (bla.CLAIM, bla.END_CLAIMS, bla.PASS):
            return ()
        if kind == bla.DRAW:
            top = state.known_top[action.deck]
            return (top[-1][0],) if top else ()
        tactic = _GUILE.get(kind)
        return (action.card,) if tactic is None else (tactic, action.card)

    def after(self, state: GameState[Any], before: Any) -> None:
        """Move the named cards, update the claims and the small pieces."""
        assert isinstance(state, BattleLineState)
        for p in range(self.players):
            for card in before:
                self._move(p, card, _bl_place(state, card, p))
            self._scalars(state, p)
        for f, flag in enumerate(state.flags):
            if flag.claimed_by != self.claimed[f]:
                self._claim(f, flag.claimed_by)

    def _stamp(self, player: int) -> float:
        return (self.lines[player] + 1) / (self.cap + 1)

    def _move(self, player: int, card: int, place: int) -> None:
        old = self.places[player][card]
        if old == place:
            return
        t = self.info[player]
        row = card * _BL_NPLACES
        if old >= 0:
            t[row + old] = 0.0
        if place >= 0:
            t[row + place] = 1.0
            t[self._seen + row + place] = self._stamp(player)
        self.places[player][card] = place

    def _claim(self, flag: int, by: int) -> None:
        self.claimed[flag] = by
        for p in range(self.players):
            t = self.info[p]
            at = self._claimed + 2 * flag
            t[at : at + 2] = 0.0
            t[self._claim_step + flag] = 0.0
            if by >= 0:
                t[at + (0 if by == p else 1)] = 1.0
                t[self._claim_step + flag] = self._stamp(p)

    def _scalars(self, state: BattleLineState, player: int) -> None:
        # the small pieces in one write at their offset (the hot path): phase one-hot,
        # my_turn, counts, leaders
        opp = 1 - player
        small = [0.0] * _BL_SMALL
        small[state.phase] = 1.0
        if state.to_move == player and state.current_player() != CHANCE:
            small[_BL_TURN] = 1.0
        small[_BL_TURN + 1 :] = (
            len(state.hands[opp]) / HAND_SIZE,
            state.deck_size(0) / TROOP_COUNT,
            state.deck_size(1) / 10,
            state.tactics_played[player] / 10,
            state.tactics_played[opp] / 10,
            float(state.leader_played[player]),
            float(state.leader_played[opp]),
        )
        self.info[player][self._base : self._base + _BL_SMALL] = small

    def observation(self, state: GameState[Any], player: int) -> Tensor:
        """``player``'s observation tensor now (a fresh array)."""
        return self.info[player][: self.obs_size].copy()

    def information(self, state: GameState[Any], player: int) -> Tensor:
        """``player``'s information-state tensor now (a fresh array)."""
        return self.info[player].copy()


_BL_NPLACES = len(BL_PLACES)
_BL_TURN = len(BL_PHASES)
"""Offsets from the ``phase`` piece: ``my_turn``, then ``counts`` (5), ``leaders`` (2)."""
_BL_SMALL = _BL_TURN + 1 + 5 + 2


def _offsets(pieces: Pieces) -> dict[str, int]:
    """Where each piece starts in the flat tensor."""
    out: dict[str, int] = {}
    start = 0
    for name, shape in pieces:
        out[name] = start
        start += int(np.prod(shape))
    return out


_GUILE = {bla.SCOUT: SCOUT, bla.REDEPLOY: REDEPLOY, bla.DESERTER: DESERTER, bla.TRAITOR: TRAITOR}
"""The tactic card each guile action plays (besides the card it moves)."""
_HAND, _MINE, _THEIRS, _ENV = 0, 1, 1 + FLAGS, 1 + 2 * FLAGS
_MY_DISCARDS, _THEIR_DISCARDS, _KNOWN_TOP = 1 + 3 * FLAGS, 2 + 3 * FLAGS, 3 + 3 * FLAGS
assert BL_PLACES[_MY_DISCARDS] == "my-discards" and BL_PLACES[_KNOWN_TOP] == "known-on-deck"
assert dict(battleline_pieces())["phase"] == (len(BL_PHASES),)


def _bl_place(state: BattleLineState, card: int, viewer: int) -> int:
    """Where ``viewer`` sees ``card`` (an index of :data:`BL_PLACES`), or -1: unseen."""
    if card in state.hands[viewer]:
        return _HAND
    for f, flag in enumerate(state.flags):
        for side in (0, 1):
            for placed in flag.sides[side]:
                if placed.card == card:
                    return (_MINE if side == viewer else _THEIRS) + f
        for placed in flag.environment:
            if placed.card == card:
                return _ENV + f
    for side in (0, 1):
        if card in state.discards[side]:
            return _MY_DISCARDS if side == viewer else _THEIR_DISCARDS
    for deck in state.known_top:
        for c, who in deck:
            if c == card and who == viewer:
                return _KNOWN_TOP
    return -1


def _bl_places(state: BattleLineState, viewer: int) -> list[int]:
    """Every card's place as ``viewer`` sees it (:func:`_bl_place`), in one pass."""
    places = [-1] * BL_CARDS
    for card in state.hands[viewer]:
        places[card] = _HAND
    for f, flag in enumerate(state.flags):
        for side in (0, 1):
            for placed in flag.sides[side]:
                places[placed.card] = (_MINE if side == viewer else _THEIRS) + f
        for placed in flag.environment:
            places[placed.card] = _ENV + f
    for side in (0, 1):
        for card in state.discards[side]:
            places[card] = _MY_DISCARDS if side == viewer else _THEIR_DISCARDS
    for deck in state.known_top:
        for card, who in deck:
            if who == viewer:
                places[card] = _KNOWN_TOP
    return places


def make_tracker(state: GameState[Any], codec: Codec) -> Tracker:
    """The tracker of a game's state: incremental for Battle Line, else from scratch."""
    if isinstance(state, BattleLineState):
        return BattleLineTracker(state, codec)
    return Tracker(state, codec)
