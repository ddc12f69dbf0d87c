"""``audit --games`` over several folders and glob patterns (battlejudge issue 37): a judge
merging runs audits their records together against one log, each record named by its path
(two folders may both hold a ``game-0000.blg``), one game id in two records is a problem,
and a missing folder or a pattern that matches nothing is one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from battlejudge.apps.audit_games import check_games, find_records
from battlejudge.cli.main import cli
from battlejudge.solver.errors import InputError


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _run_into(folder: Path, log: Path, seed: int, old_names: bool = False) -> None:
    r = run(
        "selfplay", "--games", "2", "--seed", str(seed), "--out", str(folder), "--log", str(log)
    )
    assert r.exit_code == 0, r.output
    if old_names:  # as records were named before the seed was in the name
        for path in sorted(folder.iterdir()):
            path.rename(folder / f"game-{path.name.rsplit('-', 1)[1]}")


def _audit(log: Path, *games: str) -> tuple[int, dict[str, Any]]:
    args = [a for g in games for a in ("--games", g)]
    r = run("audit", str(log), *args, "--json")
    return r.exit_code, json.loads(r.output)


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Two runs (seeds 1 and 2) logged to one log, in two folders whose records have the
    same file names (game-0000.blg, game-0001.blg)."""
    log = tmp_path / "claims.log"
    a, b = tmp_path / "runs" / "a", tmp_path / "runs" / "b"
    _run_into(a, log, 1, old_names=True)
    _run_into(b, log, 2, old_names=True)
    assert sorted(p.name for p in a.iterdir()) == sorted(p.name for p in b.iterdir())
    return log, a, b


def test_two_folders_are_audited_together(two_runs: tuple[Path, Path, Path]) -> None:
    log, a, b = two_runs
    code, report = _audit(log, str(a))
    assert code == 1  # run 2's games are in the log, not in folder a
    assert {p["kind"] for p in report["problems"]} == {"no-game-record"}
    code, report = _audit(log, str(a), str(b))
    assert code == 0, report
    assert report["problems"] == [] and report["notes"] == []
    code, report = _audit(log, str(a.parent / "*"))  # a pattern: both folders
    assert code == 0 and report["problems"] == []


def test_equal_file_names_in_two_folders_stay_apart(two_runs: tuple[Path, Path, Path]) -> None:
    log, a, b = two_runs
    edited = b / "game-0000.blg"
    edited.write_text(edited.read_text().replace('[Event "battlejudge selfplay"]', '[Event "x"]'))
    code, report = _audit(log, str(a), str(b))
    assert code == 1
    (problem,) = report["problems"]
    assert problem["kind"] == "header-mismatch"
    assert f"({edited})" in problem["detail"]  # the path, not only game-0000.blg
    assert str(a) not in problem["detail"]


def test_a_pattern_may_name_records(two_runs: tuple[Path, Path, Path]) -> None:
    log, a, _ = two_runs
    code, report = _audit(log, str(a.parent / "*" / "game-0001.blg"))
    assert code == 1
    missing = {p["detail"] for p in report["problems"]}
    assert {p["kind"] for p in report["problems"]} == {"no-game-record"}
    assert any("'1-0'" in d for d in missing) and any("'2-0'" in d for d in missing)
    assert not any("'1-1'" in d or "'2-1'" in d for d in missing)  # found in the records


def test_one_game_in_two_records_is_a_problem(tmp_path: Path) -> None:
    log = tmp_path / "claims.log"
    a, again = tmp_path / "a", tmp_path / "again"
    _run_into(a, log, 5)
    _run_into(again, tmp_path / "other.log", 5)  # the same run, elsewhere
    code, report = _audit(log, str(a), str(again))
    assert code == 1
    dups = [p["detail"] for p in report["problems"] if p["kind"] == "duplicate-game"]
    # problems of no log record (record -1) are each reported, not only a kind's first
    assert len(dups) == 2
    assert dups[0].startswith(f"game 5-0 is in {a / 'game-5-0000.blg'} and in ")
    assert str(again / "game-5-0000.blg") in dups[0]
    assert dups[1].startswith(f"game 5-1 is in {a / 'game-5-0001.blg'} and in ")
    found = check_games([], [a, again])  # every one of them, from the check itself
    assert sorted(p.detail.split(" is in ")[0] for p in found if p.kind == "duplicate-game") == [
        "game 5-0",
        "game 5-1",
    ]


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("no-such-folder", "--games 'no-such-folder': no such folder"),
        (
            "nothing-*-here",
            "--games 'nothing-*-here': the pattern matches no folder or .blg record",
        ),
        ("claims.log", "--games 'claims.log': not a folder or a .blg record"),
    ],
)
def test_a_bad_games_path_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str, says: str
) -> None:
    monkeypatch.chdir(tmp_path)
    log = Path("claims.log")
    _run_into(Path("good"), log, 3)
    r = run("audit", str(log), "--games", "good", "--games", spec)
    assert r.exit_code == 2
    assert r.stderr.splitlines() == [f"battlejudge: error: {says}"]
    assert "Traceback" not in r.output


def test_find_records_keeps_order_and_takes_each_once(tmp_path: Path) -> None:
    for name in ("b", "a"):
        (tmp_path / name).mkdir()
    (tmp_path / "a" / "x.blg").write_text("")
    (tmp_path / "notes.txt").write_text("")
    found = find_records([str(tmp_path / "b"), str(tmp_path / "*"), str(tmp_path / "a" / "*")])
    assert found == [tmp_path / "b", tmp_path / "a", tmp_path / "a" / "x.blg"]
    with pytest.raises(InputError, match="--games"):
        find_records([str(tmp_path / "*.txt")])
