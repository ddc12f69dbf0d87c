"""Proof logs in PostgreSQL against a real server the suite starts (pgserver; conftest.py):
appends, audit, proofs, export and import, many writers at once, a killed writer, and
the faults (issue 16, items 2, 4, 5 and 6)."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from battlejudge.cli.main import cli
from battlejudge.proofs.audit import audit_log
from battlejudge.proofs.log import FORMAT_VERSION, ProofLog, append_proved
from battlejudge.proofs.pglog import PgProofLog, init_pg, read_pg
from battlejudge.proofs.store import StoreError, open_store, read_store, redact
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import InputError

VALID = bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10"))
INVALID = bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8"))
KEY = Ed25519PrivateKey.generate()


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def one_line_error(r: Result, code: int = 2) -> str:
    assert r.exit_code == code, r.output
    assert "Traceback" not in r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


def pem(tmp_path: Path, key: Ed25519PrivateKey = KEY) -> Path:
    path = tmp_path / "judge.pub"
    path.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return path


def private_pem(tmp_path: Path, key: Ed25519PrivateKey = KEY) -> Path:
    path = tmp_path / "judge.key"
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return path


def fill(log: Any, n: int, game: str = "g") -> None:
    for i in range(n):
        append_proved(log, VALID if i % 2 else INVALID, game=game, turn=i, flag=1)


# -- the basics --------------------------------------------------------------------------------
def test_appends_audit_and_prove(pg_url: str, tmp_path: Path) -> None:
    assert init_pg(pg_url) and not init_pg(pg_url)  # made once, then left alone
    with PgProofLog(pg_url, KEY) as log:
        fill(log, 5)
        batch = log.append_batch(
            [
                {
                    "question": VALID.question.to_json(),
                    "verdict": VALID.verdict,
                    "certificate": run_cert(VALID),
                    "game": "g",
                }
            ]
            * 2
        )
    assert [r["seq"] for r in batch] == [5, 6]
    stored = read_pg(pg_url)
    assert [r.seq for r in stored.records] == list(range(7)) and not stored.problems
    report = audit_log(pg_url, KEY.public_key())
    assert report.ok and report.checkpoint is not None and report.checkpoint.size == 7
    # one checkpoint per batch: five single appends and one batch of two
    with psycopg.connect(pg_url) as conn:
        sizes = [
            r[0] for r in conn.execute("SELECT size FROM battlejudge_checkpoint ORDER BY size")
        ]
    assert sizes == [1, 2, 3, 4, 5, 7]
    proof = tmp_path / "p.json"
    r = run("log", "prove", pg_url, "--record", "3")
    assert r.exit_code == 0, r.output
    proof.write_text(r.stdout)
    r = run("log", "verify-inclusion", str(proof), "--pubkey", str(pem(tmp_path)))
    assert r.exit_code == 0, r.output


def run_cert(proved: bl.ProvedClaim) -> dict[str, Any]:
    from battlejudge.proofs.battleline.certificate import to_file_model

    return to_file_model(proved.certificate).model_dump(mode="json")


def test_the_cli_takes_a_url_for_log(pg_url: str, tmp_path: Path) -> None:
    key = private_pem(tmp_path)
    args = ["claim", "--mine", "R4 R5 R3", "--theirs", "B8", "--seen", "B7 B10"]
    # no log there yet: exit 2, one line, the URL named
    line = one_line_error(run(*args, "--log", pg_url, "--key", str(key)))
    assert "no proof log there" in line and "log init" in line
    assert run("log", "init", pg_url).exit_code == 0
    assert run(*args, "--log", pg_url, "--key", str(key)).exit_code == 0
    r = run("audit", pg_url, "--pubkey", str(pem(tmp_path)))
    assert r.exit_code == 0, r.output
    assert "1 record, chain intact, signatures good" in r.stdout
    r = run("log", "checkpoint", pg_url, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["size"] == 1


def test_selfplay_logs_to_postgresql(pg_url: str) -> None:
    init_pg(pg_url)
    r = run("selfplay", "--games", "2", "--seed", "3", "--log", pg_url)
    assert r.exit_code == 0, r.output
    report = audit_log(pg_url)
    assert report.ok and len(report.records) > 0
    assert report.checkpoint is not None and report.checkpoint.size == len(report.records)


# -- export and import ---------------------------------------------------------------------
def test_export_import_round_trip(pg_url: str, tmp_path: Path) -> None:
    source = tmp_path / "table1.log"
    with ProofLog(source, KEY, sync=False) as log:
        fill(log, 6)
    r = run("log", "import", str(source), pg_url)
    assert r.exit_code == 0, r.output
    exported = tmp_path / "exported.log"
    r = run("log", "export", pg_url, "--out", str(exported))
    assert r.exit_code == 0, r.output
    # byte for byte, and the checkpoint the file was signed with
    assert exported.read_bytes() == source.read_bytes()
    assert Path(f"{exported}.checkpoint").read_text() == Path(f"{source}.checkpoint").read_text()
    r = run("log", "export", pg_url)
    assert r.exit_code == 0 and r.stdout_bytes == source.read_bytes()
    # the same report for the log, its export and the database
    pub = pem(tmp_path)
    reports = [audit_log(x, KEY.public_key()).to_json() for x in (source, exported, pg_url)]
    assert reports[0] == reports[1] == reports[2] and reports[0]["ok"]
    texts = [run("audit", str(x), "--pubkey", str(pub)).stdout for x in (source, exported)]
    assert texts[0].replace(str(source), "LOG") == texts[1].replace(str(exported), "LOG")
    # the imported log goes on taking appends, and a second import is refused
    with open_store(pg_url, KEY) as log:
        fill(log, 1)
    assert audit_log(pg_url, KEY.public_key()).ok
    line = one_line_error(run("log", "import", str(source), pg_url))
    assert "import goes into an empty log" in line


def test_a_damaged_log_is_not_imported(pg_url: str, tmp_path: Path) -> None:
    source = tmp_path / "damaged.log"
    with ProofLog(source, sync=False) as log:
        fill(log, 4)
    lines = source.read_bytes().splitlines()
    source.write_bytes(b"".join(x + b"\n" for i, x in enumerate(lines) if i != 1))
    line = one_line_error(run("log", "import", str(source), pg_url))
    assert "record 1: deleted" in line and "import takes a sound log" in line


def test_a_damaged_database_log_audits_like_a_damaged_file(pg_url: str, tmp_path: Path) -> None:
    init_pg(pg_url)
    with PgProofLog(pg_url) as log:
        fill(log, 5)
    with psycopg.connect(pg_url) as conn:
        conn.execute("DELETE FROM battlejudge_log WHERE seq >= 3")
    report = audit_log(pg_url)
    assert [(p.record, p.kind) for p in report.problems] == [(3, "truncated")]
    assert "seqs 3 to 4" in report.problems[0].detail
    # a writer refuses to sign over the cut end
    with pytest.raises(InputError, match="records were cut from its end"):
        PgProofLog(pg_url)
    exported = tmp_path / "cut.log"
    assert run("log", "export", pg_url, "--out", str(exported)).exit_code == 0
    assert audit_log(exported).to_json()["problems"] == report.to_json()["problems"]


# -- many writers ----------------------------------------------------------------------------
def _writer(url: str, n: int, name: str) -> None:
    log = PgProofLog(url, KEY)
    for i in range(n):
        append_proved(log, VALID if i % 2 else INVALID, game=name, turn=i, flag=1)
    log.close()


def _endless_writer(url: str, started: Any) -> None:
    log = PgProofLog(url, KEY)
    i = 0
    while True:
        append_proved(log, VALID, game="doomed", turn=i, flag=1)
        i += 1
        if i == 3:
            started.set()


def test_many_writers_no_gaps_no_duplicates(pg_url: str) -> None:
    init_pg(pg_url)
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(pg_url, 15, f"w{k}")) for k in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    report = audit_log(pg_url, KEY.public_key())
    assert report.ok, report.problems[:3]
    assert [r.seq for r in report.records] == list(range(90))
    assert sorted({r.game for r in report.records}) == [f"w{k}" for k in range(6)]
    assert report.checkpoint is not None and report.checkpoint.size == 90


def test_a_killed_writer_loses_only_its_record_in_flight(pg_url: str) -> None:
    init_pg(pg_url)
    ctx = multiprocessing.get_context("fork")
    started = ctx.Event()
    doomed = ctx.Process(target=_endless_writer, args=(pg_url, started))
    doomed.start()
    assert started.wait(60)
    others = [ctx.Process(target=_writer, args=(pg_url, 10, f"w{k}")) for k in range(2)]
    for p in others:
        p.start()
    time.sleep(0.05)
    assert doomed.pid is not None
    os.kill(doomed.pid, signal.SIGKILL)
    doomed.join(10)
    for p in others:
        p.join(120)
        assert p.exitcode == 0
    with PgProofLog(pg_url, KEY) as log:  # the log goes on after the killed writer
        fill(log, 2, game="after")
    report = audit_log(pg_url, KEY.public_key())
    assert report.ok, report.problems[:3]
    seqs = [r.seq for r in report.records]
    assert seqs == list(range(len(seqs)))
    assert sum(1 for r in report.records if r.game in ("w0", "w1")) == 20


# -- faults ----------------------------------------------------------------------------------
def test_an_unreachable_database(tmp_path: Path) -> None:
    url = "postgresql://judge:s3cret@127.0.0.1:1/tournament"
    for args in (
        ["audit", url],
        ["claim", "--mine", "R4 R5 R3", "--theirs", "B8", "--log", url],
        ["log", "export", url],
        ["log", "checkpoint", url],
    ):
        line = one_line_error(run(*args))
        assert "s3cret" not in line and "postgresql://judge:***@127.0.0.1:1/tournament" in line
        assert "cannot connect" in line


def test_wrong_credentials(pg_server: Any, pg_url: str) -> None:
    hba = Path(pg_server.pgdata) / "pg_hba.conf"
    text = hba.read_text()
    if "judge_pw" not in text:
        hba.write_text("local all judge_pw scram-sha-256\n" + text)
        with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
            conn.execute("CREATE ROLE judge_pw LOGIN PASSWORD 'right-one'")
            conn.execute("SELECT pg_reload_conf()")
    good = pg_url.replace("postgres:@", "judge_pw:right-one@")
    bad = pg_url.replace("postgres:@", "judge_pw:wrong-one@")
    for _ in range(100):  # the server reloads its configuration in the background
        try:
            psycopg.connect(bad).close()
        except psycopg.OperationalError:
            break
        time.sleep(0.05)
    with pytest.raises(StoreError, match="no proof log there"):
        PgProofLog(good)
    line = one_line_error(run("audit", bad))
    assert "wrong-one" not in line and "judge_pw:***@" in line
    assert "password authentication failed" in line


def test_a_missing_table_and_a_newer_format(pg_url: str) -> None:
    with pytest.raises(StoreError, match=r"no proof log there \(table battlejudge_log"):
        read_store(pg_url)
    init_pg(pg_url)
    with psycopg.connect(pg_url) as conn:
        conn.execute(
            "UPDATE battlejudge_meta SET value = %s WHERE key = 'format'",
            (str(FORMAT_VERSION + 1),),
        )
    for call in (lambda: PgProofLog(pg_url), lambda: audit_log(pg_url)):
        with pytest.raises(StoreError, match=f"log format version {FORMAT_VERSION + 1}"):
            call()


def test_a_record_of_a_newer_format_is_refused(pg_url: str) -> None:
    init_pg(pg_url)
    with PgProofLog(pg_url) as log:
        fill(log, 1)
    future = json.dumps({"v": FORMAT_VERSION + 1, "kind": "x", "seq": 1, "prev": "0" * 64})
    with psycopg.connect(pg_url) as conn:
        conn.execute(
            "INSERT INTO battlejudge_log VALUES (1, %s, %s, %s)", (future, "0" * 64, b"0" * 32)
        )
    line = one_line_error(run("audit", pg_url))
    assert f"log format version {FORMAT_VERSION + 1}" in line and "upgrade battlejudge" in line


def test_redact() -> None:
    assert redact("postgresql://a:b@h/db") == "postgresql://a:***@h/db"
    assert redact("postgresql://a@h/db") == "postgresql://a@h/db"
    assert redact("postgresql:///db?host=/tmp") == "postgresql:///db?host=/tmp"


def test_a_writer_vouches_for_what_it_committed_after_an_outage(pg_url: str) -> None:
    """Records committed before the first checkpoint, then a failed publish (the database
    went away between the commit and its checkpoint, as a loaded service hit): once the
    database is back the writer still vouches for its own records and goes on, instead
    of refusing the log as one with records and no checkpoint."""
    from battlejudge.proofs.log import proved_record

    log = PgProofLog(pg_url, KEY, create=True)
    try:
        assert log.append_records([proved_record(VALID)], publish=False)[0]["seq"] == 0
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("ALTER TABLE battlejudge_log RENAME TO battlejudge_log_away")
        with pytest.raises(StoreError):
            log.publish()
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("ALTER TABLE battlejudge_log_away RENAME TO battlejudge_log")
        assert log.append_records([proved_record(INVALID)], publish=False)[0]["seq"] == 1
        log.publish()
    finally:
        log.close()
    assert audit_log(pg_url, KEY.public_key()).ok
