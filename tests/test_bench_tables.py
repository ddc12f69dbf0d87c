"""``battlejudge bench tables`` against a service it starts: a short run of two tables at
full speed is well formed (actions made, every latency positive, no errors), and the
command prints every figure. No wall time is asserted: the suite runs on busy machines."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from battlejudge.bench.tables import (
    SseParser,
    endpoint_of,
    measure,
    started_service,
)
from battlejudge.cli.main import cli
from battlejudge.solver.errors import InputError


@pytest.fixture(scope="module")
def service() -> Iterator[tuple[str, int]]:
    """``battlejudge serve`` with tables in a temporary directory (the bench's own start-up),
    its time limit raised so that no move runs out of it on a machine whose cores are busy
    (the suite must pass so; a 503 would count as the bench's error)."""
    with started_service(workers=1, time_limit=60) as found:
        yield found


def test_two_tables_at_full_speed(service: tuple[str, int]) -> None:
    url, pid = service
    r = asyncio.run(measure(endpoint_of(url), 2, 0.0, 2.0, 0.5, seed=7, service_pid=pid))
    assert r["tables"] == 2
    assert r["errors"] == {}
    assert r["actions"] > 0 and r["actions_per_s"] > 0
    assert r["events_timed"] > 0
    assert r["tables_opened"] >= 2
    event, post = r["event_ms"], r["post_ms"]
    assert 0 < event["p50"] <= event["p90"] <= event["p99"] <= event["max"]
    assert 0 < post["p50"] <= post["p99"]
    assert r["bench_cpu_s"] > 0 and r["bench_loop_lag_ms"]["max"] >= 0
    assert r["service_cpu_s"] is None or r["service_cpu_s"] > 0


def test_the_command_against_a_running_service(service: tuple[str, int]) -> None:
    url, _ = service
    args = ["bench", "tables", "--url", url, "--tables", "2", "--think", "0"]
    args += ["--seconds", "1", "--warmup", "0.2", "--baseline-seconds", "0.5"]
    shown = CliRunner().invoke(cli, args)
    assert shown.exit_code == 0, shown.output
    assert "ratio p99(2)/p99(1)" in shown.output
    assert "errors (2 tables, warm-up included): none" in shown.output
    assert "target p99 <= 100 ms: " in shown.output
    assert "(the target is for 100 tables)" in shown.output
    got = CliRunner().invoke(cli, [*args, "--actions", "5", "--json"])
    assert got.exit_code == 0, got.output
    r = json.loads(got.output)
    assert r["run"]["actions"] >= 5 and r["baseline"]["actions"] > 0
    assert r["ratio_p99"] is not None and r["ratio_p99"] > 0
    assert isinstance(r["target"]["met"], bool)


def test_a_bad_url_is_bad_input() -> None:
    with pytest.raises(InputError, match="'https://x'"):
        endpoint_of("https://x")
    got = CliRunner().invoke(cli, ["bench", "tables", "--url", "ftp://x:1"])
    assert got.exit_code == 2 and "'ftp://x:1'" in got.output


def test_server_sent_events_split_anywhere() -> None:
    stream = b'event: table\r\nid: 4\r\ndata: {"a":\r\ndata: 1}\r\n\r\n: keep-alive\n\n'
    for cut in range(len(stream) + 1):
        p = SseParser()
        got = p.feed(stream[:cut]) + p.feed(stream[cut:])
        assert got == [("table", "4", '{"a":\n1}')], cut


def test_a_store_the_started_service_refuses_is_its_one_line() -> None:
    """The service started for the run refuses its --tables store (exit 2): the bench says
    the service's own line, the password hidden, and exits 2 (not a traceback)."""
    store = "postgresql://nobody:secret@127.0.0.1:1/x"  # nothing listens on port 1
    got = CliRunner().invoke(cli, ["bench", "tables", "--store", store, "--seconds", "1"])
    assert got.exit_code == 2, got.output
    assert "--tables: postgresql://nobody:***@127.0.0.1:1/x" in got.output
    assert "secret" not in got.output and "Traceback" not in got.output
