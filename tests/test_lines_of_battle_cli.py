"""``battlejudge lines-of-battle``: the three questions on the shipped examples (every
plan replayed by the engine), the schema, and bad input (exit 2, one line)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner
from lines_of_battle_helpers import DETERMINISTIC_TIME

from battlejudge.cli.main import cli
from battlejudge.engines.records import GameRecord, replay

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "lines_of_battle"
DET = ("--deterministic-time", str(DETERMINISTIC_TIME))
"""Every plan asked for through the command is bounded by CP-SAT's work, not the clock."""


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_odds_json() -> None:
    code, out, _ = run("lines-of-battle", "ask", "odds", str(EXAMPLES / "odds.json"), "--json")
    assert code == 0
    ans = json.loads(out)
    # seed 003 Unit Types: the swordsman wins ties against a spearman: 21/36 = 7/12
    assert ans["attacks"][0] == {
        "attacker": "D5",
        "target": "D6",
        "aspect": "front",
        "probability": "7/12",
    }
    assert ans["attacks"][2]["probability"] == "1"  # from the side: no roll
    assert sum(Fraction(p) for p in ans["distribution"]) == 1


def test_odds_text() -> None:
    code, out, _ = run("lines-of-battle", "ask", "odds", str(EXAMPLES / "odds.json"))
    assert code == 0 and "Expected: 31/12" in out


def test_exposure_and_best_attack_are_replayed() -> None:
    code, out, _ = run(
        "lines-of-battle", "ask", "exposure", *DET, str(EXAMPLES / "exposure.json"), "--json"
    )
    assert code == 0
    ans = json.loads(out)
    assert ans["player"] == "p1" and ans["replayed"]["certain"] == ans["count"] >= 1
    assert set(ans["threatened"]).isdisjoint(ans["safe"])
    code, out, _ = run(
        "lines-of-battle", "ask", "best-attack", *DET, str(EXAMPLES / "best-attack.json"), "--json"
    )
    assert code == 0
    ans = json.loads(out)
    assert ans["replayed"]["expected"] == ans["plan"]["expected"]
    assert ans["plan"]["actions"][-1] == "end" and ans["plan"]["optimal"]
    code, out, _ = run(
        "lines-of-battle", "ask", "best-attack", *DET, str(EXAMPLES / "best-attack.json")
    )
    assert code == 0 and "Replayed by the engine" in out


def test_schema() -> None:
    code, out, _ = run("lines-of-battle", "schema")
    assert code == 0 and "units" in json.loads(out)["properties"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not JSON"),
        (
            '{"to_move": "p1", "units": [{"at": "Z9", "side": "p1", "type": "archer", '
            '"facing": "N"}]}',
            "units[0].at",
        ),
        (
            '{"to_move": "p1", "units": [{"at": "A1", "side": "p1", "type": "archer", '
            '"facing": "N"}, {"at": "A2", "side": "p2", "type": "archer", "facing": "S"}], '
            '"attacks": [["A2", "A1"]]}',
            "attacks[0]",
        ),
        ('{"to_move": "p1", "units": []}', "attacks: odds needs"),
    ],
)
def test_bad_input_exits_2(tmp_path: Path, content: str, message: str) -> None:
    f = tmp_path / "pos.json"
    f.write_text(content)
    code, _, err = run("lines-of-battle", "ask", "odds", str(f))
    assert code == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_missing_file_exits_2() -> None:
    code, _, err = run("lines-of-battle", "ask", "exposure", "/nonexistent/pos.json")
    assert code == 2 and "nonexistent" in err


@pytest.mark.parametrize("name", ["planner-vs-random.lbg", "planner-vs-random-commander.lbg"])
def test_example_games_replay(name: str) -> None:
    rec = GameRecord.loads((EXAMPLES / name).read_text())
    report = replay(rec)
    assert report.sound and report.state.is_terminal() and rec.seed is not None
