"""What an inclusion or consistency proof file is, shared by the code that makes proofs
from a whole log (:mod:`~battlejudge.proofs.transparency`) and from its tiles
(:mod:`~battlejudge.proofs.logview`): the files' ``type`` values and the error of a proof
that does not hold. Light on purpose: checking a proof file loads neither the log nor the
solver."""

from __future__ import annotations

from typing import Final

from battlejudge.solver.errors import BattlejudgeError

__all__ = ["CONSISTENCY_TYPE", "INCLUSION_TYPE", "ProofFailed"]

INCLUSION_TYPE: Final = "battlejudge.inclusion/1"
"""The ``type`` of an inclusion proof file."""
CONSISTENCY_TYPE: Final = "battlejudge.consistency/1"
"""The ``type`` of a consistency proof file."""


class ProofFailed(BattlejudgeError):
    """A proof that was read and checked, and does not hold (exit 1)."""
