"""The workers' cache of verified proofs (apps/claim_work.py): a repeated question gets the
proof that was proved and verified when it was first asked, and nothing else is kept."""

from __future__ import annotations

import pytest

from battlejudge.apps import claim_work
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import VerificationError

VALID = bl.ClaimQuestion(mine="R4 R5 R3", theirs=["B8"], seen="B7 B10")
INVALID = bl.ClaimQuestion(mine="R1 B2 G4", theirs=["Y8", "Y9"], seen="")


@pytest.fixture(autouse=True)
def empty_cache() -> None:
    claim_work._proved.clear()


def without_micros(d: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in d.items() if k != "micros"}


@pytest.mark.parametrize("q", [VALID, INVALID])
def test_a_repeat_gets_the_same_verified_proof(q: bl.ClaimQuestion) -> None:
    first, r1 = claim_work.prove_claim(q, True, None, True)
    again, r2 = claim_work.prove_claim(bl.ClaimQuestion.from_json(q.to_json()), True, None, True)
    # the log's records (made in the worker) carry the same certificate, byte for byte
    assert r1 is not None and r2 is not None and r1.head == r2.head
    p1, _ = claim_work.proved(q, None)
    p2, _ = claim_work.proved(bl.ClaimQuestion.from_json(q.to_json()), None)
    assert p1 is p2
    assert first["verified"] is True
    assert without_micros(again) == without_micros(first)
    assert p1.certificate == bl.prove(q).certificate  # what a fresh proof gives, byte for byte


def test_a_proof_that_fails_verification_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    def reject(_: object) -> bool:
        raise VerificationError("rejected for the test")

    monkeypatch.setattr(bl, "verify", reject)
    with pytest.raises(VerificationError):
        claim_work.prove_claim(VALID, False, None, False)
    assert not claim_work._proved


def test_the_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claim_work, "PROVED_CACHE", 1)
    claim_work.prove_claim(VALID, False, None, False)
    claim_work.prove_claim(INVALID, False, None, False)
    assert list(claim_work._proved) == [INVALID.canonical()]
