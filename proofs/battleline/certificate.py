"""The certificate file: a versioned pydantic schema written as JSON.

A file holds the canonical question, the verdict, the witness or the blocking set,
and for a valid claim the CNF and its DRAT proof (zlib-compressed, base64) with their
SHA-256, the encoder version and the solver that wrote the proof. ``verify_file``
rebuilds the solver's certificate from the file and checks it.
"""

from __future__ import annotations

import base64
import binascii
import zlib
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from battlejudge.proofs.atomic import write_atomic
from battlejudge.proofs.files import read_model
from battlejudge.solver import battleline as bl
from battlejudge.solver.battleline.formation import Formation
from battlejudge.solver.errors import VerificationError

CERTIFICATE_FORMAT: Final = "battlejudge-certificate"
SCHEMA_VERSION: Final = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class QuestionModel(_Strict):
    """The flag question in its fixed JSON notation."""

    mine: list[str]
    theirs: list[str] = Field(default_factory=list)
    seen: list[str] = Field(default_factory=list)
    mud: bool = False
    fog: bool = False
    completed_first: Literal["mine", "theirs"] | None = None


class FormationModel(_Strict):
    formation: Literal["wedge", "phalanx", "battalion", "skirmish", "host"]
    sum: int
    wilds: dict[str, str] = Field(default_factory=dict)


class WitnessModel(_Strict):
    added: list[str]
    formation: Literal["wedge", "phalanx", "battalion", "skirmish", "host"]
    sum: int
    wilds: dict[str, str] = Field(default_factory=dict)


class BlobModel(_Strict):
    """Text stored zlib-compressed and base64-encoded, with the SHA-256 of the text."""

    encoding: Literal["zlib+base64"] = "zlib+base64"
    sha256: str
    data: str


class SolverModel(_Strict):
    name: str
    version: str


class CertificateFile(_Strict):
    """Schema of a certificate file (``battlejudge claim --certificate FILE``)."""

    format: Literal["battlejudge-certificate"] = CERTIFICATE_FORMAT
    version: Literal[1] = SCHEMA_VERSION
    game: Literal["battleline"] = "battleline"
    question: QuestionModel
    question_sha256: str
    verdict: Literal["valid", "invalid"]
    mine: FormationModel
    witness: WitnessModel | None = None
    blocking: list[str] = Field(default_factory=list)
    cnf: BlobModel | None = None
    proof: BlobModel | None = None
    encoder: str
    solver: SolverModel


def _pack(text: str, digest: str | None) -> BlobModel:
    data = base64.b64encode(zlib.compress(text.encode(), 9)).decode()
    return BlobModel(sha256=digest or "", data=data)


def _unpack(blob: BlobModel, what: str) -> str:
    try:
        return zlib.decompress(base64.b64decode(blob.data, validate=True)).decode()
    except (binascii.Error, zlib.error, UnicodeDecodeError) as e:
        raise VerificationError(
            f"certificate rejected: the {what} is not zlib+base64 text ({e})"
        ) from e


def to_file_model(cert: bl.Certificate) -> CertificateFile:
    """The file form of a solver certificate."""
    w = cert.witness
    return CertificateFile(
        question=QuestionModel(**cert.question.to_json()),
        question_sha256=cert.question_sha256,
        verdict=cert.verdict,
        mine=FormationModel(
            formation=cert.mine.name,  # type: ignore[arg-type]
            sum=cert.mine.total,
            wilds=cert.mine.wild_choices(),
        ),
        witness=None if w is None else WitnessModel(**w.to_json()),
        blocking=[str(c) for c in cert.blocking],
        cnf=None if cert.cnf is None else _pack(cert.cnf, cert.cnf_sha256),
        proof=None if cert.proof is None else _pack(cert.proof, cert.proof_sha256),
        encoder=cert.encoder,
        solver=SolverModel(name=cert.solver, version=cert.solver_version),
    )


def from_file_model(f: CertificateFile) -> bl.Certificate:
    """Rebuild the solver's certificate from a file; a question that does not parse is
    a rejected certificate (it cannot be what a solver certified)."""
    try:
        q = bl.ClaimQuestion.from_json(f.question.model_dump())
        blocking = bl.parse_cards(f.blocking, "blocking")
        added = bl.parse_cards(f.witness.added, "witness") if f.witness else ()
    except ValueError as e:
        raise VerificationError(f"certificate rejected: {e}") from e
    witness = None
    if f.witness is not None:
        witness = bl.Witness(added, Formation(f.witness.formation, f.witness.sum, (), q.fog))
    return bl.Certificate(
        question=q,
        verdict=f.verdict,
        mine=Formation(f.mine.formation, f.mine.sum, (), q.fog),
        witness=witness,
        blocking=blocking,
        cnf=None if f.cnf is None else _unpack(f.cnf, "CNF"),
        cnf_sha256=None if f.cnf is None else f.cnf.sha256,
        proof=None if f.proof is None else _unpack(f.proof, "proof"),
        proof_sha256=None if f.proof is None else f.proof.sha256,
        question_sha256=f.question_sha256,
        encoder=f.encoder,
        solver=f.solver.name,
        solver_version=f.solver.version,
    )


def save_certificate(cert: bl.Certificate, path: str | Path) -> None:
    """Write a certificate file atomically (an existing file is replaced whole or kept)."""
    write_atomic(path, to_file_model(cert).model_dump_json(indent=2) + "\n")


def load_certificate(path: str | Path) -> CertificateFile:
    """Read and validate a certificate file; bad JSON or schema raises :class:`InputError`
    naming the file and the field."""
    return read_model(path, CertificateFile, "battlejudge certificate")


def verify_file(path: str | Path, *, deep: bool = False) -> bl.Certificate:
    """Load, rebuild and verify a certificate file; returns the certificate or raises
    :class:`VerificationError` (rejected) or :class:`InputError` (not a certificate)."""
    cert = from_file_model(load_certificate(path))
    bl.verify(cert, deep=deep)
    return cert
