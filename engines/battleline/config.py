"""The rules configuration: named settings of docs/rulings.md and the theme."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from battlejudge.engines.battleline.cards import Theme, check_theme
from battlejudge.solver.errors import InputError

ClaimTiming = Literal["standard", "advanced"]
Stalemate = Literal["dead", "idle"]
STALEMATES: tuple[Stalemate, ...] = ("dead", "idle")
"""Values of the ``stalemate`` setting (docs/rulings.md 17)."""


@dataclass(frozen=True)
class RulesConfig:
    """Settings (docs/rulings.md 10, 14 and 17) and the theme names are shown in.

    - ``environment_removable`` (default False): may Deserter and Redeploy take Fog and
      Mud? The rulebook says played tactics stay until the end of the game, so by default
      they may not (docs/rulings.md 10).
    - ``claim_timing``: ``standard`` (claims any time in the turn before drawing) or
      ``advanced`` (only at the beginning of the turn), docs/rulings.md 14.
    - ``theme``: ``battleline`` or ``nine-circles`` (names only; the rules are the same).
    - ``stalemate``: ``dead`` (default: a game ends early only when two turns in a row
      neither player could do anything but pass) or ``idle`` (two turns in a row with no
      card played, claimed or drawn, whatever the players could have done),
      docs/rulings.md 17.
    """

    environment_removable: bool = False
    claim_timing: ClaimTiming = "standard"
    theme: Theme = "battleline"
    stalemate: Stalemate = "dead"

    def __post_init__(self) -> None:
        if self.claim_timing not in ("standard", "advanced"):
            raise InputError(
                f"claim_timing must be 'standard' or 'advanced', got {self.claim_timing!r}"
            )
        check_theme(self.theme)
        if self.stalemate not in STALEMATES:
            raise InputError(f"stalemate must be 'dead' or 'idle', got {self.stalemate!r}")

    def notation(self) -> str:
        """For the record's Rules tag:
        ``claim_timing=standard environment_removable=false stalemate=dead``."""
        removable = "true" if self.environment_removable else "false"
        return (
            f"claim_timing={self.claim_timing} environment_removable={removable} "
            f"stalemate={self.stalemate}"
        )

    @classmethod
    def parse(cls, text: str, theme: str = "battleline") -> RulesConfig:
        """Read a Rules tag (:meth:`notation`); a setting left out takes its default."""
        values: dict[str, str] = {}
        for part in text.split():
            key, sep, value = part.partition("=")
            if not sep or key not in ("claim_timing", "environment_removable", "stalemate"):
                raise InputError(f"unknown rules setting {part!r}")
            values[key] = value
        removable = values.get("environment_removable", "false").lower()
        if removable not in ("true", "false"):
            raise InputError(f"environment_removable must be true or false, got {removable!r}")
        timing = values.get("claim_timing", "standard")
        if timing not in ("standard", "advanced"):
            raise InputError(f"claim_timing must be standard or advanced, got {timing!r}")
        stalemate = values.get("stalemate", "dead")
        if stalemate not in STALEMATES:
            raise InputError(f"stalemate must be dead or idle, got {stalemate!r}")
        return cls(removable == "true", timing, check_theme(theme), stalemate)  # type: ignore[arg-type]
