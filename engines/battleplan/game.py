"""BattlePlan as the generic commands see it (``selfplay``, ``tournament``, ``play``,
``replay``, ``show``)."""

from __future__ import annotations

from typing import Any

from battlejudge.engines.battleplan.bots import GreedyBot, RandomBot
from battlejudge.engines.battleplan.render import render
from battlejudge.engines.battleplan.state import BattlePlanState, new_game
from battlejudge.engines.game import GameState
from battlejudge.engines.games import GameInfo, Options

HELP = """Type one action at a time ('moves' lists them), for example:
  place rook c1            setup: put a piece in your defensive zone
  assign rook 6            give a rolled value to a piece (its number of cards)
  card rook move           add the next card to a stack (move/attack/defend, or m/a/d)
  buff rook diagonal       assign a buff from your hand (extra-move, extra-attack,
                           extra-defend, diagonal)
  done                     your stacks are complete
  reveal rook              reveal the top card of a piece (r, h, b work too)
  buff before|after|later  when to use the piece's buff
  move c4 | move n         where a move (or defend) goes; 'move none' if it cannot
  attack c5                the piece to attack (a friend too, by choice, when an enemy
                           is adjacent); 'attack none' when no enemy is adjacent
  pickup horse             which piece picks up the flag"""


def _new(options: Options) -> GameState[Any]:
    return new_game(dict(options))


def _render(state: GameState[Any], viewer: int | None) -> Any:
    assert isinstance(state, BattlePlanState)
    return render(state, viewer)


GAME = GameInfo(
    name="battleplan",
    title="BattlePlan",
    suffix=".bpg",
    seats=("p1", "p2"),
    new_game=_new,
    deserialize=BattlePlanState.deserialize,
    bots={"random": RandomBot, "greedy": GreedyBot},
    render=_render,
    options={
        "rounds": "house rule: the game is a draw after this many rounds (default 40)",
        "friendly_fire": "with-enemy (default: an attack with no adjacent enemy has no effect) "
        "or any (it may hit a friend then too)",
    },
    help=HELP,
)
