"""Force Duel for the generic commands (``selfplay``, ``tournament``, ``play``, ``replay``,
``show``): ``GAME``."""

from __future__ import annotations

from typing import Any

from battlejudge.engines.force_duel.bots import BOTS
from battlejudge.engines.force_duel.cards import HOUSE
from battlejudge.engines.force_duel.render import render
from battlejudge.engines.force_duel.state import (
    DEFAULT_UNITS,
    SEATS,
    ForceDuelState,
    new_game,
    parse_units,
)
from battlejudge.engines.game import GameState
from battlejudge.engines.games import GameInfo, Options


def make_game(options: Options) -> ForceDuelState:
    """A new game; options ``cards`` (``house`` or a card-set TOML path) and ``units``
    (1-24, default 5). :class:`InputError` names a bad value."""
    units = parse_units(options.get("units", str(DEFAULT_UNITS)))
    return new_game(options.get("cards", HOUSE) or HOUSE, units)


def _render(state: GameState[Any], viewer: int | None) -> Any:
    assert isinstance(state, ForceDuelState)
    return render(state, viewer)


HELP = """Type an action in record notation (or its short form):
  weapon bow        name your weapon (or just: bow)
  play Bow Bonus    put a strategy card down (or just: Bow Bonus)
  force 2           show Force card 2: use your first 2 battle cards (or just: 2)
Chance (shuffles, draws) is played for you. Strategy and Force cards are chosen in
secret: the other player's choice is shown only when both are down."""

GAME = GameInfo(
    name="force-duel",
    title="Force Duel",
    suffix=".fdg",
    seats=SEATS,
    new_game=make_game,
    deserialize=ForceDuelState.deserialize,
    bots=BOTS,
    render=_render,
    options={
        "cards": "card set: 'house' (default) or the path of a card-set TOML file",
        "units": f"units each player starts with, 1-24 (default {DEFAULT_UNITS})",
    },
    help=HELP,
)
