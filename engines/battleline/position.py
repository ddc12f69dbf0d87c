"""Position files: what is on the table, as JSON with a published JSON Schema.

Fixed format (other tools depend on it). For each of the 9 flags both sides' cards in
the order played with their turn stamps, the environment cards with their owner, who
holds the flag; both discard piles; how many tactics each player has played; whose turn
it is; optionally the hands and the decks (top card first).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from battlejudge.engines.battleline.cards import (
    ALL_CARDS,
    ENVIRONMENT,
    LEADERS,
    MORALE,
    MUD,
    TACTIC_CARDS,
    TROOPS,
    Theme,
    card_name,
    parse_card,
)
from battlejudge.engines.battleline.config import RulesConfig
from battlejudge.engines.battleline.state import (
    CLAIM_START,
    FLAGS,
    HAND_SIZE,
    PLAYERS,
    BattleLineState,
    Flag,
    Placed,
)
from battlejudge.engines.seats import Seat, player_index
from battlejudge.proofs.files import read_model
from battlejudge.solver.battleline.cards import TROOP_COUNT, Card, check_side
from battlejudge.solver.battleline.question import ClaimQuestion
from battlejudge.solver.errors import InputError, RuleError

Player = Literal["north", "south"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlacedCard(_Strict):
    """A card at a flag, with the turn it was placed (the later side to complete loses a tie:
    docs/rulings.md 7)."""

    card: str
    turn: int = Field(ge=0, description="The turn the card was placed (ties: docs/rulings.md 7).")


class EnvironmentCard(_Strict):
    """An environment tactic at a flag (Fog or Mud), who played it and when."""

    card: str = Field(description="fog or mud (Nine Circles: mano-a-mano or mud)")
    player: Player
    turn: int = Field(ge=0)


class FlagState(_Strict):
    """One flag of a position file: each side's cards, the environment tactics there, and who
    claimed it."""

    north: list[PlacedCard] = Field(default_factory=list)
    south: list[PlacedCard] = Field(default_factory=list)
    environment: list[EnvironmentCard] = Field(default_factory=list)
    claimed_by: Player | None = None


class Rules(_Strict):
    """The game's settings (docs/rulings.md 10, 14, 17)."""

    claim_timing: Literal["standard", "advanced"] = "standard"
    environment_removable: bool = False
    stalemate: Literal["dead", "idle"] = "dead"


class PerPlayerCards(_Strict):
    """A list of cards for each seat (north, south)."""

    north: list[str] = Field(default_factory=list)
    south: list[str] = Field(default_factory=list)


class PerPlayerCount(_Strict):
    """A non-negative count for each seat (north, south)."""

    north: int = Field(default=0, ge=0)
    south: int = Field(default=0, ge=0)


class Decks(_Strict):
    """The known order of the two decks, top card first (a position may leave them unknown)."""

    troop: list[str] = Field(default_factory=list, description="Top card first.")
    tactics: list[str] = Field(default_factory=list, description="Top card first.")


class PositionFile(_Strict):
    """A Battle Line table position (``battlejudge claim POSITION.json``)."""

    format: Literal["battlejudge-position"] = "battlejudge-position"
    version: Literal[1] = 1
    game: Literal["battleline"] = "battleline"
    theme: Literal["battleline", "nine-circles"] = "battleline"
    rules: Rules = Field(default_factory=Rules)
    turn: int = Field(default=1, ge=1)
    to_move: Player = "north"
    flags: list[FlagState] = Field(min_length=9, max_length=9)
    discards: PerPlayerCards = Field(default_factory=PerPlayerCards)
    tactics_played: PerPlayerCount = Field(default_factory=PerPlayerCount)
    hands: PerPlayerCards | None = None
    decks: Decks | None = None


def json_schema() -> dict[str, Any]:
    """The published JSON Schema of position files."""
    return PositionFile.model_json_schema()


def _card(text: str, path: str) -> int:
    try:
        return parse_card(text)
    except InputError as e:
        raise InputError(f"{path}: {e}") from None


def to_state(pos: PositionFile) -> BattleLineState:
    """Build the state at the start of ``to_move``'s turn; raises naming the JSON path."""
    config = RulesConfig(
        pos.rules.environment_removable, pos.rules.claim_timing, pos.theme, pos.rules.stalemate
    )
    s = BattleLineState(config)
    s.turn = pos.turn
    s.to_move = PLAYERS.index(pos.to_move)
    s.phase = CLAIM_START
    seen: dict[int, str] = {}

    def place(code: int, path: str) -> None:
        if code in seen:
            raise RuleError(f"{path}: {card_name(code)} is already at {seen[code]}")
        seen[code] = path

    for i, (flag, fs) in enumerate(zip(s.flags, pos.flags, strict=True)):
        _place_flag(flag, fs, i, pos.turn, place)
    for side, name in enumerate(PLAYERS):
        for c_i, text in enumerate(getattr(pos.discards, name)):
            path = f"discards.{name}[{c_i}]"
            code = _card(text, path)
            place(code, path)
            s.discards[side].append(code)
        # docs/rulings.md 3: a Leader in his own discard pile was played by him too (a
        # card leaves a side for its owner's pile), so with one on his side or in his
        # pile a second Leader stays unplayable, and two are a position that cannot be.
        played = [p.card for f in s.flags for p in f.sides[side]] + s.discards[side]
        check_side([Card(c) for c in played if c in MORALE], f"{name}'s side and discards")
        s.leader_played[side] = any(c in LEADERS for c in played)
        s.tactics_played[side] = getattr(pos.tactics_played, name)
        visible = sum(1 for f in s.flags for p in f.sides[side] if p.card >= TROOP_COUNT)
        visible += sum(1 for f in s.flags for p in f.environment if p.owner == side)
        if s.tactics_played[side] < visible:
            raise RuleError(
                f"tactics_played.{name}: {s.tactics_played[side]}, but {visible} of his "
                f"tactics are on the table"
            )
    if abs(s.tactics_played[0] - s.tactics_played[1]) > 1:
        raise RuleError(
            "tactics_played: one player is more than one tactic ahead (docs/rulings.md 11)"
        )
    _place_hands_and_decks(s, pos, place, seen)
    if pos.hands is not None and pos.decks is not None and len(seen) != len(ALL_CARDS):
        missing = [card_name(c) for c in ALL_CARDS if c not in seen]
        raise RuleError(f"hands and decks are given, but {', '.join(missing[:5])} are nowhere")
    s.settle()
    return s


def _place_flag(
    flag: Flag, fs: FlagState, i: int, turn: int, place: Callable[[int, str], None]
) -> None:
    """Set up flag ``i`` (0-based) of a position from its file entry ``fs``: the environment,
    both sides (placed no later than ``turn``, complete at most) and who claimed it; raises
    naming the JSON path."""
    for e_i, env in enumerate(fs.environment):
        path = f"flags[{i}].environment[{e_i}]"
        code = _card(env.card, path)
        if code not in ENVIRONMENT:
            raise RuleError(f"{path}: {env.card} is not an environment tactic (fog, mud)")
        place(code, path)
        flag.environment.append(Placed(code, env.turn, PLAYERS.index(env.player)))
    for side, name in enumerate(PLAYERS):
        cards = getattr(fs, name)
        for c_i, pc in enumerate(cards):
            path = f"flags[{i}].{name}[{c_i}]"
            code = _card(pc.card, path)
            if code >= TROOP_COUNT and code not in MORALE:
                raise RuleError(f"{path}: {pc.card} cannot stand in a formation")
            if pc.turn > turn:
                raise RuleError(f"{path}: placed at turn {pc.turn}, after turn {turn}")
            place(code, path)
            flag.sides[side].append(Placed(code, pc.turn))
        if len(cards) > flag.size:
            raise RuleError(
                f"flags[{i}].{name}: {len(cards)} cards"
                + (" without Mud" if not flag.has(MUD) else f", more than {flag.size}")
            )
    if fs.claimed_by is not None:
        owner = PLAYERS.index(fs.claimed_by)
        if len(flag.sides[owner]) != flag.size:
            raise RuleError(
                f"flags[{i}]: claimed by {fs.claimed_by} with "
                f"{len(flag.sides[owner])} cards, fewer than a formation of {flag.size}"
            )
        flag.claimed_by = owner


def _place_hands_and_decks(
    s: BattleLineState, pos: PositionFile, place: Callable[[int, str], None], seen: dict[int, str]
) -> None:
    """Deal the hands and decks a position file gives (each deck in its known order, top
    first in the file); without decks every card not ``seen`` elsewhere is in its deck in
    unknown order. Raises naming the JSON path."""
    if pos.hands is not None:
        for side, name in enumerate(PLAYERS):
            cards = getattr(pos.hands, name)
            if len(cards) > HAND_SIZE:
                raise RuleError(
                    f"hands.{name}: {len(cards)} cards ({' '.join(cards)}); a hand holds at "
                    f"most {HAND_SIZE} at the start of a turn"
                )
            for c_i, text in enumerate(cards):
                path = f"hands.{name}[{c_i}]"
                code = _card(text, path)
                place(code, path)
                s.hands[side].append(code)
    s.unknown[0].clear()
    s.unknown[1].clear()
    if pos.decks is not None:
        for deck, name in ((0, "troop"), (1, "tactics")):
            for c_i, text in enumerate(getattr(pos.decks, name)):
                path = f"decks.{name}[{c_i}]"
                code = _card(text, path)
                if (code < TROOP_COUNT) != (deck == 0):
                    raise RuleError(f"{path}: {text} does not belong in the {name} deck")
                place(code, path)
            # Known order: top first in the file, last = top in the state.
            s.known_top[deck].extend(
                (parse_card(t), -1) for t in reversed(getattr(pos.decks, name))
            )
    else:
        s.unknown[0].extend(c for c in TROOPS if c not in seen)
        s.unknown[1].extend(c for c in TACTIC_CARDS if c not in seen)


def from_state(s: BattleLineState, *, hidden: bool = False) -> PositionFile:
    """The position of a state; ``hidden`` leaves out the hands and the decks."""
    theme: Theme = s.config.theme
    n = s.naming
    flags = [
        FlagState(
            north=[PlacedCard(card=n.card(p.card), turn=p.turn) for p in f.sides[0]],
            south=[PlacedCard(card=n.card(p.card), turn=p.turn) for p in f.sides[1]],
            environment=[
                EnvironmentCard(card=n.card(p.card), player=PLAYERS[p.owner], turn=p.turn)
                for p in f.environment
            ],
            claimed_by=PLAYERS[f.claimed_by] if f.claimed_by >= 0 else None,
        )
        for f in s.flags
    ]
    pos = PositionFile(
        theme=theme,
        rules=Rules(
            claim_timing=s.config.claim_timing,
            environment_removable=s.config.environment_removable,
            stalemate=s.config.stalemate,
        ),
        turn=max(s.turn, 1),
        to_move=PLAYERS[s.to_move],
        flags=flags,
        discards=PerPlayerCards(
            north=[n.card(c) for c in s.discards[0]], south=[n.card(c) for c in s.discards[1]]
        ),
        tactics_played=PerPlayerCount(north=s.tactics_played[0], south=s.tactics_played[1]),
    )
    if not hidden and not s.unknown[0] and not s.unknown[1]:
        pos.hands = PerPlayerCards(
            north=[n.card(c) for c in s.hands[0]], south=[n.card(c) for c in s.hands[1]]
        )
        pos.decks = Decks(
            troop=[n.card(c) for c, _ in reversed(s.known_top[0])],
            tactics=[n.card(c) for c, _ in reversed(s.known_top[1])],
        )
    elif not hidden:
        pos.hands = PerPlayerCards(
            north=[n.card(c) for c in s.hands[0]], south=[n.card(c) for c in s.hands[1]]
        )
    return pos


def load_position(path: str | Path) -> PositionFile:
    """Read and validate a position file; errors name the file and the JSON path."""
    return read_model(path, PositionFile)


def read_state(path: str | Path) -> BattleLineState:
    """Load a position file and build its state; errors name the file and JSON path."""
    try:
        return to_state(load_position(path))
    except RuleError as e:
        raise RuleError(f"{path}: {e}") from None


def dumps(pos: PositionFile) -> str:
    """The position as its JSON file text (pretty-printed, unset fields left out)."""
    return pos.model_dump_json(indent=2, exclude_none=True) + "\n"


def claim_question(
    table: PositionFile | BattleLineState | str | Path, flag: int, player: Seat
) -> ClaimQuestion:
    """The flag question a table asks when ``player`` claims ``flag``: his cards and the
    opponent's there, every other face-up troop as seen, Fog, Mud and who completed first
    (docs/rulings.md 4-7). ``table`` is a position (a file's path, or read) or a state;
    ``flag`` counts 1-9 as the notation does; ``player`` is ``north``/``south`` (or 0/1).
    Raises :class:`RuleError` for a flag already claimed, naming it, and
    :class:`InputError` for a flag or a player it does not know.

    >>> from battlejudge.engines.battleline.position import claim_question
    >>> claim_question("examples/positions/wedge-beats-blue-8.json", 1, "north")
    ClaimQuestion(mine='R4 R5 R3', theirs='B8', seen='B7 B10')
    """
    if isinstance(table, BattleLineState):
        state = table
    elif isinstance(table, PositionFile):
        state = to_state(table)
    else:
        state = read_state(table)
    if isinstance(flag, bool) or not isinstance(flag, int) or not 1 <= flag <= FLAGS:
        raise InputError(f"flag must be a number 1-{FLAGS}, got {flag!r}")
    seat = player_index(player, PLAYERS)
    f = state.flags[flag - 1]
    if f.claimed_by >= 0:
        raise RuleError(f"{state.naming.flag} {flag} is already claimed by {PLAYERS[f.claimed_by]}")
    return state.claim_question(flag, seat)
