"""``battlejudge bench rl`` on a tiny budget: the JSON has every game's figures, all
positive, and the targets with their verdicts; the text prints each row and target; a bad
--game is one line and exit 2. No speed is asserted: the suite runs on busy machines.

Needs the ``rl`` extra; skipped with the reason otherwise.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

pytest.importorskip("pyspiel", reason="OpenSpiel is not installed (pip install 'battlejudge[rl]')")
pytest.importorskip(
    "pettingzoo", reason="PettingZoo is not installed (pip install 'battlejudge[rl]')"
)

from battlejudge.cli.main import cli

TINY = ["bench", "rl", "--seconds", "0.02", "--games", "1", "--states", "20", "--seed", "3"]
FIGURES = (
    "engine_steps_per_s",
    "pettingzoo_steps_per_s",
    "ratio",
    "observation_tensor_us",
    "information_state_tensor_us",
    "legal_actions_us",
)


def test_json_has_every_games_figures_and_the_targets() -> None:
    result = CliRunner().invoke(cli, [*TINY, "--json"])
    assert result.exit_code == 0, result.output
    r = json.loads(result.stdout)
    games = ["battleline", "nine_circles", "battleplan", "lines_of_battle", "force_duel"]
    assert r["settings"]["games"] == games
    assert [row["game"] for row in r["rows"]] == games
    for row in r["rows"]:
        for figure in FIGURES:
            assert row[figure] > 0, (row["game"], figure)
        assert row["engine_steps"] > 0 and row["pettingzoo_steps"] > 0
        assert 0 < row["states"] <= 20
        ratio = row["pettingzoo_steps_per_s"] / row["engine_steps_per_s"]
        assert row["ratio"] == pytest.approx(ratio, rel=0.01)
    steps = r["targets"]["pettingzoo_steps_per_s"]
    assert steps["game"] == "battleline" and steps["at_least"] == 5000
    assert steps["met"] == (steps["measured"] >= 5000)
    assert steps["measured"] == r["rows"][0]["pettingzoo_steps_per_s"]
    infostate = r["targets"]["information_state_tensor_us"]
    assert infostate["at_most"] == 100
    assert infostate["measured"] == max(row["information_state_tensor_us"] for row in r["rows"])
    assert infostate["met"] == (infostate["measured"] <= 100)


def test_text_prints_each_row_and_target() -> None:
    result = CliRunner().invoke(cli, [*TINY, "--game", "force_duel"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("bench rl: 0.02 CPU s of random play")
    row = next(line for line in lines if line.strip().startswith("force_duel"))
    assert row.split()[3].endswith("x")  # engine, PettingZoo, ratio, then the call figures
    assert not any(line.strip().startswith("battleline") for line in lines)
    steps = next(line for line in lines if "target pettingzoo_steps_per_s" in line)
    assert steps.endswith("(battleline): not measured")  # the target's game was not run
    assert any("target information_state_tensor_us <= 100" in line for line in lines)


def test_unknown_game_is_one_line_and_exit_2() -> None:
    result = CliRunner().invoke(cli, [*TINY, "--game", "chess"])
    assert result.exit_code == 2
    assert "--game 'chess' is not an environment" in result.output
