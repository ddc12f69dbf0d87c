"""Force Duel commands: ``force-duel ask force|sure-win POSITION.json`` and
``force-duel schema``.

Exit codes: 0 answered (``sure-win``: a sure win exists), 1 ``sure-win`` found none,
2 bad input (position, card set).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import click

from battlejudge.cli.common import EXIT_NO, BattlejudgeGroup, emit_json
from battlejudge.engines.force_duel.cards import HOUSE, card_set_schema, load_book, normal_name
from battlejudge.engines.force_duel.position import (
    Battle,
    position_schema,
    read_position,
    replay_counter,
)
from battlejudge.solver.force_duel import solve_force, sure_win


@click.group("force-duel", cls=BattlejudgeGroup)
def force_duel() -> None:
    """Force Duel: ask which Force card to show, and print the card-set schema."""


def _battle(position: str, cards: str | None) -> Battle:
    pos = read_position(position)
    source = cards if cards is not None else pos.cards
    if cards is None and normal_name(source) != HOUSE and not Path(source).is_absolute():
        # A card set named in a position file is found next to that file.
        if position != "-":
            source = str(Path(position).parent / source)
    return Battle(pos, load_book(source))


def _pct(p: Fraction) -> str:
    return f"{p} ({float(p):.1%})"


@force_duel.command("ask")
@click.argument("question", type=click.Choice(["force", "sure-win"]))
@click.argument("position", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--cards",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Card-set TOML file (default: the position's 'cards', else the house set).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
def ask(question: str, position: str, cards: str | None, as_json: bool) -> None:
    """Answer a Force question about POSITION.json (the moment both players choose a
    Force card): 'force' gives the optimal mixed Force choice and the win probability
    it guarantees; 'sure-win' says whether some Force card wins whatever happens, or
    shows what stops each one."""
    battle = _battle(position, cards)
    q = battle.question()
    book = battle.book
    head: dict[str, Any] = {
        "question": question,
        "player": battle.pos.player,
        "cards": book.set.name,
        "weapons": {"p1": book.weapons[battle.weapons[0]], "p2": book.weapons[battle.weapons[1]]},
        "mine": [c.label for c in q.mine],
        "my_choices": list(q.me.choices),
        "their_choices": list(q.them.choices),
        "their_cards_left": q.pool_size,
    }
    if question == "force":
        answer = solve_force(q)
        if as_json:
            emit_json(
                {
                    **head,
                    **answer.to_json(),
                    "pure": {str(k): str(answer.guarantee(k)) for k in q.me.choices},
                }
            )
            return
        _print_head(head)
        mix = ", ".join(f"Force {k}: {p}" for k, p in answer.strategy if p > 0)
        click.secho(f"Best Force choice: {mix}", bold=True)
        click.echo(f"Chance of winning this battle (guaranteed): {_pct(answer.value)}")
        theirs = ", ".join(f"Force {k}: {p}" for k, p in answer.opponent if p > 0)
        click.echo(f"The opponent's best reply: {theirs}")
        pay = answer.payoffs
        click.echo("Win probability (rows: your Force, columns: theirs):")
        click.echo("           " + "".join(f"{'their ' + str(j):>12}" for j in pay.cols))
        for i, row in zip(pay.rows, pay.win, strict=True):
            click.echo(f"  your {i}   " + "".join(f"{v!s:>12}" for v in row))
        click.echo(
            f"LP (OR-Tools GLOP): value {answer.lp_value:.6f}, agrees with the exact answer."
        )
        return
    result = sure_win(q)
    replays = [replay_counter(battle, c) for c in result.counters]
    if as_json:
        out = {**head, **result.to_json()}
        out["counters"] = [
            {
                **c.to_json(),
                "sentence": c.sentence(),
                "replayed": {"my_total": mine, "their_total": theirs},
            }
            for c, (mine, theirs, _) in zip(result.counters, replays, strict=True)
        ]
        emit_json(out)
    else:
        _print_head(head)
        if result.choice is not None:
            also = [k for k in result.wins if k != result.choice]
            tail = f" (Force {', '.join(map(str, also))} too)" if also else ""
            click.secho(
                f"VALID: Force {result.choice} wins this battle whatever the opponent does{tail}.",
                fg="green",
                bold=True,
            )
        else:
            click.secho("INVALID: no Force card is a sure win.", fg="red", bold=True)
        for c in result.counters:
            click.echo(f"  {c.sentence()} (replayed by the rules engine)")
    if result.choice is None:
        raise click.exceptions.Exit(EXIT_NO)


def _print_head(head: dict[str, Any]) -> None:
    w = head["weapons"]
    click.echo(
        f"{head['player']} asks ({head['cards']} cards): p1 {w['p1']}, p2 {w['p2']}; "
        f"your next cards {' '.join(head['mine'])}; you may show Force "
        f"{', '.join(map(str, head['my_choices']))}, the opponent Force "
        f"{', '.join(map(str, head['their_choices']))} ({head['their_cards_left']} cards left)."
    )


@force_duel.command("schema")
@click.argument("what", type=click.Choice(["cards", "position"]), default="cards")
def schema(what: str) -> None:
    """Print the JSON Schema of card-set files (TOML of the same shape), or of
    position files."""
    click.echo(json.dumps(card_set_schema() if what == "cards" else position_schema(), indent=2))


COMMANDS: tuple[click.Command, ...] = (force_duel,)
