"""Position files for the Force questions, and replaying the solver's counter-examples.

A position is the moment both players choose their Force card, as the asking
``player`` knows it (JSON; schema from :class:`ForcePosition`)::

    {"cards": "house", "player": "p1", "attacker": "p2",
     "weapons": {"p1": "bow", "p2": "sword"},
     "strategy": {"p1": "Bow Bonus", "p2": "Two-Card Limit"},
     "units": [{"owner": "p2", "card": "Knights"}],
     "mine": ["bow5+1", "bow3+2", "sword6+1"],
     "theirs": ["sword7+0", "sword2+3", "bow4+2", "spear6+1"]}

``mine``: the player's next battle cards, top first (three, or all he has left);
``theirs``: the opponent's remaining battle cards, in any order (he sees which cards
are out of the game, not their order); ``units``: unit cards setting this battle's
rules (those left after cancelling).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from battlejudge.engines.force_duel.battle import forced_weapon, held_effects
from battlejudge.engines.force_duel.battle import question as build_question
from battlejudge.engines.force_duel.cards import MAX_FORCE, CardBook
from battlejudge.engines.force_duel.state import (
    FORCE,
    FORCE_BASE,
    SEATS,
    ForceDuelState,
)
from battlejudge.solver.errors import InputError, invalid
from battlejudge.solver.force_duel import CounterExample, ForceQuestion
from battlejudge.solver.json_input import parse_json

Seat = Literal["p1", "p2"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PerSeat(_Model):
    """One value for each seat (``p1``, ``p2``)."""

    p1: str
    p2: str


class PerSeatOptional(_Model):
    """An optional value for each seat (``p1``, ``p2``)."""

    p1: str | None = None
    p2: str | None = None


class UnitInPlayModel(_Model):
    """A unit card in play in a position file: its owner and its card name."""

    owner: Seat
    card: str


class ForcePosition(_Model):
    """The Force moment of one battle, as ``player`` knows it."""

    cards: str = Field(default="house", description="card set: 'house' or a TOML path")
    player: Seat
    attacker: Seat | None = Field(default=None, description="default: the player")
    weapons: PerSeat
    strategy: PerSeatOptional = Field(default_factory=PerSeatOptional)
    units: list[UnitInPlayModel] = Field(default_factory=list)
    mine: list[str] = Field(min_length=1)
    theirs: list[str] = Field(min_length=1)


def parse_position(data: Any) -> ForcePosition:
    """Validate position data; :class:`InputError` names the first bad key."""
    try:
        return ForcePosition.model_validate(data)
    except ValidationError as e:
        raise invalid(e, top="position") from None


def read_position(path: str) -> ForcePosition:
    """Read a position file (``-``: standard input)."""
    import sys

    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    return parse_position(parse_json(text, path))


class Battle:
    """A position checked against its card set: kinds and indices instead of names."""

    def __init__(self, pos: ForcePosition, book: CardBook) -> None:
        self.pos, self.book = pos, book
        self.player = SEATS.index(pos.player)
        self.attacker = SEATS.index(pos.attacker or pos.player)
        self.weapons = (self._weapon("p1"), self._weapon("p2"))
        self.strategy: tuple[int | None, int | None] = (self._strategy("p1"), self._strategy("p2"))
        self.units = tuple(
            (SEATS.index(u.owner), self._unit(i, u.card)) for i, u in enumerate(pos.units)
        )
        self.mine = self._battle_cards("mine", pos.mine)
        self.theirs = self._battle_cards("theirs", pos.theirs)
        held = held_effects(book, self.strategy, self.units)
        for p in (0, 1):
            forced = forced_weapon(book, held[1 - p], with_strategy=True)
            if forced is not None and forced != self.weapons[p]:
                raise InputError(
                    f"weapons.{SEATS[p]}: {book.weapons[self.weapons[p]]!r}, but a card in "
                    f"play forces {book.weapons[forced]!r}"
                )
        self.held = held

    def _weapon(self, seat: str) -> int:
        name: str = getattr(self.pos.weapons, seat)
        if name.lower() not in self.book.weapons:
            raise InputError(
                f"weapons.{seat}: unknown weapon {name!r} (weapons: {', '.join(self.book.weapons)})"
            )
        return self.book.weapons.index(name.lower())

    def _strategy(self, seat: str) -> int | None:
        name: str | None = getattr(self.pos.strategy, seat)
        return None if name is None else self.book.strategy_of(name, f"strategy.{seat}")

    def _unit(self, i: int, name: str) -> int:
        kind = self.book.kind_of(name, f"units[{i}].card")
        if not self.book.is_unit(kind):
            raise InputError(f"units[{i}].card: {name!r} is a battle card, not a unit card")
        return kind

    def _battle_cards(self, key: str, cards: list[str]) -> list[int]:
        kinds = []
        for i, text in enumerate(cards):
            kind = self.book.kind_of(text, f"{key}[{i}]")
            if self.book.is_unit(kind):
                raise InputError(f"{key}[{i}]: {text!r} is a unit card, not a battle card")
            kinds.append(kind)
        for kind, n in Counter(kinds).items():
            if n > self.book.deck[kind]:
                raise InputError(
                    f"{key}: {n} x {self.book.labels[kind]}, "
                    f"but a deck holds {self.book.deck[kind]}"
                )
        return kinds

    def question(self) -> ForceQuestion:
        """The solver's question for the asking player."""
        return build_question(
            self.book,
            self.player,
            self.weapons,
            self.held,
            self.mine,
            len(self.mine),
            Counter(self.theirs),
        )

    def state(self, their_top: list[int]) -> ForceDuelState:
        """A game state at this battle's Force moment, with the opponent's deck holding
        ``their_top`` first and his other remaining cards after (for replaying a
        counter-example). Cards not in either deck are out of the game."""
        book = self.book
        s = ForceDuelState(book, cards=book.set.name)
        other = 1 - self.player
        rest = Counter(self.theirs)
        rest.subtract(their_top)
        if any(n < 0 for n in rest.values()):
            raise InputError("the opponent's cards are not among his remaining cards")
        s.decks[self.player] = list(self.mine)
        s.decks[other] = list(their_top) + sorted(rest.elements())
        s.pools = [[0] * book.kinds, [0] * book.kinds]
        for p in (0, 1):
            inside = Counter(s.decks[p])
            s.out[p] = [book.deck[k] - inside[k] for k in range(book.kinds)]
        s.strat_deck = list(book.strategy_deck)
        for st in self.strategy:
            if st is not None:
                s.strat_deck[st] -= 1
        s.setup = False
        s.dealt = 6
        s.attacker = self.attacker
        s.weapons = list(self.weapons)
        s.strategy = list(self.strategy)
        s.in_play = list(self.units)
        s.phase, s.actor = FORCE, self.attacker
        return s


def position_of(state: ForceDuelState, player: int) -> ForcePosition:
    """The position file of ``player`` at the Force moment of ``state``'s battle."""
    if state.phase != FORCE:
        raise InputError("a position is taken once both weapons are named (the force phase)")
    book = state.book
    other = 1 - player
    mine = [book.labels[k] for k in state.decks[player] if k < state.nb][:MAX_FORCE]
    theirs = [
        book.labels[k] for k in range(state.nb) for _ in range(book.deck[k] - state.out[other][k])
    ]
    return ForcePosition(
        cards=state.cards,
        player=SEATS[player],  # type: ignore[arg-type]
        attacker=SEATS[state.attacker],  # type: ignore[arg-type]
        weapons=PerSeat(
            p1=book.weapons[state.weapons[0] or 0], p2=book.weapons[state.weapons[1] or 0]
        ),
        strategy=PerSeatOptional(
            p1=None if state.strategy[0] is None else book.strategy[state.strategy[0]].name,
            p2=None if state.strategy[1] is None else book.strategy[state.strategy[1]].name,
        ),
        units=[
            UnitInPlayModel(owner=SEATS[o], card=book.labels[k])  # type: ignore[arg-type]
            for o, k in state.in_play
        ],
        mine=mine,
        theirs=theirs,
    )


def replay_counter(battle: Battle, c: CounterExample) -> tuple[int, int, int | None]:
    """Play the counter-example through the rules engine: the asker shows ``c.force``,
    the opponent ``c.their_force`` with ``c.their_cards`` on top. Returns both totals
    (asker's first) and the winner; raises ``AssertionError`` if the engine disagrees
    with the solver (the asker must not win, and the totals must match)."""
    top = [battle.book.kind_of(card.label, "counter-example") for card in c.their_cards]
    state = battle.state(top)
    forces = {battle.player: c.force, 1 - battle.player: c.their_force}
    for p in (battle.attacker, 1 - battle.attacker):
        state.apply_action(FORCE_BASE + forces[p])
    report = state.last
    assert report is not None
    mine, theirs = report.totals[battle.player], report.totals[1 - battle.player]
    if (mine, theirs) != (c.my_total, c.their_total) or report.winner == battle.player:
        raise AssertionError(
            f"the engine scores the counter-example {mine} to {theirs} "
            f"(winner {report.winner}), the solver {c.my_total} to {c.their_total}"
        )
    return mine, theirs, report.winner


def position_schema() -> dict[str, Any]:
    """The JSON Schema of a Force Duel position file (``battlejudge force-duel schema
    position``)."""
    schema: dict[str, Any] = ForcePosition.model_json_schema()
    schema["title"] = "Force Duel position"
    return schema
