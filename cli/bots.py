"""Bot commands (issue 4): ``tournament``."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click

from battlejudge.cli import games as generic
from battlejudge.cli.common import emit_json, fail, stderr_is_tty
from battlejudge.engines.battleline.bots import BotLike, make_bot
from battlejudge.engines.battleline.bots.tournament import (
    GameSpec,
    PairResult,
    run_tournament,
    schedule,
)
from battlejudge.solver.errors import InputError


def _bot_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if len(names) < 2:
        fail(f"--bots needs at least two bots separated by commas, got {text!r}")
    return names


@contextmanager
def _progress(total: int) -> Iterator[Callable[[GameSpec], None] | None]:
    """A progress bar on stderr when it is a terminal, else nothing."""
    if not stderr_is_tty():
        yield None
        return
    with click.progressbar(length=total, label="tournament", file=sys.stderr) as bar:
        yield lambda _spec: bar.update(1)


@click.command()
@click.option(
    "--bots",
    "bots_text",
    default=None,
    help="Comma-separated bots: random, heuristic, search (the default: all three), or a "
    "module:Class of your own (its constructor takes seed=). Other games: their bots "
    "(default all).",
)
@click.option("--games", default=10, show_default=True, type=int, help="Games per pair of bots.")
@click.option("--seed", default=0, show_default=True, type=int, help="Tournament seed.")
@click.option(
    "--budget",
    default=1.0,
    show_default=True,
    type=float,
    help="The search bot's thinking time per move, in seconds.",
)
@click.option(
    "--iterations",
    default=None,
    type=int,
    help="The search bot's evaluations per move instead of --budget (exactly reproducible).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@generic.game_options
def tournament(
    bots_text: str | None,
    games: int,
    seed: int,
    budget: float,
    iterations: int | None,
    as_json: bool,
    game: str,
    option_pairs: tuple[str, ...],
    cards: str | None,
) -> None:
    """Play a round robin between bots and print each pair's win rate with its 95%
    confidence interval (Wilson score).

    Each pair plays --games games on deals drawn from --seed; the two bots swap seats on
    the same deal every other game, so each moves first in half the games. A draw (the
    idle house rule with equal flags) counts half a win in the rate and the interval.
    Everything replays from the seed, except that the search bot's moves depend on the
    machine's speed under --budget; use --iterations for exact replays.

    Other games (--game): the same round robin with their own bots; seat 0 (p1) and
    seat 1 swap every other game on the same chance seed.

    Exit 0 done, 2 bad input (unknown bot, --games < 1, --budget <= 0).
    """
    if games < 1:
        fail(f"--games must be at least 1, got {games}")
    if game != generic.BATTLE_LINE:
        generic.battle_line_only(game, iterations=iterations)
        info, options = generic.resolve(game, option_pairs, cards)
        names = generic.split_bots(bots_text or ",".join(info.bots), info, 2)
        _report(
            generic.tournament(info, options, names, games, seed, as_json),
            names,
            as_json,
            f"tournament: {info.title}, {len(names)} bots, {games} games per pair, seed {seed}",
        )
        return
    if option_pairs or cards:
        fail("Battle Line takes no -o/--cards options")
    names = _bot_list(bots_text or "random,heuristic,search")
    if budget <= 0:
        fail(f"--budget must be more than 0 seconds, got {budget}")
    if iterations is not None and iterations < 1:
        fail(f"--iterations must be at least 1, got {iterations}")

    def make(name: str, bot_seed: int) -> BotLike:
        if name == "search":
            return make_bot(name, bot_seed, budget_s=budget, iterations=iterations)
        return make_bot(name, bot_seed)

    for name in dict.fromkeys(names):
        try:
            make(name, 0)
        except InputError as e:
            fail(str(e))
    total = len(schedule(names, games, seed))
    with _progress(total) as progress:
        pairs = run_tournament(names, games, seed, make=make, progress=progress)
    search = (
        ""
        if "search" not in names
        else (
            f", search {iterations} evaluations/move"
            if iterations
            else f", search {budget:g} s/move"
        )
    )
    _report(
        pairs,
        names,
        as_json,
        f"tournament: {len(names)} bots, {games} games per pair, seed {seed}{search}",
    )


def _report(pairs: list[PairResult], names: list[str], as_json: bool, title: str) -> None:
    if as_json:
        emit_json({"pairs": [p.to_json() for p in pairs]})
        return
    click.echo(title)
    width = max(len(n) for n in names)
    for p in pairs:
        lo, hi = p.ci95
        draws = f", {p.draws} draw{'s' if p.draws != 1 else ''}" if p.draws else ""
        click.echo(
            f"  {p.a:>{width}} vs {p.b:<{width}}  {p.a_wins:>3}-{p.b_wins:<3}{draws}  "
            f"{p.a} wins {p.a_win_rate:6.1%} (95% CI {lo:.1%}-{hi:.1%})"
        )
    click.echo("Win rate: wins plus half the draws, per game; interval: Wilson score.")


COMMANDS: tuple[click.Command, ...] = (tournament,)
