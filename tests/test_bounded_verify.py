"""Bounded verification (issue 15, items 1 and 2): a proof out of proportion to its CNF
is refused before checking, every inflate is capped, and a check that runs out of time
or memory is stopped (its worker killed), not abandoned."""

from __future__ import annotations

import base64
import json
import os
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from battlejudge.cli.main import cli
from battlejudge.proofs.battleline import certificate as cf
from battlejudge.proofs.budget import BudgetPool
from battlejudge.solver import battleline as bl
from battlejudge.solver.battleline.encode import sha256
from battlejudge.solver.errors import (
    BattlejudgeError,
    InputError,
    UndecidedError,
    VerificationError,
)
from battlejudge.solver.proof_limits import (
    MAX_CNF_BYTES,
    max_proof_bytes,
    max_proof_lines,
    proof_size_error,
)

GMT = bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10")
# Its CNF is not refuted by unit propagation alone: the proof does real work.
HARD = bl.ClaimQuestion(mine="P9 R9 G9", theirs="cavalry Y2")
# Valid, and the brute-force oracle needs about a second and a half for it.
SLOW_DEEP = bl.ClaimQuestion(mine="R10 R9 R8 R7", mud=True)


def padded(cert: bl.Certificate, copies: int, clause: str | None = None) -> bl.Certificate:
    """The issue's proof bomb: the proof prefixed with ``copies`` copies of one of the
    CNF's own clauses (each a correct step, so the proof still refutes the CNF), with
    its hash made right."""
    assert cert.cnf is not None and cert.proof is not None
    if clause is None:
        clause = next(x for x in cert.cnf.splitlines() if x and x[0] not in "cp")
    proof = (clause + "\n") * copies + cert.proof
    return bl.Certificate(**{**cert.__dict__, "proof": proof, "proof_sha256": sha256(proof)})


def pack(text: str) -> str:
    return base64.b64encode(zlib.compress(text.encode(), 9)).decode()


# -- the size rule -------------------------------------------------------------------------
@pytest.mark.parametrize("q", [GMT, HARD])
def test_the_proof_bomb_is_refused_before_checking(tmp_path: Path, q: bl.ClaimQuestion) -> None:
    bomb = padded(bl.prove(q).certificate, 20_000)
    with pytest.raises(VerificationError, match=r"the DRAT proof has 20\d\d\d lines, more than"):
        bl.verify(bomb)
    with pytest.raises(VerificationError, match=r"the DRAT proof has 20\d\d\d lines"):
        cf.verify_bounded(bomb, pool=_closed_pool())  # refused here: no worker is asked
    path = tmp_path / "bomb.json"
    cf.save_certificate(bomb, path)
    assert path.stat().st_size < 8_000  # a small body...
    with pytest.raises(VerificationError, match=r"proof\.data inflates past \d+ bytes, more than"):
        cf.verify_file(path)  # ...refused while inflating
    r = CliRunner().invoke(cli, ["verify", str(path), "--json"])
    assert r.exit_code == 1
    assert "20 bytes per CNF byte" in json.loads(r.output)["reason"]


def test_a_padded_proof_within_the_rule_still_verifies() -> None:
    # The rule bounds the size of the work; it is no refutation of a correct proof.
    cert = bl.prove(HARD).certificate
    assert cert.cnf is not None and cert.proof is not None
    room = max_proof_lines(cert.cnf) - cert.proof.count("\n")
    bomb = padded(cert, room)
    assert bl.verify(bomb)
    assert cf.verify_bounded(bomb, time_limit=60)
    with pytest.raises(VerificationError, match="lines, more than"):
        bl.verify(padded(cert, room + 1))


def test_the_rule_counts_bytes_too() -> None:
    cnf = "p cnf 2 1\n1 2 0\n"
    long_line = " ".join(["1"] * 200) + " 0\n"
    assert proof_size_error(cnf, long_line) is None
    too_long = long_line * (max_proof_bytes(len(cnf)) // len(long_line) + 1)
    assert too_long.count("\n") < max_proof_lines(cnf)
    message = proof_size_error(cnf, too_long)
    assert message is not None and message.startswith(f"the DRAT proof has {len(too_long)} bytes")
    assert proof_size_error("c " + "x" * MAX_CNF_BYTES, "") == (
        f"the CNF has {MAX_CNF_BYTES + 2} bytes, more than the {MAX_CNF_BYTES} a CNF may have"
    )


def test_the_real_certificates_are_within_the_rule() -> None:
    # A few of the longest proofs the measurement found (solver/proof_limits.py).
    longest = {"mine": ["P6", "B8", "G10", "G9"], "theirs": ["shield"], "mud": True, "fog": True}
    longest["seen"] = "R1 R3 R4 R10 O7 O10 Y7 G2 G4 G5 G7 G8 B2 B6 B7 B10 P1 P3 P4 P5 P7 P8".split()
    for q in (GMT, HARD, bl.ClaimQuestion.from_json(longest)):
        cert = bl.prove(q).certificate
        assert cert.cnf is not None and cert.proof is not None
        assert proof_size_error(cert.cnf, cert.proof) is None
        assert cf.verify_bounded(cert)


# -- capped inflates -----------------------------------------------------------------------
def _saved(tmp_path: Path, q: bl.ClaimQuestion = GMT) -> tuple[Path, dict[str, object]]:
    path = tmp_path / "cert.json"
    cf.save_certificate(bl.prove(q).certificate, path)
    return path, json.loads(path.read_text())


def _write(path: Path, data: dict[str, object]) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_a_cnf_that_inflates_past_the_cap_is_refused(tmp_path: Path) -> None:
    path, data = _saved(tmp_path)
    data["cnf"]["data"] = pack("c" * (64 * MAX_CNF_BYTES))  # type: ignore[index]
    assert path.stat().st_size < 200_000
    with pytest.raises(VerificationError, match=rf"cnf\.data inflates past {MAX_CNF_BYTES} bytes"):
        cf.verify_file(_write(path, data))


def test_a_truncated_blob_is_not_zlib(tmp_path: Path) -> None:
    path, data = _saved(tmp_path)
    raw = base64.b64decode(data["proof"]["data"])  # type: ignore[index]
    data["proof"]["data"] = base64.b64encode(raw[: len(raw) // 2]).decode()  # type: ignore[index]
    with pytest.raises(VerificationError, match="the proof is not zlib"):
        cf.verify_file(_write(path, data))


def test_a_file_past_the_size_cap_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    with open(path, "wb") as f:
        f.truncate(cf.MAX_FILE_BYTES + 1)  # sparse: nothing to write
    with pytest.raises(InputError, match=r"big\.json: 8388609 bytes, more than the 8388608"):
        cf.load_certificate(path)


# -- the budget ----------------------------------------------------------------------------
def _closed_pool() -> BudgetPool:
    pool = BudgetPool(1)
    pool.close()
    return pool


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_check_out_of_time_is_killed_and_the_pool_goes_on() -> None:
    with BudgetPool(1) as pool:
        pid = pool.run(os.getpid, time_limit=30)
        assert pid != os.getpid()
        assert pool.run(os.getpid, time_limit=30) == pid  # the worker is reused
        with pytest.raises(UndecidedError, match=r"spinning ran out of its time limit \(0\.2 s\)"):
            pool.run(sum, range(10**15), time_limit=0.2, what="spinning")
        assert _gone(pid)  # killed and reaped before run() returned: its core is free
        assert pool.run(sum, range(10), time_limit=30) == 45  # a new worker
        assert pool.run(os.getpid, time_limit=30) != pid


def test_a_check_out_of_memory_is_stopped() -> None:
    with BudgetPool(1) as pool:
        with pytest.raises(UndecidedError, match="ran out of its 64 MiB memory limit"):
            pool.run(bytearray, 1 << 30, time_limit=30, memory_limit=64 << 20)
        assert len(pool.run(bytearray, 1 << 20, time_limit=30, memory_limit=64 << 20)) == 1 << 20


def test_errors_come_back_as_raised() -> None:
    with BudgetPool(1) as pool:
        with pytest.raises(ValueError, match="invalid literal"):
            pool.run(int, "x", time_limit=30)
        assert pool.run(int, "7", time_limit=30) == 7  # the worker survived the error
        with pytest.raises(InputError, match="more than 0 seconds"):
            pool.run(int, "7", time_limit=0)
    with pytest.raises(BattlejudgeError, match="closed"):
        pool.run(int, "7", time_limit=30)


def test_verify_bounded_rejects_and_accepts_like_verify() -> None:
    cert = bl.prove(HARD).certificate
    assert cf.verify_bounded(cert)
    broken = bl.Certificate(**{**cert.__dict__, "blocking": (bl.Card.parse("Y3"),)})
    with pytest.raises(VerificationError, match="blocking card Y3 is not a face-up troop"):
        cf.verify_bounded(broken)


def test_a_witness_is_replayed_here_without_a_worker() -> None:
    invalid = bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8")).certificate
    assert cf.verify_bounded(invalid, pool=_closed_pool())
    with pytest.raises(BattlejudgeError, match="closed"):  # deep runs the oracle: a worker
        cf.verify_bounded(invalid, deep=True, pool=_closed_pool())


def test_verify_time_limit_is_exit_3(tmp_path: Path) -> None:
    path = tmp_path / "cert.json"
    cf.save_certificate(bl.prove(SLOW_DEEP).certificate, path)
    r = CliRunner().invoke(cli, ["verify", str(path), "--deep", "--time-limit", "0.2"])
    assert r.exit_code == 3, r.output
    assert r.output == (
        "battlejudge: error: undecided: checking the certificate ran out of its time "
        "limit (0.2 s)\n"
    )
    r = CliRunner().invoke(cli, ["verify", str(path), "--deep", "--time-limit", "0.2", "--json"])
    assert r.exit_code == 3
    assert json.loads(r.output)["verified"] is None
    r = CliRunner().invoke(cli, ["verify", str(path), "--time-limit", "0"])
    assert r.exit_code == 2 and "time-limit" in r.output
    assert CliRunner().invoke(cli, ["verify", str(path)]).exit_code == 0
