"""Results are checkable (issue 15, item 7): a Battle Line record's ``Result`` tag is
checked against the game it replays (by ``replay`` and by ``audit --games``), a forfeit
is stated by the record's last line and replayed, and a draw without its card is a parse
error naming the line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from battlejudge.cli.main import cli
from battlejudge.engines.battleline.game import GAME
from battlejudge.engines.battleline.record import GameRecord, RecordError, replay
from battlejudge.engines.runner import play_game

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "games" / "every-tactic.blg"


def run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.output


def test_a_changed_result_tag_is_caught_by_replay(tmp_path: Path) -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    assert '[Result "north"]' in text
    bad = tmp_path / "g.blg"
    for wrong in ("south", "draw", "*"):
        bad.write_text(text.replace('[Result "north"]', f'[Result "{wrong}"]'), encoding="utf-8")
        code, out = run("replay", str(bad), "--json")
        assert code == 1, out
        problem = json.loads(out)["problem"]
        assert problem["kind"] == "wrong-result" and "the game north" in problem["detail"]


def test_a_changed_result_tag_is_caught_by_audit_games(tmp_path: Path) -> None:
    games, log = tmp_path / "games", tmp_path / "p.log"
    code, out = run(
        "selfplay",
        "--games",
        "1",
        "--bots",
        "heuristic,random",
        "--seed",
        "2",
        "--out",
        str(games),
        "--log",
        str(log),
    )
    assert code == 0, out
    (record,) = games.iterdir()
    text = record.read_text(encoding="utf-8")
    winner = GameRecord.loads(text).tags["Result"]
    other = "south" if winner == "north" else "north"
    record.write_text(text.replace(f'[Result "{winner}"]', f'[Result "{other}"]'), "utf-8")
    code, out = run("audit", str(log), "--games", str(games), "--json")
    assert code == 1, out
    kinds = {p["kind"] for p in json.loads(out)["problems"]}
    assert "unsound-game" in kinds


def _unfinished(turns: int) -> GameRecord:
    """A real game's record cut after ``turns`` turns (the game not over)."""
    bots = [GAME.make_bot("random", 1), GAME.make_bot("random", 2)]
    _, played = play_game(GAME, bots, 5)
    rec = GameRecord.loads(played.dumps())
    rec.turns = rec.turns[:turns]
    rec.tags["Result"] = "*"
    return rec


def test_a_forfeit_line_ends_the_game_and_replays() -> None:
    rec = _unfinished(6)
    assert replay(rec).sound  # cut, not over, and says so
    rec.forfeit = (0, "timeout")
    rec.tags["Result"] = "south"
    text = rec.dumps()
    assert text.rstrip().endswith("forfeit north timeout")
    again = GameRecord.loads(text)
    assert again.forfeit == (0, "timeout")
    report = replay(again)
    assert report.sound, report.problem
    assert report.state.end_reason == "forfeit" and report.state.winner == 1
    # The header may not name a winner the forfeit line contradicts...
    again.tags["Result"] = "north"
    assert replay(again).problem is not None
    # ...nor a winner of a game that did not end.
    again.forfeit = None
    problem = replay(again).problem
    assert problem is not None and problem.kind == "wrong-result"
    assert "not over" in problem.detail


def test_nothing_may_follow_the_forfeit_line() -> None:
    text = _unfinished(4).dumps() + "forfeit south crash\n5. N: pass\n"
    with pytest.raises(RecordError, match="line"):
        GameRecord.loads(text)


def test_a_draw_without_its_card_is_a_parse_error_naming_the_line(tmp_path: Path) -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    lines = text.splitlines()
    index = next(i for i, line in enumerate(lines) if "| draw troop " in line)
    lines[index] = lines[index][: lines[index].index("| draw troop ")] + "| draw troop"
    bad = tmp_path / "g.blg"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out = run("replay", str(bad))
    assert code == 2, out
    assert f"line {index + 1}" in out and "draw troop" in out and "Traceback" not in out
