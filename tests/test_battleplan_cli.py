"""``battlejudge battleplan ...`` and the generic commands on BattlePlan files."""

from __future__ import annotations

import json
from pathlib import Path

from battleplan_helpers import DETERMINISTIC_TIME, piece, pos_json
from click.testing import CliRunner

from battlejudge.cli.main import cli

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "battleplan"
DET = ("--deterministic-time", str(DETERMINISTIC_TIME))
"""Every question asked through the command is bounded by CP-SAT's work, not the clock."""


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_can_kill_possible_with_a_replayed_witness() -> None:
    code, out, _ = run(
        "battleplan", "ask", "can-kill", *DET, str(EXAMPLES / "kill-adjacent.json"), "p1 rook"
    )
    assert code == 0
    assert "POSSIBLE (method: cp-sat, cross-checked by exhaustive search)" in out
    assert "p2: attack d4" in out
    assert "Engine replay: replayed 2 actions" in out


def test_can_kill_json() -> None:
    path = str(EXAMPLES / "kill-shielded-buff.json")
    code, out, _ = run("battleplan", "ask", "can-kill", *DET, path, "p1:rook", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["verdict"] == "possible"
    assert data["method"] == "cp-sat" and data["certified"] is False
    assert data["cross_checked"] is True and data["replayed"] is True
    assert data["witness"]["buffs"] == {"p2 rook": "extra-attack"}


def test_impossible_exits_1_and_never_claims_a_certificate() -> None:
    code, out, _ = run(
        "battleplan", "ask", "can-kill", *DET, str(EXAMPLES / "kill-shielded.json"), "p1 rook"
    )
    assert code == 1
    assert "IMPOSSIBLE" in out and "not a certified proof" in out
    code, out, _ = run(
        "battleplan", "ask", "can-score", *DET, str(EXAMPLES / "score-too-far.json"), "p1", "--json"
    )
    assert code == 1
    assert json.loads(out)["verdict"] == "impossible"


def test_can_score() -> None:
    code, out, _ = run(
        "battleplan", "ask", "can-score", *DET, str(EXAMPLES / "score-two-steps.json"), "p1"
    )
    assert code == 0
    assert "p1: move h1" in out


def test_threats_json(tmp_path: Path) -> None:
    f = tmp_path / "t.json"
    f.write_text(
        json.dumps(
            pos_json(
                "p2",
                [piece("d4"), piece("a1"), piece("h1")],
                [piece("d6", 1), piece("h8"), piece("g8")],
            )
        )
    )
    code, out, _ = run("battleplan", "ask", "threats", *DET, str(f), "p1", "--json")
    assert code == 0
    data = json.loads(out)
    # One face-down card: the rook can step to a neighbour of d6 (or stay), no further.
    assert data["reach"]["p2 rook"] == ["d5", "c6", "d6", "e6", "d7"]
    assert data["exposed"]["p1 rook"]["verdict"] == "impossible"
    assert data["reach"]["p2 horse"] == ["h8"]
    # The CP-SAT method, asked for everything, gives the same answer.
    code, out, _ = run(
        "battleplan", "ask", "threats", *DET, str(f), "p1", "--json", "--method", "cp-sat"
    )
    assert code == 0
    old = json.loads(out)
    assert old["method"] == "cp-sat"
    assert old["reach"] == data["reach"]
    assert {k: v["verdict"] for k, v in old["exposed"].items()} == {
        k: v["verdict"] for k, v in data["exposed"].items()
    }


def test_threats_text_names_how_each_part_was_found() -> None:
    path = str(EXAMPLES / "start-of-battle.json")
    code, out, _ = run("battleplan", "ask", "threats", *DET, path, "p1")
    assert code == 0
    assert "(method: bounds+engine-playouts, not cross-checked)" in out
    # Dice 6-2-1: the p2 rook has six face-down cards, at most 4 of them steps (3 MOVE,
    # 1 DEFEND: seed page 2, the per-piece caps), so it reaches 4 squares from c8.
    assert "p2 rook can reach 22 squares" in out and " c4 " in out
    assert "p1 horse: safe from enemy attacks this round (no enemy can attack" in out
    assert "p1 rook: EXPOSED" in out and "replayed" in out


def test_bench_battleplan_prints_its_figures_and_target() -> None:
    code, out, _ = run("bench", "battleplan", "--runs", "1", "--no-baseline", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["target_s"] == 1.0 and isinstance(data["met"], bool)
    assert data["command_median_s"] > 0 and data["command_cpu_median_s"] > 0
    assert data["fast_method"] == "bounds+engine-playouts"
    assert data["baseline_s"] is None and data["same_answer"] is None


def test_bad_position_files_exit_2_with_the_path(tmp_path: Path) -> None:
    f = tmp_path / "bad.json"
    data = pos_json(
        "p1", [piece("d4", 1), piece("a1"), piece("b1")], [piece("d5"), piece("h8"), piece("g8")]
    )
    data["pieces"]["p2"]["rook"]["square"] = "i9"
    f.write_text(json.dumps(data))
    code, _, err = run("battleplan", "ask", "can-kill", str(f), "p1 rook")
    assert code == 2
    assert "pieces.p2.rook.square: 'i9' is not a square" in err
    assert "Traceback" not in err
    f.write_text("{not json")
    code, _, err = run("battleplan", "ask", "can-score", str(f), "p1")
    assert code == 2 and "not JSON (line 1" in err
    code, _, err = run(
        "battleplan", "ask", "can-kill", str(EXAMPLES / "kill-adjacent.json"), "p3 king"
    )
    assert code == 2 and "'p3 king' is not a piece" in err


def test_schema_and_position_commands() -> None:
    code, out, _ = run("battleplan", "schema")
    assert code == 0 and "to_move" in json.loads(out)["properties"]
    code, out, _ = run(
        "battleplan", "position", str(EXAMPLES / "greedy-vs-greedy.bpg"), "--step", "233"
    )
    assert code == 0
    assert json.loads(out) == json.loads((EXAMPLES / "from-game.json").read_text())
    code, _, err = run(
        "battleplan", "position", str(EXAMPLES / "greedy-vs-greedy.bpg"), "--step", "3"
    )
    assert code == 2 and "start of a battle turn" in err


def test_the_example_game_replays_and_a_bad_record_names_its_line(tmp_path: Path) -> None:
    code, _, _ = run("replay", str(EXAMPLES / "greedy-vs-greedy.bpg"))
    assert code == 0
    text = (EXAMPLES / "greedy-vs-greedy.bpg").read_text().splitlines()
    text[9] = "[Seed seven]"
    bad = tmp_path / "bad.bpg"
    bad.write_text("\n".join(text))
    code, _, err = run("replay", str(bad))
    assert code == 2 and "line 10" in err
