"""Battle Line for engines, bots and referees: the game, its state, actions, positions and
records, in one import (python-chess is the model)::

    >>> from battlejudge.engines import battleline as bl
    >>> state = bl.new_game()
    >>> state.is_legal(bl.Action.parse("claim 1"))
    False

Flags are numbered 1-9 in Python as in the notation (``Action.flag``, ``Action.source``,
``ClaimRecord.flag``, ``flags_held()``, the flag arguments of ``claim_question``,
``claimable`` and ``judge_claim``); only ``state.flags`` is a plain list, so flag ``n`` is
``state.flags[n - 1]`` (or ``state.flag(n)``).

The names are loaded when first used, so ``import battlejudge.engines.battleline`` costs
nothing until then (the command line's start-up stays small).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from battlejudge.engines.battleline.actions import Action
    from battlejudge.engines.battleline.cards import card_name, parse_card
    from battlejudge.engines.battleline.config import RulesConfig
    from battlejudge.engines.battleline.game import GAME, NINE_CIRCLES
    from battlejudge.engines.battleline.match import Match
    from battlejudge.engines.battleline.position import (
        PositionFile,
        claim_question,
        from_state,
        load_position,
        read_state,
        to_state,
    )
    from battlejudge.engines.battleline.record import (
        GameRecord,
        RecordError,
        record_from_state,
        replay,
    )
    from battlejudge.engines.battleline.state import (
        END_REASONS,
        FLAGS,
        NORTH,
        PLAYERS,
        SOUTH,
        BattleLineState,
        ClaimRecord,
        Outcome,
        new_game,
    )
    from battlejudge.engines.game import IllegalActionError

_WHERE = {
    "Action": "actions",
    "card_name": "cards",
    "parse_card": "cards",
    "RulesConfig": "config",
    "GAME": "game",
    "NINE_CIRCLES": "game",
    "Match": "match",
    "PositionFile": "position",
    "claim_question": "position",
    "from_state": "position",
    "load_position": "position",
    "read_state": "position",
    "to_state": "position",
    "GameRecord": "record",
    "RecordError": "record",
    "record_from_state": "record",
    "replay": "record",
    "END_REASONS": "state",
    "FLAGS": "state",
    "NORTH": "state",
    "PLAYERS": "state",
    "SOUTH": "state",
    "BattleLineState": "state",
    "ClaimRecord": "state",
    "Outcome": "state",
    "new_game": "state",
    "IllegalActionError": "battlejudge.engines.game",
}

__all__ = [
    "END_REASONS",
    "FLAGS",
    "GAME",
    "NINE_CIRCLES",
    "NORTH",
    "PLAYERS",
    "SOUTH",
    "Action",
    "BattleLineState",
    "ClaimRecord",
    "GameRecord",
    "IllegalActionError",
    "Match",
    "Outcome",
    "PositionFile",
    "RecordError",
    "RulesConfig",
    "card_name",
    "claim_question",
    "from_state",
    "load_position",
    "new_game",
    "parse_card",
    "read_state",
    "record_from_state",
    "replay",
    "to_state",
]


def __getattr__(name: str) -> Any:
    """Load an exported name from its module on first use (PEP 562)."""
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(where if "." in where else f"{__name__}.{where}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
