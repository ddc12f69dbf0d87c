"""A tiny game for testing the generic machinery (records, runner, commands): Pig to 10.

On his turn a player rolls a die (a chance node): a 1 loses the turn's points and ends
the turn; otherwise he may roll again or hold (bank the turn's points). The first to 10
banked points wins; after 120 actions the game is a draw."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

from rich.text import Text

from battlejudge.engines.game import CHANCE, TERMINAL, GameFacts, GameState
from battlejudge.engines.games import GameInfo, Options
from battlejudge.solver.errors import InputError

FACTS = GameFacts("toy-pig", 2, chance=True, hidden_information=False, max_length=120)
ROLL, HOLD = 10, 11  # player actions; 1..6 are die faces


class PigState(GameState[int]):
    facts = FACTS

    def __init__(self, target: int = 10) -> None:
        self.target = target
        self.scores = [0, 0]
        self.turn_total = 0
        self.player = 0
        self.rolling = True  # a die is about to be rolled
        self.steps = 0

    def current_player(self) -> int:
        if max(self.scores) >= self.target or self.steps >= FACTS.max_length:
            return TERMINAL
        return CHANCE if self.rolling else self.player

    def legal_actions(self) -> list[int]:
        who = self.current_player()
        if who == TERMINAL:
            return []
        return [1, 2, 3, 4, 5, 6] if who == CHANCE else [ROLL, HOLD]

    def apply_action_unchecked(self, action: int) -> None:
        self.steps += 1
        if action == ROLL:
            self.rolling = True
        elif action == HOLD:
            self.scores[self.player] += self.turn_total
            self._next()
        elif action == 1:
            self._next()
        else:
            self.turn_total += action
            self.rolling = False

    def _next(self) -> None:
        self.turn_total = 0
        self.player = 1 - self.player
        self.rolling = True

    def returns(self) -> list[float]:
        if not self.is_terminal() or self.scores[0] == self.scores[1]:
            return [0.0, 0.0]
        if max(self.scores) < self.target:
            return [0.0, 0.0]
        win = 0 if self.scores[0] > self.scores[1] else 1
        return [1.0, -1.0] if win == 0 else [-1.0, 1.0]

    def chance_outcomes(self) -> list[tuple[int, Fraction]]:
        if self.current_player() != CHANCE:
            return []
        return [(d, Fraction(1, 6)) for d in range(1, 7)]

    def information_state_string(self, player: int) -> str:
        return self.serialize()

    def clone(self) -> PigState:
        twin = PigState(self.target)
        twin.scores = list(self.scores)
        twin.turn_total, twin.player = self.turn_total, self.player
        twin.rolling, twin.steps = self.rolling, self.steps
        return twin

    def serialize(self) -> str:
        return " ".join(
            str(x)
            for x in (
                self.target,
                *self.scores,
                self.turn_total,
                self.player,
                int(self.rolling),
                self.steps,
            )
        )

    def action_to_string(self, action: int) -> str:
        return {ROLL: "roll", HOLD: "hold"}.get(action, f"die {action}")


def deserialize(text: str) -> PigState:
    t, a, b, tt, p, r, st = (int(x) for x in text.split())
    s = PigState(t)
    s.scores, s.turn_total, s.player, s.rolling, s.steps = [a, b], tt, p, bool(r), st
    return s


def new_game(options: Options) -> PigState:
    text = options.get("target", "10")
    if not text.isdigit() or not 1 <= int(text) <= 50:
        raise InputError(f"option target={text!r} is not a number from 1 to 50")
    return PigState(int(text))


class RandomPig:
    name = "random"

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def step(self, state: Any) -> int:
        return int(self.rng.choice(state.legal_actions()))


class HoldAt8:
    """Rolls until the turn is worth 8 (or wins), then holds."""

    name = "hold8"

    def __init__(self, seed: int) -> None:
        pass

    def step(self, state: Any) -> int:
        need = state.target - state.scores[state.player]
        return HOLD if state.turn_total >= min(8, need) else ROLL


def render(state: GameState[Any], viewer: int | None) -> Text:
    assert isinstance(state, PigState)
    return Text(f"p1 {state.scores[0]}  p2 {state.scores[1]}  turn total {state.turn_total}")


GAME = GameInfo(
    name="toy-pig",
    title="Pig",
    suffix=".pig",
    seats=("p1", "p2"),
    new_game=new_game,
    deserialize=deserialize,
    bots={"random": RandomPig, "hold8": HoldAt8},
    render=render,
    options={"target": "points to win (default 10)"},
)
