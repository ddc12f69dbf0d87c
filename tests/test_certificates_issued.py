"""Certificates already issued keep verifying: ``verify`` rebuilds the CNF with today's
encoder and compares it byte for byte, so any change to the encoder's output (a speed-up
that reorders clauses, a renumbered variable) would reject them.

tests/data/certificates-v2.jsonl: 42 certificates (encoder battleline-cnf/2) written by
battlejudge at commit eca7328, before the encoder's at-most block and multiset filter were
cached: 30 from ``bench.hard_suite(7, 30)`` (empty, Mud, Mud against an empty side, Fog,
wild cards on either side) and 12 claims made in random self-play (seed 1).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from battlejudge.proofs.battleline.certificate import CertificateFile, from_file_model
from battlejudge.solver import battleline as bl

DATA = Path(__file__).parent / "data" / "certificates-v2.jsonl"
LINES = DATA.read_text(encoding="utf-8").splitlines()


def test_the_set_covers_wild_cards_mud_and_fog() -> None:
    qs = [json.loads(line)["question"] for line in LINES]
    assert len(qs) == 42
    assert any(q["mud"] for q in qs) and any(q["fog"] for q in qs)
    wild = {"alexander", "darius", "cavalry", "shield"}
    assert any(wild & set(q["theirs"]) for q in qs) and any(wild & set(q["mine"]) for q in qs)


@pytest.mark.parametrize("line", range(len(LINES)))
def test_an_issued_certificate_still_verifies(line: int) -> None:
    cert = from_file_model(CertificateFile.model_validate_json(LINES[line]))
    assert cert.verdict == "valid"
    assert bl.verify(cert) is True
    # and today's prover writes the same formula for the same question
    assert bl.prove(cert.question).certificate.cnf == cert.cnf
