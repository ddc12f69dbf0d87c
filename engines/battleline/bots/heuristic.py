"""The heuristic bot: one-ply greedy play on the :mod:`evaluate` game value.

- Claims every flag the solver proves, as soon as a claim is legal.
- Plays the card (troop or tactic) that raises the game value most: a troop placed at a
  flag counts fully there and no longer in hand elsewhere, so it goes where it builds
  the strongest reachable formation against what the opponent shows, and low cards are
  dumped on flags already lost. Tactics pay a cost (a Leader most: it is the best wild
  card and each tactic lets the opponent play one): Morale tactics complete formations,
  Fog and Mud turn a flag, Deserter and Traitor break the opponent's best formation,
  Redeploy rescues a card from a lost flag, Scout is played when nothing else helps.
- Draws troops while they have a place to go, tactics when it holds none (or more troops
  than open slots); never redraws the cards it put back with a Scout.
- Scout returns and Mud discards give up the card worth least.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from battlejudge.engines.battleline.actions import (
    CLAIM,
    DESERTER,
    DISCARD,
    DISCARD_PILE,
    DRAW,
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
from battlejudge.engines.battleline.bots.base import Bot
from battlejudge.engines.battleline.bots.evaluate import Evaluator, FlagView, Position, game_value
from battlejudge.engines.battleline.bots.observation import UNKNOWN, Observation, observe
from battlejudge.engines.battleline.cards import (
    ALEXANDER,
    CAVALRY,
    DARIUS,
    FOG,
    LEADERS,
    MORALE,
    MUD,
    SHIELD,
)
from battlejudge.engines.battleline.cards import DESERTER as DESERTER_CARD
from battlejudge.engines.battleline.cards import REDEPLOY as REDEPLOY_CARD
from battlejudge.engines.battleline.cards import SCOUT as SCOUT_CARD
from battlejudge.engines.battleline.cards import TRAITOR as TRAITOR_CARD
from battlejudge.engines.battleline.state import BattleLineState
from battlejudge.solver.battleline.cards import TROOP_COUNT

TACTIC_COST = {
    ALEXANDER: 0.35,
    DARIUS: 0.35,
    CAVALRY: 0.15,
    SHIELD: 0.10,
    FOG: 0.10,
    MUD: 0.12,
    SCOUT_CARD: 0.0,
    REDEPLOY_CARD: 0.12,
    DESERTER_CARD: 0.15,
    TRAITOR_CARD: 0.15,
}
"""What playing a tactic costs in game value (flags) before its effect is counted."""
SCOUT_VALUE = 0.04
"""Scout's value: played when no other card raises the game value by more."""
TACTIC_HAND_VALUE = {
    ALEXANDER: 0.5,
    DARIUS: 0.5,
    TRAITOR_CARD: 0.35,
    DESERTER_CARD: 0.3,
    CAVALRY: 0.25,
    REDEPLOY_CARD: 0.2,
    SHIELD: 0.12,
    FOG: 0.12,
    MUD: 0.12,
    SCOUT_CARD: 0.08,
}
"""What a tactic in hand is worth, against troops' values, for Scout returns."""


def tactics_held_value(hand: list[int], leader_played: bool) -> float:
    """What the tactics in a hand are worth, in game value: each its playing cost (the
    option the heuristic gives up by playing it); a second Leader, unplayable, nothing."""
    return sum(
        TACTIC_COST.get(c, 0.0)
        for c in hand
        if c >= TROOP_COUNT and not (c in LEADERS and leader_played)
    )


def _minus(cards: list[int], card: int) -> list[int]:
    out = list(cards)
    out.remove(card)
    return out


def score_plays(
    obs: Observation | Position,
    actions: list[Action],
    ev: Evaluator | None = None,
    value: Callable[[Sequence[float]], float] = game_value,
    cost_scale: float = 1.0,
) -> list[tuple[float, Action]]:
    """Each play-phase action with the change in game value it brings (tactics net of
    their cost), best first (ties in the order given). ``ev``, if given, is the
    evaluator of ``obs`` to use (sharing its caches); ``value`` turns the flags' win
    chances into the value compared (default the heuristic's :func:`game_value`), and
    tactics' costs are counted ``cost_scale`` times on that scale."""
    ev = ev or Evaluator(obs)
    base = ev.chances()
    base_v = value(base)
    without: dict[int, list[float]] = {}

    def chances_without(card: int) -> list[float]:
        got = without.get(card)
        if got is None:
            got = ev.chances(removed=[card])
            without[card] = got
        return got

    scored: list[tuple[float, Action]] = []
    for a in actions:
        ps = list(base)
        cost = 0.0
        if a.kind == PLAY:
            c, f = a.card, a.flag - 1  # list index of the flag numbered a.flag
            view = ev.flags[f]
            if c < TROOP_COUNT:
                ps = list(chances_without(c))
                ps[f] = ev.flag_chance(view, mine=[*view.mine, c], removed=[c])
            elif c in MORALE:
                ps[f] = ev.flag_chance(view, mine=[*view.mine, c])
            elif c == FOG:
                ps[f] = ev.flag_chance(view, fog=True)
            elif c == MUD:
                ps[f] = ev.flag_chance(view, size=4)
            cost = TACTIC_COST.get(c, 0.0)
        elif a.kind == SCOUT:
            scored.append((SCOUT_VALUE * cost_scale, a))
            continue
        elif a.kind == REDEPLOY:
            cost = TACTIC_COST[REDEPLOY_CARD]
            src = ev.flags[a.source - 1]
            ps[a.source - 1] = _removed(ev, src, a.card, mine_side=True)
            if a.flag != DISCARD_PILE:
                dst = ev.flags[a.flag - 1]
                ps[a.flag - 1] = _added(ev, dst, a.card)
        elif a.kind == DESERTER:
            cost = TACTIC_COST[DESERTER_CARD]
            ps[a.source - 1] = _removed(ev, ev.flags[a.source - 1], a.card, mine_side=False)
        elif a.kind == TRAITOR:
            cost = TACTIC_COST[TRAITOR_CARD]
            ps[a.source - 1] = _removed(ev, ev.flags[a.source - 1], a.card, mine_side=False)
            dst = ev.flags[a.flag - 1]
            ps[a.flag - 1] = ev.flag_chance(dst, mine=[*dst.mine, a.card])
        elif a.kind == PASS:
            scored.append((0.0, a))
            continue
        scored.append((value(ps) - base_v - cost * cost_scale, a))
    scored.sort(key=lambda t: -t[0])
    return scored


def _removed(ev: Evaluator, view: FlagView, card: int, *, mine_side: bool) -> float:
    """The flag's chance once ``card`` leaves it (Fog or Mud leaving changes the flag)."""
    if card == FOG:
        return ev.flag_chance(view, fog=False)
    if card == MUD:
        return ev.flag_chance(view, size=3)
    if mine_side:
        return ev.flag_chance(view, mine=_minus(view.mine, card))
    return ev.flag_chance(view, theirs=_minus(view.theirs, card))


def _added(ev: Evaluator, view: FlagView, card: int) -> float:
    if card == FOG:
        return ev.flag_chance(view, fog=True)
    if card == MUD:
        return ev.flag_chance(view, size=4)
    return ev.flag_chance(view, mine=[*view.mine, card])


def hand_values(obs: Observation) -> dict[int, float]:
    """What each card in hand is worth: a troop, the game value lost without it; a
    tactic, a fixed value (a second Leader, unplayable, is worth nothing)."""
    ev = Evaluator(obs)
    base_v = game_value(ev.chances())
    out: dict[int, float] = {}
    for c in set(obs.hand):
        if c < TROOP_COUNT:
            out[c] = base_v - game_value(ev.chances(removed=[c]))
        elif c in LEADERS and obs.leader_played[obs.player]:
            out[c] = 0.0
        else:
            out[c] = TACTIC_HAND_VALUE.get(c, 0.1)
    return out


def choose_deck(obs: Observation, actions: list[Action]) -> Action:
    """Troops while they have somewhere to go; tactics when the hand has none or more
    troops than open slots; never the deck topped with a card this player put back."""
    decks = {a.deck: a for a in actions if a.kind == DRAW}
    if len(decks) == 1:
        return next(iter(decks.values()))
    mine_on_top = [bool(obs.known_top[d]) and obs.known_top[d][-1] != UNKNOWN for d in (0, 1)]
    me = obs.player
    open_slots = sum(
        max(0, obs.size(f) - len(obs.sides[f][me])) for f in range(9) if obs.claimed_by[f] < 0
    )
    return decks[deck_choice(obs.hand, open_slots, mine_on_top)]


def deck_choice(hand: list[int], open_slots: int, mine_on_top: Sequence[bool]) -> int:
    """The deck :func:`choose_deck` draws from when both can be drawn: ``hand`` the
    player's cards, ``open_slots`` his free places at unclaimed flags, ``mine_on_top``
    per deck whether its top card is one he put back with a Scout."""
    if mine_on_top[TROOP_DECK] != mine_on_top[TACTICS_DECK]:
        return TACTICS_DECK if mine_on_top[TROOP_DECK] else TROOP_DECK
    troops = sum(1 for c in hand if c < TROOP_COUNT)
    tactics = len(hand) - troops
    if troops >= open_slots or (tactics == 0 and troops >= 4):
        return TACTICS_DECK
    return TROOP_DECK


def choose(obs: Observation, actions: list[Action]) -> Action:
    """The heuristic's action (claims already handled by the caller)."""
    kinds = {a.kind for a in actions}
    if DRAW in kinds:
        return choose_deck(obs, actions)
    if RETURN in kinds:
        values = hand_values(obs)
        return min(actions, key=lambda a: (values.get(a.card, 0.0), a))
    if DISCARD in kinds:
        ev = Evaluator(obs)

        def keep(a: Action) -> float:
            view = ev.flags[a.source - 1]
            return ev.flag_chance(view, mine=_minus(view.mine, a.card))

        return max(actions, key=lambda a: (keep(a), a))
    plays = [a for a in actions if a.kind in (PLAY, SCOUT, REDEPLOY, DESERTER, TRAITOR, PASS)]
    if not plays:
        return actions[0]
    return score_plays(obs, plays)[0][1]


def obvious(actions: list[Action]) -> Action | None:
    """The only legal action, or the first claim (a claim the solver proves is made at
    once); None when there is a real choice."""
    if len(actions) == 1:
        return actions[0]
    return next((a for a in actions if a.kind == CLAIM), None)


class HeuristicBot(Bot):
    """Greedy on the :mod:`evaluate` game value; deterministic given the position
    (ties go to the engine's action order, so the rng is unused)."""

    name: str = "heuristic"

    def step(self, state: BattleLineState) -> Action:
        """The forced action when there is one (a valid claim, the only action), else the
        heuristic's best action for what the player to move observes."""
        actions = state.legal_actions()
        forced = obvious(actions)
        if forced is not None:
            return forced
        return choose(observe(state, state.current_player()), actions)
