"""The error hierarchy shared by every battlejudge layer.

Every error the library raises on purpose derives from :class:`BattlejudgeError`;
errors caused by bad input also derive from :class:`ValueError`, so callers that
already catch ``ValueError`` keep working (the python-chess convention).
Messages quote the offending value and where it came from.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


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


def json_path(loc: Sequence[int | str], root: str = "") -> str:
    """Where a value sits in a JSON document: ``('flags', 0, 'north')`` -> ``flags[0].north``
    (after ``root`` when given: ``cards.strategy[3]``)."""
    out = root
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def invalid(error: ValidationError, root: str = "", top: str = "(top)") -> InputError:
    """The first problem pydantic found, as one line naming its JSON path
    (``top`` when the document itself is wrong)."""
    err = error.errors()[0]
    return InputError(f"{json_path(err['loc'], root) or top}: {err['msg']}")


class MissingExtraError(BattlejudgeError):
    """A feature needs an optional dependency that is not installed; the message says
    which extra to install (``pip install 'battlejudge[games]'``)."""


EXTRAS: dict[str, tuple[str, str]] = {
    "ortools": (
        "games",
        "the BattlePlan, Lines of Battle and Force Duel questions and solver bots need OR-Tools",
    ),
    "wordllama": ("guide", "the rules guide's sentence vectors need wordllama"),
    "snowballstemmer": ("guide", "the rules guide's keyword search needs snowballstemmer"),
    "bm25s": ("guide", "rebuilding the rules guide's keyword index needs bm25s"),
    "psycopg": ("postgres", "PostgreSQL proof logs need psycopg"),
    "ray": ("cluster", "--cluster ray (self-play and tournaments on a Ray cluster) needs Ray"),
    "numpy": ("test", "bench leaf's calibration figures need numpy"),
    "scipy": ("test", "bench leaf --fit needs SciPy"),
}
"""Top-level module -> (the extra that installs it, what needs it)."""


def missing_extra(error: ImportError) -> MissingExtraError | None:
    """The one-line error for an optional dependency that failed to import, or None
    when ``error`` is about some other module (a real bug, left to propagate)."""
    name = (getattr(error, "name", None) or "").split(".")[0]
    if name not in EXTRAS:
        return None
    extra, what = EXTRAS[name]
    return MissingExtraError(f"{what}, which is not installed: pip install 'battlejudge[{extra}]'")
