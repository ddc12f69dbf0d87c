"""The five games as PettingZoo AEC environments (issue 22): each passes PettingZoo's own
``api_test``, masks exactly the engine's legal actions, and plays to a zero-sum end.

Needs the ``rl`` extra; skipped with the reason otherwise.
"""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

pytest.importorskip(
    "pettingzoo", reason="PettingZoo is not installed (pip install 'battlejudge[rl]')"
)

from pettingzoo.test import api_test

from battlejudge.pettingzoo import ENV_GAMES, all_envs, env


def test_all_envs_is_one_of_each_game() -> None:
    names = [str(e) for e in all_envs()]
    assert names == [
        "battleline_v1",
        "nine_circles_v1",
        "battleplan_v1",
        "lines_of_battle_v1",
        "force_duel_v1",
    ]


def test_the_environments_are_the_registrys_games(monkeypatch: pytest.MonkeyPatch) -> None:
    """ENV_GAMES and OpenSpiel's games derive from the engine registry (issue 35): a game
    registered without an adapter (a game of your own) is named when asked for."""
    from battlejudge.apps.rl import specs
    from battlejudge.engines import games

    shipped = [n for n, (module, _) in games._MODULES.items() if module.startswith("battlejudge.")]
    assert list(ENV_GAMES) == [n.replace("-", "_") for n in shipped]
    assert [g.registry for g in specs.GAMES] == [n for n in shipped if specs.base_game(n)[1] == {}]
    import dataclasses
    import sys
    import types

    module = types.ModuleType("chess_game")
    lines = games.get_game("lines-of-battle")
    module.GAME = dataclasses.replace(lines, name="chess", new_game=lambda o: lines.new_game(o))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "chess_game", module)
    monkeypatch.setattr(games, "_MODULES", dict(games._MODULES))
    games.register_game("chess", "chess_game")
    with pytest.raises(KeyError, match="'chess' has no OpenSpiel or PettingZoo adapter"):
        specs.base_game("chess")
    with pytest.raises(ValueError, match="'chess' has no OpenSpiel or PettingZoo adapter"):
        env("chess")


@pytest.mark.parametrize("game", list(ENV_GAMES))
def test_api_test_passes_without_a_warning(game: str) -> None:
    """PettingZoo's api_test warns when an environment strays from its conventions
    (observations not a Box, agents not named like player_0, masks that are not 0/1...):
    every warning fails the test."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(env(game), num_cycles=300)
    assert [str(w.message) for w in caught] == []


def test_agents_are_named_player_i_for_seat_i() -> None:
    table = env("battleline")
    table.reset(seed=0)
    assert table.possible_agents == ["player_0", "player_1"]
    assert [table.unwrapped.seat(a) for a in table.possible_agents] == ["north", "south"]
    assert [table.infos[a]["seat"] for a in table.possible_agents] == ["north", "south"]
    duel = env("force_duel")
    duel.reset(seed=0)
    assert [duel.infos[a]["seat"] for a in duel.possible_agents] == ["p1", "p2"]


@pytest.mark.parametrize("game", list(ENV_GAMES))
def test_mask_is_the_legal_actions_and_games_end_zero_sum(game: str) -> None:
    table = env(game)
    table.reset(seed=3)
    rng = np.random.default_rng(3)
    final: dict[str, float] = {}
    for agent in table.agent_iter():
        observation, reward, terminated, truncated, _ = table.last()
        if terminated or truncated:
            assert not truncated
            final[agent] = float(reward)
            table.step(None)
            continue
        state = table.unwrapped.table.state
        assert table.observation_space(agent).contains(observation)
        mask = table.infos[agent]["action_mask"]
        legal = sorted(table.unwrapped.codec.encode(a, False) for a in state.legal_actions())
        assert np.flatnonzero(mask).tolist() == legal
        player = table.possible_agents.index(agent)
        assert state.current_player() == player
        other = table.possible_agents[1 - player]
        assert not table.infos[other]["action_mask"].any()
        table.step(int(rng.choice(np.flatnonzero(mask))))
    assert set(final) == set(table.possible_agents)
    assert sum(final.values()) == 0.0
    returns = table.unwrapped.table.state.returns()
    assert [final[agent] for agent in table.possible_agents] == returns


def test_seeded_reset_repeats_the_deal() -> None:
    a, b = env("battleline"), env("battleline")
    a.reset(seed=7)
    b.reset(seed=7)
    assert a.unwrapped.table.state.serialize() == b.unwrapped.table.state.serialize()
    b.reset(seed=8)
    assert a.unwrapped.table.state.serialize() != b.unwrapped.table.state.serialize()


def test_illegal_action_is_refused_naming_it() -> None:
    table = env("force_duel")
    table.reset(seed=0)
    mask = table.infos[table.agent_selection]["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(ValueError, match=f"action {illegal} is not legal"):
        table.step(illegal)


def test_unknown_game_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="'chess'"):
        env("chess")


def test_opponent_hand_is_not_in_the_tensor() -> None:
    """Battle Line: dealing south another hand leaves north's observation unchanged."""
    table = env("battleline")
    table.reset(seed=1)
    before = table.observe("player_0")
    south_before = table.observe("player_1")
    table.unwrapped.table = table.unwrapped.table.resample(0, random.Random(5))
    assert (table.observe("player_0") == before).all()
    assert not (table.observe("player_1") == south_before).all()


def test_ansi_render_shows_the_table_and_none_without_a_mode() -> None:
    table = env("force_duel", render_mode="ansi")
    table.reset(seed=2)
    text = table.render()
    assert isinstance(text, str) and "p1" in text
    plain = env("force_duel")
    plain.reset(seed=2)
    assert plain.render() is None
