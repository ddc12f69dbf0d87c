"""The error hierarchy shared by every battlejudge layer.

Every error the library raises on purpose derives from :class:`BattlejudgeError`;
errors caused by bad input also derive from :class:`ValueError`, so callers that
already catch ``ValueError`` keep working (the python-chess convention).
Messages quote the offending value and where it came from.
"""

from __future__ import annotations


class BattlejudgeError(Exception):
    """Root of every error battlejudge raises on purpose."""


class InputError(BattlejudgeError, ValueError):
    """Input that cannot be understood: unknown card, malformed JSON, bad option."""


class RuleError(BattlejudgeError, ValueError):
    """Input that is understood but breaks the rules (a card twice, two Leaders...)."""


class UndecidedError(BattlejudgeError):
    """A solver limit was hit before a verdict was reached; no verdict is implied."""


class VerificationError(BattlejudgeError):
    """A certificate was checked and rejected; the message says which check failed."""
