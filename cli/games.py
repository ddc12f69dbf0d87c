"""The generic side of ``selfplay``, ``tournament``, ``play``, ``replay`` and ``show``:
every game registered in :mod:`battlejudge.engines.games` (all but Battle Line, which
keeps its own record format and certified claims)."""

from __future__ import annotations

import dataclasses
import random
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from battlejudge.cli.common import EXIT_NO, EXIT_OK, emit_json, stderr_is_tty
from battlejudge.engines.game import CHANCE, GameState, IllegalActionError, sample_chance
from battlejudge.engines.games import BATTLE_LINE as BATTLE_LINE
from battlejudge.engines.games import GameInfo, game_names, get_game, parse_options
from battlejudge.engines.records import GameRecord, ReplayReport, replay, result_of
from battlejudge.engines.runner import play_game
from battlejudge.engines.tournament import GameSpec, PairResult, run_round_robin, schedule
from battlejudge.solver.errors import InputError

F = Callable[..., Any]


def game_options(f: F) -> F:
    """``--game``, ``-o/--option KEY=VALUE`` (repeatable) and ``--cards FILE``."""
    f = click.option(
        "--cards",
        type=click.Path(dir_okay=False),
        default=None,
        help="Force Duel: the card-set file (the same as -o cards=FILE).",
    )(f)
    f = click.option(
        "-o",
        "--option",
        "option_pairs",
        multiple=True,
        metavar="KEY=VALUE",
        help="A game option, e.g. -o variant=commander (repeatable).",
    )(f)
    return click.option(
        "--game",
        default=BATTLE_LINE,
        show_default=True,
        help=f"Which game: {', '.join(game_names())}.",
    )(f)


def resolve(
    game: str, option_pairs: tuple[str, ...], cards: str | None
) -> tuple[GameInfo, dict[str, str]]:
    """The game and its checked options (``InputError`` names a bad one)."""
    info = get_game(game)
    options = parse_options(option_pairs)
    if cards is not None:
        options["cards"] = cards
    info.check_options(options)
    info.new_game(options)  # a bad value fails here, before any game is played
    return info, options


def battle_line_only(game: str, **given: object) -> None:
    """Options that only Battle Line has are a usage error with another game."""
    if game == BATTLE_LINE:
        return
    for name, value in given.items():
        if value not in (None, False, (), ""):
            raise click.UsageError(
                f"--{name.replace('_', '-')} is a Battle Line option, not {game}'s"
            )


def split_bots(text: str, info: GameInfo | None, at_least: int) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if len(names) < at_least:
        raise InputError(
            f"--bots needs at least {at_least} names separated by commas, got {text!r}"
        )
    if info is not None:
        for name in dict.fromkeys(names):
            info.make_bot(name, 0)
    return names


@contextmanager
def _progress(total: int, label: str, show: bool) -> Iterator[Callable[[], None]]:
    if not show:
        yield lambda: None
        return
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield lambda: bar.update(1)


def game_seed(seed: int, index: int) -> int:
    """The chance seed of game ``index`` of a self-play run (as for Battle Line)."""
    return seed * 1_000_003 + index


def selfplay(
    info: GameInfo,
    options: dict[str, str],
    names: list[str],
    games: int,
    seed: int,
    out: str | None,
    as_json: bool,
) -> None:
    """Game ``i`` uses chance seed ``game_seed(seed, i)`` and bot seeds one and two above
    it; the two bots swap seats every game, so each has the first seat half the time."""
    folder = None if out is None else Path(out)
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    wins = [0, 0]  # by position in ``names`` (the two bots may have one name)
    draws = 0
    with _progress(games, "selfplay", stderr_is_tty() and not as_json) as tick:
        for i in range(games):
            gs = game_seed(seed, i)
            order = names if i % 2 == 0 else names[::-1]
            bots = [info.make_bot(n, gs + 1 + k) for k, n in enumerate(order)]
            _, rec = play_game(info, bots, gs, options)
            winner = rec.result
            seat_names = dict(zip(info.seats, order, strict=True))
            if winner in info.seats:
                seat = info.seats.index(winner)
                wins[seat if i % 2 == 0 else 1 - seat] += 1
            else:
                draws += 1
            path = None
            if folder is not None:
                path = folder / f"game-{i:04d}{info.suffix}"
                path.write_text(rec.dumps(), encoding="utf-8")
            if as_json:
                emit_json(
                    {
                        "game": f"{seed}-{i}",
                        "seed": gs,
                        "seats": seat_names,
                        "winner": winner,
                        "winner_bot": seat_names.get(winner or ""),
                        "actions": len(rec.moves),
                        "record": None if path is None else str(path),
                    }
                )
            tick()
    if not as_json:
        tally = ", ".join(f"{n} won {w}" for n, w in zip(names, wins, strict=True))
        click.echo(
            f"{games} {info.title} games: {tally}, {draws} drawn"
            + (f"; records in {out}" if out else "")
        )


def tournament(
    info: GameInfo,
    options: dict[str, str],
    names: list[str],
    games: int,
    seed: int,
    as_json: bool,
) -> list[PairResult]:
    """A round robin of ``info``'s bots (see :mod:`battlejudge.engines.tournament`)."""

    def play(spec: GameSpec) -> int | None:
        bots = [
            info.make_bot(spec.north, spec.north_seed),
            info.make_bot(spec.south, spec.south_seed),
        ]
        _, rec = play_game(info, bots, spec.seed, options, record=False)
        return info.seats.index(rec.result) if rec.result in info.seats else None

    total = len(schedule(names, games, seed))
    with _progress(total, "tournament", stderr_is_tty()) as tick:
        return run_round_robin(names, games, seed, play, lambda _spec: tick())


def read_text(path: str) -> str:
    if path == "-":
        with click.open_file("-", encoding="utf-8") as stdin:
            text: str = stdin.read()
            return text
    return Path(path).read_text(encoding="utf-8")


def replay_record(text: str, as_json: bool) -> None:
    """Replay a record, checking every action; exit 0 sound, 1 at the first problem."""
    rec = GameRecord.loads(text)
    report = replay(rec)
    info = get_game(rec.game)
    problem = report.problem
    result = result_of(info, report.state)
    if as_json:
        emit_json(
            {
                "game": rec.game,
                "sound": report.sound,
                "actions": report.steps,
                "result": result,
                "problem": None if problem is None else dataclasses.asdict(problem),
            }
        )
    elif problem is None:
        click.secho(
            f"SOUND: {info.title} record, {report.steps} actions replayed; result {result}.",
            fg="green",
        )
    else:
        click.secho(
            f"UNSOUND at action {problem.step + 1} (line {problem.line}): "
            f"{problem.kind.replace('-', ' ')}: {problem.detail}",
            fg="red",
        )
    raise click.exceptions.Exit(EXIT_OK if report.sound else EXIT_NO)


def show_record(text: str, upto: int | None, player: str | None, as_json: bool) -> None:
    """Draw the table after ``upto`` actions of a record (all of them by default)."""
    rec = GameRecord.loads(text)
    info = get_game(rec.game)
    report: ReplayReport = replay(rec, upto=upto)
    if report.problem is not None:
        click.secho(
            f"(the record stops being sound at line {report.problem.line}: "
            f"{report.problem.detail})",
            fg="red",
            err=True,
        )
    viewer = None
    if player is not None:
        if player not in info.seats:
            raise InputError(
                f"{info.title} has no seat {player!r} (seats: {', '.join(info.seats)})"
            )
        viewer = info.seats.index(player)
    state = report.state
    if as_json:
        who = state.current_player()
        emit_json(
            {
                "game": rec.game,
                "actions": report.steps,
                "to_act": "chance" if who == CHANCE else info.seats[who] if who >= 0 else None,
                "result": result_of(info, state),
                "view": state.information_state_string(viewer)
                if viewer is not None
                else state.serialize(),
            }
        )
        return
    Console(highlight=False).print(info.render(state, viewer))


HELP = """Type an action in the game's notation ('moves' lists them all), or:
  moves    list the legal actions
  help     this text
  quit     stop"""


def play_human(
    info: GameInfo, options: dict[str, str], bot_name: str, seat: str, seed: int
) -> None:
    """A human against a bot in the terminal, one action at a time."""
    if seat not in info.seats:
        raise InputError(f"{info.title} has no seat {seat!r} (seats: {', '.join(info.seats)})")
    human = info.seats.index(seat)
    bot = info.make_bot(bot_name, seed + 1)
    state: GameState[Any] = info.new_game(options)
    rng = random.Random(seed)
    console = Console(highlight=False)
    click.echo(
        f"{info.title} against the {bot_name} bot; you are {seat}. Seed {seed}. "
        "Type 'help' for help."
    )
    shown = -1
    steps = 0
    while not state.is_terminal():
        who = state.current_player()
        if who == CHANCE:
            action = sample_chance(state, rng)
            _tell(state, action, human, "chance")
            state.apply_action(action)
            steps += 1
            continue
        if who != human:
            action = bot.step(state)
            _tell(state, action, human, info.seats[who])
            state.apply_action(action)
            steps += 1
            continue
        if shown != steps:
            console.print(info.render(state, human))
            shown = steps
        try:
            line = click.prompt("your move", prompt_suffix="> ", default="", show_default=False)
        except click.Abort:
            click.echo()
            return
        line = line.strip()
        if not line:
            continue
        if line.lower() in ("quit", "exit"):
            return
        if line.lower() in ("help", "?"):
            click.echo(info.help or HELP)
            continue
        if line.lower() in ("moves", "legal"):
            click.echo(" | ".join(state.action_to_string(a) for a in state.legal_actions()))
            continue
        try:
            action = state.parse_action(line)
            state.apply_action(action)
            steps += 1
        except (InputError, IllegalActionError) as e:
            click.echo(f"Not allowed: {e}. Try again ('moves' lists what you can do).")
    console.print(info.render(state, None))
    result = result_of(info, state)
    click.echo(f"Game over: {'a draw' if result == 'draw' else result + ' wins'}.")


def _tell(state: GameState[Any], action: Any, human: int, who: str) -> None:
    """Echo what the human may know of an action he did not take (hidden ones masked)."""
    text = state.public_action_string(action, human)
    if text is not None:
        click.echo(f"{who}: {text}")
