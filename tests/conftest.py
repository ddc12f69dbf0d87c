"""Hypothesis profiles: the default keeps CI quick; ``--hypothesis-profile=thorough``
runs many more examples of every property test. And the PostgreSQL fixtures."""

from __future__ import annotations

import itertools
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
