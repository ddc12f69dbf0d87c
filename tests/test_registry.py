"""One registry and one pipeline for every game (issue 14): each registered game plays
through the same runner, writes its records in its own format, and replays them through
the format that :func:`records.detect` finds; the generic commands name no game."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from battlejudge.engines.games import GameMeta, Setup, game_names, get_game
from battlejudge.engines.records import detect
from battlejudge.engines.runner import play_game
from battlejudge.engines.selfplay import selfplay
from battlejudge.engines.tournament import run_tournament
from battlejudge.solver.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
GAMES = ["battleline", "nine-circles", "battleplan", "lines-of-battle", "force-duel"]
QUICK = {"battleplan": {"rounds": "3"}, "lines-of-battle": {"turns": "12"}}


def test_the_five_games_are_registered_battle_line_first() -> None:
    names = game_names()
    assert names[:2] == ["battleline", "nine-circles"]
    assert set(GAMES) <= set(names)
    assert get_game("nine-circles").defaults == {"theme": "nine-circles"}


@pytest.mark.parametrize("name", GAMES)
def test_a_game_plays_records_and_replays_through_its_format(name: str, tmp_path: Path) -> None:
    game = get_game(name)
    bots = [game.make_bot("random", 1), game.make_bot("random", 2)]
    state, played = play_game(game, bots, 7, QUICK.get(name))
    text = played.dumps()
    path = tmp_path / f"g{game.suffix}"
    path.write_text(text, encoding="utf-8")
    for source in (str(path), "-"):  # by suffix, then by content alone
        report = detect(text, source).replay(text)
        assert report.sound, report.problem
        assert report.game.name == name
        assert report.state.serialize() == state.serialize()


def test_nine_circles_records_keep_their_theme() -> None:
    game = get_game("nine-circles")
    bots = [game.make_bot("random", 1), game.make_bot("heuristic", 2)]
    _, played = play_game(game, bots, 3)
    text = played.dumps()
    assert '[Theme "nine-circles"]' in text
    assert detect(text).replay(text).game.title == "Nine Circles"


def test_selfplay_records_every_game_and_swaps_seats(tmp_path: Path) -> None:
    game = get_game("battleline")
    games = list(selfplay(game, ["random", "heuristic"], 2, 4, out=tmp_path))
    assert [g.seats for g in games] == [
        {"north": "random", "south": "heuristic"},
        {"north": "heuristic", "south": "random"},
    ]
    for g in games:
        assert g.record is not None
        text = g.record.read_text(encoding="utf-8")
        assert f'[Game "{g.game_id}"]' in text and f'[Seed "{g.seed}"]' in text
        report = detect(text, str(g.record)).replay(text)
        assert report.sound and report.facts["result"] == g.winner


def test_tournament_and_selfplay_play_the_same_game_for_the_same_seed() -> None:
    game = get_game("battleline")
    (pair,) = run_tournament(game, ["random", "heuristic"], 2, 11)
    assert pair.games == 2 and pair.a_wins + pair.b_wins + pair.draws == 2
    bots = [game.make_bot("random", 5), game.make_bot("random", 6)]
    meta = GameMeta(seed=9)
    fast, _ = play_game(game, bots, 9, setup=Setup(certify=False), meta=meta, record=False)
    bots = [game.make_bot("random", 5), game.make_bot("random", 6)]
    full, _ = play_game(game, bots, 9, meta=meta)
    assert fast.serialize() == full.serialize()  # certifying changes no move


def test_bad_names_options_and_logs_are_input_errors() -> None:
    game = get_game("battleline")
    with pytest.raises(InputError, match="'grandmaster'"):
        game.make_bot("grandmaster", 0)
    with pytest.raises(InputError, match="'colour'"):
        game.start({"colour": "red"})
    with pytest.raises(InputError, match="claim_timing='later'"):
        game.start({"claim_timing": "later"})
    with pytest.raises(InputError, match="no claims"):
        get_game("battleplan").start(setup=Setup(log=object()))  # type: ignore[arg-type]
    with pytest.raises(InputError, match="not a game record"):
        detect('{"flags": []}', "x.json")


def test_the_generic_commands_name_no_game() -> None:
    """cli/games.py asks the registry; it imports no game's package."""
    tree = ast.parse((ROOT / "cli" / "games.py").read_text(encoding="utf-8"))
    modules = [
        n.module
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("battlejudge.")
    ]
    games = {"battleline", "battleplan", "lines_of_battle", "force_duel"}
    assert modules and not [m for m in modules if set(m.split(".")) & games]
