"""Proof logs: the record format, the hash chain, signatures, crashes, concurrent
writers, and key files."""

from __future__ import annotations

import base64
import hashlib
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from battlejudge.proofs import keys
from battlejudge.proofs.audit import audit_log
from battlejudge.proofs.battleline.certificate import to_file_model
from battlejudge.proofs.log import (
    GENESIS,
    ProofLog,
    append_proved,
    chain_prepared,
    chain_record,
    claim_record,
    encode_record,
    game_record,
    prepare_record,
    read_log,
)
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import InputError

# The README's claim: Blue 7 and Blue 10 are face up, so B8 cannot become a Wedge.
VALID = bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10"))
INVALID = bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8"))  # a witness: B7 B9
KEY = Ed25519PrivateKey.generate()


def cert_json(p: bl.ProvedClaim) -> dict[str, Any]:
    return to_file_model(p.certificate).model_dump(mode="json")


def canonical(record: dict[str, Any]) -> bytes:
    return json.dumps(record, sort_keys=True, separators=(",", ":")).encode()


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


def write_log(path: Path, n: int, key: Ed25519PrivateKey | None = KEY, **kw: Any) -> None:
    with ProofLog(path, key, **kw) as log:
        for i in range(n):
            append_proved(log, INVALID if i % 2 == 0 else VALID, game="g1", turn=i, flag=1 + i % 9)


# -- the record format -------------------------------------------------------------------
def test_records_have_the_documented_shape(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    with ProofLog(path, KEY) as log:
        first = append_proved(log, VALID, game="g7", turn=12, player="north", flag=3)
        second = log.append(
            question=INVALID.question.to_json(),
            verdict="invalid",
            certificate=cert_json(INVALID),
            time="2026-11-21T10:00:00.000Z",
        )
    raw = lines(path)
    assert raw[2] == b"" and len(raw) == 3  # two lines, each ended by a newline
    assert raw[0] == canonical(first) and raw[1] == canonical(second)
    assert set(first) == {
        *("seq", "game", "turn", "player", "flag", "question", "verdict", "certificate"),
        *("time", "prev", "sig"),
    }
    assert (first["seq"], first["game"], first["turn"], first["player"], first["flag"]) == (
        0,
        "g7",
        12,
        "north",
        3,
    )
    assert first["question"] == VALID.question.to_json()
    assert first["verdict"] == "valid" and first["certificate"] == cert_json(VALID)
    assert first["prev"] == GENESIS == "0" * 64
    assert second["seq"] == 1 and second["prev"] == hashlib.sha256(raw[0]).hexdigest()
    assert second["game"] is None and second["time"] == "2026-11-21T10:00:00.000Z"
    assert first["time"].endswith("Z") and datetime.fromisoformat(first["time"]).tzinfo
    back = read_log(path)[0][0]
    assert (back.index, back.seq, back.game, back.turn, back.player, back.flag) == (
        0,
        0,
        "g7",
        12,
        "north",
        3,
    )
    assert (back.question, back.verdict, back.time) == (
        first["question"],
        "valid",
        first["time"],
    )
    assert back.certificate == first["certificate"] and back.sig == first["sig"]
    assert back.raw == raw[0] and back.digest == second["prev"]
    unsigned = canonical({k: v for k, v in first.items() if k != "sig"})
    KEY.public_key().verify(base64.b64decode(first["sig"]), unsigned)  # raises if wrong


def test_an_unsigned_log_has_no_sig(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    record = append_proved(ProofLog(path), INVALID)
    assert "sig" not in record and "sig" not in json.loads(lines(path)[0])


def test_the_question_is_stored_canonically(tmp_path: Path) -> None:
    with ProofLog(tmp_path / "claims.log") as log:
        record = log.append(
            question={"mine": ["r4", "R5", "R3"], "theirs": ["b8"], "seen": ["B10", "B7"]},
            verdict="valid",
            certificate=cert_json(VALID),
        )
    assert record["question"] == VALID.question.to_json()
    assert record["question"]["seen"] == ["B7", "B10"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"verdict": "maybe"}, "verdict must be 'valid' or 'invalid', got 'maybe'"),
        ({"verdict": "invalid"}, "verdict 'invalid' is not the certificate's 'valid'"),
        ({"flag": 0}, "flag must be a number >= 1 (flags count from 1), got 0"),
        ({"turn": -1}, "turn must be a whole number >= 0, got -1"),
        ({"player": 1}, "player must be a string, got 1"),
        ({"time": "noon"}, "time 'noon' is not ISO-8601"),
        ({"question": {"mine": ["R4", "R5", "R11"]}}, "R11"),
        ({"question": INVALID.question.to_json()}, "is not the certificate's"),
    ],
)
def test_bad_values_are_refused_and_nothing_is_written(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    path = tmp_path / "claims.log"
    write_log(path, 1)
    before = path.read_bytes()
    args: dict[str, Any] = {
        "question": VALID.question.to_json(),
        "verdict": "valid",
        "certificate": cert_json(VALID),
        **change,
    }
    with ProofLog(path, KEY) as log, pytest.raises(InputError, match=None) as e:
        log.append(**args)
    assert message in str(e.value) and "\n" not in str(e.value)
    assert path.read_bytes() == before


def test_data_json_cannot_hold_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    write_log(path, 1)
    before = path.read_bytes()
    with ProofLog(path, KEY) as log:
        with pytest.raises(ValueError, match="JSON"):
            log.append(
                question=VALID.question.to_json(),
                verdict="valid",
                certificate=cert_json(VALID) | {"note": float("nan")},
            )
        assert path.read_bytes() == before
        assert append_proved(log, VALID)["seq"] == 1
    assert audit_log(path, KEY.public_key()).ok


def test_reopening_continues_the_chain_and_seq(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    write_log(path, 3)
    with ProofLog(path, KEY) as log:
        assert log.next_seq == 3
        record = append_proved(log, INVALID)
    raw = lines(path)
    assert record["seq"] == 3 and record["prev"] == hashlib.sha256(raw[2]).hexdigest()
    report = audit_log(path, KEY.public_key())
    assert report.ok and [r.seq for r in report.records] == [0, 1, 2, 3]


def test_a_new_log_creates_its_file(tmp_path: Path) -> None:
    path = tmp_path / "new.log"
    log = ProofLog(path)
    assert path.exists() and path.read_bytes() == b"" and log.next_seq == 0
    log.close()
    assert read_log(path) == ([], [])


def test_appends_do_not_read_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer keeps the last hash and seq in memory: an append costs no reading."""
    path = tmp_path / "claims.log"
    write_log(path, 4)
    log = ProofLog(path, KEY)
    reads: list[int] = []
    real = os.pread
    monkeypatch.setattr(os, "pread", lambda fd, n, at: reads.append(n) or real(fd, n, at))
    for _ in range(20):
        append_proved(log, INVALID)
    assert reads == []
    # Another writer appended: the next append reads the new tail (once) to continue.
    append_proved(ProofLog(path, KEY), VALID)
    record = append_proved(log, INVALID)
    assert reads and record["seq"] == 25
    log.close()
    assert audit_log(path, KEY.public_key()).ok


def test_not_a_log_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("shopping list\n")
    with pytest.raises(InputError, match=r"notes\.txt: not a proof log"):
        ProofLog(path)
    assert path.read_text() == "shopping list\n"


# -- crashes -------------------------------------------------------------------------------
CHILD_TORN = r"""
import json, os, sys, time
from battlejudge.proofs.log import ProofLog
path, cert_file = sys.argv[1], sys.argv[2]
cert = json.load(open(cert_file))
log = ProofLog(path)
for turn in range(3):
    log.append(question=cert["question"], verdict=cert["verdict"], certificate=cert, turn=turn)
real = os.write
def half(fd, data):
    data = bytes(data)
    real(fd, data[: len(data) // 2])  # the first half reaches the file, then the crash
    print("torn", flush=True)
    time.sleep(60)
    return len(data)
os.write = half
log.append(question=cert["question"], verdict=cert["verdict"], certificate=cert, turn=3)
"""


def test_a_writer_killed_mid_append(tmp_path: Path) -> None:
    path, cert_file = tmp_path / "claims.log", tmp_path / "cert.json"
    cert_file.write_text(json.dumps(cert_json(INVALID)))
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD_TORN, str(path), str(cert_file)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "torn\n"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL
    torn = lines(path)[3]
    assert torn and not path.read_bytes().endswith(b"\n")
    records, problems = read_log(path)
    assert [r.seq for r in records] == [0, 1, 2]
    assert [(p.record, p.kind) for p in problems] == [(3, "torn")]
    # The dead writer's lock is gone; a new writer starts a new line and goes on.
    with ProofLog(path) as log:
        for turn in (4, 5):
            append_proved(log, VALID, turn=turn)
    assert lines(path)[3] == torn  # the torn bytes are left alone, on a line of their own
    report = audit_log(path)
    assert [(p.record, p.kind) for p in report.problems] == [(3, "torn")]
    assert [(r.index, r.seq) for r in report.records] == [(0, 0), (1, 1), (2, 2), (4, 3), (5, 4)]
    assert report.records[3].prev == report.records[2].digest


_BASE: dict[str, bytes] = {}


def _base_log() -> bytes:
    """Five signed records (invalid claims: their witnesses verify fast), built once."""
    if "log" not in _BASE:
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "base.log"
            with ProofLog(path, KEY) as log:
                for turn in range(5):
                    append_proved(log, INVALID, game="g1", turn=turn)
            _BASE["log"] = path.read_bytes()
    return _BASE["log"]


def vouched(path: Path) -> None:
    """Give a log the checkpoint its writer had written over its complete records, as
    before the crash these tests make by hand (a writer refuses a log without one)."""
    with ProofLog(path, KEY, adopt=True) as log:
        log.write_checkpoint()


@settings(max_examples=30)
@given(cut=st.floats(0.0, 1.0, exclude_max=True))
def test_a_log_truncated_mid_line(cut: float) -> None:
    data = _base_log()
    start = data.rindex(b"\n", 0, len(data) - 1) + 1  # the last line
    keep = start + 1 + int(cut * (len(data) - start - 2))  # at least one byte, not all
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "claims.log"
        path.write_bytes(data[:keep])
        report = audit_log(path, KEY.public_key())
        assert [r.seq for r in report.records] == [0, 1, 2, 3]
        assert [(p.record, p.kind) for p in report.problems] == [(4, "torn")]
        vouched(path)
        with ProofLog(path, KEY) as log:
            record = append_proved(log, VALID, turn=9)
        assert record["seq"] == 4 and record["prev"] == report.records[-1].digest
        assert path.read_bytes().startswith(data[:keep] + b"\n")
        report = audit_log(path, KEY.public_key())
        assert [(p.record, p.kind) for p in report.problems] == [(4, "torn")]
        assert [(r.index, r.seq) for r in report.records][-2:] == [(3, 3), (5, 4)]


def test_a_last_line_missing_only_its_newline_is_a_record(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    path.write_bytes(_base_log()[:-1])
    assert audit_log(path).ok
    vouched(path)
    with ProofLog(path, KEY) as log:
        assert append_proved(log, INVALID)["seq"] == 5
    report = audit_log(path, KEY.public_key())
    assert report.ok and len(report.records) == 6


def test_two_crashes_in_a_row(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    data = _base_log()
    path.write_bytes(data + b'{"certificate":{"bl')
    vouched(path)
    with ProofLog(path, KEY) as log:
        append_proved(log, INVALID)
    with open(path, "ab") as f:
        f.write(b'{"certif')
    with ProofLog(path, KEY) as log:
        append_proved(log, INVALID)
    report = audit_log(path, KEY.public_key())
    assert [(p.record, p.kind) for p in report.problems] == [(5, "torn"), (7, "torn")]
    assert [r.seq for r in report.records] == [0, 1, 2, 3, 4, 5, 6]


# -- concurrent writers --------------------------------------------------------------------
CHILD_WRITER = r"""
import json, os, sys, time
from battlejudge.proofs.log import ProofLog
path, cert_file, name, n, go = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
cert = json.load(open(cert_file))
log = ProofLog(path)
while not os.path.exists(go):
    time.sleep(0.001)
for turn in range(n):
    log.append(question=cert["question"], verdict=cert["verdict"], certificate=cert,
               game=name, turn=turn)
"""


def _check_writers(path: Path, names: list[str], n: int) -> None:
    report = audit_log(path)
    assert report.ok, report.problems
    assert [r.seq for r in report.records] == list(range(len(names) * n))
    for name in names:  # each writer's records whole and in its own order
        turns = [r.data["turn"] for r in report.records if r.data["game"] == name]
        assert turns == list(range(n))


def test_two_processes_append_at_once(tmp_path: Path) -> None:
    path, cert_file, go = tmp_path / "claims.log", tmp_path / "cert.json", tmp_path / "go"
    cert_file.write_text(json.dumps(cert_json(VALID)))  # long lines: ~3.5 kB
    n = 150
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD_WRITER, str(path), str(cert_file), name, str(n), str(go)]
        )
        for name in ("a", "b")
    ]
    go.touch()
    for w in writers:
        assert w.wait(timeout=60) == 0
    _check_writers(path, ["a", "b"], n)


def _forked_writer(log: ProofLog, name: str, n: int) -> None:
    for turn in range(n):
        append_proved(log, INVALID, game=name, turn=turn)


def test_a_log_shared_across_fork(tmp_path: Path) -> None:
    """Children inherit the open log; each reopens the file so the lock separates them."""
    path = tmp_path / "claims.log"
    log = ProofLog(path, sync=False)
    ctx = multiprocessing.get_context("fork")
    children = [ctx.Process(target=_forked_writer, args=(log, name, 100)) for name in "xyz"]
    for c in children:
        c.start()
    for c in children:
        c.join(timeout=60)
        assert c.exitcode == 0
    log.close()
    _check_writers(path, ["x", "y", "z"], 100)


def test_threads_share_one_log(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    with ProofLog(path, KEY, sync=False) as log:
        threads = [threading.Thread(target=_forked_writer, args=(log, name, 50)) for name in "pqrs"]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    _check_writers(path, list("pqrs"), 50)


# -- keys ----------------------------------------------------------------------------------
def test_new_key_pair(tmp_path: Path) -> None:
    private, public = keys.new_key_pair(tmp_path / "judge")
    assert (private.name, public.name) == ("judge.key", "judge.pub")
    assert private.stat().st_mode & 0o777 == 0o600
    assert private.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert public.read_bytes().startswith(b"-----BEGIN PUBLIC KEY-----")
    sk, pk = keys.load_private_key(private), keys.load_public_key(public)
    pk.verify(sk.sign(b"flag 3"), b"flag 3")
    assert keys.key_id(sk) == keys.key_id(pk) and len(keys.key_id(pk)) == 16


@pytest.mark.parametrize("existing", ["judge.key", "judge.pub"])
def test_new_key_pair_never_overwrites(tmp_path: Path, existing: str) -> None:
    (tmp_path / existing).write_text("precious")
    with pytest.raises(InputError, match=f"{existing} already exists"):
        keys.new_key_pair(tmp_path / "judge")
    assert sorted(p.name for p in tmp_path.iterdir()) == [existing]
    assert (tmp_path / existing).read_text() == "precious"


def test_a_prefix_with_dots_keeps_them(tmp_path: Path) -> None:
    private, public = keys.new_key_pair(tmp_path / "judge.v2")
    assert (private.name, public.name) == ("judge.v2.key", "judge.v2.pub")


def test_bad_key_files_are_named(tmp_path: Path) -> None:
    private, public = keys.new_key_pair(tmp_path / "judge")
    with pytest.raises(InputError, match=r"missing\.pub: cannot read the public key"):
        keys.load_public_key(tmp_path / "missing.pub")
    with pytest.raises(InputError, match=r"judge\.pub: not an unencrypted PEM private key"):
        keys.load_private_key(public)
    with pytest.raises(InputError, match=r"judge\.key: not a PEM public key"):
        keys.load_public_key(private)
    ec_key = tmp_path / "ec.pub"
    ec_key.write_bytes(
        ec.generate_private_key(ec.SECP256R1())
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    with pytest.raises(InputError, match=r"ec\.pub: not an Ed25519 public key"):
        keys.load_public_key(ec_key)


def test_a_loaded_key_signs_a_log(tmp_path: Path) -> None:
    private, public = keys.new_key_pair(tmp_path / "judge")
    path = tmp_path / "claims.log"
    write_log(path, 2, keys.load_private_key(private))
    assert audit_log(path, public).ok
    # another key: every record's signature fails, and the checkpoint's
    assert {p.kind for p in audit_log(path, KEY.public_key()).problems} == {
        "bad-signature",
        "checkpoint",
    }


@settings(max_examples=200)
@given(
    turn=st.none() | st.integers(0, 10**6),
    flag=st.none() | st.integers(1, 9),
    game=st.none() | st.text(max_size=12),
    player=st.none() | st.sampled_from(["north", "south", ',"time":"x"']),
    seq=st.integers(0, 10**9),
)
def test_a_signed_line_is_the_encoding_of_the_signed_record(
    turn: int | None, flag: int | None, game: str | None, player: str | None, seq: int
) -> None:
    """chain_record splices ``sig`` into the line it signed instead of encoding twice: the
    bytes must be exactly encode_record's of the signed record, whatever the values."""
    record = claim_record(
        question=INVALID.question.to_json(),
        verdict=INVALID.verdict,
        certificate=to_file_model(INVALID.certificate).model_dump(mode="json"),
        game=game,
        turn=turn,
        player=player,
        flag=flag,
    )
    out, line = chain_record(record, seq, "a" * 64, KEY)
    assert line == encode_record(out)
    assert json.loads(line)["sig"] == out["sig"]
    repair = {"v": 2, "kind": "repair", "time": "2026-01-01T00:00:00Z", "repair": {}}
    out, line = chain_record(repair, seq, "b" * 64, KEY)
    assert line == encode_record(out)


@settings(max_examples=200)
@given(
    turn=st.none() | st.integers(0, 10**6),
    game=st.none() | st.text(max_size=12),
    player=st.none() | st.sampled_from(["north", '"prev":"!PREV!"', '"seq":"!SEQ!",']),
    seq=st.integers(0, 10**9),
    signed=st.booleans(),
)
def test_a_prepared_record_chains_to_the_same_line(
    turn: int | None, game: str | None, player: str | None, seq: int, signed: bool
) -> None:
    """A service worker encodes the record ahead (prepare_record); the writer only puts in
    seq, prev and sig: the line must be exactly the one chain_record makes."""
    record = claim_record(
        question=INVALID.question.to_json(),
        verdict=INVALID.verdict,
        certificate=to_file_model(INVALID.certificate).model_dump(mode="json"),
        game=game,
        turn=turn,
        player=player,
    )
    key = KEY if signed else None
    _, fast = chain_prepared(prepare_record(record), seq, "c" * 64, key)
    full, line = chain_record(record, seq, "c" * 64, key)
    assert fast == line == encode_record(full)
    headers = game_record("g-1", ['[Event "x"]', '[Result "north"]'])
    assert (
        chain_prepared(prepare_record(headers), seq, "d" * 64, key)[1]
        == (chain_record(headers, seq, "d" * 64, key)[1])
    )
