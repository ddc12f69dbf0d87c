"""``battlejudge bench serve``: certified claims over HTTP, each run beside the same work
done in one process without HTTP.

``battlejudge serve`` runs on loopback in a child process (:func:`running_service`); a load
generator in a process of its own (:func:`_load_generator`) keeps CLIENTS keep-alive
connections asking as fast as the answers come back. Three runs: good requests only,
then with a share of malformed ones, then a new question every time (the workers keep the
verified proofs of questions asked before, so the repeats of the first two runs cost less
than a question never seen). Every answer is checked against the verdict proved in this
process. The shared pieces (the suite, a free port, a running service, a percentile) are
used by the other service benchmarks too (:mod:`.attack`, :mod:`.log`, :mod:`.web`).
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import random
import time
from collections.abc import Iterator
from typing import Any, Final

__all__ = [
    "MALFORMED",
    "SUITE",
    "ServiceError",
    "free_port",
    "percentile",
    "run_name",
    "run_serve",
    "running_service",
    "serve_process",
    "serve_suite",
]

SUITE: Final = 150
"""Distinct questions of the first two runs."""

MALFORMED: tuple[bytes, ...] = (
    b'{"mine": ["R4", "R5", "R3"',  # not JSON
    b'{"mine": ["R4", "R5", "R11"], "theirs": [], "seen": []}',  # unknown card
    b'{"mine": ["R4", "R5"], "theirs": [], "seen": []}',  # incomplete formation
    b'{"mine": ["R4", "R5", "R3"], "theirs": ["R4"], "seen": []}',  # a card twice
    b'["R4", "R5", "R3"]',  # not an object
)
"""Bodies the service must reject (400 or 422), each for a reason of its own."""


class ServiceError(RuntimeError):
    """The service being measured misbehaved: it did not start, or answered wrong."""


def serve_suite(seed: int, count: int) -> list[dict[str, object]]:
    """Flag questions for the service benchmark: a third hard valid claims (the claim
    benchmark's suite), the rest random tables (valid and invalid claims)."""
    from battlejudge.bench.claims import hard_suite
    from battlejudge.solver import battleline as bl
    from battlejudge.solver.battleline.cards import ALL_TROOPS

    hard = count // 3
    out = [q.to_json() for _, q in hard_suite(seed, hard)]
    rng = random.Random(seed)
    while len(out) < count:
        cards = [str(bl.Card(t)) for t in rng.sample(ALL_TROOPS, 26)]
        n_theirs = rng.randint(0, 3)
        q: dict[str, object] = {
            "mine": cards[:3],
            "theirs": cards[3 : 3 + n_theirs],
            "seen": cards[6 : 6 + rng.randint(0, 20)],
        }
        if n_theirs == 3:
            q["completed_first"] = rng.choice(["mine", "theirs"])
        out.append(bl.ClaimQuestion.from_json(q).to_json())
    return out


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0.5 the median) of ``values``, nearest rank below; 0.0 for none."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def free_port() -> int:
    """A loopback port free at the time of asking."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


ERROR_LINE: Final = "battlejudge: error: "
"""How the command starts the one line it prints for bad input (exit 2)."""


@contextlib.contextmanager
def serve_process(workers: int, *extra: str) -> Iterator[tuple[int, int]]:
    """``battlejudge serve --workers WORKERS EXTRA...`` in a child process on a free loopback
    port, once it answers ``/healthz``; yields its port and pid, and stops it after.
    :class:`~battlejudge.solver.errors.InputError` with the command's own line when it
    refuses its arguments (exit 2: a bad ``--tables`` store, say); :class:`ServiceError`,
    with the end of its output, when it does not start within a minute."""
    import subprocess
    import sys
    import tempfile
    import urllib.request
    from pathlib import Path

    from battlejudge.solver.errors import InputError

    port = free_port()
    with tempfile.TemporaryDirectory(prefix="battlejudge-bench-serve-") as tmp:
        out_path = Path(tmp, "serve.log")
        with open(out_path, "wb") as out:
            server = subprocess.Popen(
                [
                    *(sys.executable, "-c", "from battlejudge.cli.main import main; main()"),
                    *("serve", "--port", str(port), "--workers", str(workers), *extra),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                        break
                except OSError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        tail = out_path.read_text(errors="replace")[-600:]
                        said = [ln for ln in tail.splitlines() if ln.startswith(ERROR_LINE)]
                        if server.poll() == 2 and said:
                            raise InputError(said[-1][len(ERROR_LINE) :]) from None
                        raise ServiceError(f"the server did not start:\n{tail}") from None
                    time.sleep(0.1)
            yield port, server.pid
        finally:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


@contextlib.contextmanager
def running_service(workers: int) -> Iterator[int]:
    """``battlejudge serve --workers WORKERS`` on a free loopback port
    (:func:`serve_process`); yields the port."""
    with serve_process(workers) as (port, _):
        yield port


def _load_generator(
    port: int, bodies: list[bytes], clients: int, warmup: int, conn: object
) -> None:
    """The load generator (run in its own process): ``clients`` keep-alive HTTP/1.1
    connections send ``bodies`` in order as fast as answers come back; sends back
    ``(wall seconds, [(index, status, latency s, body bytes)])`` after the warm-up."""
    import asyncio

    from battlejudge.bench.raw_http import post_request, read_response

    async def client(queue: asyncio.Queue[int], out: list[tuple[int, int, float, bytes]]) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while not queue.empty():
                i = queue.get_nowait()
                body = bodies[i]
                start = time.perf_counter()
                writer.write(post_request("/v1/claims", None, body))
                await writer.drain()
                status, payload = await read_response(reader)
                out.append((i, status, time.perf_counter() - start, payload))
        finally:
            writer.close()

    async def phase(indexes: range) -> tuple[float, list[tuple[int, int, float, bytes]]]:
        queue: asyncio.Queue[int] = asyncio.Queue()
        for i in indexes:
            queue.put_nowait(i)
        out: list[tuple[int, int, float, bytes]] = []
        start = time.perf_counter()
        await asyncio.gather(*(client(queue, out) for _ in range(clients)))
        return time.perf_counter() - start, out

    async def main() -> tuple[float, list[tuple[int, int, float, bytes]]]:
        await phase(range(warmup))
        return await phase(range(warmup, len(bodies)))

    conn.send(asyncio.run(main()))  # type: ignore[attr-defined]


def run_name(run: dict[str, Any]) -> str:
    """How bench serve's output names a run."""
    name = f"{run['malformed_share']:.0%} malformed"
    if run["fresh_questions"]:
        name += f", new questions ({run['distinct_questions']} distinct)"
    return name


Answer = tuple[str, list[str]]
"""What a right answer holds: the verdict and the blocking cards."""


def _baseline(suite: list[dict[str, object]]) -> tuple[float, list[Answer]]:
    """The same work in this process, no HTTP (prove + verify, warm cache): claims per
    second, and each question's right answer."""
    from battlejudge.solver import battleline as bl

    questions = [bl.ClaimQuestion.from_json(q) for q in suite]
    for q in questions:
        bl.verify(bl.prove(q))
    start = time.perf_counter()
    expected: list[Answer] = []
    for q in questions:
        p = bl.prove(q)
        bl.verify(p)
        expected.append((p.verdict, [str(c) for c in p.blocking]))
    return len(questions) / (time.perf_counter() - start), expected


def _answers(suite: list[dict[str, object]]) -> list[Answer]:
    """Each question's right answer (proved, not verified: these are not timed)."""
    from battlejudge.solver import battleline as bl

    out: list[Answer] = []
    for q in map(bl.ClaimQuestion.from_json, suite):
        p = bl.prove(q)
        out.append((p.verdict, [str(c) for c in p.blocking]))
    return out


def _plan(
    rng: random.Random, n_requests: int, share: float, asked: list[dict[str, object]], fresh: bool
) -> list[int]:
    """Which question each request asks (an index into ``asked``), or which malformed body
    (``-1 - k`` for :data:`MALFORMED` ``[k]``); in order when every question is new."""
    plan = []
    for i in range(n_requests):
        if fresh:
            plan.append(i)
        elif rng.random() < share:
            plan.append(-1 - rng.randrange(len(MALFORMED)))
        else:
            plan.append(rng.randrange(len(asked)))
    return plan


def _one_run(
    port: int,
    clients: int,
    plan: list[int],
    asked: list[dict[str, object]],
) -> tuple[list[bytes], float, list[tuple[int, int, float, bytes]]]:
    """Send the planned requests from a load generator in a process of its own; the bodies
    sent, the wall seconds after the warm-up and every answer after it."""
    bodies = [MALFORMED[-1 - k] if k < 0 else json.dumps(asked[k]).encode() for k in plan]
    warmup = min(200, len(plan) // 5)
    ctx = multiprocessing.get_context("spawn")
    here, there = ctx.Pipe()
    gen = ctx.Process(target=_load_generator, args=(port, bodies, clients, warmup, there))
    gen.start()
    wall, answers = here.recv()
    gen.join()
    return bodies, wall, answers


def _figures(
    share: float,
    fresh: bool,
    plan: list[int],
    bodies: list[bytes],
    wall: float,
    answers: list[tuple[int, int, float, bytes]],
    answers_of: list[Answer],
) -> dict[str, Any]:
    """One run's figures, every answer checked against ``answers_of``."""
    good_lat: list[float] = []
    bad_ok, wrong, unanswered, asked_good = 0, 0, 0, 0
    for i, status, latency, payload in answers:
        k = plan[i]
        if k < 0:
            bad_ok += status in (400, 422)
            continue
        asked_good += 1
        if status != 200:  # busy or out of time: no verdict, never a wrong one
            unanswered += 1
            continue
        got = json.loads(payload)
        if (got.get("verdict"), got.get("blocking")) != answers_of[k]:
            wrong += 1
            continue
        good_lat.append(latency)
    return {
        "malformed_share": share,
        "fresh_questions": fresh,
        "distinct_questions": len(set(bodies)),
        "requests": len(answers),
        "good": asked_good,
        "malformed": len(answers) - asked_good,
        "malformed_rejected": bad_ok,
        "wrong_answers": wrong,
        "unanswered": unanswered,
        "seconds": wall,
        "claims_per_s": len(good_lat) / wall,
        "p50_ms": percentile(good_lat, 0.50) * 1e3,
        "p99_ms": percentile(good_lat, 0.99) * 1e3,
    }


def _targets(runs: list[dict[str, Any]]) -> dict[str, bool]:
    """The targets: for the repeat runs, >= 1000 claims/s with p99 <= 50 ms; for every run,
    every answer right."""
    targets = {
        f"{run_name(r)}: >= 1000 claims/s, p99 <= 50 ms, all right": (
            r["claims_per_s"] >= 1000
            and r["p99_ms"] <= 50
            and r["wrong_answers"] == 0
            and r["unanswered"] == 0
        )
        for r in runs[:2]
    }
    targets[f"{run_name(runs[2])}: all right"] = (
        runs[2]["wrong_answers"] == 0 and runs[2]["unanswered"] == 0
    )
    return targets


def run_serve(
    n_requests: int, clients: int, workers: int, seed: int, malformed: float
) -> dict[str, Any]:
    """The whole benchmark (see the module): the baseline, then the three runs against one
    service with ``workers`` workers; the figures as ``bench serve --json`` prints them."""
    suite = serve_suite(seed, SUITE)
    baseline, expected = _baseline(suite)
    fresh = serve_suite(seed + 1, n_requests)
    fresh_expected = _answers(fresh)
    runs = []
    with running_service(workers) as port:
        rng = random.Random(seed)
        for share, asked, answers_of in (
            (0.0, suite, expected),
            (malformed, suite, expected),
            (0.0, fresh, fresh_expected),
        ):
            is_fresh = asked is fresh
            plan = _plan(rng, n_requests, share, asked, is_fresh)
            bodies, wall, answers = _one_run(port, clients, plan, asked)
            runs.append(_figures(share, is_fresh, plan, bodies, wall, answers, answers_of))
    return {
        "clients": clients,
        "workers": workers,
        "baseline_claims_per_s": baseline,
        "runs": runs,
        "targets": _targets(runs),
    }
