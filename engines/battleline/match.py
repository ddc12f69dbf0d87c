"""Matches of several games (docs/rulings.md 15): the winner of a game scores 5 points, the
loser one point per flag he holds, and the winner starts the next game."""

from __future__ import annotations

from dataclasses import dataclass, field

from battlejudge.engines.battleline.config import RulesConfig
from battlejudge.engines.battleline.state import DRAW_GAME, NORTH, BattleLineState, new_game
from battlejudge.solver.errors import RuleError


@dataclass
class Match:
    """A match of several games (Rules: Match): points so far, each game's winner, and who starts
    the next game (the previous game's winner)."""

    config: RulesConfig = field(default_factory=RulesConfig)
    points: list[int] = field(default_factory=lambda: [0, 0])
    results: list[int] = field(default_factory=list)
    """Each finished game's winner (0 north, 1 south, 2 draw)."""
    next_first: int = NORTH

    def new_game(self) -> BattleLineState:
        """The next game, started by the previous game's winner."""
        return new_game(self.config, self.next_first)

    def add(self, game: BattleLineState) -> None:
        """Score a finished game."""
        if not game.is_terminal():
            raise RuleError("only a finished game can be scored")
        north, south = game.match_points()
        self.points[0] += north
        self.points[1] += south
        self.results.append(game.winner)
        if game.winner != DRAW_GAME:
            self.next_first = game.winner
