"""The leaf's calibration measure (issue 18): positions from whole games with their results,
the log loss, and ``battlejudge bench leaf``."""

from __future__ import annotations

import json
import math
from functools import cache

import pytest
from click.testing import CliRunner

from battlejudge.bench import calibration
from battlejudge.cli.main import cli
from battlejudge.engines.battleline.bots import expert
from battlejudge.engines.battleline.game import GAME
from battlejudge.engines.battleline.state import PLAY_PHASE, BattleLineState


@cache
def _samples(games: int) -> list[calibration.Sample]:
    def make(i: int) -> tuple[object, object]:
        return GAME.make_bot("heuristic", i), GAME.make_bot("heuristic", i + 100)

    return calibration.collect(GAME, make, games, 5)  # type: ignore[arg-type]


def test_positions_are_real_choices_with_each_players_result() -> None:
    samples = _samples(3)
    assert len(samples) > 60
    for x in samples:
        assert x.state.phase == PLAY_PHASE and x.state.current_player() == x.player
        assert len(x.state.legal_actions()) > 1
        assert x.result in (0.0, 0.5, 1.0)
    # Each game's positions, both players': one result each, adding up to one game.
    assert {x.game for x in samples} == {0, 1, 2}
    for g in range(3):
        results = {(x.player, x.result) for x in samples if x.game == g}
        assert len(results) == 2 and sum(r for _, r in results) == 1.0


def test_log_loss_of_a_coin_and_of_the_truth() -> None:
    samples = _samples(3)
    assert calibration.score(samples, lambda s, p: 0.5) == pytest.approx(math.log(2))
    truth = {id(x.state): x.result for x in samples}
    assert calibration.score(samples, lambda s, p: truth[id(s)]) < 1e-5
    # Sure and wrong costs the clip's price, not infinity.
    assert calibration.log_loss([(0.0, 1.0)]) == pytest.approx(-math.log(calibration.CLIP))


def test_tau_losses_score_the_expert_leaf() -> None:
    samples = _samples(3)[:40]
    got = calibration.tau_losses(samples, [expert.TAU, 1.0])

    for tau in (expert.TAU, 1.0):

        def leaf(s: BattleLineState, me: int, tau: float = tau) -> float:
            return expert.win_probability(expert.calibrated(expert.deal_chances(s, me), tau))

        assert got[tau] == pytest.approx(calibration.score(samples, leaf))


def test_the_calibrated_leaf_foretells_results_better() -> None:
    # The finding behind expert.TAU: the calibrated leaf is better than the first one (which
    # on 6,000 positions scored worse than a coin) and better than a coin.
    samples = _samples(8)
    old = calibration.UNCALIBRATED
    before = calibration.tau_losses(
        samples, [old["tau"]], old["hand_p"], old["draw_p"], old["draws"]
    )[old["tau"]]
    after = calibration.tau_losses(samples, [expert.TAU])[expert.TAU]
    assert after < before and after < math.log(2)


def test_bench_leaf_command() -> None:
    r = CliRunner().invoke(cli, ["bench", "leaf", "--games", "2", "--json"])
    assert r.exit_code == 0, r.output
    figures = json.loads(r.stdout)
    assert figures["positions"] > 0 and figures["coin"] == pytest.approx(math.log(2))
    assert figures["expert"] == pytest.approx(figures["by_tau"][str(expert.TAU)])
    assert figures["ratio"] == pytest.approx(figures["expert"] / figures["uncalibrated"])
    bad = CliRunner().invoke(cli, ["bench", "leaf", "--bots", "heuristic,nobody"])
    assert bad.exit_code == 2 and "nobody" in bad.output
    assert "Traceback" not in bad.output


@cache
def _troops_samples(games: int) -> list[calibration.Sample]:
    def make(i: int) -> tuple[object, object]:
        return GAME.make_bot("heuristic", i), GAME.make_bot("heuristic", i + 100)

    return calibration.collect(GAME, make, games, 9, {"deck": "troops"})  # type: ignore[arg-type]


def test_learned_values_is_the_expert_formula_on_many_rows() -> None:
    # The fit's numpy formula and the bot's must not drift apart: same value on every row,
    # at the shipped weights and at others.
    samples = _troops_samples(2)
    x = calibration.feature_arrays(samples)
    for w in (expert.LEARNED, (0.3, 0.2, -0.5, 1.0, 0.8, -0.3, 0.1)):
        batch = calibration.learned_values(x, w).tolist()
        one = [expert.learned_value(expert.leaf_features(s.state, s.player), w) for s in samples]
        assert batch == pytest.approx(one, abs=1e-12)
    assert x["result"].tolist() == [s.result for s in samples]


def test_the_learned_leaf_foretells_troops_only_results_better() -> None:
    # The finding behind expert.LEARNED, on games it was not fitted on (heuristic against
    # heuristic; it was fitted on the expert's games): better than the calibrated leaf.
    samples = _troops_samples(8)
    calibrated = calibration.tau_losses(samples, [expert.TAU])[expert.TAU]
    learned = calibration.learned_loss(calibration.feature_arrays(samples), expert.LEARNED)
    assert learned < calibrated < math.log(2)


def test_fit_learned_lowers_the_loss_from_where_it_starts() -> None:
    x = calibration.feature_arrays(_troops_samples(2))
    start = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0)  # the uncalibrated chances, nothing more
    w, loss = calibration.fit_learned(x, start, max_evals=300)
    assert loss == pytest.approx(calibration.learned_loss(x, w))
    assert loss < calibration.learned_loss(x, start) - 0.01


def test_bench_leaf_scores_and_fits_the_troops_only_leaf() -> None:
    r = CliRunner().invoke(
        cli, ["bench", "leaf", "--games", "2", "--deck", "troops", "--fit", "--json"]
    )
    assert r.exit_code == 0, r.output
    figures = json.loads(r.stdout)
    assert len(figures["fitted"]) == len(expert.LEARNED)
    assert figures["fitted_loss"] <= figures["learned"] + 1e-9
