"""The generic machinery every game after Battle Line plugs into: records, the runner,
round robins, and the selfplay / tournament / play / replay / show commands, exercised
with a toy game (tests/toy_game.py) so they are tested apart from any real game."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import toy_game
from click.testing import CliRunner
from conformance import check_playout
from hypothesis import given
from hypothesis import strategies as st

from battlejudge.cli.main import cli
from battlejudge.engines.games import get_game, parse_options, register_game
from battlejudge.engines.records import GameRecord, Move, replay
from battlejudge.engines.runner import BotError, play_game
from battlejudge.engines.tournament import run_round_robin, schedule
from battlejudge.solver.errors import InputError

register_game("toy-pig", "toy_game")
GAME = get_game("toy-pig")


def test_conformance_of_the_toy_game() -> None:
    for seed in range(50):
        check_playout(lambda: toy_game.PigState(), toy_game.deserialize, seed, deep_every=3)


@given(st.integers(min_value=0, max_value=2**32))
def test_a_played_game_round_trips_and_replays(seed: int) -> None:
    bots = [GAME.make_bot("random", seed), GAME.make_bot("hold8", seed + 1)]
    state, rec = play_game(GAME, bots, seed)
    text = rec.dumps()
    again = GameRecord.loads(text)
    assert again.dumps() == text
    report = replay(again)
    assert report.sound, report.problem
    assert report.state.serialize() == state.serialize()
    assert report.steps == len(rec.moves)


def _record(seed: int = 3) -> GameRecord:
    bots = [GAME.make_bot("hold8", 1), GAME.make_bot("hold8", 2)]
    return play_game(GAME, bots, seed)[1]


def test_replay_names_the_line_of_an_illegal_action() -> None:
    rec = GameRecord.loads(_record().dumps())
    chance = next(i for i, m in enumerate(rec.moves) if m.seat == "chance")
    rec.moves[chance] = Move("chance", "die 7", rec.moves[chance].line)
    report = replay(rec)
    assert report.problem is not None
    assert report.problem.kind == "illegal-action"
    assert report.problem.line == rec.moves[chance].line
    assert "die 7" in report.problem.detail


def test_replay_catches_the_wrong_seat_and_the_wrong_result() -> None:
    rec = GameRecord.loads(_record().dumps())
    player = next(i for i, m in enumerate(rec.moves) if m.seat != "chance")
    rec.moves[player] = Move("p2" if rec.moves[player].seat == "p1" else "p1", "roll", 9)
    problem = replay(rec).problem
    assert problem is not None and problem.kind == "wrong-player"

    rec = GameRecord.loads(_record().dumps())
    rec.result = "p2" if rec.result == "p1" else "p1"
    problem = replay(rec).problem
    assert problem is not None and problem.kind == "wrong-result"


@pytest.mark.parametrize(
    "text, needle",
    [
        ("p1: roll\n", "no [Game"),
        ('[Game "toy-pig"]\n[Seed "x"]\n', "'x'"),
        ('[Game "toy-pig"]\nroll\n', "line 2"),
        ('[Game "toy-pig"\n', "line 1"),
    ],
)
def test_malformed_records_are_input_errors(text: str, needle: str) -> None:
    with pytest.raises(InputError) as e:
        GameRecord.loads(text)
    assert needle in str(e.value)


def test_unknown_games_and_options_are_input_errors() -> None:
    with pytest.raises(InputError, match="'chess'"):
        get_game("chess")
    with pytest.raises(InputError, match="'speed'"):
        replay(GameRecord("toy-pig", {"speed": "3"}))
    with pytest.raises(InputError, match="KEY=VALUE"):
        parse_options(["novalue"])
    assert parse_options(["a=b=c"]) == {"a": "b=c"}


def test_an_illegal_bot_move_is_named() -> None:
    class Cheat:
        name = "cheat"

        def step(self, state: object) -> int:
            return 99

    with pytest.raises(BotError, match="cheat"):
        play_game(GAME, [Cheat(), Cheat()], 0)


def test_round_robin_counts_each_pair_with_swapped_seats() -> None:
    names = ["a", "b", "c"]
    specs = schedule(names, 4, 9)
    assert len(specs) == 12
    # each pair: the first bot has seat 0 in games 0 and 2, the same chance seed per two games
    first = [s for s in specs if s.pair == 0]
    assert [s.north for s in first] == ["a", "b", "a", "b"]
    assert first[0].seed == first[1].seed != first[2].seed

    def seat0_wins(spec: object) -> int | None:
        return 0

    pairs = run_round_robin(names, 4, 9, seat0_wins)
    assert [(p.a, p.b, p.a_wins, p.b_wins) for p in pairs] == [
        ("a", "b", 2, 2),
        ("a", "c", 2, 2),
        ("b", "c", 2, 2),
    ]


def test_selfplay_writes_records_that_replay(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "games"
    args = ["selfplay", "--game", "toy-pig", "--bots", "random,hold8", "--games", "4"]
    result = runner.invoke(cli, [*args, "--seed", "5", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in result.output.splitlines()]
    assert len(lines) == 4
    assert [g["seats"]["p1"] for g in lines] == ["random", "hold8", "random", "hold8"]
    files = sorted(out.glob("*.pig"))
    assert len(files) == 4
    for f in files:
        r = runner.invoke(cli, ["replay", str(f), "--json"])
        assert r.exit_code == 0, r.output
        assert json.loads(r.output)["sound"] is True
    # the same seed gives the same games
    again = runner.invoke(cli, [*args, "--seed", "5", "--json"])
    assert [json.loads(x)["winner"] for x in again.output.splitlines()] == [
        g["winner"] for g in lines
    ]


def test_replay_and_show_of_a_tampered_record(tmp_path: Path) -> None:
    path = tmp_path / "g.pig"
    text = _record().dumps()
    path.write_text(text.replace("p1: hold", "p1: pass", 1), encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(cli, ["replay", str(path)])
    assert result.exit_code == 1
    assert "UNSOUND" in result.output and "'p1: pass'" not in result.output
    assert "pass" in result.output

    path.write_text(text, encoding="utf-8")
    shown = runner.invoke(cli, ["show", str(path), "--step", "3", "--json"])
    assert shown.exit_code == 0, shown.output
    doc = json.loads(shown.output)
    assert doc["actions"] == 3 and doc["game"] == "toy-pig"
    # --turn counts Battle Line's turns only; a --step past the end is bad input
    turn = runner.invoke(cli, ["show", str(path), "--turn", "3"])
    assert turn.exit_code == 2 and "--step" in turn.output
    past = runner.invoke(cli, ["show", str(path), "--step", "100000"])
    assert past.exit_code == 2 and "--step 100000" in past.output
    drawn = runner.invoke(cli, ["show", str(path)])
    assert drawn.exit_code == 0 and "p1 " in drawn.output


def test_tournament_json_shape() -> None:
    args = ["tournament", "--game", "toy-pig", "--games", "6", "--seed", "1", "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    (pair,) = json.loads(result.output)["pairs"]
    assert (pair["a"], pair["b"], pair["games"]) == ("random", "hold8", 6)
    assert pair["a_wins"] + pair["b_wins"] <= 6
    lo, hi = pair["ci95"]
    assert 0 <= lo <= pair["a_win_rate"] <= hi <= 1


def test_play_against_a_bot_reads_actions() -> None:
    moves = "\n".join(["help", "moves", "dance", *["roll"] * 3, "hold"] * 30) + "\nquit\n"
    result = CliRunner().invoke(
        cli, ["play", "--game", "toy-pig", "--bot", "hold8", "--seed", "4"], input=moves
    )
    assert result.exit_code == 0, result.output
    assert "roll | hold" in result.output
    assert "Not allowed: 'dance'" in result.output


@pytest.mark.parametrize(
    "args, needle",
    [
        (["selfplay", "--game", "chess"], "unknown game 'chess'"),
        (["selfplay", "--game", "toy-pig", "-o", "target=x"], "target='x'"),
        (["selfplay", "--game", "toy-pig", "-o", "speed=1"], "'speed'"),
        (["selfplay", "--game", "toy-pig", "--bots", "random,ghost"], "'ghost'"),
        (["tournament", "--game", "toy-pig", "--bots", "random"], "at least 2"),
        (["selfplay", "--game", "toy-pig", "--log", "x.log"], "--log"),
        (["play", "--game", "toy-pig", "--seat", "p3"], "'p3'"),
        (["selfplay", "-o", "a=b"], "Battle Line"),
    ],
)
def test_bad_input_exits_2_with_one_line(args: list[str], needle: str) -> None:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert needle in result.output
    assert "Traceback" not in result.output


def test_play_does_not_tell_the_human_what_is_hidden_from_him() -> None:
    # Force Duel: p2's deck order, strategy draws and secret commits are p2's alone.
    result = CliRunner().invoke(
        cli, ["play", "--game", "force-duel", "--seat", "p1", "--seed", "3"], input="quit\n"
    )
    assert result.exit_code == 0, result.output
    assert "p1 deck" in result.output  # his own shuffle he sees
    assert "p2 deck" not in result.output
    assert "p2 draws a strategy card" in result.output
    assert "p2 puts a strategy card down" in result.output


def test_selfplay_summary_counts_each_bot_even_with_one_name() -> None:
    args = ["selfplay", "--game", "toy-pig", "--bots", "random,random", "--games", "8"]
    text = CliRunner().invoke(cli, [*args, "--seed", "2"]).output
    lines = CliRunner().invoke(cli, [*args, "--seed", "2", "--json"]).output.splitlines()
    # game i: the first bot sits in p1 when i is even, in p2 when odd
    first = sum(
        1 for i, g in enumerate(map(json.loads, lines)) if g["winner"] == ("p1", "p2")[i % 2]
    )
    draws = sum(1 for g in map(json.loads, lines) if g["winner"] == "draw")
    assert text.strip() == (
        f"8 Pig games: random won {first}, random won {8 - first - draws}, {draws} drawn"
    )


def test_replay_json_has_one_shape_for_every_game() -> None:
    """``replay --json``: the same keys whatever the game (issue 21)."""
    root = Path(__file__).resolve().parent.parent / "examples"
    records = [
        root / "games" / "every-tactic.blg",
        root / "battleplan" / "greedy-vs-greedy.bpg",
        root / "force_duel" / "house-game.fdg",
    ]
    keys = set()
    for record in records:
        r = CliRunner().invoke(cli, ["replay", str(record), "--json"])
        assert r.exit_code == 0, r.output
        doc = json.loads(r.output)
        keys.add(tuple(doc))
        assert doc["sound"] is True and doc["actions"] > 0 and doc["problem"] is None
    assert keys == {("game", "sound", "result", "actions", "turns", "claims", "problem")}
