"""``battlejudge bench startup``: the whole-process wall time of one-shot commands (start-up
included), beside two baselines run in turn with them: a bare interpreter, and importing
every command module at once (how every command started before the commands were loaded
lazily)."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Iterable
from typing import Any, Final

__all__ = ["STARTUP_CASES", "run_startup"]

STARTUP_CASES: Final[tuple[tuple[str, tuple[str, ...], float], ...]] = (
    ("--help", ("--help",), 0.2),
    (
        "claim (one-shot)",
        ("claim", "--mine", "R4 R5 R3", "--theirs", "B8", "--seen", "B7 B10"),
        0.2,
    ),
    ("guide ask", ("guide", "battleline", "ask", "how many cards in a hand"), 0.5),
)
"""(name, arguments, target wall seconds): issue 17 item 4 and issue 20 item 5."""

RUN_CLI: Final = (
    "import sys; from battlejudge.cli.main import main; sys.argv[0] = 'battlejudge'; main()"
)
"""The ``battlejudge`` command, run by a fresh interpreter."""


def run_startup(runs: int, command_modules: Iterable[str]) -> list[dict[str, Any]]:
    """Each case's median and max wall time over ``runs`` rounds (after one dropped round
    that warms the disk cache), its ratio to importing every module of
    ``command_modules`` (the ``battlejudge.cli`` modules the commands live in) and its
    target; one row per case, the baselines first."""
    eager = "; ".join(f"import battlejudge.cli.{m}" for m in sorted(set(command_modules)))
    cases: list[tuple[str, list[str], float | None]] = [
        ("python (bare)", [sys.executable, "-c", "pass"], None),
        ("every command imported", [sys.executable, "-c", eager], None),
    ]
    cases += [(n, [sys.executable, "-c", RUN_CLI, *a], t) for n, a, t in STARTUP_CASES]
    times: dict[str, list[float]] = {name: [] for name, _, _ in cases}
    for _ in range(runs + 1):  # the first round warms the disk cache and is dropped
        for name, argv, _ in cases:
            start = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(t[1:]) for name, t in times.items()}
    eager_s = medians["every command imported"]
    return [
        {
            "name": name,
            "median_s": round(medians[name], 4),
            "max_s": round(max(times[name][1:]), 4),
            "ratio_to_eager_import": round(medians[name] / eager_s, 3),
            "target_s": target,
            "met": None if target is None else medians[name] <= target,
        }
        for name, _, target in cases
    ]
