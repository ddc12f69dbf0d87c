"""Solver backends: a cache of incremental solvers, one per encoding key.

Deciding a claim passes the table as assumptions to a solver that already holds the
formula for its key, so a decision costs a solve call, not a formula build. Solvers
are kept in a bounded LRU cache. Not thread-safe: give each thread its own
:class:`SolverCache`.
"""

from __future__ import annotations

import functools
import logging
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import pysat
from pysat.solvers import Solver

from battlejudge.solver.battleline.encode import Encoding, EncodingKey, encode_key
from battlejudge.solver.errors import InputError

log = logging.getLogger(__name__)

DECIDE_SOLVER = "minisat22"
"""Fast incremental solver for decisions (no proofs needed there)."""
PROOF_SOLVER = "cadical195"
"""Proof-logging solver for certificates (python-sat>=1.9.dev16: complete DRAT proofs)."""


@dataclass
class Outcome:
    """One solve: ``sat`` is True, False, or None when a limit was hit."""

    sat: bool | None
    model: list[int] | None
    core: list[int] | None


class SolverCache:
    """Incremental solvers keyed by :class:`EncodingKey`, least recently used dropped."""

    def __init__(self, size: int = 512, name: str = DECIDE_SOLVER) -> None:
        self.size = size
        self.name = name
        self._solvers: OrderedDict[EncodingKey, tuple[Solver, Encoding]] = OrderedDict()
        self.builds = 0

    def get(self, key: EncodingKey) -> tuple[Solver, Encoding]:
        """The solver and encoding for ``key``: the cached pair (now the most recently used), or a
        new solver bootstrapped with the key's clauses; the least recently used pair beyond
        ``size`` is deleted."""
        entry = self._solvers.get(key)
        if entry is not None:
            self._solvers.move_to_end(key)
            return entry
        enc = encode_key(key)
        solver = Solver(name=self.name, bootstrap_with=[list(c) for c in enc.clauses])
        self.builds += 1
        log.debug("built solver for %s: %d vars, %d clauses", key, enc.nvars, len(enc.clauses))
        self._solvers[key] = (solver, enc)
        if len(self._solvers) > self.size:
            _, (old, _) = self._solvers.popitem(last=False)
            old.delete()
        return solver, enc

    def solve(
        self, key: EncodingKey, assumptions: Sequence[int], conflict_limit: int | None = None
    ) -> Outcome:
        """Solve the key's formula under ``assumptions``: a model when satisfiable, the failed
        assumptions (the core; empty when the formula alone is unsatisfiable) when not,
        ``sat=None`` when ``conflict_limit`` conflicts were spent. A limit below 1 is an
        :class:`InputError` (MiniSat would read 0 as no limit)."""
        solver, _ = self.get(key)
        if conflict_limit is not None and conflict_limit < 1:
            # MiniSat reads a budget of 0 as "no budget": never let it mean that.
            raise InputError(f"conflict limit must be at least 1, got {conflict_limit}")
        if conflict_limit is None:
            sat: bool | None = solver.solve(assumptions=assumptions)
        else:
            solver.conf_budget(conflict_limit)
            sat = solver.solve_limited(assumptions=assumptions)
        if sat is True:
            return Outcome(True, solver.get_model(), None)
        if sat is False:
            # A formula refuted without any assumption has no core: None from PySAT.
            return Outcome(False, None, solver.get_core() or [])
        return Outcome(None, None, None)

    def clear(self) -> None:
        """Delete every cached solver (frees their native memory)."""
        for solver, _ in self._solvers.values():
            solver.delete()
        self._solvers.clear()


def refute(clauses: Sequence[Sequence[int]], conflict_limit: int | None = None) -> list[str] | None:
    """Solve on a FRESH proof-logging solver; the DRAT proof lines if unsatisfiable,
    None if satisfiable or if ``conflict_limit`` conflicts were not enough.

    A proof taken after solving under assumptions does not refute the formula, so the
    caller passes everything as clauses (STYLE.md, Solving and proofs).
    """
    with Solver(name=PROOF_SOLVER, bootstrap_with=clauses, with_proof=True) as s:
        if conflict_limit is None:
            sat: bool | None = s.solve()
        else:
            s.conf_budget(conflict_limit)
            sat = s.solve_limited()
        if sat is not False:
            return None
        proof: list[str] = s.get_proof()
        return proof


@functools.cache
def solver_version() -> str:
    """The PySAT release that wrote the proofs (recorded in every certificate)."""
    # The package's own attribute: the same string as its distribution metadata, without
    # importing importlib.metadata (20 ms of every command's start-up).
    return f"python-sat {pysat.__version__}"
