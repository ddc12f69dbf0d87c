"""``force``: the best mixed Force choice and the chance of winning the battle.

The Force choice is a zero-sum matrix game: the asker picks a row (his Force card),
the opponent a column (his), both at once; the payoff is the probability that the
asker wins the battle (:mod:`.matrix`), which the opponent is taken to hold down. The
value is therefore the win probability the asker can *guarantee*, whatever the
opponent does; a tie counts as not winning.

Solving is two independent steps: a linear program (OR-Tools GLOP, floating point)
and an exact solution in fractions by support enumeration over square sub-matrices
(Shapley and Snow: some square sub-matrix always yields an optimal pair). The exact
strategy pair is certified by best responses: the asker's strategy earns at least the
value against every opponent column, the opponent's at most the value against every
asker row. The two steps must agree, or :class:`SolverMismatch` is raised.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from battlejudge.solver.errors import BattlejudgeError
from battlejudge.solver.force_duel.matrix import Payoffs, payoffs
from battlejudge.solver.force_duel.question import ForceQuestion

TOLERANCE = 1e-7
"""How far the LP's floating-point value may be from the exact one."""

Matrix = Sequence[Sequence[Fraction]]


class SolverMismatch(BattlejudgeError):
    """The LP and the exact solution disagree (an internal error, never bad input)."""


@dataclass(frozen=True)
class MatrixSolution:
    """An optimal pair of mixed strategies and the value, exact."""

    value: Fraction
    rows: tuple[Fraction, ...]
    cols: tuple[Fraction, ...]


def certified(m: Matrix, sol: MatrixSolution) -> bool:
    """Whether ``sol`` is optimal: probability vectors, the row strategy earns at least
    the value against every column and the column strategy concedes at most the value
    against every row (von Neumann's minimax theorem makes this a proof)."""
    x, y, v = sol.rows, sol.cols, sol.value
    if any(p < 0 for p in (*x, *y)) or sum(x) != 1 or sum(y) != 1:
        return False
    ncol = len(m[0])
    if any(sum(x[i] * m[i][j] for i in range(len(m))) < v for j in range(ncol)):
        return False
    return all(sum(m[i][j] * y[j] for j in range(ncol)) <= v for i in range(len(m)))


def _solve_linear(a: list[list[Fraction]], b: list[Fraction]) -> list[Fraction] | None:
    """Gauss-Jordan elimination in fractions; None when the system is singular."""
    n = len(a)
    rows = [[*a[i], b[i]] for i in range(n)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if rows[r][col] != 0), None)
        if pivot is None:
            return None
        rows[col], rows[pivot] = rows[pivot], rows[col]
        p = rows[col][col]
        rows[col] = [v / p for v in rows[col]]
        for r in range(n):
            if r != col and rows[r][col] != 0:
                f = rows[r][col]
                rows[r] = [v - f * w for v, w in zip(rows[r], rows[col], strict=True)]
    return [rows[i][n] for i in range(n)]


def _kernel(m: Matrix, rs: tuple[int, ...], cs: tuple[int, ...]) -> MatrixSolution | None:
    """The strategy pair that makes the opponent indifferent on the square sub-matrix
    ``rs`` x ``cs``, or None if that system has no unique solution."""
    k = len(rs)
    # Rows: sum_i x_i m[i][j] - v = 0 for j in cs; sum_i x_i = 1. Unknowns x_rs, v.
    a = [[m[i][j] for i in rs] + [Fraction(-1)] for j in cs] + [[Fraction(1)] * k + [Fraction(0)]]
    b = [Fraction(0)] * k + [Fraction(1)]
    xs = _solve_linear(a, b)
    a = [[m[i][j] for j in cs] + [Fraction(-1)] for i in rs] + [[Fraction(1)] * k + [Fraction(0)]]
    ys = _solve_linear(a, b)
    if xs is None or ys is None or xs[-1] != ys[-1]:
        return None
    x = [Fraction(0)] * len(m)
    y = [Fraction(0)] * len(m[0])
    for i, p in zip(rs, xs, strict=False):
        x[i] = p
    for j, p in zip(cs, ys, strict=False):
        y[j] = p
    return MatrixSolution(xs[-1], tuple(x), tuple(y))


def solve_exact(m: Matrix) -> MatrixSolution:
    """An optimal strategy pair of the zero-sum game ``m`` (the row player maximizes),
    exact, by support enumeration; smaller supports are tried first, so a pure optimal
    strategy is preferred when there is one. Guarantees :func:`certified`."""
    nr, nc = len(m), len(m[0])
    for size in range(1, min(nr, nc) + 1):
        for rs in itertools.combinations(range(nr), size):
            for cs in itertools.combinations(range(nc), size):
                sol = _kernel(m, rs, cs)
                if sol is not None and certified(m, sol):
                    return sol
    raise SolverMismatch(f"no square sub-matrix gives an optimal pair for {m!r}")


def solve_lp(m: Matrix) -> tuple[float, tuple[float, ...]]:
    """The value and an optimal row strategy by linear programming (OR-Tools GLOP):
    maximize v subject to x . m[:, j] >= v for every column, x a probability vector."""
    from ortools.linear_solver import pywraplp

    solver = pywraplp.Solver.CreateSolver("GLOP")
    if solver is None:  # pragma: no cover - GLOP ships with every OR-Tools build
        raise SolverMismatch("OR-Tools GLOP is not available")
    xs = [solver.NumVar(0.0, 1.0, f"x{i}") for i in range(len(m))]
    v = solver.NumVar(-1.0, 2.0, "v")
    solver.Add(sum(xs) == 1)
    for j in range(len(m[0])):
        solver.Add(sum(float(m[i][j]) * xs[i] for i in range(len(m))) >= v)
    solver.Maximize(v)
    if solver.Solve() != pywraplp.Solver.OPTIMAL:
        raise SolverMismatch(f"GLOP found no optimum for {m!r}")
    return v.solution_value(), tuple(x.solution_value() for x in xs)


@dataclass(frozen=True)
class ForceAnswer:
    """The answer to a :class:`ForceQuestion`.

    ``strategy``/``opponent``: exact optimal mixed strategies (Force card -> probability);
    ``value``: the win probability the asker's strategy guarantees; ``lp_value`` and
    ``lp_strategy``: what the LP found (it agrees with ``value`` within
    :data:`TOLERANCE`); ``payoffs``: the whole matrix."""

    question: ForceQuestion
    payoffs: Payoffs
    value: Fraction
    strategy: tuple[tuple[int, Fraction], ...]
    opponent: tuple[tuple[int, Fraction], ...]
    lp_value: float
    lp_strategy: tuple[tuple[int, float], ...]

    def guarantee(self, force: int) -> Fraction:
        """What showing ``force`` for sure guarantees (its worst column)."""
        row = self.payoffs.rows.index(force)
        return min(self.payoffs.win[row])

    def to_json(self) -> dict[str, Any]:
        """The answer as JSON: the game value and both optimal mixed strategies as exact fractions,
        the LP's floating-point cross-check, and the payoff matrix."""
        p = self.payoffs
        return {
            "value": str(self.value),
            "value_float": float(self.value),
            "strategy": {str(k): str(v) for k, v in self.strategy},
            "opponent_strategy": {str(k): str(v) for k, v in self.opponent},
            "lp": {"value": self.lp_value, "strategy": {str(k): v for k, v in self.lp_strategy}},
            "matrix": {
                "rows": list(p.rows),
                "cols": list(p.cols),
                "win": [[str(v) for v in r] for r in p.win],
                "lose": [[str(v) for v in r] for r in p.lose],
            },
        }


def solve_force(q: ForceQuestion) -> ForceAnswer:
    """Solve the Force choice exactly and by LP, and check that they agree."""
    pay = payoffs(q)
    exact = solve_exact(pay.win)
    lp_value, lp_x = solve_lp(pay.win)
    if abs(lp_value - float(exact.value)) > TOLERANCE:
        raise SolverMismatch(f"LP value {lp_value} but exact value {exact.value}")
    worst = min(
        sum(lp_x[i] * float(pay.win[i][j]) for i in range(len(pay.rows)))
        for j in range(len(pay.cols))
    )
    if worst < float(exact.value) - 1e-6:
        raise SolverMismatch(f"LP strategy guarantees {worst}, not {exact.value}")
    return ForceAnswer(
        q,
        pay,
        exact.value,
        tuple(zip(pay.rows, exact.rows, strict=True)),
        tuple(zip(pay.cols, exact.cols, strict=True)),
        lp_value,
        tuple(zip(pay.rows, lp_x, strict=True)),
    )
