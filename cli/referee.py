"""The bot protocol and the service: ``referee``, ``bot``, ``serve``."""

from __future__ import annotations

import logging
import signal
import sys
from pathlib import Path

import click

from battlejudge.cli.common import (
    EXIT_NO,
    EXIT_OK,
    Renamed,
    emit_json,
    log_options,
    open_log,
    witness_options,
)
from battlejudge.cli.games import bot_options, bot_settings


@click.command()
@click.option("--north", "north", required=True, help="Command line of the north bot.")
@click.option("--south", "south", required=True, help="Command line of the south bot.")
@click.option("--games", default=1, show_default=True, type=click.IntRange(min=1))
@click.option("--seed", default=1, show_default=True, type=int, help="Seed of the deals.")
@click.option("--swap", is_flag=True, help="Swap the programs' seats every other game.")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write each game's record here (game-NNNN.blg).",
)
@click.option(
    "--timeout",
    default=10.0,
    show_default=True,
    type=click.FloatRange(min=0.01),
    help="Seconds a bot has for each reply.",
)
@click.option(
    "--grace",
    default=1.0,
    show_default=True,
    type=click.FloatRange(min=0.0),
    help="Seconds between SIGTERM and SIGKILL when a bot is terminated.",
)
@click.option(
    "--overwrite",
    is_flag=True,
    help="Replace records already in --out (without it an existing record is exit 2).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON line per game as it ends, then one with the summary.",
)
@log_options("every claim")
def referee(
    north: str,
    south: str,
    games: int,
    seed: int,
    swap: bool,
    out: Path | None,
    timeout: float,
    grace: float,
    overwrite: bool,
    as_json: bool,
    log_path: str | None,
    key: str | None,
) -> None:
    """Referee games between two bot programs speaking the community Battle Line bot
    protocol (any language; each CMD is run as a subprocess, without a shell).

    Troops only; claims decided and certified for the player who just moved. A reply
    the referee cannot use is replaced (and recorded as a violation); a bot that
    crashes, times out or prints unsolicited lines forfeits the game. A command that
    cannot be run, or a record already in --out, is exit 2 before the first game.
    Ctrl-C, SIGTERM and SIGHUP stop the match: the bots are killed, the records of the
    games that ended are kept, the summary covers them, and the exit status is 128 +
    the signal's number.

    Exit 0 when the games were played; 1 when a program could not play (it forfeited
    every game, or none of its replies could be used: one line on stderr names it, and
    the summary's could_not_play); 2 bad input; 128 + n stopped by signal n.
    """
    from battlejudge.apps.protocol.referee import (
        Interrupted,
        could_not_play,
        referee_match,
        stop_signals_interrupt,
        summarize,
    )

    proof_log = open_log(log_path, key)
    results = []
    stopped: int | None = None
    try:
        with stop_signals_interrupt():
            for r in referee_match(
                north,
                south,
                games=games,
                seed=seed,
                swap=swap,
                timeout=timeout,
                grace=grace,
                out=out,
                log=proof_log,
                overwrite=overwrite,
            ):
                results.append(r)
                if as_json:
                    emit_json(r.to_json())
                    continue
                n, s = r.names
                marks = f", {len(r.violations)} violation(s)" if r.violations else ""
                click.echo(
                    f"game {r.index + 1}: {n} (north) vs {s} (south): winner {r.winner}; "
                    f"{r.detail}; {r.claims} claims{marks}"
                )
                for v in r.violations:
                    click.echo(f"  {v.note()}")
    except Interrupted as e:
        stopped = e.signum
    except KeyboardInterrupt:
        stopped = signal.SIGINT
    finally:
        if proof_log is not None:
            proof_log.close()
    programs = summarize(north, south, results)
    failed = could_not_play(north, south, results)
    draws = sum(1 for r in results if r.winner == "draw")
    if stopped is not None:
        name = signal.Signals(stopped).name
        click.echo(
            f"battlejudge referee: stopped by {name} after {len(results)} of {games} games; "
            "the bots were killed, the finished games' records kept",
            err=True,
        )
    if as_json:
        emit_json(
            {
                "summary": {
                    "games": len(results),
                    "draws": draws,
                    "forfeits": sum(1 for r in results if r.forfeit is not None),
                    "violations": sum(len(r.violations) for r in results),
                    "programs": [p.to_json() for p in programs],
                    "could_not_play": [f.to_json() for f in failed],
                    "stopped_by": None if stopped is None else signal.Signals(stopped).name,
                }
            }
        )
    else:
        click.echo(f"summary: {len(results)} games, {draws} draws")
        for p in programs:
            click.echo(
                f"  {p.name or p.command}: {p.wins} wins, {p.losses} losses, {p.draws} draws, "
                f"{p.forfeits} forfeits, {p.violations} violations  [{p.command}]"
            )
    for f in failed:  # a match a program never played is no success
        click.echo(f"battlejudge referee: {f.sentence()}", err=True)
    if stopped is not None:
        raise click.exceptions.Exit(128 + stopped)
    raise click.exceptions.Exit(EXIT_NO if failed else EXIT_OK)


@click.command()
@click.option(
    "--bot",
    "--engine",
    "engine",
    cls=Renamed,
    type=click.Choice(["random", "heuristic", "search", "expert"]),
    default="heuristic",
    show_default=True,
    help="Which of our bots answers.",
)
@bot_options
@click.option("--seed", default=0, show_default=True, type=int, help="The bot's seed.")
@click.option("--name", default=None, help="The name the bot gives (default battlejudge-ENGINE).")
@click.option("-v", "--verbose", is_flag=True, help="Log every decision on stderr.")
def bot(
    engine: str,
    budget: float | None,
    iterations: int | None,
    seed: int,
    name: str | None,
    verbose: bool,
) -> None:
    """Play one of our bots through the community bot protocol on stdin/stdout (for
    ``battlejudge referee`` or any referee of the protocol). Exits at the end of input
    or on SIGTERM; logs go to stderr."""
    from battlejudge.apps.protocol.client import ProtocolClient
    from battlejudge.engines.battleline.game import make_bot

    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO if verbose else logging.WARNING,
        format=f"battlejudge bot ({engine}): %(message)s",
    )
    client = ProtocolClient(
        make_bot(engine, seed, **bot_settings(budget, iterations)),
        name or f"battlejudge-{engine}",
        seed,
    )
    try:
        client.run(sys.stdin, sys.stdout)
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    raise click.exceptions.Exit(EXIT_OK)


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
    checkpoint_interval: float,
) -> None:
    """Serve certified claims over HTTP (JSON API; Swagger UI at /docs; web table at /).

    POST /v1/claims, /v1/claims:batch, /v1/verify, /v1/positions/claim; GET /healthz,
    /v1/log/checkpoint, /v1/log/proof/SEQ. With --log, each answer logged carries its
    record's log_seq; several services may share one postgresql:// log; the log is also
    served as C2SP tlog-tiles (GET /checkpoint, /tile/L/N, /tile/entries/N), without a key.
    Without --api-keys only a loopback --host is served, unless --insecure-no-auth.
    Web pages (docs/web.md): the claim checker at /, the table viewer at /game, play at
    /play, the judge's audit at /audit.
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
    )
    auth = f"{len(set(keys.values()))} client(s) with API keys" if keys else "no API keys"
    click.echo(f"battlejudge serve: http://{host}:{port} (docs at /docs; {auth})", err=True)
    run_service(config, host, port, access_log)
    raise click.exceptions.Exit(EXIT_OK)


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


COMMANDS: tuple[click.Command, ...] = (referee, bot, serve, api_keys_group)
