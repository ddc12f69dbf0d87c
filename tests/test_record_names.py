"""Runs name their records so that two runs never collide (battlejudge issue 37): the run's
seed is in every record's file name (``game-SEED-0000.blg``), ``--prefix`` sets its start,
and a record already on disk is never replaced without ``--overwrite`` (exit 2, naming it,
before the first game)."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from battlejudge.cli.main import cli
from battlejudge.engines.games import get_game
from battlejudge.engines.records import record_name
from battlejudge.engines.selfplay import GroupCommit, selfplay
from battlejudge.solver.errors import InputError

FAKE_BOT = shlex.join(
    [sys.executable, str(Path(__file__).with_name("protocol_fake_bot.py")), "good"]
)


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _selfplay(out: Path, seed: int, *more: str) -> Result:
    return run("selfplay", "--games", "2", "--seed", str(seed), "--out", str(out), *more)


def _contents(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.iterdir())}


def test_two_selfplay_runs_with_other_seeds_keep_all_records(tmp_path: Path) -> None:
    out = tmp_path / "games"
    assert _selfplay(out, 1).exit_code == 0
    first = _contents(out)
    assert list(first) == ["game-1-0000.blg", "game-1-0001.blg"]
    r = _selfplay(out, 2)
    assert r.exit_code == 0, r.output
    both = _contents(out)
    assert list(both) == [*first, "game-2-0000.blg", "game-2-0001.blg"]
    assert {k: both[k] for k in first} == first  # the first run's records are untouched
    assert '[Game "2-1"]' in both["game-2-0001.blg"]  # the name agrees with the game id


def test_the_same_selfplay_run_twice_does_not_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "games"
    assert _selfplay(out, 7).exit_code == 0
    mine = out / "game-7-0000.blg"
    mine.write_text("a judge's edited copy\n")
    before = _contents(out)
    r = _selfplay(out, 7)
    assert r.exit_code == 2
    assert f"{mine} exists: not overwritten (--overwrite replaces the records)" in r.output
    assert "Traceback" not in r.output
    assert _contents(out) == before  # nothing written, not even the second game
    r = _selfplay(out, 7, "--overwrite")
    assert r.exit_code == 0, r.output
    assert mine.read_text() != "a judge's edited copy\n"
    assert run("replay", str(mine)).exit_code == 0


def test_prefix_names_the_records_and_a_bad_one_is_exit_2(tmp_path: Path) -> None:
    out = tmp_path / "games"
    r = _selfplay(out, 3, "--game", "force-duel", "--prefix", "heur.v2_rand")
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.iterdir()) == [
        "heur.v2_rand-3-0000.fdg",
        "heur.v2_rand-3-0001.fdg",
    ]
    for bad in ("../elsewhere", "", "-x", "a b"):
        r = _selfplay(tmp_path / "other", 3, "--prefix", bad)
        assert r.exit_code == 2, (bad, r.output)
        assert f"--prefix {bad!r}" in r.output and "Traceback" not in r.output
        assert not (tmp_path / "other").exists()


def test_a_record_made_by_another_run_meanwhile_is_not_replaced(tmp_path: Path) -> None:
    """The check before the first game does not cover a record another run writes while
    this one plays: the write itself refuses to replace it."""
    taken = tmp_path / record_name(0, 0, ".blg")
    held = GroupCommit(None)
    held.add_record(taken, "this run's record\n")
    held.add_record(tmp_path / record_name(0, 1, ".blg"), "the next one\n")
    taken.write_text("the other run's record\n")
    with pytest.raises(InputError, match=re.escape(f"{taken} exists: not overwritten")):
        held.commit()
    assert taken.read_text() == "the other run's record\n"
    held.commit()  # the records after it are still written
    assert (tmp_path / record_name(0, 1, ".blg")).read_text() == "the next one\n"


def test_selfplay_library_refuses_before_the_first_game(tmp_path: Path) -> None:
    game = get_game("battleline")
    (tmp_path / "game-5-0001.blg").write_text("kept\n")
    with pytest.raises(InputError, match=re.escape("game-5-0001.blg exists")):
        next(selfplay(game, ["random", "random"], 2, 5, out=tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game-5-0001.blg"]


def test_two_referee_matches_with_other_seeds_share_a_folder(tmp_path: Path) -> None:
    out = tmp_path / "games"
    args = ["referee", "--north", FAKE_BOT, "--south", FAKE_BOT, "--out", str(out)]
    args += ["--timeout", "120"]  # a loaded machine may start a bot slowly
    assert run(*args, "--seed", "4").exit_code == 0
    assert run(*args, "--seed", "9", "--prefix", "cup").exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == ["cup-9-0000.blg", "game-4-0000.blg"]
    first = (out / "game-4-0000.blg").read_text()
    r = run(*args, "--seed", "4")
    assert r.exit_code == 2 and f"{out / 'game-4-0000.blg'} exists" in r.output
    assert (out / "game-4-0000.blg").read_text() == first


def test_records_under_their_old_names_still_replay_and_audit(tmp_path: Path) -> None:
    """Records written before the seed was in the name (``game-0000.blg``) read as before:
    a record's game is its ``Game`` tag, not its file name."""
    out, log = tmp_path / "games", tmp_path / "claims.log"
    r = run("selfplay", "--games", "2", "--seed", "3", "--out", str(out), "--log", str(log))
    assert r.exit_code == 0, r.output
    for path in sorted(out.iterdir()):
        path.rename(out / f"game-{path.name[7:]}")  # game-3-0000.blg -> game-0000.blg
    assert sorted(p.name for p in out.iterdir()) == ["game-0000.blg", "game-0001.blg"]
    assert run("replay", str(out / "game-0001.blg")).exit_code == 0
    r = run("audit", str(log), "--games", str(out))
    assert r.exit_code == 0, r.output
