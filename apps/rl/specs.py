"""What the OpenSpiel and PettingZoo adapters need to know of each game, and a
:class:`Table`: an engine state plus what each player has been told so far.

The adapters wrap the engines' states (:mod:`battlejudge.engines.games`) and never play
a rule themselves: legal actions, chance outcomes, returns and information come from
the engine; this module only names the games, their parameters and their action codecs.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from battlejudge.apps.rl.encoding import (
    Codec,
    IdentityCodec,
    battleline_codec,
    lines_of_battle_codec,
)
from battlejudge.apps.rl.infostate import Tracker, line_code, make_tracker
from battlejudge.apps.rl.observations import Tensor
from battlejudge.engines.battleline.bots.observation import observe
from battlejudge.engines.battleline.state import BattleLineState
from battlejudge.engines.battleplan.board import CAPS, OFF
from battlejudge.engines.battleplan.state import BattlePlanState
from battlejudge.engines.force_duel.cards import MAX_FORCE
from battlejudge.engines.force_duel.state import ForceDuelState
from battlejudge.engines.game import CHANCE, GameState
from battlejudge.engines.games import Setup, game_names, get_game

Params = Mapping[str, str | int]


@dataclass(frozen=True)
class RLGame:
    """One game as the toolkits see it."""

    short_name: str
    """OpenSpiel's name (``python_battleline``); PettingZoo's environment is named
    after it without the prefix."""
    long_name: str
    registry: str
    """The name in the games' registry (:func:`battlejudge.engines.games.get_game`)."""
    parameters: Params
    """Each option of the registry entry, as an OpenSpiel parameter whose default is
    the entry's (:func:`registry_defaults`)."""
    codec: Callable[[GameState[Any]], Codec]
    """The action codec of a new game (it may depend on its options)."""

    def options(self, params: Params | None = None) -> dict[str, str]:
        """The registry options of these parameters (over the defaults); an unknown
        parameter is a :class:`~battlejudge.solver.errors.InputError` of the registry."""
        merged = {**self.parameters, **(params or {})}
        return {key: option_text(value) for key, value in merged.items()}

    def new_state(self, params: Params | None = None) -> GameState[Any]:
        """A new engine game with these parameters (the registry's checks apply), set up
        without claim certificates (:data:`QUIET`)."""
        return get_game(self.registry).start(self.options(params), QUIET)


QUIET = Setup(certify=False)
"""How the toolkits' games are set up: Battle Line's claims are decided exactly (the
solver's fast decider lists the legal ones) but carry no SAT certificate, which took a
quarter of a random game's time."""


def option_text(value: str | int | bool) -> str:
    """A parameter's value as the registry's option text (``True``: ``true``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def parameter_value(text: str) -> str | int | bool:
    """An option's text as an OpenSpiel parameter: ``true``/``false`` a bool, digits an
    int, anything else the text (OpenSpiel reads ``true`` in a game string as a bool,
    so a string parameter could not round-trip through ``serialize_game_and_state``)."""
    if text in ("true", "false"):
        return text == "true"
    if text.isdigit():
        return int(text)
    return text


def _battleline_settings(state: GameState[Any]) -> dict[str, str]:
    from battlejudge.engines.battleline.record import is_troops_only

    assert isinstance(state, BattleLineState)
    c = state.config
    return {
        "theme": c.theme,
        "claim_timing": c.claim_timing,
        "environment_removable": option_text(c.environment_removable),
        "stalemate": c.stalemate,
        "deck": "troops" if is_troops_only(state) else "full",
    }


def _battleplan_settings(state: GameState[Any]) -> dict[str, str]:
    assert isinstance(state, BattlePlanState)
    return {"rounds": str(state.rounds), "friendly_fire": state.friendly_fire}


def _lines_settings(state: GameState[Any]) -> dict[str, str]:
    from battlejudge.engines.lines_of_battle.state import LinesOfBattleState

    assert isinstance(state, LinesOfBattleState)
    return {"variant": state.variant, "turns": str(state.turn_limit)}


def _force_duel_settings(state: GameState[Any]) -> dict[str, str]:
    assert isinstance(state, ForceDuelState)
    return {"cards": state.cards, "units": str(state.units)}


def _battleplan_codec(state: GameState[Any]) -> Codec:
    from battlejudge.engines.battleplan import actions

    # player actions end below the first chance outcome (the token), chance at the dice
    return IdentityCodec(actions.TOKEN, actions.DIE + 7)


def _force_duel_codec(state: GameState[Any]) -> Codec:
    from battlejudge.engines.force_duel import state as fd

    assert isinstance(state, fd.ForceDuelState)
    return IdentityCodec(fd.PLAY_BASE + len(state.book.strategy), fd.DECK_BASE + state.book.kinds)


def _lines_codec(state: GameState[Any]) -> Codec:
    from battlejudge.engines.lines_of_battle.state import LinesOfBattleState

    assert isinstance(state, LinesOfBattleState)
    return lines_of_battle_codec(state.board.size)


def _battleline_codec(state: GameState[Any]) -> Codec:
    return battleline_codec()


@dataclass(frozen=True)
class _Adapter:
    """What the toolkits need of a registered game beyond the registry: OpenSpiel's long
    name, the action codec, and how to read a state's options back (the defaults are
    the options of the registry's new game: :func:`registry_defaults`)."""

    long_name: str
    codec: Callable[[GameState[Any]], Codec]
    settings: Callable[[GameState[Any]], dict[str, str]]
    """The registry option values a state plays under."""


_ADAPTERS: dict[str, _Adapter] = {
    "battleline": _Adapter(
        "Battle Line (battlejudge; theme=nine-circles for Nine Circles)",
        _battleline_codec,
        _battleline_settings,
    ),
    "battleplan": _Adapter("BattlePlan (battlejudge)", _battleplan_codec, _battleplan_settings),
    "lines-of-battle": _Adapter("Lines of Battle (battlejudge)", _lines_codec, _lines_settings),
    "force-duel": _Adapter("Force Duel (battlejudge)", _force_duel_codec, _force_duel_settings),
}
"""The adapter of each game of the registry (:mod:`battlejudge.engines.games`) by its
registry name; a registered game that starts another's games under other options (Nine
Circles: Battle Line's theme) uses that game's adapter (:func:`base_game`)."""


def registry_defaults(registry: str) -> dict[str, str | int | bool]:
    """Every option of the registry entry ``registry`` (its ``options``, in order) with
    the value the entry's new game plays under when given none: the engine's defaults,
    read back from ``get_game(registry).start()`` (never a second copy here)."""
    game = get_game(registry)
    settings = _ADAPTERS[registry].settings(game.start())
    missing = [key for key in game.options if key not in settings]
    if missing:
        raise KeyError(f"the {registry} adapter cannot read the option {missing[0]!r} back")
    return {key: parameter_value(settings[key]) for key in game.options}


def settings_of(state: GameState[Any]) -> dict[str, str]:
    """The registry options an engine state plays under (read back from the state)."""
    return _ADAPTERS[state.facts.name].settings(state)


def codec_of(state: GameState[Any]) -> Codec:
    """The action codec of an engine state's game (by its ``facts.name``)."""
    return _ADAPTERS[state.facts.name].codec(state)


def toolkit_name(registry: str) -> str:
    """A registry name as the toolkits spell names (``lines-of-battle``:
    ``lines_of_battle``)."""
    return registry.replace("-", "_")


def base_game(registry: str) -> tuple[str, dict[str, str]]:
    """The registry game whose adapter ``registry`` uses, and the options it adds: itself
    and none, or for a theme (a game started by another game's ``new_game`` under its own
    default options) that game and those options. :class:`KeyError` for a registered
    game with no adapter."""
    if registry in _ADAPTERS:
        return registry, {}
    new_game = get_game(registry).new_game
    for name in _ADAPTERS:
        if get_game(name).new_game is new_game:
            return name, dict(get_game(registry).defaults)
    raise KeyError(f"the game {registry!r} has no OpenSpiel or PettingZoo adapter")


GAMES: tuple[RLGame, ...] = tuple(
    RLGame(f"python_{toolkit_name(name)}", a.long_name, name, registry_defaults(name), a.codec)
    for name in game_names()
    if (a := _ADAPTERS.get(name)) is not None
)
"""The games registered with OpenSpiel: the registry's games in its order (Battle Line
first), themes folded into their game's parameters."""


class Table:
    """An engine state and, per player, the lines he has been told of every action so
    far (``public_action_string``): with the engine's information-state string (the
    table as he sees it now) they make a perfect-recall information state. It keeps
    each player's tensors up to date (:mod:`.infostate`) and the dense action ids of
    the game's codec (:mod:`.encoding`). Lines ``told`` before the table was made (a
    table built mid-game) enter the tensors' ``told`` log as zeros: their actions, and
    so their codes, are not known here."""

    def __init__(
        self,
        state: GameState[Any],
        told: tuple[list[str], ...] | None = None,
        codec: Codec | None = None,
    ) -> None:
        self.state = state
        self.codec: Codec = codec if codec is not None else codec_of(state)
        players = state.facts.players
        self.told: tuple[list[str], ...] = told or tuple([] for _ in range(players))
        self.tracker: Tracker = make_tracker(state, self.codec)
        for player, lines in enumerate(self.told):
            for _ in lines:  # a table built mid-game: its history's codes are unknown
                self.tracker.told(player, 0)
        self._legal_ids: list[int] | None = None

    def apply(self, action: Any) -> None:
        """Apply ``action`` (checked by the engine: an illegal one raises its
        :class:`~battlejudge.engines.game.IllegalActionError`)."""
        self._apply(action, True)

    def _apply(self, action: Any, checked: bool) -> None:
        state = self.state
        chance = state.current_player() == CHANCE
        lines = [state.public_action_string(action, p) for p in range(len(self.told))]
        told = any(line is not None for line in lines)
        full = state.action_to_string(action) if told else ""
        before = self.tracker.before(state, action)
        if checked:
            state.apply_action(action)
        else:
            state.apply_action_unchecked(action)
        self._legal_ids = None
        if told:
            code = self.codec.encode(action, chance)
            for player, line in enumerate(lines):
                if line is not None:
                    self.told[player].append(line)
                    self.tracker.told(player, line_code(line, full, code, chance, self.codec))
        self.tracker.after(state, before)

    def legal_ids(self) -> list[int]:
        """The sorted dense ids of the current player's legal actions; [] at a chance
        node or once the game is over. A fresh list."""
        if self._legal_ids is None:
            if self.state.current_player() < 0:
                self._legal_ids = []
            else:
                encode = self.codec.encode
                self._legal_ids = sorted(encode(a, False) for a in self.state.legal_actions())
        return list(self._legal_ids)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """At a chance node, each outcome's dense id with its probability (the engine's
        exact fraction as a float), sorted by id; [] elsewhere."""
        state = self.state
        encode = self.codec.encode
        uniform = state.uniform_chance()
        if uniform is not None:
            p = 1.0 / len(uniform)  # float(Fraction(1, n)): both round 1/n correctly
            return sorted((encode(a, True), p) for a in uniform)
        return sorted((encode(a, True), float(p)) for a, p in state.chance_outcomes())

    def apply_chance_id(self, code: int) -> None:
        """Apply the chance outcome of dense id ``code``; :class:`ValueError` naming the
        id when it is not an outcome now. Checked against the engine's outcomes (its
        uniform list when it has one: no fractions built)."""
        state = self.state
        if state.current_player() != CHANCE:
            raise ValueError(f"chance outcome {code} given where a player decides")
        action = self.codec.decode(code, True)
        uniform = state.uniform_chance()
        outcomes = uniform if uniform is not None else [a for a, _ in state.chance_outcomes()]
        if action not in outcomes:
            raise ValueError(f"chance outcome {code} is not possible now")
        self._apply(action, False)

    def apply_id(self, code: int) -> None:
        """Apply the current player's action of dense id ``code``; :class:`ValueError`
        naming the id when it is not a legal action now."""
        if self._legal_ids is None:
            self.legal_ids()
        assert self._legal_ids is not None
        if code not in self._legal_ids:
            legal = self._legal_ids
            shown = ", ".join(map(str, legal[:8])) + (", ..." if len(legal) > 8 else "")
            raise ValueError(f"action id {code} is not legal now ({len(legal)} legal: {shown})")
        self._apply(self.codec.decode(code, False), False)

    def observation_tensor(self, player: int) -> Tensor:
        """``player``'s observation tensor (:func:`.infostate.observation_pieces`): a
        fresh float32 array the caller may keep."""
        return self.tracker.observation(self.state, player)

    def information_state_tensor(self, player: int) -> Tensor:
        """``player``'s information-state tensor (perfect recall,
        :func:`.infostate.information_state_pieces`): a fresh float32 array."""
        return self.tracker.information(self.state, player)

    def information_state_string(self, player: int) -> str:
        """The engine's view of ``player`` and every action as he was told it."""
        return "\n".join([self.state.information_state_string(player), "--", *self.told[player]])

    def observation_string(self, player: int) -> str:
        """The engine's view of ``player`` now (no recall of earlier actions)."""
        return self.state.information_state_string(player)

    def clone(self) -> Table:
        """An independent copy (the engine's own :meth:`~GameState.clone`)."""
        twin = Table.__new__(Table)
        twin.state = self.state.clone()
        twin.codec = self.codec
        twin.told = tuple(list(t) for t in self.told)
        twin.tracker = self.tracker.clone()
        twin._legal_ids = self._legal_ids
        return twin

    def __deepcopy__(self, memo: dict[int, Any]) -> Table:
        return self.clone()

    def __getstate__(self) -> dict[str, Any]:
        # pickled (OpenSpiel serializes a Python state as a pickle of its attributes):
        # the engine state as its own text, the lines told, the tensors' arrays
        return {
            "game": self.state.facts.name,
            "state": self.state.serialize(),
            "told": [list(t) for t in self.told],
            "tracker": self.tracker,
        }

    def __setstate__(self, data: dict[str, Any]) -> None:
        try:
            game = get_game(data["game"])
            state = game.deserialize(data["state"])
            if game.prepare is not None:
                game.prepare(state, QUIET)
            told = tuple(list(map(str, t)) for t in data["told"])
            tracker = data["tracker"]
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"not a serialized battlejudge table: {e!r}") from e
        if not isinstance(tracker, Tracker) or len(told) != state.facts.players:
            raise ValueError("not a serialized battlejudge table: bad tensors or lines")
        self.state = state
        self.codec = codec_of(state)
        self.told = told
        self.tracker = tracker
        self._legal_ids = None

    def resample(self, player: int, rng: random.Random) -> Table:
        """A copy in which what ``player`` cannot see is dealt again at random,
        consistently with what he sees (a determinization, for information-set search).
        Everyone's observation tensors follow the new deal; ``player``'s tensors do not
        change.

        Battle Line: the engine deals the hidden cards (``observe(...).determinize`` then
        ``fix_hidden``). Force Duel: :func:`resample_force_duel`; BattlePlan:
        :func:`resample_battleplan`. A game that hides nothing (Lines of Battle) has one
        world for every player: the copy. A chance node raises :class:`ValueError`."""
        state = self.state
        if state.current_player() == CHANCE:
            raise ValueError("resample at a decision node, not at chance")
        twin = self.clone()
        if isinstance(twin.state, BattleLineState):
            deal = observe(state, player).determinize(rng)  # type: ignore[arg-type]
            twin.state.fix_hidden({1 - player: deal.opp_hand}, deal.decks)
        elif isinstance(twin.state, ForceDuelState):
            resample_force_duel(twin.state, player, rng)
        elif isinstance(twin.state, BattlePlanState):
            resample_battleplan(twin.state, player, rng)
        elif not state.facts.hidden_information:
            pass  # nothing hidden: the only world this player can be in is this one
        else:
            raise NotImplementedError(
                f"resampling hidden information is not implemented for {state.facts.name}"
            )
        twin._legal_ids = None
        for p in range(len(twin.told)):
            twin.tracker.rebuild(twin.state, p)
        return twin


def resample_force_duel(state: ForceDuelState, player: int, rng: random.Random) -> None:
    """Deal again, in place, what ``player`` cannot see in Force Duel (as
    :meth:`ForceDuelState.information_state_string` hides it), uniformly among the
    arrangements consistent with what he sees:

    * the opponent's strategy hand and his strategy card put down while the player's is
      not, from the strategy cards nobody has seen (the deck and those cards);
    * the opponent's Force card once chosen, among the choices he had;
    * the order of the opponent's battle deck (its cards are public: the set's deck minus
      the cards out of the game). Rules, unit cards: units among the top three are laid
      out at the battle's start, so the top three places hold battle cards.
    """
    other = 1 - player
    hidden_commit = state.strategy[other] is not None and state.strategy[player] is None
    unseen = [s for s, n in enumerate(state.strat_deck) for _ in range(n)]
    unseen += state.hands[other]
    if hidden_commit:
        unseen.append(state.strategy[other])  # type: ignore[arg-type]
    rng.shuffle(unseen)
    size = len(state.hands[other])
    state.hands[other] = sorted(unseen[:size])
    rest = unseen[size:]
    if hidden_commit:
        state.strategy[other] = rest.pop()
    state.strat_deck = _counts(rest, len(state.strat_deck))
    if state.forces[other] is not None:
        state.forces[other] = rng.choice(state.force_choices(other))
    cards = state.decks[other]
    battle = [k for k in cards if k < state.nb]
    units = [k for k in cards if k >= state.nb]
    rng.shuffle(battle)
    top = min(MAX_FORCE, len(cards))
    below = battle[top:] + units
    rng.shuffle(below)
    state.decks[other] = battle[:top] + below


def resample_battleplan(state: BattlePlanState, player: int, rng: random.Random) -> None:
    """Deal again, in place, what ``player`` cannot see in BattlePlan (as
    :meth:`BattlePlanState.information_state_string` hides it), uniformly among the
    arrangements consistent with what he sees:

    * the opponent's unrevealed stack cards, each stack keeping its length and its
      revealed cards, within the per-piece caps (seed, Plan step 3: at most 3 MOVE,
      2 ATTACK, 1 DEFEND);
    * the kinds of the opponent's assigned, unused buffs, his buff hand (its size is
      public) and the buff deck's composition (its size is public), from the buffs
      nobody has seen.
    """
    other = 1 - player
    for k in range(3):
        g = other * 3 + k
        shown = state.stacks[g][: state.revealed[g]]
        hidden = len(state.stacks[g]) - len(shown)
        used = [shown.count(c) for c in range(len(CAPS))]
        while True:  # rejection: uniform over the sequences within the caps
            cards = [rng.randrange(len(CAPS)) for _ in range(hidden)]
            if all(used[c] + cards.count(c) <= CAPS[c] for c in range(len(CAPS))):
                break
        state.stacks[g] = shown + cards
    holders = [g for g in range(other * 3, other * 3 + 3) if state.buff[g] != OFF]
    unseen = [b for b, n in enumerate(state.deck) for _ in range(n)]
    unseen += [b for b, n in enumerate(state.hand[other]) for _ in range(n)]
    unseen += [state.buff[g] for g in holders]
    rng.shuffle(unseen)
    for g in holders:
        state.buff[g] = unseen.pop()
    size = sum(state.hand[other])
    state.hand[other] = _counts(unseen[:size], len(state.deck))
    state.deck = _counts(unseen[size:], len(state.deck))


def _counts(items: list[int], kinds: int) -> list[int]:
    out = [0] * kinds
    for item in items:
        out[item] += 1
    return out
