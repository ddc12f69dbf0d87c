"""The five games in OpenSpiel (issue 22): registered, conformant (OpenSpiel's own
``random_sim_test``), hiding what a player cannot see, and playable by OpenSpiel's bots.

Needs the ``rl`` extra; skipped with the reason otherwise. ``BATTLEJUDGE_RL_SIMS`` sets
the random simulations per game (1 by default; nightly runs take more).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

pyspiel = pytest.importorskip(
    "pyspiel", reason="OpenSpiel is not installed (pip install 'battlejudge[rl]')"
)

import battlejudge.openspiel  # noqa: E402
from battlejudge.apps.rl.encoding import battleline_codec, lines_of_battle_codec  # noqa: E402

SIMS = int(os.environ.get("BATTLEJUDGE_RL_SIMS", "1"))
GAMES = [
    "python_battleline",
    "python_battleline(theme=nine-circles)",
    "python_battleplan",
    "python_lines_of_battle",
    "python_force_duel",
]


def _past_chance(state: object, seed: int = 0) -> object:
    rng = np.random.RandomState(seed)
    while state.is_chance_node():  # type: ignore[attr-defined]
        actions, probs = zip(*state.chance_outcomes(), strict=True)  # type: ignore[attr-defined]
        state.apply_action(int(rng.choice(actions, p=probs)))  # type: ignore[attr-defined]
    return state


def test_import_registers_the_four_games() -> None:
    registered = set(pyspiel.registered_names())
    assert set(battlejudge.openspiel.GAME_NAMES) <= registered
    assert battlejudge.openspiel.GAME_NAMES == [
        "python_battleline",
        "python_battleplan",
        "python_lines_of_battle",
        "python_force_duel",
    ]


@pytest.mark.parametrize("name", GAMES)
def test_random_sim_test(name: str) -> None:
    """OpenSpiel's own conformance run, serializing and deserializing every state."""
    pyspiel.random_sim_test(pyspiel.load_game(name), num_sims=SIMS, serialize=True, verbose=False)


@pytest.mark.parametrize("name", GAMES)
def test_states_serialize_with_their_tensors(name: str) -> None:
    """A state midway through a game comes back from ``serialize_game_and_state`` with
    the same strings, tensors and legal actions for both players, and plays on."""
    game = pyspiel.load_game(name)
    state = game.new_initial_state()
    rng = np.random.RandomState(4)
    for _ in range(120):
        if state.is_terminal():
            break
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    text = pyspiel.serialize_game_and_state(game, state)
    game2, back = pyspiel.deserialize_game_and_state(text)
    also = game.deserialize_state(state.serialize())
    for twin in (back, also):
        assert str(twin) == str(state) and twin.history() == state.history()
        assert twin.legal_actions() == state.legal_actions()
        for p in range(2):
            assert twin.information_state_string(p) == state.information_state_string(p)
            for tensor in ("information_state_tensor", "observation_tensor"):
                mine, theirs = getattr(state, tensor)(p), getattr(twin, tensor)(p)
                np.testing.assert_array_equal(mine, theirs)
    assert str(game2) == str(game)


@pytest.mark.parametrize("name", GAMES)
def test_information_state_tensor_through_every_door(name: str) -> None:
    """The same fixed-shape tensor from the Python method (a numpy array), OpenSpiel's
    C++ method (a list, through the observer), and the perfect-recall observation;
    OpenSpiel's RL environment runs on it."""
    from open_spiel.python import rl_environment
    from open_spiel.python.observation import make_observation

    game = pyspiel.load_game(name)
    size = game.information_state_tensor_size()
    state = _past_chance(game.new_initial_state(), seed=2)
    observation = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    for player in (0, 1):
        mine = state.information_state_tensor(player)  # type: ignore[attr-defined]
        assert mine.shape == (size,) and mine.dtype == np.float32
        base = pyspiel.State.information_state_tensor(state, player)
        np.testing.assert_array_equal(np.asarray(base, np.float32), mine)
        observation.set_from(state, player)
        np.testing.assert_array_equal(observation.tensor, mine)
        plain = pyspiel.State.observation_tensor(state, player)
        np.testing.assert_array_equal(
            np.asarray(plain, np.float32),
            state.observation_tensor(player),  # type: ignore[attr-defined]
        )
    env = rl_environment.Environment(game)
    step = env.reset()
    for _ in range(5):
        player = step.observations["current_player"]
        assert len(step.observations["info_state"][player]) == size
        step = env.step([step.observations["legal_actions"][player][0]])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not a state", "pieces.size"),
        ("history=\nmove_number=0\n__dict__=!!", "Base64"),
        # a pickle of the number 1 in place of the attributes
        ("history=\nmove_number=0\n__dict__=gASVAwAAAAAAAABLAS4=", "not iterable"),
    ],
)
def test_a_bad_string_raises(text: str, message: str) -> None:
    with pytest.raises(Exception, match=message):
        pyspiel.load_game("python_force_duel").deserialize_state(text)


def test_a_state_of_another_game_is_refused_naming_both() -> None:
    duel = pyspiel.load_game("python_force_duel").new_initial_state().serialize()
    with pytest.raises(ValueError, match=r"force-duel.*cannot load into a game of.*battleline"):
        pyspiel.load_game("python_battleline").deserialize_state(duel)
    five = pyspiel.load_game("python_force_duel(units=5)").new_initial_state().serialize()
    with pytest.raises(ValueError, match="units"):
        pyspiel.load_game("python_force_duel(units=2)").deserialize_state(five)


@pytest.mark.parametrize("name", battlejudge.openspiel.GAME_NAMES)
def test_parameters_are_the_registrys_options_and_defaults(name: str) -> None:
    """Every option of the registry entry is a parameter, and a game loaded with no
    parameters is the registry's new game (Battle Line: environment_removable=false,
    as in the engine, the CLI and tournaments)."""
    from battlejudge.apps.rl.specs import GAMES, option_text, settings_of
    from battlejudge.engines.games import get_game

    spec = next(s for s in GAMES if s.short_name == name)
    entry = get_game(spec.registry)
    game = pyspiel.load_game(name)
    params = game.get_parameters()
    assert set(params) == set(entry.options)
    engine = entry.start()
    assert {k: option_text(v) for k, v in params.items()} == settings_of(engine)
    ours = game.new_initial_state()
    assert str(ours) == engine.serialize()


def test_battleline_defaults_to_fixed_fog_and_mud() -> None:
    params = pyspiel.load_game("python_battleline").get_parameters()
    assert params["environment_removable"] is False
    assert params["stalemate"] == "dead"


@pytest.mark.parametrize(
    ("name", "information"),
    [
        ("python_battleline", "IMPERFECT_INFORMATION"),
        ("python_battleplan", "IMPERFECT_INFORMATION"),
        # every unit is on the table: docs/rulings.md (deployment in the open)
        ("python_lines_of_battle", "PERFECT_INFORMATION"),
        ("python_force_duel", "IMPERFECT_INFORMATION"),
    ],
)
def test_game_type(name: str, information: str) -> None:
    game = pyspiel.load_game(name)
    kind = game.get_type()
    assert kind.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert kind.information == getattr(pyspiel.GameType.Information, information)
    assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert game.num_players() == 2
    assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (-1.0, 1.0, 0.0)


def test_nine_circles_is_battle_line_renamed() -> None:
    plain = _past_chance(pyspiel.load_game("python_battleline").new_initial_state())
    nine = _past_chance(
        pyspiel.load_game("python_battleline(theme=nine-circles)").new_initial_state()
    )
    assert plain.legal_actions() == nine.legal_actions()  # type: ignore[attr-defined]
    assert '"theme": "nine-circles"' in str(nine)
    assert '"theme": "battleline"' in str(plain)


def test_bad_parameter_is_refused_naming_it() -> None:
    with pytest.raises(Exception, match="theme"):
        pyspiel.load_game("python_battleline(theme=chess)")


def test_battleline_codec_is_a_bijection() -> None:
    codec = battleline_codec()
    for chance, size in ((False, codec.num_actions), (True, codec.num_chance)):
        for code in range(size):
            assert codec.encode(codec.decode(code, chance), chance) == code
    with pytest.raises(ValueError, match="13944"):
        codec.decode(13944, False)


def test_lines_of_battle_codec_is_a_bijection() -> None:
    codec = lines_of_battle_codec(12)
    for chance, size in ((False, codec.num_actions), (True, codec.num_chance)):
        for code in range(size):
            assert codec.encode(codec.decode(code, chance), chance) == code


def test_battleline_hidden_cards_stay_hidden() -> None:
    """Resampling the hidden cards for north keeps north's information state, string
    and tensor, and changes what south holds (so south's view differs)."""
    state = _past_chance(pyspiel.load_game("python_battleline").new_initial_state())
    north = state.current_player()  # type: ignore[attr-defined]
    south = 1 - north
    other = state.resample_from_infostate(  # type: ignore[attr-defined]
        north, pyspiel.UniformProbabilitySampler(0.0, 1.0)
    )
    assert other.information_state_string(north) == state.information_state_string(north)  # type: ignore[attr-defined]
    np.testing.assert_array_equal(
        other.observation_tensor(north),  # type: ignore[attr-defined]
        state.observation_tensor(north),  # type: ignore[attr-defined]
    )
    assert other.information_state_string(south) != state.information_state_string(south)  # type: ignore[attr-defined]
    assert other.legal_actions() == state.legal_actions()  # type: ignore[attr-defined]


def test_information_state_recalls_what_was_told() -> None:
    """Two deals with the same north hand but different south hands: north's
    information states are equal, south's are not (perfect recall of the deal)."""
    game = pyspiel.load_game("python_battleline")
    state = _past_chance(game.new_initial_state(), seed=1)
    hidden = state.resample_from_infostate(0, pyspiel.UniformProbabilitySampler(0.0, 1.0))  # type: ignore[attr-defined]
    action = state.legal_actions()[0]  # type: ignore[attr-defined]
    state.apply_action(action)  # type: ignore[attr-defined]
    hidden.apply_action(action)
    assert state.information_state_string(0) == hidden.information_state_string(0)  # type: ignore[attr-defined]
    assert state.action_to_string(0, action) in state.information_state_string(1)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "name", ["python_battleline", "python_force_duel", "python_battleplan(rounds=2)"]
)
def test_ismcts_plays(name: str) -> None:
    from open_spiel.python.algorithms import ismcts, mcts

    game = pyspiel.load_game(name)
    state = _past_chance(game.new_initial_state())
    rng = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rng), 2.0, 8, random_state=rng)
    action = bot.step(state)
    assert action in state.legal_actions()  # type: ignore[attr-defined]


# small games (house-rule limits) so that each random rollout is short
@pytest.mark.parametrize(
    "name",
    [
        "python_battleline(deck=troops)",
        "python_battleplan(rounds=1)",
        "python_lines_of_battle(turns=3)",
        "python_force_duel(units=1)",
    ],
)
def test_mcts_plays_every_game(name: str) -> None:
    from open_spiel.python.algorithms import mcts

    game = pyspiel.load_game(name)
    state = _past_chance(game.new_initial_state())
    rng = np.random.RandomState(0)
    bot = mcts.MCTSBot(game, 2.0, 4, mcts.RandomRolloutEvaluator(1, rng), random_state=rng)
    action = bot.step(state)
    assert action in state.legal_actions()  # type: ignore[attr-defined]


def test_interpreter_exits_cleanly_after_registering() -> None:
    """OpenSpiel keeps the game factories until after Python is gone: a closure there
    made the interpreter abort at exit (exit code 134)."""
    import subprocess
    import sys

    code = "import pyspiel, battlejudge.openspiel; pyspiel.load_game('python_force_duel')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-500:]


def test_example_ismcts_against_heuristic_runs() -> None:
    """examples/openspiel_vs_heuristic.py as a user runs it, with a tiny game count."""
    import re
    import subprocess
    import sys

    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "battlejudge.examples.openspiel_vs_heuristic",
            "--games",
            "1",
            "--simulations",
            "2",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    assert re.search(
        r"game 1: IS-MCTS \(2 simulations\) as north vs heuristic: (win|loss|draw)", out
    )
    score = re.search(r"at battleline over 1 games: (\d) won, (\d) lost, (\d) drawn", out)
    assert score is not None and sum(map(int, score.groups())) == 1


def test_resampling_a_game_that_hides_nothing_gives_the_same_state() -> None:
    state = _past_chance(pyspiel.load_game("python_lines_of_battle").new_initial_state())
    twin = state.resample_from_infostate(0, pyspiel.UniformProbabilitySampler(0.0, 1.0))  # type: ignore[attr-defined]
    assert str(twin) == str(state) and twin is not state
    assert twin.legal_actions() == state.legal_actions()


@pytest.mark.parametrize(
    ("registry", "options"),
    [("battleline", {}), ("force-duel", {}), ("battleplan", {"rounds": "3"})],
)
def test_resampled_worlds_look_the_same_and_play_on(registry: str, options: dict[str, str]) -> None:
    """At every decision of random games, a world resampled for the player to move has
    his information state and legal actions, and plays on legally to its end."""
    import random

    from battlejudge.apps.rl.specs import Table
    from battlejudge.engines.game import CHANCE, random_playout, sample_chance
    from battlejudge.engines.games import get_game

    rng = random.Random(11)
    for _ in range(2):
        table = Table(get_game(registry).start(options))
        decisions = 0
        while not table.state.is_terminal():
            player = table.state.current_player()
            if player == CHANCE:
                table.apply(sample_chance(table.state, rng))
                continue
            decisions += 1
            world = table.resample(player, rng)
            assert world.information_state_string(player) == table.information_state_string(player)
            assert world.state.legal_actions() == table.state.legal_actions()
            if decisions % 25 == 1:
                random_playout(world.state.clone(), rng)
            table.apply(rng.choice(table.state.legal_actions()))
        assert decisions > 0
