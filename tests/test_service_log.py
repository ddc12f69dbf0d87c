"""The service on a shared PostgreSQL proof log (issue 16, items 3 and 6): two ``battlejudge
serve`` processes share one log; each answer carries its record's seq; proofs and the
checkpoint over HTTP; claims refused while the log is down unless --log-optional."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from web_server import LiveServer

from battlejudge.apps.service import ServiceConfig
from battlejudge.proofs.audit import audit_log
from battlejudge.proofs.pglog import init_pg
from battlejudge.proofs.transparency import verify_inclusion_proof
from battlejudge.solver import battleline as bl

VALID = bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10").to_json()
INVALID = bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8").to_json()
KEY = Ed25519PrivateKey.generate()
MAIN = [sys.executable, "-c", "from battlejudge.cli.main import main; main()"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "judge.key"
    path.write_bytes(
        KEY.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return path


@pytest.fixture
def two_services(pg_url: str, key_file: Path) -> Iterator[list[str]]:
    """Two ``battlejudge serve`` processes (standing in for two machines) on one log."""
    init_pg(pg_url)
    procs, urls = [], []
    for _ in range(2):
        port = _free_port()
        cmd = [*MAIN, "serve", "--port", str(port), "--log", pg_url, "--key", str(key_file)]
        procs.append(subprocess.Popen(cmd, stderr=subprocess.DEVNULL))
        urls.append(f"http://127.0.0.1:{port}")
    try:
        for url in urls:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, "serve did not start"
                time.sleep(0.2)
        yield urls
    finally:
        for p in procs:
            p.send_signal(signal.SIGINT)
        for p in procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def test_two_services_share_one_log(two_services: list[str], pg_url: str) -> None:
    seqs = []
    for i in range(8):
        url = two_services[i % 2]
        r = httpx.post(f"{url}/v1/claims", json=VALID if i % 3 else INVALID, timeout=60)
        assert r.status_code == 200, r.text
        seqs.append(r.json()["log_seq"])
    r = httpx.post(
        f"{two_services[1]}/v1/claims:batch", json={"questions": [VALID, INVALID]}, timeout=60
    )
    seqs += [x["log_seq"] for x in r.json()["results"]]
    assert sorted(seqs) == list(range(10))
    report = audit_log(pg_url, KEY.public_key())
    assert report.ok and len(report.records) == 10
    # any service proves any record, whichever service logged it
    for seq in (0, 5, 9):
        proof = httpx.get(f"{two_services[seq % 2]}/v1/log/proof/{seq}", timeout=30).json()
        held = verify_inclusion_proof(proof, KEY.public_key())
        assert held.record is not None and held.record["seq"] == seq
    r = httpx.get(f"{two_services[0]}/v1/log/checkpoint", timeout=30)
    assert r.status_code == 200 and r.text.split("\n")[1] == "10"
    r = httpx.get(f"{two_services[0]}/v1/log/proof/99", timeout=30)
    assert r.status_code == 404 and "no record 99" in r.json()["error"]


def _log_down(url: str, down: bool) -> None:
    """Take the log's table away (as a failed database would), or give it back."""
    with psycopg.connect(url, autocommit=True) as conn:
        if down:
            conn.execute("ALTER TABLE battlejudge_log RENAME TO battlejudge_log_away")
        else:
            conn.execute("ALTER TABLE battlejudge_log_away RENAME TO battlejudge_log")


@pytest.mark.parametrize("optional", [False, True])
def test_while_the_log_is_down(pg_url: str, optional: bool) -> None:
    init_pg(pg_url)
    config = ServiceConfig(log_path=pg_url, log_optional=optional)
    with LiveServer(config) as live, httpx.Client(base_url=live.url, timeout=60) as c:
        assert c.post("/v1/claims", json=VALID).json()["log_seq"] == 0
        _log_down(pg_url, True)
        r = c.post("/v1/claims", json=VALID)
        if optional:
            assert r.status_code == 200 and "log_seq" not in r.json()
        else:
            assert r.status_code == 503
            error = r.json()["error"]
            assert "the proof log cannot be written" in error and pg_url in error
        _log_down(pg_url, False)
        assert c.post("/v1/claims", json=INVALID).json()["log_seq"] == 1
    assert audit_log(pg_url).ok


def test_an_unreachable_log_at_start(tmp_path: Path) -> None:
    url = "postgresql://judge:s3cret@127.0.0.1:1/db"
    r = subprocess.run(
        [*MAIN, "serve", "--port", str(_free_port()), "--log", url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "s3cret" not in r.stderr and "cannot connect" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    with (
        LiveServer(ServiceConfig(log_path=url, log_optional=True)) as live,
        httpx.Client(base_url=live.url, timeout=60) as c,
    ):
        r2 = c.post("/v1/claims", json=VALID)
        assert r2.status_code == 200 and "log_seq" not in r2.json()
        assert c.get("/v1/log/checkpoint").status_code == 503
