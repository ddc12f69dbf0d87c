"""The claim benchmark: a seeded suite of hard cases, timed against brute force, and
per-split figures of the fast decider (valid and invalid claims, warm and fresh).

Hard cases are claims that hold: nothing stops a search early, so the solver must
refute every completion and the brute force must try them all. The suite mixes an
empty opposing side, Mud (four-card formations, also with an empty side), Fog, and
wild cards on either side. Everything is measured in one process, in one run.
"""

from __future__ import annotations

import json
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from battlejudge.solver.battleline import oracle
from battlejudge.solver.battleline.backend import SolverCache
from battlejudge.solver.battleline.cards import ALL_TROOPS, Card
from battlejudge.solver.battleline.claims import decide, prove, verify
from battlejudge.solver.battleline.decider import formation_size
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
    size = formation_size(mud)
    mine = _strong_mine(rng, size, kind == "wild-mine")
    taken = {Card.parse(c).code for c in mine if Card.parse(c).is_troop}
    free = [t for t in ALL_TROOPS if t not in taken]
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
    """The figures of ``battlejudge bench claims``: per-method timing statistics (median, p99, max,
    total in ms) for the cold and warm decisions, proofs, verification and the brute-force
    baseline, their speed-up ratios, how many answers the oracle confirmed, the peak memory and
    the pass/fail of each target in ``checks``."""

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


# -- per split: valid and invalid claims, warm and in a fresh process -------------------
SPLITS = (
    "3-card valid",
    "3-card invalid",
    "mud valid",
    "mud invalid",
    "wild valid",
    "wild invalid",
    "mud empty-side valid",
)
"""The benchmark's splits: (3-card, Mud, wild cards) x (valid, invalid), and Mud against an
empty side, the question a brute force finds hardest."""
SPLIT_TARGETS = {
    "decide_median_us": 5.0,
    "decide_p99_us": 50.0,
    "fresh_p99_us": 100.0,
    "construct_median_us": 10.0,
}


def _random_question(rng: random.Random, split: str) -> ClaimQuestion | None:
    """A random table for the split (None when the draw breaks a rule, e.g. two Leaders)."""
    mud = split.startswith("mud")
    size = formation_size(mud)
    wild = split.startswith("wild")
    deck = [str(Card(t)) for t in ALL_TROOPS]
    rng.shuffle(deck)
    if rng.random() < 0.5:
        mine = _strong_mine(rng, size, wild)
    else:
        mine = deck[:size]
        if wild:
            mine[rng.randrange(size)] = rng.choice(("alexander", "cavalry", "shield"))
    deck = [c for c in deck if c not in mine]
    n_theirs = 0 if "empty-side" in split else rng.randint(0, size - 1)
    theirs = deck[:n_theirs]
    if wild and n_theirs and rng.random() < 0.5:
        theirs[0] = rng.choice(("darius", "cavalry", "shield"))
    deck = [c for c in deck[n_theirs:] if c not in theirs]
    seen = deck[: rng.randint(0, 30)]
    try:
        return ClaimQuestion(mine, theirs, seen, mud=mud)
    except ValueError:
        return None


def split_suite(seed: int, per_split: int) -> list[tuple[str, ClaimQuestion]]:
    """``per_split`` questions of every split, drawn from a seeded generator. Whether a
    claim holds is chosen with the fast decider (the brute force takes up to a second on
    a Mud question); :func:`run_splits` then asks the brute force about every chosen
    question and reports how many it agrees with, so a wrong selection shows up."""
    rng = random.Random(seed)
    suite: list[tuple[str, ClaimQuestion]] = []
    for split in SPLITS:
        want_valid = split.endswith("valid") and not split.endswith("invalid")
        got = 0
        for _ in range(2000 * per_split):
            if got == per_split:
                break
            q = _random_question(rng, split)
            if q is None:
                continue
            if decide(q).valid == want_valid:
                suite.append((split, q))
                got += 1
        else:
            raise RuntimeError(f"could not draw {per_split} questions for {split!r}")
    return suite


def _us(seconds: list[float]) -> dict[str, float]:
    us = sorted(x * 1e6 for x in seconds)

    def q(p: float) -> float:
        return us[min(len(us) - 1, round(p * (len(us) - 1)))]

    return {
        "median_us": statistics.median(us),
        "p90_us": q(0.9),
        "p99_us": q(0.99),
        "max_us": us[-1],
    }


def _timed_construct_and_decide(line: str) -> tuple[float, float, bool | None]:
    """Time building a question from its JSON strings, then deciding it."""
    obj = json.loads(line)
    start = time.perf_counter()
    q = ClaimQuestion(obj["mine"], obj["theirs"], obj["seen"], obj["mud"], obj["fog"])
    built = time.perf_counter()
    valid = decide(q).valid
    return built - start, time.perf_counter() - built, valid


def fresh_process_main() -> None:
    """Run in a new interpreter (``bench claims --fresh``): read tagged questions (JSON
    lines ``[split, question]``) on stdin, ask each once in the order given, timing the
    construction from strings together with the decision, and print the times as JSON."""
    rows = [json.loads(line) for line in sys.stdin if line.strip()]
    out = []
    for split, question in rows:
        line = json.dumps(question)
        start = time.perf_counter()
        _, _, valid = _timed_construct_and_decide(line)
        out.append((split, time.perf_counter() - start, valid))
    json.dump(out, sys.stdout)


def ask_in_fresh_process(lines: list[str]) -> list[tuple[str, float, bool | None]]:
    """Ask the questions in a new interpreter (:func:`fresh_process_main`); the ``fresh``
    argument of :func:`run_splits`."""
    import subprocess

    code = "from battlejudge.bench.claims import fresh_process_main as m; m()"
    out = subprocess.run(
        [sys.executable, "-c", code],
        input="\n".join(lines),
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    return [(split, seconds, valid) for split, seconds, valid in json.loads(out.stdout)]


@dataclass
class SplitResult:
    """The figures of ``battlejudge bench claims --split``: decision and brute-force timings per
    kind of question, the construction cost from strings, the fresh-process timings, and how many
    of ``total`` answers agreed with the oracle."""

    seed: int
    per_split: int
    decide: dict[str, dict[str, float]]
    brute_force: dict[str, dict[str, float]]
    construct: dict[str, float]
    fresh: dict[str, dict[str, float]]
    fresh_first_us: float | None
    agrees: int
    total: int
    checks: dict[str, bool] = field(default_factory=dict)


def run_splits(
    seed: int = 1,
    per_split: int = 30,
    repeat: int = 50,
    fresh: Callable[[list[str]], list[tuple[str, float, bool | None]]] | None = None,
) -> SplitResult:
    """Per split: the warm decision (``repeat`` timings per question), the construction
    from strings, and the brute-force oracle on the same questions, in this process;
    with ``fresh`` (a function that runs :func:`fresh_process_main` in a new interpreter
    on the shuffled questions), the fresh-process times too."""
    suite = split_suite(seed, per_split)
    warm: dict[str, list[float]] = {s: [] for s in SPLITS}
    brute: dict[str, list[float]] = {s: [] for s in SPLITS}
    construct: list[float] = []
    agrees = 0
    for _, q in suite:  # warm: the first round of every question is not timed
        _timed_construct_and_decide(q.canonical())
    for split, q in suite:
        line = q.canonical()
        for _ in range(repeat):
            built, decided, _valid = _timed_construct_and_decide(line)
            construct.append(built)
            warm[split].append(decided)
        start = time.perf_counter()
        answer = oracle.decide(q.mine, q.theirs, q.seen, q.mud, q.fog, q.completed_first)
        brute[split].append(time.perf_counter() - start)
        agrees += decide(q).valid == answer.valid
    result = SplitResult(
        seed=seed,
        per_split=per_split,
        decide={s: _us(t) for s, t in warm.items()},
        brute_force={s: _us(t) for s, t in brute.items()},
        construct=_us(construct),
        fresh={},
        fresh_first_us=None,
        agrees=agrees,
        total=len(suite),
    )
    if fresh is not None:
        lines = [json.dumps([split, q.to_json()]) for split, q in suite]
        random.Random(seed).shuffle(lines)
        times = fresh(lines)
        result.fresh_first_us = times[0][1] * 1e6
        by_split: dict[str, list[float]] = {}
        for split, seconds, _valid in times[1:]:
            by_split.setdefault(split, []).append(seconds)
        result.fresh = {s: _us(t) for s, t in by_split.items()}
        result.fresh["all (after the first)"] = _us([t for _, t, _ in times[1:]])
    t = SPLIT_TARGETS
    result.checks = {
        "decide median <= 5 us on every split (warm)": all(
            d["median_us"] <= t["decide_median_us"] for d in result.decide.values()
        ),
        "decide p99 <= 50 us on every split (warm)": all(
            d["p99_us"] <= t["decide_p99_us"] for d in result.decide.values()
        ),
        "question from strings median <= 10 us": result.construct["median_us"]
        <= t["construct_median_us"],
        "decider agrees with the brute force on every question": agrees == len(suite),
    }
    if result.fresh:
        result.checks["fresh process p99 <= 100 us (construction included)"] = (
            result.fresh["all (after the first)"]["p99_us"] <= t["fresh_p99_us"]
        )
    return result


__all__ = [
    "KINDS",
    "SPLITS",
    "SPLIT_TARGETS",
    "TARGETS",
    "BenchResult",
    "SplitResult",
    "ask_in_fresh_process",
    "fresh_process_main",
    "hard_suite",
    "run",
    "run_splits",
    "split_suite",
]
