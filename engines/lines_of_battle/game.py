"""Lines of Battle for the generic commands (``selfplay``, ``tournament``, ``play``,
``replay``, ``show``): its :class:`GameInfo`."""

from __future__ import annotations

from typing import Any

from battlejudge.engines.games import GameInfo, Options
from battlejudge.engines.lines_of_battle.bots import BOTS
from battlejudge.engines.lines_of_battle.render import render
from battlejudge.engines.lines_of_battle.state import (
    DEFAULT_TURNS,
    LinesOfBattleState,
    options_game,
)

HELP = """Type one action at a time (any case):
  deploy archer C2   choose a unit type and place it in your zone
  army               declare Army Movement (first action of the turn only)
  C2-C4              move the unit on C2 to C4 (one move per unit)
  face C4 E          re-face the unit on C4 (N, E, S, W; once per turn)
  swap C2 D2         formation swap of two adjacent, fresh friendly units
  combat             end movement; then attack:
  C4xC6              the unit on C4 attacks C6 (straight ahead, first unit in line)
  end                end your turn
  moves              list the legal actions; quit to stop."""


def _new(options: Options) -> LinesOfBattleState:
    return options_game(options)


def _render(state: Any, viewer: int | None) -> Any:
    return render(state, viewer)


GAME = GameInfo(
    name="lines-of-battle",
    title="Lines of Battle",
    suffix=".lbg",
    seats=("p1", "p2"),
    new_game=_new,
    deserialize=LinesOfBattleState.deserialize,
    bots=BOTS,
    render=_render,
    options={
        "variant": "standard or commander (each army has one Commander; losing it loses)",
        "turns": f"house rule: the game is a draw after this many turns (default {DEFAULT_TURNS})",
    },
    help=HELP,
)
