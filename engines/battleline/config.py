"""The rules configuration: named settings of docs/rulings.md and the theme."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from battlejudge.engines.battleline.cards import Theme, check_theme
from battlejudge.solver.errors import InputError

ClaimTiming = Literal["standard", "advanced"]


@dataclass(frozen=True)
class RulesConfig:
    """Settings (docs/rulings.md 10 and 14) and the theme names are shown in.

    - ``environment_removable`` (default True): Deserter and Redeploy may target Fog
      and Mud (docs/rulings.md 10).
    - ``claim_timing``: ``standard`` (claims any time in the turn before drawing) or
      ``advanced`` (only at the beginning of the turn), docs/rulings.md 14.
    - ``theme``: ``battleline`` or ``nine-circles`` (names only; the rules are the same).
    """

    environment_removable: bool = True
    claim_timing: ClaimTiming = "standard"
    theme: Theme = "battleline"

    def __post_init__(self) -> None:
        if self.claim_timing not in ("standard", "advanced"):
            raise InputError(
                f"claim_timing must be 'standard' or 'advanced', got {self.claim_timing!r}"
            )
        check_theme(self.theme)

    def notation(self) -> str:
        """For the record's Rules tag: ``claim_timing=standard environment_removable=true``."""
        removable = "true" if self.environment_removable else "false"
        return f"claim_timing={self.claim_timing} environment_removable={removable}"

    @classmethod
    def parse(cls, text: str, theme: str = "battleline") -> RulesConfig:
        """The rules of a record's ``Rules`` tag: space-separated
        ``claim_timing=standard|advanced`` and ``environment_removable=true|false``, missing
        settings at their defaults; an :class:`InputError` naming any unknown setting or
        value."""
        values: dict[str, str] = {}
        for part in text.split():
            key, sep, value = part.partition("=")
            if not sep or key not in ("claim_timing", "environment_removable"):
                raise InputError(f"unknown rules setting {part!r}")
            values[key] = value
        removable = values.get("environment_removable", "true").lower()
        if removable not in ("true", "false"):
            raise InputError(f"environment_removable must be true or false, got {removable!r}")
        timing = values.get("claim_timing", "standard")
        if timing not in ("standard", "advanced"):
            raise InputError(f"claim_timing must be standard or advanced, got {timing!r}")
        return cls(removable == "true", timing, check_theme(theme))  # type: ignore[arg-type]
