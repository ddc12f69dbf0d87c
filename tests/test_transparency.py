"""Checkpoints, inclusion and consistency proofs on file logs (issue 16, item 1): the
checkpoint format, what the audit sees against it, the proof commands and their exit
codes."""

from __future__ import annotations

import base64
import hashlib
import json
import multiprocessing
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from battlejudge.cli.main import cli
from battlejudge.proofs.audit import audit_log
from battlejudge.proofs.checkpoint import (
    Checkpoint,
    CheckpointError,
    parse_checkpoint,
    verify_checkpoint,
)
from battlejudge.proofs.log import ProofLog, append_proved, checkpoint_path
from battlejudge.proofs.merkle import MerkleTree, leaf_hash
from battlejudge.proofs.repair import repair_log
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import InputError

VALID = bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10"))
INVALID = bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8"))
KEY = Ed25519PrivateKey.generate()
N = 6


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def make_log(path: Path, n: int = N, key: Ed25519PrivateKey | None = KEY) -> list[bytes]:
    with ProofLog(path, key, sync=False) as log:
        for i in range(n):
            append_proved(log, VALID if i % 2 else INVALID, game="g", turn=i, flag=1)
    return path.read_bytes().splitlines()


def write(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(x + b"\n" for x in lines))


@pytest.fixture
def pub(tmp_path: Path) -> Path:
    path = tmp_path / "judge.pub"
    path.write_bytes(
        KEY.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return path


def kinds(path: Path) -> list[tuple[int, str]]:
    return [(p.record, p.kind) for p in audit_log(path, KEY.public_key()).problems]


# -- the checkpoint ----------------------------------------------------------------------------
def test_every_append_writes_a_signed_checkpoint_of_the_records(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    lines = make_log(path, 3)
    note = checkpoint_path(path).read_text()
    head = verify_checkpoint(note, KEY.public_key())
    assert head.size == 3
    assert head.root == MerkleTree(leaf_hash(x) for x in lines).root()
    # c2sp.org/signed-note, checked here by hand: text, blank line, one signature line
    text, sig_line = note.split("\n\n")
    origin, size, root, time = text.split("\n")
    assert (size, base64.b64decode(root)) == ("3", head.root) and time.startswith("time ")
    dash, name, blob = sig_line.rstrip("\n").split(" ")
    assert dash == "\u2014" and name == origin
    raw_key = KEY.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    sig = base64.b64decode(blob)
    assert sig[:4] == hashlib.sha256(name.encode() + b"\n\x01" + raw_key).digest()[:4]
    KEY.public_key().verify(sig[4:], (text + "\n").encode())
    # one checkpoint per batch
    with ProofLog(path, KEY, sync=False) as log:
        e = {"question": VALID.question.to_json(), "verdict": "valid", "game": "g"}
        from battlejudge.proofs.battleline.certificate import to_file_model

        e["certificate"] = to_file_model(VALID.certificate).model_dump(mode="json")
        assert [r["seq"] for r in log.append_batch([e, e, e])] == [3, 4, 5]
    assert parse_checkpoint(checkpoint_path(path).read_text()).checkpoint.size == 6
    assert audit_log(path, KEY.public_key()).ok


def test_a_checkpoint_that_is_not_one() -> None:
    good = Checkpoint("battlejudge/x", 2, b"\0" * 32, "2026-01-01T00:00:00.000Z").sign(KEY)
    assert parse_checkpoint(good).checkpoint.size == 2
    for bad, why in (
        ("", "ends with a newline"),
        ("a\nb\n", "origin, a tree size and a root hash"),
        (good.replace("\n2\n", "\n02\n"), "tree size '02'"),
        (good.replace("time ", "tim "), "no 'time"),
        (good.replace("\u2014 ", "- "), "not a signature line"),
        ("o\n1\nAAAA\ntime 2026-01-01\n", "not a base64 SHA-256"),
    ):
        with pytest.raises(CheckpointError, match=why):
            parse_checkpoint(bad)
    other = Ed25519PrivateKey.generate()
    with pytest.raises(CheckpointError, match="not signed by this key"):
        verify_checkpoint(good, other.public_key())
    forged = good.replace("\n2\n", "\n3\n")
    with pytest.raises(CheckpointError, match="does not match the checkpoint"):
        verify_checkpoint(forged, KEY.public_key())


# -- the audit against it --------------------------------------------------------------------
def test_records_cut_from_the_end_are_named(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    lines = make_log(path)
    write(path, lines[:-2])
    problems = audit_log(path, KEY.public_key()).problems
    assert [(p.record, p.kind) for p in problems] == [(N - 2, "truncated")]
    assert "2 records missing from the end (seqs 4 to 5" in problems[0].detail
    # a writer will not chain over the cut, which the chain itself cannot show
    with pytest.raises(InputError, match="records were cut from its end"):
        ProofLog(path, KEY)
    assert path.read_bytes().count(b"\n") == N - 2


def test_a_cut_last_record_is_tampering_not_a_torn_write(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    make_log(path)
    path.write_bytes(path.read_bytes()[:-40])
    assert kinds(path) == [(N - 1, "torn"), (N, "truncated")]
    with pytest.raises(InputError, match="not appending"):
        ProofLog(path, KEY)


def test_an_edited_last_record_of_an_unsigned_log_shows(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    lines = make_log(path, key=None)
    lines[-1] = lines[-1].replace(b'"turn":5', b'"turn":9')
    write(path, lines)
    report = audit_log(path)
    assert [(p.record, p.kind) for p in report.problems] == [(N - 1, "checkpoint")]
    with pytest.raises(InputError, match="changed"):
        ProofLog(path)


def test_a_deleted_checkpoint_leaves_the_chain_checks(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    make_log(path)
    checkpoint_path(path).unlink()
    report = audit_log(path, KEY.public_key())
    assert report.ok and report.checkpoint is None
    r = run("audit", str(path))
    assert "No checkpoint" in r.stdout
    # log checkpoint --write gives an old log its first checkpoint
    assert run("log", "checkpoint", str(path)).exit_code == 2
    key = tmp_path / "judge.key"
    key.write_bytes(
        KEY.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    r = run("log", "checkpoint", str(path), "--write", "--key", str(key))
    assert r.exit_code == 0 and verify_checkpoint(r.stdout, KEY.public_key()).size == N
    assert audit_log(path, KEY.public_key()).checkpoint is not None


def test_a_repair_writes_a_new_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    lines = make_log(path)
    path.write_bytes(b"".join(x + b"\n" for x in lines) + b'{"torn')
    assert repair_log(path, KEY) is not None
    report = audit_log(path, KEY.public_key())
    assert report.ok and report.checkpoint is not None and report.checkpoint.size == N + 1


def _append_some(path: str, n: int) -> None:
    with ProofLog(path, KEY, sync=False) as log:
        for i in range(n):
            append_proved(log, VALID, game="w", turn=i, flag=1)


def test_concurrent_file_writers_leave_a_matching_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_append_some, args=(str(path), 12)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    report = audit_log(path, KEY.public_key())
    assert report.ok and report.checkpoint is not None and report.checkpoint.size == 48


# -- proofs ----------------------------------------------------------------------------------
def test_inclusion_proofs(tmp_path: Path, pub: Path) -> None:
    path = tmp_path / "claims.log"
    lines = make_log(path)
    for seq in range(N):
        r = run("log", "prove", str(path), "--record", str(seq))
        assert r.exit_code == 0, r.output
        proof = json.loads(r.stdout)
        assert proof["index"] == seq and proof["record"].encode() == lines[seq]
        assert proof["tree_size"] == N and len(proof["audit_path"]) == (3 if seq < 4 else 2)
        (tmp_path / "p.json").write_text(r.stdout)
        r = run("log", "verify-inclusion", str(tmp_path / "p.json"), "--pubkey", str(pub))
        assert r.exit_code == 0, r.output
    good = json.loads((tmp_path / "p.json").read_text())
    for change in (
        {"index": 2},
        {"record": good["record"].replace('"turn":5', '"turn":4')},
        {"audit_path": good["audit_path"][::-1]},
        {"tree_size": N + 1},
        {"checkpoint": good["checkpoint"].replace(f"\n{N}\n", f"\n{N + 1}\n")},
    ):
        (tmp_path / "bad.json").write_text(json.dumps(good | change))
        r = run("log", "verify-inclusion", str(tmp_path / "bad.json"), "--pubkey", str(pub))
        assert r.exit_code == 1, (change, r.output)
        assert "does NOT hold" in r.stdout
    for unreadable in ("{", json.dumps(good | {"audit_path": ["zz"]}), json.dumps([1])):
        (tmp_path / "bad.json").write_text(unreadable)
        r = run("log", "verify-inclusion", str(tmp_path / "bad.json"), "--pubkey", str(pub))
        assert r.exit_code == 2 and "Traceback" not in r.output
    r = run("log", "verify-inclusion", str(tmp_path / "p.json"), "--pubkey", str(path))
    assert r.exit_code == 2  # not a key
    other = tmp_path / "other.pub"
    other.write_bytes(
        Ed25519PrivateKey.generate()
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    r = run("log", "verify-inclusion", str(tmp_path / "p.json"), "--pubkey", str(other), "--json")
    assert r.exit_code == 1 and json.loads(r.stdout)["holds"] is False
    r = run("log", "prove", str(path), "--record", str(N))
    assert r.exit_code == 2 and "no record 6" in r.stderr


def test_consistency_proofs(tmp_path: Path, pub: Path) -> None:
    path = tmp_path / "claims.log"
    make_log(path, 3)
    old = tmp_path / "seen-at-round-1.checkpoint"
    old.write_text(checkpoint_path(path).read_text())
    make_log(path, 4)  # the tournament goes on
    r = run("log", "prove-consistency", str(path), "--from", str(old))
    assert r.exit_code == 0, r.output
    proof = tmp_path / "c.json"
    proof.write_text(r.stdout)
    r = run("log", "verify-consistency", str(proof), "--pubkey", str(pub))
    assert r.exit_code == 0 and "grew into the log of 7 records" in r.stdout
    data = json.loads(proof.read_text())
    data["path"][0] = "00" * 32
    proof.write_text(json.dumps(data))
    r = run("log", "verify-consistency", str(proof), "--pubkey", str(pub))
    assert r.exit_code == 1
    proof.write_text("[]")
    assert run("log", "verify-consistency", str(proof), "--pubkey", str(pub)).exit_code == 2
    # a log rewritten since the old checkpoint has no consistency proof
    path.unlink()
    checkpoint_path(path).unlink()
    make_log(path, 7)  # as long, but another history (other times)
    r = run("log", "prove-consistency", str(path), "--from", str(old))
    assert r.exit_code == 1 and "rewritten" in r.stderr


def test_checking_a_proof_loads_neither_the_log_nor_the_solver() -> None:
    code = (
        "import sys, battlejudge.proofs.transparency as t; "
        "print(sorted(m for m in sys.modules if m.startswith('battlejudge')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout.replace("'", '"')))
    assert "battlejudge.proofs.log" not in loaded
    assert not any(m.startswith("battlejudge.solver.battleline") for m in loaded)
    assert loaded <= {
        "battlejudge",
        "battlejudge.proofs",
        "battlejudge.proofs.checkpoint",
        "battlejudge.proofs.keys",
        "battlejudge.proofs.merkle",
        "battlejudge.proofs.proof_files",
        "battlejudge.proofs.transparency",
        "battlejudge.solver",
        "battlejudge.solver.errors",
    }
