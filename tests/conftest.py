"""Hypothesis profiles: the default keeps CI quick; ``--hypothesis-profile=thorough``
runs many more examples of every property test. The PostgreSQL fixtures. And the rule
that no test's outcome depends on wall-clock time (issue 34):

* A solver call in a test is bounded by work, never by the clock: CP-SAT by
  ``deterministic_time`` with ``time_limit=None`` (one search worker, which the solver
  modules always use), SAT solvers by conflict limits, bots by ``iterations`` (Battle
  Line's search and expert) or ``deterministic_time`` (the Lines of Battle planner). A
  wall-clock limit stays as the users' default and safety net, and a busy machine must
  not change what a test sees. :func:`cp_sat_limits_are_deterministic` enforces this for
  every CP-SAT solve a test makes in this process (commands run through ``CliRunner``
  included: they take ``--deterministic-time``): a solve with a wall-clock limit, without
  a deterministic one, or with more than one worker fails the test.
* Tests that measure time (the benchmarks) assert the figures' shape, never their size.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

_common = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.filter_too_much],
}
settings.register_profile("default", max_examples=150, **_common)  # type: ignore[arg-type]
settings.register_profile("thorough", max_examples=3000, **_common)  # type: ignore[arg-type]
settings.load_profile("default")


# -- a real PostgreSQL for the proof-log tests (issue 16) -------------------------------------
# pgserver (the test extra) ships PostgreSQL in a wheel and starts it in a temporary folder
# in about a second, also as root; one server per test session (per xdist worker), one
# fresh database per test.
_databases = itertools.count()


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    import pgserver  # type: ignore[import-untyped,unused-ignore]

    folder = tmp_path_factory.mktemp("pg")
    server = pgserver.get_server(folder, cleanup_mode="stop")
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture
def pg_url(pg_server: Any) -> str:
    """The URL of an empty database of its own on the session's PostgreSQL."""
    import psycopg

    name = f"t{os.getpid()}_{next(_databases)}"
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url: str = pg_server.get_uri(name)
    return url


# -- no CP-SAT solve in a test is bounded by the clock (issue 34) -----------------------------
_cp_sat_problems: list[str] = []


@pytest.fixture(scope="session", autouse=True)
def cp_sat_problems() -> Iterator[list[str]]:
    """Wraps ``CpSolver.solve`` for the session to note every solve whose outcome the clock
    could decide (the test that made it fails: :func:`cp_sat_limits_are_deterministic`);
    yields the notes. Without OR-Tools (an extra) there is nothing to watch."""
    try:
        from ortools.sat.python import cp_model
    except ImportError:
        yield _cp_sat_problems
        return

    solve = cp_model.CpSolver.solve

    def watched(self: Any, *args: Any, **kwargs: Any) -> Any:
        p = self.parameters
        if not math.isinf(p.max_time_in_seconds):
            _cp_sat_problems.append(f"a wall-clock limit of {p.max_time_in_seconds:g} s")
        if math.isinf(p.max_deterministic_time):
            _cp_sat_problems.append("no deterministic time limit")
        if p.num_workers != 1:
            _cp_sat_problems.append(f"{p.num_workers} search workers (0: one per core)")
        return solve(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cp_model.CpSolver, "solve", watched)
        yield _cp_sat_problems


@pytest.fixture(autouse=True)
def cp_sat_limits_are_deterministic(cp_sat_problems: list[str]) -> Iterator[None]:
    """Fails the test if it made a CP-SAT solve whose limits are not deterministic (see
    the module docstring): pass ``time_limit=None, deterministic_time=...``."""
    cp_sat_problems.clear()
    yield
    problems = sorted(set(cp_sat_problems))
    cp_sat_problems.clear()
    if problems:
        pytest.fail(
            "a CP-SAT solve in this test had "
            + "; ".join(problems)
            + ": tests bound CP-SAT by deterministic_time with time_limit=None (issue 34)",
            pytrace=False,
        )
