"""``verify`` reads a certificate's verdict by its value, whatever made the string (a JSON
reader, another program), and refuses any verdict but ``valid`` and ``invalid``
(proofs/battleline/certificate.py, field ``verdict``); ``deep`` alone asks the oracle."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from battlejudge.proofs.battleline.certificate import save_certificate, verify_file
from battlejudge.solver import battleline as bl
from battlejudge.solver.battleline import oracle
from battlejudge.solver.errors import VerificationError

# Rulebook (seed 000, Flags): R4 R5 R3 against B8 holds once B7 and B10 are face up;
# with B10 unseen, B8 B9 B10 beats it.
HOLDS = bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10")
FAILS = bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7")


@pytest.mark.parametrize("q", [HOLDS, FAILS], ids=["valid", "invalid"])
def test_a_verdict_built_at_run_time_is_read_by_value(q: bl.ClaimQuestion) -> None:
    cert = bl.prove(q).certificate
    said = "".join(list(cert.verdict))  # an equal string, not the literal's object
    assert said == cert.verdict and said is not cert.verdict
    assert bl.verify(dataclasses.replace(cert, verdict=said), deep=True)  # type: ignore[arg-type]


@pytest.mark.parametrize("verdict", ["Valid", "unknown", ""])
def test_an_unknown_verdict_is_refused(verdict: str) -> None:
    cert = bl.prove(FAILS).certificate
    with pytest.raises(VerificationError, match="unknown verdict"):
        bl.verify(dataclasses.replace(cert, verdict=verdict))  # type: ignore[arg-type]


def test_verify_file_re_decides_with_the_oracle_only_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # proofs/battleline/certificate.py, ``verdict``: "--deep also re-decides the question
    # with the brute-force oracle"; without it the oracle's search is not run.
    path = tmp_path / "claim.json"
    save_certificate(bl.prove(FAILS).certificate, path)
    searches: list[bool] = []
    decide = oracle.decide

    def counted(*args: Any, **kwargs: Any) -> oracle.OracleAnswer:
        searches.append(True)
        return decide(*args, **kwargs)

    monkeypatch.setattr(oracle, "decide", counted)
    assert verify_file(path, time_limit=None).verdict == "invalid"
    assert searches == []
    assert verify_file(path, deep=True, time_limit=None).verdict == "invalid"
    assert searches == [True]


def test_a_face_up_witness_card_is_named() -> None:
    # docs/rulings.md 5: a witness adds troops that are not face up. The rejection names
    # the witness's face-up card (B7, seen), not another face-up card of the table.
    cert = bl.prove(FAILS).certificate
    assert cert.witness is not None
    bad = bl.Witness(
        added=(bl.Card.parse("B7"), bl.Card.parse("B9")), formation=cert.witness.formation
    )
    with pytest.raises(VerificationError, match="witness card B7 is face up"):
        bl.verify(dataclasses.replace(cert, witness=bad))
