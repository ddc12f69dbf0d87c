"""What one player sees, and hidden-information samples consistent with it.

:func:`observe` reads ``state.information_state_string(player)`` and nothing else, so a
bot built on it cannot use hidden cards by mistake. :meth:`Observation.determinize`
deals the cards the player cannot see (the opponent's hand and the unknown part of each
deck) uniformly at random, keeping everything the player knows: the opponent's hand
size and how many of its cards are troops (public, since every card on the table, in
the discards and in his own hand is known and deck sizes are public), and the cards
the player himself put back on a deck with a Scout.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

from battlejudge.engines.battleline.cards import MUD, TACTIC_CARDS, TROOPS, CardCode, parse_card
from battlejudge.engines.battleline.state import FLAGS, PLAYERS, BattleLineState
from battlejudge.solver.battleline import decider

UNKNOWN = -1
"""A card on a deck whose identity the player does not know."""


@dataclass
class Observation:
    """The table as ``player`` sees it. Sides are indexed by player (0 north, 1 south)."""

    player: int
    phase: str
    to_move: int
    turn: int
    hand: list[CardCode]
    opp_hand_size: int
    sides: list[tuple[list[tuple[CardCode, int]], list[tuple[CardCode, int]]]]
    """Per flag, per player: (card, turn placed)."""
    environment: list[list[tuple[CardCode, int]]]
    """Per flag: (Fog or Mud, owner)."""
    claimed_by: list[int]
    discards: tuple[list[CardCode], list[CardCode]]
    deck_sizes: tuple[int, int]
    known_top: tuple[list[CardCode], list[CardCode]]
    """Per deck, bottom to top of the known stack: the card, or UNKNOWN (the opponent's)."""
    tactics_played: tuple[int, int]
    leader_played: tuple[bool, bool]
    mud_queue: list[tuple[int, int]]
    scout: tuple[int, int]
    unseen: tuple[list[CardCode], list[CardCode]] = field(default_factory=lambda: ([], []))
    """Troops and tactics the player cannot see (the opponent's hand and deck unknowns)."""

    @property
    def opponent(self) -> int:
        """The other seat."""
        return 1 - self.player

    def side(self, flag: int, player: int) -> list[CardCode]:
        """The cards ``player`` has at ``flag``, in the order placed."""
        return [c for c, _ in self.sides[flag][player]]

    def has_env(self, flag: int, env: CardCode) -> bool:
        """Whether the environment tactic ``env`` (Fog or Mud) lies at ``flag``."""
        return any(c == env for c, _ in self.environment[flag])

    def size(self, flag: int) -> int:
        """Cards a complete formation needs at ``flag``: 3, or 4 with Mud (docs/rulings.md 8)."""
        return decider.formation_size(self.has_env(flag, MUD))

    def face_up(self) -> set[CardCode]:
        """Every card on the table or in a discard pile."""
        out: set[CardCode] = set()
        for f in range(FLAGS):
            for s in self.sides[f]:
                out.update(c for c, _ in s)
            out.update(c for c, _ in self.environment[f])
        out.update(self.discards[0])
        out.update(self.discards[1])
        return out

    def opp_hand_counts(self) -> tuple[int, int]:
        """How many troops and tactics the opponent holds (derived from public counts): the
        troops unseen and not in the troop deck, and the rest of his hand. (Counting the
        unseen tactics instead would be wrong in a troops-only game, where the tactics are
        unseen but not in the game.)"""
        troops = len(self.unseen[0]) - (self.deck_sizes[0] - self._known_count(0))
        return troops, self.opp_hand_size - troops

    def _known_count(self, deck: int) -> int:
        return sum(1 for c in self.known_top[deck] if c != UNKNOWN)

    def determinize(self, rng: random.Random) -> Determinization:
        """A uniformly random assignment of the unseen cards consistent with this view."""
        opp_hand: list[CardCode] = []
        decks: list[list[CardCode]] = []
        held = self.opp_hand_counts()
        for d in (0, 1):
            pool = list(self.unseen[d])
            rng.shuffle(pool)
            unknown_in_deck = self.deck_sizes[d] - self._known_count(d)
            if unknown_in_deck < 0 or held[d] < 0 or unknown_in_deck + held[d] > len(pool):
                raise ValueError("observation is inconsistent: deck sizes do not add up")
            in_deck = pool[:unknown_in_deck]
            in_hand = pool[unknown_in_deck : unknown_in_deck + held[d]]
            opp_hand += in_hand
            known = self.known_top[d]
            n_unknown_top = sum(1 for c in known if c == UNKNOWN)
            bottom = in_deck[: len(in_deck) - n_unknown_top]
            fill = iter(in_deck[len(in_deck) - n_unknown_top :])
            decks.append(bottom + [next(fill) if c == UNKNOWN else c for c in known])
        return Determinization(opp_hand, (decks[0], decks[1]))


@dataclass
class Determinization:
    """One sample of the hidden cards: the opponent's hand and each deck (top = last)."""

    opp_hand: list[CardCode]
    decks: tuple[list[CardCode], list[CardCode]]


def observe(state: BattleLineState, player: int) -> Observation:
    """The player's view, read from ``state.information_state_string(player)`` only."""
    d = json.loads(state.information_state_string(player))
    hand = [parse_card(c) for c in d["hands"][PLAYERS[player]]]
    opp = d["hands"][PLAYERS[1 - player]]
    sides = []
    env = []
    claimed = []
    for fd in d["flags"]:
        sides.append(
            (
                [(parse_card(c), t) for c, t in fd["north"]],
                [(parse_card(c), t) for c, t in fd["south"]],
            )
        )
        env.append([(parse_card(c), PLAYERS.index(o)) for c, o, _t in fd["environment"]])
        claimed.append(-1 if fd["claimed_by"] is None else PLAYERS.index(fd["claimed_by"]))
    discards = (
        [parse_card(c) for c in d["discards"]["north"]],
        [parse_card(c) for c in d["discards"]["south"]],
    )
    known = tuple(
        [UNKNOWN if c == "?" else parse_card(c) for c in d["known_top"][name]]
        for name in ("troop", "tactics")
    )
    obs = Observation(
        player=player,
        phase=d["phase"],
        to_move=PLAYERS.index(d["to_move"]),
        turn=d["turn"],
        hand=hand,
        opp_hand_size=opp if isinstance(opp, int) else len(opp),
        sides=sides,
        environment=env,
        claimed_by=claimed,
        discards=discards,
        deck_sizes=(d["deck_sizes"]["troop"], d["deck_sizes"]["tactics"]),
        known_top=(known[0], known[1]),
        tactics_played=(d["tactics_played"]["north"], d["tactics_played"]["south"]),
        leader_played=(d["leader_played"]["north"], d["leader_played"]["south"]),
        mud_queue=[(PLAYERS.index(o), f) for o, f in d["mud_queue"]],
        scout=(d["scout"][0], d["scout"][1]),
    )
    seen = obs.face_up() | set(hand) | {c for k in known for c in k if c != UNKNOWN}
    obs.unseen = (
        [c for c in TROOPS if c not in seen],
        [c for c in TACTIC_CARDS if c not in seen],
    )
    return obs
