"""Auditing proof logs: every kind of damage is found and named with its record, and
the ``audit`` and ``keys new`` commands (CliRunner)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from battlejudge.cli.logs import audit_report
from battlejudge.cli.main import cli
from battlejudge.proofs.audit import AuditReport, LogRecord, Problem, audit_log, chain_problems
from battlejudge.proofs.battleline.certificate import to_file_model
from battlejudge.proofs.keys import new_key_pair
from battlejudge.proofs.log import (
    GENESIS,
    ProofLog,
    VouchError,
    append_proved,
    checkpoint_path,
    read_log,
)
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import InputError

VALID = bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10"))
INVALID = bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8"))
OTHER = bl.prove(bl.ClaimQuestion(mine="R9 R10 R8", theirs="B2 B3"))  # valid, another flag
KEY = Ed25519PrivateKey.generate()
PUB = KEY.public_key()
N = 6


# -- a second, plain implementation of the format, to forge and reseal records ------------
def line(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"))


def reseal(records: list[dict[str, Any]], key: Ed25519PrivateKey | None = KEY) -> list[str]:
    """Lines with ``seq``, ``prev`` and ``sig`` made right: what a writer holding the key
    would have written (so only the deliberate damage remains)."""
    out, prev = [], GENESIS
    for seq, r in enumerate(records):
        r = {k: v for k, v in r.items() if k != "sig"} | {"seq": seq, "prev": prev}
        if key is not None:
            r["sig"] = base64.b64encode(key.sign(line(r).encode())).decode()
        out.append(line(r))
        prev = hashlib.sha256(out[-1].encode()).hexdigest()
    return out


def make_log(
    path: Path, n: int = N, key: Ed25519PrivateKey | None = KEY, checkpoint: bool = False
) -> list[str]:
    """A log of n records, alternating invalid and valid claims; returns its lines.
    Without its checkpoint unless asked: the tests of the chain audit it as a log written
    before checkpoints (the tests of checkpoints are in test_transparency.py)."""
    with ProofLog(path, key, sync=False) as log:
        for i in range(n):
            append_proved(log, INVALID if i % 2 == 0 else VALID, game="g1", turn=i, flag=2)
    if not checkpoint:
        checkpoint_path(path).unlink()
    return path.read_text().splitlines()


def save(path: Path, lines: Sequence[str]) -> Path:
    path.write_text("".join(f"{x}\n" for x in lines))
    return path


def found(report: AuditReport) -> list[tuple[int, str]]:
    return [(p.record, p.kind) for p in report.problems]


@pytest.fixture
def log(tmp_path: Path) -> tuple[Path, list[str]]:
    path = tmp_path / "claims.log"
    return path, make_log(path)


def edit(text: str, **change: Any) -> str:
    return line(json.loads(text) | change)


# -- a clean log ---------------------------------------------------------------------------
def test_a_clean_log(log: tuple[Path, list[str]]) -> None:
    path, _ = log
    report = audit_log(path, PUB)
    assert report.ok and report.problems == []
    assert [r.seq for r in report.records] == list(range(N))
    assert report.to_json() == {
        "ok": True,
        "records": N,
        "problems": [],
        "signatures": {"checked": True, "signed": N, "unsigned": 0},
        "repairs": [],
        "checkpoint": None,
    }
    assert audit_log(path, deep=True).ok


def test_an_empty_log_is_clean(tmp_path: Path) -> None:
    (tmp_path / "empty.log").write_bytes(b"")
    assert audit_log(tmp_path / "empty.log").to_json() == {
        "ok": True,
        "records": 0,
        "problems": [],
        "signatures": {"checked": False, "signed": 0, "unsigned": 0},
        "repairs": [],
        "checkpoint": None,
    }


# -- the chain -----------------------------------------------------------------------------
def test_an_edited_record(log: tuple[Path, list[str]]) -> None:
    path, lines = log
    lines[2] = edit(lines[2], player="south")
    save(path, lines)
    assert found(audit_log(path)) == [(2, "edited")]
    assert found(audit_log(path, PUB)) == [(2, "edited"), (2, "bad-signature")]
    assert "not the prev of record 3" in audit_log(path).problems[0].detail


def test_an_edited_last_record_shows_by_its_signature(log: tuple[Path, list[str]]) -> None:
    path, lines = log
    lines[-1] = edit(lines[-1], turn=40)
    save(path, lines)
    assert audit_log(path).ok  # nothing follows it: the chain cannot tell
    assert found(audit_log(path, PUB)) == [(N - 1, "bad-signature")]


def test_an_edited_seq(log: tuple[Path, list[str]]) -> None:
    path, lines = log
    lines[3] = edit(lines[3], seq=40)
    save(path, lines)
    report = audit_log(path)
    assert found(report) == [(3, "edited")]
    assert report.problems[0].detail == "seq is 40, but the chain puts it right after seq 2"


@pytest.mark.parametrize(
    ("gone", "expected", "detail"),
    [
        ([2], [(2, "deleted")], "1 record missing before it (seq 2)"),
        ([2, 3], [(2, "deleted")], "2 records missing before it (seqs 2 to 3)"),
        ([0], [(0, "deleted")], "1 record missing before it (seq 0)"),
    ],
)
def test_deleted_records(
    log: tuple[Path, list[str]], gone: list[int], expected: list[tuple[int, str]], detail: str
) -> None:
    path, lines = log
    save(path, [x for i, x in enumerate(lines) if i not in gone])
    report = audit_log(path, PUB)
    assert found(report) == expected and report.problems[0].detail == detail


def test_a_deleted_last_record_is_not_visible(log: tuple[Path, list[str]]) -> None:
    """The known limit of a hash chain: a cut at the end leaves a shorter, sound log."""
    path, lines = log
    save(path, lines[:-1])
    assert audit_log(path, PUB).ok


def test_swapped_records(log: tuple[Path, list[str]]) -> None:
    path, lines = log
    lines[2], lines[3] = lines[3], lines[2]
    save(path, lines)
    report = audit_log(path, PUB)
    assert [p.kind for p in report.problems] == ["reordered"]
    assert report.problems[0].record in (2, 3)


def test_a_record_moved_to_the_end(log: tuple[Path, list[str]]) -> None:
    path, lines = log
    save(path, lines[:1] + lines[2:] + lines[1:2])
    report = audit_log(path, PUB)
    assert found(report) == [(N - 1, "reordered")]
    assert (
        report.problems[0].detail
        == f"seq 1 is out of order (it comes after seq {N - 1} in the file)"
    )


def test_an_inserted_copy(log: tuple[Path, list[str]]) -> None:
    path, lines = log
    save(path, [*lines[:2], lines[4], *lines[2:]])
    report = audit_log(path, PUB)
    assert found(report) == [(2, "inserted")]
    assert report.problems[0].detail == "a copy of record 5 (seq 4)"


@pytest.mark.parametrize("prev", ["copied", "made up"])
def test_an_inserted_forgery(log: tuple[Path, list[str]], prev: str) -> None:
    path, lines = log
    forged = json.loads(lines[3]) | {"turn": 99}
    if prev == "made up":
        forged |= {"prev": "ab" * 32, "seq": 77}
    save(path, [*lines[:3], line(forged), *lines[3:]])
    assert found(audit_log(path)) == [(3, "inserted")]
    assert found(audit_log(path, PUB)) == [(3, "inserted"), (3, "bad-signature")]


def test_a_forgery_inserted_first(log: tuple[Path, list[str]]) -> None:
    path, lines = log
    forged = json.loads(lines[0]) | {"turn": 99}
    save(path, [line(forged), *lines])
    report = audit_log(path)
    assert found(report) == [(0, "inserted")]
    assert "record 1 follows the start of the log" in report.problems[0].detail


def test_a_resealed_log_without_signatures_is_undetectable(log: tuple[Path, list[str]]) -> None:
    """Without a key, anyone can rewrite and rechain the whole log; a key stops that."""
    path, lines = log
    records = [json.loads(x) for x in lines]
    records[1]["turn"] = 41
    save(path, reseal(records, key=None))
    assert audit_log(path).ok
    assert found(audit_log(path, PUB)) == [(i, "unsigned") for i in range(N)]


# -- signatures ----------------------------------------------------------------------------
def test_signed_with_another_key(log: tuple[Path, list[str]]) -> None:
    path, lines = log
    save(path, reseal([json.loads(x) for x in lines], key=Ed25519PrivateKey.generate()))
    assert audit_log(path).ok
    report = audit_log(path, PUB)
    assert found(report) == [(i, "bad-signature") for i in range(N)]


def test_a_signature_that_is_not_base64(log: tuple[Path, list[str]]) -> None:
    path, lines = log
    records = [json.loads(x) for x in lines]
    sealed = reseal(records)
    last = json.loads(sealed[-1]) | {"sig": "not base64!"}
    save(path, [*sealed[:-1], line(last)])
    assert found(audit_log(path, PUB)) == [(N - 1, "bad-signature")]
    assert "is not base64" in audit_log(path, PUB).problems[0].detail


def test_unsigned_records_with_a_key(log: tuple[Path, list[str]]) -> None:
    path, _ = log
    with pytest.raises(VouchError, match="cannot vouch for"):
        ProofLog(path)  # a writer without the key refuses the signed log
    with ProofLog(path, adopt=True) as unsigned:  # one made to take it as it is
        append_proved(unsigned, INVALID)
    assert audit_log(path).ok
    # the unsigned writer's checkpoint is unsigned too
    assert found(audit_log(path, PUB)) == [(N, "unsigned"), (N, "checkpoint")]


# -- certificates --------------------------------------------------------------------------
def _resealed(
    path: Path, lines: list[str], i: int, change: Callable[[dict[str, Any]], None]
) -> Path:
    records = [json.loads(x) for x in lines]
    change(records[i])
    return save(path, reseal(records))


def _proof_text(blob: dict[str, str]) -> str:
    return zlib.decompress(base64.b64decode(blob["data"])).decode()


def _set_proof(blob: dict[str, str], text: str) -> None:
    blob["data"] = base64.b64encode(zlib.compress(text.encode())).decode()
    blob["sha256"] = hashlib.sha256(text.encode()).hexdigest()


def test_a_proof_that_does_not_check(log: tuple[Path, list[str]]) -> None:
    path, lines = log

    def hard_claim_without_its_empty_clause(r: dict[str, Any]) -> None:
        # Unit propagation alone refutes the README claim; this one needs its proof.
        hard = bl.prove(bl.ClaimQuestion(mine="P9 R9 G9", theirs="cavalry Y2"))
        r["question"] = hard.question.to_json()
        r["certificate"] = to_file_model(hard.certificate).model_dump(mode="json")
        blob = r["certificate"]["proof"]
        _set_proof(blob, "\n".join(_proof_text(blob).splitlines()[:-1]) + "\n")

    _resealed(path, lines, 1, hard_claim_without_its_empty_clause)
    report = audit_log(path, PUB)
    assert found(report) == [(1, "bad-proof")]
    assert (
        report.problems[0].detail == "certificate rejected: the DRAT proof does not refute the CNF"
    )


def test_a_proof_that_is_not_its_hash(log: tuple[Path, list[str]]) -> None:
    path, lines = log

    def flip(r: dict[str, Any]) -> None:
        blob = r["certificate"]["proof"]
        sha = blob["sha256"]
        _set_proof(blob, _proof_text(blob).replace("0\n", "0\n1 0\n", 1))
        blob["sha256"] = sha

    _resealed(path, lines, 3, flip)
    report = audit_log(path, PUB)
    assert found(report) == [(3, "bad-proof")]
    assert report.problems[0].detail.endswith("the proof does not match its SHA-256")


def test_a_witness_that_does_not_beat_the_claim(log: tuple[Path, list[str]]) -> None:
    path, lines = log

    def weaker(r: dict[str, Any]) -> None:
        r["certificate"]["witness"]["added"] = ["G1", "Y2"]

    _resealed(path, lines, 2, weaker)
    assert found(audit_log(path, PUB)) == [(2, "bad-proof")]


def test_a_certificate_that_is_not_one(log: tuple[Path, list[str]]) -> None:
    path, lines = log

    def garbage(r: dict[str, Any]) -> None:
        r["certificate"] = {"format": "something else"}

    _resealed(path, lines, 0, garbage)
    report = audit_log(path, PUB)
    assert found(report) == [(0, "bad-proof")]
    assert report.problems[0].detail.startswith("not a certificate: ")


def test_a_verdict_that_is_not_the_certificates(log: tuple[Path, list[str]]) -> None:
    path, lines = log
    _resealed(path, lines, 1, lambda r: r.update(verdict="invalid"))
    report = audit_log(path, PUB)
    assert found(report) == [(1, "mismatch")]
    assert report.problems[0].detail == "verdict 'invalid' but the certificate says 'valid'"


def test_a_question_that_is_not_the_certificates(log: tuple[Path, list[str]]) -> None:
    path, lines = log
    _resealed(path, lines, 3, lambda r: r.update(question=OTHER.question.to_json()))
    report = audit_log(path, PUB)
    assert found(report) == [(3, "mismatch")]
    assert "R9 R10 R8" not in report.problems[0].detail  # canonical JSON, not card text
    assert '"R9","R10","R8"' in report.problems[0].detail


def test_a_certificate_for_another_question(log: tuple[Path, list[str]]) -> None:
    """A sound certificate of another claim, with the record's question: a mismatch; the
    certificate itself still checks."""
    path, lines = log
    other = json.loads(lines[1])
    with ProofLog(path.with_name("other.log")) as o:
        other["certificate"] = append_proved(o, OTHER)["certificate"]
    _resealed(path, lines, 1, lambda r: r.update(certificate=other["certificate"]))
    assert found(audit_log(path, PUB)) == [(1, "mismatch")]


def test_deep_runs_the_oracle(log: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    path, _ = log
    calls: list[bool] = []
    real = bl.verify

    def spy(cert: bl.Certificate, *, deep: bool = False) -> bool:
        calls.append(deep)
        return real(cert, deep=deep)

    monkeypatch.setattr(bl, "verify", spy)
    assert audit_log(path, deep=True).ok and calls == [True] * N
    calls.clear()
    assert audit_log(path).ok and calls == [False] * N


# -- lines that are not records ------------------------------------------------------------
def test_malformed_lines(log: tuple[Path, list[str]]) -> None:
    path, lines = log
    record = json.loads(lines[4])
    del record["seq"]
    save(path, [*lines[:2], "[1, 2]", *lines[2:4], line(record), lines[5]])
    report = audit_log(path, PUB)
    assert (2, "malformed") in found(report) and (5, "malformed") in found(report)
    details = {p.record: p.detail for p in report.problems if p.kind == "malformed"}
    assert details == {2: "a record is a JSON object, got list", 5: "no 'seq' field"}
    # The record gone from line 5 shows in the chain as well.
    assert (6, "deleted") in found(report)


def test_a_torn_last_line(log: tuple[Path, list[str]]) -> None:
    path, lines = log
    path.write_text("".join(f"{x}\n" for x in lines[:-1]) + lines[-1][:50])
    report = audit_log(path, PUB)
    assert found(report) == [(N - 1, "torn")] and len(report.records) == N - 1


def test_a_file_that_is_not_a_log(tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    path.write_text('{\n  "a": 1\n}\n')
    with pytest.raises(InputError, match=r"notes\.json: not a proof log"):
        audit_log(path)
    with pytest.raises(FileNotFoundError):
        audit_log(tmp_path / "missing.log")


# -- damage in general (property) ----------------------------------------------------------
_BASE: dict[str, list[str]] = {}


def _invalid_only_log() -> list[str]:
    """Eight signed records of invalid claims (witnesses check fast), built once."""
    if "lines" not in _BASE:
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "base.log"
            with ProofLog(path, KEY, sync=False) as log:
                for turn in range(8):
                    append_proved(log, INVALID, game="g2", turn=turn)
            _BASE["lines"] = path.read_text().splitlines()
    return _BASE["lines"]


@st.composite
def damage(draw: st.DrawFn) -> tuple[str, list[str], set[str]]:
    """A damaged copy of the base log, with the kinds of problem it must show."""
    lines = list(_invalid_only_log())
    n = len(lines)
    op = draw(st.sampled_from(["delete", "swap", "move", "copy", "edit", "forge"]))
    if op == "delete":
        i = draw(st.integers(0, n - 2))  # not the last: that cut cannot be seen
        k = draw(st.integers(1, n - 1 - i))
        del lines[i : i + k]
        return op, lines, {"deleted"}
    if op in ("swap", "move"):
        i, j = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
        if op == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        else:
            lines.insert(j, lines.pop(i))
        return op, lines, {"reordered"}
    if op == "copy":
        i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, n))
        lines.insert(j, lines[i])
        return op, lines, {"inserted"}
    i = draw(st.integers(0, n - 1))
    field = draw(st.sampled_from(["turn", "game", "player", "flag", "time"]))
    value = {"turn": 99, "game": "g9", "player": "south", "flag": 9, "time": "2030-01-01T00:00Z"}
    changed = edit(lines[i], **{field: value[field]})
    if op == "edit":
        lines[i] = changed
        return op, lines, {"bad-signature", "edited"} if i < n - 1 else {"bad-signature"}
    j = draw(st.integers(0, n - 2))  # a forgery with two genuine records after it
    lines.insert(j, edit(changed, prev=json.loads(lines[j])["prev"], seq=j))
    return op, lines, {"inserted", "bad-signature"}


@settings(max_examples=120)
@given(damage())
def test_every_damage_is_found_and_named(case: tuple[str, list[str], set[str]]) -> None:
    op, lines, kinds = case
    with tempfile.TemporaryDirectory() as d:
        report = audit_log(save(Path(d) / "damaged.log", lines), PUB)
    assert {p.kind for p in report.problems} == kinds, (op, report.problems)


def test_chain_problems_on_records_in_memory() -> None:
    lines = _invalid_only_log()
    records = [
        LogRecord(i, json.loads(x), x.encode(), hashlib.sha256(x.encode()).hexdigest())
        for i, x in enumerate(lines)
    ]
    assert chain_problems(records) == []
    assert chain_problems(records[:3] + records[4:]) == [
        Problem(4, "deleted", "1 record missing before it (seq 3)")
    ]


# -- extra checks and progress -------------------------------------------------------------
def test_extra_checks_and_progress(log: tuple[Path, list[str]]) -> None:
    path, _ = log
    seen: list[int] = []

    def no_turn_three(records: Sequence[LogRecord]) -> list[Problem]:
        bad = [Problem(r.index, "bad-turn", "turn 3 is banned") for r in records if r.turn == 3]
        return [*bad, Problem(-1, "missing", "a claim of game g1 is not in the log")]

    lines = path.read_text().splitlines()
    save(path, [*lines[:3], lines[3][:40], *lines[4:]])  # record 3 also torn
    report = audit_log(path, PUB, progress=seen.append, checks=[no_turn_three])
    assert found(report) == [(-1, "missing"), (3, "torn"), (4, "deleted")]
    assert sum(seen) == N - 1
    save(path, lines)
    report = audit_log(path, PUB, checks=[no_turn_three])
    assert found(report) == [(-1, "missing"), (3, "bad-turn")]


def test_the_cli_report_with_a_progress_bar(
    log: tuple[Path, list[str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path, _ = log
    # piped (capsys is no terminal): plain progress lines, here one per record
    monkeypatch.setattr("battlejudge.cli.common.PROGRESS_EVERY", 0.0)
    report = audit_report(str(path), progress=True)
    assert report.ok and "auditing: 1/" in capsys.readouterr().err


# -- the commands --------------------------------------------------------------------------
def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def assert_one_line_error(r: Result, *words: str) -> None:
    assert r.exit_code == 2, r.output
    assert r.stdout == "" and "Traceback" not in r.output
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("battlejudge: error: ")
    for w in words:
        assert w in r.stderr


def test_audit_command_clean(log: tuple[Path, list[str]], tmp_path: Path) -> None:
    path, _ = log
    r = run("audit", str(path))
    assert r.exit_code == 0, r.output
    assert f"{N} records, chain intact, every certificate verified" in r.stdout
    _, public = new_key_pair(tmp_path / "judge")
    r = run("audit", str(path), "--pubkey", str(public), "--deep", "--json")
    assert r.exit_code == 1  # signed with another key
    assert {p["kind"] for p in json.loads(r.stdout)["problems"]} == {"bad-signature"}


def test_audit_command_problems(log: tuple[Path, list[str]]) -> None:
    path, lines = log
    save(path, [*lines[:2], *lines[3:]])
    r = run("audit", str(path))
    assert r.exit_code == 1
    assert r.stdout.splitlines() == [
        "record 2: deleted: 1 record missing before it (seq 2)",
        f"{path}: {N - 1} records, 1 problem.",
        "No checkpoint: records cut from the end would not show (battlejudge log "
        "checkpoint LOG --write writes one).",
        f"Signatures NOT checked: {N - 1} of {N - 1} records are signed; give --pubkey to "
        "check them.",
    ]


def test_audit_command_json(log: tuple[Path, list[str]]) -> None:
    path, lines = log
    lines[1], lines[2] = lines[2], lines[1]
    save(path, lines)
    r = run("audit", str(path), "--json")
    assert r.exit_code == 1
    out = json.loads(r.stdout)
    assert list(out) == ["ok", "records", "problems", "signatures", "repairs", "checkpoint"]
    assert out["ok"] is False and out["records"] == N
    assert len(out["problems"]) == 1
    problem = out["problems"][0]
    assert list(problem) == ["record", "kind", "detail"]
    assert problem["kind"] == "reordered" and problem["record"] in (1, 2)
    save(path, make_log(path.with_name("fresh.log")))
    r = run("audit", str(path), "--json")
    assert r.exit_code == 0 and json.loads(r.stdout) == {
        "ok": True,
        "records": N,
        "problems": [],
        "signatures": {"checked": False, "signed": N, "unsigned": 0},
        "repairs": [],
        "checkpoint": None,
    }


def test_audit_command_unreadable(tmp_path: Path, log: tuple[Path, list[str]]) -> None:
    path, _ = log
    assert_one_line_error(run("audit", str(tmp_path / "missing.log")), "missing.log")
    assert_one_line_error(run("audit", str(tmp_path)), "Is a directory")
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\nworld\n")
    assert_one_line_error(run("audit", str(notes)), "notes.txt: not a proof log")
    assert_one_line_error(run("audit", str(path), "--pubkey", str(notes)), "not a PEM public key")
    missing = str(tmp_path / "missing.pub")
    assert_one_line_error(run("audit", str(path), "--pubkey", missing), "missing.pub")


def test_keys_new_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = run("keys", "new")
    assert r.exit_code == 0, r.output
    assert "battlejudge.key" in r.stdout and "battlejudge.pub" in r.stdout
    assert os.stat("battlejudge.key").st_mode & 0o777 == 0o600
    r = run("keys", "new", "--out", "judge", "--json")
    assert r.exit_code == 0
    out = json.loads(r.stdout)
    assert out["private"] == "judge.key" and out["public"] == "judge.pub"
    assert len(out["key_id"]) == 16
    before = Path("judge.key").read_bytes()
    assert_one_line_error(run("keys", "new", "--out", "judge"), "judge.key already exists")
    assert Path("judge.key").read_bytes() == before


def test_keys_sign_a_log_end_to_end(tmp_path: Path) -> None:
    from battlejudge.proofs.keys import load_private_key

    assert run("keys", "new", "--out", str(tmp_path / "judge")).exit_code == 0
    path = tmp_path / "claims.log"
    make_log(path, 2, load_private_key(tmp_path / "judge.key"))
    r = run("audit", str(path), "--pubkey", str(tmp_path / "judge.pub"))
    assert r.exit_code == 0 and "signatures good" in r.stdout
    assert read_log(path)[0][1].data["sig"]


# -- signatures that were not checked are said so (issue 15, item 8) ------------------------
def test_a_signed_log_audited_without_a_key_says_the_signatures_were_not_checked(
    log: tuple[Path, list[str]],
) -> None:
    path, _ = log
    make_log(path.with_name("with-checkpoint.log"), checkpoint=True)
    path = path.with_name("with-checkpoint.log")
    r = run("audit", str(path))
    assert r.exit_code == 0, r.output
    head = audit_log(path).checkpoint
    assert head is not None and head.size == N
    assert r.stdout.splitlines() == [
        f"{path}: {N} records, chain intact, every certificate verified.",
        f"Checked against its checkpoint of {head.time} ({N} records).",
        f"Signatures NOT checked: {N} of {N} records are signed; give --pubkey to check them.",
    ]
    r = run("audit", str(path), "--json")
    assert json.loads(r.stdout)["signatures"] == {"checked": False, "signed": N, "unsigned": 0}


def test_an_unsigned_log_says_it_is_unsigned(tmp_path: Path) -> None:
    path = tmp_path / "plain.log"
    make_log(path, 2, key=None)
    r = run("audit", str(path))
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[-1] == "No record is signed."
    r = run("audit", str(path), "--json")
    assert json.loads(r.stdout)["signatures"] == {"checked": False, "signed": 0, "unsigned": 2}


def test_require_signatures(log: tuple[Path, list[str]], tmp_path: Path) -> None:
    path, _ = log
    r = run("audit", str(path), "--require-signatures")
    assert r.exit_code == 1, r.output
    assert r.stdout.splitlines()[-1] == (
        f"Signatures NOT checked: {N} of {N} records are signed; --require-signatures needs "
        "--pubkey."
    )
    r = run("audit", str(path), "--require-signatures", "--json")
    assert r.exit_code == 1
    out = json.loads(r.stdout)
    assert out["ok"] is False and out["problems"] == []
    assert out["signatures"] == {"checked": False, "signed": N, "unsigned": 0, "required": True}
    # With the key they are checked, and a clean signed log passes.
    public = tmp_path / "judge.pub"
    from cryptography.hazmat.primitives import serialization

    public.write_bytes(
        PUB.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    r = run("audit", str(path), "--require-signatures", "--pubkey", str(public), "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["signatures"] == {
        "checked": True,
        "signed": N,
        "unsigned": 0,
        "required": True,
    }
    r = run("audit", str(path), "--pubkey", str(public))
    assert r.exit_code == 0 and "signatures good" in r.stdout and "NOT" not in r.stdout
    # An unsigned log fails the requirement, with or without a key.
    plain = tmp_path / "plain.log"
    make_log(plain, 2, key=None)
    assert run("audit", str(plain), "--require-signatures").exit_code == 1
    r = run("audit", str(plain), "--require-signatures", "--pubkey", str(public))
    assert r.exit_code == 1 and "unsigned" in r.stdout
