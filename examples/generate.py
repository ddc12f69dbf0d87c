"""Regenerate the example games and positions (a maintenance script).

``python -m battlejudge.examples.generate DIR`` writes ``games/every-tactic.blg`` (a
seeded game in which all ten tactics are played), ``games/unjustified-claim.blg`` (the
same game with a claim the solver refutes inserted) and ``positions/*.json`` (the
rulebook's flag examples as table positions, the claim at flag 1 for north).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Literal

from battlejudge import examples
from battlejudge.engines.battleline import cards
from battlejudge.engines.battleline.actions import (
    CLAIM,
    DESERTER,
    DRAW,
    PLAY,
    REDEPLOY,
    SCOUT,
    TACTICS_DECK,
    TRAITOR,
    Action,
)
from battlejudge.engines.battleline.cards import TACTIC_CARDS, parse_card
from battlejudge.engines.battleline.position import (
    EnvironmentCard,
    FlagState,
    PerPlayerCards,
    PerPlayerCount,
    PlacedCard,
    PositionFile,
    dumps,
)
from battlejudge.engines.battleline.record import record_from_state
from battlejudge.engines.battleline.state import BattleLineState, new_game
from battlejudge.engines.game import CHANCE, sample_chance

GUILE_CARD = {
    SCOUT: cards.SCOUT,
    REDEPLOY: cards.REDEPLOY,
    DESERTER: cards.DESERTER,
    TRAITOR: cards.TRAITOR,
}
"""The guile card each guile action plays."""


def tactic_loving_game(seed: int) -> BattleLineState:
    """A random game that prefers tactics (so every tactic tends to be played)."""
    rng = random.Random(seed)
    s = new_game()
    while not s.is_terminal():
        if s.current_player() == CHANCE:
            s.apply_action(sample_chance(s, rng))
            continue
        legal = s.legal_actions()
        claims = [a for a in legal if a.kind == CLAIM]
        tactics = [
            a for a in legal if a.kind in GUILE_CARD or (a.kind == PLAY and a.card in TACTIC_CARDS)
        ]
        draws = [a for a in legal if a.kind == DRAW and a.deck == TACTICS_DECK]
        if claims:
            a = rng.choice(claims)
        elif tactics and rng.random() < 0.6:
            a = rng.choice(tactics)
        elif draws and rng.random() < 0.6:
            a = draws[0]
        else:
            a = rng.choice(legal)
        s.apply_action(a)
    return s


def played_tactics(s: BattleLineState) -> set[int]:
    out = set()
    for a in s.history:
        if a.kind == PLAY and a.card in TACTIC_CARDS:
            out.add(a.card)
        elif a.kind in GUILE_CARD:
            out.add(GUILE_CARD[a.kind])
    return out


def every_tactic_game() -> tuple[int, BattleLineState]:
    for seed in range(10_000):
        s = tactic_loving_game(seed)
        if played_tactics(s) == set(TACTIC_CARDS):
            return seed, s
    raise RuntimeError("no seed plays every tactic")


def unjustified(text: str) -> str:
    """Insert a claim the solver refutes into a record: the first turn where the mover
    has a complete formation at an unclaimed flag that he cannot prove."""
    from battlejudge.engines.battleline.record import GameRecord, replay

    rec = GameRecord.loads(text)
    for k, turn in enumerate(rec.turns):
        state = replay(rec, upto_turn=turn.number).state
        p = state.to_move
        for i, f in enumerate(state.flags):
            if f.claimed_by < 0 and len(f.sides[p]) == f.size and not state.claimable(i + 1, p):
                rec.turns[k].tokens.insert(0, Action(CLAIM, flag=i + 1).notation())
                rec.tags["Event"] = "Unjustified claim (replay must catch it)"
                rec.tags["Result"] = "*"
                rec.turns = rec.turns[: k + 1]
                return rec.dumps()
    raise RuntimeError("no turn offers an unprovable claim")


def rulebook_position(case: dict[str, object]) -> PositionFile:
    """Flag 1 holds the case (north = mine, south = theirs); the seen cards stand at the
    other flags; turn stamps give who completed first."""
    q = case["question"]
    assert isinstance(q, dict)
    flags = [FlagState() for _ in range(9)]
    turn = 1
    mine_first = q.get("completed_first") != "theirs"
    order = ("mine", "theirs") if mine_first else ("theirs", "mine")
    stamps: dict[str, list[int]] = {}
    for key in order:
        stamps[key] = list(range(turn, turn + len(q[key])))
        turn += len(q[key])
    flags[0].north = [
        PlacedCard(card=c, turn=t) for c, t in zip(q["mine"], stamps["mine"], strict=True)
    ]
    flags[0].south = [
        PlacedCard(card=c, turn=t) for c, t in zip(q["theirs"], stamps["theirs"], strict=True)
    ]
    tactics = {
        "north": sum(parse_card(c) in TACTIC_CARDS for c in q["mine"]),
        "south": sum(parse_card(c) in TACTIC_CARDS for c in q["theirs"]),
    }
    for env, on in (("mud", q.get("mud")), ("fog", q.get("fog"))):
        if on:
            owner: Literal["north", "south"] = (
                "north" if tactics["north"] <= tactics["south"] else "south"
            )
            flags[0].environment.append(EnvironmentCard(card=env, player=owner, turn=turn))
            tactics[owner] += 1
            turn += 1
    for k, card in enumerate(q["seen"]):
        flag = flags[1 + (k // 6) % 8]
        side = flag.south if (k // 3) % 2 == 0 else flag.north
        side.append(PlacedCard(card=card, turn=turn))
        turn += 1
    return PositionFile(
        turn=turn,
        to_move="north",
        flags=flags,
        discards=PerPlayerCards(),
        tactics_played=PerPlayerCount(north=tactics["north"], south=tactics["south"]),
    )


def main(out: Path) -> None:
    (out / "games").mkdir(parents=True, exist_ok=True)
    (out / "positions").mkdir(parents=True, exist_ok=True)
    seed, game = every_tactic_game()
    tags = {
        "Event": "Every tactic (seeded random game)",
        "Site": "battlejudge",
        "North": "tactic-loving random",
        "South": "tactic-loving random",
        "Seed": str(seed),
    }
    text = record_from_state(game, tags).dumps()
    (out / "games" / "every-tactic.blg").write_text(text)
    (out / "games" / "unjustified-claim.blg").write_text(unjustified(text))
    for case in examples.rulebook_cases():
        path = out / "positions" / f"{case['name']}.json"
        path.write_text(dumps(rulebook_position(case)))
    print(json.dumps({"seed": seed, "turns": game.turn}))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent)
