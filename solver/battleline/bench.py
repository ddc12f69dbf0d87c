"""The claim benchmark: a seeded suite of hard cases, timed against brute force.

Hard cases are claims that hold: nothing stops a search early, so the solver must
refute every completion and the brute force must try them all. The suite mixes an
empty opposing side, Mud (four-card formations, also with an empty side), Fog, and
wild cards on either side. Everything is measured in one process, in one run.
"""

from __future__ import annotations

import random
import resource
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from battlejudge.solver.battleline import oracle
from battlejudge.solver.battleline.backend import SolverCache
from battlejudge.solver.battleline.cards import Card
from battlejudge.solver.battleline.claims import decide, prove, verify
from battlejudge.solver.battleline.question import ClaimQuestion

KINDS = ("empty", "mud", "mud-empty", "fog", "wild-mine", "wild-theirs")
TARGETS = {
    "decide_median_ms": 0.2,
    "decide_p99_ms": 2.0,
    "prove_p99_ms": 5.0,
    "verify_median_ms": 20.0,
    "speedup_min": 100.0,
}


def _strong_mine(rng: random.Random, size: int, wild: bool) -> list[str]:
    """A high Wedge or Phalanx (so the claim is likely to hold), maybe with a wild card."""
    color = rng.choice("ROYGBP")
    if rng.random() < 0.7:
        start = rng.randint(11 - size - 2, 11 - size)
        cards = [f"{color}{v}" for v in range(start, start + size)]
    else:
        value = rng.choice((9, 10))
        cards = [f"{c}{value}" for c in rng.sample("ROYGBP", size)]
    if wild:
        cards[rng.randrange(size)] = rng.choice(("alexander", "darius"))
    return cards


def _candidate(rng: random.Random, kind: str) -> ClaimQuestion:
    mud = kind.startswith("mud")
    size = 4 if mud else 3
    mine = _strong_mine(rng, size, kind == "wild-mine")
    taken = {Card.parse(c).code for c in mine if Card.parse(c).is_troop}
    free = [t for t in range(60) if t not in taken]
    theirs: list[str] = []
    if kind in ("mud", "wild-mine"):
        theirs = [str(Card(t)) for t in rng.sample(free, rng.randint(1, 2))]
    elif kind == "wild-theirs":
        theirs = [rng.choice(("alexander", "darius", "cavalry", "shield"))]
        if rng.random() < 0.5:
            theirs.append(str(Card(rng.choice(free))))
    used = {Card.parse(c).code for c in theirs if Card.parse(c).is_troop}
    free = [t for t in free if t not in used]
    seen = [str(Card(t)) for t in rng.sample(free, rng.randint(0, 14))]
    if kind == "fog":
        # Fog: a high total needs most of the 10s and 9s face up to hold.
        mine = ["R10", "O10", "Y10"]
        seen = [f"{c}{v}" for c in "GBP" for v in (10, 9) if rng.random() < 0.9]
        seen = [s for s in seen if s not in mine]
    return ClaimQuestion(mine, theirs, seen, mud=mud, fog=kind == "fog")


def hard_suite(seed: int, count: int) -> list[tuple[str, ClaimQuestion]]:
    """``count`` valid claims, cycling through the kinds, from a seeded generator.

    Validity is chosen with the solver's decision; the benchmark then reports how many
    the brute force agrees with, so a wrong selection shows up in the figures.
    """
    rng = random.Random(seed)
    suite: list[tuple[str, ClaimQuestion]] = []
    cache = SolverCache()
    attempts = 0
    while len(suite) < count:
        kind = KINDS[len(suite) % len(KINDS)]
        attempts += 1
        if attempts > 200 * count:
            raise RuntimeError("could not generate enough valid claims")
        q = _candidate(rng, kind)
        if decide(q, cache=cache).valid:
            suite.append((kind, q))
    cache.clear()
    return suite


def _stats(seconds: list[float]) -> dict[str, float]:
    ms = sorted(s * 1e3 for s in seconds)
    p99 = ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))]
    return {
        "median_ms": statistics.median(ms),
        "p99_ms": p99,
        "max_ms": ms[-1],
        "total_ms": sum(ms),
        "n": len(ms),
    }


def _time(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


@dataclass
class BenchResult:
    seed: int
    count: int
    kinds: dict[str, int]
    decide_cold: dict[str, float]
    decide: dict[str, float]
    prove: dict[str, float]
    verify: dict[str, float]
    brute_force: dict[str, float]
    speedup_total: float
    speedup_median: float
    oracle_agrees: int
    peak_rss_mb: float
    checks: dict[str, bool] = field(default_factory=dict)


def run(seed: int = 1, count: int = 60, repeat: int = 20, brute: bool = True) -> BenchResult:
    """Time decide (cold: first call builds the formula; warm: ``repeat`` calls per case),
    prove, verify and the brute-force oracle on the same suite, in this process."""
    suite = hard_suite(seed, count)
    cache = SolverCache()
    questions = [q for _, q in suite]
    cold = [_time(partial(decide, q, cache=cache)) for q in questions]
    warm = [_time(partial(decide, q, cache=cache)) for _ in range(repeat) for q in questions]
    proofs = []
    prove_times = []
    for _, q in suite:
        start = time.perf_counter()
        proofs.append(prove(q, cache=cache))
        prove_times.append(time.perf_counter() - start)
    verify_times = [_time(partial(verify, p)) for p in proofs]
    brute_times: list[float] = []
    agrees = 0
    if brute:
        for _, q in suite:
            start = time.perf_counter()
            answer = oracle.decide(q.mine, q.theirs, q.seen, q.mud, q.fog, q.completed_first)
            brute_times.append(time.perf_counter() - start)
            agrees += answer.valid
    warm_per_case = [statistics.median(warm[i::count]) for i in range(count)]
    decide_stats = _stats(warm)
    brute_stats = _stats(brute_times) if brute_times else {}
    kinds: dict[str, int] = {}
    for kind, _ in suite:
        kinds[kind] = kinds.get(kind, 0) + 1
    speedup_total = (
        brute_stats["total_ms"] / (sum(warm_per_case) * 1e3) if brute_times else float("nan")
    )
    speedup_median = (
        statistics.median(b / d for b, d in zip(brute_times, warm_per_case, strict=True))
        if brute_times
        else float("nan")
    )
    result = BenchResult(
        seed=seed,
        count=count,
        kinds=kinds,
        decide_cold=_stats(cold),
        decide=decide_stats,
        prove=_stats(prove_times),
        verify=_stats(verify_times),
        brute_force=brute_stats,
        speedup_total=speedup_total,
        speedup_median=speedup_median,
        oracle_agrees=agrees,
        peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    )
    result.checks = {
        "decide median <= 0.2 ms": decide_stats["median_ms"] <= TARGETS["decide_median_ms"],
        "decide p99 <= 2 ms": decide_stats["p99_ms"] <= TARGETS["decide_p99_ms"],
        "prove p99 <= 5 ms": result.prove["p99_ms"] <= TARGETS["prove_p99_ms"],
        "verify median <= 20 ms": result.verify["median_ms"] <= TARGETS["verify_median_ms"],
    }
    if brute:
        result.checks[">= 100x faster than brute force"] = speedup_total >= TARGETS["speedup_min"]
        result.checks["brute force agrees on every case"] = agrees == count
    cache.clear()
    return result


__all__ = ["KINDS", "TARGETS", "BenchResult", "hard_suite", "run"]
