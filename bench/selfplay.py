"""``battlejudge bench selfplay``: random-vs-random Battle Line with every claim certified
and logged (fsync per record), against the same games with claims decided but neither
certified nor logged; with a cluster, the same certified run here and on Ray with 1 and 2
workers instead."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from battlejudge.apps.cluster import RayMapper, check_cluster, connect
from battlejudge.engines.games import BatchClaimLog, GameInfo, Setup, get_game
from battlejudge.engines.runner import play_game
from battlejudge.engines.selfplay import GroupCommit, game_seed

__all__ = [
    "SELFPLAY_TARGET",
    "ClusterBench",
    "SelfplayBench",
    "bench_cluster",
    "bench_selfplay",
    "run_cluster",
    "run_selfplay",
    "selfplay_figures",
]

SELFPLAY_TARGET: Final = 60
"""Games per second, every claim certified and logged (issue 17)."""


@dataclass(frozen=True)
class SelfplayBench:
    """The figures of ``battlejudge bench selfplay``: games played, wall time with every claim
    certified and logged and without (the baseline), claims certified and log size."""

    games: int
    certified_s: float
    baseline_s: float
    claims: int
    log_bytes: int

    @property
    def games_per_s(self) -> float:
        """Games per second with every claim certified."""
        return self.games / self.certified_s

    @property
    def baseline_games_per_s(self) -> float:
        """Games per second of the baseline (claims decided, not certified)."""
        return self.games / self.baseline_s


def bench_selfplay(
    game: GameInfo, games: int, seed: int, log: BatchClaimLog | None, log_size: Callable[[], int]
) -> SelfplayBench:
    """Random against random with every claim certified and logged, against the same
    games with claims decided but not certified and nothing logged (the baseline)."""

    def run(certify: bool) -> tuple[float, int]:
        claims = 0
        held = GroupCommit(log if certify else None)
        start = time.perf_counter()
        for i in range(games):
            gs = game_seed(seed, i)
            bots = [game.make_bot("random", gs + 1 + k) for k in range(len(game.seats))]
            setup = Setup(log=held, game_id=f"bench-{seed}-{i}", certify=certify)
            state, _ = play_game(game, bots, gs, setup=setup, record=False)
            if held.due:
                held.commit()
            if game.stats is not None:
                claims += int(game.stats(state).get("claims", 0))
        held.commit()
        return time.perf_counter() - start, claims

    baseline, _ = run(False)
    certified, claims = run(True)
    return SelfplayBench(games, certified, baseline, claims, log_size())


def run_selfplay(games: int, seed: int, sign: bool) -> SelfplayBench:
    """:func:`bench_selfplay` of ``games`` games (seed ``seed``) logged to a temporary file
    log, each record signed with a fresh Ed25519 key when ``sign``."""
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


# -- on a cluster ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ClusterBench:
    """The figures of ``battlejudge bench selfplay --cluster ray``: the same self-play run
    (random bots, every claim certified and logged) here and on Ray with 1 and 2 workers."""

    games: int
    local_s: float
    one_worker_s: float
    two_workers_s: float

    def per_s(self, seconds: float) -> float:
        """Games per second of a run that took ``seconds``."""
        return self.games / seconds

    @property
    def scaling(self) -> float:
        """Two workers' games/s over one worker's (2.0 is perfect scaling)."""
        return self.one_worker_s / self.two_workers_s


def bench_cluster(cluster: str, games: int, seed: int, folder: Path) -> ClusterBench:
    """Time ``games`` games of random-vs-random Battle Line self-play, claims certified
    and logged to a proof log in ``folder``: here, then on ``cluster`` with one and with
    two workers (after a warm-up that starts the workers, which is not timed)."""
    from battlejudge.engines.selfplay import selfplay
    from battlejudge.proofs.log import ProofLog

    ray = connect(cluster)
    game = get_game("battleline")

    def run(name: str, play: RayMapper | None) -> float:
        log = ProofLog(folder / f"{name}.log")
        start = time.perf_counter()
        for _ in selfplay(game, ["random", "random"], games, seed, log=log, mapper=play):
            pass
        return time.perf_counter() - start

    local = run("local", None)
    list(RayMapper(ray, workers=2, chunk=1)(_warm_up, range(4)))
    one = run("one", RayMapper(ray, workers=1))
    two = run("two", RayMapper(ray, workers=2))
    return ClusterBench(games, local, one, two)


def _warm_up(i: int) -> int:
    """A task that only makes a worker start and import the engines."""
    from battlejudge.engines.selfplay import play_selfplay_game  # noqa: F401

    return i


def run_cluster(cluster: str, games: int, seed: int) -> dict[str, float]:
    """Games per second here and on ``cluster`` (``ray`` or ``ray://HOST:PORT``) with 1 and
    2 workers, and the two scalings, as ``bench selfplay --cluster --json`` prints them."""
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
