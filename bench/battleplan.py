"""``battlejudge bench battleplan``: the threats question on the start-of-battle position,
the whole command in a fresh process, and the fast path beside the CP-SAT method measured
in the same run (issue 17: at most 1 s for the whole command)."""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from battlejudge.engines.battleplan.threats import threats
from battlejudge.solver.battleplan.answers import Threats
from battlejudge.solver.battleplan.position import Position, position_from_json
from battlejudge.solver.errors import BattlejudgeError

TARGET_S = 1.0
"""Issue 17: ``battleplan ask threats`` on the start-of-battle position, whole command."""


@dataclass
class BenchResult:
    """The figures of one run (seconds)."""

    position: str
    fast_s: list[float] = field(default_factory=list)
    """In-process times of the fast path, one per repeat."""
    fast_method: str = ""
    baseline_s: float | None = None
    """The CP-SAT method's time (None when skipped)."""
    same_answer: bool | None = None
    """The two answers agree on every reach set and verdict (None when skipped)."""

    @property
    def fast_median_s(self) -> float:
        """The median of :attr:`fast_s`."""
        return statistics.median(self.fast_s)


def load(path: Path) -> Position:
    """The position in ``path`` (a position file, docs/battleplan.md)."""
    return position_from_json(json.loads(path.read_text(encoding="utf-8")))


def same_answer(a: Threats, b: Threats) -> bool:
    """Both answers list the same squares for every enemy piece and the same verdict for
    every piece of the player (the witnesses may differ)."""
    return a.reach == b.reach and {g: x.verdict for g, x in a.exposed.items()} == {
        g: x.verdict for g, x in b.exposed.items()
    }


def run(path: Path, player: int = 0, repeat: int = 5, baseline: bool = True) -> BenchResult:
    """Time the fast path ``repeat`` times and, with ``baseline``, the CP-SAT method once
    (about half a minute on the start-of-battle position)."""
    pos = load(path)
    out = BenchResult(str(path))
    fast = None
    for _ in range(repeat):
        start = time.perf_counter()
        fast = threats(pos, player)
        out.fast_s.append(time.perf_counter() - start)
    assert fast is not None
    out.fast_method = fast.method
    if baseline:
        from battlejudge.solver.battleplan.questions import threats as cp_sat_threats

        start = time.perf_counter()
        old = cp_sat_threats(pos, player)
        out.baseline_s = time.perf_counter() - start
        out.same_answer = same_answer(fast, old)
    return out


@dataclass(frozen=True)
class CommandTimes:
    """The whole command's wall and CPU seconds, one per timed run."""

    walls: list[float]
    cpus: list[float]
    """The child's user + system time: what the wall time would be on an idle machine (the
    wall time of a shared one includes waiting for a core)."""

    @property
    def median_s(self) -> float:
        """The median wall time."""
        return statistics.median(self.walls)

    @property
    def cpu_median_s(self) -> float:
        """The median CPU time."""
        return statistics.median(self.cpus)


def time_command(path: Path, player: str, runs: int) -> CommandTimes:
    """``battlejudge battleplan ask threats PATH PLAYER`` in a fresh process ``runs`` times,
    after one untimed run that warms the disk cache. BattlejudgeError if it fails."""
    import resource
    import subprocess
    import sys

    run_cli = (
        "import sys; from battlejudge.cli.main import main; sys.argv[0] = 'battlejudge'; main()"
    )
    argv = [sys.executable, "-c", run_cli, "battleplan", "ask", "threats", str(path), player]
    walls, cpus = [], []
    for _ in range(runs + 1):  # the first run warms the disk cache and is dropped
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, check=False)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime)
        if done.returncode != 0:
            raise BattlejudgeError(
                f"bench battleplan: the command exited {done.returncode}: {done.stderr!r}"
            )
    return CommandTimes(walls[1:], cpus[1:])


__all__ = [
    "TARGET_S",
    "BenchResult",
    "CommandTimes",
    "load",
    "run",
    "same_answer",
    "time_command",
]
