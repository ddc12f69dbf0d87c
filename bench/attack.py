"""``battlejudge bench serve --attack``: a victim asking single questions while hostile
clients attack the service (issue 15's attacks), against the victim alone in the same run.

One ``battlejudge serve`` on loopback with API keys (the victim and two attackers are
clients of their own). The victim (a process of its own) asks single questions one after
another on one keep-alive connection for the whole run, each answer checked against the
verdict proved in this process; every request is timestamped on the system's monotonic
clock, which all processes share. The attacks run one after another, each by two
attacker processes started and stopped by this one:

- ``proof bombs``: certificates whose DRAT proof is prefixed with 20,000 copies of one
  of its own clauses, 4 at a time per attacker (the issue's four requests took a
  2-worker service down for 85 s; here there are always eight);
- ``batches``: 256 hard questions per request, 4 requests at a time per attacker;
- ``deep verifies``: ``?deep=true`` checks of a certificate the brute-force oracle takes
  over a second for, 4 at a time per attacker;
- ``slow bodies``: 300 connections per attacker sending a request head and then one body
  byte a second (a connection the server closes, after 429 or 408, is reopened a second
  later);
- ``idle connections``: 500 connections per attacker that send nothing (reopened when
  the server closes them).

Per phase: the victim's requests, p50 and p99 latency, errors (any answer other than
the right 200) and requests per second; for each attack, the time from its end until
the victim's throughput is back (the first 500 ms window with at least 80% of the
baseline's rate).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Final

from battlejudge.bench.raw_http import post_request, read_response
from battlejudge.bench.serve import free_port, percentile

ATTACKS: Final = ("proof bombs", "batches", "deep verifies", "slow bodies", "idle connections")
RAMP: Final = 0.5
"""Seconds an attack runs before the victim's figures count."""
AFTER: Final = 2.0
"""Seconds the victim goes on after an attack ends (the recovery window)."""
WINDOW: Final = 0.5


@dataclass
class Phase:
    """The victim's figures in one phase of the run."""

    name: str
    requests: int
    errors: int
    p50_ms: float
    p99_ms: float
    per_s: float
    recovery_s: float | None = None
    """Seconds from the attack's end until the victim's throughput was back (None:
    not within the recovery window); 0.0 for the baseline."""


class _Asker:
    """One keep-alive connection asking claims with an API key, reopened after an error."""

    def __init__(self, port: int, key: str) -> None:
        self.port = port
        self.key = key
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def ask(self, body: bytes, verdict: str, need_seq: bool = False) -> bool | None:
        """Whether the answer was a 200 with ``verdict`` (and a ``log_seq`` when
        ``need_seq``); None when the connection failed (it is closed, to be reopened)."""
        try:
            if self.writer is None:
                self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
            assert self.reader is not None
            self.writer.write(post_request("/v1/claims", self.key, body))
            await self.writer.drain()
            status, payload = await asyncio.wait_for(read_response(self.reader), 30)
            if status != 200:
                return False
            got = json.loads(payload)
            return got.get("verdict") == verdict and (not need_seq or "log_seq" in got)
        except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError, IndexError):
            self.close()
            return None

    def close(self) -> None:
        """Close the connection (the next question opens another)."""
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def victim_client(
    port: int, key: str, bodies: list[tuple[bytes, str]], stop: Any, conn: Connection
) -> None:
    """Ask the questions in turn on one connection until ``stop`` (an Event) is set;
    send back ``[(start, latency, ok)]`` (``ok``: 200 with the expected verdict)."""

    async def main() -> list[tuple[float, float, bool]]:
        out: list[tuple[float, float, bool]] = []
        asker = _Asker(port, key)
        i = 0
        while not stop.is_set():
            body, verdict = bodies[i % len(bodies)]
            i += 1
            start = time.monotonic()
            ok = bool(await asker.ask(body, verdict))
            out.append((start, time.monotonic() - start, ok))
        asker.close()
        return out

    conn.send(asyncio.run(main()))


def _attacker(kind: str, port: int, key: str, payload: bytes, conn: Connection) -> None:
    """Attack until killed; say ``started`` once the attack is under way."""

    async def loop_requests(path: str, parallel: int) -> None:
        async def one() -> None:
            while True:
                try:
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
                    while True:
                        writer.write(post_request(path, key, payload))
                        await writer.drain()
                        await read_response(reader)
                except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
                    await asyncio.sleep(0.01)

        await asyncio.gather(*(one() for _ in range(parallel)))

    async def hold(count: int, head: bytes, trickle: bool) -> None:
        async def one() -> None:
            while True:
                try:
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
                    writer.write(head)
                    await writer.drain()
                    while not reader.at_eof():
                        if trickle:
                            writer.write(b" ")
                            await writer.drain()
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(reader.read(65536), 1.0)
                    writer.close()
                except (OSError, asyncio.IncompleteReadError):
                    pass
                # Reopen a closed connection after a second: this attack holds connections
                # (a request flood is the rate limit's business, not measured here).
                await asyncio.sleep(1.0 if trickle else 0.05)

        await asyncio.gather(*(one() for _ in range(count)))

    async def main() -> None:
        if kind == "proof bombs":
            task = loop_requests("/v1/verify", 4)
        elif kind == "batches":
            task = loop_requests("/v1/claims:batch", 4)
        elif kind == "deep verifies":
            task = loop_requests("/v1/verify?deep=true", 4)
        elif kind == "slow bodies":
            head = post_request("/v1/claims", key, b"")
            head = head.replace(b"Content-Length: 0", b"Content-Length: 100000")
            task = hold(300, head, trickle=True)
        else:
            task = hold(500, b"", trickle=False)
        running = asyncio.ensure_future(task)
        await asyncio.sleep(0.2)  # connections open, requests on their way
        conn.send("started")
        await running

    asyncio.run(main())


# -- the payloads ---------------------------------------------------------------------------
def _payloads(seed: int) -> dict[str, bytes]:
    from battlejudge.bench.claims import hard_suite
    from battlejudge.proofs.battleline.certificate import to_file_model
    from battlejudge.solver import battleline as bl
    from battlejudge.solver.battleline.encode import sha256

    cert = bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10")).certificate
    assert cert.cnf is not None and cert.proof is not None
    clause = next(x for x in cert.cnf.splitlines() if x and x[0] not in "cp")
    proof = (clause + "\n") * 20_000 + cert.proof
    bomb = bl.Certificate(**{**cert.__dict__, "proof": proof, "proof_sha256": sha256(proof)})
    slow = bl.prove(bl.ClaimQuestion(mine="R10 R9 R8 R7", mud=True)).certificate
    hard = [q.to_json() for _, q in hard_suite(seed, 64)]
    return {
        "proof bombs": to_file_model(bomb).model_dump_json().encode(),
        "batches": json.dumps({"questions": (hard * 4)[:256]}).encode(),
        "deep verifies": to_file_model(slow).model_dump_json().encode(),
        "slow bodies": b"",
        "idle connections": b"",
    }


def phase_figures(
    name: str, log: list[tuple[float, float, bool]], start: float, end: float
) -> Phase:
    """The victim's figures over the requests it started in ``[start, end)``."""
    inside = [(t, lat, ok) for t, lat, ok in log if start <= t < end]
    latencies = [lat for _, lat, _ in inside]
    return Phase(
        name,
        len(inside),
        sum(1 for *_, ok in inside if not ok),
        percentile(latencies, 0.50) * 1e3,
        percentile(latencies, 0.99) * 1e3,
        len(inside) / (end - start),
    )


def _recovery(log: list[tuple[float, float, bool]], end: float, rate: float) -> float | None:
    """Seconds from ``end`` to the first window with 80% of ``rate`` good answers."""
    done = sorted(t + lat for t, lat, ok in log if ok and t + lat >= end)
    need = 0.8 * rate * WINDOW
    t = end
    while t + WINDOW <= end + AFTER:
        if sum(1 for d in done if t <= d < t + WINDOW) >= need:
            return t - end
        t += 0.05
    return None


def run_attack(workers: int, seed: int, seconds: float) -> dict[str, Any]:
    """The whole run (see the module): the server, the victim, the attacks in turn."""
    from battlejudge.apps.api_keys import add_key
    from battlejudge.solver import battleline as bl

    payloads = _payloads(seed)
    questions = [
        bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10"),
        bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7"),
        bl.ClaimQuestion(mine="Y9 Y8 Y7", theirs="G3 G4"),
        bl.ClaimQuestion(mine="B10 G10 P10", theirs="R2"),
    ]
    victim_bodies: list[tuple[bytes, str]] = [
        (json.dumps(q.to_json()).encode(), str(bl.decide(q).status)) for q in questions
    ]
    with tempfile.TemporaryDirectory() as tmp:
        keys_file = Path(tmp) / "keys"
        keys = {c: add_key(keys_file, c) for c in ("victim", "attacker-1", "attacker-2")}
        port = free_port()
        server = subprocess.Popen(
            [
                *(sys.executable, "-c", "from battlejudge.cli.main import main; main()"),
                *("serve", "--port", str(port), "--workers", str(workers)),
                *("--api-keys", str(keys_file)),
            ],
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_until_up(port, server)
            return _timeline(port, keys, payloads, victim_bodies, seconds, workers)
        finally:
            server.terminate()
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _wait_until_up(port: int, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError("the server did not start") from None
            time.sleep(0.1)


def _timeline(
    port: int,
    keys: dict[str, str],
    payloads: dict[str, bytes],
    victim_bodies: list[tuple[bytes, str]],
    seconds: float,
    workers: int,
) -> dict[str, Any]:
    ctx = multiprocessing.get_context("spawn")
    stop = ctx.Event()
    here, there = ctx.Pipe()
    victim = ctx.Process(
        target=victim_client, args=(port, keys["victim"], victim_bodies, stop, there)
    )
    victim.start()
    # The victim alone first (after its process has started and warmed up): the baseline.
    time.sleep(3.0)
    base_start = time.monotonic()
    time.sleep(seconds)
    base_end = time.monotonic()
    windows: list[tuple[str, float, float]] = []
    for kind in ATTACKS:
        procs, pipes = [], []
        for who in ("attacker-1", "attacker-2"):
            a, b = ctx.Pipe()
            p = ctx.Process(target=_attacker, args=(kind, port, keys[who], payloads[kind], b))
            p.start()
            procs.append(p)
            pipes.append(a)
        for a in pipes:
            a.recv()  # under way
        start = time.monotonic() + RAMP
        time.sleep(RAMP + seconds)
        for p in procs:
            p.kill()
        for p in procs:
            p.join()
        end = time.monotonic()
        windows.append((kind, start, end))
        time.sleep(AFTER)
    stop.set()
    log: list[tuple[float, float, bool]] = here.recv()
    victim.join()
    baseline = phase_figures("no attack", log, base_start, base_end)
    baseline.recovery_s = 0.0
    phases = [baseline]
    for kind, start, end in windows:
        phase = phase_figures(kind, log, start, end)
        phase.recovery_s = _recovery(log, end, baseline.per_s)
        phases.append(phase)
    targets = {
        f"{p.name}: 0 errors, p99 < 100 ms, throughput back within 1 s": (
            p.errors == 0 and p.p99_ms < 100 and p.recovery_s is not None and p.recovery_s <= 1
        )
        for p in phases[1:]
    }
    return {
        "workers": workers,
        "seconds": seconds,
        "cores": os.cpu_count(),
        "phases": [asdict(p) for p in phases],
        "targets": targets,
    }


# -- steady load for ``battlejudge bench log`` (battlejudge.bench.log) ---------------------
def crowd_client(
    port: int,
    keys: list[str],
    bodies: list[tuple[bytes, str]],
    warmup: float,
    seconds: float,
    need_seq: bool,
    conn: Connection,
) -> None:
    """One keep-alive connection per API key, each asking the questions in turn (from an
    offset of its own) as fast as its answers come back, for ``warmup`` and then
    ``seconds`` seconds; send back ``(begin, end, [(finish, latency, ok)])`` for the
    answers that came back between ``begin`` and ``end`` (monotonic clock). ``ok``: 200
    with the expected verdict, and a ``log_seq`` when ``need_seq``."""

    async def client(n: int, key: str, begin: float, end: float) -> list[tuple[float, float, bool]]:
        out: list[tuple[float, float, bool]] = []
        asker = _Asker(port, key)
        i = n * 7
        while (now := time.monotonic()) < end:
            body, verdict = bodies[i % len(bodies)]
            i += 1
            got = await asker.ask(body, verdict, need_seq)
            if got is None:
                await asyncio.sleep(0.01)
            done = time.monotonic()
            if begin <= done < end:
                out.append((done, done - now, bool(got)))
        asker.close()
        return out

    async def main() -> tuple[float, float, list[tuple[float, float, bool]]]:
        begin = time.monotonic() + warmup
        end = begin + seconds
        logs = await asyncio.gather(*(client(n, k, begin, end) for n, k in enumerate(keys)))
        return begin, end, [x for log in logs for x in log]

    conn.send(asyncio.run(main()))


def batch_client(port: int, key: str, payload: bytes, stop: Any, conn: Connection) -> None:
    """Post the batch ``payload`` back to back on one connection until ``stop`` (an Event)
    is set; send back ``[(start, latency, questions logged)]`` (the answers holding a
    ``log_seq``)."""

    async def main() -> list[tuple[float, float, int]]:
        out: list[tuple[float, float, int]] = []
        reader = writer = None
        while not stop.is_set():
            start = time.monotonic()
            logged = 0
            try:
                if writer is None:
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
                assert reader is not None
                writer.write(post_request("/v1/claims:batch", key, payload))
                await writer.drain()
                status, body = await asyncio.wait_for(read_response(reader), 60)
                if status == 200:
                    logged = sum("log_seq" in r for r in json.loads(body)["results"])
            except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError, IndexError):
                if writer is not None:
                    writer.close()
                reader = writer = None
                await asyncio.sleep(0.01)
            out.append((start, time.monotonic() - start, logged))
        if writer is not None:
            writer.close()
        return out

    conn.send(asyncio.run(main()))
