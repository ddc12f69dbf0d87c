"""The BattlePlan game: setup, rounds of plan and battle, the Buff Token, flags, winning.

Rules: seed 002 (BattlePlan rulebook v2.0) with docs/rulings.md (BattlePlan).

Shape of a game (each line one or more actions; chance nodes say so):

* setup: the Buff Token lands outside the defensive zones (chance), each player draws two
  buffs (chance), the roll-off decides the first player (chance; ties are re-rolled, so the
  outcome is drawn among the untied totals with their exact probabilities), then the
  players alternately place their three pieces in their own defensive zone;
* every round: dead pieces respawn (scan a1->h1 for p1, h8->a8 for p2); the round's first
  player rolls three dice (chance); the players alternately assign the values to their
  pieces, the first player first, each using every value once; each player builds his
  stacks card by card and assigns buffs, then says ``done`` (the plan phase is
  simultaneous at the table: here it is turn-based, and neither player's information
  state shows the other's cards or buffs, as in OpenSpiel's turn-based simultaneous
  games); then the battle: the players alternately reveal the top card of one of their
  pieces, a player with nothing left to reveal is skipped, until every card is revealed;
* a revealed card (and a buff used with it, before or after) is resolved one step at a
  time: the player chooses where a move goes and what an attack hits.

House rules (the seed and docs/rulings.md are silent; see docs/battleplan.md):

* ``rounds`` (option, default 40): after that many rounds with no winner the game is a
  draw, so every game ends;
* a step must be taken when one is legal: ``move none``/``defend none`` only when no
  square is free;
* an attack with no adjacent enemy has no effect (``attack none``), as the seed says; with
  an enemy adjacent it must hit an adjacent piece, a friend by choice (docs/rulings.md BP8;
  option ``friendly_fire=any`` lets it hit a friend with no enemy adjacent too);
* a relocation of the Buff Token that hits occupied squares eight times in a row lands
  on a free square drawn uniformly on the ninth roll (keeps the game length bounded;
  the chance of needing it is below 1e-8);
* with the buff deck and its discards both empty, a draw gives nothing;
* a respawn on the Buff Token's square counts as entering it;
* dead pieces respawn p1's first, each player's in the order rook, horse, bishop;
* shields last until the piece's next reveal, across the end of a round.
"""

from __future__ import annotations

import json
from fractions import Fraction

from battlejudge.engines.battleplan.actions import (
    ASSIGN,
    BUFF,
    BUFF_AFTER,
    BUFF_BEFORE,
    BUFF_CHOICES,
    BUFF_LATER,
    CARD,
    DIE,
    DONE,
    DRAW,
    NONE,
    PICKUP,
    PLACE,
    REVEAL,
    ROLLOFF,
    TO,
    TOKEN,
    Action,
)
from battlejudge.engines.battleplan.board import (
    ADJ,
    ATTACK,
    BUFF_COPIES,
    BUFF_NAMES,
    CAPS,
    CARD_NAMES,
    DEFEND,
    DIAG,
    DIAGONAL,
    DIRECTION_NAMES,
    EXTRA_ATTACK,
    EXTRA_DEFEND,
    EXTRA_MOVE,
    HOME_ROW,
    KINDS,
    MOVE,
    OFF,
    ORTH,
    SEATS,
    WIN_SQUARE,
    square_name,
    step,
)
from battlejudge.engines.game import CHANCE, TERMINAL, GameFacts, GameState, IllegalActionError
from battlejudge.engines.seats import Seat, player_index
from battlejudge.solver.errors import InputError

# Phases
SETUP_TOKEN, ROLL_OFF, PLACING, ROUND_START, DICE, ASSIGNING, PLANNING, BATTLE, OVER = range(9)
PHASE_NAMES = (
    "setup-token",
    "roll-off",
    "placing",
    "round-start",
    "dice",
    "assigning",
    "planning",
    "battle",
    "over",
)
# Pending events, resolved before the game goes on
EV_DRAW, EV_TOKEN, EV_PICKUP = 0, 1, 2
# Steps of a battle turn
S_CHOICE, S_CARD, S_BUFF = 0, 1, 2
# What a step does
K_ORTH, K_DIAG, K_ATTACK, K_DEFEND = 0, 1, 2, 3
_CARD_STEP = {MOVE: K_ORTH, ATTACK: K_ATTACK, DEFEND: K_DEFEND}
_BUFF_STEP = {EXTRA_MOVE: K_ORTH, EXTRA_ATTACK: K_ATTACK, EXTRA_DEFEND: K_DEFEND, DIAGONAL: K_DIAG}
_VERB = {K_ORTH: "move", K_DIAG: "move", K_ATTACK: "attack", K_DEFEND: "defend"}

DRAW_RESULT = 2
"""``winner`` of a game ended by the round limit."""
NO_WINNER = -1
DEFAULT_ROUNDS = 40
TOKEN_HIT_CAP = 8
"""House rule: after this many occupied landings in a row the token lands on a free square."""


def _three_dice() -> dict[int, Fraction]:
    counts: dict[int, int] = {}
    for a in range(1, 7):
        for b in range(1, 7):
            for c in range(1, 7):
                counts[a + b + c] = counts.get(a + b + c, 0) + 1
    return {t: Fraction(n, 216) for t, n in counts.items()}


_TOTALS = _three_dice()
_UNTIED = 1 - sum(p * p for p in _TOTALS.values())
ROLLOFF_OUTCOMES: list[tuple[Action, Fraction]] = sorted(
    (ROLLOFF + a * 19 + b, pa * pb / _UNTIED)
    for a, pa in _TOTALS.items()
    for b, pb in _TOTALS.items()
    if a != b
)
_SETUP_TOKEN_OUTCOMES = [(TOKEN + sq, Fraction(1, 48)) for sq in range(8, 56)]
_DIE_OUTCOMES = [(DIE + v, Fraction(1, 6)) for v in range(1, 7)]


def round_length_bound() -> int:
    """An upper bound on the actions of one round (see :attr:`GameFacts.max_length`).

    An arrival on the token costs at most 1 draw and 9 rolls with 8 draws in between;
    a round has at most 6 respawns, 3 dice, 6 assignments, 2 x (18 cards + 3 buffs +
    done) plan actions and 36 reveals, each with a buff choice, two steps (each may
    arrive on the token and each attack may need a pickup choice)."""
    arrival = 18
    return 6 * arrival + 3 + 6 + 2 * 22 + 36 * (1 + 1 + 2 + 2 * arrival + 2)


FRIENDLY_FIRE = ("with-enemy", "any")
"""Values of the ``friendly_fire`` option (docs/rulings.md BP8)."""


class BattlePlanState(GameState[Action]):
    """A BattlePlan position; see the module docstring for the rules it implements."""

    def __init__(self, rounds: int = DEFAULT_ROUNDS, friendly_fire: str = "with-enemy") -> None:
        self.rounds = rounds
        self.friendly_fire = friendly_fire
        """docs/rulings.md BP8: ``with-enemy`` (an attack with no adjacent enemy has no
        effect; with one, the attacker may hit a friend instead) or ``any`` (a friend may be
        hit with no enemy adjacent too)."""
        self.facts = GameFacts(
            name="battleplan",
            players=2,
            chance=True,
            hidden_information=True,
            max_length=12 + rounds * round_length_bound(),
        )
        self.phase = SETUP_TOKEN
        self.round = 0
        self.first = -1
        """The round's first player (setup: who places first)."""
        self.turn = -1
        """Who acts next in placing, assigning, planning or battle."""
        self.pos: list[int] = [OFF] * 6
        self.shield: list[bool] = [False] * 6
        self.carrier: list[int] = [OFF, OFF]
        self.token = OFF
        self.token_hits = 0
        self.deck: list[int] = [BUFF_COPIES] * 4
        self.discard: list[int] = [0] * 4
        self.hand: list[list[int]] = [[0] * 4, [0] * 4]
        self.dice: list[int] = []
        self.assigned: list[int] = [0] * 6
        self.stacks: list[list[int]] = [[] for _ in range(6)]
        self.revealed: list[int] = [0] * 6
        self.buff: list[int] = [OFF] * 6
        """The buff assigned to each piece this round and not yet used (-1: none)."""
        self.done: list[bool] = [False, False]
        self.piece = OFF
        """The piece revealed this battle turn (-1 between turns)."""
        self.steps: list[int] = []
        self.turn_buff = OFF
        self.pending: list[tuple[int, int]] = []
        self.last_revealer = -1
        self.winner = NO_WINNER
        self.rolloff: tuple[int, int] = (0, 0)
        self.deaths: list[int] = [0] * 6
        """How many times each piece has been killed."""

    # ------------------------------------------------------------------ interface

    def current_player(self) -> int:
        """Whose decision it is: a seat, :data:`CHANCE` for draws, roll-offs and dice,
        :data:`TERMINAL` when the game is over."""
        if self.phase == OVER:
            return TERMINAL
        if self.pending:
            kind, arg = self.pending[0]
            return arg if kind == EV_PICKUP else CHANCE
        if self.phase in (SETUP_TOKEN, ROLL_OFF, DICE):
            return CHANCE
        return self.turn

    def legal_actions(self) -> list[Action]:
        """Every legal action now, sorted; empty when the game is over."""
        if self.phase == OVER:
            return []
        if self.pending:
            kind, arg = self.pending[0]
            if kind == EV_PICKUP:
                return [PICKUP + g % 3 for g in self._zone_pieces(arg)]
            return [a for a, _ in self.chance_outcomes()]
        phase = self.phase
        if phase in (SETUP_TOKEN, ROLL_OFF, DICE):
            return [a for a, _ in self.chance_outcomes()]
        p = self.turn
        if phase == PLACING:
            row = HOME_ROW[p] * 8
            free = [sq for sq in range(row, row + 8) if sq not in self.pos]
            return [
                PLACE + k * 64 + sq for k in range(3) if self.pos[p * 3 + k] == OFF for sq in free
            ]
        if phase == ASSIGNING:
            values = sorted(set(self._values_left(p)))
            return [
                ASSIGN + k * 8 + v
                for k in range(3)
                if self.assigned[p * 3 + k] == 0
                for v in values
            ]
        if phase == PLANNING:
            return self._plan_actions(p)
        # BATTLE
        if not self.steps:
            return [
                REVEAL + k
                for k in range(3)
                if self.revealed[p * 3 + k] < len(self.stacks[p * 3 + k])
            ]
        if self.steps[0] == S_CHOICE:
            return [BUFF_BEFORE, BUFF_AFTER, BUFF_LATER]
        return self._step_actions(self._step_kind())

    def chance_outcomes(self) -> list[tuple[Action, Fraction]]:
        """Each chance outcome with its exact probability (a card drawn in proportion to the
        deck's counts, a die face 1/6); empty when it is not chance's turn."""
        if self.phase == OVER:
            return []
        if self.pending:
            kind, _ = self.pending[0]
            if kind == EV_DRAW:
                total = sum(self.deck)
                return [(DRAW + b, Fraction(n, total)) for b, n in enumerate(self.deck) if n]
            if kind == EV_TOKEN:
                if self.token_hits < TOKEN_HIT_CAP:
                    return [(TOKEN + sq, Fraction(1, 64)) for sq in range(64)]
                free = [sq for sq in range(64) if sq not in self.pos]
                return [(TOKEN + sq, Fraction(1, len(free))) for sq in free]
            return []
        if self.phase == SETUP_TOKEN:
            return list(_SETUP_TOKEN_OUTCOMES)
        if self.phase == ROLL_OFF:
            return list(ROLLOFF_OUTCOMES)
        if self.phase == DICE:
            return list(_DIE_OUTCOMES)
        return []

    def returns(self) -> list[float]:
        """1 for the winner and -1 for the loser; 0 each while the game goes on or for a draw."""
        if self.winner in (0, 1):
            return [1.0, -1.0] if self.winner == 0 else [-1.0, 1.0]
        return [0.0, 0.0]

    def apply_action_unchecked(self, action: Action) -> None:
        """Apply ``action`` without checking it (the fast path): legality is the caller's job."""
        if self.pending:
            self._apply_event(action)
        elif self.phase == SETUP_TOKEN:
            self.token = action - TOKEN
            self.pending = [(EV_DRAW, 0), (EV_DRAW, 0), (EV_DRAW, 1), (EV_DRAW, 1)]
            self.phase = ROLL_OFF
        elif self.phase == ROLL_OFF:
            a, b = divmod(action - ROLLOFF, 19)
            self.rolloff = (a, b)
            self.first = self.turn = 0 if a > b else 1
            self.phase = PLACING
        elif self.phase == PLACING:
            k, sq = divmod(action - PLACE, 64)
            self.pos[self.turn * 3 + k] = sq
            other = 1 - self.turn
            if any(self.pos[other * 3 + i] == OFF for i in range(3)):
                self.turn = other
            if all(sq != OFF for sq in self.pos):
                self.round = 1
                self.phase = ROUND_START
        elif self.phase == DICE:
            self.dice.append(action - DIE)
            if len(self.dice) == 3:
                self.phase = ASSIGNING
                self.turn = self.first
        elif self.phase == ASSIGNING:
            k, v = divmod(action - ASSIGN, 8)
            self.assigned[self.turn * 3 + k] = v
            self.turn = 1 - self.turn
            if all(self.assigned):
                self.phase = PLANNING
                self.turn = self.first
        elif self.phase == PLANNING:
            self._apply_plan(action)
        else:
            self._apply_battle(action)
        self._advance()

    def information_state_string(self, player: Seat) -> str:
        """The table as ``player`` (0, 1, ``"p1"`` or ``"p2"``) sees it: the board,
        shields, carriers, the token, the dice and assignments, every revealed card, the
        number of cards in each stack and whether each piece has a buff, hand sizes, the
        deck and discard counts; the player's own stacks, buffs and hand. The opponent's
        unrevealed cards, unused buffs and hand are not in it."""
        player = player_index(player, SEATS)
        out = [
            f"phase {PHASE_NAMES[self.phase]} round {self.round} first {self.first} "
            f"turn {self.turn} me {player}",
            "pos " + " ".join(map(str, self.pos)),
            "shield " + "".join("1" if s else "0" for s in self.shield),
            f"carrier {self.carrier[0]} {self.carrier[1]} token {self.token} "
            f"rolloff {self.rolloff[0]}-{self.rolloff[1]}",
            f"deck {sum(self.deck)} discard {' '.join(map(str, self.discard))}",
            "dice " + " ".join(map(str, self.dice)),
        ]
        for g in range(6):
            mine = g // 3 == player
            stack = self.stacks[g]
            shown = [
                CARD_NAMES[c][0] if (mine or i < self.revealed[g]) else "?"
                for i, c in enumerate(stack)
            ]
            buff = "-" if self.buff[g] == OFF else (BUFF_NAMES[self.buff[g]] if mine else "?")
            out.append(
                f"{g}: die {self.assigned[g]} stack {''.join(shown)} "
                f"revealed {self.revealed[g]} buff {buff}"
            )
        for p in (0, 1):
            hand = self.hand[p]
            out.append(
                f"hand {p}: " + (" ".join(map(str, hand)) if p == player else str(sum(hand)))
            )
        turn_buff = "-" if self.turn_buff == OFF else BUFF_NAMES[self.turn_buff]
        out.append(
            f"done {self.done} piece {self.piece} steps {self.steps} buff {turn_buff} "
            f"pending {self.pending} hits {self.token_hits} winner {self.winner}"
        )
        return "\n".join(out)

    def clone(self) -> BattlePlanState:
        """An independent copy: applying actions to it never changes this state."""
        c = BattlePlanState.__new__(BattlePlanState)
        c.__dict__.update(self.__dict__)
        c.pos = self.pos[:]
        c.shield = self.shield[:]
        c.carrier = self.carrier[:]
        c.deck = self.deck[:]
        c.discard = self.discard[:]
        c.hand = [h[:] for h in self.hand]
        c.dice = self.dice[:]
        c.assigned = self.assigned[:]
        c.stacks = [s[:] for s in self.stacks]
        c.revealed = self.revealed[:]
        c.buff = self.buff[:]
        c.done = self.done[:]
        c.steps = self.steps[:]
        c.pending = self.pending[:]
        c.deaths = self.deaths[:]
        return c

    _FIELDS = (
        "rounds phase round first turn pos shield carrier token token_hits deck discard hand "
        "dice assigned stacks revealed buff done piece steps turn_buff pending last_revealer "
        "winner rolloff deaths friendly_fire"
    ).split()

    def serialize(self) -> str:
        """The whole state as compact JSON (hidden stacks included); ``deserialize`` reads it
        back to an equal state."""
        return json.dumps({f: getattr(self, f) for f in self._FIELDS}, separators=(",", ":"))

    @classmethod
    def deserialize(cls, text: str) -> BattlePlanState:
        """Rebuild a state from :meth:`serialize`; :class:`InputError` if it is not one."""
        try:
            data = json.loads(text)
            state = cls(int(data["rounds"]))
            data.setdefault("friendly_fire", "with-enemy")  # states from before BP8
            for f in cls._FIELDS:
                value = data[f]
                if f == "pending":
                    value = [tuple(e) for e in value]
                elif f == "rolloff":
                    value = tuple(value)
                setattr(state, f, value)
        except (ValueError, KeyError, TypeError) as e:
            raise InputError(f"not a serialized BattlePlan state: {e}") from None
        return state

    # ------------------------------------------------------------------ notation

    def public_action_string(self, action: Action, viewer: Seat) -> str | None:
        """What ``viewer`` (0, 1, ``"p1"`` or ``"p2"``) may be told of ``action`` (Plan
        phase: the other player's stack cards and buff kinds are face down, and so are his
        buff draws; the number of cards on a stack and whether a piece has a buff are
        public)."""
        viewer = player_index(viewer, SEATS, "viewer")
        text = self.action_to_string(action)
        if DRAW <= action < ROLLOFF:
            who = self.pending[0][1] if self.pending else 0
            return text if who == viewer else f"{SEATS[who]} draws a buff"
        mover = self.current_player()
        if mover in (0, 1) and mover != viewer and action < DONE:
            if action >= BUFF:
                return f"buff {KINDS[(action - BUFF) // 4]} (face down)"
            if action >= CARD:
                return f"card {KINDS[(action - CARD) // 3]} (face down)"
        return text

    def action_to_string(self, action: Action) -> str:
        """The canonical notation of ``action`` here (see :mod:`.actions`)."""
        if action >= DIE:
            return f"die {action - DIE}"
        if action >= ROLLOFF:
            a, b = divmod(action - ROLLOFF, 19)
            return f"roll-off {a}-{b}"
        if action >= DRAW:
            who = self.pending[0][1] if self.pending else 0
            return f"draw {SEATS[who]} {BUFF_NAMES[action - DRAW]}"
        if action >= TOKEN:
            return f"token {square_name(action - TOKEN)}"
        if action >= PICKUP:
            return f"pickup {KINDS[action - PICKUP]}"
        if action >= TO or action == NONE:
            verb = _VERB[self._step_kind()] if self.steps else "move"
            return f"{verb} {'none' if action == NONE else square_name(action - TO)}"
        if action in BUFF_CHOICES:
            return f"buff {BUFF_CHOICES[action]}"
        if action >= REVEAL:
            return f"reveal {KINDS[action - REVEAL]}"
        if action == DONE:
            return "done"
        if action >= BUFF:
            k, b = divmod(action - BUFF, 4)
            return f"buff {KINDS[k]} {BUFF_NAMES[b]}"
        if action >= CARD:
            k, c = divmod(action - CARD, 3)
            return f"card {KINDS[k]} {CARD_NAMES[c]}"
        if action >= ASSIGN:
            k, v = divmod(action - ASSIGN, 8)
            return f"assign {KINDS[k]} {v}"
        k, sq = divmod(action - PLACE, 64)
        return f"place {KINDS[k]} {square_name(sq)}"

    def _spellings(self, action: Action) -> list[str]:
        """The canonical notation and the shorter forms the parser also accepts."""
        text = self.action_to_string(action)
        words = text.split()
        out = [text]
        if words[0] in ("place", "assign", "card", "buff") and len(words) == 3:
            out.append(f"{words[0]} {words[1][0]} {words[2]}")
            if words[0] in ("card", "buff"):
                short = "".join(w[0] for w in words[2].split("-"))
                out += [f"{words[0]} {words[1][0]} {short}", f"{words[0]} {words[1]} {short}"]
                if words[0] == "buff" and words[2] == "diagonal":
                    out += [f"buff {words[1]} dm", f"buff {words[1][0]} dm"]
        if words[0] in ("reveal", "pickup"):
            out += [f"{words[0]} {words[1][0]}"]
        if words[0] in ("move", "defend", "attack") and self.piece != OFF and action >= TO:
            frm = self.pos[self.piece]
            for name, (dx, dy) in DIRECTION_NAMES.items():
                if frm != OFF and step(frm, dx, dy) == action - TO and words[0] != "attack":
                    out.append(f"{words[0]} {name}")
            out.append(f"{words[0][0]} {words[1]}")
        if words[0] == "buff" and len(words) == 2:
            out.append(words[1])
        return out

    def parse_action(self, text: str) -> Action:
        """The legal action spelled ``text`` (any case and spacing; short forms such as
        ``card r m``, ``reveal h``, ``move n`` or ``before`` are accepted)."""
        wanted = " ".join(text.lower().replace(",", " ").split())
        for action in self.legal_actions():
            if wanted in self._spellings(action):
                return action
        raise IllegalActionError(self._why(text.strip()))

    def why_illegal(self, action: Action) -> str:
        """The rule ``action`` breaks here (replay and ``play`` show it)."""
        return self._why(str(action))

    def _why(self, text: str) -> str:
        if self.phase == OVER:
            return f"{text!r}: the game is over"
        who = self.current_player()
        who_text = "chance" if who == CHANCE else SEATS[who]
        legal = [self.action_to_string(a) for a in self.legal_actions()]
        if self.phase == BATTLE and self.steps and self.steps[0] != S_CHOICE:
            if self._step_kind() == K_ATTACK and text.lower().startswith("attack"):
                if legal == ["attack none"]:
                    return (
                        f"{text!r}: no enemy is adjacent, so the attack has no effect: "
                        f"'attack none' (seed 002, ATTACK; docs/rulings.md BP8)"
                    )
                if "attack none" not in legal and text.lower().split()[-1] in ("none", "n"):
                    return (
                        f"{text!r}: an enemy is adjacent, so the attack must hit an adjacent "
                        f"piece (an enemy, or a friend by choice; seed 002, ATTACK)"
                    )
        shown = ", ".join(legal[:8]) + (", ..." if len(legal) > 8 else "")
        return (
            f"{text!r} is not a legal action here ({who_text} to act, {self.phase_text()}); "
            f"legal: {shown}"
        )

    def phase_text(self) -> str:
        """A few words on what is being decided."""
        if self.pending:
            kind = self.pending[0][0]
            return ("a buff draw", "the Buff Token's landing", "who picks up the flag")[kind]
        if self.phase == BATTLE and self.steps:
            if self.steps[0] == S_CHOICE:
                return "when to use the buff"
            who = f"{SEATS[self.piece // 3]} {KINDS[self.piece % 3]}"
            return f"the {_VERB[self._step_kind()]} of {who}"
        return PHASE_NAMES[self.phase]

    # ------------------------------------------------------------------ plan phase

    def _values_left(self, p: int) -> list[int]:
        left = list(self.dice)
        for k in range(3):
            v = self.assigned[p * 3 + k]
            if v:
                left.remove(v)
        return left

    def _plan_actions(self, p: int) -> list[Action]:
        out: list[Action] = []
        full = True
        for k in range(3):
            g = p * 3 + k
            stack = self.stacks[g]
            if len(stack) < self.assigned[g]:
                full = False
                for c in (MOVE, ATTACK, DEFEND):
                    if stack.count(c) < CAPS[c]:
                        out.append(CARD + k * 3 + c)
        for k in range(3):
            if self.buff[p * 3 + k] == OFF:
                out += [BUFF + k * 4 + b for b in range(4) if self.hand[p][b]]
        if full:
            out.append(DONE)
        out.sort()
        return out

    def _apply_plan(self, action: Action) -> None:
        p = self.turn
        if action == DONE:
            self.done[p] = True
            if self.done[1 - p]:
                self.phase = BATTLE
                self.turn = self.first
            else:
                self.turn = 1 - p
        elif action >= BUFF:
            k, b = divmod(action - BUFF, 4)
            self.buff[p * 3 + k] = b
            self.hand[p][b] -= 1
        else:
            k, c = divmod(action - CARD, 3)
            self.stacks[p * 3 + k].append(c)

    # ------------------------------------------------------------------ battle phase

    def _step_kind(self) -> int:
        if self.steps[0] == S_CARD:
            g = self.piece
            return _CARD_STEP[self.stacks[g][self.revealed[g] - 1]]
        return _BUFF_STEP[self.turn_buff]

    def _step_actions(self, kind: int) -> list[Action]:
        g = self.piece
        here = self.pos[g]
        pos = self.pos
        if kind == K_ATTACK:
            # Seed 002, ATTACK, and docs/rulings.md BP8: with an enemy adjacent the attack
            # must hit an adjacent piece, a friend by choice; with none it has no effect
            # (``friendly_fire=any``: it may still hit a friend).
            enemy = any(pos[e] in ADJ[here] for e in self._enemies(g))
            if not enemy and self.friendly_fire != "any":
                return [NONE]
            targets = [TO + sq for sq in ADJ[here] if sq in pos]
            if not enemy:
                targets.insert(0, NONE)
            return sorted(targets)
        table = DIAG if kind == K_DIAG else ORTH
        free = [TO + sq for sq in table[here] if sq not in pos]
        return sorted(free) if free else [NONE]

    @staticmethod
    def _enemies(g: int) -> range:
        return range(3, 6) if g < 3 else range(0, 3)

    def _apply_battle(self, action: Action) -> None:
        p = self.turn
        if not self.steps:
            g = p * 3 + action - REVEAL
            self.piece = g
            self.revealed[g] += 1
            self.last_revealer = p
            self.turn_buff = OFF
            if self.pos[g] == OFF:
                return  # a dead piece's card is flipped with no effect
            self.shield[g] = False  # the shield lasts until this piece's next reveal
            self.steps = [S_CHOICE] if self.buff[g] != OFF else [S_CARD]
            return
        if self.steps[0] == S_CHOICE:
            g = self.piece
            if action == BUFF_LATER:
                self.steps = [S_CARD]
                return
            self.turn_buff = self.buff[g]
            self.buff[g] = OFF
            self.discard[self.turn_buff] += 1
            self.steps = [S_BUFF, S_CARD] if action == BUFF_BEFORE else [S_CARD, S_BUFF]
            return
        kind = self._step_kind()
        self.steps.pop(0)
        g = self.piece
        if kind == K_ATTACK:
            if action != NONE:
                target = self.pos.index(action - TO)
                if self.shield[target]:
                    self.shield[target] = False
                else:
                    self._kill(target)
            return
        if action != NONE:
            self.pos[g] = action - TO
            self._arrive(g)
        if kind == K_DEFEND:
            self.shield[g] = True

    def _kill(self, g: int) -> None:
        self.deaths[g] += 1
        self.pos[g] = OFF
        self.shield[g] = False
        p = g // 3
        if self.carrier[p] == g:
            self.carrier[p] = OFF
            self.pending.append((EV_PICKUP, p))

    def _arrive(self, g: int) -> None:
        """A piece enters a square: the Buff Token, the flag, the Win Zone (page 4)."""
        p = g // 3
        sq = self.pos[g]
        if sq == self.token:
            self.pending += [(EV_DRAW, p), (EV_TOKEN, 0)]
            self.token_hits = 0
        if self.carrier[p] == OFF and sq // 8 == HOME_ROW[1 - p]:
            self.carrier[p] = g
        if self.carrier[p] == g and sq == WIN_SQUARE[p]:
            self.winner = p
            self.phase = OVER
            self.pending = []
            self.steps = []

    def _zone_pieces(self, p: int) -> list[int]:
        row = HOME_ROW[1 - p]
        return [
            g for g in range(p * 3, p * 3 + 3) if self.pos[g] != OFF and self.pos[g] // 8 == row
        ]

    def _apply_event(self, action: Action) -> None:
        kind, arg = self.pending.pop(0)
        if kind == EV_DRAW:
            b = action - DRAW
            self.deck[b] -= 1
            self.hand[arg][b] += 1
        elif kind == EV_TOKEN:
            sq = action - TOKEN
            self.token = sq
            if sq in self.pos:
                occupant = self.pos.index(sq) // 3
                self.token_hits += 1
                self.pending[0:0] = [(EV_DRAW, occupant), (EV_TOKEN, self.token_hits)]
            else:
                self.token_hits = 0
        else:
            self.carrier[arg] = arg * 3 + action - PICKUP

    # ------------------------------------------------------------------ flow

    def _advance(self) -> None:
        """Do everything that needs no decision: skipped events, the end of a turn,
        skipped players, the end of a round, respawns."""
        while True:
            if self.phase == OVER:
                self.pending = []
                return
            if self.pending:
                kind, arg = self.pending[0]
                if kind == EV_DRAW:
                    if not any(self.deck):
                        if not any(self.discard):
                            self.pending.pop(0)  # house rule: nothing left to draw
                            continue
                        self.deck, self.discard = self.discard, [0] * 4  # shuffle discards in
                    return
                if kind == EV_PICKUP:
                    if self.carrier[arg] != OFF:
                        self.pending.pop(0)
                        continue
                    candidates = self._zone_pieces(arg)
                    if len(candidates) > 1:
                        return
                    self.pending.pop(0)
                    if candidates:
                        self.carrier[arg] = candidates[0]
                    continue
                return
            if self.phase == BATTLE:
                if self.steps:
                    return
                if self.piece != OFF:
                    self.piece = OFF
                    self.turn_buff = OFF
                    self.turn = 1 - self.turn
                if self._has_cards(self.turn):
                    return
                if self._has_cards(1 - self.turn):
                    self.turn = 1 - self.turn
                    return
                self._end_round()
                continue
            if self.phase == ROUND_START:
                self.phase = DICE
                for p in (0, 1):
                    self._respawn(p)
                continue
            return

    def _has_cards(self, p: int) -> bool:
        return any(self.revealed[g] < len(self.stacks[g]) for g in range(p * 3, p * 3 + 3))

    def _respawn(self, p: int) -> None:
        """Respawn scan (page 4): p1 from a1 to h1, p2 from h8 to a8."""
        row = HOME_ROW[p] * 8
        scan = range(row, row + 8) if p == 0 else range(row + 7, row - 1, -1)
        for g in range(p * 3, p * 3 + 3):
            if self.pos[g] == OFF:
                sq = next(s for s in scan if s not in self.pos)
                self.pos[g] = sq
                self._arrive(g)

    def _end_round(self) -> None:
        for g in range(6):
            if self.buff[g] != OFF:
                self.discard[self.buff[g]] += 1  # unused assigned buffs are discarded
                self.buff[g] = OFF
        self.stacks = [[] for _ in range(6)]
        self.revealed = [0] * 6
        self.assigned = [0] * 6
        self.dice = []
        self.done = [False, False]
        self.first = self.turn = self.last_revealer  # who went last goes first
        if self.round >= self.rounds:
            self.winner = DRAW_RESULT
            self.phase = OVER
            return
        self.round += 1
        self.phase = ROUND_START

    # ------------------------------------------------------------------ helpers

    def round_over(self) -> bool:
        """True once no card of this round is left to reveal (or the game is over)."""
        if self.phase != BATTLE:
            return True
        return not (self.steps or self.pending or self._has_cards(0) or self._has_cards(1))


def new_game(options: dict[str, str] | None = None) -> BattlePlanState:
    """The state before the first action. Options: ``rounds`` (house-rule round limit,
    a positive integer, default 40) and ``friendly_fire`` (``with-enemy``, the default,
    or ``any``: docs/rulings.md BP8). :class:`InputError` names a bad option or value."""
    opts = dict(options or {})
    rounds = DEFAULT_ROUNDS
    friendly_fire = "with-enemy"
    for key, value in opts.items():
        if key == "friendly_fire":
            if value not in FRIENDLY_FIRE:
                raise InputError(
                    f"option friendly_fire={value!r} is not {' or '.join(FRIENDLY_FIRE)}"
                )
            friendly_fire = value
            continue
        if key != "rounds":
            raise InputError(f"BattlePlan has no option {key!r} (options: rounds, friendly_fire)")
        try:
            rounds = int(value)
        except ValueError:
            raise InputError(f"option rounds={value!r} is not a whole number") from None
        if not 1 <= rounds <= 1000:
            raise InputError(f"option rounds={value!r} must be between 1 and 1000")
    return BattlePlanState(rounds, friendly_fire)
