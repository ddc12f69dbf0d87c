"""``battlejudge bench log``: the proof log as the service uses it, each figure beside a
baseline measured in the same run.

1. **Logged claims/s**: ``battlejudge serve --workers 2`` on loopback (a child process, with
   one API key per client) with a file log, with a PostgreSQL log, and without a log (the
   baseline), at each number of concurrent clients: a load generator in a process of its
   own (:func:`battlejudge.bench.attack.crowd_client`) keeps one connection per client
   asking single questions as fast as the answers come back, from a fixed set of
   questions, so the workers' proof cache makes the solver cheap and the log is what is
   measured. The three services run side by side and each point is measured on all three
   in turn, so that a busy machine slows them alike.
2. **A victim's latency**: on the file-logged service, a client asking single questions
   one at a time (:func:`battlejudge.bench.attack.victim_client`), alone (the baseline),
   then while another client posts 256-question batches back to back
   (:func:`battlejudge.bench.attack.batch_client`); each phase lasts twice a throughput
   point, since a logged claim waits for its commit and the victim asks few.
3. **Inclusion proofs**: a log of ``records`` signed records built with its tiles
   (:func:`battlejudge.bench.synthetic_log.build_synthetic_log`), served by ``battlejudge
   serve --log``; how long the service takes to start on it, and the client's wall time
   of ``GET /v1/log/proof/SEQ`` for random records (a few proofs checked with the log's
   key); baseline: the same on a 1,000-record log.
4. **Audit**: ``battlejudge audit LOG --pubkey PUB --json`` as a child process on both
   logs: wall time and the child's peak resident memory (``wait4``'s ``ru_maxrss``).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from battlejudge.bench.serve import free_port, percentile
from battlejudge.solver.errors import InputError

__all__ = ["Settings", "postgresql", "run_bench_log"]

SMALL: Final = 1000
"""Records in the baseline log of the proof and audit figures."""
BATCH: Final = 256
"""Questions in each batch the victim's neighbour posts."""
QUESTIONS: Final = 150
"""Distinct questions the clients ask (the proof cache holds them all)."""
WARM_FETCHES: Final = 5
"""Proofs fetched before the timed ones (the service's first request imports modules)."""
MAIN: Final = (sys.executable, "-c", "from battlejudge.cli.main import main; main()")

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Settings:
    """What ``bench log`` measures: ``records`` in the big log, ``seconds`` per
    throughput point (after ``warmup`` seconds), the numbers of ``clients``, ``workers``
    of each service, the logged services' ``interval`` (None: serve's default),
    ``fetches`` of inclusion proofs per log (the first ``verify`` of them checked), the
    ``seed`` of the questions and of the records proved, and the PostgreSQL database
    (``pg_url``; None: none is measured). ``notes`` are printed with the figures.
    ``serve_interval``: ``battlejudge serve``'s option for how often its log commits or
    publishes, and its default (the command line reads them off the serve command, which
    this layer may not import)."""

    records: int = 1_000_000
    seconds: float = 5.0
    warmup: float = 1.0
    clients: tuple[int, ...] = (1, 16, 64)
    workers: int = 2
    interval: float | None = None
    fetches: int = 2000
    verify: int = 20
    seed: int = 1
    pg_url: str | None = None
    notes: list[str] = field(default_factory=list)
    serve_interval: tuple[str, float] = ("--checkpoint-interval", 0.25)


# -- the services -----------------------------------------------------------------------------
@dataclass
class Service:
    """A running ``battlejudge serve``: its port, process id and how long it took to
    answer."""

    port: int
    pid: int
    start_s: float


@contextlib.contextmanager
def serving(args: list[str], what: str, timeout: float = 900.0) -> Iterator[Service]:
    """``battlejudge serve ARGS`` on a free loopback port, once it answers ``/healthz``
    (:class:`InputError` with its last line of errors if it stops first); stopped after."""
    from battlejudge.proofs.store import redact_urls

    port = free_port()
    errors = tempfile.TemporaryFile()
    start = time.monotonic()
    server = subprocess.Popen(
        [*MAIN, "serve", "--port", str(port), *args], stdout=subprocess.DEVNULL, stderr=errors
    )
    try:
        while True:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            try:
                conn.request("GET", "/healthz")
                if conn.getresponse().status == 200:
                    break
            except OSError:
                pass
            finally:
                conn.close()
            if server.poll() is not None or time.monotonic() - start > timeout:
                errors.seek(0)
                lines = errors.read().decode("utf-8", "replace").strip().splitlines()
                why = redact_urls(lines[-1]) if lines else f"exit {server.returncode}"
                raise InputError(f"bench log: the {what} service did not start: {why}")
            time.sleep(0.05)
        yield Service(port, server.pid, time.monotonic() - start)
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        errors.close()


def _interval_args(s: Settings) -> list[str]:
    return [] if s.interval is None else [s.serve_interval[0], str(s.interval)]


# -- 1. logged claims per second --------------------------------------------------------------
def _questions(seed: int) -> list[tuple[bytes, str]]:
    """The fixed questions (bench serve's suite) and the verdict each must get."""
    from battlejudge.bench.serve import serve_suite
    from battlejudge.solver import battleline as bl

    out = []
    for q in serve_suite(seed, QUESTIONS):
        verdict = str(bl.decide(bl.ClaimQuestion.from_json(q)).status)
        out.append((json.dumps(q).encode(), verdict))
    return out


def _crowd(
    port: int,
    keys: list[str],
    bodies: list[tuple[bytes, str]],
    warmup: float,
    seconds: float,
    logged: bool,
) -> dict[str, Any]:
    """One throughput point: claims answered right per second (with a ``log_seq`` when
    ``logged``), p50/p99 latency and the answers that were not right."""
    from battlejudge.bench import attack

    ctx = multiprocessing.get_context("spawn")
    here, there = ctx.Pipe()
    gen = ctx.Process(
        target=attack.crowd_client, args=(port, keys, bodies, warmup, seconds, logged, there)
    )
    gen.start()
    begin, end, log = here.recv()
    gen.join()
    good = [lat for _, lat, ok in log if ok]
    return {
        "clients": len(keys),
        "claims_per_s": len(good) / (end - begin),
        "p50_ms": percentile(good, 0.50) * 1e3,
        "p99_ms": percentile(good, 0.99) * 1e3,
        "errors": len(log) - len(good),
    }


def _pg_ready(url: str) -> None:
    """Make the log's tables at ``url`` and check it holds no record (the bench signs
    with a key of its own, so it can only start a log, never continue one)."""
    from battlejudge.proofs.pglog import connect, init_pg
    from battlejudge.proofs.store import redact

    init_pg(url)
    conn = connect(url)
    try:
        held = conn.execute("SELECT EXISTS (SELECT 1 FROM battlejudge_log)").fetchone()[0]
    finally:
        conn.close()
    if held:
        raise InputError(
            f"--pg-url {redact(url)}: the database holds a proof log already; give an empty one"
        )


def throughput(
    s: Settings, tmp: Path, keys: list[str], key_args: list[str], progress: Progress
) -> dict[str, Any]:
    """Figure 1: every backend and baseline at every number of clients, in turn."""
    bodies = _questions(s.seed)
    common = ["--workers", str(s.workers), *key_args]
    log_args = ["--key", str(tmp / "bench.key"), *_interval_args(s)]
    backends: list[tuple[str, list[str]]] = [("baseline", [])]
    backends.append(("file", ["--log", str(tmp / "claims.log"), *log_args]))
    if s.pg_url is not None:
        backends.append(("postgresql", ["--log", s.pg_url, *log_args]))
    points: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in backends}
    with contextlib.ExitStack() as stack:
        services = {name: stack.enter_context(serving(common + a, name)) for name, a in backends}
        for name, service in services.items():  # every worker proves every question once
            _crowd(service.port, keys[:16], bodies, 0.0, 2.0 * s.warmup, name != "baseline")
        for clients in s.clients:
            for name, service in services.items():
                progress(f"{name}, {clients} client(s)")
                point = _crowd(
                    service.port, keys[:clients], bodies, s.warmup, s.seconds, name != "baseline"
                )
                points[name].append(point)
    base = {p["clients"]: p for p in points.pop("baseline")}
    out = []
    for name, runs in points.items():
        for p in runs:
            b = base[p["clients"]]["claims_per_s"]
            out.append(
                {"backend": name, **p, "baseline_claims_per_s": b, "ratio": p["claims_per_s"] / b}
            )
    return {"points": out, "baseline": list(base.values()), "services": len(services)}


# -- 2. a victim beside batches ---------------------------------------------------------------
def victim(
    s: Settings, tmp: Path, keys: dict[str, str], key_args: list[str], progress: Progress
) -> dict[str, Any]:
    """Figure 2: the victim's p50/p99 alone, then while another client posts batches."""
    from battlejudge.bench import attack

    bodies = _questions(s.seed)
    batch = json.dumps({"questions": [json.loads(b) for b, _ in (bodies * 2)[:BATCH]]}).encode()
    args = ["--workers", str(s.workers), *key_args, "--log", str(tmp / "victim.log")]
    args += ["--key", str(tmp / "bench.key"), *_interval_args(s)]
    ctx = multiprocessing.get_context("spawn")
    with serving(args, "victim's") as service:
        progress("a victim alone, then beside 256-question batches")
        stop, halt = ctx.Event(), ctx.Event()
        here, there = ctx.Pipe()
        v = ctx.Process(
            target=attack.victim_client, args=(service.port, keys["victim"], bodies, stop, there)
        )
        v.start()
        time.sleep(s.warmup + 1.0)  # the victim's process is up and its questions cached
        now = time.monotonic()
        alone = (now, now + 2 * s.seconds)
        time.sleep(2 * s.seconds)
        b_here, b_there = ctx.Pipe()
        b = ctx.Process(
            target=attack.batch_client, args=(service.port, keys["batcher"], batch, halt, b_there)
        )
        b.start()
        time.sleep(s.warmup + 1.0)  # the batches' first proofs (bulk workers' caches)
        now = time.monotonic()
        beside = (now, now + 2 * s.seconds)
        time.sleep(2 * s.seconds)
        stop.set()
        halt.set()
        log = here.recv()
        batches = b_here.recv()
        v.join()
        b.join()
    first = attack.phase_figures("alone", log, *alone)
    second = attack.phase_figures("beside batches", log, *beside)
    inside = [x for x in batches if beside[0] <= x[0] + x[1] < beside[1]]
    return {
        "alone": asdict(first),
        "beside_batches": asdict(second),
        "batches": len(inside),
        "seconds": 2 * s.seconds,
        "batch_claims_logged_per_s": sum(n for *_, n in inside) / (2 * s.seconds),
        "ratio_p99": second.p99_ms / first.p99_ms if first.p99_ms else float("nan"),
    }


# -- 3. and 4. a big log: proofs and audit ----------------------------------------------------
def _epoch(path: Path) -> bytes | None:
    from battlejudge.proofs.log import EPOCH, tiles_path

    try:
        return (tiles_path(path) / EPOCH).read_bytes()
    except FileNotFoundError:
        return None


def proofs(s: Settings, path: Path, n: int, key_path: Path, progress: Progress) -> dict[str, Any]:
    """Figure 3 for one log: the service's start, then ``fetches`` proofs of random
    records from one keep-alive client (after a few untimed ones), the first ``verify``
    of them checked; and the same proofs made in this process."""
    from battlejudge.bench.log_tiles import proof_times
    from battlejudge.proofs.keys import load_public_key
    from battlejudge.proofs.transparency import verify_inclusion_proof

    pub = load_public_key(key_path.with_suffix(".pub"))
    epoch = _epoch(path)
    progress(f"inclusion proofs on the {n:,}-record log")
    with serving(["--log", str(path), "--key", str(key_path)], f"{n:,}-record log's") as service:
        rng = random.Random(s.seed)
        conn = http.client.HTTPConnection("127.0.0.1", service.port, timeout=30)
        times, verified = [], 0
        for i in range(-WARM_FETCHES, s.fetches):
            seq = rng.randrange(n)
            start = time.perf_counter()
            conn.request("GET", f"/v1/log/proof/{seq}")
            answer = conn.getresponse()
            body = answer.read()
            if i >= 0:
                times.append(time.perf_counter() - start)
            if answer.status != 200:
                raise InputError(f"bench log: GET /v1/log/proof/{seq}: HTTP {answer.status}")
            if 0 <= i < s.verify:
                proof = json.loads(body)
                if proof["index"] != seq or proof["tree_size"] != n:
                    raise InputError(f"bench log: the proof of record {seq} is of another one")
                verify_inclusion_proof(proof, pub)  # ProofFailed (an InputError) if not
                verified += 1
        conn.close()
        rss = _status_mb(service.pid, "VmRSS")
    here = proof_times(path, s.fetches, s.seed + 1)
    return {
        "records": n,
        "start_s": service.start_s,
        "opened_from_tiles": _epoch(path) == epoch,
        "fetches": len(times),
        "verified": verified,
        "p50_ms": percentile(times, 0.50) * 1e3,
        "p99_ms": percentile(times, 0.99) * 1e3,
        "service_rss_mb": rss,
        "in_process": {"p50_ms": here.p50_ms, "p99_ms": here.p99_ms, "mean_ms": here.mean_ms},
    }


def _status_mb(pid: int, field: str) -> float | None:
    """A memory figure of ``/proc/PID/status`` (``VmHWM``, ``VmRSS``) in MB, or None."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) / 1024  # kB
    except (OSError, ValueError, IndexError):
        pass
    return None


def audit(path: Path, n: int, pub: Path, progress: Progress) -> dict[str, Any]:
    """Figure 4 for one log: ``battlejudge audit`` in a child process; its wall time and
    peak RSS, the child's ``VmHWM`` read every 20 ms until it exits (not ``ru_maxrss``:
    a child started with ``vfork`` counts its parent's peak as its own)."""
    progress(f"audit of the {n:,}-record log")
    out = tempfile.TemporaryFile()
    start = time.perf_counter()
    child = subprocess.Popen(
        [*MAIN, "audit", str(path), "--pubkey", str(pub), "--json"],
        stdout=out,
        stderr=subprocess.DEVNULL,
    )
    peak = 0.0
    while True:
        peak = max(peak, _status_mb(child.pid, "VmHWM") or 0.0)
        pid, status, _ = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        time.sleep(0.02)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    out.seek(0)
    try:
        report = json.loads(out.read())
    except ValueError:
        report = {}
    finally:
        out.close()
    return {
        "records": n,
        "seconds": seconds,
        "peak_rss_mb": peak,
        "exit": child.returncode,
        "clean": child.returncode == 0 and report.get("ok") is True,
    }


def big_log(s: Settings, tmp: Path, progress: Progress) -> dict[str, Any]:
    """Figures 3 and 4: build both logs, serve each, audit each; the logs are deleted
    after."""
    from battlejudge.bench.log_tiles import build_log
    from battlejudge.proofs.keys import load_private_key

    key_path = tmp / "bench.key"
    key = load_private_key(key_path)
    logs = {"big": (tmp / "big" / "big.log", s.records), "small": (tmp / "small.log", SMALL)}
    (tmp / "big").mkdir()
    out: dict[str, Any] = {"build": {}, "proofs": {}, "audit": {}}
    try:
        for name, (path, n) in logs.items():
            progress(f"building a {n:,}-record log")
            out["build"][name] = asdict(build_log(path, n, key))
        for name, (path, n) in logs.items():
            out["proofs"][name] = proofs(s, path, n, key_path, progress)
        for name, (path, n) in logs.items():
            out["audit"][name] = audit(path, n, key_path.with_suffix(".pub"), progress)
    finally:
        shutil.rmtree(tmp / "big", ignore_errors=True)
    big, small = out["proofs"]["big"], out["proofs"]["small"]
    out["proofs"]["ratio_p50"] = big["p50_ms"] / small["p50_ms"]
    out["proofs"]["ratio_p99"] = big["p99_ms"] / small["p99_ms"]
    out["proofs"]["ratio_start"] = big["start_s"] / small["start_s"]
    big, small = out["audit"]["big"], out["audit"]["small"]
    out["audit"]["ratio_per_record"] = (big["seconds"] / big["records"]) / (
        small["seconds"] / small["records"]
    )
    out["audit"]["ratio_peak_rss"] = big["peak_rss_mb"] / small["peak_rss_mb"]
    return out


# -- the whole bench --------------------------------------------------------------------------
def _targets(s: Settings, r: dict[str, Any]) -> dict[str, bool]:
    out = {}
    for backend, least in (("file", 1500), ("postgresql", 1000)):
        runs = [p for p in r["throughput"]["points"] if p["backend"] == backend]
        if runs:
            best = max(runs, key=lambda p: p["claims_per_s"])
            name = f"{backend}: >= {least:,} logged claims/s (best: {best['clients']} clients)"
            out[name] = best["claims_per_s"] >= least and best["errors"] == 0
    v = r["victim"]["beside_batches"]
    out["victim beside 256-question batches: p99 <= 150 ms, 0 errors"] = (
        v["p99_ms"] <= 150 and v["errors"] == 0
    )
    p = r["proofs"]
    name = f"inclusion proof in {s.records:,} records: p99 <= 5 ms, all verified"
    out[name] = p["big"]["p99_ms"] <= 5 and p["big"]["verified"] == min(s.verify, s.fetches)
    a = r["audit"]["big"]
    out[f"audit of {s.records:,} records: peak RSS <= 200 MB, clean"] = (
        a["peak_rss_mb"] <= 200 and a["clean"]
    )
    return out


def run_bench_log(s: Settings, progress: Progress) -> dict[str, Any]:
    """Every figure of the module, in a temporary folder deleted after."""
    from battlejudge.apps.api_keys import add_key
    from battlejudge.proofs.keys import new_key_pair

    if s.pg_url is not None:
        _pg_ready(s.pg_url)
    with tempfile.TemporaryDirectory(prefix="bench-log-") as folder:
        tmp = Path(folder)
        new_key_pair(tmp / "bench")
        keys_file = tmp / "api-keys"
        names = [f"client-{i}" for i in range(max(s.clients))] + ["victim", "batcher"]
        keys = {name: add_key(keys_file, name) for name in names}
        key_args = ["--api-keys", str(keys_file)]
        crowd = [keys[name] for name in names[:-2]]
        while len(crowd) < 16:  # the warm-up's clients
            crowd.append(crowd[-1])
        hidden = ("pg_url", "notes", "serve_interval")
        shown = {k: v for k, v in asdict(s).items() if k not in hidden}
        shown |= {"postgresql": s.pg_url is not None, "cores": os.cpu_count()}
        option, default = s.serve_interval
        shown |= {
            "interval_option": option,
            "interval": default if s.interval is None else s.interval,
        }
        result: dict[str, Any] = {
            "settings": shown | {"questions": QUESTIONS},
            "throughput": throughput(s, tmp, crowd, key_args, progress),
            "victim": victim(s, tmp, keys, key_args, progress),
        }
        result |= big_log(s, tmp, progress)
    result["targets"] = _targets(s, result)
    result["notes"] = s.notes
    return result


@contextlib.contextmanager
def postgresql(s: Settings, no_pg: bool) -> Iterator[Settings]:
    """``s`` with the PostgreSQL database to measure: its ``pg_url`` when given; else, unless
    ``no_pg``, a temporary server started with pgserver (stopped and deleted after), or none
    and a note saying why when pgserver is not installed."""
    pg_url, server = s.pg_url, None
    if pg_url is None and not no_pg:
        try:
            import pgserver
        except ImportError:
            s.notes.append("PostgreSQL not measured: pgserver is not installed (or give --pg-url)")
        else:
            folder = tempfile.mkdtemp(prefix="bench-log-pg-")
            server = pgserver.get_server(folder, cleanup_mode="delete")  # type: ignore[attr-defined]
            pg_url = server.get_uri()
    try:
        yield replace(s, pg_url=None if no_pg else pg_url)
    finally:
        if server is not None:
            server.cleanup()
