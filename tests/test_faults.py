"""Faults named, never passed as success (issue 34): a referee match a bot program could not
play is exit 1 with one line saying why; a game that cannot end stops selfplay and
tournament with one line naming its seed and bots (exit 2, no traceback), at a step limit
that is a setting; and every public engine function taking a seat takes its name, its
index, and refuses anything else in one line."""

from __future__ import annotations

import json
import os
import pickle
import random
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from battlejudge.apps.protocol.referee import could_not_play, referee_game
from battlejudge.cli.main import cli
from battlejudge.engines import battleline as bl
from battlejudge.engines.battleline.game import answer_claim
from battlejudge.engines.battleline.position import claim_question
from battlejudge.engines.games import get_game
from battlejudge.engines.runner import StepLimitError, play_game
from battlejudge.engines.selfplay import selfplay
from battlejudge.engines.tournament import run_tournament
from battlejudge.solver.errors import BattlejudgeError, InputError

TESTS = Path(__file__).parent
FAKE = str(TESTS / "protocol_fake_bot.py")
POSITION = "examples/positions/wedge-beats-blue-8.json"
"""North holds R4 R5 R3 at flag 1 against south's B8 (the README's example)."""


# -- 3. the referee: a program that could not play is exit 1 --------------------------------
def good() -> str:
    """A bot that plays every game to its end (the referee tests' scripted bot)."""
    return shlex.join([sys.executable, FAKE, "good"])


def script(tmp_path: Path, name: str, body: str) -> str:
    """A bot program (Python, standard library only) written to ``tmp_path``."""
    path = tmp_path / name
    path.write_text(f"#!{sys.executable}\nimport sys\n{body}", encoding="utf-8")
    path.chmod(0o755)
    return str(path)


def flooder(tmp_path: Path) -> str:
    """Prints garbage whether asked or not."""
    return script(tmp_path, "flood.py", "while True:\n    print('garbage', flush=True)\n")


def garbler(tmp_path: Path) -> str:
    """Answers only when asked (the name, every play), but always with garbage: the referee
    plays its substitute for every play, so the program never plays a card itself."""
    body = (
        "for line in sys.stdin:\n"
        "    words = line.split()\n"
        "    if words[-1:] == ['name'] or words == ['go', 'play-card']:\n"
        "        print('garbage', flush=True)\n"
    )
    return script(tmp_path, "garble.py", body)


def referee(*args: str) -> Any:
    return CliRunner().invoke(cli, ["referee", "--grace", "0.1", *args])


def summary(output: str) -> dict[str, Any]:
    last = json.loads(output.strip().splitlines()[-1])
    assert isinstance(last["summary"], dict)
    return last["summary"]


def test_a_program_that_exits_at_once_is_named_and_exit_1() -> None:
    r = referee("--north", "/bin/false", "--south", good(), "--games", "2")
    assert r.exit_code == 1, r.output
    assert r.stderr == (
        "battlejudge referee: north (/bin/false) could not play: it exited at once "
        "(status 1) in both games\n"
    )
    assert "summary: 2 games" in r.stdout  # the per-game lines and the summary still come


def test_the_json_summary_names_the_program_that_could_not_play() -> None:
    r = referee("--north", "/bin/false", "--south", good(), "--games", "2", "--swap", "--json")
    assert r.exit_code == 1, r.output
    (failed,) = summary(r.stdout)["could_not_play"]
    # --swap sat /bin/false south in game 2: it is still the --north program
    assert failed == {
        "program": "north",
        "command": "/bin/false",
        "games": 2,
        "kinds": ["crash", "crash"],
        "message": "north (/bin/false) could not play: it exited at once (status 1) in both games",
    }
    assert r.stderr.splitlines() == [f"battlejudge referee: {failed['message']}"]


def test_a_program_that_hangs_is_named_and_exit_1() -> None:
    r = referee("--north", good(), "--south", "sleep 60", "--timeout", "0.5", "--json")
    assert r.exit_code == 1, r.output
    (failed,) = summary(r.stdout)["could_not_play"]
    assert (failed["program"], failed["kinds"]) == ("south", ["timeout"])
    assert failed["message"] == (
        "south (sleep 60) could not play: it timed out (no reply within 0.5 s) in its one game"
    )
    assert r.stderr == f"battlejudge referee: {failed['message']}\n"


def test_a_program_that_prints_garbage_unasked_is_named_and_exit_1(tmp_path: Path) -> None:
    bot = flooder(tmp_path)
    r = referee("--north", bot, "--south", good())
    assert r.exit_code == 1, r.output
    assert r.stderr == (
        f"battlejudge referee: north ({bot}) could not play: it broke the protocol (printed "
        "'garbage' without being asked) in its one game\n"
    )


def test_a_program_whose_every_reply_is_garbage_is_named_and_exit_1(tmp_path: Path) -> None:
    """It is never forfeited (each reply is replaced, as the reference engine does), and it
    may even win on the substitutes: but it played no card of its own."""
    bot = garbler(tmp_path)
    r = referee("--north", good(), "--south", bot, "--json")
    assert r.exit_code == 1, r.output
    game = json.loads(r.stdout.splitlines()[0])
    assert game["forfeit"] is None and game["winner"] in ("north", "south", "draw")
    (failed,) = summary(r.stdout)["could_not_play"]
    assert (failed["program"], failed["kinds"]) == ("south", ["unusable"])
    assert failed["message"] == (
        f"south ({bot}) could not play: none of its replies could be used ('garbage' is not a "
        "message of the Battle Line bot protocol) in its one game"
    )


def test_games_played_are_exit_0_with_nobody_named() -> None:
    r = referee("--north", good(), "--south", good(), "--games", "2", "--swap", "--json")
    assert r.exit_code == 0, r.output
    assert summary(r.stdout)["could_not_play"] == [] and r.stderr == ""


def test_a_program_that_played_one_game_played_the_match() -> None:
    played = referee_game(good(), good(), seed=1, grace=0.1)
    failed = referee_game("/bin/false", good(), seed=2, grace=0.1)
    assert could_not_play("/bin/false", good(), [failed])[0].program == "north"
    assert could_not_play("/bin/false", good(), [played, failed]) == []
    assert could_not_play("/bin/false", good(), []) == []


def test_mixed_failures_say_how_and_where() -> None:
    results = [
        referee_game("/bin/false", good(), seed=1, grace=0.1),
        referee_game("sleep 60", good(), seed=2, timeout=0.3, grace=0.1),
    ]
    (failed,) = could_not_play("x", good(), results)
    assert failed.sentence() == (
        "north (x) could not play: in both games it crashed or timed out "
        "(game 1: it exited at once (status 1))"
    )


# -- 4. a game that cannot end: one line naming the seed and the bots, exit 2 ----------------
# fault_bots:Passer passes while it could play a tactic, which ruling 17 counts as acting:
# under stalemate=dead the game against random never ends (tests/ is on pytest's path).
PASSER = "fault_bots:Passer"


def one_error_line(r: Any) -> str:
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    (line,) = r.stderr.splitlines()
    assert line.startswith("battlejudge: error: ")
    return str(line)


def test_a_tournament_game_that_cannot_end_is_one_line_exit_2() -> None:
    r = CliRunner().invoke(cli, ["tournament", "--bots", f"{PASSER},random", "--games", "2"])
    line = one_error_line(r)
    assert line.endswith(
        f"between {PASSER} (north) and random (south) did not end within 6000 steps; "
        "no result is recorded for it"
    )
    assert line.startswith("battlejudge: error: Battle Line game with seed ")
    assert r.stdout == ""


def test_a_selfplay_game_that_cannot_end_is_one_line_exit_2() -> None:
    r = CliRunner().invoke(cli, ["selfplay", "--bots", f"{PASSER},random", "--games", "2"])
    assert one_error_line(r) == (
        f"battlejudge: error: Battle Line game 0-0 (seed 0) between {PASSER} (north) and "
        "random (south) did not end within 6000 steps; no result is recorded for it"
    )


def test_no_traceback_from_the_installed_command(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    code = "from battlejudge.cli.main import main; main()"
    args = ["tournament", "--bots", f"{PASSER},random", "--games", "1", "--max-steps", "300"]
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert "did not end within 300 steps" in line and PASSER in line


@pytest.mark.parametrize("command", ["selfplay", "tournament"])
def test_max_steps_is_a_setting_of_both_commands(command: str) -> None:
    """A tiny limit stops even two random bots; a limit below 1 is bad input."""
    r = CliRunner().invoke(cli, [command, "--bots", "random,random", "--max-steps", "5"])
    assert "did not end within 5 steps" in one_error_line(r)
    r = CliRunner().invoke(cli, [command, "--bots", "random,random", "--max-steps", "0"])
    assert r.exit_code == 2 and "--max-steps" in r.output


def test_stalemate_idle_ends_the_games_a_passer_keeps_going() -> None:
    """The rule a table plays to end such games (docs/rulings.md 17), recorded and checked."""
    args = ["--bots", f"{PASSER},random", "--games", "2", "-o", "stalemate=idle"]
    r = CliRunner().invoke(cli, ["tournament", *args])
    assert r.exit_code == 0, r.output


def test_play_game_takes_the_step_limit() -> None:
    game = get_game("battleline")
    bots = [game.make_bot("random", 1), game.make_bot("random", 2)]
    with pytest.raises(StepLimitError) as caught:
        play_game(game, bots, 7, max_steps=3)
    error = caught.value
    assert isinstance(error, BattlejudgeError) and "\n" not in str(error)
    assert (error.seed, error.limit, error.bots) == (7, 3, {"north": "random", "south": "random"})
    again = pickle.loads(pickle.dumps(error))  # crosses to a cluster's driver intact
    assert str(again) == str(error) and again.bots == error.bots
    state, _ = play_game(game, bots, 7)  # the game's own limit otherwise
    assert state.is_terminal()
    for bad in (0, -1, True):
        with pytest.raises(InputError, match="max_steps must be at least 1"):
            play_game(game, bots, 7, max_steps=bad)


def test_run_tournament_takes_the_step_limit() -> None:
    game = get_game("battleline")
    with pytest.raises(StepLimitError, match=r"between random \(north\) and random \(south\)"):
        run_tournament(game, ["random", "random"], 2, 1, max_steps=10)
    with pytest.raises(InputError):
        run_tournament(game, ["random", "random"], 2, 1, max_steps=0)


def test_selfplay_takes_the_step_limit_and_keeps_the_games_before(tmp_path: Path) -> None:
    game = get_game("battleline")
    for seed in range(20):
        a0, a1 = (g.actions for g in selfplay(game, ["random", "random"], 2, seed))
        if a0 < a1:
            break
    else:
        pytest.fail("no seed whose second game is longer")
    out = tmp_path / "games"
    with pytest.raises(StepLimitError, match=rf"game {seed}-1 \(seed \d+\)"):
        list(selfplay(game, ["random", "random"], 2, seed, out=out, max_steps=a0))
    assert sorted(p.name for p in out.iterdir()) == [f"game-{seed}-0000.blg"]  # it ended
    with pytest.raises(InputError):
        next(selfplay(game, ["random", "random"], 1, 0, max_steps=0))


# -- 6. seats: the name, the index, or a one-line refusal -----------------------------------
def outcome(call: Callable[[Any], Any], seat: Any) -> tuple[Any, ...]:
    """What ``call(seat)`` gives: its value, or the error it raises (type and message)."""
    try:
        return ("value", call(seat))
    except Exception as e:  # the refusal is what is compared
        return ("error", type(e), str(e))


def midgame(seed: int = 3, moves: int = 80) -> bl.BattleLineState:
    """A Battle Line game some way in, with cards at the flags and in both hands."""
    state = bl.new_game(bl.RulesConfig())
    rng = random.Random(seed)
    while not state.is_terminal() and len(state.history) < moves:
        state.apply_action(rng.choice(state.legal_actions()))
    return state


def _forfeit(seat: Any) -> Any:
    state = midgame()
    state.forfeit(seat, "crash")
    return state.winner


def _new_game(seat: Any) -> Any:
    return bl.new_game(bl.RulesConfig(), seat).first


def _constructor(seat: Any) -> Any:
    return bl.BattleLineState(first=seat).first


def _battleline_calls() -> dict[str, Callable[[Any], Any]]:
    table = bl.read_state(POSITION)
    state = midgame()
    action = state.legal_actions()[0]  # chance's outcomes, when it is chance's turn
    return {
        "claim_question": lambda s: table.claim_question(1, s),
        "claimable": lambda s: table.claimable(1, s),
        "judge_claim": lambda s: table.judge_claim(1, s).valid,
        "flags_held": lambda s: state.flags_held(s),
        "can_play_tactic": lambda s: state.can_play_tactic(s),
        "troop_playable": lambda s: state.troop_playable(s),
        "public_action_string": lambda s: state.public_action_string(action, s),
        "information_state_string": lambda s: state.information_state_string(s),
        "to_dict": lambda s: state.to_dict(s),
        "forfeit": _forfeit,
        "new_game": _new_game,
        "BattleLineState": _constructor,
        "Flag.open_slot": lambda s: [f.open_slot(s) for f in state.flags],
        "Flag.completed_at": lambda s: [f.completed_at(s) for f in table.flags],
        "position.claim_question": lambda s: claim_question(POSITION, 1, s),
        "answer_claim": lambda s: answer_claim(table, 1, s),
    }


BATTLELINE = _battleline_calls()
BAD = ["west", 2, -1, None, True, 1.0]


@pytest.mark.parametrize("name", sorted(BATTLELINE))
def test_battleline_takes_north_and_south_as_0_and_1(name: str) -> None:
    call = BATTLELINE[name]
    north, south = outcome(call, "north"), outcome(call, "south")
    assert north == outcome(call, 0) == outcome(call, "North")
    assert south == outcome(call, 1) == outcome(call, "SOUTH")
    assert north[0] == "value" or south[0] == "value"  # one seat at least gives an answer


@pytest.mark.parametrize("name", sorted(BATTLELINE))
def test_battleline_refuses_other_seats_in_one_line(name: str) -> None:
    for bad in BAD:
        if bad is None and name == "to_dict":
            continue  # to_dict(None) is the whole state, for no viewer in particular
        with pytest.raises(InputError) as caught:
            BATTLELINE[name](bad)
        text = str(caught.value)
        assert "\n" not in text and isinstance(caught.value, ValueError)
        assert text.endswith(f"must be north or south (or 0, 1), got {bad!r}"), text


def test_the_readme_examples_take_seat_names() -> None:
    table = bl.read_state(POSITION)
    assert repr(table.claim_question(1, "north")) == (
        "ClaimQuestion(mine='R4 R5 R3', theirs='B8', seen='B7 B10')"
    )
    assert table.claimable(1, "north") and table.judge_claim(1, "north").valid


def _played(game: str, until: Callable[[Any, int], bool], seed: int = 5) -> Any:
    """A state of ``game`` from random play, stopped where ``until(state, actions)`` holds."""
    info = get_game(game)
    rng = random.Random(seed)
    for _ in range(50):
        state, n = info.start(), 0
        while not state.is_terminal() and not until(state, n):
            state.apply_action(rng.choice(state.legal_actions()))
            n += 1
        if until(state, n):
            return state
    raise AssertionError(f"no {game} state found")


def _other_games() -> dict[str, Callable[[Any], Any]]:
    pytest.importorskip("ortools")
    from battlejudge.engines.force_duel.state import FORCE
    from battlejudge.engines.lines_of_battle.state import zone
    from battlejudge.solver.lines_of_battle.core import Board

    plan = _played("battleplan", lambda s, n: n >= 30)
    lines = _played("lines-of-battle", lambda s, n: n >= 40)
    duel = _played("force-duel", lambda s, n: s.phase == FORCE)
    plan_action, duel_action = plan.legal_actions()[0], duel.legal_actions()[0]
    return {
        "battleplan.information_state_string": lambda s: plan.information_state_string(s),
        "battleplan.public_action_string": lambda s: plan.public_action_string(plan_action, s),
        "lines_of_battle.information_state_string": lambda s: lines.information_state_string(s),
        "lines_of_battle.units_of": lambda s: lines.units_of(s),
        "lines_of_battle.zone": lambda s: zone(Board(10, 10), s),
        "force_duel.information_state_string": lambda s: duel.information_state_string(s),
        "force_duel.public_action_string": lambda s: duel.public_action_string(duel_action, s),
        "force_duel.force_question": lambda s: repr(duel.force_question(s)),
        "force_duel.battle_cards": lambda s: duel.battle_cards(s),
        "force_duel.weapon_choices": lambda s: duel.weapon_choices(s),
        "force_duel.force_choices": lambda s: duel.force_choices(s),
        "force_duel.card_count": lambda s: duel.card_count(s),
    }


OTHER_NAMES = [
    "battleplan.information_state_string",
    "battleplan.public_action_string",
    "lines_of_battle.information_state_string",
    "lines_of_battle.units_of",
    "lines_of_battle.zone",
    "force_duel.information_state_string",
    "force_duel.public_action_string",
    "force_duel.force_question",
    "force_duel.battle_cards",
    "force_duel.weapon_choices",
    "force_duel.force_choices",
    "force_duel.card_count",
]


@pytest.fixture(scope="module")
def other_games() -> dict[str, Callable[[Any], Any]]:
    return _other_games()


@pytest.mark.parametrize("name", OTHER_NAMES)
def test_the_other_games_take_their_seat_names_or_refuse(
    name: str, other_games: dict[str, Callable[[Any], Any]]
) -> None:
    assert sorted(other_games) == sorted(OTHER_NAMES)
    call = other_games[name]
    first, second = outcome(call, "p1"), outcome(call, "p2")
    assert first == outcome(call, 0) and first[0] == "value"
    assert second == outcome(call, 1) and second[0] == "value"
    for bad in ["north", *BAD]:
        with pytest.raises(InputError) as caught:
            call(bad)
        assert str(caught.value).endswith(f"must be p1 or p2 (or 0, 1), got {bad!r}")
