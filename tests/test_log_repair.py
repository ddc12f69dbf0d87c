"""``battlejudge log repair``: lines that are not records are moved aside, the rest
re-chained, the repair logged; the log then audits clean and takes appends (issue 15,
item 5)."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from battlejudge.cli.main import cli
from battlejudge.proofs.audit import audit_log
from battlejudge.proofs.log import (
    FORMAT_VERSION,
    REPAIR_FORMAT,
    ProofLog,
    append_proved,
    checkpoint_path,
    read_log,
)
from battlejudge.proofs.repair import repair_log
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import InputError

VALID = bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10"))
INVALID = bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8"))
KEY = Ed25519PrivateKey.generate()
N = 5
DEEP = "[" * 100_000 + "]" * 100_000


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def make_log(path: Path, n: int = N, key: Ed25519PrivateKey | None = None) -> list[bytes]:
    """A log of n records, without its checkpoint (the damage these tests make by hand
    would show against it too; repairs and checkpoints: test_transparency.py)."""
    with ProofLog(path, key, sync=False) as log:
        for i in range(n):
            append_proved(log, INVALID if i % 2 else VALID, game="g", turn=i, flag=1)
    checkpoint_path(path).unlink()
    return path.read_bytes().splitlines()


def write(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(x + b"\n" for x in lines))


def damaged(path: Path, index: int = 2, key: Ed25519PrivateKey | None = None) -> bytes:
    """A log whose record ``index`` was damaged into JSON past the depth limit (the issue's
    malformed record); returns the damaged line."""
    lines = make_log(path, key=key)
    record = json.loads(lines[index])
    record["turn"] = "@"
    lines[index] = json.dumps(record).replace('"@"', DEEP).encode()
    write(path, lines)
    return lines[index]


def kinds(path: Path, pubkey: object = None) -> list[tuple[int, str]]:
    return [(p.record, p.kind) for p in audit_log(path, pubkey).problems]  # type: ignore[arg-type]


def pem(tmp_path: Path) -> Path:
    public = tmp_path / "judge.pub"
    public.write_bytes(
        KEY.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return public


def test_a_damaged_record_is_moved_aside_and_the_rest_rechained(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    bad = damaged(path)
    before = path.read_bytes()
    assert kinds(path) == [(2, "malformed"), (3, "deleted")]
    done = repair_log(path)
    assert done is not None
    assert [(p.record, p.kind) for p in done.moved] == [(2, "malformed")]
    assert done.to == tmp_path / f"claims.log.moved-{N - 1}"
    assert done.to.read_bytes() == bad + b"\n"  # as it was, byte for byte
    assert done.rechained == 2  # the two records after it
    assert done.record["repair"] == {
        "moved": [{"line": 2, "sha256": hashlib.sha256(bad).hexdigest()}],
        "to": f"claims.log.moved-{N - 1}",
        "before": hashlib.sha256(before).hexdigest(),
        "rechained": 2,
    }
    assert done.record["v"] == REPAIR_FORMAT and done.record["kind"] == "repair"
    report = audit_log(path, deep=True)
    assert report.ok, report.problems
    assert [r.seq for r in report.records] == list(range(N))
    assert [r.kind for r in report.records] == ["claim"] * (N - 1) + ["repair"]
    assert report.to_json()["repairs"] == [{"record": N - 1, **done.record["repair"]}]
    # The log goes on taking appends, and they audit clean.
    with ProofLog(path, sync=False) as log:
        assert append_proved(log, VALID)["seq"] == N
    assert audit_log(path).ok
    assert repair_log(path) is None  # nothing left to repair


def test_a_line_that_was_never_a_record_needs_no_rechaining(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    lines = make_log(path, key=KEY)
    write(path, [*lines[:3], b"pasted by mistake", *lines[3:]])
    with pytest.raises(InputError, match="the log is signed: give the key"):
        repair_log(path)
    done = repair_log(path, KEY)
    assert done is not None and done.rechained == 0
    after = path.read_bytes().splitlines()
    assert after[:N] == lines  # every record kept byte for byte, signatures and all
    assert audit_log(path, KEY.public_key()).ok


def test_a_signed_log_is_resigned(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    damaged(path, 1, key=KEY)
    with pytest.raises(InputError, match="the log is signed"):
        repair_log(path)
    done = repair_log(path, KEY)
    assert done is not None and done.rechained == 3
    assert audit_log(path, KEY.public_key()).ok
    other = Ed25519PrivateKey.generate().public_key()
    # the records and the new checkpoint are all signed with KEY
    assert {k for _, k in kinds(path, other)} == {"bad-signature", "checkpoint"}


def test_torn_lines_are_moved_too(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    lines = make_log(path)
    path.write_bytes(b"".join(x + b"\n" for x in lines) + lines[0][:40])
    assert kinds(path) == [(N, "torn")]
    done = repair_log(path)
    assert (
        done is not None and done.rechained == 0 and done.to.read_bytes() == lines[0][:40] + b"\n"
    )
    assert audit_log(path).ok


@pytest.mark.parametrize("damage", ["edit", "delete"])
def test_other_damage_is_not_rechained_around(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "claims.log"
    lines = make_log(path)
    if damage == "edit":
        lines[1] = lines[1].replace(b'"turn":1', b'"turn":7')
        message = r"record 1: edited: its SHA-256 is not the prev of record 2"
    else:
        del lines[1]
        message = r"record 1: deleted: 1 record missing"
    write(path, [*lines, b"garbage"])
    before = path.read_bytes()
    with pytest.raises(InputError, match=message):
        repair_log(path)
    assert path.read_bytes() == before
    # nothing moved aside either (the tiles are the tree's, written with the log)
    assert [p for p in tmp_path.iterdir() if p.suffix != ".tiles"] == [path]


def test_a_writer_opened_before_the_repair_appends_to_the_repaired_log(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    damaged(path)
    with ProofLog(path, sync=False, adopt=True) as log:  # no checkpoint: taken as it is
        assert repair_log(path) is not None
        assert append_proved(log, VALID)["seq"] == N  # after the repair record
    records, problems = read_log(path)
    assert problems == [] and len(records) == N + 1
    assert audit_log(path).ok


def test_a_record_of_a_later_format_is_named(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    lines = make_log(path, 2)
    future = {"v": FORMAT_VERSION + 1, "kind": "merkle", "seq": 2, "prev": "0" * 64}
    write(path, [*lines, json.dumps(future).encode()])
    before = path.read_bytes()
    # refused, never guessed at: not audited, not repaired, not appended to (issue 16)
    message = (
        f"record 2: log format version {FORMAT_VERSION + 1}: this battlejudge reads "
        f"versions 1 to {FORMAT_VERSION}; upgrade battlejudge"
    )
    with pytest.raises(InputError, match=message):
        audit_log(path)
    with pytest.raises(InputError, match=message):
        repair_log(path)
    with pytest.raises(InputError, match=message):
        ProofLog(path)
    assert path.read_bytes() == before
    r = run("audit", str(path))
    assert r.exit_code == 2 and "upgrade battlejudge" in r.stderr


def test_a_forged_repair_record_is_caught_like_any_record(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    damaged(path, key=KEY)
    repair_log(path, KEY)
    lines = path.read_bytes().splitlines()
    record = json.loads(lines[-1])
    record["repair"]["rechained"] = 0
    lines[-1] = json.dumps(record, sort_keys=True, separators=(",", ":")).encode()
    write(path, lines)
    # the repair's checkpoint catches the edit too
    assert kinds(path, KEY.public_key()) == [(N - 1, "bad-signature"), (N - 1, "checkpoint")]
    checkpoint_path(path).unlink()
    assert kinds(path, KEY.public_key()) == [(N - 1, "bad-signature")]
    record["sig"] = base64.b64encode(b"x" * 64).decode()
    del record["repair"]["to"]
    lines[-1] = json.dumps(record).encode()
    write(path, lines)
    assert kinds(path) == [(N - 1, "malformed")]


def test_log_repair_command(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    damaged(path, key=KEY)
    key = tmp_path / "judge.key"
    key.write_bytes(
        KEY.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    r = run("audit", str(path))
    assert r.exit_code == 1 and "record 2: malformed: turn[0][0][0]" in r.stdout
    r = run("log", "repair", str(path))
    assert r.exit_code == 2 and "the log is signed: give the key" in r.output
    r = run("log", "repair", str(path), "--key", str(key))
    assert r.exit_code == 0, r.output
    assert r.stdout == (
        f"{path}: 1 line (2) moved aside to claims.log.moved-{N - 1}, 2 records "
        f"re-chained; logged as record {N - 1}.\n"
    )
    r = run("audit", str(path), "--pubkey", str(pem(tmp_path)))
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[-1].startswith(f"record {N - 1}: repaired at ")
    assert r.stdout.splitlines()[-1].endswith(
        f": 1 line (2) moved aside to claims.log.moved-{N - 1}, 2 records re-chained."
    )
    r = run("log", "repair", str(path), "--json", "--key", str(key))
    assert r.exit_code == 0 and json.loads(r.stdout) == {"repaired": False}
    r = run("log", "repair", str(tmp_path / "missing.log"))
    assert r.exit_code == 2
