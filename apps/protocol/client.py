"""Our bots as clients of the community bot protocol (``battlejudge bot``).

:class:`ProtocolClient` keeps the table as the referee describes it each turn and, on
``go play-card``, builds a :class:`BattleLineState` of the troops-only game from what the
bot may know, asks the bot for a play there, and answers ``play N CARD``.

The view given to the bot: its own hand; every flag's cards (turn stamps: a card first
seen before our turn ``t`` was placed at ``2t - 1``, ours at ``2t``, so the order of
completion is right whenever it can be known); who holds each flag; the opponent's hand
and the deck dealt at random from the troops nobody has seen, their sizes following from
the cards on the table (each play is followed by a draw while the deck lasts: the deck
holds ``46 - min(plays, 46)`` troops). The ten tactics lie face up in a discard pile, so
the bot knows nobody can hold or draw them. The bot is only ever asked for a play: claims
are the referee's business.

Guarantees: one reply line for each ``go play-card`` (flushed at once), no other output
on stdout; unknown or malformed lines are ignored (logged on stderr); if anything goes
wrong while choosing, the answer is still a legal play (the lowest flag with an open slot
and the first card of the hand), so the client never stalls a game.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import IO

from battlejudge.apps.protocol import messages as pr
from battlejudge.engines.battleline.actions import PLAY, Action
from battlejudge.engines.battleline.bots.base import BotLike
from battlejudge.engines.battleline.cards import TACTIC_CARDS, CardCode
from battlejudge.engines.battleline.state import (
    FLAGS,
    HAND_SIZE,
    NORTH,
    PLAY_PHASE,
    BattleLineState,
    Placed,
)
from battlejudge.solver.battleline.cards import ALL_TROOPS, TROOP_COUNT

log = logging.getLogger(__name__)

DECK_AFTER_DEAL = TROOP_COUNT - 2 * HAND_SIZE


@dataclass
class TableView:
    """The table as the protocol describes it to one seat."""

    seat: int = NORTH
    colors: tuple[str, ...] = pr.PROTOCOL_COLORS
    hand: list[CardCode] = field(default_factory=list)
    claimed: list[int] = field(default_factory=lambda: [-1] * FLAGS)
    sides: list[tuple[list[CardCode], list[CardCode]]] = field(
        default_factory=lambda: [([], []) for _ in range(FLAGS)]
    )
    stamps: dict[CardCode, int] = field(default_factory=dict)
    """When each card on the table was first seen (see the module)."""
    turns: int = 0
    """How many times we were asked to play."""

    def stamp_new_cards(self) -> None:
        """Stamp every card on the table not seen before with the current time (odd: placed by
        the opponent since our last play)."""
        for f in self.sides:
            for side in f:
                for c in side:
                    self.stamps.setdefault(c, 2 * self.turns + 1)

    def open_flags(self) -> list[int]:
        """The flags we may still play to: unclaimed, with fewer than three of our cards."""
        me = self.seat
        return [i for i in range(FLAGS) if self.claimed[i] < 0 and len(self.sides[i][me]) < 3]


def fallback_play(view: TableView) -> Action | None:
    """The reference engine's substitute: the lowest open flag, the first card in hand."""
    flags = view.open_flags()
    if not flags or not view.hand:
        return None
    return Action(PLAY, card=view.hand[0], flag=flags[0] + 1)


def build_state(view: TableView, rng: random.Random) -> BattleLineState:
    """A full state consistent with the view (hidden cards dealt at random), at the
    start of our play."""
    state = BattleLineState(first=NORTH, certify=False)
    me, opp = view.seat, 1 - view.seat
    on_table: list[CardCode] = []
    for f, (north, south), holder in zip(state.flags, view.sides, view.claimed, strict=True):
        for player, cards in ((0, north), (1, south)):
            f.sides[player].extend(Placed(c, view.stamps.get(c, 0)) for c in cards)
            on_table += cards
        f.claimed_by = holder
    plays = len(on_table)
    deck_size = DECK_AFTER_DEAL - min(plays, DECK_AFTER_DEAL)
    in_hands = 2 * HAND_SIZE + min(plays, DECK_AFTER_DEAL) - plays
    seen = set(on_table) | set(view.hand)
    unseen = [c for c in ALL_TROOPS if c not in seen]
    rng.shuffle(unseen)
    opp_size = max(0, min(len(unseen), in_hands - len(view.hand)))
    if opp_size + deck_size != len(unseen):  # the referee's view disagrees: trust the cards
        deck_size = len(unseen) - opp_size
    state.hands[me].extend(view.hand)
    state.hands[opp].extend(unseen[:opp_size])
    state.unknown[0].clear()
    state.unknown[0].extend(unseen[opp_size:])
    state.unknown[1].clear()
    state.discards[opp].extend(TACTIC_CARDS)  # out of the game, for everyone to see
    state.turn = 2 * view.turns + 2  # after every stamp given so far
    state.to_move = me
    state.phase = PLAY_PHASE
    state.settle()
    return state


class ProtocolClient:
    """One bot answering the protocol, a line at a time (see the module)."""

    def __init__(self, bot: BotLike, name: str, seed: int = 0) -> None:
        self.bot = bot
        self.name = "".join(name.split()) or "battlejudge"
        self.rng = random.Random(seed)
        self.view = TableView()

    def handle(self, line: str) -> str | None:
        """The reply to one input line, or None when the line needs none."""
        if not line.strip():
            return None
        try:
            msg = pr.parse_message(line, self.view.colors)
        except pr.ProtocolError as e:
            log.info("ignored: %s", e)
            return None
        view = self.view
        if isinstance(msg, pr.NameRequest):
            view.seat = pr.SEATS.index(msg.seat)
            return pr.format_message(pr.NameReply(msg.seat, self.name), view.colors)
        if isinstance(msg, pr.Colors):
            view.colors = msg.names
        elif isinstance(msg, pr.Hand):
            view.hand = list(msg.cards)
        elif isinstance(msg, pr.FlagStatus):
            view.claimed = [-1 if s == "unclaimed" else pr.SEATS.index(s) for s in msg.statuses]
        elif isinstance(msg, pr.FlagCards):
            view.sides[msg.flag - 1][pr.SEATS.index(msg.seat)][:] = msg.cards
        elif isinstance(msg, pr.GoPlay):
            return self.play()
        return None

    def choose(self) -> Action | None:
        """The bot's play for the table as the referee described it, or a fallback legal play
        when the bot fails or chooses something that is not a play (a failing bot must not
        stall the game); None when no play is possible."""
        view = self.view
        view.stamp_new_cards()
        try:
            state = build_state(view, self.rng)
            action = self.bot.step(state)
            if action.kind == PLAY and action in state.legal_actions():
                return action
            log.warning("bot %s chose %s, not a play: using the fallback", self.bot.name, action)
        except Exception:  # a bot failing must not stall the game: answer anyway
            log.exception("bot %s failed; using the fallback play", self.bot.name)
        return fallback_play(view)

    def play(self) -> str | None:
        """The protocol reply for the next play (``play FLAG CARD``, flag 1-based), or None when
        we hold no card or no flag is open."""
        action = self.choose()
        self.view.turns += 1
        if action is None:
            log.warning("asked to play with no card or no open flag")
            return None
        self.view.stamps[action.card] = 2 * self.view.turns
        return pr.format_message(pr.Play(action.flag, action.card), self.view.colors)

    def run(self, lines: Iterable[str], out: IO[str]) -> None:
        """Answer every line of ``lines`` on ``out`` until the input ends."""
        for line in lines:
            reply = self.handle(line)
            if reply is not None:
                out.write(reply + "\n")
                out.flush()
