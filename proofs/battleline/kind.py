"""Battle Line's flag claims as a claim kind of the proof log
(:mod:`battlejudge.proofs.kinds`): the question is a
:class:`~battlejudge.solver.battleline.ClaimQuestion`, the certificate a certificate file
(:mod:`.certificate`) checked by :func:`battlejudge.solver.battleline.verify`."""

from __future__ import annotations

from typing import Any, Final

from pydantic import ValidationError

from battlejudge.proofs.battleline.certificate import (
    CertificateFile,
    from_file_model,
    to_file_model,
)
from battlejudge.proofs.kinds import CheckedCertificate
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import BattlejudgeError, VerificationError, invalid

__all__ = ["KIND", "FlagClaims"]


class FlagClaims:
    """The claim kind of Battle Line's (and Nine Circles') flag claims."""

    name = "battleline-claim"

    def question(self, question: Any) -> bl.ClaimQuestion:
        """The flag question of a record (``ValueError`` says why it is not one)."""
        return bl.ClaimQuestion.from_json(question)

    def canonical(self, question: Any) -> dict[str, Any]:
        """The question's canonical JSON, as the log stores it."""
        canonical: dict[str, Any] = question.to_json()
        return canonical

    def check(self, certificate: Any, deep: bool) -> CheckedCertificate:
        """Read a certificate file's JSON and verify it (DRAT proof or witness)."""
        try:
            file_model = CertificateFile.model_validate(certificate)
        except ValidationError as e:
            return CheckedCertificate(f"not a certificate: {invalid(e)}")
        try:
            certified: bl.ClaimQuestion | str = bl.ClaimQuestion.from_json(
                file_model.question.model_dump()
            )
        except ValueError as e:
            certified = str(e)
        rejected = None
        try:
            bl.verify(from_file_model(file_model), deep=deep)
        except VerificationError as e:
            rejected = str(e)
        except (ValueError, BattlejudgeError) as e:
            rejected = f"certificate rejected: {e}"
        return CheckedCertificate(None, file_model.verdict, certified, rejected)

    def parts(
        self, proved: bl.ProvedClaim, certificate: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], str, dict[str, Any]]:
        """A proved claim's question JSON, verdict and certificate file JSON (made here
        unless given)."""
        if certificate is None:
            certificate = to_file_model(proved.certificate).model_dump(mode="json")
        return proved.question.to_json(), proved.verdict, certificate


KIND: Final = FlagClaims()
"""The registered instance (:data:`battlejudge.proofs.kinds.DEFAULT_KIND`)."""
