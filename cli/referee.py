"""The community bot protocol's commands: ``referee`` (games between bot programs) and
``bot`` (one of our bots as a protocol program)."""

from __future__ import annotations

import logging
import signal
import sys
from pathlib import Path
from typing import Any

import click

from battlejudge.cli.common import (
    EXIT_NO,
    EXIT_OK,
    Renamed,
    emit_json,
    log_options,
    open_log,
)
from battlejudge.cli.games import bot_options, bot_settings, overwrite_option, prefix_option


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
    help="Write each game's record here (game-SEED-NNNN.blg).",
)
@prefix_option
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
@overwrite_option
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
    prefix: str,
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
    cannot be run, or a record already in --out, is exit 2 before the first game. Game i's
    record is PREFIX-SEED-iiii.blg, so matches with different seeds share a folder.
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
                prefix=prefix,
            ):
                results.append(r)
                _print_game(r, as_json)
    except Interrupted as e:
        stopped = e.signum
    except KeyboardInterrupt:
        stopped = signal.SIGINT
    finally:
        if proof_log is not None:
            proof_log.close()
    failed = could_not_play(north, south, results)
    if stopped is not None:
        name = signal.Signals(stopped).name
        click.echo(
            f"battlejudge referee: stopped by {name} after {len(results)} of {games} games; "
            "the bots were killed, the finished games' records kept",
            err=True,
        )
    _print_summary(summarize(north, south, results), failed, results, stopped, as_json)
    for f in failed:  # a match a program never played is no success
        click.echo(f"battlejudge referee: {f.sentence()}", err=True)
    if stopped is not None:
        raise click.exceptions.Exit(128 + stopped)
    raise click.exceptions.Exit(EXIT_NO if failed else EXIT_OK)


def _print_game(r: Any, as_json: bool) -> None:
    """One refereed game's line (and its violations), or its JSON."""
    if as_json:
        emit_json(r.to_json())
        return
    n, s = r.names
    marks = f", {len(r.violations)} violation(s)" if r.violations else ""
    click.echo(
        f"game {r.index + 1}: {n} (north) vs {s} (south): winner {r.winner}; "
        f"{r.detail}; {r.claims} claims{marks}"
    )
    for v in r.violations:
        click.echo(f"  {v.note()}")


def _print_summary(
    programs: list[Any], failed: list[Any], results: list[Any], stopped: int | None, as_json: bool
) -> None:
    """The match's summary: games, draws and each program's tally (JSON: with forfeits,
    violations, the programs that could not play and the stopping signal)."""
    draws = sum(1 for r in results if r.winner == "draw")
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
        return
    click.echo(f"summary: {len(results)} games, {draws} draws")
    for p in programs:
        click.echo(
            f"  {p.name or p.command}: {p.wins} wins, {p.losses} losses, {p.draws} draws, "
            f"{p.forfeits} forfeits, {p.violations} violations  [{p.command}]"
        )


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


COMMANDS: tuple[click.Command, ...] = (referee, bot)
