"""Certificate files: schema round trip, tampering, atomic writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from battlejudge.proofs.battleline import certificate as cf
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import InputError, VerificationError

GMT = bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10")
# A claim whose certificate needs real reasoning: its CNF is not refuted by unit
# propagation alone, so an empty or damaged proof does not check (with a CNF that unit
# propagation refutes, any proof text is a valid refutation).
HARD = bl.ClaimQuestion(mine="P9 R9 G9", theirs="cavalry Y2")


def _saved(tmp_path: Path, q: bl.ClaimQuestion = GMT) -> tuple[Path, dict[str, object]]:
    path = tmp_path / "cert.json"
    cf.save_certificate(bl.prove(q).certificate, path)
    return path, json.loads(path.read_text())


def test_the_hard_certificate_needs_its_proof() -> None:
    from dratify import check_proof, parse_dimacs

    cert = bl.prove(HARD).certificate
    assert cert.cnf is not None and cert.proof is not None
    assert not check_proof(parse_dimacs(cert.cnf), "").ok
    assert check_proof(parse_dimacs(cert.cnf), cert.proof).ok


def test_round_trip_verifies(tmp_path: Path) -> None:
    path, data = _saved(tmp_path)
    assert data["format"] == "battlejudge-certificate" and data["version"] == 1
    assert data["blocking"] == ["B7", "B10"]
    cert = cf.verify_file(path, deep=True)
    assert cert.verdict == "valid" and cert.question == GMT


def _tampered(tmp_path: Path, data: dict[str, object]) -> Path:
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(data))
    return path


def _blob(data: dict, key: str) -> str:  # type: ignore[type-arg]
    import base64
    import zlib

    return zlib.decompress(base64.b64decode(data[key]["data"])).decode()


def _pack(text: str) -> str:
    import base64
    import zlib

    return base64.b64encode(zlib.compress(text.encode())).decode()


def test_a_changed_proof_line_is_rejected(tmp_path: Path) -> None:
    from battlejudge.solver.battleline.encode import sha256

    _, data = _saved(tmp_path, HARD)
    proof = _blob(data, "proof").splitlines()
    proof[0] = "5 0"
    text = "\n".join(proof) + "\n"
    data["proof"]["data"] = _pack(text)  # type: ignore[index]
    with pytest.raises(VerificationError, match="proof does not match"):
        cf.verify_file(_tampered(tmp_path, data))
    # Even with its hash updated, the changed proof does not refute the CNF.
    data["proof"]["sha256"] = sha256(text)  # type: ignore[index]
    with pytest.raises(VerificationError, match="DRAT"):
        cf.verify_file(_tampered(tmp_path, data))


def test_a_truncated_proof_is_rejected(tmp_path: Path) -> None:
    from battlejudge.solver.battleline.encode import sha256

    _, data = _saved(tmp_path, HARD)
    text = "\n".join(_blob(data, "proof").splitlines()[:-1]) + "\n"  # drop the empty clause
    data["proof"] = {"encoding": "zlib+base64", "sha256": sha256(text), "data": _pack(text)}
    with pytest.raises(VerificationError, match="DRAT"):
        cf.verify_file(_tampered(tmp_path, data))


def test_a_dropped_clause_is_rejected(tmp_path: Path) -> None:
    from battlejudge.solver.battleline.encode import sha256

    _, data = _saved(tmp_path)
    lines = _blob(data, "cnf").splitlines()
    text = "\n".join(lines[:5] + lines[6:]) + "\n"
    data["cnf"] = {"encoding": "zlib+base64", "sha256": sha256(text), "data": _pack(text)}
    with pytest.raises(VerificationError, match="not the one the encoder builds"):
        cf.verify_file(_tampered(tmp_path, data))


def test_a_changed_question_card_is_rejected(tmp_path: Path) -> None:
    _, data = _saved(tmp_path)
    data["question"]["mine"] = ["R4", "R5", "R6"]  # type: ignore[index]
    with pytest.raises(VerificationError, match="question"):
        cf.verify_file(_tampered(tmp_path, data))


def test_a_wrong_verdict_is_rejected(tmp_path: Path) -> None:
    _, data = _saved(tmp_path)
    data["verdict"] = "invalid"
    with pytest.raises(VerificationError, match="needs a witness"):
        cf.verify_file(_tampered(tmp_path, data))
    _, data = _saved(tmp_path, bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8"))
    data["verdict"] = "valid"
    with pytest.raises(VerificationError):
        cf.verify_file(_tampered(tmp_path, data))


def test_a_witness_that_does_not_beat_is_rejected(tmp_path: Path) -> None:
    _, data = _saved(tmp_path, bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8"))
    data["witness"]["added"] = ["Y1", "G2"]  # type: ignore[index]
    with pytest.raises(VerificationError, match="does not beat"):
        cf.verify_file(_tampered(tmp_path, data))
    data["witness"]["added"] = ["R4", "B9"]  # type: ignore[index]
    with pytest.raises(VerificationError, match="face up"):
        cf.verify_file(_tampered(tmp_path, data))


def test_a_blocking_card_not_on_the_table_is_rejected(tmp_path: Path) -> None:
    _, data = _saved(tmp_path)
    data["blocking"] = ["B7", "B9"]
    with pytest.raises(VerificationError, match="B9 is not a face-up troop"):
        cf.verify_file(_tampered(tmp_path, data))


def test_garbage_is_input_error_not_rejection(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    with pytest.raises(InputError, match="not a battlejudge certificate"):
        cf.verify_file(bad)


def test_a_failed_write_keeps_the_old_certificate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _ = _saved(tmp_path)
    before = path.read_text()

    def boom(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("os.fsync", boom)
    with pytest.raises(OSError, match="disk full"):
        cf.save_certificate(bl.prove(bl.ClaimQuestion(mine="R1 R2 R3")).certificate, path)
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["cert.json"]  # no temporary left
