"""What the web pages ask the service's worker processes (module-level, so they pickle):
the same proved and verified claims as ``POST /v1/claims``, under the same limits.

Kept free of the web stack, as :mod:`battlejudge.apps.jobs` is: a worker imports the solver,
never Jinja or FastAPI.
"""

from __future__ import annotations

from typing import Any

from battlejudge.apps import jobs
from battlejudge.solver import battleline as bl


def check_claim(
    question: dict[str, Any], conflict_limit: int | None
) -> tuple[bl.ProvedClaim, bool]:
    """The proved claim of ``question`` (the JSON of
    :meth:`~battlejudge.solver.battleline.ClaimQuestion.to_json`) and whether it passed
    :func:`~battlejudge.solver.battleline.verify` (DRAT proof checked by dratify), from the
    worker's cache of verified proofs (:func:`battlejudge.apps.jobs.proved`). Raises
    :class:`~battlejudge.solver.errors.UndecidedError` past ``conflict_limit``."""
    return jobs.proved(bl.ClaimQuestion.from_json(question), conflict_limit)
