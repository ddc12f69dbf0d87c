"""Regenerate the BattlePlan examples: a recorded greedy-vs-greedy game and positions for
each question (run ``python examples/battleplan/generate.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from battlejudge.engines.battleplan.game import GAME
from battlejudge.engines.battleplan.position import position_of
from battlejudge.engines.battleplan.state import BATTLE, BattlePlanState
from battlejudge.engines.records import GameRecord, replay
from battlejudge.engines.runner import play_game

HERE = Path(__file__).resolve().parent
SEED = 3


def piece(sq: str | None, hidden: int = 0, **kw: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "square": sq,
        "shield": False,
        "carrier": False,
        "revealed": [],
        "hidden": hidden,
        "cards": None,
        "buff": None,
    }
    d.update(kw)
    return d


def position(to_move: str, p1: list[dict[str, Any]], p2: list[dict[str, Any]]) -> dict[str, Any]:
    kinds = ["rook", "horse", "bishop"]
    return {
        "game": "battleplan",
        "to_move": to_move,
        "token": None,
        "pieces": {
            "p1": dict(zip(kinds, p1, strict=True)),
            "p2": dict(zip(kinds, p2, strict=True)),
        },
    }


HOME2 = [piece("h8"), piece("g8")]
POSITIONS = {
    # p2's rook stands next to p1's rook with one face-down card: it can attack.
    "kill-adjacent.json": position(
        "p2", [piece("d4"), piece("a1"), piece("h1")], [piece("d5", 1), *HOME2]
    ),
    # The same with p1's rook shielded and nothing left to reveal: one attack only breaks
    # the shield (seed page 3, DEFEND; docs/rulings.md) -> impossible.
    "kill-shielded.json": position(
        "p2", [piece("d4", shield=True), piece("a1"), piece("h1")], [piece("d5", 1), *HOME2]
    ),
    # A face-down buff too: Extra Attack strikes a second time.
    "kill-shielded-buff.json": position(
        "p2",
        [piece("d4", shield=True), piece("a1"), piece("h1")],
        [piece("d5", 1, buff="hidden"), *HOME2],
    ),
    # p1's carrier two squares from h1 with two face-down cards: it can walk home.
    "score-two-steps.json": position(
        "p1",
        [piece("h3", 2, carrier=True), piece("a1"), piece("b1")],
        [piece("a8"), piece("b8"), piece("c8")],
    ),
    # Four squares away with two cards and no buff: it cannot.
    "score-too-far.json": position(
        "p1",
        [piece("h5", 2, carrier=True), piece("a1"), piece("b1")],
        [piece("a8"), piece("b8"), piece("c8")],
    ),
    # No carrier yet: the horse must reach row 8, then come all the way back.
    "score-claim-first.json": position(
        "p1", [piece("a1"), piece("g7", 3), piece("b1")], [piece("a8"), piece("b8"), piece("c8", 1)]
    ),
    # A small scene for threats.
    "threats.json": position(
        "p1",
        [piece("d4", 1, revealed=["move"]), piece("e2", 1), piece("b1")],
        [piece("d6", 1, buff="hidden"), piece("f4", 1), piece("h8")],
    ),
}


def main() -> None:
    bots = [GAME.make_bot("greedy", SEED), GAME.make_bot("greedy", SEED + 1)]
    _, rec = play_game(GAME, bots, SEED)
    (HERE / "greedy-vs-greedy.bpg").write_text(rec.dumps(), encoding="utf-8")
    for name, data in POSITIONS.items():
        (HERE / name).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    record = GameRecord.loads((HERE / "greedy-vs-greedy.bpg").read_text(encoding="utf-8"))
    # The start of the first battle: both players have just planned their stacks (every
    # card still face down), seen by p1, who knows his own cards (issue 17: `ask threats`
    # on it in at most 1 s).
    for step in range(len(record.moves)):
        state = replay(record, upto=step).state
        assert isinstance(state, BattlePlanState)
        if state.phase == BATTLE and state.round == 1 and not any(state.revealed):
            start = position_of(state, 0).to_json()
            (HERE / "start-of-battle.json").write_text(
                json.dumps(start, indent=1) + "\n", encoding="utf-8"
            )
            print(f"start-of-battle.json: after {step} actions")
            break
    # A position from the recorded game: the last battle turn start with few cards left.
    best = None
    for step in range(len(record.moves)):
        state = replay(record, upto=step).state
        assert isinstance(state, BattlePlanState)
        try:
            pos = position_of(state, None)
        except ValueError:
            continue
        if pos.hidden_total(0) + pos.hidden_total(1) <= 4 and state.round >= 3:
            best = (step, pos)
            break
    assert best is not None
    step, pos = best
    out = pos.to_json()
    (HERE / "from-game.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"from-game.json: after {step} actions")


if __name__ == "__main__":
    main()
