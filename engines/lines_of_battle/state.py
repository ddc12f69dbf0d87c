"""The Lines of Battle game: army choice and deployment, movement, swaps, combat with
dice, archer reload, victory, and the Commander variant.

Rules: seed 003 with docs/rulings.md (Lines of Battle). Turn shape, one small action
at a time (notation in :mod:`.actions`):

1. chance picks the first player (house rule: a fair coin); then the players deploy
   alternately, one unit at a time, the first player first (house rule), each choosing
   the type of every unit as he places it: 16 units on the 16 squares of his zone
   (rows 1-2 for p1, 9-10 for p2, columns B-I), at most 4 cavalry, exactly one
   Commander in the Commander variant; units face the enemy (docs/rulings.md);
2. each turn: the movement phase (``army`` first if wanted; then moves, re-faces and
   swaps in any order), ``combat``, the attacks in the order the player chooses (a
   frontal attack waits for the dice), ``end``.

House rules, where the seed and the rulings are silent:

* a unit moves once a turn, in one action, along any orthogonal path of empty squares
  within its allowance; re-facing belongs to the movement phase (once per unit);
* a formation swap needs two fresh units (neither has moved, re-faced or swapped);
* Army Movement: every unit moves at most 1 square (one after another) and may re-face;
  no swaps;
* turn limit: the game is a draw when ``turns`` turns (option, default 200) have been
  played without a winner.
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any, NamedTuple

from battlejudge.engines.game import CHANCE, TERMINAL, GameFacts, GameState, IllegalActionError
from battlejudge.engines.lines_of_battle.actions import (
    ARMY,
    ATTACK,
    COMBAT,
    DEPLOY,
    END,
    FACE,
    FIRST,
    MOVE,
    ROLL,
    SEATS,
    SWAP,
    Action,
    parse,
    to_string,
)
from battlejudge.engines.seats import Seat, player_index
from battlejudge.solver.errors import InputError, RuleError
from battlejudge.solver.lines_of_battle import core
from battlejudge.solver.lines_of_battle.core import (
    ARCHER,
    ARMY_SIZE,
    CAVALRY,
    COMMANDER,
    FRONT,
    KIND_NAMES,
    MAX_CAVALRY,
    NORTH,
    RANGE,
    SOUTH,
    Board,
    Square,
    aspect,
    destroys,
)
from battlejudge.solver.lines_of_battle.position import Position, UnitAt

VARIANTS = ("standard", "commander")
DEFAULT_TURNS = 200
PER_TURN = ARMY_SIZE * 4 + 3
"""At most 4 actions per unit (move, re-face, attack, roll; a swap is one action for
two units) plus ``army``, ``combat`` and ``end``."""

# phases
SETUP, DEPLOYING, MOVING, FIGHTING, ROLLING, OVER = range(6)
PHASE_NAMES = ("setup", "deploy", "movement", "combat", "dice", "over")

# unit flags for the turn
MOVED, FACED, SWAPPED, ATTACKED, RELOADING = 1, 2, 4, 8, 16
BUSY = MOVED | FACED | SWAPPED

DRAW = 2
"""``winner`` of a game ended by the turn limit."""

DICE = [Action(ROLL, a, d) for a in range(1, 7) for d in range(1, 7)]
SIXTH = Fraction(1, 36)


class Unit(NamedTuple):
    """A unit on the board: owner, kind, facing and state flags (reloading; moved, turned or
    swapped this turn); an immutable tuple."""

    owner: int
    kind: int
    facing: int
    flags: int = 0


def zone(board: Board, player: Seat) -> list[Square]:
    """The deployment zone (docs/rulings.md) of ``player`` (0, 1, ``"p1"`` or ``"p2"``):
    rows 1-2 for p1, rows 9-10 for p2, columns B-I; on other boards, the two home rows
    without the edge columns."""
    player = player_index(player, SEATS)
    rows = (0, 1) if player == 0 else (board.height - 2, board.height - 1)
    cols = range(1, board.width - 1)
    return sorted(r * board.width + c for r in rows for c in cols)


class LinesOfBattleState(GameState[Action]):
    """A Lines of Battle position (mutable; :meth:`clone` copies it)."""

    def __init__(
        self,
        board: Board | None = None,
        variant: str = "standard",
        turn_limit: int = DEFAULT_TURNS,
    ) -> None:
        if variant not in VARIANTS:
            raise InputError(f"unknown variant {variant!r} (variants: standard, commander)")
        if turn_limit < 1:
            raise InputError(f"turn limit {turn_limit} is not positive")
        self.board = board or Board()
        self.variant = variant
        self.turn_limit = turn_limit
        self.cells: list[Unit | None] = [None] * self.board.size
        self.phase = SETUP
        self.first = -1
        self.to_move = 0
        self.turn = 0
        self.army = False
        self.acted = False
        self.pending: tuple[Square, Square] | None = None
        self.winner = -1
        self.deployed = [0, 0]
        self._legal: list[Action] | None = None
        self.facts = GameFacts(
            name="lines-of-battle",
            players=2,
            chance=True,
            hidden_information=False,
            max_length=1 + 2 * ARMY_SIZE + turn_limit * PER_TURN,
        )

    # --- the interface -------------------------------------------------------

    def current_player(self) -> int:
        """Whose decision it is: the player to move, :data:`CHANCE` for the first-player choice
        and dice, :data:`TERMINAL` when the game is over."""
        if self.phase == OVER:
            return TERMINAL
        if self.phase in (SETUP, ROLLING):
            return CHANCE
        return self.to_move

    def legal_actions(self) -> list[Action]:
        """Every legal action now, sorted; a fresh list the caller may change."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return list(self._legal)

    def chance_outcomes(self) -> list[tuple[Action, Fraction]]:
        """Each chance outcome with its exact probability (who starts 1/2 each, a die face 1/6);
        empty when it is not chance's turn."""
        if self.phase == SETUP:
            return [(Action(FIRST, 0), Fraction(1, 2)), (Action(FIRST, 1), Fraction(1, 2))]
        if self.phase == ROLLING:
            return [(a, SIXTH) for a in DICE]
        return []

    def returns(self) -> list[float]:
        """1 for the winner and -1 for the loser; 0 each while the game goes on or for a draw."""
        if self.winner in (0, 1):
            return [1.0, -1.0] if self.winner == 0 else [-1.0, 1.0]
        return [0.0, 0.0]

    def action_to_string(self, action: Action) -> str:
        """The action in the game's notation, with this board's square names."""
        return to_string(action, self.board)

    def parse_action(self, text: str) -> Action:
        """The action written ``text`` (lenient notation, :mod:`.actions`);
        :class:`IllegalActionError` says why it is unreadable or not legal here."""
        try:
            action = parse(text, self.board)
        except InputError as e:
            raise IllegalActionError(str(e)) from None
        if action not in self.legal_actions():
            raise IllegalActionError(self.why_illegal(action))
        return action

    def clone(self) -> LinesOfBattleState:
        """An independent copy: applying actions to it never changes this state."""
        twin = LinesOfBattleState.__new__(LinesOfBattleState)
        twin.__dict__.update(self.__dict__)
        twin.cells = list(self.cells)
        twin.deployed = list(self.deployed)
        return twin

    def information_state_string(self, player: Seat) -> str:
        """Everything is public in Lines of Battle (deployment is made in the open,
        house rule), so every player (0, 1, ``"p1"`` or ``"p2"``) knows the whole state."""
        player_index(player, SEATS)  # still refuse a seat the game does not have
        return self.serialize()

    def serialize(self) -> str:
        """The whole state as JSON; ``deserialize`` reads it back to an equal state."""
        return json.dumps(
            {
                "board": [self.board.width, self.board.height],
                "variant": self.variant,
                "turn_limit": self.turn_limit,
                "phase": PHASE_NAMES[self.phase],
                "first": self.first,
                "to_move": self.to_move,
                "turn": self.turn,
                "army": self.army,
                "acted": self.acted,
                "pending": list(self.pending) if self.pending else None,
                "winner": self.winner,
                "deployed": self.deployed,
                "units": [[sq, *u] for sq, u in enumerate(self.cells) if u is not None],
            },
            separators=(",", ":"),
        )

    @classmethod
    def deserialize(cls, text: str) -> LinesOfBattleState:
        """Rebuild a state from :meth:`serialize`; :class:`InputError` for bad text."""
        try:
            d = json.loads(text)
            s = cls(Board(*d["board"]), d["variant"], int(d["turn_limit"]))
            s.phase = PHASE_NAMES.index(d["phase"])
            s.first, s.to_move, s.turn = int(d["first"]), int(d["to_move"]), int(d["turn"])
            s.army, s.acted = bool(d["army"]), bool(d["acted"])
            s.pending = (int(d["pending"][0]), int(d["pending"][1])) if d["pending"] else None
            s.winner = int(d["winner"])
            s.deployed = [int(x) for x in d["deployed"]]
            for sq, owner, kind, facing, flags in d["units"]:
                s.cells[sq] = Unit(owner, kind, facing, flags)
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise InputError(f"not a Lines of Battle state: {e}") from None
        return s

    # --- rules ---------------------------------------------------------------

    def units_of(self, player: Seat) -> list[tuple[Square, Unit]]:
        """The squares and units of ``player`` (0, 1, ``"p1"`` or ``"p2"``), in square order."""
        player = player_index(player, SEATS)
        return [(sq, u) for sq, u in enumerate(self.cells) if u is not None and u.owner == player]

    def target_of(self, sq: Square) -> Square | None:
        """The first unit straight ahead of the unit on ``sq`` within its range, if an
        enemy (docs/rulings.md: attacks go along the facing; any unit in between blocks)."""
        u = self.cells[sq]
        assert u is not None
        for t in self.board.line(sq, u.facing, RANGE[u.kind]):
            v = self.cells[t]
            if v is not None:
                return t if v.owner != u.owner else None
        return None

    def reachable(self, sq: Square, allowance: int) -> list[Square]:
        """Empty squares within ``allowance`` orthogonal steps of ``sq`` through empty
        squares only (seed: units may not move through other units)."""
        seen = {sq}
        frontier = [sq]
        out: list[Square] = []
        for _ in range(allowance):
            nxt = []
            for s in frontier:
                for n in self.board.neighbours(s):
                    if n not in seen and self.cells[n] is None:
                        seen.add(n)
                        nxt.append(n)
                        out.append(n)
            frontier = nxt
        return out

    def _allowance(self, kind: int) -> int:
        return 1 if self.army else core.MOVE[kind]

    def _deploy_kinds(self, player: int) -> list[int]:
        mine = [u for _, u in self.units_of(player)]
        kinds = []
        has_commander = any(u.kind == COMMANDER for u in mine)
        must_commander = self.variant == "commander" and not has_commander
        left = ARMY_SIZE - len(mine)
        for k in range(5):
            if k == COMMANDER:
                if must_commander:
                    kinds.append(k)
                continue
            if must_commander and left == 1:
                continue
            if k == CAVALRY and sum(u.kind == CAVALRY for u in mine) >= MAX_CAVALRY:
                continue
            kinds.append(k)
        return kinds

    def _compute_legal(self) -> list[Action]:
        phase = self.phase
        if phase == OVER:
            return []
        if phase == SETUP:
            return [Action(FIRST, 0), Action(FIRST, 1)]
        if phase == ROLLING:
            return list(DICE)
        p = self.to_move
        cells = self.cells
        out: list[Action] = []
        if phase == DEPLOYING:
            free = [sq for sq in zone(self.board, p) if cells[sq] is None]
            for k in self._deploy_kinds(p):
                out += [Action(DEPLOY, k, sq) for sq in free]
            return sorted(out)
        mine = self.units_of(p)
        if phase == MOVING:
            if not self.acted:
                out.append(Action(ARMY))
            for sq, u in mine:
                if u.flags & (MOVED | SWAPPED) == 0:
                    out += [
                        Action(MOVE, sq, t) for t in self.reachable(sq, self._allowance(u.kind))
                    ]
                if u.flags & (FACED | SWAPPED) == 0:
                    out += [Action(FACE, sq, f) for f in range(4) if f != u.facing]
                if not self.army and u.flags & BUSY == 0:
                    for n in self.board.neighbours(sq):
                        v = cells[n]
                        if n > sq and v is not None and v.owner == p and v.flags & BUSY == 0:
                            out.append(Action(SWAP, sq, n))
            out.append(Action(COMBAT))
        else:  # FIGHTING
            for sq, u in mine:
                if self._may_attack(u):
                    t = self.target_of(sq)
                    if t is not None:
                        out.append(Action(ATTACK, sq, t))
            out.append(Action(END))
        out.sort()
        return out

    @staticmethod
    def _may_attack(u: Unit) -> bool:
        """Once a turn, not after a swap, not the Commander, not a reloading archer
        (seed: Combat Phase, Formation Swap, Archers; docs/rulings.md)."""
        return (
            RANGE[u.kind] > 0
            and u.flags & (ATTACKED | SWAPPED) == 0
            and not (u.kind == ARCHER and u.flags & RELOADING)
        )

    def apply_action_unchecked(self, action: Action) -> None:
        """Apply ``action`` without checking it (legality is the caller's job)."""
        self._legal = None
        kind, a, b = action
        cells = self.cells
        if kind == FIRST:
            self.first = self.to_move = a
            self.phase = DEPLOYING
        elif kind == DEPLOY:
            p = self.to_move
            cells[b] = Unit(p, a, NORTH if p == 0 else SOUTH)
            self.deployed[p] += 1
            if self.deployed[1 - p] < ARMY_SIZE:
                self.to_move = 1 - p
            elif self.deployed[p] == ARMY_SIZE:
                self.to_move = self.first
                self.turn = 1
                self.phase = MOVING
        elif kind == ARMY:
            self.army = self.acted = True
        elif kind == MOVE:
            u = cells[a]
            assert u is not None
            cells[a] = None
            cells[b] = u._replace(flags=u.flags | MOVED)
            self.acted = True
        elif kind == FACE:
            u = cells[a]
            assert u is not None
            cells[a] = u._replace(facing=b, flags=u.flags | FACED)
            self.acted = True
        elif kind == SWAP:
            u, v = cells[a], cells[b]
            assert u is not None and v is not None
            cells[a] = v._replace(flags=v.flags | SWAPPED)
            cells[b] = u._replace(flags=u.flags | SWAPPED)
            self.acted = True
        elif kind == COMBAT:
            self.phase = FIGHTING
        elif kind == ATTACK:
            u, v = cells[a], cells[b]
            assert u is not None and v is not None
            flags = u.flags | ATTACKED | (RELOADING if u.kind == ARCHER else 0)
            cells[a] = u._replace(flags=flags)
            if aspect(u.facing, v.facing) == FRONT:
                self.pending = (a, b)
                self.phase = ROLLING
            else:
                self._destroy(b)
        elif kind == ROLL:
            assert self.pending is not None
            at, df = self.pending
            u, v = cells[at], cells[df]
            assert u is not None and v is not None
            self.pending = None
            self.phase = FIGHTING
            if destroys(u.kind, v.kind, a, b):
                self._destroy(df)
        elif kind == END:
            self._end_turn()
        else:
            raise ValueError(f"unknown action {action!r}")

    def _destroy(self, sq: Square) -> None:
        """The unit leaves at once (docs/rulings.md); destroying the last enemy unit wins
        (seed: Victory), and so does destroying the Commander (Commander variant)."""
        v = self.cells[sq]
        assert v is not None
        self.cells[sq] = None
        if v.kind == COMMANDER or not any(u is not None and u.owner == v.owner for u in self.cells):
            self.winner = 1 - v.owner
            self.phase = OVER

    def _end_turn(self) -> None:
        p = self.to_move
        for sq, u in self.units_of(p):
            # an archer that attacked this turn skips its next turn's attack
            reload = RELOADING if u.flags & ATTACKED and u.kind == ARCHER else 0
            self.cells[sq] = u._replace(flags=reload)
        self.army = self.acted = False
        if self.turn >= self.turn_limit:
            self.winner = DRAW
            self.phase = OVER
            return
        self.turn += 1
        self.to_move = 1 - p
        self.phase = MOVING

    def why_illegal(self, action: Action) -> str:
        """A sentence saying why ``action`` is not legal here."""
        if action in self.legal_actions():
            return f"{self.action_to_string(action)} is legal"
        try:
            text = self.action_to_string(action)
        except (ValueError, IndexError):
            return f"{action!r} is not an action"
        kind, a, b = action
        phase = PHASE_NAMES[self.phase]
        want = {
            FIRST: SETUP,
            DEPLOY: DEPLOYING,
            ROLL: ROLLING,
            ARMY: MOVING,
            MOVE: MOVING,
            FACE: MOVING,
            SWAP: MOVING,
            COMBAT: MOVING,
            ATTACK: FIGHTING,
            END: FIGHTING,
        }[kind]
        if self.phase == OVER:
            return f"{text}: the game is over"
        if want != self.phase:
            return f"{text}: not in the {phase} phase"
        name = self.board.name
        p = self.to_move
        if kind == DEPLOY:
            if b not in zone(self.board, p):
                return f"{text}: {name(b)} is not in {SEATS[p]}'s deployment zone"
            if self.cells[b] is not None:
                return f"{text}: {name(b)} is taken"
            return f"{text}: no more {KIND_NAMES[a]} allowed (at most 4 cavalry, one Commander)"
        if kind == ARMY:
            return "army: Army Movement must be declared before any unit acts"
        if kind in (MOVE, FACE, SWAP, ATTACK):
            u = self.cells[a]
            if u is None or u.owner != p:
                return f"{text}: no unit of {SEATS[p]} on {name(a)}"
            if u.flags & SWAPPED:
                return f"{text}: the unit on {name(a)} swapped and has spent its turn"
            if kind == MOVE:
                if u.flags & MOVED:
                    return f"{text}: the unit on {name(a)} has already moved"
                allowance = self._allowance(u.kind)
                return (
                    f"{text}: {name(b)} is not within {allowance} orthogonal square(s) "
                    "through empty squares"
                )
            if kind == FACE:
                if u.flags & FACED:
                    return f"{text}: the unit on {name(a)} has already re-faced this turn"
                return f"{text}: it already faces that way"
            if kind == SWAP:
                if self.army:
                    return f"{text}: no formation swaps in Army Movement"
                v = self.cells[b]
                if v is None or v.owner != p or b not in self.board.neighbours(a):
                    return f"{text}: swaps need two orthogonally adjacent friendly units"
                return f"{text}: both units must not have moved, re-faced or swapped"
            if u.kind == COMMANDER:
                return f"{text}: the Commander cannot attack"
            if u.flags & ATTACKED:
                return f"{text}: the unit on {name(a)} has already attacked"
            if u.kind == ARCHER and u.flags & RELOADING:
                return f"{text}: the archer on {name(a)} is reloading"
            return f"{text}: {name(b)} is not the first unit straight ahead within range"
        return f"{text} is not legal here"

    # --- positions for the solver ---------------------------------------------

    def at_turn_start(self) -> bool:
        """Whether the player to move is at the start of his turn (moving, nothing done yet)."""
        return self.phase == MOVING and not self.acted

    def position(self) -> Position:
        """The solver's plain-data view; only at the start of a turn (nothing moved)."""
        if not self.at_turn_start():
            raise RuleError("a position for the questions is taken at the start of a turn")
        return Position(
            self.board,
            self.to_move,
            tuple(
                UnitAt(sq, u.owner, u.kind, u.facing, bool(u.flags & RELOADING))
                for sq, u in enumerate(self.cells)
                if u is not None
            ),
        )

    @classmethod
    def from_position(
        cls,
        pos: Position,
        variant: str = "standard",
        turn: int = 1,
        turn_limit: int = DEFAULT_TURNS,
    ) -> LinesOfBattleState:
        """A state at the start of ``pos.to_move``'s turn with ``pos``'s units."""
        s = cls(pos.board, variant, max(turn_limit, turn))
        for u in pos.units:
            s.cells[u.square] = Unit(u.owner, u.kind, u.facing, RELOADING if u.reloading else 0)
        s.phase = MOVING
        s.first = 0
        s.to_move = pos.to_move
        s.turn = turn
        s.deployed = [ARMY_SIZE, ARMY_SIZE]
        for owner in (0, 1):
            if not any(u.owner == owner for u in pos.units):
                s.winner, s.phase = 1 - owner, OVER
        return s


def new_game(variant: str = "standard", turn_limit: int = DEFAULT_TURNS) -> LinesOfBattleState:
    """The state before the coin for the first player."""
    return LinesOfBattleState(Board(), variant, turn_limit)


def options_game(options: dict[str, str] | Any) -> LinesOfBattleState:
    """``new_game`` from text options (``variant``, ``turns``); :class:`InputError`
    names a bad value."""
    variant = options.get("variant", "standard").strip().lower()
    text = options.get("turns", str(DEFAULT_TURNS)).strip()
    if not text.isdigit() or int(text) < 1:
        raise InputError(f"option turns={text!r} is not a positive whole number")
    return new_game(variant, int(text))
