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


# -- every field shown to a person is checked or marked informational (issue 15, item 6) --
WILD_MINE = bl.ClaimQuestion(mine="B8 alexander B10", theirs="R2")  # valid, alexander as B9
WILD_WITNESS = bl.ClaimQuestion(mine="R2 R4 R6", theirs="cavalry")  # invalid, cavalry as R8


def test_the_wild_identities_are_in_the_file() -> None:
    assert bl.prove(WILD_MINE).mine.wild_choices() == {"alexander": "B9"}
    witness = bl.prove(WILD_WITNESS).witness
    assert witness is not None and witness.formation.wild_choices() == {"cavalry": "R8"}


@pytest.mark.parametrize(
    ("q", "field", "wilds", "message"),
    [
        (WILD_MINE, "mine", {"alexander": "R9"}, "mine.wilds says alexander as R9, but"),
        (WILD_MINE, "mine", {}, "mine.wilds says nothing, but"),
        (WILD_MINE, "mine", {"alexander": "B9", "darius": "B9"}, "mine.wilds says"),
        (GMT, "mine", {"alexander": "R1"}, "mine.wilds says alexander as R1, but the rules give"),
        (WILD_WITNESS, "witness", {"cavalry": "Y8"}, "witness.wilds says cavalry as Y8, but"),
        (
            WILD_WITNESS,
            "witness",
            {},
            "witness.wilds says nothing, but the rules give cavalry as R8",
        ),
    ],
)
def test_edited_wild_identities_are_rejected(
    tmp_path: Path, q: bl.ClaimQuestion, field: str, wilds: dict[str, str], message: str
) -> None:
    _, data = _saved(tmp_path, q)
    data[field]["wilds"] = wilds  # type: ignore[index]
    with pytest.raises(VerificationError, match=message):
        cf.verify_file(_tampered(tmp_path, data), time_limit=None)


@pytest.mark.parametrize(
    ("wilds", "message"),
    [
        ({"alexander": "B11"}, "mine.wilds: unknown card 'B11'"),
        ({"B8": "B9"}, "mine.wilds: B8 is not a wild card"),
        ({"alexander": "darius"}, "mine.wilds: alexander as darius: not a troop"),
    ],
)
def test_wild_identities_that_are_not_cards_are_rejected(
    tmp_path: Path, wilds: dict[str, str], message: str
) -> None:
    _, data = _saved(tmp_path, WILD_MINE)
    data["mine"]["wilds"] = wilds  # type: ignore[index]
    with pytest.raises(VerificationError, match=message):
        cf.verify_file(_tampered(tmp_path, data))


def test_wild_identities_are_checked_in_memory_too() -> None:
    from dataclasses import replace

    from battlejudge.solver.battleline.formation import Formation

    cert = bl.prove(WILD_MINE).certificate
    alexander = bl.Card.parse("alexander")
    wrong = Formation(
        cert.mine.name, cert.mine.total, ((alexander, bl.Card.parse("R9")),), cert.mine.fog
    )
    with pytest.raises(VerificationError, match=r"mine\.wilds says alexander as R9"):
        bl.verify(replace(cert, mine=wrong))


# A forged witness of the wrong size that would beat the claim if its size went unchecked:
# the oracle's evaluation rates two or four blue cards in a run as a Wedge.
@pytest.mark.parametrize(
    ("added", "formation", "total", "message"),
    [
        ("B9 B10", "wedge", 19, "the witness adds 2 troops to a side of 0"),
        ("B7 B8 B9 B10", "wedge", 34, "the witness adds 4 troops to a side of 0"),
        ("", "host", 0, "the witness adds 0 troops to a side of 0"),
    ],
)
def test_a_witness_of_the_wrong_size_is_rejected(
    tmp_path: Path, added: str, formation: str, total: int, message: str
) -> None:
    _, data = _saved(tmp_path, bl.ClaimQuestion(mine="R2 R4 R6"))
    data["witness"] = {"added": added.split(), "formation": formation, "sum": total, "wilds": {}}
    with pytest.raises(VerificationError, match=message):
        cf.verify_file(_tampered(tmp_path, data))
    _, data = _saved(tmp_path, bl.ClaimQuestion(mine="R2 R4 R6", theirs="B8"))
    data["witness"] = {"added": ["B9"], "formation": "wedge", "sum": 17, "wilds": {}}
    with pytest.raises(VerificationError, match="the witness adds 1 troops to a side of 1"):
        cf.verify_file(_tampered(tmp_path, data))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"blocking": ["B7"]}, "an invalid verdict carries no blocking set"),
        ("cnf", "an invalid verdict carries no CNF or proof"),
        ("proof", "an invalid verdict carries no CNF or proof"),
    ],
)
def test_an_invalid_verdict_carries_nothing_unchecked(
    tmp_path: Path, change: dict[str, object] | str, message: str
) -> None:
    _, valid = _saved(tmp_path)
    _, data = _saved(tmp_path, bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8"))
    data.update({change: valid[change]} if isinstance(change, str) else change)
    with pytest.raises(VerificationError, match=message):
        cf.verify_file(_tampered(tmp_path, data))


def test_the_solver_name_is_informational(tmp_path: Path) -> None:
    # The proof is checked on its own, whoever wrote it: another name still verifies...
    _, data = _saved(tmp_path)
    data["solver"] = {"name": "glucose4", "version": "python-sat 0.1"}
    assert cf.verify_file(_tampered(tmp_path, data)).solver == "glucose4"
    schema = cf.CertificateFile.model_json_schema()["$defs"]["SolverModel"]
    assert "informational" in schema["description"].lower()
    # ...but it is shown to people, so it is a plain printable name, nothing else.
    for name in ("cadical\x1b[2J", "a\nb", "", "x" * 65):
        data["solver"] = {"name": name, "version": "1"}
        with pytest.raises(InputError, match=r"solver\.name"):
            cf.verify_file(_tampered(tmp_path, data))


def test_the_published_schema_is_current() -> None:
    published = (Path(__file__).parent.parent / "docs" / "certificate.schema.json").read_text()
    assert published == json.dumps(cf.CertificateFile.model_json_schema(), indent=2) + "\n"
