"""Small builders for Battle Line rule scenarios (tests/test_battleline_rules.py).

A scenario is a position file built from compact text: flags are numbered 1-9 as in
the record notation, a side is ``"R4:1 R5:3"`` (card and the turn it was placed; a
card without ``:turn`` gets the next free stamp), hands are ``"R1 alexander"`` and the
decks list their top cards first. Unless told otherwise every card not placed goes to
the decks in a fixed order (troops, then tactics, lowest code first), so every draw is
known and no chance node appears.
"""

from __future__ import annotations

from typing import Any, Literal

from battlejudge.engines.battleline.actions import CLAIM, END_CLAIMS, Action
from battlejudge.engines.battleline.cards import (
    ALL_CARDS,
    ENVIRONMENT,
    TACTIC_CARDS,
    TROOPS,
    CardCode,
    card_name,
    parse_card,
)
from battlejudge.engines.battleline.position import PositionFile, to_state
from battlejudge.engines.battleline.state import (
    CLAIM_END,
    CLAIM_START,
    BattleLineState,
    Flag,
)

SIDES = ("north", "south")


def _side(text: str, stamps: list[int]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for token in text.split():
        card, _, turn = token.partition(":")
        if turn:
            stamp = int(turn)
        else:
            stamps[0] += 1
            stamp = stamps[0]
        out.append({"card": card, "turn": stamp})
    return out


def _cards(text: str) -> list[CardCode]:
    return [parse_card(t) for t in text.split()]


def build(
    flags: dict[int, dict[str, str]] | None = None,
    *,
    to_move: Literal["north", "south"] = "north",
    turn: int | None = None,
    hands: dict[str, str] | None = None,
    troop_deck: str = "",
    tactics_deck: str = "",
    discards: dict[str, str] | None = None,
    tactics_played: dict[str, int] | None = None,
    claim_timing: Literal["standard", "advanced"] = "standard",
    environment_removable: bool = True,
    stalemate: Literal["dead", "idle"] = "dead",
    theme: Literal["battleline", "nine-circles"] = "battleline",
    rest: Literal["decks", "discards"] = "decks",
    settle: bool = True,
) -> BattleLineState:
    """The state at the start of ``to_move``'s turn.

    ``flags`` maps a flag number (1-9) to ``{"north": ..., "south": ..., "env":
    "mud:south:7 fog:north:2", "claimed": "north"}``. ``rest="discards"`` puts the
    unplaced troops on north's discard pile instead of the troop deck (empty decks;
    every tactic must then be placed explicitly). ``tactics_played`` defaults to the
    tactics visible for each player (his morale cards, his environment cards, the
    tactics on his discard pile). With ``settle`` an empty claim window at the start of
    the turn is closed, as the engine does in play (``to_state`` leaves it open).
    """
    flags = flags or {}
    hands = hands or {}
    discards = dict(discards or {})
    stamps = [0]
    # Explicit stamps first, so automatic ones never collide with them.
    for spec in flags.values():
        for name in SIDES:
            for token in spec.get(name, "").split():
                _, _, t = token.partition(":")
                if t:
                    stamps[0] = max(stamps[0], int(t))
        for token in spec.get("env", "").split():
            stamps[0] = max(stamps[0], int(token.split(":")[2]))
    flag_data: list[dict[str, Any]] = []
    placed: list[CardCode] = []
    visible_tactics = {"north": 0, "south": 0}
    for n in range(1, 10):
        spec = flags.get(n, {})
        fd: dict[str, Any] = {"north": [], "south": [], "environment": []}
        for name in SIDES:
            fd[name] = _side(spec.get(name, ""), stamps)
            for pc in fd[name]:
                code = parse_card(pc["card"])
                placed.append(code)
                if code >= 60:
                    visible_tactics[name] += 1
        for token in spec.get("env", "").split():
            card, owner, t = token.split(":")
            fd["environment"].append({"card": card, "player": owner, "turn": int(t)})
            placed.append(parse_card(card))
            visible_tactics[owner] += 1
        if spec.get("claimed"):
            fd["claimed_by"] = spec["claimed"]
        flag_data.append(fd)
    for name in SIDES:
        placed += _cards(hands.get(name, ""))
        for code in _cards(discards.get(name, "")):
            placed.append(code)
            if code >= 60:
                visible_tactics[name] += 1
    top_troops, top_tactics = _cards(troop_deck), _cards(tactics_deck)
    placed += top_troops + top_tactics
    left = [c for c in ALL_CARDS if c not in placed]
    if rest == "decks":
        troop_list = top_troops + [c for c in left if c in TROOPS]
        tactic_list = top_tactics + [c for c in left if c in TACTIC_CARDS]
    else:
        stray = [card_name(c) for c in left if c in TACTIC_CARDS]
        assert not stray, f"place every tactic when rest='discards': {stray}"
        extra = " ".join(card_name(c) for c in left)
        discards["north"] = f"{discards.get('north', '')} {extra}".strip()
        troop_list, tactic_list = top_troops, top_tactics
    max_stamp = max((pc["turn"] for fd in flag_data for s in SIDES for pc in fd[s]), default=0)
    env_stamps = [e["turn"] for fd in flag_data for e in fd["environment"]]
    max_stamp = max([max_stamp, *env_stamps])
    data: dict[str, Any] = {
        "theme": theme,
        "rules": {
            "claim_timing": claim_timing,
            "environment_removable": environment_removable,
            "stalemate": stalemate,
        },
        "turn": turn if turn is not None else max_stamp + 1,
        "to_move": to_move,
        "flags": flag_data,
        "discards": {name: discards.get(name, "").split() for name in SIDES},
        "tactics_played": tactics_played or visible_tactics,
        "hands": {name: hands.get(name, "").split() for name in SIDES},
        "decks": {
            "troop": [card_name(c) for c in troop_list],
            "tactics": [card_name(c) for c in tactic_list],
        },
    }
    state = to_state(PositionFile.model_validate(data))
    state.card_count()
    if settle and state.phase == CLAIM_START and state.legal_actions() == [Action(END_CLAIMS)]:
        state.apply_action(Action(END_CLAIMS))
    return state


def act(state: BattleLineState, *tokens: str) -> BattleLineState:
    """Apply record tokens (``"R7@3"``, ``"draw troop"``, ``"claim 2"``...) in order."""
    for token in tokens:
        state.apply_action(Action.parse(token))
    return state


def legal(state: BattleLineState) -> set[str]:
    """The legal actions as record tokens in the state's theme."""
    return {a.notation(state.naming) for a in state.legal_actions()}


def claims_offered(state: BattleLineState) -> set[int]:
    """Flags (1-9) the player to move may claim right now."""
    if state.phase not in (CLAIM_START, CLAIM_END):
        return set()
    return {a.flag for a in state.legal_actions() if a.kind == CLAIM}


def flag(state: BattleLineState, n: int) -> Flag:
    """Flag ``n`` counted 1-9 as in the notation."""
    return state.flags[n - 1]


def side(state: BattleLineState, n: int, player: int) -> list[str]:
    """The cards on one side of flag ``n`` (1-9), in the order placed."""
    return [card_name(p.card) for p in state.flags[n - 1].sides[player]]


def environment(state: BattleLineState, n: int) -> list[str]:
    return [card_name(p.card) for p in state.flags[n - 1].environment if p.card in ENVIRONMENT]


def names(cards: list[CardCode]) -> list[str]:
    return [card_name(c) for c in cards]
