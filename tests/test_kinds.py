"""The registry of claim kinds (proofs/kinds.py): the proof log and its audit ask it for
everything game-specific about a claim, so they name no game (issue 35)."""

from __future__ import annotations

import json

import pytest

from battlejudge.proofs import kinds
from battlejudge.proofs.log import claim_record, proved_record
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import InputError

VALID = bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10"))
INVALID = bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8"))


def test_the_default_kind_is_battle_lines_flag_claims() -> None:
    kind = kinds.claim_kind()
    assert kind.name == kinds.DEFAULT_KIND == kinds.kind_names()[0]
    assert kinds.claim_kind(kinds.DEFAULT_KIND) is kind  # loaded once


def test_an_unknown_or_taken_kind_is_refused_by_name() -> None:
    with pytest.raises(InputError, match="unknown claim kind 'chess-mate'"):
        kinds.claim_kind("chess-mate")
    with pytest.raises(InputError, match="'battleline-claim' is taken"):
        kinds.register_kind(kinds.DEFAULT_KIND, "somewhere")


def test_a_registered_kind_is_loaded_from_its_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kinds, "_MODULES", dict(kinds._MODULES))
    monkeypatch.setattr(kinds, "_loaded", {})
    kinds.register_kind("again", "battlejudge.proofs.battleline.kind")
    assert kinds.kind_names() == [kinds.DEFAULT_KIND, "again"]
    assert kinds.kind_modules()[-1] == "battlejudge.proofs.battleline.kind"
    assert kinds.claim_kind("again") is kinds.claim_kind()


@pytest.mark.parametrize("proved", [VALID, INVALID], ids=["valid", "invalid"])
def test_the_kind_checks_what_it_certifies(proved: bl.ProvedClaim) -> None:
    kind = kinds.claim_kind()
    question, verdict, certificate = kind.parts(proved)
    assert verdict == proved.verdict
    checked = kind.check(certificate, deep=False)
    assert (checked.unreadable, checked.rejected, checked.verdict) == (None, None, verdict)
    assert checked.certified == kind.question(question) == proved.question
    assert proved_record(proved)["certificate"] == certificate


def test_the_kind_names_what_is_wrong() -> None:
    kind = kinds.claim_kind()
    _, _, certificate = kind.parts(VALID)
    assert kind.check({"nonsense": 1}, deep=False).unreadable.startswith("not a certificate")
    tampered = json.loads(json.dumps(certificate))
    tampered["verdict"] = "invalid"
    assert kind.check(tampered, deep=False).rejected is not None
    with pytest.raises(ValueError):
        kind.question({"mine": ["R4"], "color": "purple"})
    with pytest.raises(InputError, match="is not the certificate's"):
        other = bl.ClaimQuestion(mine="R4 R5 R3", theirs="B9").to_json()
        claim_record(question=other, verdict="valid", certificate=certificate)
