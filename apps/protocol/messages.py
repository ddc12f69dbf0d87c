"""The community Battle Line bot protocol: its messages, a lenient parser and a canonical
printer.

One message per line. The referee writes to a bot's stdin and the bot answers one line on
its stdout when asked (``player <seat> name`` and ``go play-card``). The protocol knows the
60 troops only: a card is ``<color>,<number>`` (``color3,10``), the six colors being the
names the ``colors`` message announces, numbers 1-10; flags are numbered 1-9.

Messages (``S`` a seat, ``north`` or ``south``)::

    player S name                      -> the bot answers: player S <botname>
    colors C1 C2 C3 C4 C5 C6
    player S hand CARD ...             (0 to 7 cards)
    flag claim-status X1 ... X9        (each unclaimed, north or south)
    flag N cards S [CARD ...]          (N = 1..9, both seats, empty sides too)
    opponent play N CARD
    go play-card                       -> the bot answers: play N CARD

Colors: battlejudge announces ``color1`` ... ``color6``, which stand for our red, orange,
yellow, green, blue and purple in that order (``color1,10`` is ``R10``). A bot must use the
names it was given; a bot client (:mod:`.client`) maps whatever six names it is
given onto our colors in the same order.

Guarantees: :func:`format_message` prints the canonical line (single spaces, lowercase
keywords) and ``parse_message(format_message(m, colors), colors) == m`` for every
message; :func:`parse_message` accepts extra blanks, any case of the keywords and of the
color names, and raises :class:`ProtocolError` (an ``InputError``) naming the line for
anything else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, TypeAlias

from battlejudge.engines.battleline.cards import CardCode
from battlejudge.engines.battleline.state import FLAGS
from battlejudge.solver.battleline.cards import TROOP_COUNT
from battlejudge.solver.errors import InputError

Seat = Literal["north", "south"]
SEATS: tuple[Seat, Seat] = ("north", "south")
ClaimStatus = Literal["unclaimed", "north", "south"]
PROTOCOL_COLORS: tuple[str, ...] = ("color1", "color2", "color3", "color4", "color5", "color6")
"""The color names battlejudge announces, in the order of our colors R O Y G B P."""
MAX_HAND = 7


class ProtocolError(InputError):
    """A line that is not a message of the protocol; the message quotes the line."""


@dataclass(frozen=True)
class NameRequest:
    """``player S name``: the referee asks the bot in seat ``seat`` for its name."""

    seat: Seat


@dataclass(frozen=True)
class NameReply:
    """``player S <botname>``: the bot's answer (the name is one word or more)."""

    seat: Seat
    name: str


@dataclass(frozen=True)
class Colors:
    """``colors C1 ... C6``: the six color names used in cards, in our color order."""

    names: tuple[str, ...]


@dataclass(frozen=True)
class Hand:
    """``player S hand CARD ...``: the cards in the bot's hand, in hand order."""

    seat: Seat
    cards: tuple[CardCode, ...]


@dataclass(frozen=True)
class FlagStatus:
    """``flag claim-status X1 ... X9``: who holds each flag."""

    statuses: tuple[ClaimStatus, ...]


@dataclass(frozen=True)
class FlagCards:
    """``flag N cards S [CARD ...]``: one side of one flag (``flag`` is 1-9), in the
    order played."""

    flag: int
    seat: Seat
    cards: tuple[CardCode, ...]


@dataclass(frozen=True)
class OpponentPlay:
    """``opponent play N CARD``: the opponent's last play."""

    flag: int
    card: CardCode


@dataclass(frozen=True)
class GoPlay:
    """``go play-card``: the bot must answer with a :class:`Play`."""


@dataclass(frozen=True)
class Play:
    """``play N CARD``: the bot plays CARD at flag N (1-9)."""

    flag: int
    card: CardCode


Message: TypeAlias = (
    NameRequest | NameReply | Colors | Hand | FlagStatus | FlagCards | OpponentPlay | GoPlay | Play
)


# -- cards --------------------------------------------------------------------------------
def format_card(code: CardCode, colors: tuple[str, ...] = PROTOCOL_COLORS) -> str:
    """``color3,10`` for our ``Y10`` (code 29)."""
    if not 0 <= code < TROOP_COUNT:
        raise ProtocolError(f"card code {code} is not a troop: the protocol has troops only")
    return f"{colors[code // 10]},{code % 10 + 1}"


def parse_card(text: str, colors: tuple[str, ...] = PROTOCOL_COLORS) -> CardCode:
    """Read ``<color>,<number>`` (color names matched without regard to case)."""
    color, sep, number = text.partition(",")
    lowered = [c.lower() for c in colors]
    if not sep or color.lower() not in lowered:
        raise ProtocolError(
            f"{text!r} is not a card: expected <color>,<number> with a color among "
            f"{' '.join(colors)}"
        )
    if not number.isdigit() or not 1 <= int(number) <= 10:
        raise ProtocolError(f"{text!r} is not a card: the number must be 1-10")
    return lowered.index(color.lower()) * 10 + int(number) - 1


def _cards(tokens: list[str], colors: tuple[str, ...]) -> tuple[CardCode, ...]:
    return tuple(parse_card(t, colors) for t in tokens)


# -- printing ---------------------------------------------------------------------------
def format_message(msg: Message, colors: tuple[str, ...] = PROTOCOL_COLORS) -> str:
    """The canonical line of a message (no newline)."""

    def cards(cs: tuple[CardCode, ...]) -> str:
        return "".join(f" {format_card(c, colors)}" for c in cs)

    if isinstance(msg, NameRequest):
        return f"player {msg.seat} name"
    if isinstance(msg, NameReply):
        return f"player {msg.seat} {msg.name}"
    if isinstance(msg, Colors):
        return "colors " + " ".join(msg.names)
    if isinstance(msg, Hand):
        return f"player {msg.seat} hand{cards(msg.cards)}"
    if isinstance(msg, FlagStatus):
        return "flag claim-status " + " ".join(msg.statuses)
    if isinstance(msg, FlagCards):
        return f"flag {msg.flag} cards {msg.seat}{cards(msg.cards)}"
    if isinstance(msg, OpponentPlay):
        return f"opponent play {msg.flag} {format_card(msg.card, colors)}"
    if isinstance(msg, GoPlay):
        return "go play-card"
    return f"play {msg.flag} {format_card(msg.card, colors)}"


# -- parsing ------------------------------------------------------------------------------
def _flag(text: str, line: str) -> int:
    if not re.fullmatch(r"[1-9]", text):
        raise ProtocolError(f"{line!r}: {text!r} is not a flag number 1-9")
    return int(text)


def _seat(text: str, line: str) -> Seat:
    low = text.lower()
    if low == "north":
        return "north"
    if low == "south":
        return "south"
    raise ProtocolError(f"{line!r}: {text!r} is not a seat (north or south)")


def _status(text: str, line: str) -> ClaimStatus:
    low = text.lower()
    if low == "unclaimed":
        return "unclaimed"
    if low in ("north", "south"):
        return _seat(low, line)
    raise ProtocolError(f"{line!r}: {text!r} is not unclaimed, north or south")


def parse_message(line: str, colors: tuple[str, ...] = PROTOCOL_COLORS) -> Message:
    """Read one line of the protocol (either direction). ``colors`` are the names cards
    use (the ``colors`` message itself may name any six)."""
    words = line.split()
    low = [w.lower() for w in words]
    text = " ".join(words)
    try:
        if low[:1] == ["player"] and len(words) >= 3:
            seat = _seat(words[1], text)
            if low[2] == "name" and len(words) == 3:
                return NameRequest(seat)
            if low[2] == "hand":
                if len(words) - 3 > MAX_HAND:
                    raise ProtocolError(f"{text!r}: a hand holds at most {MAX_HAND} cards")
                return Hand(seat, _cards(words[3:], colors))
            return NameReply(seat, " ".join(words[2:]))
        if low[:1] == ["colors"]:
            if len(words) != 7 or len({w.lower() for w in words[1:]}) != 6:
                raise ProtocolError(f"{text!r}: colors needs six different names")
            if any("," in w for w in words[1:]):
                raise ProtocolError(f"{text!r}: a color name cannot contain ','")
            return Colors(tuple(words[1:]))
        if low[:2] == ["flag", "claim-status"]:
            if len(words) != 2 + FLAGS:
                raise ProtocolError(f"{text!r}: claim-status needs {FLAGS} values")
            return FlagStatus(tuple(_status(w, text) for w in words[2:]))
        if low[:1] == ["flag"] and len(words) >= 4 and low[2] == "cards":
            return FlagCards(
                _flag(words[1], text), _seat(words[3], text), _cards(words[4:], colors)
            )
        if low[:2] == ["opponent", "play"] and len(words) == 4:
            return OpponentPlay(_flag(words[2], text), parse_card(words[3], colors))
        if low == ["go", "play-card"]:
            return GoPlay()
        if low[:1] == ["play"] and len(words) == 3:
            return Play(_flag(words[1], text), parse_card(words[2], colors))
    except ProtocolError as e:
        if repr(text) in str(e):
            raise
        raise ProtocolError(f"{text!r}: {e}") from None
    raise ProtocolError(f"{text!r} is not a message of the Battle Line bot protocol")
