"""A hostile client against a real ``battlejudge serve`` on 127.0.0.1 (issue 15): every
attack of the issue as a bounded test. Each asserts behaviour (status codes, answers,
never a 500, the server still answers, no traceback in its log), never how long
anything took; the speed targets are measured by ``battlejudge bench serve --attack``.

Two servers per module, each a ``battlejudge serve`` subprocess with API keys: the main
one (2 workers, 2 s for a request head and 3 s for a body, 4 requests in progress per
client, 64 connections at most), and a strict one (a 0.25 s time limit and 2 questions per second
per client) for the time limit and the rate limit.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from battlejudge.apps.api_keys import add_key
from battlejudge.bench.claims import hard_suite
from battlejudge.solver.battleline.encode import sha256
from battlejudge.solver.proof_limits import RULE

MAIN = [sys.executable, "-c", "from battlejudge.cli.main import main; main()"]
VALID = {"mine": ["R4", "R5", "R3"], "theirs": ["B8"], "seen": ["B7", "B10"]}
INVALID = {"mine": ["R4", "R5", "R3"], "theirs": ["B8"], "seen": ["B7"]}
# Valid, and the brute-force oracle (?deep=true) needs over a second for it.
SLOW_DEEP = {"mine": ["R10", "R9", "R8", "R7"], "mud": True}
TAG = "BATTLEJUDGE_HOSTILE_TEST"
ENDPOINTS = ("/v1/claims", "/v1/claims:batch", "/v1/verify", "/v1/positions/claim")
JSON_TYPE = {"Content-Type": "application/json"}


def _tagged(tag: str) -> list[int]:
    """Live (not zombie) processes whose environment carries ``TAG=tag``."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            env = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"{TAG}={tag}".encode() in env and state != "Z":
            found.append(int(entry))
    return found


class Served:
    """``battlejudge serve`` in a subprocess on a free loopback port, its stderr in a
    file; every process it starts carries a tag in its environment."""

    def __init__(self, tmp: Path, name: str, *options: str) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.keys_file = tmp / f"{name}.keys"
        self.keys = {
            c: add_key(self.keys_file, c) for c in ("alice", "bob", "carol", "dave", "erin")
        }
        self.stderr_path = tmp / f"{name}.stderr"
        self.tag = uuid.uuid4().hex
        args = ["serve", "--port", str(self.port), "--api-keys", str(self.keys_file), *options]
        self.stderr = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(
            [*MAIN, *args], stderr=self.stderr, env={**os.environ, TAG: self.tag}
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{self.url}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert self.proc.poll() is None, self.log()
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)

    def auth(self, client: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[client]}"}

    def client(self, who: str, **kw: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=self.auth(who), timeout=60, **kw)

    def log(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def alive(self) -> bool:
        """The server process runs and answers."""
        return self.proc.poll() is None and httpx.get(f"{self.url}/healthz").status_code == 200

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(60)
        self.stderr.close()
        deadline = time.monotonic() + 30  # its workers see it go, then exit
        while _tagged(self.tag) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _tagged(self.tag) == [], "processes of the server were left behind"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    s = Served(
        tmp_path_factory.mktemp("hostile"),
        "main",
        *("--workers", "2", "--time-limit", "5", "--client-concurrency", "4"),
        *("--header-timeout", "2", "--body-timeout", "3", "--max-connections", "64"),
    )
    yield s
    s.stop()
    assert "Traceback" not in s.log(), s.log()


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    s = Served(
        tmp_path_factory.mktemp("strict"),
        "strict",
        *("--workers", "1", "--time-limit", "0.25", "--rate-limit", "2", "--rate-burst", "2"),
    )
    yield s
    s.stop()
    assert "Traceback" not in s.log(), s.log()


def _certificate(served: Served, question: dict[str, Any]) -> dict[str, Any]:
    with served.client("dave") as c:
        r = c.post("/v1/claims", params={"certificate": "true"}, json=question)
    assert r.status_code == 200
    cert: dict[str, Any] = r.json()["certificate"]
    return cert


def _pack(text: str) -> str:
    return base64.b64encode(zlib.compress(text.encode(), 9)).decode()


def _unpack(data: str) -> str:
    return zlib.decompress(base64.b64decode(data)).decode()


def _raw(served: Served, data: bytes) -> socket.socket:
    """A connection that has sent ``data`` and nothing more."""
    sock = socket.create_connection(("127.0.0.1", served.port))
    sock.settimeout(30)
    if data:
        sock.sendall(data)
    return sock


def _closed_by_server(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (bounded by the
    socket's timeout: a server that never closes fails the test)."""
    out = b""
    while chunk := sock.recv(65536):
        out += chunk
    sock.close()
    return out


def _head(key: str, length: int, path: str = "/v1/claims") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


# -- proof bombs and inflating bodies --------------------------------------------------------
def test_a_proof_bomb_is_refused_and_the_service_goes_on(server: Served) -> None:
    cert = _certificate(server, VALID)
    cnf, proof = _unpack(cert["cnf"]["data"]), _unpack(cert["proof"]["data"])
    clause = next(x for x in cnf.splitlines() if x and x[0] not in "cp")
    bomb = (clause + "\n") * 20_000 + proof  # correct steps: still a proof, 20,000 lines
    cert["proof"] = {"data": _pack(bomb), "sha256": sha256(bomb)}
    body = json.dumps(cert).encode()
    assert len(body) < 16_000  # a small body
    with server.client("alice") as c:
        rs = [c.post("/v1/verify", content=body, headers=JSON_TYPE) for _ in range(4)]
        for r in rs:
            assert r.status_code == 200
            assert r.json()["verified"] is False
            assert RULE in r.json()["reason"]  # refused by the proof-size rule
        assert c.post("/v1/claims", json=VALID).json()["verdict"] == "valid"


def test_a_body_that_inflates_is_refused(server: Served) -> None:
    cert = _certificate(server, VALID)
    packer = zlib.compressobj(9)
    chunk = b"0" * (1 << 20)
    data = b"".join(packer.compress(chunk) for _ in range(512)) + packer.flush()
    cert["proof"]["data"] = base64.b64encode(data).decode()  # 512 MiB once inflated
    body = json.dumps(cert).encode()
    assert 500_000 < len(body) < 1 << 20
    with server.client("alice") as c:
        r = c.post("/v1/verify", content=body, headers=JSON_TYPE)
        assert r.status_code == 200 and r.json()["verified"] is False
        assert "proof.data inflates past" in r.json()["reason"]
        assert c.post("/v1/claims", json=VALID).status_code == 200


# -- JSON the parser refuses -------------------------------------------------------------------
@pytest.mark.parametrize("path", ENDPOINTS)
def test_json_nested_100000_deep_is_400_on_every_endpoint(server: Served, path: str) -> None:
    body = b'{"mine": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with server.client("bob") as c:
        r = c.post(path, content=body, headers=JSON_TYPE)
    assert r.status_code == 400
    assert r.json()["error"].startswith("body: mine[0][0]")
    assert "JSON nested more than 64 deep" in r.json()["error"]


@pytest.mark.parametrize("path", ENDPOINTS)
def test_a_5000_digit_integer_is_400_naming_the_field(server: Served, path: str) -> None:
    body = b'{"mine": ["R4", "R5", "R3"], "theirs": [' + b"9" * 5000 + b"]}"
    with server.client("bob") as c:
        r = c.post(path, content=body, headers=JSON_TYPE)
    assert r.status_code == 400
    assert r.json() == {"error": "body: theirs[0]: an integer of 5000 digits (at most 40)"}


def test_query_errors_use_the_error_shape(server: Served) -> None:
    with server.client("bob") as c:
        for path, params in [("/v1/claims", {"certificate": "x"}), ("/v1/verify", {"deep": "2"})]:
            r = c.post(path, params=params, json=VALID)
            assert r.status_code == 400 and list(r.json()) == ["error"]
        assert c.get("/v1/claims").status_code == 405
        assert list(c.get("/v1/claims").json()) == ["error"]


# -- fairness --------------------------------------------------------------------------------
def test_two_clients_batches_do_not_starve_a_third_clients_questions(server: Served) -> None:
    hard = [q.to_json() for _, q in hard_suite(3, 64)]
    batch = {"questions": (hard * 4)[:256]}

    async def attack(who: str, rounds: int) -> list[int]:
        async with httpx.AsyncClient(
            base_url=server.url, headers=server.auth(who), timeout=300
        ) as c:
            statuses = []
            for _ in range(rounds):
                r = await c.post("/v1/claims:batch", json=batch)
                statuses.append(r.status_code)
                assert all("verdict" in x for x in r.json()["results"])
            return statuses

    async def victim() -> list[tuple[int, str]]:
        async with httpx.AsyncClient(
            base_url=server.url, headers=server.auth("carol"), timeout=300
        ) as c:
            await asyncio.sleep(0.2)  # the batches are queued by now
            out = []
            for q in [VALID, INVALID] * 6:
                r = await c.post("/v1/claims", json=q)
                out.append((r.status_code, r.json().get("verdict", "")))
            return out

    async def run() -> tuple[list[int], list[int], list[tuple[int, str]]]:
        return await asyncio.gather(attack("alice", 3), attack("bob", 3), victim())

    a, b, v = asyncio.run(run())
    assert a == [200] * 3 and b == [200] * 3
    assert v == [(200, "valid"), (200, "invalid")] * 6


# -- connections -----------------------------------------------------------------------------
def test_idle_and_half_sent_connections_are_closed_and_others_served(server: Served) -> None:
    key = server.keys["alice"]
    idle = [_raw(server, b"") for _ in range(80)]  # more than --max-connections 64
    half_head = [_raw(server, _head(key, 10)[:40]) for _ in range(5)]
    with server.client("carol") as c:  # served all the same
        assert c.post("/v1/claims", json=VALID).status_code == 200
    # Every one of them is closed by the server (past the head deadline, or at the cap).
    for sock in idle + half_head:
        assert _closed_by_server(sock) == b""
    assert server.alive()


def test_a_half_sent_body_gets_408(server: Served) -> None:
    sock = _raw(server, _head(server.keys["alice"], 1000) + b'{"mine": ')
    answer = _closed_by_server(sock)
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1]) == {
        "error": "the request body was not received within 3 s"
    }


def test_a_client_leaving_mid_body_leaves_no_traceback(server: Served) -> None:
    for _ in range(5):
        sock = _raw(server, _head(server.keys["alice"], 1000) + b'{"mine": ["R4"')
        sock.close()
    time.sleep(0.2)  # let the server notice (not a timing assertion)
    assert server.alive()
    assert "Traceback" not in server.log()


def test_requests_in_progress_past_the_client_limit_get_429(server: Served) -> None:
    key = server.keys["dave"]
    pending = [_raw(server, _head(key, 1000)) for _ in range(4)]  # --client-concurrency 4
    time.sleep(0.2)  # the four are in progress (waiting for their bodies)
    with server.client("dave") as c:
        r = c.post("/v1/claims", json=VALID)
        assert r.status_code == 429 and "at most 4 at once" in r.json()["error"]
        assert int(r.headers["Retry-After"]) >= 1
    with server.client("carol") as c:  # another client is not affected
        assert c.post("/v1/claims", json=VALID).status_code == 200
    for sock in pending:
        assert _closed_by_server(sock).startswith(b"HTTP/1.1 408 ")


# -- keys ---------------------------------------------------------------------------------------
def test_api_keys(server: Served) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as c:
        r = c.post("/v1/claims", json=VALID)
        assert r.status_code == 401 and r.headers["WWW-Authenticate"] == "Bearer"
        assert "Authorization: Bearer KEY" in r.json()["error"]
        r = c.post("/v1/claims", json=VALID, headers={"Authorization": "Bearer bj_nope"})
        assert r.status_code == 401 and r.json() == {"error": "unknown API key"}
        r = c.post("/v1/claims", json=VALID, headers={"Authorization": "Basic abc"})
        assert r.status_code == 401
        assert c.get("/healthz").status_code == 200 and c.get("/docs").status_code == 200
    assert all(k not in server.keys_file.read_text() for k in server.keys.values())
    with server.client("alice") as c:
        assert c.post("/v1/claims", json=VALID).status_code == 200


def test_no_keys_means_loopback_only(tmp_path: Path) -> None:
    r = subprocess.run(
        [*MAIN, "serve", "--host", "0.0.0.0", "--port", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "--insecure-no-auth" in r.stderr
    bad = tmp_path / "bad.keys"
    bad.write_text("alice sha256:zz\n")
    r = subprocess.run(
        [*MAIN, "serve", "--api-keys", str(bad)], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 2 and "bad.keys, line 1" in r.stderr and "Traceback" not in r.stderr


# -- limits of the strict server -----------------------------------------------------------
def test_past_the_rate_limit_429_with_retry_after(strict: Served) -> None:
    with strict.client("alice") as c:
        statuses = [c.post("/v1/claims", json=VALID).status_code for _ in range(6)]
        assert statuses[0] == 200 and 429 in statuses and 500 not in statuses
        r = next(
            r for r in (c.post("/v1/claims", json=VALID) for _ in range(5)) if r.status_code == 429
        )
        assert int(r.headers["Retry-After"]) >= 1 and "rate limit" in r.json()["error"]
    with strict.client("bob") as c:  # per client: bob still has his
        assert c.post("/v1/claims", json=VALID).status_code == 200


def test_a_batch_counts_each_question_for_the_rate(strict: Served) -> None:
    with strict.client("carol") as c:
        r = c.post("/v1/claims:batch", json={"questions": [VALID] * 20})
        assert r.status_code == 200 and len(r.json()["results"]) == 20
        r = c.post("/v1/claims", json=VALID)
        assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 5


def test_a_check_past_the_time_limit_is_killed(strict: Served) -> None:
    cert = _certificate(strict, SLOW_DEEP)
    # A worker whose job ran long is replaced after it: wait until none is starting.
    before, deadline = set(_tagged(strict.tag)), time.monotonic() + 30
    while time.monotonic() < deadline:
        time.sleep(0.3)
        now = set(_tagged(strict.tag))
        if now == before:
            break
        before = now
    with strict.client("erin") as c:
        r = c.post("/v1/verify", params={"deep": "true"}, json=cert)
        assert r.status_code == 503 and r.json()["verdict"] == "undecided"
        assert "time limit (0.25 s)" in r.json()["error"]
        # The worker that ran it was sent SIGKILL before the answer (it is gone as soon
        # as the kernel has run its exit: the wait is bounded, not timed).
        deadline = time.monotonic() + 10
        while not before - set(_tagged(strict.tag)) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert before - set(_tagged(strict.tag)), "no worker was killed"
        assert c.post("/v1/claims", json=VALID).status_code == 200  # on a fresh worker
