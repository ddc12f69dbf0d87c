"""Drawing the table as a player reads it (rich): north's cards above the flags,
south's below, environment cards and claimed flags in the middle row."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from battlejudge.engines.battleline.cards import Theme, card_name, display_name
from battlejudge.engines.battleline.state import FLAGS, PLAYERS, BattleLineState
from battlejudge.solver.battleline.cards import TROOP_COUNT

_STYLE = ("red", "dark_orange", "yellow", "green", "blue", "magenta")


def card_text(code: int, theme: Theme = "battleline") -> Text:
    """Card ``code`` as rich text: a troop in its color, a tactic in white on grey."""
    if code < TROOP_COUNT:
        return Text(display_name(code), style=f"bold {_STYLE[code // 10]}")
    return Text(card_name(code, theme), style="bold white on grey23")


def render(state: BattleLineState, viewer: int | None = None) -> RenderableType:
    """The table; hands are shown for ``viewer`` (or both when None), decks as counts."""
    theme = state.config.theme
    word = state.naming.flag.capitalize()
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False, padding=(0, 0))
    # The theme's word heads the row labels and the flags are numbered: it fits 80 columns.
    table.add_column(word, style="bold", min_width=7)
    for i in range(FLAGS):
        table.add_column(
            str(i + 1),
            justify="center",
            min_width=8,
            max_width=8,
            no_wrap=True,
            overflow="ellipsis",
        )
    depth = max([3] + [len(f.sides[p]) for f in state.flags for p in (0, 1)])

    def side_rows(player: int, top_down: bool) -> list[list[RenderableType]]:
        rows = []
        for slot in range(depth):
            row: list[RenderableType] = [PLAYERS[player] if slot == 0 else ""]
            for f in state.flags:
                cards = f.sides[player]
                row.append(card_text(cards[slot].card, theme) if slot < len(cards) else "")
            rows.append(row)
        return list(reversed(rows)) if top_down else rows

    for row in side_rows(0, top_down=True):
        table.add_row(*row)
    middle: list[RenderableType] = [""]
    for f in state.flags:
        marks = Text()
        if f.claimed_by >= 0:
            marks.append("▲" if f.claimed_by == 0 else "▼", style="bold cyan")
        for env in f.environment:
            marks.append(" " + display_name(env.card, theme)[:4], style="italic")
        middle.append(marks or Text("·", style="dim"))
    table.add_row(*middle, style="on grey11")
    for row in side_rows(1, top_down=False):
        table.add_row(*row)
    parts: list[RenderableType] = [
        Text(
            f"Battle Line{' (Nine Circles)' if theme == 'nine-circles' else ''}: "
            f"turn {state.turn}, {PLAYERS[state.to_move]} to move",
            style="bold",
        ),
        table,
    ]
    if state.is_terminal():
        result = {0: "north wins", 1: "south wins"}.get(state.winner, "a draw")
        parts.append(Text(f"Game over: {result}.", style="bold"))
    for p in (0, 1):
        held = ", ".join(str(n) for n in state.flags_held(p)) or "none"
        line = Text(f"{PLAYERS[p]}: holds {held}; tactics played {state.tactics_played[p]}")
        # A list is shown only with something in it: "discards ;" told a newcomer nothing.
        _card_field(line, "discards", state.discards[p], theme)
        if viewer is None or viewer == p:
            _card_field(line, "hand", sorted(state.hands[p]), theme)
        else:
            line.append(f"; hand {len(state.hands[p])} cards")
        parts.append(line)
    parts.append(Text(f"decks: {state.deck_size(0)} troops, {state.deck_size(1)} tactics"))
    return Group(*parts)


def _card_field(line: Text, label: str, cards: Sequence[int], theme: Theme) -> None:
    """Append ``; label C1 C2 ...`` to ``line``, or nothing when ``cards`` is empty."""
    if not cards:
        return
    line.append(f"; {label}")
    for c in cards:
        line.append(" ").append_text(card_text(c, theme))
