"""``battlejudge bench selfplay``: random-vs-random Battle Line with every claim certified
and logged (fsync per record), against the same games with claims decided but neither
certified nor logged; with a cluster, the same certified run here and on Ray with 1 and 2
workers instead (:func:`battlejudge.apps.cluster.bench_cluster`)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Final

from battlejudge.engines.selfplay import SelfplayBench

__all__ = ["SELFPLAY_TARGET", "run_cluster", "run_selfplay", "selfplay_figures"]

SELFPLAY_TARGET: Final = 60
"""Games per second, every claim certified and logged (issue 17)."""


def run_selfplay(games: int, seed: int, sign: bool) -> SelfplayBench:
    """``games`` games (seed ``seed``) logged to a temporary file log, each record signed
    with a fresh Ed25519 key when ``sign``."""
    from battlejudge.engines.games import get_game
    from battlejudge.engines.selfplay import bench_selfplay
    from battlejudge.proofs.log import ProofLog

    with tempfile.TemporaryDirectory() as tmp:
        key = None
        if sign:
            from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

            key = Ed25519PrivateKey.generate()
        path = Path(tmp) / "bench.log"
        return bench_selfplay(
            get_game("battleline"), games, seed, ProofLog(path, key), lambda: path.stat().st_size
        )


def selfplay_figures(r: SelfplayBench) -> dict[str, Any]:
    """The figures as ``bench selfplay --json`` prints them."""
    return {
        "games": r.games,
        "claims": r.claims,
        "certified_s": r.certified_s,
        "baseline_s": r.baseline_s,
        "games_per_s": r.games_per_s,
        "baseline_games_per_s": r.baseline_games_per_s,
        "log_bytes": r.log_bytes,
        "target_met": r.games_per_s >= SELFPLAY_TARGET,
    }


def run_cluster(cluster: str, games: int, seed: int) -> dict[str, float]:
    """Games per second here and on ``cluster`` (``ray`` or ``ray://HOST:PORT``) with 1 and
    2 workers, and the two scalings, as ``bench selfplay --cluster --json`` prints them."""
    from battlejudge.apps.cluster import bench_cluster, check_cluster

    with tempfile.TemporaryDirectory() as tmp:
        r = bench_cluster(check_cluster(cluster), games, seed, Path(tmp))
    return {
        "games": games,
        "local_games_per_s": r.per_s(r.local_s),
        "ray_1_worker_games_per_s": r.per_s(r.one_worker_s),
        "ray_2_workers_games_per_s": r.per_s(r.two_workers_s),
        "scaling_2_over_1": r.scaling,
        "ray_2_over_local": r.local_s / r.two_workers_s,
    }
