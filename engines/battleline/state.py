"""The Battle Line game: setup, turns, the nine flags, all ten tactics, claims, game end.

Rules: the GMT rulebook (seed 000) with docs/rulings.md, rulings 1-17. A claim is
legal exactly when it holds, as the solver's fast exact decider says (no SAT call on
the hot path); the engine keeps the certificate (the SAT proof) of every claim it
allows, unless ``certify`` is off, and answers a refused claim with the solver's
witness.

For searches: :meth:`BattleLineState.clone` copies without serializing, and
:meth:`BattleLineState.fix_hidden` deals a sample of the hidden cards (a hand, the
decks' order) into a copy, after which chance draws in that order.

Turn shape (each step a decision of the player to move unless it says otherwise):
claims at the start of the turn; play one card, or pass when no troop can be played
(docs/rulings.md 12); for Scout, draw up to three then return two (docs/rulings.md 13); after Mud
leaves a flag, each owner of a four-card side discards one (docs/rulings.md 10, the owner
decides even when it is not his turn); claims (standard timing only, docs/rulings.md 14);
draw one card from a deck of the player's choice while the hand holds fewer than seven
(a chance node picks the card unless a Scout put a known card on top).

Ruling 17 (setting ``stalemate``; the rulebook says only that play goes on until the game is
decided): if two turns in a row neither player could do anything but pass (no card to
play, no claim, no card to draw), nothing can change any more, so the game ends; the
player holding more flags wins, and equal flags are a draw. With ``stalemate=idle`` any
two turns in a row with no card played, claimed or drawn end it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from operator import attrgetter
from typing import Any, Literal, Protocol

from battlejudge.engines.battleline.actions import (
    CARD,
    CLAIM,
    DESERTER,
    DISCARD,
    DISCARD_PILE,
    DRAW,
    END_CLAIMS,
    PASS,
    PLAY,
    REDEPLOY,
    RETURN,
    SCOUT,
    TACTICS_DECK,
    TRAITOR,
    TROOP_DECK,
    Action,
)
from battlejudge.engines.battleline.cards import (
    ALL_CARDS,
    ENVIRONMENT,
    FOG,
    LEADERS,
    MORALE,
    MUD,
    TACTIC_CARDS,
    TROOPS,
    CardCode,
    Naming,
)
from battlejudge.engines.battleline.cards import (
    DESERTER as DESERTER_CARD,
)
from battlejudge.engines.battleline.cards import (
    REDEPLOY as REDEPLOY_CARD,
)
from battlejudge.engines.battleline.cards import (
    SCOUT as SCOUT_CARD,
)
from battlejudge.engines.battleline.cards import (
    TRAITOR as TRAITOR_CARD,
)
from battlejudge.engines.battleline.config import RulesConfig
from battlejudge.engines.game import CHANCE, TERMINAL, GameFacts, GameState, IllegalActionError
from battlejudge.engines.seats import Seat, player_index
from battlejudge.solver import battleline as bl
from battlejudge.solver.battleline import decider
from battlejudge.solver.battleline.cards import TROOP_COUNT
from battlejudge.solver.errors import RuleError

NORTH, SOUTH = 0, 1
PLAYERS: tuple[Literal["north"], Literal["south"]] = ("north", "south")
HAND_SIZE = 7
FLAGS = 9
DRAW_GAME = 2
"""``winner`` of a game ended by the stalemate house rule with equal flags."""

BREAKTHROUGH, ENVELOPMENT = "breakthrough", "envelopment"
STALEMATE, FORFEIT = "stalemate", "forfeit"
END_REASONS = (BREAKTHROUGH, ENVELOPMENT, STALEMATE, FORFEIT)
"""How a game ends (:attr:`BattleLineState.end_reason`): three adjacent flags, five
flags (docs/rulings.md 15), a dead position (docs/rulings.md 17), or a player's forfeit (a referee's
verdict on a bot that broke the protocol or ran out of time)."""
ADJACENT_TRIPLES: tuple[tuple[int, int, int], ...] = tuple((i, i + 1, i + 2) for i in range(7))
"""The seven runs of three adjacent flags (0-based) that win by Breakthrough."""
ENVELOPMENT_FLAGS = 5


def flags_win(held: Sequence[bool]) -> str | None:
    """Does a player holding the flags ``held`` (one bool per flag, 0-based) win, and
    how? :data:`BREAKTHROUGH` for three adjacent flags (checked first: it names the
    faster way to win), :data:`ENVELOPMENT` for any five, else None (docs/rulings.md 15).
    The one place this rule lives: the engine, the bots and the referee ask it."""
    if any(held[a] and held[b] and held[c] for a, b, c in ADJACENT_TRIPLES):
        return BREAKTHROUGH
    if sum(1 for h in held if h) >= ENVELOPMENT_FLAGS:
        return ENVELOPMENT
    return None


# Phases
DEAL, CLAIM_START, PLAY_PHASE, SCOUT_DRAW, SCOUT_RETURN, MUD_DISCARD = range(6)
CLAIM_END, DRAW_PHASE, DRAW_CARD, OVER = range(6, 10)
PHASE_NAMES = (
    "deal",
    "claim-start",
    "play",
    "scout-draw",
    "scout-return",
    "mud-discard",
    "claim",
    "draw",
    "draw-card",
    "over",
)

_STEPS_OF_KIND: dict[int, tuple[int, ...]] = {
    PLAY: (PLAY_PHASE,),
    SCOUT: (PLAY_PHASE,),
    REDEPLOY: (PLAY_PHASE,),
    DESERTER: (PLAY_PHASE,),
    TRAITOR: (PLAY_PHASE,),
    PASS: (PLAY_PHASE,),
    DRAW: (DRAW_PHASE, SCOUT_DRAW),
    RETURN: (SCOUT_RETURN,),
    DISCARD: (MUD_DISCARD,),
    END_CLAIMS: (CLAIM_START, CLAIM_END),
}
"""The steps of the turn at which each kind of action (but a claim) may be taken."""
_CARD_ACTIONS = [Action(CARD, card=c) for c in ALL_CARDS]
"""The chance outcome of each card, made once (Actions are frozen)."""
_ACTION_ORDER = attrgetter("kind", "card", "flag", "source", "deck")
"""Action's own order (its fields in turn), as a fast sort key."""

FACTS = GameFacts(
    name="battleline", players=2, chance=True, hidden_information=True, max_length=6000
)


@dataclass(frozen=True, slots=True)
class Placed:
    """A card at a flag: formation cards carry the turn they were placed (docs/rulings.md 7);
    environment cards carry their owner. Immutable, so clones share them."""

    card: CardCode
    turn: int
    owner: int = -1


@dataclass
class Flag:
    """One flag on the table: each side's placed cards, the environment tactics there, and the
    seat that claimed it (-1 while unclaimed)."""

    sides: tuple[list[Placed], list[Placed]] = field(default_factory=lambda: ([], []))
    environment: list[Placed] = field(default_factory=list)
    claimed_by: int = -1

    def has(self, env: CardCode) -> bool:
        """Whether the environment tactic ``env`` (Fog or Mud) lies at this flag."""
        for p in self.environment:  # at most Fog and Mud: a loop beats any() here
            if p.card == env:
                return True
        return False

    @property
    def size(self) -> int:
        """Cards a complete formation needs here: 3, or 4 with Mud (docs/rulings.md 8)."""
        return decider.FORMATION_SIZES[self.has(MUD)]

    def open_slot(self, player: Seat) -> bool:
        """Whether ``player`` (0, 1, ``"north"`` or ``"south"``) may still place a card here:
        unclaimed and his side not complete (docs/rulings.md 12)."""
        return self.claimed_by < 0 and len(self.sides[player_index(player, PLAYERS)]) < self.size

    def copy(self) -> Flag:
        """An independent copy (the placed cards, immutable, are shared)."""
        return Flag(
            (list(self.sides[0]), list(self.sides[1])), list(self.environment), self.claimed_by
        )

    def completed_at(self, player: Seat) -> int | None:
        """The turn ``player``'s side completed: the latest placement among its cards."""
        side = self.sides[player_index(player, PLAYERS)]
        return max(p.turn for p in side) if len(side) == self.size else None

    def completed_first(self, player: int) -> bool | None:
        """Whether ``player``'s side (0 or 1) completed before the other side, as ties need
        (docs/rulings.md 7); None unless both sides are complete."""
        a, b = self.completed_at(player), self.completed_at(1 - player)
        return None if a is None or b is None else a < b


class ClaimLog(Protocol):
    """What the engine needs of a proof log (``battlejudge.proofs.log.ProofLog``)."""

    def append(
        self,
        *,
        question: dict[str, Any],
        verdict: str,
        certificate: dict[str, Any],
        game: str | None = None,
        turn: int | None = None,
        player: str | None = None,
        flag: int | None = None,
        time: str | None = None,
    ) -> dict[str, Any]:
        """Append one decided claim with its certificate and game context to the proof log;
        returns the record written."""


@dataclass
class ClaimRecord:
    """A claim decided by the engine, with its certified answer."""

    turn: int
    player: int
    flag: int
    """The flag claimed, numbered 1-9 as in the notation."""
    proof: bl.ProvedClaim


@dataclass(frozen=True)
class Outcome:
    """How a finished game ended: ``termination`` is one of :data:`END_REASONS`
    (``breakthrough``, ``envelopment``: docs/rulings.md 15; ``stalemate``: 17; ``forfeit``),
    ``winner`` the winning seat, or None for a draw (only a stalemate with equal flags).

    >>> Outcome("breakthrough", "north").result()
    'north'
    """

    termination: str
    winner: Literal["north", "south"] | None

    def result(self) -> str:
        """The record's ``Result`` tag: the winner's seat, or ``draw``."""
        return self.winner or "draw"


class BattleLineState(GameState[Action]):
    """A Battle Line game in progress. Create with :func:`new_game`."""

    facts = FACTS

    def __init__(
        self, config: RulesConfig | None = None, first: Seat = NORTH, *, certify: bool = True
    ) -> None:
        first = player_index(first, PLAYERS, "first")
        self.config = config or RulesConfig()
        # False only for internal replays of actions already judged (printing a record):
        # claims are then applied without a new proof and not added to ``claims``.
        self.certify = certify
        self.log: ClaimLog | None = None
        """Where every claim this game decides is appended (allowed or refused)."""
        self.game_id: str | None = None
        self.first = first
        self.hands: tuple[list[CardCode], list[CardCode]] = ([], [])
        # Decks: cards in unknown order, plus a stack of known cards on top (last = top),
        # each with the player who knows it (Scout returns).
        self.unknown: tuple[list[CardCode], list[CardCode]] = (list(TROOPS), list(TACTIC_CARDS))
        self.decks_ordered = False
        """True once :meth:`fix_hidden` has fixed the order of ``unknown`` (top = last):
        chance then deals and draws the top card."""
        self.known_top: tuple[list[tuple[CardCode, int]], list[tuple[CardCode, int]]] = ([], [])
        self.flags = [Flag() for _ in range(FLAGS)]
        self.discards: tuple[list[CardCode], list[CardCode]] = ([], [])
        self.tactics_played = [0, 0]
        self.leader_played = [False, False]
        self.turn = 0
        self.to_move = first
        self.phase = DEAL
        self.scout_draws = 0
        self.scout_returns = 0
        self.drawing = -1  # the deck a pending chance draw comes from
        self.after_scout_draw = False
        self.mud_queue: list[tuple[int, int]] = []  # (owner, flag) still to discard
        self.progress = False
        self.idle_turns = 0
        self.winner = -1
        self.end_reason: str | None = None
        """Once the game is over, how it ended (one of :data:`END_REASONS`)."""
        self.forfeited: tuple[int, str] | None = None
        """Who forfeited and why (:meth:`forfeit`), or None."""
        self.claims: list[ClaimRecord] = []
        self.history: list[Action] = []
        self.last_drawn = -1  # the card the latest draw gave (records print it)
        self._table_version = 0  # bumped by every action that changes the table
        self._face_up: tuple[int, frozenset[CardCode]] = (-1, frozenset())
        self._legal: list[Action] | None = None

    # -- basic facts -----------------------------------------------------------------
    @property
    def naming(self) -> Naming:
        """The card naming of the game's theme."""
        return Naming(self.config.theme)

    def current_player(self) -> int:
        """Whose decision it is: a seat (0 north, 1 south; during a Mud discard the seat that
        discards), :data:`CHANCE` while dealing or drawing, :data:`TERMINAL` when the game is
        over."""
        if self.phase == OVER:
            return TERMINAL
        if self.phase in (DEAL, DRAW_CARD):
            return CHANCE
        if self.phase == MUD_DISCARD:
            return self.mud_queue[0][0]
        return self.to_move

    def deck_size(self, deck: int) -> int:
        """How many cards are left in ``deck`` (the troop or the tactics deck)."""
        return len(self.unknown[deck]) + len(self.known_top[deck])

    def flags_held(self, player: Seat) -> list[int]:
        """The flags ``player`` (0, 1, ``"north"`` or ``"south"``) holds, numbered 1-9."""
        player = player_index(player, PLAYERS)
        return [i for i, f in enumerate(self.flags, start=1) if f.claimed_by == player]

    def flag(self, number: int) -> Flag:
        """Flag ``number`` (1-9, as the notation numbers it): ``self.flags[number - 1]``."""
        if not 1 <= number <= FLAGS:
            raise IllegalActionError(f"there is no {self.naming.flag} {number}")
        return self.flags[number - 1]

    def can_play_tactic(self, player: Seat) -> bool:
        """docs/rulings.md 11: never more than one tactic ahead of the opponent."""
        player = player_index(player, PLAYERS)
        return self.tactics_played[player] <= self.tactics_played[1 - player]

    def troop_playable(self, player: Seat) -> bool:
        """docs/rulings.md 12: may the player play a troop (a troop in hand and an open slot)?"""
        player = player_index(player, PLAYERS)
        has_troop = any(c < TROOP_COUNT for c in self.hands[player])
        return has_troop and any(f.open_slot(player) for f in self.flags)

    # -- claims ----------------------------------------------------------------------
    def claim_question(self, flag: int, player: Seat) -> bl.ClaimQuestion:
        """The flag question from the table: the claimant's and opponent's cards at the
        flag, every other face-up troop as seen, the environment, who completed first.
        ``flag`` is numbered 1-9; ``player`` (the claimant) is 0, 1, ``"north"`` or
        ``"south"``."""
        player = player_index(player, PLAYERS)
        f = self.flag(flag)
        mine = [bl.CARDS[p.card] for p in f.sides[player]]
        theirs = [bl.CARDS[p.card] for p in f.sides[1 - player]]
        here = {p.card for side in f.sides for p in side}
        seen = [bl.CARDS[c] for c in self.face_up_troops() if c not in here]
        mine_first = f.completed_first(player)
        first = None if mine_first is None else ("mine" if mine_first else "theirs")
        return bl.ClaimQuestion(
            mine, theirs, seen, mud=f.has(MUD), fog=f.has(FOG), completed_first=first
        )

    def claim_window_open(self) -> bool:
        """May the player to move claim now (docs/rulings.md 14)? At the start of his turn
        (an empty window is skipped, so also while he has yet to play), and under the
        standard timing after playing, before drawing."""
        if self.phase in (CLAIM_START, PLAY_PHASE):
            return True
        return self.config.claim_timing == "standard" and self.phase in (CLAIM_END, DRAW_PHASE)

    def face_up_troops(self) -> frozenset[CardCode]:
        """Every troop face up: at the flags (claimed ones too) and in both discard piles."""
        if self._face_up[0] != self._table_version:
            cards = {
                p.card for f in self.flags for side in f.sides for p in side if p.card < TROOP_COUNT
            }
            cards.update(c for pile in self.discards for c in pile if c < TROOP_COUNT)
            self._face_up = (self._table_version, frozenset(cards))
        return self._face_up[1]

    def claim_pool(self) -> decider.Pool:
        """The troops an opponent may still add at any flag, as the fast decider's masks:
        every troop not face up (:func:`decider.claim_pool`, docs/rulings.md 5)."""
        return decider.claim_pool(self.face_up_troops())

    def claimable(self, flag: int, player: Seat, pool: decider.Pool | None = None) -> bool:
        """Does the claim hold? Decided exactly by the solver's fast decider
        (:func:`battlejudge.solver.battleline.decider.claim_holds`, docs/rulings.md 4-7), which
        agrees with the SAT proof :meth:`judge_claim` gives; a claim is legal iff this
        holds. ``player`` is 0, 1, ``"north"`` or ``"south"``; ``pool``: :meth:`claim_pool`,
        when the caller has it already.
        """
        player = player_index(player, PLAYERS)
        f = self.flag(flag)
        mine = f.sides[player]
        n = f.size
        if f.claimed_by >= 0 or len(mine) != n:
            return False
        return decider.claim_holds(
            [p.card for p in mine],
            [p.card for p in f.sides[1 - player]],
            self.claim_pool() if pool is None else pool,
            n,
            f.has(FOG),
            f.completed_first(player) is False,  # docs/rulings.md 7: he completed last
        )

    def judge_claim(self, flag: int, player: Seat) -> bl.ProvedClaim:
        """The certified answer to ``player``'s claim (0, 1, ``"north"`` or ``"south"``) at
        flag ``flag`` (1-9): a proof, or the witness that beats it."""
        player = player_index(player, PLAYERS)
        f = self.flag(flag)
        if f.claimed_by >= 0:
            raise IllegalActionError(f"{self.naming.flag} {flag} is already claimed")
        if len(f.sides[player]) != f.size:
            raise IllegalActionError(
                f"{PLAYERS[player]} has {len(f.sides[player])} of {f.size} cards at "
                f"{self.naming.flag} {flag}: a claim needs a complete formation"
            )
        return bl.prove(self.claim_question(flag, player))

    # -- legal actions ---------------------------------------------------------------
    def legal_actions(self) -> list[Action]:
        """Every legal action now, sorted (STYLE: one order for every game); a fresh list the
        caller may change."""
        if self._legal is None:
            self._legal = sorted(self._generate(), key=_ACTION_ORDER)
        return list(self._legal)

    def _claims(self, player: int) -> list[Action]:
        out = []
        pool = None
        for i, f in enumerate(self.flags, start=1):
            if f.claimed_by < 0 and len(f.sides[player]) == f.size:
                pool = self.claim_pool() if pool is None else pool
                if self.claimable(i, player, pool):
                    out.append(Action(CLAIM, flag=i))
        return out

    def _generate(self) -> list[Action]:
        p = self.current_player()
        if self.phase == OVER:
            return []
        if p == CHANCE:
            return [a for a, _ in self.chance_outcomes()]
        if self.phase in (CLAIM_START, CLAIM_END):
            return [*self._claims(p), Action(END_CLAIMS)]
        if self.phase == PLAY_PHASE:
            return self._plays(p)
        if self.phase in (SCOUT_DRAW, DRAW_PHASE):
            return [Action(DRAW, deck=d) for d in (TROOP_DECK, TACTICS_DECK) if self.deck_size(d)]
        if self.phase == SCOUT_RETURN:
            return [Action(RETURN, card=c) for c in sorted(set(self.hands[p]))]
        owner, flag = self.mud_queue[0]
        side = self.flags[flag].sides[owner]  # mud_queue holds list indexes
        return [Action(DISCARD, card=pl.card, source=flag + 1) for pl in side]

    def _plays(self, p: int) -> list[Action]:
        out: list[Action] = []
        opp = 1 - p
        open_flags = [i for i, f in enumerate(self.flags, start=1) if f.open_slot(p)]
        live = [i for i, f in enumerate(self.flags, start=1) if f.claimed_by < 0]
        tactic_ok = self.can_play_tactic(p)
        removable = self.config.environment_removable
        for c in sorted(set(self.hands[p])):
            if c < TROOP_COUNT:
                out += [Action(PLAY, card=c, flag=i) for i in open_flags]
                continue
            if not tactic_ok:
                continue
            if c in MORALE:
                if c in LEADERS and self.leader_played[p]:
                    continue  # docs/rulings.md 3: a second Leader stays in hand
                out += [Action(PLAY, card=c, flag=i) for i in open_flags]
            elif c in ENVIRONMENT:
                out += [Action(PLAY, card=c, flag=i) for i in live]
            elif c == SCOUT_CARD:
                out.append(Action(SCOUT, card=SCOUT_CARD))
            elif c == REDEPLOY_CARD:
                for i in live:
                    f = self.flags[i - 1]
                    for pl in f.sides[p]:
                        dests = [j for j in open_flags if j != i] + [DISCARD_PILE]
                        out += [Action(REDEPLOY, card=pl.card, source=i, flag=j) for j in dests]
                    for env in f.environment:
                        if removable and env.owner == p:
                            dests = [j for j in live if j != i] + [DISCARD_PILE]
                            out += [
                                Action(REDEPLOY, card=env.card, source=i, flag=j) for j in dests
                            ]
            elif c == DESERTER_CARD:
                for i in live:
                    f = self.flags[i - 1]
                    out += [Action(DESERTER, card=pl.card, source=i) for pl in f.sides[opp]]
                    if removable:
                        out += [
                            Action(DESERTER, card=e.card, source=i)
                            for e in f.environment
                            if e.owner == opp
                        ]
            elif c == TRAITOR_CARD:
                for i in live:
                    for pl in self.flags[i - 1].sides[opp]:
                        if pl.card < TROOP_COUNT:
                            out += [
                                Action(TRAITOR, card=pl.card, source=i, flag=j) for j in open_flags
                            ]
        if not self.troop_playable(p):
            out.append(Action(PASS))
        return out

    def why_illegal(self, action: Action) -> str:
        """The rule ``action`` breaks here, in one sentence citing the ruling (replay and
        ``play`` show it): a card not in hand, a flag claimed or full, the tactics limit
        (docs/rulings.md 11), a second Leader (3), passing while a troop can be played
        (12), Traitor on a tactic (9), Fog or Mud that stay (10), a claim out of its time
        (14) or refuted (with the solver's witness), an action of another step of the turn.
        """
        if self.phase == OVER:
            return "the game is over"
        legal = self.legal_actions()
        note = self.naming.flag
        text = action.notation(self.naming)
        if action in legal:
            return f"{text} is legal"
        who = self.current_player()
        if who == CHANCE:
            return f"{text}: chance decides now (a card is dealt or drawn)"
        name = PLAYERS[who]
        k = action.kind
        step = PHASE_NAMES[self.phase]
        if k == CLAIM:
            return self._why_claim_illegal(action, text, name, step)
        if self.phase not in _STEPS_OF_KIND.get(k, ()):
            return f"{text}: not at this step of the turn (now: {step}, {name} to act)"
        hand = self.hands[who]
        if k == PASS:
            return (
                f"pass: {name} can play a troop, and a player may pass only when he cannot "
                f"(docs/rulings.md 12)"
            )
        if k == DRAW:
            if len(hand) >= HAND_SIZE and self.phase == DRAW_PHASE:
                return f"{text}: {name}'s hand is full ({HAND_SIZE} cards)"
            return f"{text}: the {('troop', 'tactics')[action.deck]} deck is empty"
        card = self.naming.card(action.card) if action.card >= 0 else "?"
        if k in (RETURN, PLAY, SCOUT, REDEPLOY, DESERTER, TRAITOR):
            tactic = {SCOUT: SCOUT_CARD, REDEPLOY: REDEPLOY_CARD, DESERTER: DESERTER_CARD}.get(
                k, TRAITOR_CARD if k == TRAITOR else action.card
            )
            if tactic not in hand:
                return f"{text}: {self.naming.card(tactic)} is not in {name}'s hand"
            if tactic >= TROOP_COUNT and not self.can_play_tactic(who):
                return (
                    f"{text}: {name} has played {self.tactics_played[who]} tactics and his "
                    f"opponent {self.tactics_played[1 - who]}; nobody may play more than one "
                    f"tactic more than his opponent (docs/rulings.md 11)"
                )
        if k == RETURN:
            return f"{text}: {card} is not in {name}'s hand"
        if k == DISCARD:
            return f"{text}: {card} is not on that side of {note} {action.source}"
        target = action.flag if k == PLAY else action.source
        if k in (PLAY, REDEPLOY, DESERTER, TRAITOR):
            if not 1 <= target <= FLAGS:
                return f"{text}: there is no {note} {target}"
            if self.flag(target).claimed_by >= 0:
                return (
                    f"{text}: {note} {target} is claimed; no card may be added to it or "
                    f"taken from it"
                )
        if k == PLAY:
            f = self.flag(target)
            if action.card in LEADERS and self.leader_played[who]:
                return (
                    f"{text}: {name} already played a Leader; the second stays in his hand "
                    f"(docs/rulings.md 3)"
                )
            if action.card not in ENVIRONMENT and not f.open_slot(who):
                return (
                    f"{text}: {name}'s side of {note} {target} is full "
                    f"({len(f.sides[who])} of {f.size} cards)"
                )
        if k in (REDEPLOY, DESERTER, TRAITOR):
            why = self._why_guile_illegal(action, text, who, card)
            if why is not None:
                return why
        return f"{text} is not legal now ({step}, {name} to act)"

    def _why_claim_illegal(self, action: Action, text: str, name: str, step: str) -> str:
        """:meth:`why_illegal` for a claim: no such flag, out of its time (docs/rulings.md
        14), or refuted (the solver's witness)."""
        note = self.naming.flag
        if not 1 <= action.flag <= FLAGS:
            return f"there is no {note} {action.flag}"
        if not self.claim_window_open():
            return (
                f"{text}: claims are made at the start of the turn"
                + (
                    ""
                    if self.config.claim_timing == "advanced"
                    else " or after playing, before drawing"
                )
                + f" (docs/rulings.md 14); now: {step}"
            )
        try:
            proof = self.judge_claim(action.flag, self.to_move)
        except IllegalActionError as e:
            return f"{text}: {e}"
        if proof.witness is not None:
            return f"{name} cannot claim {note} {action.flag}: {proof.explanation[0]}"
        return f"{text} is not legal now ({step}, {name} to act)"

    def _why_guile_illegal(self, action: Action, text: str, who: int, card: str) -> str | None:
        """:meth:`why_illegal` for Redeploy, Deserter and Traitor once the source flag is
        unclaimed: the card is not there, Fog and Mud stay (docs/rulings.md 10), Traitor on a
        tactic (9), a destination that is no flag, the same flag or full; None if none."""
        k, note, name = action.kind, self.naming.flag, PLAYERS[who]
        target = action.source
        owner = who if k == REDEPLOY else 1 - who
        src = self.flag(target)
        on_side = any(p.card == action.card for p in src.sides[owner])
        env = any(p.card == action.card and p.owner == owner for p in src.environment)
        if not on_side and not env:
            return f"{text}: {card} is not on {PLAYERS[owner]}'s side of {note} {target}"
        if env and not self.config.environment_removable:
            return (
                f"{text}: played Fog and Mud stay until the end of the game "
                f"(docs/rulings.md 10, environment_removable=false)"
            )
        if k == TRAITOR and action.card >= TROOP_COUNT:
            return f"{text}: Traitor takes a troop, never a tactic (docs/rulings.md 9)"
        dest = action.flag
        if k in (REDEPLOY, TRAITOR) and dest != DISCARD_PILE:
            if not 1 <= dest <= FLAGS:
                return f"{text}: there is no {note} {dest}"
            if dest == target:
                return f"{text}: the card must go to another {note}"
            if not env and not self.flag(dest).open_slot(who):
                return f"{text}: {name} has no open slot at {note} {dest}"
        return None

    def child(self, action: Action) -> BattleLineState:
        """A copy with ``action`` applied (checked); this state is left as it was (an
        undo is keeping the parent)."""
        twin = self.clone()
        twin.apply_action(action)
        return twin

    def action_to_string(self, action: Action) -> str:
        """The record token of ``action`` in this game's theme (``R7@3``, ``claim 2``)."""
        return action.notation(self.naming)

    def parse_action(self, text: str) -> Action:
        """The legal action that ``text`` names (record notation, either theme's names,
        any case); :class:`InputError` for notation that names no action,
        :class:`IllegalActionError` saying why for an action not legal here."""
        action = Action.parse(text)
        if action not in self.legal_actions():
            raise IllegalActionError(self.why_illegal(action))
        return action

    def public_action_string(self, action: Action, viewer: Seat) -> str | None:
        """What ``viewer`` (0, 1, ``"north"`` or ``"south"``) may be told of ``action``:
        nothing of the deal (his hand shows his cards) or of a closed claim window; a card
        drawn, only to the player who draws it; a card a Scout returns, only to the player
        who returns it (Rulebook, Scout: face down on its deck; the other player is told
        ``return troop`` or ``return tactics``); every other action in full."""
        viewer = player_index(viewer, PLAYERS, "viewer")
        if self.phase == DEAL or action.kind == END_CLAIMS:
            return None
        if action.kind == RETURN and self.current_player() != viewer:
            return f"return {'troop' if action.card < TROOP_COUNT else 'tactics'}"
        if self.phase == DRAW_CARD:
            drawer = self.to_move
            if drawer != viewer:
                return None
            return f"{PLAYERS[drawer]} draws {self.naming.card(action.card)}"
        return self.action_to_string(action)

    # -- chance ----------------------------------------------------------------------
    def chance_outcomes(self) -> list[tuple[Action, Fraction]]:
        """The chance outcomes now, each card with its exact probability (uniform over the
        unknown cards of the deck dealt or drawn from, or the known top card with probability
        1); empty when it is not chance's turn."""
        if self.phase == DEAL:
            pool = self.unknown[TROOP_DECK]
        elif self.phase == DRAW_CARD:
            pool = self.unknown[self.drawing]
        else:
            return []
        if self.decks_ordered:
            return [(Action(CARD, card=pool[-1]), Fraction(1))]
        share = Fraction(1, len(pool))
        return [(_CARD_ACTIONS[c], share) for c in sorted(pool)]

    def uniform_chance(self) -> list[Action] | None:
        """The deal and the draws are uniform over the unknown cards of the deck, in
        :meth:`chance_outcomes`' order (a stacked deck has one outcome)."""
        if self.phase == DEAL:
            pool = self.unknown[TROOP_DECK]
        elif self.phase == DRAW_CARD:
            pool = self.unknown[self.drawing]
        else:
            return None
        if self.decks_ordered:
            return [Action(CARD, card=pool[-1])]
        return [_CARD_ACTIONS[c] for c in sorted(pool)]

    # -- applying ----------------------------------------------------------------------
    def apply_action_unchecked(self, action: Action) -> None:
        """Apply ``action`` without checking it (the fast path for search): legality is the
        caller's job, and an illegal action leaves the state undefined."""
        if (
            action.kind in (PASS, END_CLAIMS)
            and self.config.stalemate == "dead"
            and (action.kind == END_CLAIMS or len(self.legal_actions()) > 1)
        ):
            # docs/rulings.md 17: a player who declines a claim, or passes while he could
            # play a tactic, could have acted: the turn is not a dead one.
            self.progress = True
        self._legal = None
        self.history.append(action)
        if action.kind not in (CARD, DRAW, END_CLAIMS, RETURN):
            self._table_version += 1
        p = self.current_player()
        k = action.kind
        if self.phase == DEAL:
            self.unknown[TROOP_DECK].remove(action.card)
            dealt = len(self.hands[0]) + len(self.hands[1])
            who = self.first if dealt < HAND_SIZE else 1 - self.first
            self.hands[who].append(action.card)
            if dealt + 1 == 2 * HAND_SIZE:
                self.turn = 1
                self.phase = CLAIM_START
                self._settle()
            return
        if self.phase == DRAW_CARD:
            self.unknown[self.drawing].remove(action.card)
            self._receive(action.card)
            return
        if k == CLAIM:
            self._claim(action.flag, p)
        elif k == END_CLAIMS:
            self.phase = PLAY_PHASE if self.phase == CLAIM_START else DRAW_PHASE
        elif k == DRAW:
            self._draw(action.deck)
            return
        elif k == RETURN:
            self.hands[p].remove(action.card)
            deck = TROOP_DECK if action.card < TROOP_COUNT else TACTICS_DECK
            self.known_top[deck].append((action.card, p))
            self.scout_returns -= 1
            if self.scout_returns == 0 or not self.hands[p]:
                self.phase = CLAIM_END
        elif k == DISCARD:
            owner, flag = self.mud_queue.pop(0)
            side = self.flags[flag].sides[owner]
            side.remove(next(pl for pl in side if pl.card == action.card))
            self.discards[owner].append(action.card)
            if not self.mud_queue:
                self.phase = CLAIM_END
        else:
            self._play(action, p)
        self._settle()

    def _play(self, a: Action, p: int) -> None:
        opp = 1 - p
        if a.kind == PASS:
            self.phase = CLAIM_END
            return
        self.progress = True
        card = (
            a.card
            if a.kind == PLAY
            else {
                SCOUT: SCOUT_CARD,
                REDEPLOY: REDEPLOY_CARD,
                DESERTER: DESERTER_CARD,
                TRAITOR: TRAITOR_CARD,
            }[a.kind]
        )
        self.hands[p].remove(card)
        if card >= TROOP_COUNT:
            self.tactics_played[p] += 1
        if card in LEADERS:
            self.leader_played[p] = True
        self.phase = CLAIM_END
        if a.kind == PLAY:
            f = self.flags[a.flag - 1]
            if card in ENVIRONMENT:
                f.environment.append(Placed(card, self.turn, p))
            else:
                f.sides[p].append(Placed(card, self.turn))
            return
        if a.kind == SCOUT:
            self.discards[p].append(card)
            self.scout_draws = 3
            self.phase = SCOUT_DRAW
            return
        self.discards[p].append(card)  # guile tactics lie face up by the deck
        src = self.flags[a.source - 1]
        if a.kind in (REDEPLOY, DESERTER):
            owner = p if a.kind == REDEPLOY else opp
            moved = self._take(src, owner, a.card)
            if a.kind == DESERTER or a.flag == DISCARD_PILE:
                self.discards[owner].append(a.card)
            elif a.card in ENVIRONMENT:
                self.flags[a.flag - 1].environment.append(Placed(a.card, self.turn, p))
            else:
                self.flags[a.flag - 1].sides[p].append(Placed(moved.card, self.turn))
            if a.card == MUD:
                self._mud_left(a.source - 1)
        elif a.kind == TRAITOR:
            moved = self._take(src, opp, a.card)
            self.flags[a.flag - 1].sides[p].append(Placed(moved.card, self.turn))

    @staticmethod
    def _take(f: Flag, owner: int, card: CardCode) -> Placed:
        for pile in (f.sides[owner], f.environment):
            for pl in pile:
                if pl.card == card:
                    pile.remove(pl)
                    return pl
        raise IllegalActionError(f"card {card} is not at that flag")

    def _mud_left(self, flag: int) -> None:
        """docs/rulings.md 10: each side left with four cards discards one, owner's choice."""
        f = self.flags[flag]
        order = (self.to_move, 1 - self.to_move)
        self.mud_queue = [(o, flag) for o in order if len(f.sides[o]) > f.size]
        if self.mud_queue:
            self.phase = MUD_DISCARD

    def _claim(self, flag: int, p: int) -> None:
        """Claim flag ``flag`` (1-9) for ``p``, with its proof when certifying."""
        if self.certify:
            proof = self.judge_claim(flag, p)
            if not proof.valid:
                raise IllegalActionError(
                    f"{PLAYERS[p]} cannot claim {self.naming.flag} {flag}: {proof.explanation[0]}"
                )
            self.claims.append(ClaimRecord(self.turn, p, flag, proof))
            self._log_claim(flag, p, proof)
        self.flags[flag - 1].claimed_by = p
        self.progress = True
        reason = flags_win([f.claimed_by == p for f in self.flags])
        if reason is not None:  # docs/rulings.md 15
            self._finish(p, reason)

    def _finish(self, winner: int, reason: str) -> None:
        self.winner = winner
        self.end_reason = reason
        self.phase = OVER
        self._legal = None

    def forfeit(self, player: Seat, why: str = "") -> None:
        """End the game now with ``player`` forfeiting: the other player wins
        (:data:`FORFEIT`). A referee's verdict, not a move of the game; ``why`` is a
        one-word reason (``timeout``, ``crash``, ``violation``), kept in
        :attr:`forfeited` for the record. Raises :class:`IllegalActionError` if the game
        is already over, :class:`InputError` for a ``player`` not 0, 1, ``"north"`` or
        ``"south"``."""
        player = player_index(player, PLAYERS)
        if self.phase == OVER:
            raise IllegalActionError("the game is already over")
        if why and not why.replace("-", "").isalnum():
            raise IllegalActionError(f"a forfeit reason is one word, got {why!r}")
        self.forfeited = (player, why)
        self._finish(1 - player, FORFEIT)

    def _draw(self, deck: int) -> None:
        if self.phase == DRAW_PHASE:
            self.progress = True
        self.after_scout_draw = self.phase == SCOUT_DRAW
        if self.known_top[deck]:
            card, _ = self.known_top[deck].pop()
            self._receive(card)
            return
        self.drawing = deck
        self.phase = DRAW_CARD

    def _receive(self, card: CardCode) -> None:
        p = self.to_move
        self.hands[p].append(card)
        self.last_drawn = card
        if self.after_scout_draw:
            self.scout_draws -= 1
            self.phase = SCOUT_DRAW
        else:
            self.phase = DRAW_PHASE
            self._end_turn()
            return
        self._settle()

    def settle(self) -> None:
        """Skip the steps in which there is nothing to decide (a claim window with no
        provable claim, a draw with a full hand or empty decks)."""
        self._legal = None
        self._settle()

    def _settle(self) -> None:
        """Skip the steps in which there is nothing to decide."""
        while True:
            p = self.to_move
            if self.phase in (CLAIM_START, CLAIM_END):
                timing_ok = self.phase == CLAIM_START or self.config.claim_timing == "standard"
                claims = self._claims(p) if timing_ok else []
                if claims:
                    self._legal = [*claims, Action(END_CLAIMS)]  # sorted: claims come first
                    return
                self.phase = PLAY_PHASE if self.phase == CLAIM_START else DRAW_PHASE
            elif self.phase == SCOUT_DRAW:
                if self.scout_draws > 0 and (self.deck_size(0) or self.deck_size(1)):
                    return
                self.scout_returns = min(2, len(self.hands[p]))
                self.phase = SCOUT_RETURN if self.scout_returns else CLAIM_END
            elif self.phase == DRAW_PHASE:
                if len(self.hands[p]) < HAND_SIZE and (self.deck_size(0) or self.deck_size(1)):
                    return
                self._end_turn()
                return
            else:
                return

    def _end_turn(self) -> None:
        self.idle_turns = 0 if self.progress else self.idle_turns + 1
        self.progress = False
        if self.idle_turns >= 2:  # docs/rulings.md 17: nothing can (or will) change
            mine, theirs = (len(self.flags_held(i)) for i in (NORTH, SOUTH))
            self._finish(
                NORTH if mine > theirs else SOUTH if theirs > mine else DRAW_GAME, STALEMATE
            )
            return
        self.to_move = 1 - self.to_move
        self.turn += 1
        self.phase = CLAIM_START
        self._settle()

    def apply_action(self, action: Action) -> None:
        """Checked apply. A claim the solver refutes is refused with its witness (and the
        refusal goes to the claim log, when there is one)."""
        if action.kind == CLAIM and action not in self.legal_actions():
            p = self.to_move
            proof = None
            if self.claim_window_open() and 1 <= action.flag <= FLAGS:
                f = self.flags[action.flag - 1]
                if f.claimed_by < 0 and len(f.sides[p]) == f.size:
                    proof = self.judge_claim(action.flag, p)
            if proof is not None and not proof.valid:
                self._log_claim(action.flag, p, proof)
                raise IllegalActionError(
                    f"{PLAYERS[p]} cannot claim {self.naming.flag} {action.flag}: "
                    f"{proof.explanation[0]}"
                )
            raise IllegalActionError(self.why_illegal(action))
        super().apply_action(action)

    def _log_claim(self, flag: int, player: int, proof: bl.ProvedClaim) -> None:
        """Append a decided claim to the claim log (issue 4's proof log), if any."""
        if self.log is None:
            return
        from battlejudge.proofs.battleline.certificate import to_file_model

        self.log.append(
            question=proof.question.to_json(),
            verdict=proof.verdict,
            certificate=to_file_model(proof.certificate).model_dump(mode="json"),
            game=self.game_id,
            turn=self.turn,
            player=PLAYERS[player],
            flag=flag,
        )

    # -- results ---------------------------------------------------------------------
    def outcome(self) -> Outcome | None:
        """How the game ended (python-chess's ``Board.outcome()``): the termination reason
        (one of :data:`END_REASONS`) and the winner, or None while the game goes on."""
        if self.phase != OVER:
            return None
        assert self.end_reason is not None
        winner = None if self.winner == DRAW_GAME else PLAYERS[self.winner]
        return Outcome(self.end_reason, winner)

    def returns(self) -> list[float]:
        """The final scores: 1 for the winner and -1 for the loser, 0 each for a draw or a game
        still going."""
        if self.phase != OVER or self.winner == DRAW_GAME:
            return [0.0, 0.0]
        return [1.0 if self.winner == i else -1.0 for i in (NORTH, SOUTH)]

    def match_points(self) -> tuple[int, int]:
        """Match scoring (docs/rulings.md 15): the winner 5, the loser one per flag he holds."""
        if self.phase != OVER or self.winner == DRAW_GAME:
            return (len(self.flags_held(NORTH)), len(self.flags_held(SOUTH)))
        loser = 1 - self.winner
        pts = [0, 0]
        pts[self.winner] = 5
        pts[loser] = len(self.flags_held(loser))
        return (pts[0], pts[1])

    # -- views -----------------------------------------------------------------------
    def to_dict(self, viewer: Seat | None = None) -> dict[str, Any]:
        """The state as plain data; with ``viewer`` set (0, 1, ``"north"`` or ``"south"``),
        only what that player may know."""
        if viewer is not None:
            viewer = player_index(viewer, PLAYERS, "viewer")
        n = self.naming

        def cards(cs: list[CardCode]) -> list[str]:
            return [n.card(c) for c in cs]

        def hidden_top(deck: int) -> list[str]:
            return [
                n.card(c) if viewer is None or who == viewer else "?"
                for c, who in self.known_top[deck]
            ]

        data: dict[str, Any] = {
            "config": {
                "claim_timing": self.config.claim_timing,
                "environment_removable": self.config.environment_removable,
                "stalemate": self.config.stalemate,
                "theme": self.config.theme,
            },
            "first": PLAYERS[self.first],
            "turn": self.turn,
            "to_move": PLAYERS[self.to_move],
            "phase": PHASE_NAMES[self.phase],
            "flags": [
                {
                    "north": [[n.card(p.card), p.turn] for p in f.sides[0]],
                    "south": [[n.card(p.card), p.turn] for p in f.sides[1]],
                    "environment": [
                        [n.card(p.card), PLAYERS[p.owner], p.turn] for p in f.environment
                    ],
                    "claimed_by": PLAYERS[f.claimed_by] if f.claimed_by >= 0 else None,
                }
                for f in self.flags
            ],
            "discards": {PLAYERS[i]: cards(self.discards[i]) for i in (0, 1)},
            "tactics_played": {PLAYERS[i]: self.tactics_played[i] for i in (0, 1)},
            "leader_played": {PLAYERS[i]: self.leader_played[i] for i in (0, 1)},
            "deck_sizes": {"troop": self.deck_size(0), "tactics": self.deck_size(1)},
            "known_top": {"troop": hidden_top(0), "tactics": hidden_top(1)},
            "scout": [self.scout_draws, self.scout_returns],
            "mud_queue": [[PLAYERS[o], f] for o, f in self.mud_queue],
            "idle_turns": self.idle_turns,
            "progress": self.progress,
            "end_reason": self.end_reason,
            "forfeited": None
            if self.forfeited is None
            else [PLAYERS[self.forfeited[0]], self.forfeited[1]],
            "winner": (
                None
                if self.winner < 0
                else "draw"
                if self.winner == DRAW_GAME
                else PLAYERS[self.winner]
            ),
        }
        for i in (0, 1):
            visible = viewer is None or viewer == i
            data.setdefault("hands", {})[PLAYERS[i]] = (
                sorted(cards(sorted(self.hands[i]))) if visible else len(self.hands[i])
            )
        if viewer is None:
            decks = [d if self.decks_ordered else sorted(d) for d in self.unknown]
            data["unknown"] = {"troop": cards(decks[0]), "tactics": cards(decks[1])}
            if self.decks_ordered:
                data["decks_ordered"] = True
            data["drawing"] = self.drawing
            data["after_scout_draw"] = self.after_scout_draw
        return data

    def information_state_string(self, player: Seat) -> str:
        """What ``player`` (0, 1, ``"north"`` or ``"south"``) knows, as canonical JSON: the
        table, his own hand, the sizes of the opponent's hand and the decks; never a card he
        cannot see."""
        return json.dumps(self.to_dict(viewer=player_index(player, PLAYERS)), sort_keys=True)

    def serialize(self) -> str:
        """The whole state as JSON, hidden cards included (both hands and the known deck tops);
        :meth:`deserialize` reads it back to an equal state."""
        data = self.to_dict()
        data["hands"] = {PLAYERS[i]: [self.naming.card(c) for c in self.hands[i]] for i in (0, 1)}
        data["known_top"] = {
            "troop": [[self.naming.card(c), w] for c, w in self.known_top[0]],
            "tactics": [[self.naming.card(c), w] for c, w in self.known_top[1]],
        }
        return json.dumps(data, sort_keys=True)

    def __str__(self) -> str:
        return self.serialize()

    def clone(self) -> BattleLineState:
        """An independent copy, without serializing: every container is copied, the
        immutable parts (placed cards, actions, claim records) are shared. The copy has
        no claim log (its claims are not this game's)."""
        other = BattleLineState.__new__(BattleLineState)
        other.__dict__.update(self.__dict__)
        other.log = None
        other.hands = (list(self.hands[0]), list(self.hands[1]))
        other.unknown = (list(self.unknown[0]), list(self.unknown[1]))
        other.known_top = (list(self.known_top[0]), list(self.known_top[1]))
        other.flags = [f.copy() for f in self.flags]
        other.discards = (list(self.discards[0]), list(self.discards[1]))
        other.tactics_played = list(self.tactics_played)
        other.leader_played = list(self.leader_played)
        other.mud_queue = list(self.mud_queue)
        other.claims = list(self.claims)
        other.history = list(self.history)
        other._legal = None if self._legal is None else list(self._legal)
        return other

    def fix_hidden(
        self,
        hands: Mapping[int, Sequence[CardCode]],
        decks: tuple[Sequence[CardCode], Sequence[CardCode]],
    ) -> None:
        """Fix what chance has not revealed: the hand of each player in ``hands`` and the
        order of both decks (bottom first, top last; each as long as the deck). A
        search plays its samples of the hidden cards this way (a *determinization*).

        The cards given must be exactly the cards now in those hands and decks: raises
        :class:`RuleError` naming a card that is not, and changes nothing then. The
        top cards of a deck take the places of its known cards (Scout returns: who knows
        each place is kept). From then on chance deals and draws the top card of the
        fixed order (:attr:`decks_ordered`), with probability 1.
        """
        before = Counter([*self.unknown[0], *self.unknown[1]])
        before.update(c for deck in self.known_top for c, _ in deck)
        after = Counter([*decks[0], *decks[1]])
        for player, hand in hands.items():
            before.update(self.hands[player])
            after.update(hand)
        extra, missing = after - before, before - after
        if extra or missing:
            card, what = (
                (min(extra), "is not hidden here") if extra else (min(missing), "is not given")
            )
            raise RuleError(f"fix_hidden: card {self.naming.card(card)} {what} (or given twice)")
        for deck in (0, 1):
            if len(decks[deck]) != self.deck_size(deck):
                raise RuleError(
                    f"fix_hidden: deck {deck} holds {self.deck_size(deck)} cards, "
                    f"got an order of {len(decks[deck])}"
                )
        for player, hand in hands.items():
            self.hands[player][:] = hand
        for deck in (0, 1):
            order = list(decks[deck])
            cut = len(order) - len(self.known_top[deck])
            self.unknown[deck][:] = order[:cut]
            self.known_top[deck][:] = [
                (c, who) for c, (_, who) in zip(order[cut:], self.known_top[deck], strict=True)
            ]
        self.decks_ordered = True
        self._legal = None

    @classmethod
    def deserialize(cls, text: str) -> BattleLineState:
        """The state written by :meth:`serialize`."""
        from battlejudge.engines.battleline.cards import parse_card

        d = json.loads(text)
        cfg = d["config"]
        s = cls(
            RulesConfig(
                cfg["environment_removable"],
                cfg["claim_timing"],
                cfg["theme"],
                cfg.get("stalemate", "dead"),
            ),
            PLAYERS.index(d["first"]),
        )
        s.turn = d["turn"]
        s.to_move = PLAYERS.index(d["to_move"])
        s.phase = PHASE_NAMES.index(d["phase"])
        for f, fd in zip(s.flags, d["flags"], strict=True):
            for i, side in enumerate(("north", "south")):
                f.sides[i].extend(Placed(parse_card(c), t) for c, t in fd[side])
            f.environment.extend(
                Placed(parse_card(c), t, PLAYERS.index(o)) for c, o, t in fd["environment"]
            )
            f.claimed_by = -1 if fd["claimed_by"] is None else PLAYERS.index(fd["claimed_by"])
        for i in (0, 1):
            s.hands[i].extend(parse_card(c) for c in d["hands"][PLAYERS[i]])
            s.discards[i].extend(parse_card(c) for c in d["discards"][PLAYERS[i]])
            s.tactics_played[i] = d["tactics_played"][PLAYERS[i]]
            s.leader_played[i] = d["leader_played"][PLAYERS[i]]
        for deck, name in ((0, "troop"), (1, "tactics")):
            s.unknown[deck].clear()
            s.unknown[deck].extend(parse_card(c) for c in d["unknown"][name])
            s.known_top[deck].extend((parse_card(c), w) for c, w in d["known_top"][name])
        s.decks_ordered = d.get("decks_ordered", False)
        s.scout_draws, s.scout_returns = d["scout"]
        s.mud_queue = [(PLAYERS.index(o), f) for o, f in d["mud_queue"]]
        s.idle_turns = d["idle_turns"]
        s.progress = d["progress"]
        w = d["winner"]
        s.winner = -1 if w is None else DRAW_GAME if w == "draw" else PLAYERS.index(w)
        s.end_reason = d.get("end_reason")
        lost = d.get("forfeited")
        s.forfeited = None if lost is None else (PLAYERS.index(lost[0]), lost[1])
        s.drawing = d["drawing"]
        s.after_scout_draw = d["after_scout_draw"]
        return s

    def where(self, card: CardCode) -> str:
        """Where ``card`` is, as a player says it: ``"north's hand"``, ``"flag 3 (south)"``,
        ``"south's discard pile"``, ``"the troop deck"`` (every card is in exactly one
        place; tests check it with :meth:`card_count`)."""
        for i in (NORTH, SOUTH):
            if card in self.hands[i]:
                return f"{PLAYERS[i]}'s hand"
            if card in self.discards[i]:
                return f"{PLAYERS[i]}'s discard pile"
        for n, f in enumerate(self.flags, start=1):
            for i in (NORTH, SOUTH):
                if any(p.card == card for p in f.sides[i]):
                    return f"{self.naming.flag} {n} ({PLAYERS[i]})"
            if any(p.card == card for p in f.environment):
                return f"{self.naming.flag} {n}"
        deck = TROOP_DECK if card < TROOP_COUNT else TACTICS_DECK
        return f"the {('troop', 'tactics')[deck]} deck"

    def card_count(self) -> int:
        """Every card is somewhere exactly once (a consistency check for tests): all 70, or
        the 60 troops in a troops-only game (no tactic anywhere)."""
        places: list[CardCode] = [
            *self.hands[0],
            *self.hands[1],
            *self.discards[0],
            *self.discards[1],
            *self.unknown[0],
            *self.unknown[1],
        ]
        places += [c for deck in self.known_top for c, _ in deck]
        for f in self.flags:
            places += [p.card for side in f.sides for p in side]
            places += [p.card for p in f.environment]
        assert sorted(places) in (list(ALL_CARDS), list(TROOPS)), "a card is lost or doubled"
        return len(places)


def new_game(config: RulesConfig | None = None, first: Seat = NORTH) -> BattleLineState:
    """A game at the deal (a chance node): 7 troops to each player, ``first`` (0, 1,
    ``"north"`` or ``"south"``) moves first."""
    return BattleLineState(config, first)
