"""The leaf's calibration measure (issue 18): positions from whole games with their results,
the log loss, and ``battlejudge bench leaf``."""

from __future__ import annotations

import json
import math
from functools import cache

import pytest
from click.testing import CliRunner

from battlejudge.cli.main import cli
from battlejudge.engines.battleline.bots import calibration, expert
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
