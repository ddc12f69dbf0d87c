"""Solver answers checked against the plain brute-force oracle (Hypothesis).

Rules: Formations, Flags; docs/rulings.md 1-8 and 16.
"""

from __future__ import annotations

import dataclasses
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from battlejudge.solver import battleline as bl
from battlejudge.solver.battleline import oracle
from battlejudge.solver.errors import VerificationError

from strategies import any_questions, oracle_answer

SETTINGS = settings()  # the loaded profile (tests/conftest.py)


@SETTINGS
@given(any_questions())
def test_decide_agrees_with_oracle(q: bl.ClaimQuestion) -> None:
    assert bl.decide(q).valid == oracle_answer(q).valid


@SETTINGS
@given(any_questions())
def test_prove_agrees_and_its_evidence_holds(q: bl.ClaimQuestion) -> None:
    p = bl.prove(q)
    assert p.valid == oracle_answer(q).valid
    assert bl.verify(p) is True
    if p.valid:
        # Sufficient: with only the blocking cards face up, the claim still holds.
        blocked = set(p.blocking)
        assert _holds_with_only(q, blocked)
        # Minimal: return any one blocking card to the pool and the claim fails.
        for card in p.blocking:
            assert not _holds_with_only(q, blocked - {card}), card
    else:
        w = p.witness
        assert w is not None
        # The witness beats the claim by the oracle's own evaluation.
        theirs = oracle.strength((*q.theirs, *w.added), q.fog)
        mine = oracle.strength(q.mine, q.fog)
        assert oracle.beats(theirs, mine, oracle.ties_lost(q.theirs_complete, q.completed_first))
        assert not {c.code for c in w.added} & (q.face_up | q.theirs_troops)


def _holds_with_only(q: bl.ClaimQuestion, face_up: set[bl.Card]) -> bool:
    """Does the claim hold when only ``face_up`` cards (and the two sides) are face up?

    The claimant's own cards not in ``face_up`` go back to the pool: the oracle then
    sees only the blocking cards as unavailable.
    """
    target = oracle.strength(q.mine, q.fog)
    lost = oracle.ties_lost(q.theirs_complete, q.completed_first)
    unavailable = {c.code for c in (*q.theirs, *face_up) if c.is_troop}
    pool = [bl.Card(t) for t in range(60) if t not in unavailable]
    return not any(
        oracle.beats(oracle.strength((*q.theirs, *extra), q.fog), target, lost)
        for extra in combinations(pool, q.size - len(q.theirs))
    )


@settings(max_examples=max(60, settings().max_examples // 3))
@given(any_questions(budget=20_000), st.data())
def test_corrupted_certificates_are_rejected(q: bl.ClaimQuestion, data: st.DataObject) -> None:
    p = bl.prove(q)
    cert = p.certificate
    corruptions = []
    if cert.verdict == "valid":
        assert cert.proof is not None and cert.cnf is not None
        lines = cert.proof.splitlines()
        i = data.draw(st.integers(0, len(lines) - 1), label="proof line")
        changed = lines.copy()
        changed[i] = "1 2 3 0" if lines[i] != "1 2 3 0" else "-1 0"
        corruptions.append(dataclasses.replace(cert, proof="\n".join(changed) + "\n"))
        cnf_lines = cert.cnf.splitlines()
        body = [j for j, line in enumerate(cnf_lines) if line and line[0] not in "cp"]
        j = data.draw(st.sampled_from(body), label="clause dropped")
        corruptions.append(
            dataclasses.replace(cert, cnf="\n".join(cnf_lines[:j] + cnf_lines[j + 1 :]) + "\n")
        )
        corruptions.append(dataclasses.replace(cert, verdict="invalid"))
    else:
        corruptions.append(dataclasses.replace(cert, verdict="valid"))
    # A card of the question changed: swap one claimant troop for an unseen one.
    unseen = [bl.Card(t) for t in range(60) if t not in q.face_up | q.theirs_troops]
    troops = [k for k, c in enumerate(q.mine) if c.is_troop]
    if troops and unseen:
        k = data.draw(st.sampled_from(troops), label="mine card")
        new = data.draw(st.sampled_from(unseen), label="replacement")
        mine = list(q.mine)
        mine[k] = new
        changed_q = bl.ClaimQuestion(mine, q.theirs, q.seen, q.mud, q.fog, q.completed_first)
        corruptions.append(dataclasses.replace(cert, question=changed_q))
    for bad in corruptions:
        with pytest.raises(VerificationError):
            bl.verify(bad)


@SETTINGS
@given(any_questions(), st.lists(any_questions(), max_size=4))
def test_prove_gives_the_same_certificate_whatever_the_solver_did_before(
    q: bl.ClaimQuestion, before: list[bl.ClaimQuestion]
) -> None:
    # Certificates are compared across machines and audits: the witness and the blocking
    # set must depend on the question alone, not on a warm solver's history.
    from battlejudge.solver.battleline.backend import SolverCache

    fresh, warm = SolverCache(), SolverCache()
    for other in before:
        bl.decide(other, cache=warm)
        bl.prove(other, cache=warm)
    a, b = bl.prove(q, cache=fresh), bl.prove(q, cache=warm)
    assert a.certificate == b.certificate
    assert a.witness == b.witness and a.blocking == b.blocking


def _whole_cnf_refuted(p: bl.ProvedClaim) -> bool:
    from dratify import check_proof, parse_dimacs

    c = p.certificate
    assert c.cnf is not None and c.proof is not None
    result = check_proof(parse_dimacs(c.cnf), c.proof, engine="python")
    return bool(result.ok and result.reached_empty)


@settings(max_examples=60, deadline=None)
@given(any_questions())
def test_a_proof_found_without_the_at_most_block_refutes_the_whole_formula(
    q: bl.ClaimQuestion,
) -> None:
    """prove first asks the solver without the formula's at-most block: whichever way the
    proof was found, dratify (pure Python here) accepts it against the certificate's whole
    CNF, the one ``verify`` rebuilds."""
    p = bl.prove(q)
    if p.valid:
        assert _whole_cnf_refuted(p)


def test_hard_valid_claims_are_refuted_with_and_without_the_at_most_block() -> None:
    """The hard suite (empty, Mud, Mud against an empty side, Fog, wild cards) has claims
    of both kinds: refuted without the block, and needing it; all check whole."""
    from battlejudge.bench.claims import hard_suite
    from battlejudge.solver.battleline.backend import refute
    from battlejudge.solver.battleline.claims import _setup, certificate_units
    from battlejudge.solver.battleline.encode import encode_key

    without = 0
    for _, q in hard_suite(5, 60):
        p = bl.prove(q)
        assert p.valid and _whole_cnf_refuted(p)
        enc = encode_key(_setup(q)[1], q.theirs_troops)
        units = [(u,) for u in certificate_units(q, p.blocking)]
        without += refute([*enc.core_clauses, *units]) is not None
    assert 0 < without < 60
