"""The game commands, one pipeline for every registered game (Battle Line and Nine
Circles, BattlePlan, Lines of Battle, Force Duel): ``selfplay``, ``tournament``,
``play``, ``replay``, ``show`` and ``schema``.

Each command asks the game's :class:`~battlejudge.engines.games.GameInfo` what differs
(its bots, options, record format, position files, what a human may type); none of them
knows any game by name.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from battlejudge.cli.common import (
    EXIT_NO,
    EXIT_OK,
    Renamed,
    emit_json,
    log_options,
    open_log,
    progress,
)
from battlejudge.engines.game import CHANCE, GameState, IllegalActionError, sample_chance
from battlejudge.engines.games import (
    DEFAULT_GAME,
    GameInfo,
    Replayed,
    Setup,
    all_games,
    game_names,
    get_game,
    parse_options,
)
from battlejudge.engines.records import DEFAULT_PREFIX, check_prefix, detect, result_of
from battlejudge.engines.selfplay import selfplay as run_selfplay
from battlejudge.engines.tournament import PairResult, run_tournament, schedule
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
        help="A game option, e.g. -o claim_timing=advanced or -o variant=commander (repeatable).",
    )(f)
    return click.option(
        "--game",
        default=DEFAULT_GAME,
        show_default=True,
        help=f"Which game: {', '.join(game_names())}.",
    )(f)


def bot_options(f: F) -> F:
    """``--budget`` and ``--iterations``: for the bots that think (Battle Line's search)."""
    f = click.option(
        "--iterations",
        default=None,
        type=int,
        help="Bots that search: evaluations per move instead of --budget (exactly reproducible).",
    )(f)
    return click.option(
        "--budget",
        default=None,
        type=float,
        help="Bots that search: thinking time per move, in seconds (default 1).",
    )(f)


def bot_settings(budget: float | None, iterations: int | None) -> dict[str, Any]:
    """The bot options as the bots' constructors name them; bad values are bad input."""
    if budget is not None and budget <= 0:
        raise InputError(f"--budget must be more than 0 seconds, got {budget}")
    if iterations is not None and iterations < 1:
        raise InputError(f"--iterations must be at least 1, got {iterations}")
    return {"budget_s": budget, "iterations": iterations}


def resolve(
    game: str, option_pairs: tuple[str, ...], cards: str | None, **aliases: str | None
) -> tuple[GameInfo, dict[str, str]]:
    """The game and its checked options (``InputError`` names a bad one). ``aliases``
    are options given by their own flags (``--cards``, ``--theme``)."""
    info = get_game(game)
    options = parse_options(option_pairs)
    if cards is not None:
        options["cards"] = cards
    options.update({k: v for k, v in aliases.items() if v is not None})
    info.start(options)  # a bad name or value fails here, before any game is played
    return info, options


def split_bots(text: str, info: GameInfo, at_least: int, **bot_opts: Any) -> list[str]:
    """Bot names separated by commas, each checked against the game."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if len(names) < at_least:
        raise InputError(
            f"--bots needs at least {at_least} names separated by commas, got {text!r}"
        )
    for name in dict.fromkeys(names):
        info.make_bot(name, 0, **bot_opts)
    return names


def max_steps_option(f: F) -> F:
    """``--max-steps N``: the step limit of every game (docs/rulings.md, "Games that do not
    end")."""
    return click.option(
        "--max-steps",
        type=click.IntRange(min=1),
        default=None,
        metavar="N",
        help="A game still going after N actions (chance's included) stops the run with "
        "exit 2, naming its seed and bots (default: the game's own limit, Battle Line 6000).",
    )(f)


def prefix_option(f: F) -> F:
    """``--prefix TEXT``: how the run's record file names begin (issue 37)."""
    return click.option(
        "--prefix",
        default=DEFAULT_PREFIX,
        show_default=True,
        help="Record file names begin with this, then the seed and the game's number "
        "(PREFIX-SEED-0000): runs of other bots or options into one folder stay apart.",
    )(f)


def overwrite_option(f: F) -> F:
    """``--overwrite``: replace records already in ``--out`` (else they are exit 2)."""
    return click.option(
        "--overwrite",
        is_flag=True,
        help="Replace records already in --out (without it an existing record is exit 2).",
    )(f)


def cluster_option(f: F) -> F:
    """``--cluster``: where the games are played (issue 18)."""
    return click.option(
        "--cluster",
        default="local",
        show_default=True,
        help="Where the games are played: local, ray (join the local Ray cluster, or start "
        "one), or ray://HOST:PORT (needs pip install 'battlejudge[cluster]').",
    )(f)


def cluster_mapper(cluster: str) -> Any:
    """The games' player for ``--cluster`` (None: here); Ray is imported only for a cluster."""
    from battlejudge.apps.cluster import mapper

    return mapper(cluster)


# -- selfplay ---------------------------------------------------------------------------


@click.command()
@click.option("--games", type=click.IntRange(min=1), default=10, show_default=True)
@click.option(
    "--bots",
    "bot_names",
    default="random,random",
    show_default=True,
    help="Two bot names (the game's bots, or module:Class); they swap seats every game.",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default=None,
    help="Write each game's record to this folder (game-SEED-0000.blg, ...).",
)
@prefix_option
@overwrite_option
@log_options("every claim (games that decide claims: Battle Line)")
@bot_options
@max_steps_option
@cluster_option
@click.option("--json", "as_json", is_flag=True, help="One JSON line per game.")
@game_options
def selfplay(
    games: int,
    bot_names: str,
    seed: int,
    out: str | None,
    prefix: str,
    overwrite: bool,
    log_path: str | None,
    key: str | None,
    budget: float | None,
    iterations: int | None,
    max_steps: int | None,
    cluster: str,
    as_json: bool,
    game: str,
    option_pairs: tuple[str, ...],
    cards: str | None,
) -> None:
    """Bots play --games games, every game recorded (with --out), reproducible from the
    seed: game i uses chance seed seed*1000003+i, and the two bots swap seats every game.
    Games that decide claims (Battle Line) certify every claim, and log it with --log.

    Game i's record is PREFIX-SEED-iiii.blg (.bpg, ... as the game's records are named), so
    runs with different seeds share a folder; a record the run would write that exists
    already is exit 2, naming it, before the first game (--overwrite replaces it).

    Exit 0 done, 2 bad input, or a game that did not end within --max-steps (named with
    its seed and bots; the games before it are kept)."""
    info, options = resolve(game, option_pairs, cards)
    if log_path is not None and not info.logs_claims:
        raise InputError(f"--log: {info.title} decides no claims, so there is nothing to log")
    extra = bot_settings(budget, iterations)
    names = [n.strip() for n in bot_names.split(",") if n.strip()]
    if len(names) != len(info.seats):
        raise InputError(f"--bots needs two names separated by a comma, got {bot_names!r}")
    for name in dict.fromkeys(names):
        info.make_bot(name, 0, **extra)  # bad names fail before the log is opened
    check_prefix(prefix)
    play_on = cluster_mapper(cluster)
    log = open_log(log_path, key)
    runs = run_selfplay(
        info,
        names,
        games,
        seed,
        options,
        out=None if out is None else Path(out),
        log=log,
        bot_options=extra,
        mapper=play_on,
        max_steps=max_steps,
        prefix=prefix,
        overwrite=overwrite,
    )
    wins = [0] * len(names)  # by position in ``names`` (the two bots may have one name)
    draws = 0
    with progress(games, "selfplay", "games") as tick:
        for g in runs:
            tick()
            winner = g.winner_index
            if winner is None:
                draws += 1
            else:
                wins[winner] += 1
            if as_json:
                emit_json(g.to_json())
    if not as_json:
        tally = ", ".join(f"{n} won {w}" for n, w in zip(names, wins, strict=True))
        click.echo(
            f"{games} {info.title} games: {tally}, {draws} drawn"
            + (f"; records in {out}" if out else "")
            + (f"; claims logged to {log.name}" if log is not None else "")  # no password
        )


# -- tournament -------------------------------------------------------------------------


@click.command()
@click.option(
    "--bots",
    "bots_text",
    default=None,
    help="Comma-separated bots (default: all of the game's bots), or a module:Class of "
    "your own (its constructor takes seed=).",
)
@click.option("--games", default=10, show_default=True, type=int, help="Games per pair of bots.")
@click.option("--seed", default=0, show_default=True, type=int, help="Tournament seed.")
@bot_options
@max_steps_option
@cluster_option
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@game_options
def tournament(
    bots_text: str | None,
    games: int,
    seed: int,
    budget: float | None,
    iterations: int | None,
    max_steps: int | None,
    cluster: str,
    as_json: bool,
    game: str,
    option_pairs: tuple[str, ...],
    cards: str | None,
) -> None:
    """Play a round robin between bots and print each pair's win rate with its 95%
    confidence interval (Wilson score).

    Each pair plays --games games on chance seeds drawn from --seed; the two bots swap
    seats on the same seed every other game, so each has the first seat in half the
    games. A draw counts half a win in the rate and the interval. Everything replays
    from the seed, except that a searching bot's moves depend on the machine's speed
    under --budget; use --iterations for exact replays.

    Exit 0 done, 2 bad input (unknown bot, --games < 1, --budget <= 0) or a game that
    did not end within --max-steps (named with its seed and bots).
    """
    if games < 1:
        raise InputError(f"--games must be at least 1, got {games}")
    info, options = resolve(game, option_pairs, cards)
    extra = bot_settings(budget, iterations)
    names = split_bots(bots_text or ",".join(info.bots), info, 2, **extra)
    total = len(schedule(names, games, seed))
    play_on = cluster_mapper(cluster)
    with progress(total, "tournament", "games") as tick:
        pairs = run_tournament(
            info,
            names,
            games,
            seed,
            options,
            bot_options=extra,
            progress=lambda _s: tick(),
            mapper=play_on,
            max_steps=max_steps,
        )
    thinking = ""
    if iterations is not None:
        thinking = f", {iterations} evaluations/move for bots that search"
    elif budget is not None:
        thinking = f", {budget:g} s/move for bots that search"
    _report(
        pairs,
        names,
        as_json,
        f"tournament: {info.title}, {len(names)} bots, {games} games per pair, "
        f"seed {seed}{thinking}",
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


# -- replay and show --------------------------------------------------------------------


def read_text(path: str) -> str:
    """A file's text (``-`` for standard input)."""
    if path == "-":
        with click.open_file("-", encoding="utf-8") as stdin:
            text: str = stdin.read()
            return text
    return Path(path).read_text(encoding="utf-8")


@click.command()
@click.argument("record", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='One JSON document, the same keys for every game: {"game", "sound", "result", '
    '"actions", "turns", "claims", "problem"} (turns and claims: Battle Line, else null; '
    'problem: {"line", "kind", "detail", "where"} or null).',
)
def replay(record: str, as_json: bool) -> None:
    """Replay a game RECORD (.blg, .bpg, .lbg, .fdg, or - for stdin), checking every
    action; a Battle Line record re-adjudicates every claim with a fresh proof.

    Exit 0 if the record is sound, 1 at the first illegal move or unjustified claim
    (named with its turn or action, its line and the rule it breaks), 2 if it cannot be
    parsed.
    """
    text = read_text(record)
    report = detect(text, record).replay(text)
    problem = report.problem
    if as_json:
        emit_json(replay_json(report))
    elif problem is None:
        click.secho(f"SOUND: {report.summary}", fg="green")
    else:
        kind = problem.kind.replace("-", " ")
        click.secho(
            f"UNSOUND at {problem.where} (line {problem.line}): {kind}: {problem.detail}",
            fg="red",
        )
    raise click.exceptions.Exit(EXIT_OK if report.sound else EXIT_NO)


def replay_json(report: Replayed) -> dict[str, Any]:
    """``replay --json``: one shape for every game (absent facts are null)."""
    p = report.problem
    return {
        "game": report.game.name,
        "sound": report.sound,
        "result": report.facts.get("result"),
        "actions": report.facts.get("actions", len(getattr(report.state, "history", []))),
        "turns": report.facts.get("turns"),
        "claims": report.facts.get("claims"),
        "problem": None
        if p is None
        else {"line": p.line, "kind": p.kind, "detail": p.detail, "where": p.where},
    }


def _is_position(text: str) -> bool:
    return text.lstrip().startswith("{")


SHOWN = (
    "show draws Battle Line position files and the records of every game (.blg, .bpg, .lbg, .fdg)"
)


@click.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--turn",
    type=click.IntRange(min=1),
    default=None,
    help="A Battle Line record: the table at the start of turn N (1 to the record's last).",
)
@click.option(
    "--step",
    type=click.IntRange(min=0),
    default=None,
    help="A record of the other games: the table after N actions (0 to the record's last).",
)
@click.option(
    "--seat",
    "--player",
    "player",
    cls=Renamed,
    default=None,
    help="Show only what this seat may see (north, south; other games: their seats).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the table: a position file (Battle Line), else {game, actions, to_act, "
    "result, view}.",
)
def show(file: str, turn: int | None, step: int | None, player: str | None, as_json: bool) -> None:
    """Draw the table of a Battle Line POSITION.json, or of a game record of any game
    (at --turn N for Battle Line, --step N for the others; the end by default).

    Exit 0 drawn, 2 for bad input (a --turn or --step past the record's end, a file show
    does not draw)."""
    text = read_text(file)
    if _is_position(text):
        if turn is not None or step is not None:
            raise InputError("--turn and --step go with a game record, not a position")
        info = _position_game(text, file)
        assert info.read_position is not None
        state = info.read_position(file)
        steps = None
    else:
        fmt = detect(text, file)
        whole = fmt.replay(text)
        by_turns = "turns" in whole.facts
        if turn is not None and not by_turns:
            raise InputError(
                f"--turn counts Battle Line's turns; a {whole.game.title} record is shown "
                f"after --step N actions"
            )
        if step is not None and by_turns:
            raise InputError("--step counts the other games' actions; give --turn N")
        upto = turn if turn is not None else step
        last = whole.facts["turns"] if by_turns else whole.facts["actions"]
        if upto is not None and upto > last:
            unit = "turns 1" if by_turns else "actions 0"
            raise InputError(f"--{'turn' if by_turns else 'step'} {upto}: {file} has {unit}-{last}")
        report = whole if upto is None else fmt.replay(text, upto=upto)
        info, state = report.game, report.state
        steps = report.facts.get("actions")
        if report.problem is not None:
            p = report.problem
            click.secho(
                f"(the record stops being sound at {p.where}, line {p.line}: {p.detail})",
                fg="red",
                err=True,
            )
    viewer = None if player is None else info.seat_index(player)
    if as_json:
        if info.dump_position is not None:
            click.echo(info.dump_position(state, viewer), nl=False)
            return
        who = state.current_player()
        emit_json(
            {
                "game": info.name,
                "actions": steps,
                "to_act": "chance" if who == CHANCE else info.seats[who] if who >= 0 else None,
                "result": result_of(info, state),
                "view": state.information_state_string(viewer)
                if viewer is not None
                else state.serialize(),
            }
        )
        return
    Console(highlight=False).print(info.render(state, viewer))


def _position_game(text: str, source: str) -> GameInfo:
    """The game a position file belongs to: its ``"game"`` field, else Battle Line (the
    one game whose positions show draws); anything else is named as bad input."""
    with_positions = [g for g in all_games() if g.read_position is not None]
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    named = data.get("game") if isinstance(data, dict) else None
    for g in with_positions:
        if g.name == named:
            return g
    if named is not None:
        raise InputError(
            f"{source}: show cannot draw a {named!r} position ({SHOWN}; the other games' "
            f"position files are read by their ask commands)"
        )
    if not isinstance(data, dict) or "flags" not in data:
        raise InputError(f"{source}: not a Battle Line position ({SHOWN})")
    return with_positions[0]


@click.command()
@click.argument("what")
@click.option("--game", default=DEFAULT_GAME, show_default=True, help="Whose files.")
def schema(what: str, game: str) -> None:
    """Print the JSON Schema of one of the game's files (Battle Line: position,
    certificate)."""
    info = get_game(game)
    if what not in info.schemas:
        known = ", ".join(info.schemas) or "none"
        raise InputError(f"{info.title} has no {what!r} schema (schemas: {known})")
    click.echo(json.dumps(info.schemas[what](), indent=2))


# -- play -------------------------------------------------------------------------------

HELP = """Type an action in the game's notation ('moves' lists them all), or:
  moves    list the legal actions
  legend   what the table's marks mean
  help     this text
  quit     stop"""


@click.command()
@click.option(
    "--bot",
    "bot_name",
    default=None,
    help="The opponent: one of the game's bots, or module:Class (default: Battle Line's "
    "heuristic; other games their strongest).",
)
@click.option(
    "--seat",
    "--player",
    "seat",
    cls=Renamed,
    default=None,
    help="Your seat (default the first: north, p1).",
)
@click.option(
    "--theme",
    type=click.Choice(["battleline", "nine-circles"]),
    default=None,
    help="The same as -o theme=... (Battle Line's names or Nine Circles').",
)
@click.option(
    "--claim-timing",
    type=click.Choice(["standard", "advanced"]),
    default=None,
    help="The same as -o claim_timing=...",
)
@click.option("--seed", type=int, default=None, help="Seed for chance and the bot.")
@bot_options
@log_options("every claim")
@game_options
def play(
    bot_name: str | None,
    seat: str | None,
    theme: str | None,
    claim_timing: str | None,
    seed: int | None,
    budget: float | None,
    iterations: int | None,
    log_path: str | None,
    key: str | None,
    game: str,
    option_pairs: tuple[str, ...],
    cards: str | None,
) -> None:
    """Play a game against a bot in the terminal (Battle Line unless --game)."""
    seed = random.randrange(1 << 30) if seed is None else seed
    info, options = resolve(game, option_pairs, cards, theme=theme, claim_timing=claim_timing)
    if log_path is not None and not info.logs_claims:
        raise InputError(f"--log: {info.title} decides no claims, so there is nothing to log")
    human = info.seat_index(seat or info.seats[0])
    name = bot_name or info.play_bot or list(info.bots)[-1]
    bot = info.make_bot(name, seed + 1, **bot_settings(budget, iterations))
    setup = Setup(log=open_log(log_path, key), game_id=f"play-{seed}")
    state = info.start(options, setup)
    _play_human(info, state, bot, name, human, seed)


CHOICES_LISTED = 6
"""``play``: up to this many choices are listed whole in a follow-up's prompt."""


def follow_up(state: GameState[Any]) -> str:
    """What the seat to act must do now, when its own action left it to act again (a draw
    after a play, a return after a Scout, a weapon after a strategy): said from the
    engine's legal actions in their notation, so no game's rules are repeated here
    (``Still your move: 'draw troop' or 'draw tactics'.``). More than
    :data:`CHOICES_LISTED` choices are counted, the first few shown."""
    quoted = [f"'{state.action_to_string(a)}'" for a in state.legal_actions()]
    lead = "Still your move"
    if len(quoted) == 1:
        return f"{lead}: {quoted[0]}."
    if len(quoted) <= CHOICES_LISTED:
        return f"{lead}: {', '.join(quoted[:-1])} or {quoted[-1]}."
    shown = ", ".join(quoted[:3])
    return f"{lead}: one of {len(quoted)} actions, such as {shown} ('moves' lists them all)."


def _play_human(
    info: GameInfo, state: GameState[Any], bot: Any, bot_name: str, human: int, seed: int
) -> None:
    """A human against a bot in the terminal, one line at a time."""
    rng = random.Random(seed)
    console = Console(highlight=False)
    click.echo(
        f"{info.title} against the {bot_name} bot; you are {info.seats[human]}. Seed {seed}. "
        "Type 'help' for help, 'legend' for the table's marks."
    )
    if info.legend:
        click.echo(info.legend)
    shown = -1
    steps = 0
    again = False  # the human's own action left him to act: say what comes next
    while not state.is_terminal():
        who = state.current_player()
        if who == CHANCE or who != human:
            again = again and who == CHANCE  # chance between two of his steps (a Scout's draws)
            action = sample_chance(state, rng) if who == CHANCE else bot.step(state)
            # What the seat may see is judged before the action changes the state.
            told = state.public_action_string(action, human)
            state.apply_action(action)
            steps += 1
            said = info.narrate(state, action, human) if info.narrate is not None else None
            if said is not None:
                click.echo(said)
            elif told is not None:
                click.echo(f"{'chance' if who == CHANCE else info.seats[who]}: {told}")
            continue
        if shown != steps:
            console.print(info.render(state, human))
            shown = steps
            if again:
                click.echo(follow_up(state))
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
        if line.lower() == "legend":
            click.echo(info.legend or "This game's table has no marks to explain.")
            continue
        if line.lower() in ("moves", "legal"):
            click.echo(" | ".join(state.action_to_string(a) for a in state.legal_actions()))
            continue
        try:
            if info.human_input is not None:
                actions, answer = info.human_input(state, line)
            else:
                actions, answer = [state.parse_action(line)], None
            if answer is not None:
                click.echo(answer)
            for action in actions:
                state.apply_action(action)
                steps += 1
                again = True
                said = info.narrate(state, action, human) if info.narrate is not None else None
                if said is not None:
                    click.echo(said)
        except (InputError, IllegalActionError) as e:
            click.echo(f"Not allowed: {e}. Try again ('moves' lists what you can do).")
    console.print(info.render(state, None))
    result = result_of(info, state)
    click.echo(f"Game over: {'a draw' if result == 'draw' else result + ' wins'}.")


COMMANDS: tuple[click.Command, ...] = (selfplay, tournament, play, replay, show, schema)
