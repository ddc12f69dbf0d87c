"""The answers to the questions about the rest of a BattlePlan round, as plain data.

Kept apart from the CP-SAT code (:mod:`.questions`) so that code reading or printing an
answer, and the fast threats path that rarely needs CP-SAT, do not import OR-Tools (about
0.3 s of start-up, most of it pandas).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from battlejudge.solver.battleplan.position import BUFFS, CARDS, SEATS, piece_label

Verdict = Literal["possible", "impossible", "unknown"]
METHOD = "cp-sat"
"""The method of an answer found by the CP-SAT model (:mod:`.questions`)."""
DEFAULT_TIME_LIMIT = 30.0
"""Seconds of wall clock a CP-SAT solve may take unless told otherwise (people waiting at
a prompt); tests pass a ``deterministic_time`` instead (:mod:`.questions`)."""


@dataclass(frozen=True)
class Witness:
    """A line of play: the face-down contents it assumes and the actions, each with the
    seat that takes it, in the engine's notation."""

    stacks: dict[int, tuple[int, ...]]
    """piece -> its face-down cards, top first."""
    buffs: dict[int, int]
    """piece -> the kind of its unused buff."""
    line: tuple[tuple[int, str], ...]

    def to_json(self) -> dict[str, Any]:
        """The witness with piece, card and buff names (``docs/battleplan.md``)."""
        return {
            "stacks": {piece_label(g): [CARDS[c] for c in s] for g, s in self.stacks.items()},
            "buffs": {piece_label(g): BUFFS[b] for g, b in self.buffs.items()},
            "line": [f"{SEATS[p]}: {text}" for p, text in self.line],
        }


@dataclass(frozen=True)
class Answer:
    """The answer to one question."""

    question: str
    verdict: Verdict
    witness: Witness | None = None
    method: str = METHOD
    wall_s: float = 0.0


@dataclass
class Threats:
    """What each enemy piece could still reach this round, and who is exposed."""

    player: int
    reach: dict[int, list[int]] = field(default_factory=dict)
    """enemy piece -> the squares it could stand on at some point this round."""
    exposed: dict[int, Answer] = field(default_factory=dict)
    """the player's live pieces -> can an enemy kill it this round?"""
    complete: bool = True
    """False when a limit (time or deterministic time) cut a reach computation short
    (``reach`` is then a lower bound)."""
    method: str = METHOD


__all__ = ["DEFAULT_TIME_LIMIT", "METHOD", "Answer", "Threats", "Verdict", "Witness"]
