"""The Force Duel game state: setup, the battle sequence, unit cards, deck exhaustion.

Rules (the seed's sections, in our words; house rules are marked):

* Setup: the strategy deck is shuffled and each player draws 3 (chance nodes, one per
  card, dealt p1, p2, p1, ...); each battle deck is shuffled (one chance node per
  position, top first: the owner may look through his whole deck, in order); the
  first attacker is chosen at random (house rule).
* Battle: unit cards among the top three of a deck are laid out (unit cards); the
  attacker names a weapon; both players commit a strategy card (turn-based
  simultaneous moves: the defender's information state does not show the attacker's
  card); both draw one (chance); the attacker's weapon may be overridden by the
  defender's strategy card; the defender names a weapon; both commit a Force card 1-3
  (simultaneous again); the battle is scored: the first card's power plus the extras
  of the next ones, plus bonuses; the higher total wins, a tie wins nothing; the loser
  turns a unit to its gravestone; used cards leave the game.
* A player whose deck has no battle card left loses two units; then both battle decks
  are rebuilt from all their cards and reshuffled, and the strategy deck gets the
  played strategy cards back (hands are kept).
* The winner attacks next; after a tie, the last winner (house rule: the same attacker
  if nobody has won yet). A player with no units loses; both at once: a draw (house
  rule); after the card set's ``max_battles`` the player with more units wins (house
  rule).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from battlejudge.engines.force_duel.battle import (
    Held,
    UnitInPlay,
    effective,
    extra_loss,
    force_choices,
    forced_weapon,
    held_effects,
    question,
    recovered,
    shielded,
    side_rules,
)
from battlejudge.engines.force_duel.cards import (
    HOUSE,
    MAX_FORCE,
    CardBook,
    book_from_canonical,
    load_book,
    normal_label,
    normal_name,
)
from battlejudge.engines.game import (
    CHANCE,
    TERMINAL,
    GameFacts,
    GameState,
    IllegalActionError,
)
from battlejudge.engines.seats import Seat, player_index
from battlejudge.solver.errors import InputError
from battlejudge.solver.force_duel import ForceQuestion, outcome, side_total

Action = int
"""An action is a small int: its range says what it is (see the ``*_BASE`` names)."""

SEATS = ("p1", "p2")
COLORS = ("black", "red")
FIRST_BASE = 0
FORCE_BASE = 10
WEAPON_BASE = 20
PLAY_BASE = 100
DRAW_BASE = 200
DECK_BASE = 1000

DEAL, SHUFFLE, FIRST, WEAPON, STRATEGY, DRAW, FORCE, OVER = range(8)
PHASES = ("deal", "shuffle", "first", "weapon", "strategy", "draw", "force", "over")
HAND = 3
EXHAUSTION_LOSS = 2
DEFAULT_UNITS = 5
MAX_UNITS = 24
"""48 unit cards in the box, so at most 24 each."""

DRAW_RESULT = 2
"""``winner`` when the game is drawn."""


@dataclass(frozen=True)
class BattleReport:
    """What everybody saw when a battle was resolved."""

    number: int
    attacker: int
    weapons: tuple[int, int]
    strategy: tuple[int, int]
    units: tuple[UnitInPlay, ...]
    forces: tuple[int, int]
    cards: tuple[tuple[int, ...], tuple[int, ...]]
    totals: tuple[int, int]
    winner: int | None
    lost: tuple[int, int]
    recovered: tuple[int, int]
    exhausted: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        """The battle as JSON (kept in records and serialized states); :meth:`from_json` reads it
        back."""
        return {
            "number": self.number,
            "attacker": self.attacker,
            "weapons": list(self.weapons),
            "strategy": list(self.strategy),
            "units": [list(u) for u in self.units],
            "forces": list(self.forces),
            "cards": [list(c) for c in self.cards],
            "totals": list(self.totals),
            "winner": self.winner,
            "lost": list(self.lost),
            "recovered": list(self.recovered),
            "exhausted": list(self.exhausted),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> BattleReport:
        """The battle report written by :meth:`to_json`."""
        return cls(
            d["number"],
            d["attacker"],
            (d["weapons"][0], d["weapons"][1]),
            (d["strategy"][0], d["strategy"][1]),
            tuple((u[0], u[1]) for u in d["units"]),
            (d["forces"][0], d["forces"][1]),
            (tuple(d["cards"][0]), tuple(d["cards"][1])),
            (d["totals"][0], d["totals"][1]),
            d["winner"],
            (d["lost"][0], d["lost"][1]),
            (d["recovered"][0], d["recovered"][1]),
            tuple(d["exhausted"]),
        )


def max_length(book: CardBook) -> int:
    """An honest bound on a game's actions: the setup (6 strategy cards, two decks,
    the first attacker), then per battle 8 actions and at most one reshuffle (the
    battle count is capped by ``max_battles``)."""
    d = book.deck_size
    return 2 * HAND + 2 * d + 1 + book.set.rules.max_battles * (8 + 2 * d)


class ForceDuelState(GameState[Action]):
    """A Force Duel position; mutable, copied with :meth:`clone`."""

    def __init__(self, book: CardBook, units: int = DEFAULT_UNITS, cards: str = HOUSE) -> None:
        self.book = book
        self.cards = cards
        """How the card set was named (``house`` or a path): kept for records."""
        self.units = units
        self.facts = GameFacts("force-duel", 2, True, True, max_length(book))
        nb = len(book.battle)
        self.nb = nb
        self.alive = [units, units]
        self.graves = [0, 0]
        self.decks: list[list[int]] = [[], []]
        """Each battle deck, top card first."""
        self.pools: list[list[int]] = [list(book.deck), list(book.deck)]
        """Cards still to be shuffled into each deck (counts per kind)."""
        self.out: list[list[int]] = [[0] * book.kinds, [0] * book.kinds]
        """Cards out of the game until the next reshuffle (counts per kind)."""
        self.hands: list[list[int]] = [[], []]
        self.strat_deck = list(book.strategy_deck)
        self.strat_discard = [0] * len(book.strategy)
        self.phase = DEAL
        self.actor = 0
        self.dealt = 0
        self.setup = True
        self.attacker = 0
        self.last_winner = -1
        self.weapons: list[int | None] = [None, None]
        self.strategy: list[int | None] = [None, None]
        self.forces: list[int | None] = [None, None]
        self.in_play: list[UnitInPlay] = []
        self.cancelled: list[UnitInPlay] = []
        self.battles = 0
        self.reshuffles = 0
        self.last: BattleReport | None = None
        self.winner: int | None = None

    # -- the interface ------------------------------------------------------------

    def current_player(self) -> int:
        """Whose decision it is: the seat to act, :data:`CHANCE` while dealing, shuffling,
        choosing who starts or drawing, :data:`TERMINAL` when the game is over."""
        if self.phase == OVER:
            return TERMINAL
        if self.phase in (DEAL, SHUFFLE, FIRST, DRAW):
            return CHANCE
        return self.actor

    def legal_actions(self) -> list[Action]:
        """Every legal action now, sorted (during chance, the chance outcomes)."""
        phase = self.phase
        if phase in (DEAL, SHUFFLE, FIRST, DRAW):
            return [a for a, _ in self.chance_outcomes()]
        if phase == WEAPON:
            return [WEAPON_BASE + w for w in self.weapon_choices(self.actor)]
        if phase == STRATEGY:
            return [PLAY_BASE + s for s in sorted(set(self.hands[self.actor]))]
        if phase == FORCE:
            return [FORCE_BASE + k for k in self.force_choices(self.actor)]
        return []

    def chance_outcomes(self) -> list[tuple[Action, Fraction]]:
        """Each chance outcome with its exact probability (who starts 1/2 each; a card drawn in
        proportion to the pool's counts); empty when it is not chance's turn."""
        phase = self.phase
        if phase == FIRST:
            return [(FIRST_BASE, Fraction(1, 2)), (FIRST_BASE + 1, Fraction(1, 2))]
        if phase == SHUFFLE:
            counts, base = self.pools[self.actor], DECK_BASE
        elif phase in (DEAL, DRAW):
            counts, base = self.strat_deck, DRAW_BASE
        else:
            return []
        total = sum(counts)
        return [(base + k, Fraction(n, total)) for k, n in enumerate(counts) if n]

    def returns(self) -> list[float]:
        """1 for the winner and -1 for the loser; 0 each while the game goes on or for a draw."""
        if self.winner is None or self.winner == DRAW_RESULT:
            return [0.0, 0.0]
        return [1.0, -1.0] if self.winner == 0 else [-1.0, 1.0]

    def clone(self) -> ForceDuelState:
        """An independent copy: applying actions to it never changes this state."""
        twin = ForceDuelState.__new__(ForceDuelState)
        twin.__dict__.update(self.__dict__)
        twin.alive = list(self.alive)
        twin.graves = list(self.graves)
        twin.decks = [list(d) for d in self.decks]
        twin.pools = [list(p) for p in self.pools]
        twin.out = [list(o) for o in self.out]
        twin.hands = [list(h) for h in self.hands]
        twin.strat_deck = list(self.strat_deck)
        twin.strat_discard = list(self.strat_discard)
        twin.weapons = list(self.weapons)
        twin.strategy = list(self.strategy)
        twin.forces = list(self.forces)
        twin.in_play = list(self.in_play)
        twin.cancelled = list(self.cancelled)
        return twin

    def apply_action_unchecked(self, action: Action) -> None:
        """Apply ``action``; legality is the caller's job (an illegal action leaves the
        state undefined)."""
        phase, p = self.phase, self.actor
        if phase == DEAL:
            self._take_strategy(p, action - DRAW_BASE)
            self.dealt += 1
            if self.dealt == 2 * HAND:
                self.phase, self.actor = SHUFFLE, 0
            else:
                self.actor = self.dealt % 2
        elif phase == SHUFFLE:
            kind = action - DECK_BASE
            self.decks[p].append(kind)
            self.pools[p][kind] -= 1
            if not any(self.pools[p]):
                if p == 0:
                    self.actor = 1
                elif self.setup:
                    self.setup = False
                    self.phase = FIRST
                else:
                    self._start_battle()
        elif phase == FIRST:
            self.attacker = action - FIRST_BASE
            self._start_battle()
        elif phase == WEAPON:
            self.weapons[p] = action - WEAPON_BASE
            if p == self.attacker:
                self.phase = STRATEGY
            else:
                self.phase, self.actor = FORCE, self.attacker
        elif phase == STRATEGY:
            s = action - PLAY_BASE
            self.strategy[p] = s
            self.hands[p].remove(s)
            if p == self.attacker:
                self.actor = 1 - p
            else:
                self.phase, self.actor = DRAW, self.attacker
                self._refill_strategy()
        elif phase == DRAW:
            self._take_strategy(p, action - DRAW_BASE)
            if p == self.attacker:
                self.actor = 1 - p
                self._refill_strategy()
            else:
                self._after_strategy()
        elif phase == FORCE:
            self.forces[p] = action - FORCE_BASE
            if p == self.attacker:
                self.actor = 1 - p
            else:
                self._resolve()

    # -- rules --------------------------------------------------------------------

    def held(self) -> tuple[Held, Held]:
        """The effects each player holds now (from the strategy cards chosen and the units in
        play)."""
        return held_effects(self.book, self.strategy, self.in_play)

    def battle_cards(self, p: Seat) -> int:
        """How many battle cards (not unit cards) are left in ``p``'s deck (``p``: 0, 1,
        ``"p1"`` or ``"p2"``)."""
        p = player_index(p, SEATS)
        nb = self.nb
        return sum(1 for k in self.decks[p] if k < nb)

    def weapon_choices(self, p: Seat) -> list[int]:
        """The weapons ``p`` (0, 1, ``"p1"`` or ``"p2"``) may name: one if an effect forces
        it, else all. The attacker names his before the strategy cards, so only unit cards
        bind him."""
        p = player_index(p, SEATS)
        held = self.held()
        forced = forced_weapon(self.book, held[1 - p], with_strategy=p != self.attacker)
        return [forced] if forced is not None else list(range(len(self.book.weapons)))

    def force_choices(self, p: Seat) -> tuple[int, ...]:
        """The Force card counts player ``p`` (0, 1, ``"p1"`` or ``"p2"``) may show, given
        the enemy's effects and ``p``'s battle cards."""
        p = player_index(p, SEATS)
        return force_choices(self.held()[1 - p], self.battle_cards(p))

    def _take_strategy(self, p: int, s: int) -> None:
        self.strat_deck[s] -= 1
        self.hands[p].append(s)
        self.hands[p].sort()

    def _refill_strategy(self) -> None:
        """House rule: an empty strategy deck is rebuilt from the played cards."""
        if not any(self.strat_deck):
            self.strat_deck = self.strat_discard
            self.strat_discard = [0] * len(self.book.strategy)

    def _after_strategy(self) -> None:
        """Both strategy cards are down and drawn for: the defender's card may force
        the attacker's weapon (Rules: strategy cards; "Bows Only"), then the defender
        names his weapon."""
        att = self.attacker
        forced = forced_weapon(self.book, self.held()[1 - att])
        if forced is not None:
            self.weapons[att] = forced
        self.phase, self.actor = WEAPON, 1 - att

    def _lay_out_units(self) -> None:
        """Rules: Unit cards. Unit cards among the top three of a deck are laid out
        (and the cards behind move up, so this repeats); if both players laid out unit
        cards, they cancel pairwise, first against first (house rule for more than one),
        and those left set the rules of this battle. All leave the game."""
        laid: list[list[int]] = [[], []]
        for p in (0, 1):
            deck = self.decks[p]
            while True:
                at = next((i for i in range(min(MAX_FORCE, len(deck))) if deck[i] >= self.nb), -1)
                if at < 0:
                    break
                kind = deck.pop(at)
                laid[p].append(kind)
                self.out[p][kind] += 1
        pairs = min(len(laid[0]), len(laid[1]))
        self.cancelled = [(p, k) for p in (0, 1) for k in laid[p][:pairs]]
        self.in_play = [(p, k) for p in (0, 1) for k in laid[p][pairs:]]

    def _start_battle(self) -> None:
        self.weapons = [None, None]
        self.strategy = [None, None]
        self.forces = [None, None]
        self._lay_out_units()
        self.phase, self.actor = WEAPON, self.attacker

    def _resolve(self) -> None:
        """Rules: Battle. Score both sides, turn the loser's unit(s) to gravestones,
        remove the used cards, then deck exhaustion, the end of the game, the next
        attacker."""
        book = self.book
        held = self.held()
        w = (_some(self.weapons[0]), _some(self.weapons[1]))
        f = (_some(self.forces[0]), _some(self.forces[1]))
        rules = [
            side_rules(book, held[p], held[1 - p], (w[p], w[1 - p]), self.battle_cards(p))
            for p in (0, 1)
        ]
        used = (tuple(self.decks[0][: f[0]]), tuple(self.decks[1][: f[1]]))
        totals = tuple(
            side_total(tuple(effective(book, k, w[p]) for k in used[p]), rules[p], f[p], f[1 - p])
            for p in (0, 1)
        )
        res = outcome(totals[0], totals[1], rules[0], rules[1])
        winner = None if res == 0 else (0 if res == 1 else 1)
        lost, back = [0, 0], [0, 0]
        if winner is not None:
            loser = 1 - winner
            loss = 0 if shielded(held[loser]) else 1 + extra_loss(held[winner])
            lost[loser] = min(loss, self.alive[loser])
            self.alive[loser] -= lost[loser]
            self.graves[loser] += lost[loser]
            back[winner] = min(recovered(held[winner]), self.graves[winner])
            self.alive[winner] += back[winner]
            self.graves[winner] -= back[winner]
        for p in (0, 1):
            for k in used[p]:
                self.out[p][k] += 1
            del self.decks[p][: f[p]]
            s = _some(self.strategy[p])
            self.strat_discard[s] += 1
        exhausted = tuple(p for p in (0, 1) if self.battle_cards(p) == 0)
        for p in exhausted:
            loss = min(EXHAUSTION_LOSS, self.alive[p])
            self.alive[p] -= loss
            self.graves[p] += loss
            lost[p] += loss
        self.last = BattleReport(
            self.battles + 1,
            self.attacker,
            w,
            (_some(self.strategy[0]), _some(self.strategy[1])),
            tuple(self.in_play),
            f,
            used,
            (totals[0], totals[1]),
            winner,
            (lost[0], lost[1]),
            (back[0], back[1]),
            exhausted,
        )
        self.battles += 1
        if winner is not None:
            self.attacker = self.last_winner = winner
        elif self.last_winner >= 0:
            self.attacker = self.last_winner
        self.in_play, self.cancelled = [], []
        if self.alive[0] == 0 or self.alive[1] == 0 or self.battles >= book.set.rules.max_battles:
            self._finish()
            return
        if exhausted:
            self._reshuffle()
        else:
            self._start_battle()

    def _reshuffle(self) -> None:
        """Rules: deck exhaustion. Both decks get all their cards back and are
        shuffled again; the strategy deck gets the played cards back."""
        self.reshuffles += 1
        self.decks = [[], []]
        self.pools = [list(self.book.deck), list(self.book.deck)]
        self.out = [[0] * self.book.kinds, [0] * self.book.kinds]
        self.strat_deck = [a + b for a, b in zip(self.strat_deck, self.strat_discard, strict=True)]
        self.strat_discard = [0] * len(self.book.strategy)
        self.weapons = [None, None]
        self.strategy = [None, None]
        self.forces = [None, None]
        self.phase, self.actor = SHUFFLE, 0

    def _finish(self) -> None:
        a, b = self.alive
        self.winner = DRAW_RESULT if a == b else (0 if a > b else 1)
        self.phase = OVER

    # -- questions ----------------------------------------------------------------

    def force_question(self, player: Seat) -> ForceQuestion:
        """The Force question of ``player`` (0, 1, ``"p1"`` or ``"p2"``) from what he
        knows: both weapons, the cards on the table, his own deck, and the opponent's
        remaining battle cards (his deck minus the cards out of the game: public) in
        unknown order. Needs both weapons named (the force phase)."""
        player = player_index(player, SEATS)
        if self.phase != FORCE:
            raise InputError(
                f"the Force question is asked once both weapons are named, not in the "
                f"{PHASES[self.phase]} phase"
            )
        other = 1 - player
        pool: Counter[int] = Counter(
            {k: self.book.deck[k] - self.out[other][k] for k in range(self.nb)}
        )
        mine = [k for k in self.decks[player] if k < self.nb][:MAX_FORCE]
        return question(
            self.book,
            player,
            (_some(self.weapons[0]), _some(self.weapons[1])),
            self.held(),
            mine,
            self.battle_cards(player),
            +pool,
        )

    # -- notation -----------------------------------------------------------------

    def action_to_string(self, action: Action) -> str:
        """Record notation (engines/records.py lines): ``first attacker p1``,
        ``p1 draws Bow Bonus``, ``p1 deck bow5+1``, ``weapon bow``,
        ``play Two-Card Limit``, ``force 2``."""
        book = self.book
        if action >= DECK_BASE:
            return f"{SEATS[self.actor]} deck {book.labels[action - DECK_BASE]}"
        if action >= DRAW_BASE:
            return f"{SEATS[self.actor]} draws {book.strategy[action - DRAW_BASE].name}"
        if action >= PLAY_BASE:
            return f"play {book.strategy[action - PLAY_BASE].name}"
        if action >= WEAPON_BASE:
            return f"weapon {book.weapons[action - WEAPON_BASE]}"
        if action >= FORCE_BASE:
            return f"force {action - FORCE_BASE}"
        return f"first attacker {SEATS[action - FIRST_BASE]}"

    def public_action_string(self, action: Action, viewer: Seat) -> str | None:
        """What ``viewer`` (0, 1, ``"p1"`` or ``"p2"``) sees of ``action`` taken in this
        state (None: nothing worth saying): his own draws and commits in full, the other
        player's hidden ones as "a card", and no line for each card shuffled into the other
        player's deck."""
        viewer = player_index(viewer, SEATS, "viewer")
        mover = self.current_player()
        if self.phase == SHUFFLE:
            return self.action_to_string(action) if self.actor == viewer else None
        if self.phase in (DEAL, DRAW) and self.actor != viewer:
            return f"{SEATS[self.actor]} draws a strategy card"
        if mover != CHANCE and mover != viewer:
            if self.phase == STRATEGY:
                return f"{SEATS[mover]} puts a strategy card down"
            if self.phase == FORCE:
                return f"{SEATS[mover]} chooses a Force card"
        return self.action_to_string(action)

    def _aliases(self, action: Action) -> list[str]:
        book = self.book
        out = [self.action_to_string(action)]
        if DECK_BASE <= action:
            out.append(book.labels[action - DECK_BASE])
        elif DRAW_BASE <= action:
            out.append(book.strategy[action - DRAW_BASE].name)
        elif PLAY_BASE <= action:
            out.append(book.strategy[action - PLAY_BASE].name)
        elif WEAPON_BASE <= action:
            out.append(book.weapons[action - WEAPON_BASE])
        elif FORCE_BASE <= action:
            out.append(str(action - FORCE_BASE))
        else:
            out.append(SEATS[action - FIRST_BASE])
        return out

    def parse_action(self, text: str) -> Action:
        """The legal action written ``text``: the canonical notation or its short form
        (``bow``, ``2``, ``Bow Bonus``), case, spaces and hyphens ignored (a battle
        card's sign is kept when that decides)."""
        legal = self.legal_actions()
        for norm in (normal_name, normal_label):
            wanted = norm(text)
            hits = [a for a in legal if any(norm(s) == wanted for s in self._aliases(a))]
            if len(hits) == 1:
                return hits[0]
        raise IllegalActionError(self._why(text))

    def why_illegal(self, action: Action) -> str:
        """Why ``action``, found illegal, cannot be taken now, naming it in the notation when it
        has one."""
        try:
            text = self.action_to_string(action)
        except (IndexError, KeyError):
            text = repr(action)
        return self._why(text)

    def _why(self, text: str) -> str:
        if self.phase == OVER:
            return f"{text.strip()!r}: the game is over"
        legal = ", ".join(self.action_to_string(a) for a in self.legal_actions())
        who = "chance" if self.current_player() == CHANCE else SEATS[self.actor]
        why = ""
        if self.phase == FORCE:
            why = self._force_reason()
        elif self.phase == WEAPON and len(self.weapon_choices(self.actor)) == 1:
            why = " (a card in play forces the weapon)"
        return (
            f"{text.strip()!r} is not legal for {who} in the {PHASES[self.phase]} phase{why}; "
            f"legal: {legal}"
        )

    def _force_reason(self) -> str:
        choices = self.force_choices(self.actor)
        if max(choices) < min(MAX_FORCE, self.battle_cards(self.actor)):
            return f" (a card in play limits {SEATS[self.actor]} to {max(choices)} cards)"
        if max(choices) < MAX_FORCE:
            return f" ({SEATS[self.actor]} has only {self.battle_cards(self.actor)} battle cards)"
        if min(choices) > 1:
            return f" (a card in play makes {SEATS[self.actor]} use at least {min(choices)})"
        return ""

    # -- what a player sees -------------------------------------------------------

    def information_state_string(self, player: Seat) -> str:
        """Everything ``player`` (0, 1, ``"p1"`` or ``"p2"``) knows: the public table, his
        own deck in order and his hand; of the opponent only the counts, and his strategy
        card once both are down. Commits are hidden from the other player until revealed
        (turn-based simultaneous moves)."""
        player = player_index(player, SEATS)
        book = self.book
        other = 1 - player
        lines = [
            f"force-duel {SEATS[player]} ({COLORS[player]}) battle {self.battles + 1} "
            f"phase {PHASES[self.phase]} to-act "
            + ("chance" if self.current_player() == CHANCE else SEATS[self.actor]),
            f"attacker {SEATS[self.attacker]} last-winner "
            + (SEATS[self.last_winner] if self.last_winner >= 0 else "-"),
            f"units {self.alive[0]}/{self.graves[0]} {self.alive[1]}/{self.graves[1]}",
            "my deck " + " ".join(book.labels[k] for k in self.decks[player]),
            f"their deck {len(self.decks[other])} cards",
            "my hand " + ", ".join(book.strategy[s].name for s in self.hands[player]),
            f"their hand {len(self.hands[other])}",
            f"strategy deck {sum(self.strat_deck)} discard "
            + _counts(book_names(book), self.strat_discard),
        ]
        for p in (0, 1):
            lines.append(f"out {SEATS[p]} " + _counts(book.labels, self.out[p]))
        for p in (0, 1):
            w = self.weapons[p]
            lines.append(f"weapon {SEATS[p]} " + ("-" if w is None else book.weapons[w]))
        both_down = None not in self.strategy
        for p in (0, 1):
            s = self.strategy[p]
            shown = (
                "-"
                if s is None
                else ("hidden" if p != player and not both_down else book.strategy[s].name)
            )
            lines.append(f"strategy {SEATS[p]} {shown}")
        f = self.forces[player]
        lines.append("my force " + ("-" if f is None else str(f)))
        lines.append("their force " + ("chosen" if self.forces[other] is not None else "-"))
        lines.append(
            "units in play " + " ".join(f"{SEATS[o]}:{book.labels[k]}" for o, k in self.in_play)
        )
        lines.append(
            "cancelled " + " ".join(f"{SEATS[o]}:{book.labels[k]}" for o, k in self.cancelled)
        )
        if self.last is not None:
            lines.append("last " + json.dumps(self.last.to_json(), sort_keys=True))
        return "\n".join(lines)

    # -- saving -------------------------------------------------------------------

    def serialize(self) -> str:
        """The card set (canonical JSON) on the first line, the state as JSON on the
        second."""
        body = {
            "cards": self.cards,
            "units": self.units,
            "alive": self.alive,
            "graves": self.graves,
            "decks": self.decks,
            "pools": self.pools,
            "out": self.out,
            "hands": self.hands,
            "strat_deck": self.strat_deck,
            "strat_discard": self.strat_discard,
            "phase": self.phase,
            "actor": self.actor,
            "dealt": self.dealt,
            "setup": self.setup,
            "attacker": self.attacker,
            "last_winner": self.last_winner,
            "weapons": self.weapons,
            "strategy": self.strategy,
            "forces": self.forces,
            "in_play": [list(u) for u in self.in_play],
            "cancelled": [list(u) for u in self.cancelled],
            "battles": self.battles,
            "reshuffles": self.reshuffles,
            "last": None if self.last is None else self.last.to_json(),
            "winner": self.winner,
        }
        return self.book.canonical + "\n" + json.dumps(body, separators=(",", ":"))

    @classmethod
    def deserialize(cls, text: str) -> ForceDuelState:
        """Rebuild a state from :meth:`serialize`; :class:`InputError` if malformed."""
        head, sep, tail = text.partition("\n")
        if not sep:
            raise InputError("saved Force Duel state: expected two lines")
        book = book_from_canonical(head)
        try:
            d = json.loads(tail)
            state = cls(book, d["units"], d["cards"])
            for key in (
                "alive graves decks pools out hands strat_deck strat_discard phase actor dealt "
                "setup attacker last_winner weapons strategy forces battles reshuffles winner"
            ).split():
                setattr(state, key, d[key])
            state.in_play = [(u[0], u[1]) for u in d["in_play"]]
            state.cancelled = [(u[0], u[1]) for u in d["cancelled"]]
            state.last = None if d["last"] is None else BattleReport.from_json(d["last"])
        except (ValueError, KeyError, TypeError, IndexError) as e:
            raise InputError(f"saved Force Duel state is malformed: {e}") from None
        return state

    def card_count(self, p: Seat) -> int:
        """Every card of ``p``'s battle deck (``p``: 0, 1, ``"p1"`` or ``"p2"``) is in the
        deck, still to be shuffled in, or out of the game: this is always the deck size
        (conservation)."""
        p = player_index(p, SEATS)
        return len(self.decks[p]) + sum(self.pools[p]) + sum(self.out[p])


def book_names(book: CardBook) -> tuple[str, ...]:
    """The names of the card set's strategy cards, in their index order."""
    return tuple(s.name for s in book.strategy)


def _counts(names: tuple[str, ...], counts: list[int]) -> str:
    return " ".join(f"{names[k]}x{n}" if n > 1 else names[k] for k, n in enumerate(counts) if n)


def _some(value: int | None) -> int:
    if value is None:  # pragma: no cover - the phases guarantee it
        raise AssertionError("a battle value is missing")
    return value


def parse_units(text: str) -> int:
    """The ``units`` option: a whole number from 1 to 24."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_UNITS:
        raise InputError(f"option units: {text!r} must be a whole number from 1 to {MAX_UNITS}")
    return n


def new_game(cards: str = HOUSE, units: int = DEFAULT_UNITS) -> ForceDuelState:
    """A new game before the first chance node, with the card set ``cards`` (``house``
    or a TOML path)."""
    return ForceDuelState(load_book(cards), units, cards)
