"""The HTTP service's commands: ``serve`` and ``api-keys``."""

from __future__ import annotations

import click

from battlejudge.cli.common import EXIT_OK, emit_json, log_options, open_log, witness_options


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(min=1),
    help="Worker processes kept busy with questions and checks (as many again start "
    "the first job of clients that have none running).",
)
@click.option(
    "--time-limit",
    default=2.0,
    show_default=True,
    type=click.FloatRange(min=0.0, min_open=True),
    help="Seconds of worker time per question or check; past it 503 undecided and the "
    "worker is killed.",
)
@click.option(
    "--memory-limit",
    default=512,
    show_default=True,
    type=click.IntRange(min=16),
    help="MiB a question or check may add to its worker; past it 503 undecided.",
)
@click.option(
    "--conflict-limit",
    type=click.IntRange(min=1),
    default=None,
    help="Solver conflicts per question; past it 503 undecided.",
)
@click.option(
    "--api-keys",
    "api_keys",
    type=click.Path(dir_okay=False),
    default=None,
    help="Require 'Authorization: Bearer KEY' with a key of this file (battlejudge api-keys add).",
)
@click.option(
    "--insecure-no-auth",
    is_flag=True,
    help="Serve a non-loopback --host without API keys (anyone who can connect).",
)
@click.option(
    "--client-concurrency",
    default=32,
    show_default=True,
    type=click.IntRange(min=1),
    help="Requests in progress per client; more get 429.",
)
@click.option(
    "--rate-limit",
    default=0.0,
    show_default=True,
    type=click.FloatRange(min=0.0),
    help="Questions per second per client (a batch counts each question); over it 429 "
    "with Retry-After. 0: no rate limit.",
)
@click.option(
    "--rate-burst",
    default=0.0,
    show_default=True,
    type=click.FloatRange(min=0.0),
    help="Questions a client may ask at once before the rate applies (0: one second's).",
)
@click.option(
    "--header-timeout",
    default=10.0,
    show_default=True,
    type=click.FloatRange(min=0.0, min_open=True),
    help="Seconds a connection has to send a whole request head; then it is closed.",
)
@click.option(
    "--body-timeout",
    default=10.0,
    show_default=True,
    type=click.FloatRange(min=0.0, min_open=True),
    help="Seconds a request has to send its whole body; then 408.",
)
@click.option(
    "--keep-alive",
    default=5,
    show_default=True,
    type=click.IntRange(min=1),
    help="Seconds an idle keep-alive connection stays open.",
)
@click.option(
    "--max-connections",
    default=1000,
    show_default=True,
    type=click.IntRange(min=16),
    help="Open connections at most; at the cap a new one closes the longest idle one.",
)
@click.option("--access-log", is_flag=True, help="Log every request (slower).")
@log_options("every answered claim")
@click.option(
    "--log-optional",
    is_flag=True,
    help="While the --log cannot be written, answer claims unlogged (a warning each) "
    "instead of refusing them (503).",
)
@click.option(
    "--tables",
    "tables",
    default=None,
    metavar="DIR|URL",
    help="Where the tables people play at are kept (lobby at /tables, API at /v1/tables): "
    "a directory, or a postgresql:// URL that several services share. "
    "[default: $XDG_STATE_HOME/battlejudge/tables, or ~/.local/state/battlejudge/tables]",
)
@click.option(
    "--checkpoint-interval",
    type=click.FloatRange(0.0, 60.0),
    default=0.25,
    show_default=True,
    metavar="SECONDS",
    help="The --log commits answered claims together as they come (one write and fsync "
    "a commit) and publishes a signed checkpoint of them (tiles, witnesses) at most this "
    "often.",
)
def serve(
    host: str,
    port: int,
    workers: int,
    time_limit: float,
    memory_limit: int,
    conflict_limit: int | None,
    api_keys: str | None,
    insecure_no_auth: bool,
    client_concurrency: int,
    rate_limit: float,
    rate_burst: float,
    header_timeout: float,
    body_timeout: float,
    keep_alive: int,
    max_connections: int,
    access_log: bool,
    log_path: str | None,
    key: str | None,
    log_optional: bool,
    tables: str | None,
    checkpoint_interval: float,
) -> None:
    """Serve certified claims over HTTP (JSON API; Swagger UI at /docs; web table at /).

    POST /v1/claims, /v1/claims:batch, /v1/verify, /v1/positions/claim; GET /healthz,
    /v1/log/checkpoint, /v1/log/proof/SEQ. With --log, each answer logged carries its
    record's log_seq; several services may share one postgresql:// log; the log is also
    served as C2SP tlog-tiles (GET /checkpoint, /tile/L/N, /tile/entries/N), without a key.
    Without --api-keys only a loopback --host is served, unless --insecure-no-auth.
    Web pages (docs/web.md): the claim checker at /, the table viewer at /game, play at
    /play, tables for two players at /tables (docs/tables.md), the judge's audit at /audit.
    """
    from battlejudge.apps.api_keys import load_keys
    from battlejudge.apps.service import ServiceConfig, is_loopback
    from battlejudge.apps.service import serve as run_service

    if key is not None and log_path is None:
        raise click.UsageError("--key goes with --log")
    keys = load_keys(api_keys) if api_keys is not None else None
    if keys is None and not insecure_no_auth and not is_loopback(host):
        raise click.UsageError(
            f"--host {host} is reachable from other machines and there are no API keys: "
            "give --api-keys FILE (battlejudge api-keys add), or --insecure-no-auth to "
            "serve anyone who can connect"
        )
    if log_path is not None and not log_optional:
        open_log(log_path, key).close()  # a bad path or key is bad input now, not later
    tables = tables or default_tables()
    _check_tables(tables)
    config = ServiceConfig(
        time_limit=time_limit,
        conflict_limit=conflict_limit,
        log_path=log_path,
        key_path=key,
        log_optional=log_optional,
        checkpoint_interval=checkpoint_interval,
        witnesses=witness_options(),
        dedicated=True,
        workers=workers,
        memory_limit=memory_limit * 2**20,
        api_keys=keys,
        client_concurrency=client_concurrency,
        rate_limit=rate_limit,
        rate_burst=rate_burst,
        header_timeout=header_timeout,
        body_timeout=body_timeout,
        keep_alive=keep_alive,
        max_connections=max_connections,
        tables=tables,
    )
    auth = f"{len(set(keys.values()))} client(s) with API keys" if keys else "no API keys"
    click.echo(f"battlejudge serve: http://{host}:{port} (docs at /docs; {auth})", err=True)
    run_service(config, host, port, access_log)
    raise click.exceptions.Exit(EXIT_OK)


def default_tables() -> str:
    """Where ``serve`` keeps tables unless told: the user's state directory."""
    import os
    from pathlib import Path

    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return str(Path(state) / "battlejudge" / "tables")


def _check_tables(where: str) -> None:
    """Open the tables' store once, so that a bad directory or URL is bad input now."""
    from battlejudge.apps.tables.store import TableStoreError
    from battlejudge.apps.tables.stores import open_table_store
    from battlejudge.solver.errors import InputError

    try:
        open_table_store(where).close()
    except TableStoreError as e:  # its message names the store, without a password
        raise InputError(f"--tables: {e}") from None


@click.group("api-keys")
def api_keys_group() -> None:
    """API keys for `battlejudge serve --api-keys FILE` (the file holds SHA-256 hashes only)."""


@api_keys_group.command("add")
@click.argument("path", metavar="FILE", type=click.Path(dir_okay=False))
@click.option("--client", required=True, help="The client's name (letters, digits, ._@-).")
@click.option("--json", "as_json", is_flag=True)
def api_keys_add(path: str, client: str, as_json: bool) -> None:
    """Make an API key for CLIENT, append its hash to FILE (created with mode 0600) and
    print the key: it is shown this once and stored nowhere. Delete the line to revoke
    it (the service reads the file when it starts)."""
    from battlejudge.apps.api_keys import add_key

    secret = add_key(path, client)
    if as_json:
        emit_json({"client": client, "key": secret, "file": path})
    else:
        click.echo(secret)
        click.echo(f"(the key of {client!r}: shown once; its hash is in {path})", err=True)
    raise click.exceptions.Exit(EXIT_OK)


COMMANDS: tuple[click.Command, ...] = (serve, api_keys_group)
