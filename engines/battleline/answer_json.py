"""The JSON answer to a flag claim, one shape for ``battlejudge claim --json``, ``claims
check`` and the HTTP service (kept apart from both so neither imports the other)."""

from __future__ import annotations

from typing import Any

from battlejudge.solver import battleline as bl


def formation_json(f: bl.Formation, cards: tuple[bl.Card, ...]) -> dict[str, Any]:
    """A formation with its cards and the identities chosen for wild cards."""
    return {
        "cards": [str(c) for c in cards],
        "formation": f.name,
        "sum": f.total,
        "wilds": f.wild_choices(),
    }


def result_json(p: bl.ProvedClaim) -> dict[str, Any]:
    """The verdict and its evidence (what ``claims check`` prints per line)."""
    q = p.question
    return {
        "verdict": p.verdict,
        "mine": formation_json(p.mine, q.mine),
        "theirs": {"cards": [str(c) for c in q.theirs], "complete": q.theirs_complete},
        "witness": None if p.witness is None else p.witness.to_json(),
        "blocking": [str(c) for c in p.blocking],
        "explanation": p.explanation,
        "reasons": [r.to_json() for r in p.reasons],
    }


def claim_json(
    p: bl.ProvedClaim, *, verified: bool, certificate: Any, micros: int
) -> dict[str, Any]:
    """The answer to one claim, key for key what ``battlejudge claim --json`` prints."""
    return {**result_json(p), "verified": verified, "certificate": certificate, "micros": micros}
