"""How well a leaf value foretells the game (for ``battlejudge bench leaf``).

:func:`collect` plays whole games between two bots and keeps every position where a player
had a real play-phase choice, with the hidden cards as they were and the game's result for
that player. :func:`log_loss` scores a value (a function of a state and a player, giving his
chance to win) against those results: a coin scores ln 2 = 0.693, a perfect oracle 0. The
expert's leaf (``ExpertBot.leaf_value`` in :mod:`battlejudge.engines.battleline.bots.expert`,
without its tactics term) judges exactly such a state, a deal with every card fixed, so this
measures it as the search uses it. This is how the expert's calibration (``expert.calibrated``)
was found: the leaf before it scored worse than a coin. :func:`fit_learned` fits the
troops-only leaf's weights (``expert.LEARNED``) the same way: numpy works the log loss of many
positions at once (:func:`learned_values`, the same formula as ``expert.learned_value``), and
SciPy's Nelder-Mead minimises it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from battlejudge.bench.bots import play_games
from battlejudge.engines.battleline.actions import Action
from battlejudge.engines.battleline.bots import expert
from battlejudge.engines.battleline.bots.base import BotLike
from battlejudge.engines.battleline.state import DRAW_GAME, PLAY_PHASE, BattleLineState
from battlejudge.engines.games import GameInfo

Value = Callable[[BattleLineState, int], float]
"""A player's chance to win a state, as a leaf judges it."""
UNCALIBRATED = {"hand_p": 0.4, "draw_p": 0.8, "draws": 0.5, "tau": 1.0}
"""The expert's leaf before the calibration (its first measured version)."""
CLIP = 1e-6
"""Values are kept this far from 0 and 1 (a sure value that is wrong costs 13.8, not inf)."""


@dataclass(frozen=True)
class Sample:
    """A position of game number ``game`` where ``player`` had a real play-phase choice
    (hidden cards as they were), and the game's result for him: 1 won, 0 lost, 0.5 drawn."""

    game: int
    state: BattleLineState
    player: int
    result: float


def collect(
    game: GameInfo,
    make: Callable[[int], tuple[BotLike, BotLike]],
    games: int,
    seed: int,
    options: Mapping[str, str] | None = None,
) -> list[Sample]:
    """Play ``games`` games (game i: ``make(i)``'s bots, seats swapped every other game,
    chance seeded ``seed + i``) and keep every position before a real play-phase choice."""
    samples: list[Sample] = []
    kept: list[tuple[BattleLineState, int]] = []

    def keep(_k: int, bot: BotLike, state: BattleLineState) -> Action:
        if state.phase == PLAY_PHASE and len(state.legal_actions()) > 1:
            copy = state.clone()
            copy.certify = False
            kept.append((copy, state.current_player()))
        return bot.step(state)

    for i, _bots, end in play_games(game, make, games, seed, options, keep):
        for s, p in kept:
            won = 0.5 if end.winner == DRAW_GAME else 1.0 if end.winner == p else 0.0
            samples.append(Sample(i, s, p, won))
        kept.clear()
    return samples


def log_loss(predictions: Iterable[tuple[float, float]]) -> float:
    """The mean log loss of (chance, result) pairs (ln 2 for a coin's 0.5)."""
    total, n = 0.0, 0
    for chance, y in predictions:
        v = min(1.0 - CLIP, max(CLIP, chance))
        total -= y * math.log(v) + (1.0 - y) * math.log(1.0 - v)
        n += 1
    return total / max(1, n)


def score(samples: Iterable[Sample], value: Value) -> float:
    """The log loss of ``value``'s chances against the samples' results."""
    return log_loss((value(x.state, x.player), x.result) for x in samples)


def tau_losses(
    samples: list[Sample],
    taus: Iterable[float],
    hand_p: float = expert.LEAF_HAND_P,
    draw_p: float = expert.DRAW_P,
    draws: float = expert.DRAWS,
) -> dict[float, float]:
    """The log loss of the leaf with these parameters at each calibration ``tau`` (each
    position's flag chances are worked out once)."""
    chances = [expert.deal_chances(x.state, x.player, hand_p, draw_p, draws) for x in samples]
    return losses_at_taus(chances, [x.result for x in samples], taus)


def losses_at_taus(
    chances: Sequence[Sequence[float]], results: Sequence[float], taus: Iterable[float]
) -> dict[float, float]:
    """The log loss of positions' flag ``chances`` (the leaf's, before the calibration)
    against their ``results``, calibrated at each ``tau``."""
    return {
        tau: log_loss(
            (expert.win_probability(expert.calibrated(c, tau)), y)
            for c, y in zip(chances, results, strict=True)
        )
        for tau in taus
    }


def feature_arrays(samples: Iterable[Sample]) -> dict[str, Any]:
    """The samples' :func:`expert.leaf_features` as numpy arrays (one row per position:
    ``chances``, ``placed``, ``complete`` of 9 flags; ``stage`` and ``tempo``), with their
    ``result``."""
    import numpy as np

    rows = [(expert.leaf_features(x.state, x.player), x.result) for x in samples]
    return {
        "chances": np.array([f.chances for f, _ in rows], dtype=float).reshape(-1, 9),
        "placed": np.array([f.placed for f, _ in rows], dtype=float).reshape(-1, 9),
        "complete": np.array([f.complete for f, _ in rows], dtype=float).reshape(-1, 9),
        "stage": np.array([f.stage for f, _ in rows], dtype=float),
        "tempo": np.array([f.tempo for f, _ in rows], dtype=float),
        "result": np.array([y for _, y in rows], dtype=float),
    }


def learned_values(x: Mapping[str, Any], w: Sequence[float]) -> Any:
    """:func:`expert.learned_value` of every row of :func:`feature_arrays` at once."""
    import numpy as np

    cap = expert.LOGIT_CAP

    def logit(p: Any) -> Any:
        p = np.clip(p, 1e-12, 1.0 - 1e-12)
        return np.clip(np.log(p / (1.0 - p)), -cap, cap)

    def sigmoid(z: Any) -> Any:
        return 1.0 / (1.0 + np.exp(-np.clip(z, -cap, cap)))

    c = x["chances"]
    stage = x["stage"][:, None]
    flag = sigmoid((w[0] + w[1] * stage) * logit(c) + w[2] * x["placed"] + w[3] * x["complete"])
    p = np.where((c <= 0.0) | (c >= 1.0), c, flag)
    dist = np.ones((len(c), 1))
    for i in range(p.shape[1]):
        pi = p[:, i : i + 1]
        dist = np.concatenate([dist * (1.0 - pi), dist * pi], axis=1)
    game = dist @ np.array(expert.OUTCOME)
    z = w[4] * logit(game) + (w[5] + w[6] * (1.0 - x["stage"])) * x["tempo"]
    return sigmoid(z)


def learned_loss(x: Mapping[str, Any], w: Sequence[float]) -> float:
    """The log loss of :func:`learned_values` at weights ``w`` against the results."""
    return log_loss(zip(learned_values(x, w).tolist(), x["result"].tolist(), strict=True))


def fit_learned(
    x: Mapping[str, Any], start: Sequence[float] = expert.LEARNED, max_evals: int = 3000
) -> tuple[list[float], float]:
    """The weights of the troops-only leaf that minimise :func:`learned_loss` on ``x``
    (SciPy's Nelder-Mead from ``start``, at most ``max_evals`` evaluations), and that loss."""
    from scipy.optimize import minimize

    res = minimize(
        lambda w: learned_loss(x, w),
        list(start),
        method="Nelder-Mead",
        options={"maxfev": max_evals, "xatol": 1e-3, "fatol": 1e-6},
    )
    return [float(v) for v in res.x], float(res.fun)


def run_leaf(
    names: Sequence[str], games: int, deck: str, seed: int, fit: bool
) -> tuple[dict[str, Any], dict[float, float]]:
    """``battlejudge bench leaf``: ``games`` Battle Line games between the bots ``names`` on
    the ``deck``; the figures as ``bench leaf --json`` prints them (the log loss before the
    calibration, of the expert's leaf, at other calibrations, of the learned leaf, and with
    ``fit`` the weights refitted on these games and their loss), and the loss at each tau."""
    from battlejudge.engines.battleline.game import GAME

    def make(i: int) -> tuple[Any, Any]:
        return (GAME.make_bot(names[0], seed + 2 * i), GAME.make_bot(names[1], seed + 2 * i + 1))

    samples = collect(GAME, make, games, seed, {"deck": deck})
    old = UNCALIBRATED
    before = tau_losses(samples, [old["tau"]], old["hand_p"], old["draw_p"], old["draws"])[
        old["tau"]
    ]
    taus = sorted({0.1, 0.15, 0.2, expert.TAU, 0.35, 0.5, 0.75, 1.0})
    # the learnt leaf's features hold the shipped leaf's flag chances: worked out once for both
    arrays = feature_arrays(samples)
    after = losses_at_taus(arrays["chances"].tolist(), arrays["result"].tolist(), taus)
    figures: dict[str, Any] = {
        "games": games,
        "bots": list(names),
        "deck": deck,
        "positions": len(samples),
        "coin": math.log(2),
        "uncalibrated": before,
        "expert": after[expert.TAU],
        "ratio": after[expert.TAU] / before if before else 0.0,
        "by_tau": {str(t): v for t, v in after.items()},
    }
    figures["learned"] = learned_loss(arrays, expert.LEARNED)
    if fit:
        figures["fitted"], figures["fitted_loss"] = fit_learned(arrays)
    return figures, after
