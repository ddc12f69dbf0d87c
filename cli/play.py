"""``battlejudge selfplay`` and ``battlejudge play`` (a human against a bot)."""

from __future__ import annotations

import random
import re
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from battlejudge.cli import games as generic
from battlejudge.cli.common import emit_json, log_options, open_log, stderr_is_tty
from battlejudge.engines.battleline.actions import CLAIM, END_CLAIMS, Action
from battlejudge.engines.battleline.config import RulesConfig
from battlejudge.engines.battleline.render import render
from battlejudge.engines.battleline.selfplay import selfplay as run_selfplay
from battlejudge.engines.battleline.state import (
    CLAIM_END,
    CLAIM_START,
    PLAYERS,
    BattleLineState,
    new_game,
)
from battlejudge.engines.game import CHANCE, IllegalActionError, sample_chance
from battlejudge.solver.errors import InputError

_ASK = re.compile(
    r"^\s*(?:can\s+i\s+claim|claim\s*\?)\s*(?:flag|circle)?\s*(\d+)\s*\??\s*$", re.IGNORECASE
)


def _bot_factory(budget: float | None) -> Any:
    from battlejudge.engines.battleline import bots

    def make(name: str, seed: int) -> Any:
        if name == "search" and budget is not None:
            return bots.make_bot(name, seed, budget_s=budget)
        return bots.make_bot(name, seed)

    return make


@click.command()
@click.option("--games", type=click.IntRange(min=1), default=10, show_default=True)
@click.option(
    "--bots",
    "bot_names",
    default="random,random",
    show_default=True,
    help="Two bot names, north first: random, heuristic, search, or module:Class.",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default=None,
    help="Write each game record (.blg) to this folder.",
)
@log_options("every claim")
@click.option("--budget", type=float, default=None, help="Seconds per move for the search bot.")
@click.option("--json", "as_json", is_flag=True, help="One JSON line per game.")
@generic.game_options
def selfplay(
    games: int,
    bot_names: str,
    seed: int,
    out: str | None,
    log_path: str | None,
    key: str | None,
    budget: float | None,
    as_json: bool,
    game: str,
    option_pairs: tuple[str, ...],
    cards: str | None,
) -> None:
    """Bots play --games games, every game recorded (with --out); reproducible from the
    seed. Battle Line: every claim is certified (and logged with --log). Other games
    (--game): the two bots swap seats every game."""
    if game != generic.BATTLE_LINE:
        generic.battle_line_only(game, log=log_path, key=key, budget=budget)
        info, options = generic.resolve(game, option_pairs, cards)
        names = generic.split_bots(bot_names, info, 2)
        if len(names) != 2:
            raise InputError(f"--bots needs two names separated by a comma, got {bot_names!r}")
        generic.selfplay(info, options, names, games, seed, out, as_json)
        return
    generic.battle_line_only(game)
    if option_pairs or cards:
        raise click.UsageError("Battle Line takes no -o/--cards options")
    names = [n.strip() for n in bot_names.split(",")]
    if len(names) != 2 or not all(names):
        raise InputError(f"--bots needs two names separated by a comma, got {bot_names!r}")
    log = open_log(log_path, key)
    make = _bot_factory(budget)
    make(names[0], 0), make(names[1], 0)  # bad names fail before any game is played
    runs = run_selfplay(
        (names[0], names[1]), games, seed, make, out=None if out is None else Path(out), log=log
    )
    wins = [0, 0, 0]
    show = stderr_is_tty() and not as_json
    with (
        click.progressbar(runs, length=games, label="selfplay", file=sys.stderr)
        if show
        else nullcontext(runs) as bar
    ):
        for g in bar:
            wins[g.winner] += 1
            if as_json:
                emit_json(
                    {
                        "game": g.game_id,
                        "seed": g.seed,
                        "north": g.north,
                        "south": g.south,
                        "winner": ("north", "south", "draw")[g.winner],
                        "turns": g.turns,
                        "claims": g.claims,
                        "record": None if g.record is None else str(g.record),
                    }
                )
    if not as_json:
        click.echo(
            f"{games} games: {names[0]} (north) won {wins[0]}, {names[1]} (south) won "
            f"{wins[1]}, {wins[2]} drawn"
            + (f"; records in {out}" if out else "")
            + (f"; claims logged to {log_path}" if log_path else "")
        )


HELP = """Type an action in record notation, for example:
  R7@3            play Red 7 (or a morale or environment tactic) at flag 3
  claim 2         claim flag 2 (the solver must prove it)
  can I claim 2?  ask whether flag 2 can be claimed: the proof or the witness
  scout, return R3, redeploy R7@3>5, deserter G5@4, traitor G5@4>6, discard R3@5
  pass, done (no more claims), draw troop, draw tactics
  moves           list the legal actions; quit to stop."""


@click.command()
@click.option(
    "--bot",
    "bot_name",
    default=None,
    help="The opponent: random, heuristic (the default), search, or module:Class; other "
    "games: their bots (default the strongest).",
)
@click.option(
    "--seat", default=None, help="Your seat: north or south (default north); other games: p1, p2."
)
@click.option(
    "--theme",
    type=click.Choice(["battleline", "nine-circles"]),
    default=None,
    help="Battle Line's theme (default battleline).",
)
@click.option(
    "--claim-timing",
    type=click.Choice(["standard", "advanced"]),
    default=None,
    help="Battle Line's claim timing (default standard).",
)
@click.option("--seed", type=int, default=None, help="Seed for the deal and the bot.")
@click.option("--budget", type=float, default=None, help="Seconds per move for the search bot.")
@click.option(
    "--log",
    "log_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Append every claim to this proof log.",
)
@generic.game_options
def play(
    bot_name: str | None,
    seat: str | None,
    theme: str | None,
    claim_timing: str | None,
    seed: int | None,
    budget: float | None,
    log_path: str | None,
    game: str,
    option_pairs: tuple[str, ...],
    cards: str | None,
) -> None:
    """Play a game against a bot in the terminal (Battle Line unless --game)."""
    seed = random.randrange(1 << 30) if seed is None else seed
    if game != generic.BATTLE_LINE:
        generic.battle_line_only(
            game, theme=theme, claim_timing=claim_timing, budget=budget, log=log_path
        )
        info, options = generic.resolve(game, option_pairs, cards)
        bot = bot_name or list(info.bots)[-1]
        generic.play_human(info, options, bot, seat or info.seats[0], seed)
        return
    if option_pairs or cards:
        raise click.UsageError("Battle Line takes no -o/--cards options")
    seat = seat or "north"
    if seat not in PLAYERS:
        raise InputError(f"Battle Line has no seat {seat!r} (seats: north, south)")
    bot_name = bot_name or "heuristic"
    theme = theme or "battleline"
    claim_timing = claim_timing or "standard"
    bot = _bot_factory(budget)(bot_name, seed + 1)
    human = PLAYERS.index(seat)
    state = new_game(RulesConfig(True, claim_timing, theme), first=0)  # type: ignore[arg-type]
    state.log = open_log(log_path, None)
    state.game_id = f"play-{seed}"
    rng = random.Random(seed)
    console = Console(highlight=False)
    naming = state.naming
    click.echo(
        f"Battle Line against the {bot_name} bot; you are {seat}. Seed {seed}. "
        f"Type 'help' for help."
    )
    shown = -1
    while not state.is_terminal():
        who = state.current_player()
        if who == CHANCE:
            state.apply_action(sample_chance(state, rng))
            continue
        if who != human:
            action = bot.step(state)
            state.apply_action(action)
            if action.kind != END_CLAIMS:
                click.echo(f"{PLAYERS[who]}: {action.notation(naming)}")
            continue
        if shown != len(state.history):
            console.print(render(state, viewer=human))
            shown = len(state.history)
        try:
            line = click.prompt(
                "your move", prompt_suffix="> ", default="", show_default=False
            ).strip()
        except click.Abort:
            click.echo()
            return
        if not line:
            continue
        if line.lower() in ("quit", "exit"):
            return
        if line.lower() in ("help", "?"):
            click.echo(HELP)
            continue
        if line.lower() in ("moves", "legal"):
            click.echo(" | ".join(a.notation(naming) for a in state.legal_actions()))
            continue
        ask = _ASK.match(line)
        if ask:
            _answer(state, int(ask.group(1)), human)
            continue
        try:
            action = Action.parse(line)
            if (
                action.kind != CLAIM
                and state.phase in (CLAIM_START, CLAIM_END)
                and (action not in state.legal_actions())
            ):
                state.apply_action(Action(END_CLAIMS))
            state.apply_action(action)
        except (InputError, IllegalActionError) as e:
            click.echo(f"Not allowed: {e}. Try again ('moves' lists what you can do).")
    console.print(render(state, viewer=None))
    result = {0: "north wins", 1: "south wins"}.get(state.winner, "a draw")
    click.echo(f"Game over: {result}.")


def _answer(state: BattleLineState, flag: int, player: int) -> None:
    """'Can I claim flag N?': the solver's proof or witness, without claiming."""
    if not 1 <= flag <= 9:
        click.echo(f"There is no {state.naming.flag} {flag}.")
        return
    try:
        proof = state.judge_claim(flag - 1, player)
    except IllegalActionError as e:
        click.echo(f"No: {e}.")
        return
    if proof.valid:
        click.echo(f"Yes, {state.naming.flag} {flag} can be claimed (certified):")
    for line in proof.explanation:
        click.echo(f"  {line}")


COMMANDS: tuple[click.Command, ...] = (selfplay, play)
