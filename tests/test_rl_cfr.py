"""OpenSpiel's tabular CFR+ learns from information states (issue 37, part 4), on the
small Force Duel of examples/force_duel/duel-small.toml, on a tiny budget: NashConv
falls from one checkpoint to the next, the average policy is a distribution over the
legal actions at every decision state, a policy keyed by information-state tensors is
the same policy, and the policy plays our bots to the end. The script runs as a user
runs it. No speed and no win rate is asserted (a few games prove nothing).

Needs the ``rl`` extra; skipped with the reason otherwise.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("pyspiel", reason="OpenSpiel is not installed (pip install 'battlejudge[rl]')")

from battlejudge.examples import cfr_force_duel as example


@pytest.fixture(scope="module")
def solved() -> tuple[Any, Any, example.Curve]:
    game = example.load()
    avg, curve = example.solve(game, 4, marks=[1, 2, 4])
    return game, avg, curve


@pytest.fixture(scope="module")
def states(solved: tuple[Any, Any, example.Curve]) -> list[Any]:
    return example.decision_states(solved[0])


def test_the_game_is_small_and_has_hidden_information(states: list[Any]) -> None:
    strings = {s.information_state_string(s.current_player()) for s in states}
    assert len(states) > len(strings) > 100  # players decide without seeing everything


def test_nash_conv_falls_over_iterations(solved: tuple[Any, Any, example.Curve]) -> None:
    _, _, curve = solved
    assert [i for i, _, _ in curve.points] == [1, 2, 4]
    convs = [conv for _, conv, _ in curve.points]
    assert convs[0] > convs[1] > convs[2] >= 0
    assert convs[2] < convs[0] / 2


def test_policy_is_a_distribution_over_legal_actions(
    solved: tuple[Any, Any, example.Curve], states: list[Any]
) -> None:
    _, avg, _ = solved
    assert example.check_policy(states, avg) == len(states)
    # the check can fail: a policy putting weight on an illegal action is caught
    actions = range(states[0].get_game().num_distinct_actions())
    bad = next(s for s in states if len(s.legal_actions()) < len(actions))
    illegal = next(a for a in actions if a not in bad.legal_actions())

    class Leaky:
        def action_probabilities(self, state: Any) -> dict[int, float]:
            return {illegal: 1.0}

    with pytest.raises(AssertionError):
        example.check_policy([bad], Leaky())


def test_tensor_keys_name_the_same_information_states(states: list[Any]) -> None:
    strings, tensors = example.tensor_keys_agree(states)
    assert strings == tensors > 100


def test_the_policy_plays_our_bots(solved: tuple[Any, Any, example.Curve]) -> None:
    game, avg, _ = solved
    for opponent in ("equilibrium", "random"):
        score = example.play(game, avg, opponent, 6, seed=1)
        assert score.games == 6
        assert 0 <= score.rate() <= 1


def test_the_script_runs(capsys: pytest.CaptureFixture[str]) -> None:
    out = example.main(["--iterations", "1", "--games", "2"])
    assert [i for i, _, _ in out["curve"]] == [1]
    assert set(out["results"]) == {
        "CFR+ vs equilibrium",
        "uniform vs equilibrium",
        "CFR+ vs random",
        "uniform vs random",
    }
    text = capsys.readouterr().out
    assert "CFR+ on python_force_duel(cards=duel-small.toml, units=1): 1 iterations" in text
    assert "CFR+ vs equilibrium:" in text
