"""The games registered with OpenSpiel (``pyspiel.register_game``), as Python games.

:func:`register` adds ``python_battleline`` (parameter ``theme=nine-circles`` for Nine
Circles, and Battle Line's other options), ``python_battleplan``,
``python_lines_of_battle`` and ``python_force_duel``; ``pyspiel.load_game`` then loads
them like OpenSpiel's own games. Every state wraps an engine state
(:class:`~battlejudge.apps.rl.specs.Table`): the engine decides legality, chance,
returns and what each player may see; actions are numbered by :mod:`.encoding`.

Game types: sequential, explicit chance, zero-sum (every game scores 1/-1 or 0/0),
terminal rewards; imperfect information except Lines of Battle (everything public).
Information states are the engine's view plus every action as the player was told it
(perfect recall), as a string and a tensor (:mod:`.infostate`); observations are the
engine's view now, with a tensor (:mod:`.observations`). Parameters are the registry's
options with the engine's defaults. States serialize through OpenSpiel (the table
pickles as the engine's ``serialize()`` text). The states of the games with hidden
information can be resampled from an information state (``resample_from_infostate``),
which OpenSpiel's information-set MCTS needs.

This module imports ``pyspiel`` (the ``rl`` extra).
"""

from __future__ import annotations

import logging
import random
from typing import Any

import numpy as np
import pyspiel

from battlejudge.apps.rl.encoding import Codec
from battlejudge.apps.rl.infostate import information_state_pieces, observation_pieces
from battlejudge.apps.rl.observations import Pieces, Tensor
from battlejudge.apps.rl.specs import GAMES, RLGame, Table, settings_of
from battlejudge.engines.game import CHANCE, TERMINAL

log = logging.getLogger(__name__)

_REGISTERED: set[str] = set()


def _game_type(spec: RLGame, hidden: bool) -> Any:
    info = pyspiel.GameType.Information
    return pyspiel.GameType(
        short_name=spec.short_name,
        long_name=spec.long_name,
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=info.IMPERFECT_INFORMATION if hidden else info.PERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=dict(spec.parameters),
    )


class BattlejudgeGame(pyspiel.Game):  # type: ignore[misc]
    """One of the games for OpenSpiel; its parameters are the registry entry's options."""

    def __init__(self, spec: RLGame, params: dict[str, Any] | None = None) -> None:
        self.spec = spec
        self.params = {**spec.parameters, **(params or {})}
        first = spec.new_state(self.params)
        self.codec: Codec = spec.codec(first)
        self.pieces = observation_pieces(first)
        self._first = Table(first)
        self.info_pieces = information_state_pieces(first)
        facts = first.facts
        info = pyspiel.GameInfo(
            num_distinct_actions=self.codec.num_actions,
            max_chance_outcomes=self.codec.num_chance,
            num_players=facts.players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=facts.max_length,
        )
        super().__init__(_game_type(spec, facts.hidden_information), info, self.params)

    def new_initial_state(self) -> BattlejudgeState:
        """A new game at its first chance node (a copy of one made once: OpenSpiel
        also makes a new state for every clone, then overwrites its table)."""
        return BattlejudgeState(self, self._first.clone())

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> BattlejudgeObserver:
        """OpenSpiel's observer: perfect recall gives information states, otherwise
        observations (strings and tensors both)."""
        recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        return BattlejudgeObserver(self.info_pieces if recall else self.pieces, recall)


class BattlejudgeState(pyspiel.State):  # type: ignore[misc]
    """An OpenSpiel state wrapping an engine state (:class:`Table`).

    OpenSpiel serializes a Python state as its history and a pickle of its attributes:
    here only the table, pickled as the engine's own ``serialize()`` text, the lines
    told and the tensors (:meth:`Table.__getstate__`). A string that is not such a
    table, or a table of another game or other options, raises :class:`ValueError`
    (OpenSpiel unpickles the string: load only strings you trust, as with pickle)."""

    def __init__(self, game: BattlejudgeGame, table: Table) -> None:
        super().__init__(game)
        self.table = table

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "table" and "table" in self.__dict__:
            _check_same_game(self.__dict__["table"], value)
        super().__setattr__(name, value)

    @property
    def codec(self) -> Codec:
        """The game's action codec."""
        return self.table.codec

    def current_player(self) -> int:
        """The player to act, or OpenSpiel's CHANCE or TERMINAL."""
        p = self.table.state.current_player()
        if p == CHANCE:
            return int(pyspiel.PlayerId.CHANCE)
        if p == TERMINAL:
            return int(pyspiel.PlayerId.TERMINAL)
        return p

    def _legal_actions(self, player: int) -> list[int]:
        return self.table.legal_ids()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """Each chance outcome's id with its probability (the engine's exact fraction)."""
        return self.table.chance_outcomes()

    def _apply_action(self, action: int) -> None:
        if self.table.state.current_player() == CHANCE:
            self.table.apply_chance_id(action)
        else:
            self.table.apply_id(action)

    def _action_to_string(self, player: int, action: int) -> str:
        try:
            engine_action = self.codec.decode(action, player == pyspiel.PlayerId.CHANCE)
            return self.table.state.action_to_string(engine_action)
        except (ValueError, IndexError, KeyError):
            return f"action {action}"

    def information_state_tensor(self, player: int | None = None) -> Tensor:
        """``player``'s information-state tensor (default: the player to move) as a
        float32 numpy array, the table's own (:meth:`Table.information_state_tensor`).
        OpenSpiel's C++ side returns a list of floats; a list of this tensor's ten
        thousand floats alone takes 0.2 ms to build, so Python callers get the array
        (the C++ algorithms still read it through the observer)."""
        return self.table.information_state_tensor(self._seat(player))

    def observation_tensor(self, player: int | None = None) -> Tensor:
        """``player``'s observation tensor (default: the player to move) as a float32
        numpy array (see :meth:`information_state_tensor`)."""
        return self.table.observation_tensor(self._seat(player))

    def _seat(self, player: int | None) -> int:
        seat = self.table.state.current_player() if player is None else int(player)
        if not 0 <= seat < len(self.table.told):
            raise ValueError(f"player {player!r} is not a seat of this game (0 or 1)")
        return seat

    def is_terminal(self) -> bool:
        """Whether the game is over."""
        return self.table.state.is_terminal()

    def returns(self) -> list[float]:
        """Each player's score (1 win, -1 loss, 0 draw or not over)."""
        return list(self.table.state.returns())

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> Any:
        """A state with this information state of ``player_id`` whose hidden cards are
        dealt again at random (:meth:`Table.resample`; in Lines of Battle, which hides
        nothing, a copy of this state)."""
        seed = int(float(probability_sampler()) * 2**53) if callable(probability_sampler) else None
        twin = self.clone()
        twin.table = self.table.resample(player_id, random.Random(seed))
        return twin

    def __str__(self) -> str:
        return self.table.state.serialize()


class BattlejudgeObserver:
    """OpenSpiel's PyObserver: a string and a tensor of what a player sees (perfect
    recall: his information state)."""

    def __init__(self, pieces: Pieces, recall: bool) -> None:
        self.recall = recall
        size = sum(int(np.prod(shape)) for _, shape in pieces)
        self.tensor = np.zeros(size, np.float32)
        self.dict: dict[str, Any] = {}
        start = 0
        for name, shape in pieces:
            n = int(np.prod(shape))
            self.dict[name] = self.tensor[start : start + n].reshape(shape)
            start += n

    def set_from(self, state: BattlejudgeState, player: int) -> None:
        """Fill :attr:`tensor` with ``player``'s view of ``state``."""
        table = state.table
        if self.recall:
            self.tensor[:] = table.information_state_tensor(player)
        else:
            self.tensor[:] = table.observation_tensor(player)

    def string_from(self, state: BattlejudgeState, player: int) -> str:
        """``player``'s information state (perfect recall) or observation."""
        if self.recall:
            return state.table.information_state_string(player)
        return state.table.observation_string(player)


def _check_same_game(mine: Table, theirs: Any) -> None:
    """:class:`ValueError` unless ``theirs`` is a table of the same game and options as
    ``mine`` (a deserialized state replacing a new one)."""
    if not isinstance(theirs, Table):
        raise ValueError(f"a serialized state holds a {type(theirs).__name__}, not a table")
    want = (mine.state.facts.name, settings_of(mine.state))
    got = (theirs.state.facts.name, settings_of(theirs.state))
    if got != want:
        raise ValueError(f"a serialized state of {got} cannot load into a game of {want}")


def _game_class(spec: RLGame) -> type[BattlejudgeGame]:
    # OpenSpiel keeps the factory until the interpreter is gone: a class is safe there,
    # while a plain closure makes Python abort at exit (its last reference is dropped
    # without the GIL).
    class Game(BattlejudgeGame):
        def __init__(self, params: dict[str, Any] | None = None) -> None:
            super().__init__(spec, params)

    Game.__name__ = Game.__qualname__ = "".join(
        word.capitalize() for word in spec.short_name.split("_")
    )
    return Game


def register() -> list[str]:
    """Register every game with OpenSpiel (once; later calls do nothing) and return
    their names."""
    for spec in GAMES:
        if spec.short_name in _REGISTERED:
            continue
        first = spec.new_state()
        pyspiel.register_game(_game_type(spec, first.facts.hidden_information), _game_class(spec))
        _REGISTERED.add(spec.short_name)
        log.debug("registered %s with OpenSpiel", spec.short_name)
    return [spec.short_name for spec in GAMES]
