"""The certificate file: a versioned pydantic schema written as JSON.

A file holds the canonical question, the verdict, the witness or the blocking set,
and for a valid claim the CNF and its DRAT proof (zlib-compressed, base64) with their
SHA-256, the encoder version and the solver that wrote the proof. ``verify_file``
rebuilds the solver's certificate from the file and checks it.

Reading is bounded: a file of more than :data:`MAX_FILE_BYTES` is refused unread, the
CNF inflates to at most ``MAX_CNF_BYTES`` and the proof to at most what the size rule
allows a proof of that CNF (:mod:`battlejudge.solver.proof_limits`), so a small body
cannot inflate into a large one; :func:`verify_bounded` runs the check itself under a
time and memory budget (:mod:`battlejudge.proofs.budget`).

Every field of :class:`CertificateFile`, and how it is checked (``verify`` is
:func:`battlejudge.solver.battleline.claims.verify`; "rejected" is exit 1 of
``battlejudge verify``, the message naming the field; a file the schema refuses is not a
certificate, exit 2):

* ``format``, ``version``, ``game``: the schema admits only ``battlejudge-certificate``,
  1 and ``battleline``.
* ``question`` (``mine``, ``theirs``, ``seen``, ``mud``, ``fog``, ``completed_first``):
  read by the question's own parser (a question no table can show is rejected) and by
  meaning (``seen`` is a set; any card spelling the parser accepts); its canonical text
  must hash to ``question_sha256``, so changing any of it is rejected.
* ``question_sha256``: the SHA-256 of the canonical question, recomputed.
* ``verdict``: ``valid`` needs a DRAT refutation of the encoder's formula (below) and no
  witness; ``invalid`` needs a witness that beats the claim and no blocking set, CNF or
  proof. ``--deep`` also re-decides the question with the brute-force oracle.
* ``mine.formation``, ``mine.sum``, ``mine.wilds``: the name, sum and wild identities
  that the rules code (:func:`~battlejudge.solver.battleline.formation.best_formation`)
  gives for ``question.mine``, each compared; the strength also the oracle's own
  evaluation. Under Fog only the sum counts and the rules code names every formation a
  ``host``: any other name is rejected (the verdict would stand, the label would lie).
* ``witness`` (invalid only): ``added`` are distinct troops, none face up or at the
  opponent's side, exactly enough to complete it, and with ``question.theirs`` they beat
  the claim by the oracle's evaluation and the tie rule. Any beating completion is a true
  witness (the prover writes a canonical one; another is not a false statement).
  ``witness.formation``, ``witness.sum``, ``witness.wilds``: as for ``mine``, for the
  completed side.
* ``blocking`` (valid only): troops face up in the question (the claimant's or
  ``seen``); the CNF is built with exactly these out and must be refuted, so they alone
  block every beating completion. That the set is minimal is not checked (the prover
  computes a minimal one; docs/explanation/certificates.md).
* ``cnf`` (valid only): ``encoding`` by the schema; ``data`` inflates within
  ``MAX_CNF_BYTES``, its text must hash to ``sha256`` and be byte for byte what the
  encoder builds for the question and the blocking set.
* ``proof`` (valid only): ``encoding`` by the schema; ``data`` inflates within what the
  size rule allows a proof of that CNF (checked before any other work), its text must hash
  to ``sha256``, and dratify (which shares no code with the solver) must accept it as a
  refutation of the CNF.
* ``encoder``: must be the encoder version this checker re-encodes with.
* ``solver`` (``name``, ``version``): informational and not checked (the proof is checked
  on its own, whoever wrote it); the schema allows only short printable names.
"""

from __future__ import annotations

import base64
import binascii
import zlib
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from battlejudge.proofs.atomic import write_atomic
from battlejudge.proofs.budget import (
    DEFAULT_MEMORY_LIMIT,
    DEFAULT_TIME_LIMIT,
    BudgetPool,
    default_pool,
)
from battlejudge.proofs.files import read_model
from battlejudge.solver import battleline as bl
from battlejudge.solver.battleline.formation import Formation
from battlejudge.solver.errors import VerificationError
from battlejudge.solver.proof_limits import MAX_CNF_BYTES, RULE, max_proof_bytes, proof_size_error

CERTIFICATE_FORMAT: Final = "battlejudge-certificate"
SCHEMA_VERSION: Final = 1
MAX_FILE_BYTES: Final = 8 * 2**20
"""Bytes of a certificate file, at most: room for the largest CNF and proof the size rule
allows, compressed and in base64 (real files have a few KB)."""


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


_WILDS = (
    'The identity each wild card takes, e.g. {"alexander": "B9"}: checked, it must be the '
    "one the rules code (best_formation) gives."
)


class FormationModel(_Strict):
    """The claimant's formation at its best: checked against the question's cards."""

    formation: Literal["wedge", "phalanx", "battalion", "skirmish", "host"]
    sum: int
    wilds: dict[str, str] = Field(default_factory=dict, description=_WILDS)


class WitnessModel(_Strict):
    """The completion that beats the claim: replayed by the oracle's own evaluation."""

    added: list[str]
    formation: Literal["wedge", "phalanx", "battalion", "skirmish", "host"]
    sum: int
    wilds: dict[str, str] = Field(default_factory=dict, description=_WILDS)


class BlobModel(_Strict):
    """Text stored zlib-compressed and base64-encoded, with the SHA-256 of the text."""

    encoding: Literal["zlib+base64"] = "zlib+base64"
    sha256: str
    data: str


_PRINTABLE = r"^[A-Za-z0-9][A-Za-z0-9 ._+-]{0,63}$"


class SolverModel(_Strict):
    """Informational: the solver that wrote the proof, and its release. Not checked: the
    DRAT proof is checked on its own (by dratify, which shares no code with any solver),
    so it does not matter who wrote it. Plain printable names only, since people read
    them."""

    name: str = Field(pattern=_PRINTABLE, description="Informational, e.g. cadical195.")
    version: str = Field(pattern=_PRINTABLE, description="Informational, e.g. python-sat 1.9.")


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


ZLIB_LEVEL = 5
"""Level 5 packs certificate formulas as small as level 9 does (1,639 bytes on average for
self-play's, both) in 60% of the time; every certificate is packed for the proof log."""


def _pack(text: str, digest: str | None) -> BlobModel:
    data = base64.b64encode(zlib.compress(text.encode(), ZLIB_LEVEL)).decode()
    return BlobModel(sha256=digest or "", data=data)


def _unpack(blob: BlobModel, what: str, field: str, limit: int, why: str) -> str:
    """The blob's text, inflated to at most ``limit`` bytes: a body that inflates past
    it is refused (naming ``field``) before the rest is inflated."""
    try:
        inflater = zlib.decompressobj()
        raw = inflater.decompress(base64.b64decode(blob.data, validate=True), limit + 1)
        if len(raw) > limit or inflater.unconsumed_tail:
            raise VerificationError(
                f"certificate rejected: {field} inflates past {limit} bytes, {why}"
            )
        if not inflater.eof:
            raise zlib.error("incomplete or truncated stream")
        return raw.decode()
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


def _identities(wilds: dict[str, str], field: str) -> tuple[tuple[bl.Card, bl.Card], ...]:
    """The wild identities a file states, as a formation holds them (``verify`` compares
    them with the rules code's); a name that is not a wild card or a troop is rejected."""
    out = []
    for name, identity in wilds.items():
        try:
            card, troop = bl.Card.parse(name), bl.Card.parse(identity)
        except ValueError as e:
            raise VerificationError(f"certificate rejected: {field}.wilds: {e}") from e
        if card.is_troop:
            raise VerificationError(
                f"certificate rejected: {field}.wilds: {card} is not a wild card"
            )
        if not troop.is_troop:
            raise VerificationError(
                f"certificate rejected: {field}.wilds: {card} as {troop}: not a troop"
            )
        out.append((card, troop))
    return tuple(out)


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
        ids = _identities(f.witness.wilds, "witness")
        witness = bl.Witness(added, Formation(f.witness.formation, f.witness.sum, ids, q.fog))
    cnf = None
    if f.cnf is not None:
        cnf = _unpack(f.cnf, "CNF", "cnf.data", MAX_CNF_BYTES, "the most a CNF may have")
    proof = None
    if f.proof is not None:
        most = max_proof_bytes(len(cnf) if cnf is not None else 0)
        why = f"more than a proof of this CNF may have ({RULE})"
        proof = _unpack(f.proof, "proof", "proof.data", most, why)
    return bl.Certificate(
        question=q,
        verdict=f.verdict,
        mine=Formation(f.mine.formation, f.mine.sum, _identities(f.mine.wilds, "mine"), q.fog),
        witness=witness,
        blocking=blocking,
        cnf=cnf,
        cnf_sha256=None if f.cnf is None else f.cnf.sha256,
        proof=proof,
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
    return read_model(path, CertificateFile, "battlejudge certificate", MAX_FILE_BYTES)


def _verify(cert: bl.Certificate, deep: bool) -> bool:
    """What a budget worker runs (a module-level function, so it pickles)."""
    return bl.verify(cert, deep=deep)


def verify_bounded(
    cert: bl.Certificate,
    *,
    deep: bool = False,
    time_limit: float = DEFAULT_TIME_LIMIT,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
    pool: BudgetPool | None = None,
) -> Literal[True]:
    """:func:`~battlejudge.solver.battleline.claims.verify` within ``time_limit``
    seconds and ``memory_limit`` bytes; True, or :class:`VerificationError` saying why
    the certificate is rejected, or :class:`UndecidedError` when a budget runs out.

    Work bounded by the certificate's size runs in this process: the proof-size rule
    (a padded proof is refused in microseconds, before any checking) and, for an
    invalid verdict, the witness replay (a few cards). The DRAT check and the
    brute-force oracle (``deep``) run in a worker of ``pool`` (by default one shared by
    the process), which is killed when the time runs out; the core is free at once.
    A server passes its own limits and its own pool.
    """
    if cert.verdict == "valid" and cert.cnf is not None and cert.proof is not None:
        too_big = proof_size_error(cert.cnf, cert.proof)
        if too_big is not None:
            raise VerificationError(f"certificate rejected: {too_big}")
    elif not deep:
        return bl.verify(cert)
    (pool or default_pool()).run(
        _verify,
        cert,
        deep,
        time_limit=time_limit,
        memory_limit=memory_limit,
        what="checking the certificate",
    )
    return True


def verify_file(
    path: str | Path,
    *,
    deep: bool = False,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
    pool: BudgetPool | None = None,
) -> bl.Certificate:
    """Load, rebuild and verify a certificate file within the budget of
    :func:`verify_bounded` (``time_limit`` None: in this process, without limits);
    returns the certificate or raises :class:`VerificationError` (rejected),
    :class:`InputError` (not a certificate) or :class:`UndecidedError` (out of budget)."""
    cert = from_file_model(load_certificate(path))
    if time_limit is None:
        bl.verify(cert, deep=deep)
    else:
        verify_bounded(cert, deep=deep, time_limit=time_limit, memory_limit=memory_limit, pool=pool)
    return cert
