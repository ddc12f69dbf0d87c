"""Drawing the BattlePlan table with rich: the board (row 8 on top), then each piece's
die, stack and buff, the hands and what is being decided."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from battlejudge.engines.battleplan.board import (
    BUFF_NAMES,
    CARD_LETTERS,
    KINDS,
    OFF,
    SEATS,
    WIN_SQUARE,
)
from battlejudge.engines.battleplan.state import OVER, BattlePlanState

_STYLE = ("bold blue", "bold red")


def _cell(state: BattlePlanState, sq: int) -> Text:
    if sq in state.pos:
        g = state.pos.index(sq)
        p = g // 3
        label = KINDS[g % 3][0].upper() + str(p + 1)
        if state.carrier[p] == g:
            label += "*"
        if state.shield[g]:
            label = f"({label})"
        return Text(label, style=_STYLE[p])
    if sq == state.token:
        return Text("T", style="bold yellow")
    if sq in WIN_SQUARE:
        return Text("W", style="dim")
    return Text("·", style="dim")


def render(state: BattlePlanState, viewer: int | None = None) -> RenderableType:
    """The table as ``viewer`` sees it (None: everything): face-down cards of the other
    player show as ``?``, his unused buffs as ``buff ?`` and his hand as a count."""
    board = Table(box=None, show_header=True, padding=(0, 1), header_style="bold")
    board.add_column("")
    for c in "abcdefgh":
        board.add_column(c, justify="center", min_width=5)
    for row in range(7, -1, -1):
        board.add_row(str(row + 1), *[_cell(state, row * 8 + col) for col in range(8)])

    pieces = Table(box=None, show_header=True, padding=(0, 1), header_style="bold")
    for name in ("piece", "at", "die", "stack", "buff"):
        pieces.add_column(name)
    for g in range(6):
        p = g // 3
        see = viewer is None or viewer == p
        stack = state.stacks[g]
        cards = Text()
        for i, card in enumerate(stack):
            if i < state.revealed[g]:
                cards.append(CARD_LETTERS[card], style="dim")
            elif see:
                cards.append(CARD_LETTERS[card], style="bold")
            else:
                cards.append("?")
        buff = "" if state.buff[g] == OFF else (BUFF_NAMES[state.buff[g]] if see else "?")
        if state.pos[g] != OFF:
            at = "abcdefgh"[state.pos[g] % 8] + str(state.pos[g] // 8 + 1)
        else:
            at = "-" if state.round == 0 else "dead"
        pieces.add_row(
            Text(f"{SEATS[p]} {KINDS[g % 3]}", style=_STYLE[p]),
            at,
            str(state.assigned[g] or ""),
            cards,
            buff,
        )
    hands = []
    for p in (0, 1):
        if viewer is None or viewer == p:
            held = ", ".join(f"{n} {BUFF_NAMES[b]}" for b, n in enumerate(state.hand[p]) if n)
            hands.append(f"{SEATS[p]} hand: {held or 'empty'}")
        else:
            hands.append(f"{SEATS[p]} hand: {sum(state.hand[p])} buff(s)")
    if state.phase == OVER:
        status = (
            "game over: draw (round limit)"
            if state.winner not in (0, 1)
            else f"game over: {SEATS[state.winner]} wins"
        )
    else:
        who = state.current_player()
        actor = "chance" if who < 0 else SEATS[who]
        status = f"round {state.round} · {actor} to act · {state.phase_text()}"
    dice = " ".join(map(str, state.dice))
    footer = Text(
        f"{status}\ndice: {dice or '-'} · buff deck {sum(state.deck)}, "
        f"discards {sum(state.discard)}\n" + "\n".join(hands)
    )
    return Group(board, pieces, footer)
