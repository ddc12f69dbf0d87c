"""Self-play: bots play whole games, every claim certified and logged, every game recorded.

Reproducible from the seed: game ``i`` of a run with seed ``S`` uses the seed
``game_seed(S, i)`` for its chance events and derives each bot's seed from it; the game
id is ``S-i``. The first bot sits north, the second south, and the first move
alternates between them from game to game.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Protocol

from battlejudge.engines.battleline.config import RulesConfig
from battlejudge.engines.battleline.record import record_from_state
from battlejudge.engines.battleline.state import NORTH, SOUTH, BattleLineState, ClaimLog, new_game
from battlejudge.engines.game import CHANCE, sample_chance


class Bot(Protocol):
    name: str

    def step(self, state: BattleLineState) -> Any: ...


BotFactory = Callable[[str, int], Bot]


def game_seed(seed: int, index: int) -> int:
    """The seed of game ``index`` of a run: stable, and distinct between games."""
    return seed * 1_000_003 + index


@dataclass(frozen=True)
class GameSummary:
    game_id: str
    seed: int
    north: str
    south: str
    winner: int  # 0 north, 1 south, 2 draw
    turns: int
    claims: int
    record: Path | None


def play_one(
    north: Bot,
    south: Bot,
    seed: int,
    *,
    config: RulesConfig | None = None,
    first: int = NORTH,
    log: ClaimLog | None = None,
    game_id: str | None = None,
) -> BattleLineState:
    """Play one game to the end; chance from ``seed``; every decided claim goes to ``log``."""
    state = new_game(config, first)
    state.log = log
    state.game_id = game_id
    rng = random.Random(seed)
    bots = (north, south)
    while not state.is_terminal():
        who = state.current_player()
        action = sample_chance(state, rng) if who == CHANCE else bots[who].step(state)
        state.apply_action(action)
    return state


def selfplay(
    bot_names: tuple[str, str],
    games: int,
    seed: int,
    make_bot: BotFactory,
    *,
    out: Path | None = None,
    log: ClaimLog | None = None,
    config: RulesConfig | None = None,
) -> Iterator[GameSummary]:
    """Play ``games`` games between the two named bots, yielding a summary after each."""
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    for i in range(games):
        gs = game_seed(seed, i)
        north = make_bot(bot_names[0], gs + 1)
        south = make_bot(bot_names[1], gs + 2)
        game_id = f"{seed}-{i}"
        first = NORTH if i % 2 == 0 else SOUTH
        state = play_one(north, south, gs, config=config, first=first, log=log, game_id=game_id)
        path = None
        if out is not None:
            tags = {
                "Event": "battlejudge selfplay",
                "Game": game_id,
                "Date": date.today().strftime("%Y.%m.%d"),
                "North": bot_names[0],
                "South": bot_names[1],
                "Seed": str(gs),
            }
            path = out / f"game-{i:04d}.blg"
            path.write_text(record_from_state(state, tags).dumps(), encoding="utf-8")
        yield GameSummary(
            game_id,
            gs,
            bot_names[0],
            bot_names[1],
            state.winner,
            state.turn,
            len(state.claims),
            path,
        )


@dataclass(frozen=True)
class SelfplayBench:
    games: int
    certified_s: float
    baseline_s: float
    claims: int
    log_bytes: int

    @property
    def games_per_s(self) -> float:
        return self.games / self.certified_s

    @property
    def baseline_games_per_s(self) -> float:
        return self.games / self.baseline_s


def bench_selfplay(
    games: int, seed: int, make_bot: BotFactory, log: ClaimLog | None, log_size: Callable[[], int]
) -> SelfplayBench:
    """Random against random: every claim certified and logged, against the same games
    with claims decided but not certified and nothing logged (the baseline)."""
    import time

    def run(certify: bool, with_log: ClaimLog | None) -> tuple[float, int]:
        claims = 0
        start = time.perf_counter()
        for i in range(games):
            gs = game_seed(seed, i)
            state = new_game(None, NORTH if i % 2 == 0 else SOUTH)
            state.certify = certify
            state.log = with_log
            state.game_id = f"bench-{seed}-{i}"
            rng = random.Random(gs)
            bots = (make_bot("random", gs + 1), make_bot("random", gs + 2))
            while not state.is_terminal():
                who = state.current_player()
                a = sample_chance(state, rng) if who == CHANCE else bots[who].step(state)
                state.apply_action(a)
            claims += sum(1 for a in state.history if a.kind == 0)
        return time.perf_counter() - start, claims

    baseline, _ = run(False, None)
    certified, claims = run(True, log)
    return SelfplayBench(games, certified, baseline, claims, log_size())
