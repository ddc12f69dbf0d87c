"""Game records (``.blg``): a plain-text, line-oriented notation in the spirit of PGN.

Header tags in brackets, then one line per turn::

    [Event "Casual game"]
    [Date "2026.11.21"]
    [North "random"]
    [South "heuristic"]
    [Seed "7"]
    [Rules "claim_timing=standard environment_removable=false stalemate=dead"]
    [Theme "battleline"]
    [First "north"]
    [DealNorth "R1 O5 Y7 G2 B9 P3 R10"]
    [DealSouth "..."]
    [Result "north"]

    1. N: R7@3 | draw troop G5
    2. S: fog@5 | claim 2 | draw tactics redeploy

A game a referee ended by a forfeit has one last line after its turns,
``forfeit SEAT REASON`` (``forfeit north timeout``); replay applies it, and checks the
``Result`` tag (``north``, ``south``, ``draw``, or ``*`` for a game not over) against the
game it replays.

A turn line holds the turn number, the player to move (N or S) and that turn's actions
separated by ``|``: ``CARD@FLAG`` plays a troop or a morale or environment tactic;
``scout``; ``redeploy CARD@FROM>TO`` (``>discard`` to discard); ``deserter CARD@FLAG``;
``traitor CARD@FROM>TO``; ``pass``; ``claim FLAG``; ``return CARD`` (Scout);
``discard CARD@FLAG`` (a side left with four cards after Mud leaves; its owner chooses);
``draw troop|tactics CARD`` (the card drawn). Flags are numbered 1-9. A claim written
before the turn's play is made at the start of the turn. Printing then parsing gives the
same text; the deal and every drawn card are in the record, so a game replays exactly.

Two extensions for refereed games (:mod:`.referee`): the tag ``[Deck "troops"]`` marks a
game of the bot protocol, played with the 60 troops only (the tactics deck is out of the
game; without the tag, or with ``"full"``, the whole deck is used); and a turn line may
end with a comment in braces, ``5. S: B3@1 | draw troop R7 {violation: ...}``, which
replay ignores (the referee notes there the replies it had to replace).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from battlejudge.engines.battleline.actions import (
    CARD,
    CLAIM,
    DECK_NAMES,
    DRAW,
    END_CLAIMS,
    TACTICS_DECK,
    Action,
)
from battlejudge.engines.battleline.cards import card_name, check_theme, parse_card
from battlejudge.engines.battleline.config import RulesConfig
from battlejudge.engines.battleline.state import (
    CLAIM_END,
    CLAIM_START,
    DEAL,
    DRAW_CARD,
    NORTH,
    PLAYERS,
    SOUTH,
    BattleLineState,
)
from battlejudge.engines.game import CHANCE, IllegalActionError
from battlejudge.solver import battleline as bl
from battlejudge.solver.battleline.cards import TROOP_COUNT
from battlejudge.solver.errors import InputError

TAG_ORDER = (
    "Event",
    "Game",
    "Site",
    "Date",
    "North",
    "South",
    "Seed",
    "Rules",
    "Theme",
    "First",
    "DealNorth",
    "DealSouth",
    "Deck",
    "Result",
)
DECKS = ("full", "troops")
"""Values of the Deck tag: the whole deck, or the 60 troops of the bot protocol."""
_TAG_RE = re.compile(r'^\[(\w+) "((?:[^"\\]|\\.)*)"\]$')
_TURN_RE = re.compile(r"^(\d+)\.\s+([NS]):\s*(.*)$")
_COMMENT_RE = re.compile(r"^(.*?)\s*\{([^{}]*)\}$")
_FORFEIT_RE = re.compile(r"^forfeit\s+(north|south)(?:\s+([\w-]+))?$", re.IGNORECASE)


class RecordError(InputError):
    """A record that cannot be parsed; the message names the line."""


@dataclass
class Turn:
    """One turn of a ``.blg`` record: its number, the player, and the actions in notation
    (``|``-separated on the line)."""

    number: int
    player: int
    tokens: list[str]
    line_number: int = field(default=0, compare=False)
    """Where the turn stood in the file it was read from (for error messages)."""
    comment: str = ""
    """A note on the turn (``{...}`` at the end of the line); replay ignores it."""

    def line(self) -> str:
        """The turn's line in a ``.blg`` file: ``N. P: action | action {comment}``."""
        text = f"{self.number}. {'NS'[self.player]}: {' | '.join(self.tokens)}"
        return f"{text} {{{self.comment}}}" if self.comment else text


@dataclass
class GameRecord:
    """A Battle Line game record (``.blg``): tags (the event, the rules, the deal...), the turns
    and an optional forfeit. ``GameRecord.loads(text)`` reads one; :meth:`dumps` writes the
    canonical text."""

    tags: dict[str, str] = field(default_factory=dict)
    turns: list[Turn] = field(default_factory=list)
    forfeit: tuple[int, str] | None = None
    """Who forfeited the game and why (the record's last line), or None."""
    forfeit_line: int = field(default=0, compare=False)

    # -- text ------------------------------------------------------------------------
    def dumps(self) -> str:
        """The canonical ``.blg`` text: the known tags in their fixed order, other tags sorted, a
        blank line, one line per turn, and the forfeit line if any."""
        order = [t for t in TAG_ORDER if t in self.tags]
        order += sorted(t for t in self.tags if t not in TAG_ORDER)
        lines = [f'[{t} "{_escape(self.tags[t])}"]' for t in order]
        lines.append("")
        lines += [turn.line() for turn in self.turns]
        if self.forfeit is not None:
            who, why = self.forfeit
            lines.append(f"forfeit {PLAYERS[who]} {why}".rstrip())
        return "\n".join(lines) + "\n"

    @classmethod
    def loads(cls, text: str) -> GameRecord:
        """Parse a record; a malformed line raises :class:`RecordError` naming it."""
        rec = cls()
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if rec.forfeit is not None:
                raise RecordError(f"line {number}: nothing may follow the forfeit line: {line!r}")
            f = _FORFEIT_RE.match(line)
            if f:
                rec.forfeit = (PLAYERS.index(f.group(1).lower()), f.group(2) or "")
                rec.forfeit_line = number
                continue
            m = _TAG_RE.match(line)
            if m:
                if rec.turns:
                    raise RecordError(f"line {number}: tag after the first turn: {line!r}")
                rec.tags[m.group(1)] = _unescape(m.group(2))
                continue
            m = _TURN_RE.match(line)
            if not m:
                raise RecordError(f'line {number}: neither a [Tag "value"] nor a turn: {line!r}')
            body, comment = m.group(3), ""
            c = _COMMENT_RE.match(body)
            if c:
                body, comment = c.group(1), c.group(2).strip()
            elif "{" in body or "}" in body:
                raise RecordError(f"line {number}: a comment must be one {{...}} at the end")
            tokens = [t.strip() for t in body.split("|")] if body.strip() else []
            if any(not t for t in tokens):
                raise RecordError(f"line {number}: empty action between '|'")
            turn = Turn(int(m.group(1)), "NS".index(m.group(2)), tokens, number, comment)
            rec.turns.append(turn)
        return rec

    # -- setup -----------------------------------------------------------------------
    def config(self) -> RulesConfig:
        """The rules the game was played under (its ``Theme`` and ``Rules`` tags)."""
        theme = check_theme(self.tags.get("Theme", "battleline"))
        return RulesConfig.parse(self.tags.get("Rules", ""), theme)

    def troops_only(self) -> bool:
        """True for a game of the bot protocol (``[Deck "troops"]``)."""
        deck = self.tags.get("Deck", "full").lower()
        if deck not in DECKS:
            raise RecordError(f"Deck tag must be full or troops, got {deck!r}")
        return deck == "troops"

    def first(self) -> int:
        """The seat that moved first (the ``First`` tag, north by default); a
        :class:`RecordError` for any other value."""
        first = self.tags.get("First", "north").lower()
        if first not in PLAYERS:
            raise RecordError(f"First tag must be north or south, got {first!r}")
        return PLAYERS.index(first)

    def deal(self) -> tuple[list[int], list[int]]:
        """The two seven-troop hands dealt (the ``DealNorth`` and ``DealSouth`` tags); a
        :class:`RecordError` when one is missing or not seven troops."""
        hands = []
        for tag in ("DealNorth", "DealSouth"):
            if tag not in self.tags:
                raise RecordError(f'missing [{tag} "..."]: the deal is needed to replay')
            cards = [parse_card(c, tag) for c in self.tags[tag].split()]
            if len(cards) != 7 or any(c >= TROOP_COUNT for c in cards):
                raise RecordError(f"{tag} must list 7 troops, got {self.tags[tag]!r}")
            hands.append(cards)
        return hands[0], hands[1]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def remove_tactics(state: BattleLineState) -> BattleLineState:
    """Take the tactics deck out of a game at the deal: the troops-only game of the bot
    protocol (the GMT rules with troops only; docs/rulings.md 12 then lets a player pass only
    when he has no troop or no open slot). Returns the same state."""
    if state.history or state.tactics_played != [0, 0]:
        raise ValueError("the tactics deck can only be removed before the deal")
    state.unknown[TACTICS_DECK].clear()
    state.known_top[TACTICS_DECK].clear()
    state.settle()
    return state


def is_troops_only(state: BattleLineState) -> bool:
    """Is this a troops-only game (no tactic card anywhere: decks, hands, table, discards)?"""
    places = [
        state.unknown[TACTICS_DECK],
        [c for c, _ in state.known_top[TACTICS_DECK]],
        *state.hands,
        *state.discards,
        [p.card for f in state.flags for side in f.sides for p in side],
        [p.card for f in state.flags for p in f.environment],
    ]
    return not any(c >= TROOP_COUNT for cards in places for c in cards)


def record_from_state(state: BattleLineState, tags: dict[str, str] | None = None) -> GameRecord:
    """The record of a game from its action history (deal, plays, claims, draws); a
    troops-only game gets ``[Deck "troops"]``."""
    naming = state.naming
    rec = GameRecord(dict(tags or {}))
    rec.tags.setdefault("Rules", state.config.notation())
    rec.tags.setdefault("Theme", state.config.theme)
    rec.tags.setdefault("First", PLAYERS[state.first])
    replay = BattleLineState(state.config, state.first, certify=False)
    if is_troops_only(state):
        rec.tags["Deck"] = "troops"
        remove_tactics(replay)
    deal: tuple[list[str], list[str]] = ([], [])
    turn: Turn | None = None
    pending_draw: str | None = None
    for a in state.history:
        if replay.phase == DEAL:
            who = len(deal[0]) + len(deal[1]) < 7
            deal[state.first if who else 1 - state.first].append(naming.card(a.card))
            replay.apply_action_unchecked(a)
            continue
        mover = replay.to_move
        if turn is None or turn.number != replay.turn:
            turn = Turn(replay.turn, mover, [])
            rec.turns.append(turn)
        if a.kind == CARD:
            assert pending_draw is not None
            turn.tokens.append(f"{pending_draw} {naming.card(a.card)}")
            pending_draw = None
        elif a.kind == DRAW:
            pending_draw = f"draw {DECK_NAMES[a.deck]}"
        elif a.kind != END_CLAIMS:
            turn.tokens.append(a.notation(naming))
        replay.apply_action_unchecked(a)
        if a.kind == DRAW and replay.current_player() != CHANCE:
            # A known card (put back by a Scout) was drawn without a chance node.
            turn.tokens.append(f"{pending_draw} {naming.card(replay.last_drawn)}")
            pending_draw = None
    rec.tags["DealNorth"] = " ".join(deal[NORTH])
    rec.tags["DealSouth"] = " ".join(deal[SOUTH])
    rec.forfeit = state.forfeited
    rec.tags["Result"] = result_tag(state)
    return rec


def result_tag(state: BattleLineState) -> str:
    """The ``Result`` tag a record of this state carries: the winner's seat, ``draw``,
    or ``*`` while the game is not over."""
    if not state.is_terminal():
        return "*"
    return {0: "north", 1: "south"}.get(state.winner, "draw")


@dataclass
class ReplayProblem:
    """The first thing wrong with a replayed record: the turn and file line, its kind
    (``illegal``, ``unjustified-claim``, ``mismatch``, ``wrong-result``, ``no-result``) and
    a sentence naming the rule broken."""

    turn: int
    line: int
    kind: str  # "illegal" | "unjustified-claim" | "mismatch" | "wrong-result" | "no-result"
    detail: str


@dataclass
class ReplayReport:
    """The outcome of a replay: the state reached, how many claims were re-proved, and the first
    problem (None when the record is sound)."""

    state: BattleLineState
    claims: int
    problem: ReplayProblem | None

    @property
    def sound(self) -> bool:
        """True when the replay found no problem."""
        return self.problem is None


def replay(
    rec: GameRecord,
    *,
    upto_turn: int | None = None,
    on_step: Callable[[BattleLineState, int], None] | None = None,
) -> ReplayReport:
    """Replay a record, re-adjudicating every claim with a fresh, verified proof.

    ``on_step(state, turn)`` is called at the start of every turn and after each of its
    actions (an audit uses it to see every question a position asked).

    Stops at the first illegal move or unjustified claim and reports it with its turn.
    ``upto_turn`` stops before that turn (for showing a position).
    """
    state = _dealt(rec)
    for turn in rec.turns:
        line = turn.line_number
        if upto_turn is not None and turn.number >= upto_turn:
            break

        def problem(kind: str, detail: str, turn: Turn = turn, line: int = line) -> ReplayReport:
            return ReplayReport(
                state, len(state.claims), ReplayProblem(turn.number, line, kind, detail)
            )

        if state.is_terminal():
            return problem("illegal", "the game is already over")
        if turn.number != state.turn or turn.player != state.to_move:
            return problem(
                "mismatch",
                f"expected turn {state.turn} for {PLAYERS[state.to_move]}, "
                f"the record has turn {turn.number} for {PLAYERS[turn.player]}",
            )
        if on_step is not None:
            on_step(state, turn.number)
        for token in turn.tokens:
            stopped = _play_token(state, token, line, problem)
            if stopped is not None:
                return stopped
            if on_step is not None:
                on_step(state, turn.number)
        # Claims not made are implied: close the claim window the line ends in.
        while (
            state.turn == turn.number
            and state.phase in (CLAIM_START, CLAIM_END)
            and not state.is_terminal()
        ):
            state.apply_action(Action(END_CLAIMS))
    if upto_turn is not None:
        return ReplayReport(state, len(state.claims), None)
    return _ended(state, rec)


def _dealt(rec: GameRecord) -> BattleLineState:
    """The game of ``rec`` after its deal (tactics removed for a troops-only record)."""
    state = BattleLineState(rec.config(), rec.first())
    if rec.troops_only():
        remove_tactics(state)
    north, south = rec.deal()
    order = (north, south) if state.first == NORTH else (south, north)
    for dealt in [*order[0], *order[1]]:
        action = Action(CARD, card=dealt)
        if action not in state.legal_actions():
            raise RecordError(f"the deal gives {card_name(dealt)} twice")
        state.apply_action_unchecked(action)
    return state


def _play_token(
    state: BattleLineState,
    token: str,
    line: int,
    problem: Callable[[str, str], ReplayReport],
) -> ReplayReport | None:
    """Play one token of a turn (its actions, then the card it draws); the report of the
    first illegal action, refused claim or wrong card, or None when all of it plays."""
    try:
        actions, card = _token_actions(token)
    except InputError as e:
        raise RecordError(f"line {line}: {e}") from None
    place = "the deck" if card is None else state.where(card)
    if not place.endswith("deck"):
        # a hand with a card that is elsewhere cannot exist: bad input
        raise RecordError(
            f"line {line}: {token}: {state.naming.card(card or 0)} is already in {place}"
        )
    for action in actions:
        is_claim = action.kind == CLAIM
        if is_claim and action not in state.legal_actions():
            return _refused_claim(state, action, token, problem)
        if not is_claim and state.phase in (CLAIM_START, CLAIM_END):
            state.apply_action(Action(END_CLAIMS))
        try:
            state.apply_action(action)
        except IllegalActionError as e:
            # why_illegal names the action and the rule it breaks (docs/rulings.md)
            said = str(e)
            shown = action.notation(state.naming).lower()
            return problem(
                "illegal", said if said.lower().startswith(shown) else f"{token}: {said}"
            )
        if is_claim:
            bl.verify(state.claims[-1].proof)  # the fresh proof checks
    if card is not None:
        try:
            got = _receive(state, card)
        except IllegalActionError as e:
            return problem("illegal", f"{token}: {e}")
        if got != card:
            return problem(
                "mismatch",
                f"{token}: the card on top is {card_name(got)}, not {card_name(card)}",
            )
    return None


def _ended(state: BattleLineState, rec: GameRecord) -> ReplayReport:
    """The report once every turn of ``rec`` is played: its forfeit applied, and its
    Result tag checked against how the game stands."""
    last_turn = rec.turns[-1].number if rec.turns else 0
    if rec.forfeit is not None:
        if state.is_terminal():
            return ReplayReport(
                state,
                len(state.claims),
                ReplayProblem(
                    last_turn, rec.forfeit_line, "illegal", "a forfeit after the game is over"
                ),
            )
        state.forfeit(*rec.forfeit)
    claimed = rec.tags.get("Result")
    actual = result_tag(state)
    if claimed is None:
        end = rec.forfeit_line or (rec.turns[-1].line_number if rec.turns else 0)
        return ReplayReport(
            state,
            len(state.claims),
            ReplayProblem(
                last_turn,
                end,
                "no-result",
                'the record has no Result tag ([Result "..."]): the result it should state is '
                f"{'not over' if actual == '*' else actual}",
            ),
        )
    if claimed is not None and claimed.strip().lower() != actual:
        end = rec.forfeit_line or (rec.turns[-1].line_number if rec.turns else 0)
        said = "not over" if claimed.strip() == "*" else claimed
        outcome = "not over" if actual == "*" else actual
        return ReplayReport(
            state,
            len(state.claims),
            ReplayProblem(
                last_turn, end, "wrong-result", f"the record says {said}, the game {outcome}"
            ),
        )
    return ReplayReport(state, len(state.claims), None)


def _refused_claim(
    state: BattleLineState, action: Action, token: str, problem: Any
) -> ReplayReport:
    """A claim the state does not offer: unjustified (the solver refutes it, with the
    witness) when the claim window is open and the side complete; illegal otherwise."""
    flag = state.flags[action.flag - 1] if 1 <= action.flag <= len(state.flags) else None
    if not state.claim_window_open():
        report: ReplayReport = problem(
            "illegal", f"{token}: claims are not allowed at this point of the turn"
        )
        return report
    try:
        proof = state.judge_claim(action.flag, state.to_move) if flag is not None else None
    except IllegalActionError as e:
        report = problem("illegal", f"{token}: {e}")
        return report
    if proof is None or proof.witness is None:
        report = problem("illegal", f"{token}: not a legal claim here")
        return report
    report = problem("unjustified-claim", f"{token}: {proof.explanation[0]}")
    return report


def _token_actions(token: str) -> tuple[list[Action], int | None]:
    """The actions of one token, and the card a draw token says was received."""
    m = re.fullmatch(r"draw\s+(troop|tactics)(?:\s+(\S+))?", token.strip(), re.IGNORECASE)
    if m:
        if m.group(2) is None:
            raise InputError(f"{token.strip()!r} does not name the card drawn")
        return [Action(DRAW, deck=DECK_NAMES.index(m.group(1).lower()))], parse_card(m.group(2))
    return [Action.parse(token)], None


def _receive(state: BattleLineState, card: int) -> int:
    """After a draw: resolve the chance node with ``card``, or read the known card drawn."""
    if state.phase == DRAW_CARD:
        action = Action(CARD, card=card)
        if action not in state.legal_actions():
            raise IllegalActionError(f"{card_name(card)} is not in that deck")
        state.apply_action_unchecked(action)
    return state.last_drawn
