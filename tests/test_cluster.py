"""Self-play and tournaments on Ray (issue 18, items 3 and 4): the same seed gives the same
results, records and proof-log claims as a local run; a worker lost mid-game loses no game
and counts none twice; without Ray, one line names the extra. The tests start their own
local Ray (two CPUs, no dashboard) once for the module."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from cluster_bots import MARKER

from battlejudge.apps.cluster import RayMapper, check_cluster
from battlejudge.cli.main import cli
from battlejudge.engines.games import get_game
from battlejudge.engines.selfplay import GameSummary, selfplay
from battlejudge.engines.tournament import play_tournament_game, run_tournament, schedule
from battlejudge.proofs.log import ProofLog
from battlejudge.solver.errors import InputError

TESTS = Path(__file__).parent


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Path]]:
    ray = pytest.importorskip("ray")
    marker = tmp_path_factory.mktemp("died")
    env = {"PYTHONPATH": str(TESTS), MARKER: str(marker)}
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": env},
    )
    try:
        yield ray, marker
    finally:
        ray.shutdown()


def _run(
    tmp: Path,
    game: str,
    bots: list[str],
    games: int,
    seed: int,
    mapper: Any,
    options: dict[str, str] | None = None,
) -> tuple[list[GameSummary], dict[str, str], list[dict[str, Any]]]:
    """A self-play run's summaries, record files (name -> text) and log records without
    what differs between two runs of the same seed (the time a record was appended, and so
    the chain's hashes and signatures)."""
    info = get_game(game)
    tmp.mkdir()
    log = ProofLog(tmp / "proof.log") if info.logs_claims else None
    out = tmp / "records"
    summaries = list(selfplay(info, bots, games, seed, options, out=out, log=log, mapper=mapper))
    records = {p.name: p.read_text(encoding="utf-8") for p in sorted(out.iterdir())}
    claims = []
    if log is not None:
        for line in (tmp / "proof.log").read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            for changing in ("time", "prev", "sig"):
                record.pop(changing, None)
            claims.append(record)
    return summaries, records, claims


def _same_runs(a: tuple[Any, ...], b: tuple[Any, ...]) -> None:
    summaries_a, records_a, claims_a = a
    summaries_b, records_b, claims_b = b
    strip = [{**s.to_json(), "record": s.record.name if s.record else None} for s in summaries_a]
    assert strip == [
        {**s.to_json(), "record": s.record.name if s.record else None} for s in summaries_b
    ]
    assert records_a == records_b
    assert claims_a == claims_b


@pytest.mark.parametrize(
    ("game", "options"),
    [("battleline", {}), ("nine-circles", {}), ("lines-of-battle", {})],
)
def test_selfplay_on_ray_matches_the_local_run(
    ray_cluster: tuple[Any, Path], tmp_path: Path, game: str, options: dict[str, str]
) -> None:
    ray, _ = ray_cluster
    local = _run(tmp_path / "local", game, ["random", "random"], 5, 7, None, options)
    on_ray = _run(tmp_path / "ray", game, ["random", "random"], 5, 7, RayMapper(ray), options)
    assert len(local[0]) == 5 and len(local[1]) == 5
    if game != "lines-of-battle":
        assert local[2], "Battle Line's random games decide claims"
    _same_runs(local, on_ray)


@pytest.mark.parametrize(
    ("bot", "ray_retries"),
    [
        ("DiesOnce", 3),  # Ray runs the task again
        ("DiesOnceMore", 0),  # Ray gives up; the driver submits the chunk again
    ],
)
def test_a_worker_lost_mid_game_loses_no_game_and_counts_none_twice(
    ray_cluster: tuple[Any, Path], tmp_path: Path, bot: str, ray_retries: int
) -> None:
    ray, died = ray_cluster
    bots = [f"cluster_bots:{bot}", "random"]
    local = _run(tmp_path / "local", "battleline", bots, 6, 3, None)
    mapper = RayMapper(ray, workers=2, chunk=1, retries=ray_retries)
    on_ray = _run(tmp_path / "ray", "battleline", bots, 6, 3, mapper)
    assert (died / bot).exists(), "a Ray worker was killed during the run"
    assert [s.game_id for s in on_ray[0]] == [f"3-{i}" for i in range(6)]
    _same_runs(local, on_ray)


def test_tournament_on_ray_matches_the_local_one(ray_cluster: tuple[Any, Path]) -> None:
    ray, _ = ray_cluster
    game = get_game("battleline")
    names = ["random", "random", "heuristic"]
    specs = schedule(names, 4, 5)
    play = partial(play_tournament_game, "battleline", None, {})
    winners = list(map(play, specs))
    assert set(winners[:4]) == {0, 1}, "random against random: both seats win a game"
    assert list(RayMapper(ray)(play, specs)) == winners  # game by game, in schedule order
    local = run_tournament(game, names, 4, 5)
    seen: list[int] = []
    on_ray = run_tournament(
        game, names, 4, 5, mapper=RayMapper(ray), progress=lambda s: seen.append(s.pair)
    )
    assert [p.to_json() for p in on_ray] == [p.to_json() for p in local]
    assert seen == [0] * 4 + [1] * 4 + [2] * 4  # progress once per game, in schedule order


def test_the_cli_plays_on_ray(ray_cluster: tuple[Any, Path], tmp_path: Path) -> None:
    runs = []
    for cluster in ("local", "ray"):
        args = ["selfplay", "--games", "3", "--seed", "2", "--json", "--cluster", cluster]
        r = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / cluster)])
        assert r.exit_code == 0, r.output
        runs.append([json.loads(line) | {"record": None} for line in r.output.splitlines()])
    assert runs[0] == runs[1] and len(runs[0]) == 3


def test_without_ray_one_line_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    for command in ("selfplay", "tournament"):
        r = CliRunner().invoke(cli, [command, "--games", "2", "--cluster", "ray"])
        assert r.exit_code == 2, r.output
        assert "pip install 'battlejudge[cluster]'" in r.output
        assert len(r.output.strip().splitlines()) == 1
        assert "Traceback" not in r.output


def test_a_local_run_never_imports_ray(tmp_path: Path) -> None:
    code = (
        "import sys; from battlejudge.cli.main import main; "
        "sys.argv = ['battlejudge', 'selfplay', '--games', '1', '--cluster', 'local']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "assert 'ray' not in sys.modules, 'ray imported'"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("bad", ["lan", "ray://", "ray://host", "ray://host:port", "ray:1"])
def test_a_bad_cluster_is_named(bad: str) -> None:
    with pytest.raises(InputError, match=repr(bad).replace("[", r"\[")):
        check_cluster(bad)
    r = CliRunner().invoke(cli, ["tournament", "--games", "2", "--cluster", bad])
    assert r.exit_code == 2 and repr(bad) in r.output
