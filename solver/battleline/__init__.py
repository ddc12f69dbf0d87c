"""Battle Line flag claims: notation, formations, decisions, proofs, verification.

Public API (names fixed; engines and tools depend on them)::

    from battlejudge.solver import battleline as bl
    q = bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10")
    bl.decide(q).valid            # fast verdict (exact, no SAT call); .witness when invalid
    bl.ClaimQuestion.from_codes([3, 4, 2], [47], [46, 49])   # the same question, for engines
    p = bl.prove(q)               # .verdict, .witness, .blocking, .certificate
    bl.verify(p)                  # True, or raises VerificationError
    bl.best_formation(["R9", "cavalry", "alexander"]).name
"""

from __future__ import annotations

from battlejudge.solver.battleline import oracle
from battlejudge.solver.battleline.cards import CARDS, Card, format_cards, parse_cards
from battlejudge.solver.battleline.claims import (
    Certificate,
    Decision,
    ProvedClaim,
    Witness,
    certificate_cnf,
    decide,
    default_cache,
    prove,
    verify,
)
from battlejudge.solver.battleline.encode import ENCODER_VERSION
from battlejudge.solver.battleline.explain import Reason
from battlejudge.solver.battleline.formation import CATEGORIES, Formation, best_formation
from battlejudge.solver.battleline.question import ClaimQuestion

__all__ = [
    "CARDS",
    "CATEGORIES",
    "ENCODER_VERSION",
    "Card",
    "Certificate",
    "ClaimQuestion",
    "Decision",
    "Formation",
    "ProvedClaim",
    "Reason",
    "Witness",
    "best_formation",
    "certificate_cnf",
    "decide",
    "default_cache",
    "format_cards",
    "oracle",
    "parse_cards",
    "prove",
    "verify",
]
