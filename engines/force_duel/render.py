"""The Force Duel table as a rich renderable, as one player (or everyone) sees it."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from battlejudge.engines.force_duel.state import (
    COLORS,
    FORCE,
    OVER,
    PHASES,
    SEATS,
    BattleReport,
    ForceDuelState,
)
from battlejudge.engines.game import CHANCE

SHOWN = 6
"""How many of his next cards a player's view shows (the seed: "the first 5-6")."""


def render(state: ForceDuelState, viewer: int | None = None) -> Group:
    """The table: units and gravestones, decks (the viewer's own in order), hands,
    the cards in play this battle, and the last battle; ``viewer`` None shows all."""
    book = state.book
    table = Table(title=f"Force Duel ({book.set.name}) battle {state.battles + 1}")
    table.add_column("")
    for p in (0, 1):
        table.add_column(f"{SEATS[p]} ({COLORS[p]})", style="bold" if p == viewer else None)

    def see(p: int) -> bool:
        return viewer is None or viewer == p

    both_down = None not in state.strategy

    def row(name: str, cells: list[str]) -> None:
        if any(cells):  # a row with nothing in it is left out, not drawn as an empty label
            table.add_row(name, *cells)

    row("units", [f"{'U' * state.alive[p]}{'+' * state.graves[p]}" for p in (0, 1)])
    row("deck", [f"{len(state.decks[p])} cards" for p in (0, 1)])
    row(
        "next cards",
        [
            " ".join(book.labels[k] for k in state.decks[p][:SHOWN]) if see(p) else "(hidden)"
            for p in (0, 1)
        ],
    )
    row(
        "hand",
        [
            ", ".join(book.strategy[s].name for s in state.hands[p])
            if see(p)
            else f"{len(state.hands[p])} cards"
            for p in (0, 1)
        ],
    )
    row("out", [f"{sum(state.out[p])} cards" for p in (0, 1)])
    row("attacker", ["attacker" if state.attacker == p else "" for p in (0, 1)])
    row(
        "weapon",
        ["-" if (w := state.weapons[p]) is None else book.weapons[w] for p in (0, 1)],
    )
    cells = []
    for p in (0, 1):
        s = state.strategy[p]
        cells.append(
            "-" if s is None else (book.strategy[s].name if see(p) or both_down else "(chosen)")
        )
    row("strategy", cells)
    row(
        "force",
        [
            "-" if (f := state.forces[p]) is None else (str(f) if see(p) else "(chosen)")
            for p in (0, 1)
        ],
    )
    row(
        "unit cards",
        [
            " ".join(
                [book.labels[k] for o, k in state.in_play if o == p]
                + [f"({book.labels[k]} cancelled)" for o, k in state.cancelled if o == p]
            )
            for p in (0, 1)
        ],
    )
    parts: list[Table | Text] = [table]
    if state.last is not None:
        parts.append(Text(describe(state, state.last)))
    if state.phase == OVER:
        result = "a draw" if state.winner not in (0, 1) else f"{SEATS[state.winner or 0]} wins"
        parts.append(Text(f"Game over: {result}.", style="bold"))
    else:
        who = "chance" if state.current_player() == CHANCE else SEATS[state.actor]
        hint = ""
        if state.phase == FORCE and state.current_player() != CHANCE:
            choices = state.force_choices(state.actor)
            hint = " (Force " + ", ".join(str(c) for c in choices) + ")"
        parts.append(Text(f"{who} to act: {PHASES[state.phase]}{hint}"))
    return Group(*parts)


def describe(state: ForceDuelState, r: BattleReport) -> str:
    """One battle's result in a sentence or two."""
    book = state.book
    sides = []
    for p in (0, 1):
        cards = " ".join(book.labels[k] for k in r.cards[p])
        sides.append(
            f"{SEATS[p]} {book.weapons[r.weapons[p]]}, {book.strategy[r.strategy[p]].name}, "
            f"Force {r.forces[p]}: {cards} = {r.totals[p]}"
        )
    won = "nobody wins" if r.winner is None else f"{SEATS[r.winner]} wins"
    text = f"Battle {r.number}: " + "; ".join(sides) + f". {won}."
    for p in (0, 1):
        if r.lost[p]:
            text += f" {SEATS[p]} loses {r.lost[p]} unit(s)."
        if r.recovered[p]:
            text += f" {SEATS[p]} gets {r.recovered[p]} unit(s) back."
    for p in r.exhausted:
        text += f" {SEATS[p]} ran out of battle cards: decks reshuffled."
    return text
