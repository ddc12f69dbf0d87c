"""The bot protocol and the service: ``referee``, ``bot``, ``serve``."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from battlejudge.cli.common import EXIT_OK, emit_json, log_options, open_log


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
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
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
    as_json: bool,
    log_path: str | None,
    key: str | None,
) -> None:
    """Referee games between two bot programs speaking the community Battle Line bot
    protocol (any language; each CMD is run as a subprocess, without a shell).

    Troops only; claims decided and certified for the player who just moved. A reply
    the referee cannot use is replaced (and recorded as a violation); a bot that
    crashes, times out or prints unsolicited lines forfeits the game.
    """
    from battlejudge.apps.protocol.referee import referee_match, summarize

    proof_log = open_log(log_path, key)
    results = []
    try:
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
        ):
            results.append(r)
            if not as_json:
                n, s = r.names
                marks = f", {len(r.violations)} violation(s)" if r.violations else ""
                click.echo(
                    f"game {r.index + 1}: {n} (north) vs {s} (south): winner {r.winner}; "
                    f"{r.detail}; {r.claims} claims{marks}"
                )
                for v in r.violations:
                    click.echo(f"  {v.note()}")
    finally:
        if proof_log is not None:
            proof_log.close()
    programs = summarize(north, south, results)
    draws = sum(1 for r in results if r.winner == "draw")
    if as_json:
        emit_json(
            {
                "games": [r.to_json() for r in results],
                "summary": {
                    "games": len(results),
                    "draws": draws,
                    "forfeits": sum(1 for r in results if r.forfeit is not None),
                    "violations": sum(len(r.violations) for r in results),
                    "programs": [p.to_json() for p in programs],
                },
            }
        )
    else:
        click.echo(f"summary: {len(results)} games, {draws} draws")
        for p in programs:
            click.echo(
                f"  {p.name or p.command}: {p.wins} wins, {p.losses} losses, {p.draws} draws, "
                f"{p.forfeits} forfeits, {p.violations} violations  [{p.command}]"
            )
    raise click.exceptions.Exit(EXIT_OK)


@click.command()
@click.option(
    "--engine",
    type=click.Choice(["random", "heuristic", "search"]),
    default="heuristic",
    show_default=True,
    help="Which of our bots answers.",
)
@click.option(
    "--budget",
    default=1.0,
    show_default=True,
    type=click.FloatRange(min=0.001),
    help="The search bot's thinking time per move, in seconds.",
)
@click.option("--seed", default=0, show_default=True, type=int, help="The bot's seed.")
@click.option("--name", default=None, help="The name the bot gives (default battlejudge-ENGINE).")
@click.option("-v", "--verbose", is_flag=True, help="Log every decision on stderr.")
def bot(engine: str, budget: float, seed: int, name: str | None, verbose: bool) -> None:
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
    options = {"budget_s": budget} if engine == "search" else {}
    client = ProtocolClient(
        make_bot(engine, seed, **options), name or f"battlejudge-{engine}", seed
    )
    try:
        client.run(sys.stdin, sys.stdout)
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    raise click.exceptions.Exit(EXIT_OK)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--time-limit",
    default=2.0,
    show_default=True,
    type=click.FloatRange(min=0.0, min_open=True),
    help="Seconds of server time per request; past it 503 undecided.",
)
@click.option(
    "--conflict-limit",
    type=click.IntRange(min=1),
    default=None,
    help="Solver conflicts per question; past it 503 undecided.",
)
@click.option("--access-log", is_flag=True, help="Log every request (slower).")
@log_options("every answered claim")
def serve(
    host: str,
    port: int,
    workers: int,
    time_limit: float,
    conflict_limit: int | None,
    access_log: bool,
    log_path: str | None,
    key: str | None,
) -> None:
    """Serve certified claims over HTTP (JSON API; OpenAPI document at /docs).

    POST /v1/claims, /v1/claims:batch, /v1/verify, /v1/positions/claim; GET /healthz.
    """
    import os

    import uvicorn

    from battlejudge.apps.service import (
        ENV_CONFIG,
        ServiceConfig,
        can_reuse_port,
        create_app,
        serve_workers,
    )

    if key is not None and log_path is None:
        raise click.UsageError("--key goes with --log")
    if log_path is not None:
        open_log(log_path, key).close()  # a bad path or key is bad input now, not in a worker
    config = ServiceConfig(time_limit, conflict_limit, log_path, key, dedicated=True)
    click.echo(f"battlejudge serve: http://{host}:{port} (docs at /docs)", err=True)
    if workers == 1:
        uvicorn.run(
            create_app(config), host=host, port=port, access_log=access_log, log_level="warning"
        )
    elif can_reuse_port():
        serve_workers(config, host, port, workers, access_log)
    else:
        os.environ[ENV_CONFIG] = config.to_env()
        uvicorn.run(
            "battlejudge.apps.service:app_from_env",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            access_log=access_log,
            log_level="warning",
        )
    raise click.exceptions.Exit(EXIT_OK)


COMMANDS: tuple[click.Command, ...] = (referee, bot, serve)
