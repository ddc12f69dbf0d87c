"""Drawing the board with rich: each unit as its letter and an arrow for its facing
(``P↑`` a spearman facing north), p1 in blue and p2 in red, rank 10 at the top; a
reloading archer is dimmed, a unit that has spent its turn is underlined."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from battlejudge.engines.lines_of_battle.actions import SEATS
from battlejudge.engines.lines_of_battle.state import (
    BUSY,
    DRAW,
    OVER,
    PHASE_NAMES,
    RELOADING,
    LinesOfBattleState,
)
from battlejudge.solver.lines_of_battle.core import KIND_LETTERS, KIND_NAMES

ARROWS = ("↑", "→", "↓", "←")
COLORS = ("bold bright_blue", "bold bright_red")


def unit_text(owner: int, kind: int, facing: int, flags: int = 0) -> Text:
    """A unit as rich text: its kind letter and facing arrow in its owner's color, dimmed while
    reloading, underlined when it has moved, turned or swapped this turn."""
    style = COLORS[owner]
    if flags & RELOADING:
        style += " dim"
    if flags & BUSY:
        style += " underline"
    return Text(f"{KIND_LETTERS[kind]}{ARROWS[facing]}", style=style)


def render(state: LinesOfBattleState, viewer: int | None = None) -> RenderableType:
    """The whole board (everything is public, so ``viewer`` changes nothing)."""
    b = state.board
    table = Table(box=None, show_header=True, pad_edge=False, padding=(0, 1))
    table.add_column("", justify="right", style="dim")
    for c in range(b.width):
        table.add_column(chr(65 + c), justify="center", min_width=2)
    for row in reversed(range(b.height)):
        cells: list[RenderableType] = [str(row + 1)]
        for col in range(b.width):
            u = state.cells[row * b.width + col]
            if u is None:
                cells.append(Text("·", style="dim"))
            else:
                cells.append(unit_text(u.owner, u.kind, u.facing, u.flags))
        table.add_row(*cells)
    if state.phase == OVER:
        result = "a draw (turn limit)" if state.winner == DRAW else f"{SEATS[state.winner]} wins"
        status = f"Game over: {result}."
    else:
        who = "chance" if state.current_player() < 0 else SEATS[state.to_move]
        army = ", Army Movement" if state.army else ""
        status = (
            f"turn {state.turn}/{state.turn_limit}, {PHASE_NAMES[state.phase]} phase{army}, "
            f"{who} to act"
        )
    title = "Lines of Battle" + (" (Commander)" if state.variant == "commander" else "")
    counts = Text()
    for p in (0, 1):
        units = state.units_of(p)
        counts.append(f"{SEATS[p]}: {len(units)} units  ", style=COLORS[p])
    legend = Text(
        "  ".join(f"{KIND_LETTERS[k]} {KIND_NAMES[k]}" for k in range(5)) + "  ↑ facing",
        style="dim",
    )
    return Group(Text(f"{title}: {status}", style="bold"), table, counts, legend)
