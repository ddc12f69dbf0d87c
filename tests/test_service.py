"""The HTTP service against a live server on a random port (httpx as the client):
answers identical to the command line's, bad input, oversized bodies, the time limit,
the proof log under concurrent requests, the ``serve`` and ``bench serve`` commands."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from web_server import LiveServer

from battlejudge.apps.service import ServiceConfig
from battlejudge.cli.main import cli
from battlejudge.proofs.audit import audit_log
from battlejudge.proofs.log import read_log
from battlejudge.solver import battleline as bl

EXAMPLES = Path(__file__).parents[1] / "examples"
MAIN = [sys.executable, "-c", "from battlejudge.cli.main import main; main()"]
VALID = {"mine": ["R4", "R5", "R3"], "theirs": ["B8"], "seen": ["B7", "B10"]}
INVALID = {"mine": ["R4", "R5", "R3"], "theirs": ["B8"], "seen": ["B7"]}
TAG = "BATTLEJUDGE_SERVICE_TEST"
JSON_TYPE = {"Content-Type": "application/json"}


def _tagged_alive(tag: str) -> list[int]:
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            env = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if int(entry) != os.getpid() and f"{TAG}={tag}".encode() in env and state != "Z":
            found.append(int(entry))
    return found


@pytest.fixture(scope="module", autouse=True)
def forkserver_running() -> None:
    """The service's worker processes fork from multiprocessing's forkserver, which lives
    as long as the process that started it (as in ``battlejudge serve``). Started here,
    before any test sets its tag, it is not taken for a process a test left behind."""
    from multiprocessing import forkserver

    multiprocessing.get_context("forkserver").set_forkserver_preload(
        ["battlejudge.apps.claim_work"]
    )
    forkserver.ensure_running()


@pytest.fixture(autouse=True)
def no_leftover_processes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    tag = uuid.uuid4().hex
    monkeypatch.setenv(TAG, tag)
    yield
    deadline = time.monotonic() + 30  # a stopped server's workers see it go, then exit
    while _tagged_alive(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _tagged_alive(tag) == []


@pytest.fixture(scope="module")
def log_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("service") / "claims.log"


@pytest.fixture(scope="module")
def server(log_path: Path) -> Iterator[LiveServer]:
    with LiveServer(ServiceConfig(log_path=str(log_path))) as live:
        yield live


@pytest.fixture()
def client(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as c:
        yield c


def cli_claim(*args: str) -> tuple[int, dict[str, Any] | str]:
    r = CliRunner().invoke(cli, ["claim", *args, "--json"])
    try:
        return r.exit_code, json.loads(r.stdout)
    except json.JSONDecodeError:
        return r.exit_code, r.output


def without_micros(d: dict[str, Any]) -> dict[str, Any]:
    """Without the timing, and without the seq of the service's log record (``log_seq``:
    the command line compared with logs nothing)."""
    return {k: v for k, v in d.items() if k not in ("micros", "log_seq")}


# -- answers ----------------------------------------------------------------------------------
@pytest.mark.parametrize("question", [VALID, INVALID])
def test_claim_answers_like_the_command_line(
    client: httpx.Client, question: dict[str, Any]
) -> None:
    r = client.post("/v1/claims", json=question)
    assert r.status_code == 200
    code, expected = cli_claim(
        "--mine", " ".join(question["mine"]), "--theirs", " ".join(question["theirs"]),
        "--seen", " ".join(question["seen"]),
    )  # fmt: skip
    assert isinstance(expected, dict)
    assert code == (0 if question is VALID else 1)
    got = r.json()
    assert isinstance(got.pop("log_seq"), int)  # the record of this answer in the log
    assert list(got) == list(expected)  # the same keys in the same order
    assert without_micros(got) == without_micros(expected)
    assert got["verdict"] == ("valid" if question is VALID else "invalid")


def test_certificate_comes_back_and_verifies(client: httpx.Client) -> None:
    got = client.post("/v1/claims", params={"certificate": "true"}, json=VALID).json()
    cert = got["certificate"]
    assert cert["verdict"] == "valid" and cert["question"]["mine"] == ["R4", "R5", "R3"]
    r = client.post("/v1/verify", json=cert)
    assert r.status_code == 200 and r.json() == {
        "verified": True,
        "verdict": "valid",
        "deep": False,
    }
    r = client.post("/v1/verify", params={"deep": "true"}, json=cert)
    assert r.json()["deep"] is True
    # An edited certificate is rejected with the reason (an answer, not an error).
    cert["blocking"] = ["B7"]
    r = client.post("/v1/verify", json=cert)
    assert r.status_code == 200
    assert r.json()["verified"] is False and "reason" in r.json()


def test_batch_answers_in_order_and_names_bad_items(client: httpx.Client) -> None:
    bad = {"mine": ["R4", "R5", "R11"]}
    r = client.post("/v1/claims:batch", json={"questions": [VALID, bad, INVALID]})
    assert r.status_code == 200
    results = r.json()["results"]
    assert [x["index"] for x in results] == [0, 1, 2]
    assert results[0]["verdict"] == "valid" and results[2]["verdict"] == "invalid"
    assert "R11" in results[1]["error"]
    single = client.post("/v1/claims", json=VALID).json()
    assert without_micros(results[0]) == {"index": 0, **without_micros(single)}


def test_position_claim_answers_like_the_command_line(client: httpx.Client) -> None:
    path = EXAMPLES / "positions" / "wedge-beats-blue-8.json"
    position = json.loads(path.read_text())
    r = client.post(
        "/v1/positions/claim", json={"position": position, "flag": 1, "player": "north"}
    )
    assert r.status_code == 200
    _, expected = cli_claim(str(path), "--flag", "1", "--player", "north")
    assert isinstance(expected, dict)
    assert without_micros(r.json()) == without_micros(expected)


def test_health_and_openapi(client: httpx.Client) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    doc = client.get("/openapi.json").json()
    for path in ("/v1/claims", "/v1/claims:batch", "/v1/verify", "/v1/positions/claim"):
        assert "post" in doc["paths"][path]
    assert "PositionFile" in doc["components"]["schemas"]
    assert "CertificateFile" in doc["components"]["schemas"]
    docs = client.get("/docs")
    assert docs.status_code == 200
    # Served from the package, not a CDN: the page names only local assets, which exist.
    assert "cdn" not in docs.text and "/static/swagger-ui/swagger-ui-bundle.js" in docs.text
    for name in ("swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png"):
        asset = client.get(f"/static/swagger-ui/{name}")
        assert asset.status_code == 200 and len(asset.content) > 500
    assert client.get("/static/swagger-ui/README.md").status_code == 404


def test_every_error_is_error_json(client: httpx.Client) -> None:
    """Query-parameter errors, unknown paths and methods answer {"error": ...} too."""
    r = client.post("/v1/claims", params={"certificate": "maybe"}, json=VALID)
    assert r.status_code == 400
    assert r.json() == {"error": r.json()["error"]} and "'certificate'" in r.json()["error"]
    assert "maybe" in r.json()["error"]
    r = client.post("/v1/verify", params={"deep": "[]"}, json={})
    assert r.status_code == 400 and "'deep'" in r.json()["error"]
    r = client.get("/v1/nothing")
    assert r.status_code == 404 and r.json() == {"error": "no such endpoint: /v1/nothing"}
    r = client.get("/v1/claims")
    assert r.status_code == 405 and "GET" in r.json()["error"]


# -- bad input --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "body"),
    [
        (["--mine", "R4 R5 R11"], {"mine": ["R4", "R5", "R11"]}),
        (["--mine", "R4 R5"], {"mine": ["R4", "R5"]}),
        (["--mine", "R4 R5 R3", "--theirs", "R4"], {"mine": ["R4", "R5", "R3"], "theirs": ["R4"]}),
        (["--mine", "R4 R5 R3", "--seen", "fog"], {"mine": ["R4", "R5", "R3"], "seen": ["fog"]}),
    ],
)
def test_bad_questions_get_422_with_the_cli_message(
    client: httpx.Client, args: list[str], body: dict[str, Any]
) -> None:
    r = client.post("/v1/claims", json=body)
    assert r.status_code == 422
    code, printed = cli_claim(*args)
    assert code == 2 and isinstance(printed, str)
    assert printed.strip() == f"battlejudge: error: {r.json()['error']}"


def test_not_json_gets_400(client: httpx.Client) -> None:
    r = client.post("/v1/claims", content=b'{"mine": [', headers=JSON_TYPE)
    assert r.status_code == 400 and r.json()["error"].startswith("body: not JSON (line 1")
    r = client.post("/v1/claims", content=b"\xff\xfe", headers=JSON_TYPE)
    assert r.status_code == 400


def test_bad_certificates_and_positions_get_422(client: httpx.Client) -> None:
    r = client.post("/v1/verify", json={"verdict": "valid"})
    assert r.status_code == 422 and r.json()["error"].startswith("not a battlejudge certificate")
    position = json.loads((EXAMPLES / "positions" / "wedge-beats-blue-8.json").read_text())
    position["flags"][0]["north"].append({"card": "R1", "turn": 1})
    r = client.post(
        "/v1/positions/claim", json={"position": position, "flag": 1, "player": "north"}
    )
    assert r.status_code == 422 and r.json()["error"].startswith("position: flags[0].north")
    for body, fragment in [
        ({"position": position, "flag": 10, "player": "north"}, "flag must be a number 1-9"),
        ({"position": position, "flag": 1, "player": "east"}, "player must be north or south"),
        ({"position": {"flags": []}, "flag": 1, "player": "north"}, "position.flags"),
    ]:
        r = client.post("/v1/positions/claim", json=body)
        assert r.status_code == 422 and fragment in r.json()["error"], r.json()


def test_bodies_over_one_mebibyte_get_413(client: httpx.Client) -> None:
    big = json.dumps({**VALID, "pad": "x" * (1 << 20)}).encode()
    r = client.post("/v1/claims", content=big, headers=JSON_TYPE)
    assert r.status_code == 413
    # Streamed without a Content-Length: cut off as soon as the limit is passed.
    r = client.post(
        "/v1/claims",
        content=iter([big[i : i + 65536] for i in range(0, len(big), 65536)]),
        headers=JSON_TYPE,
    )
    assert r.status_code == 413
    assert client.post("/v1/claims", json=VALID).status_code == 200  # still serving


# -- limits -----------------------------------------------------------------------------------
def test_past_the_time_limit_the_answer_is_503_undecided() -> None:
    with LiveServer(ServiceConfig(time_limit=1e-9)) as live, httpx.Client(base_url=live.url) as c:
        r = c.post("/v1/claims", json=VALID)
        assert r.status_code == 503
        assert r.json()["verdict"] == "undecided" and "valid" not in json.dumps(r.json()["error"])


def test_past_the_conflict_limit_the_answer_is_503_undecided() -> None:
    from battlejudge.bench.claims import hard_suite
    from battlejudge.solver.battleline.backend import SolverCache
    from battlejudge.solver.errors import UndecidedError

    hard = []
    # those whose certificate a fresh solver cannot refute in one conflict
    for _, q in hard_suite(1, 240):
        try:
            bl.prove(q, conflict_limit=1, cache=SolverCache())
        except UndecidedError:
            hard.append(q)
    assert len(hard) >= 2
    with (
        LiveServer(ServiceConfig(conflict_limit=1)) as live,
        httpx.Client(base_url=live.url) as c,
    ):
        r = c.post("/v1/claims", json=hard[0].to_json())
        assert r.status_code == 503 and r.json()["verdict"] == "undecided"
        # Any answer given must be right.
        r = c.post("/v1/claims:batch", json={"questions": [q.to_json() for q in hard[1:]]})
        results = r.json()["results"]
        assert any(x == {"index": x["index"], "verdict": "undecided"} for x in results)
        for q, got in zip(hard[1:], results, strict=True):
            assert got["verdict"] in ("undecided", "valid")  # the suite holds valid claims
            assert got["verdict"] == "undecided" or bl.decide(q).valid is True


def test_concurrent_requests_each_logged_once(server: LiveServer, log_path: Path) -> None:
    before = len(read_log(log_path)[0]) if log_path.exists() else 0
    questions = [VALID, INVALID] * 16

    async def run() -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as c:
            return await asyncio.gather(*(c.post("/v1/claims", json=q) for q in questions))

    answers = asyncio.run(run())
    assert all(r.status_code == 200 for r in answers)
    verdicts = [r.json()["verdict"] for r in answers]
    assert verdicts == ["valid", "invalid"] * 16
    records, problems = read_log(log_path)
    assert problems == []
    assert len(records) - before == len(questions)
    report = audit_log(log_path)
    assert report.problems == []


# -- the commands ---------------------------------------------------------------------------
def test_serve_command_with_two_workers_and_one_log(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path / "served.log"
    args = ["serve", "--port", str(port), "--workers", "2", "--log", str(log)]
    proc = subprocess.Popen([*MAIN, *args], stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.1)

        async def run() -> list[int]:
            async with httpx.AsyncClient(base_url=url, timeout=30) as c:
                rs = await asyncio.gather(*(c.post("/v1/claims", json=VALID) for _ in range(20)))
            return [r.status_code for r in rs]

        assert asyncio.run(run()) == [200] * 20
    finally:
        proc.terminate()
        proc.wait(30)
    records, problems = read_log(log)
    assert problems == [] and len(records) == 20
    assert [r.seq for r in records] == list(range(20))


def test_bench_serve_runs_and_checks_every_answer() -> None:
    args = ["bench", "serve", "--requests", "60", "--clients", "4", "--workers", "1", "--json"]
    r = subprocess.run([*MAIN, *args], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert [run["malformed_share"] for run in data["runs"]] == [0.0, 0.1, 0.0]
    assert [run["fresh_questions"] for run in data["runs"]] == [False, False, True]
    for run in data["runs"]:
        assert run["wrong_answers"] == 0 and run["unanswered"] == 0
        assert run["malformed_rejected"] == run["malformed"]
        assert run["good"] + run["malformed"] == run["requests"]
    assert data["baseline_claims_per_s"] > 0


def test_api_keys_add_prints_the_key_once_and_stores_its_hash(tmp_path: Path) -> None:
    from battlejudge.apps.api_keys import hash_key, load_keys, lookup

    path = tmp_path / "keys.txt"
    r = CliRunner().invoke(cli, ["api-keys", "add", str(path), "--client", "alice", "--json"])
    assert r.exit_code == 0, r.output
    key = json.loads(r.stdout)["key"]
    assert key.startswith("bj_") and key not in path.read_text()
    assert f"alice sha256:{hash_key(key)}" in path.read_text()
    assert path.stat().st_mode & 0o777 == 0o600
    r = CliRunner().invoke(cli, ["api-keys", "add", str(path), "--client", "bob"])
    second = r.stdout.strip()
    keys = load_keys(path)
    assert lookup(keys, key) == "alice" and lookup(keys, second) == "bob"
    assert lookup(keys, key + "x") is None
    r = CliRunner().invoke(cli, ["api-keys", "add", str(path), "--client", "no spaces"])
    assert r.exit_code == 2 and "bad client name" in r.output


def test_bench_serve_attack_runs_every_attack() -> None:
    args = ["bench", "serve", "--attack", "--attack-seconds", "0.5", "--workers", "1", "--json"]
    r = subprocess.run([*MAIN, *args], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    names = [p["name"] for p in data["phases"]]
    assert names == [
        "no attack",
        "proof bombs",
        "batches",
        "deep verifies",
        "slow bodies",
        "idle connections",
    ]
    assert data["phases"][0]["requests"] > 0
    assert len(data["targets"]) == 5
