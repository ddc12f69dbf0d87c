"""``battlejudge battleplan``: questions about the rest of a BattlePlan round.

``ask can-kill|can-score|threats POSITION.json ...`` answers with CP-SAT; every
``possible`` answer comes with a witness line that the engine replays here, and small
positions are also searched exhaustively with the engine (``cross_checked``). Exit codes:
0 possible (threats: answered), 1 impossible, 2 bad input, 3 undecided (a limit was hit).
``--deterministic-time`` bounds CP-SAT by its own count of work instead of the clock, so
the answer does not depend on the machine's speed or load (what tests use).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import click

from battlejudge.cli.common import EXIT_NO, Renamed, cp_sat_limit_options, emit_json, wall_limit
from battlejudge.engines.battleplan.position import (
    Goal,
    exhaustive,
    kill_goal,
    position_of,
    replay_witness,
    score_goal,
)
from battlejudge.engines.battleplan.state import BattlePlanState
from battlejudge.engines.battleplan.threats import BOUND
from battlejudge.solver.battleplan.answers import DEFAULT_TIME_LIMIT, Answer
from battlejudge.solver.battleplan.position import (
    SEATS,
    Position,
    PositionModel,
    parse_piece_label,
    piece_label,
    position_from_json,
    square_name,
)
from battlejudge.solver.errors import InputError, UndecidedError, VerificationError
from battlejudge.solver.json_input import parse_json

if importlib.util.find_spec("ortools") is None:
    # The questions need CP-SAT (the games extra); it is imported only when a question
    # does need it (about 0.3 s), so check that it is there without importing it.
    raise ModuleNotFoundError("No module named 'ortools'", name="ortools")

CROSS_CHECK_CARDS = 3
"""Positions with at most this many face-down cards are also searched exhaustively."""
CROSS_CHECK_NODES = 100_000


def load_position(path: str) -> Position:
    """Read a position file; :class:`InputError` says where it is malformed."""
    data = parse_json(Path(path).read_bytes(), path)
    try:
        return position_from_json(data)
    except InputError as e:
        raise InputError(f"{path}: {e}") from None


def _cross_check(pos: Position, goal: Goal) -> bool | None:
    """The exhaustive engine search's verdict, or None when the position is too big."""
    if pos.hidden_total(0) + pos.hidden_total(1) > CROSS_CHECK_CARDS:
        return None
    result = exhaustive(pos, goal, budget=CROSS_CHECK_NODES)
    return result.found if result.complete else None


def _report(pos: Position, answer: Answer, goal: Goal, as_json: bool, check: bool) -> None:
    if answer.verdict == "unknown":
        raise UndecidedError(f"{answer.question}: CP-SAT hit its limit")
    replayed = None
    detail = ""
    if answer.witness is not None:
        rep = replay_witness(pos, answer.witness, goal)
        replayed, detail = rep.ok, rep.detail
        if not rep.ok:
            raise VerificationError(f"{answer.question}: the witness does not replay: {detail}")
    oracle = _cross_check(pos, goal) if check else None
    agrees = None if oracle is None else oracle == (answer.verdict == "possible")
    if agrees is False:
        raise VerificationError(
            f"{answer.question}: cp-sat says {answer.verdict}, the exhaustive search disagrees"
        )
    if as_json:
        emit_json(
            {
                "question": answer.question,
                "verdict": answer.verdict,
                "method": answer.method,
                "cross_checked": agrees is True,
                "certified": False,
                "witness": None if answer.witness is None else answer.witness.to_json(),
                "replayed": replayed,
                "wall_s": round(answer.wall_s, 3),
            }
        )
    else:
        how = "cross-checked by exhaustive search" if agrees else "not cross-checked"
        click.echo(f"{answer.question}: {answer.verdict.upper()} (method: cp-sat, {how})")
        if answer.witness is not None:
            w = answer.witness.to_json()
            assumed = [f"{k} = {' '.join(v)}" for k, v in w["stacks"].items()]
            assumed += [f"{k} buff = {v}" for k, v in w["buffs"].items()]
            if assumed:
                click.echo("Assuming face down: " + "; ".join(assumed))
            click.echo("Witness line:")
            for line in w["line"]:
                click.echo(f"  {line}")
            click.echo(f"Engine replay: {detail}.")
        else:
            click.echo(
                "No line of play reaches it (CP-SAT proved its model infeasible; "
                "not a certified proof)."
            )
    if answer.verdict == "impossible":
        raise click.exceptions.Exit(EXIT_NO)


_limits = cp_sat_limit_options(DEFAULT_TIME_LIMIT, "Seconds CP-SAT may spend per solve")


def _wall(time_limit: float | None, deterministic_time: float | None) -> float | None:
    return wall_limit(DEFAULT_TIME_LIMIT, time_limit, deterministic_time)


_no_check = click.option(
    "--no-cross-check", is_flag=True, help="Skip the exhaustive search on small positions."
)
_json = click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")


@click.group()
def battleplan() -> None:
    """BattlePlan: questions about what the face-down stacks can still do this round."""


@battleplan.group()
def ask() -> None:
    """Ask about the rest of the round from a position file (see docs/battleplan.md)."""


@ask.command("can-kill")
@click.argument("position", type=click.Path(dir_okay=False))
@click.argument("piece")
@click.option(
    "--by",
    type=click.Choice(["any", "enemy"]),
    default="any",
    show_default=True,
    help="Count any kill (friendly fire too) or only an enemy's.",
)
@_limits
@_no_check
@_json
def can_kill_cmd(
    position: str,
    piece: str,
    by: str,
    time_limit: float | None,
    deterministic_time: float | None,
    no_cross_check: bool,
    as_json: bool,
) -> None:
    """Can PIECE (e.g. 'p2 rook') be killed before the round ends?"""
    from battlejudge.solver.battleplan.questions import can_kill

    pos = load_position(position)
    g = parse_piece_label(piece)
    answer = can_kill(
        pos,
        g,
        "enemy" if by == "enemy" else "any",
        _wall(time_limit, deterministic_time),
        deterministic_time=deterministic_time,
    )
    _report(pos, answer, kill_goal(g, by == "enemy"), as_json, not no_cross_check)


@ask.command("can-score")
@click.argument("position", type=click.Path(dir_okay=False))
@click.argument("player")
@_limits
@_no_check
@_json
def can_score_cmd(
    position: str,
    player: str,
    time_limit: float | None,
    deterministic_time: float | None,
    no_cross_check: bool,
    as_json: bool,
) -> None:
    """Can PLAYER (p1 or p2) win before the round ends?"""
    from battlejudge.solver.battleplan.questions import can_score

    pos = load_position(position)
    p = _seat(player)
    wall = _wall(time_limit, deterministic_time)
    answer = can_score(pos, p, wall, deterministic_time=deterministic_time)
    _report(pos, answer, score_goal(p), as_json, not no_cross_check)


@ask.command("threats")
@click.argument("position", type=click.Path(dir_okay=False))
@click.argument("player")
@click.option(
    "--method",
    type=click.Choice(["fast", "cp-sat"]),
    default="fast",
    show_default=True,
    help="fast: bounds and engine playouts, CP-SAT only for what they leave open; "
    "cp-sat: the CP-SAT model for everything (the same answer, much slower).",
)
@_limits
@_json
def threats_cmd(
    position: str,
    player: str,
    method: str,
    time_limit: float | None,
    deterministic_time: float | None,
    as_json: bool,
) -> None:
    """The squares each enemy piece of PLAYER could still reach this round, and which of
    PLAYER's pieces an enemy could kill (each with its witness, replayed)."""
    pos = load_position(position)
    p = _seat(player)
    wall = _wall(time_limit, deterministic_time)
    if method == "fast":
        from battlejudge.engines.battleplan.threats import threats

        result = threats(pos, p, wall, deterministic_time=deterministic_time)
    else:
        from battlejudge.solver.battleplan.questions import threats as cp_sat_threats

        result = cp_sat_threats(pos, p, wall, deterministic_time=deterministic_time)
    if not result.complete or any(a.verdict == "unknown" for a in result.exposed.values()):
        raise UndecidedError("threats: CP-SAT hit its limit")
    replays = {}
    for g, a in result.exposed.items():
        if a.witness is not None:
            rep = replay_witness(pos, a.witness, kill_goal(g, True))
            if not rep.ok:
                raise VerificationError(f"{a.question}: the witness does not replay: {rep.detail}")
            replays[g] = rep.detail
    if as_json:
        emit_json(
            {
                "player": SEATS[p],
                "method": result.method,
                "certified": False,
                "reach": {
                    piece_label(e): [square_name(q) for q in sqs] for e, sqs in result.reach.items()
                },
                "exposed": {
                    piece_label(g): {
                        "verdict": a.verdict,
                        "method": a.method,
                        "witness": None if a.witness is None else a.witness.to_json(),
                        "replayed": g in replays,
                    }
                    for g, a in result.exposed.items()
                },
            }
        )
        return
    click.echo(f"threats to {SEATS[p]} this round (method: {result.method}, not cross-checked)")
    for e, sqs in result.reach.items():
        click.echo(
            f"  {piece_label(e)} can reach {len(sqs)} squares: {' '.join(map(square_name, sqs))}"
        )
    for g, a in result.exposed.items():
        if a.witness is None:
            why = "no enemy can attack from next to it" if a.method == BOUND else a.method
            click.echo(f"  {piece_label(g)}: safe from enemy attacks this round ({why})")
        else:
            line = "; ".join(f"{SEATS[s]} {t}" for s, t in a.witness.line)
            click.echo(f"  {piece_label(g)}: EXPOSED, e.g. {line} ({replays[g]})")


@battleplan.command("position")
@click.argument("record", type=click.Path(dir_okay=False))
@click.option("--step", type=click.IntRange(min=0), required=True, help="Actions to replay.")
@click.option(
    "--seat",
    "--viewer",
    "viewer",
    cls=Renamed,
    type=click.Choice(["p1", "p2", "none"]),
    default="none",
    show_default=True,
    help="Whose face-down cards to include.",
)
def position_cmd(record: str, step: int, viewer: str) -> None:
    """Print the position file after STEP actions of a BattlePlan game record (at the
    start of a battle turn)."""
    from battlejudge.engines.records import GameRecord, replay

    rec = GameRecord.loads(Path(record).read_text(encoding="utf-8"))
    if rec.game != "battleplan":
        raise InputError(f"{record}: a {rec.game!r} record, not battleplan")
    report = replay(rec, upto=step)
    if report.problem is not None:
        raise InputError(f"{record}: line {report.problem.line}: {report.problem.detail}")
    state = report.state
    assert isinstance(state, BattlePlanState)
    who = None if viewer == "none" else SEATS.index(viewer)
    emit_json(position_of(state, who).to_json())


@battleplan.command("schema")
def schema_cmd() -> None:
    """Print the JSON Schema of BattlePlan position files."""
    emit_json(PositionModel.model_json_schema())


def _seat(text: str) -> int:
    t = text.strip().lower()
    if t not in SEATS:
        raise InputError(f"{text!r} is not a player (p1 or p2)")
    return SEATS.index(t)


COMMANDS: tuple[click.Command, ...] = (battleplan,)
