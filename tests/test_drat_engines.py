"""dratify's two checkers agree: its pure-Python engine and its Rust engine (the
``cdclkit-native`` wheel, which ``verify`` uses when installed) accept the same proofs and
reject the same tampered ones, so the faster engine changes no verdict."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from battlejudge.proofs.battleline.certificate import CertificateFile, from_file_model
from battlejudge.solver.battleline.claims import drat_engine

pytest.importorskip("cdclkit_native", reason="no Rust DRAT engine (cdclkit-native) installed")
from dratify import check_proof, parse_dimacs

ENGINE = drat_engine()  # registers the Rust engine with dratify
LINES = (Path(__file__).parent / "data" / "certificates-v2.jsonl").read_text().splitlines()
CERTS = [from_file_model(CertificateFile.model_validate_json(line)) for line in LINES]


def _verdict(cnf: str, proof: str, engine: str) -> tuple[bool, bool] | str:
    try:
        r = check_proof(parse_dimacs(cnf), proof, engine=engine)
    except Exception as e:  # both engines must refuse the same unreadable proofs
        return type(e).__name__
    return (bool(r.ok), bool(r.reached_empty))


def test_verify_uses_the_native_engine_when_installed() -> None:
    assert ENGINE == "native"


def test_both_engines_accept_every_issued_proof() -> None:
    for c in CERTS:
        assert c.cnf is not None and c.proof is not None
        assert _verdict(c.cnf, c.proof, "python") == (True, True)
        assert _verdict(c.cnf, c.proof, "native") == (True, True)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, len(CERTS) - 1), st.data())
def test_both_engines_judge_a_tampered_proof_alike(i: int, data: st.DataObject) -> None:
    c = CERTS[i]
    assert c.cnf is not None and c.proof is not None
    lines = c.proof.splitlines()
    k = data.draw(st.integers(0, len(lines) - 1))
    how = data.draw(st.sampled_from(["drop", "negate", "drop-units", "swap"]))
    cnf = c.cnf
    if how == "drop":
        lines = lines[:k] + lines[k + 1 :]
    elif how == "negate":
        lits = lines[k].split()
        j = data.draw(st.integers(0, max(0, len(lits) - 2)))
        if lits and lits[j] not in ("0", "d"):
            lits[j] = lits[j][1:] if lits[j].startswith("-") else "-" + lits[j]
        lines[k] = " ".join(lits)
    elif how == "drop-units":
        # the blocking set's unit clauses removed: the formula no longer refuted
        body = [x for x in cnf.splitlines() if not (x.startswith("-") and x.count(" ") == 1)]
        header = next(x for x in body if x.startswith("p "))
        n = sum(1 for x in body if x and x[0] not in "cp")
        cnf = "\n".join(x if x != header else " ".join([*header.split()[:3], str(n)]) for x in body)
        cnf += "\n"
    else:
        j = data.draw(st.integers(0, len(lines) - 1))
        lines[k], lines[j] = lines[j], lines[k]
    proof = "\n".join(lines) + "\n"
    assert _verdict(cnf, proof, "python") == _verdict(cnf, proof, "native")
