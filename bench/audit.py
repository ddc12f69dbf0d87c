"""``battlejudge bench audit``: auditing a log of self-play claims (the DRAT check of every
certificate; with ``deep``, the brute-force oracle too), against re-proving every logged
question from scratch."""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["AuditBench", "run_audit"]


@dataclass(frozen=True)
class AuditBench:
    """The figures: ``records`` audited from ``games`` self-play games, the problems found,
    the audit's seconds, the deep audit's (None: skipped) and the baseline's (re-proving)."""

    games: int
    records: int
    problems: int
    audit_s: float
    deep_s: float | None
    reprove_s: float

    @property
    def target_met(self) -> bool:
        """At most 30 s per 1,000 records with the DRAT check."""
        return self.audit_s * 1000 / self.records <= 30

    def to_json(self) -> dict[str, Any]:
        """The figures as ``bench audit --json`` prints them."""
        return {
            "records": self.records,
            "problems": self.problems,
            "audit_s": self.audit_s,
            "deep_s": self.deep_s,
            "reprove_s": self.reprove_s,
            "target_met": self.target_met,
        }


def _write_claims(path: Path, n_claims: int, seed: int) -> int:
    """Play random-vs-random games, their claims logged to ``path``, until at least
    ``n_claims`` are there; the number of games played."""
    from battlejudge.engines.games import Setup, get_game
    from battlejudge.engines.runner import play_game
    from battlejudge.engines.selfplay import game_seed
    from battlejudge.proofs.log import ProofLog

    written = 0
    i = 0
    game = get_game("battleline")
    with ProofLog(path) as log:
        while written < n_claims:
            gs = game_seed(seed, i)
            bots = [game.make_bot("random", gs + 1), game.make_bot("random", gs + 2)]
            setup = Setup(log=log, game_id=f"bench-{i}")
            state, _ = play_game(game, bots, gs, setup=setup, record=False)
            written += int(game.stats(state)["claims"]) if game.stats else 0
            i += 1
    return i


def run_audit(n_claims: int, seed: int, deep: bool) -> AuditBench:
    """A log of at least ``n_claims`` self-play claims in a temporary folder, audited (and
    with ``deep``, audited deep), then every logged question proved again."""
    from battlejudge.proofs.audit import audit_log
    from battlejudge.solver import battleline as bl

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.log"
        games = _write_claims(path, n_claims, seed)
        start = time.perf_counter()
        report = audit_log(path)
        audit_s = time.perf_counter() - start
        start = time.perf_counter()
        for rec in report.records:
            bl.prove(bl.ClaimQuestion.from_json(rec.question))
        baseline_s = time.perf_counter() - start
        deep_s = None
        if deep:
            start = time.perf_counter()
            audit_log(path, deep=True)
            deep_s = time.perf_counter() - start
    return AuditBench(games, len(report.records), len(report.problems), audit_s, deep_s, baseline_s)
