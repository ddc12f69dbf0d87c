"""Every game's actions as dense integers: OpenSpiel's ``num_distinct_actions`` (player
actions) and ``max_chance_outcomes`` (chance outcomes), which PettingZoo's ``Discrete``
action space and action masks reuse.

Each game's encoding is a list of *blocks*, one per kind of action, numbered one after
the other; inside a block an action's fields are a mixed-radix number (the first field
most significant). :func:`battleline_codec` and :func:`lines_of_battle_codec` build
them; BattlePlan and Force Duel already number their actions with small ints, so their
codecs are the identity on those ints (:class:`IdentityCodec`). The tables are printed
in docs/rl.md; a test decodes every id and encodes it back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from math import prod
from operator import attrgetter
from typing import Any, Protocol, Self

from battlejudge.engines.battleline import actions as bla
from battlejudge.engines.battleline.actions import Action as BattleLineAction
from battlejudge.engines.battleline.state import FLAGS
from battlejudge.engines.lines_of_battle import actions as loba
from battlejudge.engines.lines_of_battle.actions import Action as LinesAction
from battlejudge.solver.lines_of_battle.core import KIND_NAMES


class Codec(Protocol):
    """Engine actions <-> dense ids, separately for player actions and chance outcomes."""

    num_actions: int
    """Player action ids are ``0 .. num_actions - 1``."""
    num_chance: int
    """Chance outcome ids are ``0 .. num_chance - 1``."""

    def encode(self, action: Any, chance: bool) -> int:
        """The id of an engine action (a chance outcome when ``chance``)."""
        ...

    def decode(self, code: int, chance: bool) -> Any:
        """The engine action of an id; :class:`ValueError` naming the id if it has none."""
        ...


@dataclass(frozen=True)
class Block:
    """One kind of action: a name and the radix of each of its fields."""

    name: str
    radices: tuple[int, ...] = ()

    @property
    def size(self) -> int:
        """How many ids the block takes."""
        return prod(self.radices)


class Blocks:
    """Blocks numbered one after the other; each action a mixed-radix number inside its
    block (the first field most significant)."""

    def __init__(self, blocks: Sequence[Block]) -> None:
        self.blocks = tuple(blocks)
        self.starts = (0, *accumulate(b.size for b in self.blocks))
        self.by_name = {b.name: i for i, b in enumerate(self.blocks)}

    @property
    def size(self) -> int:
        """How many ids all the blocks take."""
        return self.starts[-1]

    def encode(self, name: str, *digits: int) -> int:
        """The id of the action ``name`` with these fields; :class:`ValueError` for a
        field out of its range."""
        i = self.by_name[name]
        block = self.blocks[i]
        code = 0
        for digit, radix in zip(digits, block.radices, strict=True):
            if not 0 <= digit < radix:
                raise ValueError(f"field {digit} of {name!r} is not in 0..{radix - 1}")
            code = code * radix + digit
        return self.starts[i] + code

    def decode(self, code: int) -> tuple[str, tuple[int, ...]]:
        """The block name and fields of an id; :class:`ValueError` naming an id out of range."""
        if not 0 <= code < self.size:
            raise ValueError(f"action id {code} is not in 0..{self.size - 1}")
        i = next(k for k in range(len(self.blocks)) if code < self.starts[k + 1])
        rest = code - self.starts[i]
        digits: list[int] = []
        for radix in reversed(self.blocks[i].radices):
            rest, digit = divmod(rest, radix)
            digits.append(digit)
        return self.blocks[i].name, tuple(reversed(digits))


class BlockCodec:
    """A codec from two :class:`Blocks` tables and the game's field mappings."""

    def __init__(
        self,
        actions: Blocks,
        chance: Blocks,
        to_fields: Callable[[Any, bool], tuple[str, tuple[int, ...]]],
        from_fields: Callable[[str, tuple[int, ...]], Any],
        fast: Callable[[Any], int] | None = None,
        fast_chance: Callable[[Any], int] | None = None,
    ) -> None:
        self.actions = actions
        self.chance = chance
        self.num_actions = actions.size
        self.num_chance = chance.size
        self._to = to_fields
        self._from = from_fields
        self._fast = (fast, fast_chance)

    def encode(self, action: Any, chance: bool) -> int:
        """The id of an engine action (a chance outcome when ``chance``)."""
        fast = self._fast[chance]
        if fast is not None:
            return fast(action)
        return self.encode_fields(action, chance)

    def encode_fields(self, action: Any, chance: bool) -> int:
        """:meth:`encode` through the blocks' fields (the reference of a game's fast
        player-action encoder, which the tests compare with it)."""
        name, digits = self._to(action, chance)
        return (self.chance if chance else self.actions).encode(name, *digits)

    def decode(self, code: int, chance: bool) -> Any:
        """The engine action of an id; :class:`ValueError` naming the id if it has none."""
        name, digits = (self.chance if chance else self.actions).decode(code)
        return self._from(name, digits)

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        # immutable: OpenSpiel clones a state by deep-copying it, and sharing is enough
        return self


class IdentityCodec:
    """For games whose actions are already small ints: the id is the action itself.
    Player actions lie in ``0 .. num_actions - 1``, chance outcomes in
    ``0 .. num_chance - 1`` (the two ranges may overlap: OpenSpiel keeps them apart)."""

    def __init__(self, num_actions: int, num_chance: int) -> None:
        self.num_actions = num_actions
        self.num_chance = num_chance

    def encode(self, action: Any, chance: bool) -> int:
        """The action itself, checked against its range."""
        limit = self.num_chance if chance else self.num_actions
        if not 0 <= action < limit:
            raise ValueError(f"action {action} is not in 0..{limit - 1}")
        return int(action)

    def decode(self, code: int, chance: bool) -> Any:
        """The id itself, checked against its range."""
        return self.encode(code, chance)

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        # immutable: OpenSpiel clones a state by deep-copying it, and sharing is enough
        return self


# -- Battle Line -----------------------------------------------------------------------

CARDS = 70
"""Battle Line card codes 0-69 (60 troops, then the 10 tactics)."""
_BL_BLOCKS = Blocks(
    [
        Block("claim", (FLAGS,)),
        Block("done"),
        Block("pass"),
        Block("scout"),
        Block("draw", (2,)),
        Block("play", (CARDS, FLAGS)),
        Block("return", (CARDS,)),
        Block("discard", (CARDS, FLAGS)),
        Block("deserter", (CARDS, FLAGS)),
        # the destination's tenth value is the discard pile
        Block("redeploy", (CARDS, FLAGS, FLAGS + 1)),
        Block("traitor", (CARDS, FLAGS, FLAGS)),
    ]
)
_BL_CHANCE = Blocks([Block("card", (CARDS,))])
_BL_KINDS = {
    bla.CLAIM: "claim",
    bla.END_CLAIMS: "done",
    bla.PASS: "pass",
    bla.SCOUT: "scout",
    bla.DRAW: "draw",
    bla.PLAY: "play",
    bla.RETURN: "return",
    bla.DISCARD: "discard",
    bla.DESERTER: "deserter",
    bla.REDEPLOY: "redeploy",
    bla.TRAITOR: "traitor",
    bla.CARD: "card",
}
_BL_NAMES = {v: k for k, v in _BL_KINDS.items()}


def _bl_fields(a: BattleLineAction, chance: bool) -> tuple[str, tuple[int, ...]]:
    """The action's block and fields; flags (1-9 in the engine, as in the notation) are
    0-8 here, and the discard pile, Redeploy's tenth destination, is 9."""
    name = _BL_KINDS[a.kind]
    if name == "claim":
        return name, (a.flag - 1,)
    if name == "draw":
        return name, (a.deck,)
    if name == "play":
        return name, (a.card, a.flag - 1)
    if name in ("return", "card"):
        return name, (a.card,)
    if name in ("discard", "deserter"):
        return name, (a.card, a.source - 1)
    if name == "redeploy":
        dest = FLAGS if a.flag == bla.DISCARD_PILE else a.flag - 1
        return name, (a.card, a.source - 1, dest)
    if name == "traitor":
        return name, (a.card, a.source - 1, a.flag - 1)
    return name, ()


def _bl_action(name: str, d: tuple[int, ...]) -> BattleLineAction:
    """The inverse of :func:`_bl_fields`."""
    kind = _BL_NAMES[name]
    if name == "claim":
        return BattleLineAction(kind, flag=d[0] + 1)
    if name == "draw":
        return BattleLineAction(kind, deck=d[0])
    if name == "play":
        return BattleLineAction(kind, card=d[0], flag=d[1] + 1)
    if name in ("return", "card"):
        return BattleLineAction(kind, card=d[0])
    if name in ("discard", "deserter"):
        return BattleLineAction(kind, card=d[0], source=d[1] + 1)
    if name == "redeploy":
        dest = bla.DISCARD_PILE if d[2] == FLAGS else d[2] + 1
        return BattleLineAction(kind, card=d[0], source=d[1] + 1, flag=dest)
    if name == "traitor":
        return BattleLineAction(kind, card=d[0], source=d[1] + 1, flag=d[2] + 1)
    if name == "scout":
        return BattleLineAction(kind, card=66)
    return BattleLineAction(kind)


_BL_START = {
    kind: _BL_BLOCKS.starts[_BL_BLOCKS.by_name[name]]
    for kind, name in _BL_KINDS.items()
    if name in _BL_BLOCKS.by_name
}


def _bl_encode(a: BattleLineAction) -> int:
    """:func:`_bl_fields` and the blocks' arithmetic in one step (the hot path of the
    legal ids): a player action's id."""
    k = a.kind
    start = _BL_START[k]
    if k == bla.PLAY:
        return start + a.card * FLAGS + a.flag - 1
    if k == bla.CLAIM:
        return start + a.flag - 1
    if k == bla.DRAW:
        return start + a.deck
    if k == bla.RETURN:
        return start + a.card
    if k in (bla.DISCARD, bla.DESERTER):
        return start + a.card * FLAGS + a.source - 1
    if k == bla.REDEPLOY:
        dest = FLAGS if a.flag == bla.DISCARD_PILE else a.flag - 1
        return start + (a.card * FLAGS + a.source - 1) * (FLAGS + 1) + dest
    if k == bla.TRAITOR:
        return start + (a.card * FLAGS + a.source - 1) * FLAGS + a.flag - 1
    return start


def battleline_codec() -> BlockCodec:
    """Battle Line (and Nine Circles): claims, done, pass, Scout, draws, plays
    (card x flag), Scout returns, Mud discards, Deserter (card x flag), Redeploy
    (card x from x to, to 9 = the discard pile), Traitor (card x from x to); chance: the
    card dealt or drawn."""
    return BlockCodec(
        _BL_BLOCKS, _BL_CHANCE, _bl_fields, _bl_action, _bl_encode, attrgetter("card")
    )


# -- Lines of Battle -------------------------------------------------------------------


def lines_of_battle_codec(squares: int) -> BlockCodec:
    """Lines of Battle on a board of ``squares`` squares: ``army``, ``combat``, ``end``,
    deploy (unit type x square), move, swap and attack (square x square), face (square x
    facing); chance: who goes first, then the two dice (attacker's, defender's)."""
    kinds = len(KIND_NAMES)
    actions = Blocks(
        [
            Block("army"),
            Block("combat"),
            Block("end"),
            Block("deploy", (kinds, squares)),
            Block("move", (squares, squares)),
            Block("face", (squares, 4)),
            Block("swap", (squares, squares)),
            Block("attack", (squares, squares)),
        ]
    )
    chance = Blocks([Block("first", (2,)), Block("roll", (6, 6))])
    names = {
        loba.ARMY: "army",
        loba.COMBAT: "combat",
        loba.END: "end",
        loba.DEPLOY: "deploy",
        loba.MOVE: "move",
        loba.FACE: "face",
        loba.SWAP: "swap",
        loba.ATTACK: "attack",
        loba.FIRST: "first",
        loba.ROLL: "roll",
    }
    kind_of = {v: k for k, v in names.items()}

    def to_fields(a: LinesAction, chance: bool) -> tuple[str, tuple[int, ...]]:
        name = names[a.kind]
        if name in ("army", "combat", "end"):
            return name, ()
        if name == "first":
            return name, (a.a,)
        if name == "roll":
            return name, (a.a - 1, a.b - 1)
        return name, (a.a, a.b)

    def from_fields(name: str, d: tuple[int, ...]) -> LinesAction:
        kind = kind_of[name]
        if not d:
            return LinesAction(kind)
        if name == "first":
            return LinesAction(kind, d[0])
        if name == "roll":
            return LinesAction(kind, d[0] + 1, d[1] + 1)
        return LinesAction(kind, d[0], d[1])

    return BlockCodec(actions, chance, to_fields, from_fields)
