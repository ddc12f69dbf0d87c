"""Battle Line game commands: ``replay``, ``show``, ``schema``."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from battlejudge.cli import games as generic
from battlejudge.cli.common import EXIT_NO, EXIT_OK, emit_json
from battlejudge.engines.battleline import position as positions
from battlejudge.engines.battleline.record import GameRecord
from battlejudge.engines.battleline.record import replay as replay_record
from battlejudge.engines.battleline.render import render
from battlejudge.engines.battleline.state import PLAYERS, BattleLineState
from battlejudge.engines.records import is_generic_record
from battlejudge.proofs.battleline.certificate import CertificateFile
from battlejudge.solver.errors import InputError


def read_record(path: str) -> GameRecord:
    """Read a record file (``-`` for standard input)."""
    if path == "-":
        with click.open_file("-", encoding="utf-8") as stdin:
            return GameRecord.loads(stdin.read())
    return GameRecord.loads(Path(path).read_text(encoding="utf-8"))


def generic_record(path: str) -> str | None:
    """The text of a record of another game (not a .blg), else None."""
    from battlejudge.engines.records import is_generic_record

    if path.endswith(".blg"):
        return None
    text = generic.read_text(path)
    return text if is_generic_record(text) else None


def is_record(path: str) -> bool:
    if path.endswith(".blg"):
        return True
    head = Path(path).read_text(encoding="utf-8").lstrip()[:1]
    return head in ("[", "#") or head.isdigit()


@click.command()
@click.argument("record", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--json", "as_json", is_flag=True)
def replay(record: str, as_json: bool) -> None:
    """Replay a game RECORD (.blg, or - for stdin), re-adjudicating every claim with a
    fresh proof. Records of the other games (.bpg, .lbg, .fdg) replay every action.

    Exit 0 if the record is sound, 1 at the first illegal move or unjustified claim
    (named with its turn and line), 2 if it cannot be parsed.
    """
    if record == "-":
        text = generic.read_text("-")
        if is_generic_record(text):
            generic.replay_record(text, as_json)
        rec = GameRecord.loads(text)
    else:
        other = generic_record(record)
        if other is not None:
            generic.replay_record(other, as_json)
        rec = read_record(record)
    report = replay_record(rec)
    state = report.state
    result = {0: "north", 1: "south", 2: "draw"}.get(state.winner) if state.is_terminal() else None
    problem = report.problem
    if as_json:
        emit_json(
            {
                "sound": report.sound,
                "turns": len(rec.turns),
                "claims": report.claims,
                "result": result,
                "problem": None if problem is None else dataclasses.asdict(problem),
            }
        )
    elif problem is None:
        click.secho(
            f"SOUND: {len(rec.turns)} turns replayed, {report.claims} claims re-proved "
            f"and verified; result {result or 'unfinished'}.",
            fg="green",
        )
    else:
        kind = problem.kind.replace("-", " ")
        click.secho(
            f"UNSOUND at turn {problem.turn} (line {problem.line}): {kind}: {problem.detail}",
            fg="red",
        )
    raise click.exceptions.Exit(EXIT_OK if report.sound else EXIT_NO)


@click.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--turn",
    type=click.IntRange(min=1),
    default=None,
    help="For a record: the table at the start of this turn.",
)
@click.option(
    "--player",
    default=None,
    help="Show only what this player may see (north, south; other games: their seats).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the table as a position file.")
def show(file: str, turn: int | None, player: str | None, as_json: bool) -> None:
    """Draw the table of a POSITION.json or of a GAME record (at ``--turn N``; for the
    other games' records, after N actions)."""
    other = generic_record(file)
    if other is not None:
        generic.show_record(other, turn, player, as_json)
        return
    state: BattleLineState
    if is_record(file):
        report = replay_record(read_record(file), upto_turn=turn)
        state = report.state
        if report.problem is not None:
            click.secho(
                f"(the record stops being sound at turn {report.problem.turn}: "
                f"{report.problem.detail})",
                fg="red",
                err=True,
            )
    else:
        if turn is not None:
            raise click.UsageError("--turn goes with a game record, not a position")
        state = positions.read_state(file)
    if player is not None and player not in PLAYERS:
        raise InputError(f"Battle Line has no player {player!r} (north, south)")
    viewer = None if player is None else PLAYERS.index(player)
    if as_json:
        pos = positions.from_state(state, hidden=viewer is not None)
        if viewer is not None:  # his own hand only; no decks
            own = [state.naming.card(c) for c in state.hands[viewer]]
            pos.hands = positions.PerPlayerCards(**{PLAYERS[viewer]: own})
        click.echo(positions.dumps(pos), nl=False)
        return
    Console(highlight=False).print(render(state, viewer))


@click.command()
@click.argument("what", type=click.Choice(["position", "certificate"]))
def schema(what: str) -> None:
    """Print the JSON Schema of position files or certificate files."""
    model: Any = positions.PositionFile if what == "position" else CertificateFile
    click.echo(json.dumps(model.model_json_schema(), indent=2))


COMMANDS: tuple[click.Command, ...] = (replay, show, schema)
