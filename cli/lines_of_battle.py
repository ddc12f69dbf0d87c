"""``battlejudge lines-of-battle``: exact odds, exposure and best attack for a Lines of
Battle position (``ask odds|exposure|best-attack POSITION.json``), and the position
file's JSON Schema (``schema``).

Every plan the solver returns is replayed by the engine, which recomputes its value;
the answer says so (``replayed``). Exit codes: 0 answered, 2 bad input, 3 a limit
stopped the search before the plan was proved best (the best plan found is shown, marked
unproved). ``--deterministic-time`` bounds CP-SAT by its own count of work instead of the
clock, so the answer does not depend on the machine's speed or load (what tests use).
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import click

from battlejudge.cli.common import EXIT_UNDECIDED, cp_sat_limit_options, emit_json, fail, wall_limit
from battlejudge.engines.lines_of_battle.actions import to_string
from battlejudge.engines.lines_of_battle.plans import plan_actions, replay_plan
from battlejudge.engines.lines_of_battle.state import LinesOfBattleState
from battlejudge.solver.errors import BattlejudgeError
from battlejudge.solver.lines_of_battle.core import (
    ASPECT_NAMES,
    FACING_NAMES,
    Board,
    aspect,
    kill_probability,
)
from battlejudge.solver.lines_of_battle.odds import describe_attack, phase_distribution
from battlejudge.solver.lines_of_battle.plan import Plan, best_attack, exposure
from battlejudge.solver.lines_of_battle.position import (
    SEATS,
    Position,
    load_question,
    schema,
)


def _frac(p: Fraction) -> str:
    return f"{p.numerator}/{p.denominator}" if p.denominator != 1 else str(p.numerator)


def plan_json(plan: Plan, board: Board) -> dict[str, Any]:
    """The plan as JSON with square names: the mover, swaps, moves with their paths, facings, and
    attacks with their exact kill probabilities."""
    n = board.name
    return {
        "mover": SEATS[plan.mover],
        "swaps": [[n(a), n(b)] for a, b in plan.swaps],
        "moves": [
            {"from": n(m.start), "to": n(m.end), "path": [n(q) for q in m.path]} for m in plan.moves
        ],
        "faces": [{"at": n(sq), "facing": FACING_NAMES[f]} for sq, f in plan.faces],
        "attacks": [
            {
                "attacker": n(a.attacker),
                "target": n(a.target),
                "aspect": ASPECT_NAMES[a.aspect],
                "probability": _frac(a.probability),
            }
            for a in plan.attacks
        ],
        "expected": _frac(plan.expected),
        "exposed": [n(sq) for sq in plan.exposed],
        "actions": [to_string(a, board) for a in plan_actions(plan)],
        "optimal": plan.optimal,
    }


def _replay(pos: Position, plan: Plan) -> dict[str, Any]:
    """Replay the plan with the engine; a value that differs from the solver's is a bug
    worth stopping for."""
    state = LinesOfBattleState.from_position(pos)
    expected, certain = replay_plan(state, plan)
    if expected != plan.expected:
        raise BattlejudgeError(
            f"internal error: the engine values the plan at {expected}, the solver at "
            f"{plan.expected}"
        )
    return {"expected": _frac(expected), "certain": certain}


def _plan_lines(plan: Plan, board: Board) -> list[str]:
    out = []
    for a, b in plan.swaps:
        out.append(f"  swap {board.name(a)} {board.name(b)}")
    for m in plan.moves:
        out.append(f"  move {board.name(m.start)}-{board.name(m.end)}")
    for sq, f in plan.faces:
        out.append(f"  face {board.name(sq)} {FACING_NAMES[f]}")
    for at in plan.attacks:
        out.append(
            f"  attack {board.name(at.attacker)}x{board.name(at.target)} "
            f"({ASPECT_NAMES[at.aspect]}, {_frac(at.probability)})"
        )
    return out or ["  (nothing to do)"]


@click.group("lines-of-battle")
def group() -> None:
    """Lines of Battle questions: exact odds, exposure, best attack."""


@group.group("ask")
def ask() -> None:
    """Ask a question about a position file (see `lines-of-battle schema`)."""


DEFAULT_TIME_LIMIT = 20.0
_limits = cp_sat_limit_options(DEFAULT_TIME_LIMIT, "Seconds CP-SAT may search")


def _wall(time_limit: float | None, deterministic_time: float | None) -> float | None:
    return wall_limit(DEFAULT_TIME_LIMIT, time_limit, deterministic_time)


@ask.command("odds")
@click.argument("position", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
def odds_cmd(position: str, as_json: bool) -> None:
    """The exact chance each planned attack ("attacks" in the file, in order) destroys
    its target, and the distribution of the number of units destroyed."""
    q = load_question(position)
    pos = q.position
    if not q.attacks:
        fail(f"{position}: attacks: odds needs at least one planned attack")
    dist = phase_distribution(pos, q.attacks)
    describe_attack(pos, *q.attacks[0])  # the first attack must be possible now
    rows = []
    for a, t in q.attacks:
        au, tu = pos.at(a), pos.at(t)
        if tu is None:
            fail(f"{position}: attacks: no unit on {pos.board.name(t)}")
        assert au is not None
        how = aspect(au.facing, tu.facing)
        p = kill_probability(au.kind, tu.kind, how)
        rows.append(
            {
                "attacker": pos.board.name(a),
                "target": pos.board.name(t),
                "aspect": ASPECT_NAMES[how],
                "probability": _frac(p),
            }
        )
    expected = sum((k * p for k, p in enumerate(dist)), Fraction(0))
    if as_json:
        emit_json(
            {
                "attacks": rows,
                "distribution": [_frac(p) for p in dist],
                "expected": _frac(expected),
            }
        )
        return
    for r in rows:
        click.echo(
            f"{r['attacker']}x{r['target']}: {r['aspect']} attack, destroys with "
            f"probability {r['probability']} (when made)"
        )
    click.echo(f"Units destroyed by the {len(rows)} attack(s) in order:")
    for k, p in enumerate(dist):
        click.echo(f"  {k} destroyed: {_frac(p)}  ({float(p):.4f})")
    click.echo(f"Expected: {_frac(expected)} ({float(expected):.4f})")


@ask.command("exposure")
@click.argument("position", type=click.Path(dir_okay=False))
@_limits
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
def exposure_cmd(
    position: str, time_limit: float | None, deterministic_time: float | None, as_json: bool
) -> None:
    """How many of a player's units ("player", by default the one not to move) the
    opponent can destroy for certain (side and rear attacks) on his next turn."""
    q = load_question(position)
    pos = q.position
    ans = exposure(
        pos,
        q.examined,
        time_limit=_wall(time_limit, deterministic_time),
        deterministic_time=deterministic_time,
    )
    b = pos.board
    replayed = _replay(Position(b, 1 - q.examined, pos.units), ans.plan)
    if replayed["certain"] != ans.count:
        raise BattlejudgeError("internal error: the engine replay kills a different number")
    if as_json:
        emit_json(
            {
                "player": SEATS[ans.player],
                "count": ans.count,
                "plan": plan_json(ans.plan, b),
                "threatened": [b.name(s) for s in ans.threatened],
                "safe": [b.name(s) for s in ans.safe],
                "optimal": ans.optimal,
                "replayed": replayed,
            }
        )
    else:
        opp = SEATS[1 - ans.player]
        click.echo(
            f"{opp} can destroy {ans.count} unit(s) of {SEATS[ans.player]} for certain "
            "next turn" + ("" if ans.optimal else " (at least; a limit was hit)") + ":"
        )
        click.echo("\n".join(_plan_lines(ans.plan, b)))
        click.echo(f"Threatened: {' '.join(b.name(s) for s in ans.threatened) or 'none'}")
        click.echo(f"Safe: {' '.join(b.name(s) for s in ans.safe) or 'none'}")
        click.echo(f"Replayed by the engine: {replayed['certain']} destroyed for certain.")
    if not ans.optimal:
        raise click.exceptions.Exit(EXIT_UNDECIDED)


@ask.command("best-attack")
@click.argument("position", type=click.Path(dir_okay=False))
@_limits
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
def best_attack_cmd(
    position: str, time_limit: float | None, deterministic_time: float | None, as_json: bool
) -> None:
    """The movement and attack plan for the player to move with the most expected enemy
    units destroyed this turn (ties: fewest own units left exposed)."""
    q = load_question(position)
    pos = q.position
    plan = best_attack(
        pos,
        time_limit=_wall(time_limit, deterministic_time),
        deterministic_time=deterministic_time,
    )
    replayed = _replay(pos, plan)
    b = pos.board
    if as_json:
        emit_json({"plan": plan_json(plan, b), "replayed": replayed})
    else:
        click.echo(
            f"Best attack for {SEATS[plan.mover]}: expected {_frac(plan.expected)} "
            f"({float(plan.expected):.4f}) unit(s) destroyed"
            + ("" if plan.optimal else " (best found; a limit was hit)")
        )
        click.echo("\n".join(_plan_lines(plan, b)))
        click.echo(f"Left exposed: {' '.join(b.name(s) for s in plan.exposed) or 'none'}")
        click.echo(f"Replayed by the engine: expected {replayed['expected']}.")
    if not plan.optimal:
        raise click.exceptions.Exit(EXIT_UNDECIDED)


@group.command("schema")
@click.option("--json", "as_json", is_flag=True, help="Accepted for symmetry: it is JSON.")
def schema_cmd(as_json: bool) -> None:
    """Print the JSON Schema of position files."""
    click.echo(json.dumps(schema(), indent=2))


COMMANDS: tuple[click.Command, ...] = (group,)
