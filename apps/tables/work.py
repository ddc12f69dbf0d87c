"""A table's games as the service's worker processes run them (module-level functions, so
they pickle; free of the web stack): a new table dealt (:func:`start`), a seat's action
(:func:`act`), a bot's decision (:func:`bot_step`), a resignation or a flag fallen
(:func:`forfeit`), and the finished game's record (:func:`record`).

The table travels as bytes (:class:`Game` pickled: the engine's state, the bots with their
memory, the chance generator), is changed here, and goes back as bytes with what every
watcher may see of it (:class:`Change`): the view of each seat and of a spectator, drawn
here so that the service's own process never holds a hand. The rules are the engine's:
every action is checked by
:meth:`~battlejudge.engines.battleline.state.BattleLineState.apply_action`, every claim
proved by the solver, its proof checked by dratify (:func:`~battlejudge.solver.battleline.verify`)
and its record made for the proof log, refused claims included, with the table and turn.
"""

from __future__ import annotations

import pickle
import random
from dataclasses import dataclass, field
from typing import Any, Final

# The registry's Battle Line entry (its bots, records, rendering: 57 modules), imported here
# so that the workers' forkserver, which preloads this module, has it: a fresh worker's
# first table job imported it lazily, 80 ms on a quiet machine and past the service's 2 s
# time limit on busy cores (a new table answered 503 in CI).
import battlejudge.engines.battleline.game  # noqa: F401
from battlejudge.engines.battleline.actions import CLAIM, DRAW, END_CLAIMS, RETURN, Action
from battlejudge.engines.battleline.state import (
    CLAIM_END,
    CLAIM_START,
    DRAW_CARD,
    FLAGS,
    PHASE_NAMES,
    PLAYERS,
    BattleLineState,
)
from battlejudge.engines.game import CHANCE, IllegalActionError, sample_chance
from battlejudge.engines.games import GameMeta, Setup, get_game
from battlejudge.engines.records import record_format
from battlejudge.proofs.log import PreparedRecord, claim_record, prepare_record
from battlejudge.solver import battleline as bl
from battlejudge.solver.battleline.cards import TROOP_COUNT
from battlejudge.solver.errors import InputError

GAMES: Final = ("battleline", "nine-circles")
"""The registry's games a table may play (Battle Line in either theme)."""
BOTS: Final = ("heuristic", "search", "expert")
"""The bots a seat may be (``bot:NAME``), from the registry."""
OPTIONS: Final = ("theme", "deck", "claim_timing", "environment_removable", "stalemate")
"""The game options a table takes (the registry's; docs/rulings.md's house rules)."""
LAST: Final = 12
"""Actions shown as the table's latest."""
VIEWERS: Final = ("north", "south", "spectator")


class NotYourTurn(InputError):
    """A seat acted while the other is to move (409, not 422)."""


@dataclass
class Game:
    """One table's game: the state, each seat (``human`` or ``bot:NAME``) with its bot,
    the chance generator, the moves as the record writes them, what each action showed
    (``public``: the seat, the action, and the card a draw gave, which only its drawer
    sees) and every claim decided (``claims``: the answer as JSON, accepted or not)."""

    table_id: str
    state: BattleLineState
    seats: tuple[str, str]
    bots: dict[int, Any]
    rng: random.Random
    seed: int
    options: dict[str, str]
    moves: list[tuple[int, str]] = field(default_factory=list)
    public: list[dict[str, Any]] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)
    refused: dict[tuple[int, int], int] = field(default_factory=dict)
    """(seat, flag) -> how many actions the game had when that claim was refused: the
    same claim is judged again only once the table has changed."""

    def bot_to_move(self) -> bool:
        """Whether a bot must decide now."""
        who = self.state.current_player()
        return not self.state.is_terminal() and who != CHANCE and self.seats[who] != "human"


@dataclass
class Change:
    """What a piece of work did to a table: the game's new bytes, the views of each seat
    and of a spectator, who is to move (None when nobody, the game being over), the proof
    log records of the claims it decided, a refused claim's answer (``refused``, shown
    with a 422) and the game's record once it is over."""

    blob: bytes
    views: dict[str, dict[str, Any]]
    to_move: str | None
    bot_to_move: bool
    over: bool
    records: list[PreparedRecord]
    refused: dict[str, Any] | None = None
    record: str | None = None


class _Collector:
    """The engine's claim log (:class:`~battlejudge.engines.battleline.state.ClaimLog`):
    each claim it decides becomes a proof-log record, encoded here for the service's log
    writer to chain."""

    def __init__(self) -> None:
        self.records: list[PreparedRecord] = []

    def append(self, **fields: Any) -> dict[str, Any]:
        record = claim_record(**fields)
        self.records.append(prepare_record(record))
        return record


def check_seat_kind(kind: str, where: str) -> str:
    """``human`` or ``bot:NAME`` of one of :data:`BOTS`; :class:`InputError` naming
    ``where`` otherwise."""
    if kind == "human" or (kind.startswith("bot:") and kind[4:] in BOTS):
        return kind
    bots = ", ".join(f"bot:{b}" for b in BOTS)
    raise InputError(f"{where} must be human or one of {bots}, got {kind!r:.40}")


def start(
    table_id: str, game: str, seats: tuple[str, str], options: dict[str, str], seed: int
) -> Change:
    """A new table of ``game`` (:data:`GAMES`) with ``seats`` (north, south), ``options``
    (:data:`OPTIONS`) and a seed for the deal and the bots, dealt. :class:`InputError`
    names a bad game, option or seat."""
    if game not in GAMES:
        raise InputError(f"game must be one of {', '.join(GAMES)}, got {game!r:.40}")
    for key in options:
        if key not in OPTIONS:
            raise InputError(f"options.{key}: no such option (options: {', '.join(OPTIONS)})")
    for seat, kind in zip(PLAYERS, seats, strict=True):
        check_seat_kind(kind, seat)
    info = get_game(game)
    state = info.start(options, Setup(game_id=table_id))
    assert isinstance(state, BattleLineState)
    bots = {
        i: info.make_bot(kind[4:], seed + 1 + i) for i, kind in enumerate(seats) if kind != "human"
    }
    g = Game(table_id, state, seats, bots, random.Random(seed), seed, dict(options))
    _chance(g)
    return _change(g, [])


def _load(blob: bytes) -> Game:
    """A stored game; fields added since it was stored take their defaults."""
    g: Game = pickle.loads(blob)
    g.__dict__.setdefault("refused", {})
    return g


def _apply(g: Game, player: int, action: Action) -> None:
    """Apply a decision or a chance outcome, noting what it shows and the claims it decides."""
    state = g.state
    claims = len(state.claims)
    notation = state.action_to_string(action)
    if player == CHANCE:
        last = g.public[-1] if g.public else None
        if state.phase == DRAW_CARD and last is not None and last["draws"] and "card" not in last:
            last["card"] = state.naming.card(action.card)  # the drawer's eyes only (_last)
    elif action.kind != END_CLAIMS:
        entry = {
            "turn": state.turn,
            "seat": PLAYERS[player],
            "action": notation,
            "draws": action.kind == DRAW,
        }
        if action.kind == RETURN:  # face down on its deck (Rules: Scout): which card is his
            entry["own"] = notation
            entry["action"] = f"return {'troop' if action.card < TROOP_COUNT else 'tactics'}"
        g.public.append(entry)
    g.moves.append((player, notation))
    state.apply_action(action)
    for c in state.claims[claims:]:
        g.claims.append(_claim_json(g, c.turn, c.player, c.flag, c.proof))
    # the proofs (CNF and DRAT text) are in g.claims as JSON now: kept in the state too,
    # they were most of the bytes carried to and from a worker and stored at every move
    del state.claims[:]


def _claim_json(
    g: Game, turn: int, player: int, flag: int, proof: bl.ProvedClaim
) -> dict[str, Any]:
    """A decided claim as every viewer sees it: who, where, the verdict and its evidence
    (blocking cards, or the witness), whether the proof checked, and the question (from
    which the certificate is made again, the same bytes every time)."""
    from battlejudge.engines.battleline.answer_json import result_json

    return {
        "turn": turn,
        "player": PLAYERS[player],
        "flag": flag,
        "accepted": proof.valid,
        **result_json(proof),
        "verified": bl.verify(proof),
        "question": proof.question.to_json(),
    }


def _chance(g: Game) -> None:
    state = g.state
    while not state.is_terminal() and state.current_player() == CHANCE:
        _apply(g, CHANCE, sample_chance(state, g.rng))


def _claim_window(state: BattleLineState) -> bool:
    return state.phase in (CLAIM_START, CLAIM_END)


def legal(state: BattleLineState) -> list[str]:
    """The actions the player to move may take, in record notation: the engine's legal
    actions, and in a claim window also what he may do once he makes no more claims (the
    window then closes by itself, as in ``battlejudge play``)."""
    out = [state.action_to_string(a) for a in state.legal_actions()]
    if _claim_window(state):
        after = state.clone()
        after.apply_action(Action(END_CLAIMS))
        if after.current_player() == state.current_player() and not after.is_terminal():
            out += [
                t
                for t in (after.action_to_string(a) for a in after.legal_actions())
                if t not in out
            ]
    return out


def act(blob: bytes, seat: int, text: str) -> Change:
    """The table after ``seat`` takes the action written ``text`` (then chance, until
    someone must decide). :class:`NotYourTurn` when the other seat is to move;
    :class:`InputError` naming why for an action that is not legal now. A claim the
    solver refutes changes nothing on the table but is recorded (and logged) with its
    witness: the change carries it in ``refused``."""
    g = _load(blob)
    state = g.state
    if state.is_terminal():
        raise NotYourTurn("the game is over")
    if state.current_player() != seat:
        raise NotYourTurn(f"it is not your turn: {PLAYERS[state.current_player()]} is to move")
    try:
        action = Action.parse(text.strip())
    except InputError as e:
        raise InputError(f"action {text.strip()[:40]!r}: {e}") from None
    collector = _Collector()
    state.log = collector
    try:
        if action.kind == CLAIM and action not in state.legal_actions():
            refused = _try_claim(g, seat, action)
            return _change(g, collector.records, refused=refused)
        if action not in state.legal_actions() and _claim_window(state):
            after = state.clone()
            after.apply_action(Action(END_CLAIMS))
            if action in after.legal_actions():
                _apply(g, seat, Action(END_CLAIMS))
        if action not in state.legal_actions():
            raise InputError(state.why_illegal(action))
        _apply(g, seat, action)
        _chance(g)
        return _change(g, collector.records)
    finally:
        state.log = None


def _try_claim(g: Game, seat: int, action: Action) -> dict[str, Any]:
    """A claim the engine does not offer: refused with the solver's witness when the
    claim window is open and the side complete (recorded as a claim decided), or
    :class:`InputError` saying why it cannot be made at all."""
    state = g.state
    key = (seat, action.flag)
    if g.refused.get(key) == len(state.history):
        raise InputError(
            f"{PLAYERS[seat]}'s claim of {state.naming.flag} {action.flag} was refused and "
            "nothing has changed on the table since: the judge's answer stands"
        )
    try:
        state.apply_action(action)
    except IllegalActionError as e:
        proof = _refutation(state, seat, action)
        if proof is None:
            raise InputError(str(e)) from None
        g.refused[key] = len(state.history)
        claim = _claim_json(g, state.turn, seat, action.flag, proof)
        g.claims.append(claim)
        g.public.append(
            {
                "turn": state.turn,
                "seat": PLAYERS[seat],
                "action": f"claim {action.flag}",
                "refused": True,
                "draws": False,
            }
        )
        return {"error": str(e), "claim": claim}
    raise AssertionError("a claim not offered was accepted")  # pragma: no cover


def _refutation(state: BattleLineState, seat: int, action: Action) -> bl.ProvedClaim | None:
    """The solver's refutation of ``seat``'s claim, when the claim could be made now."""
    if not state.claim_window_open() or not 1 <= action.flag <= FLAGS:
        return None
    f = state.flags[action.flag - 1]
    if f.claimed_by >= 0 or len(f.sides[seat]) != f.size:
        return None
    proof = state.judge_claim(action.flag, seat)
    return None if proof.valid else proof


def bot_step(blob: bytes) -> Change:
    """The table after one bot decision (and chance): each decision is one job, so a
    searching bot's thinking stays within the service's limits per job."""
    g = _load(blob)
    collector = _Collector()
    g.state.log = collector
    try:
        if g.bot_to_move():
            who = g.state.current_player()
            _apply(g, who, g.bots[who].step(g.state))
            _chance(g)
        return _change(g, collector.records)
    finally:
        g.state.log = None


def forfeit(blob: bytes, seat: int, why: str) -> Change:
    """The table after ``seat`` loses by ``why`` (``resigned``, ``timeout``)."""
    g = _load(blob)
    if g.state.is_terminal():
        raise NotYourTurn("the game is over")
    g.state.forfeit(seat, why)
    g.public.append({"turn": g.state.turn, "seat": PLAYERS[seat], "action": why, "draws": False})
    return _change(g, [])


def certificate_of(question: dict[str, Any]) -> dict[str, Any]:
    """The certificate file's JSON of a claim decided at a table, made again from its
    question (proved and checked as every claim of the service is,
    :func:`battlejudge.apps.claim_work.proved`; the same bytes every time)."""
    from battlejudge.apps import claim_work

    p, _ = claim_work.proved(bl.ClaimQuestion.from_json(question), None)
    return claim_work.certificate_json(p)


def record(blob: bytes) -> str:
    """The game's ``.blg`` record (tags, deal, every turn, the result)."""
    return record_text(_load(blob))


def _change(
    g: Game, records: list[PreparedRecord], refused: dict[str, Any] | None = None
) -> Change:
    state = g.state
    state.log = None  # the claims it collected are in ``records``; not part of the game
    over = state.is_terminal()
    who = state.current_player()
    return Change(
        blob=pickle.dumps(g, protocol=pickle.HIGHEST_PROTOCOL),
        views={v: view(g, v) for v in VIEWERS},
        to_move=None if over or who < 0 else PLAYERS[who],
        bot_to_move=g.bot_to_move(),
        over=over,
        records=records,
        refused=refused,
        record=record_text(g) if over else None,
    )


def record_text(g: Game) -> str:
    """:func:`record` of a game in hand."""
    info = get_game("battleline")
    names: dict[str, str] = {str(PLAYERS[i]): s for i, s in enumerate(g.seats)}
    meta = GameMeta(seed=g.seed, bots=names, game_id=g.table_id, options=g.options)
    return record_format(info).write(info, g.state, g.moves, meta)


def view(g: Game, viewer: str) -> dict[str, Any]:
    """What ``viewer`` (a seat, or ``spectator``) may see: the table, its own hand and
    legal actions (a seat's, when it is to move), hand and deck sizes, the claims with
    their evidence, the latest actions with who made them (a drawn card only to its
    drawer) and the result. Never another seat's hand or the decks' order."""
    state = g.state
    naming = state.naming
    seat = PLAYERS.index(viewer) if viewer in PLAYERS else None
    over = state.is_terminal()
    who = state.current_player()
    to_move = None if over or who < 0 else PLAYERS[who]
    mine = seat is not None and who == seat and not over
    out: dict[str, Any] = {
        "seat": viewer if seat is not None else None,
        "seats": dict(zip(PLAYERS, g.seats, strict=True)),
        "theme": state.config.theme,
        "options": dict(g.options),
        "turn": state.turn,
        "to_move": to_move,
        "phase": None if over else PHASE_NAMES[state.phase],
        "hand": None if seat is None else [naming.card(c) for c in state.hands[seat]],
        "hand_sizes": {PLAYERS[i]: len(state.hands[i]) for i in (0, 1)},
        "legal": legal(state) if mine else [],
        "may_claim": _may_claim(state, seat) if mine else [],
        "flags": _flags(state),
        "claims": g.claims,
        "decks": {"troop": state.deck_size(0), "tactics": state.deck_size(1)},
        "discards": {PLAYERS[i]: [naming.card(c) for c in state.discards[i]] for i in (0, 1)},
        "last": _last(g, viewer),
        "result": _result(state),
    }
    return out


def _may_claim(state: BattleLineState, seat: int | None) -> list[int]:
    """The flags ``seat`` may claim now (his side complete, the flag free, the claim
    window open): the judge then accepts or refuses with the witness."""
    if seat is None or not state.claim_window_open():
        return []
    return [
        i
        for i, f in enumerate(state.flags, start=1)
        if f.claimed_by < 0 and len(f.sides[seat]) == f.size
    ]


def _flags(state: BattleLineState) -> list[dict[str, Any]]:
    naming = state.naming
    return [
        {
            "flag": i,
            "north": [naming.card(p.card) for p in f.sides[0]],
            "south": [naming.card(p.card) for p in f.sides[1]],
            "environment": [naming.card(p.card) for p in f.environment],
            "claimed_by": PLAYERS[f.claimed_by] if f.claimed_by >= 0 else None,
            "size": f.size,
        }
        for i, f in enumerate(state.flags, start=1)
    ]


def _last(g: Game, viewer: str) -> list[dict[str, Any]]:
    """The latest actions as ``viewer`` may know them: a card drawn, and the cards a
    Scout put back face down (only the deck is seen), are told to that seat alone."""
    out = []
    for entry in g.public[-LAST:]:
        item = {k: entry[k] for k in ("turn", "seat", "action")}
        if entry.get("refused"):
            item["refused"] = True
        if entry["seat"] == viewer:  # what only the seat that acted knows
            if entry.get("card") is not None:
                item["card"] = entry["card"]
            if entry.get("own") is not None:
                item["action"] = entry["own"]
        out.append(item)
    return out


def _result(state: BattleLineState) -> dict[str, Any] | None:
    outcome = state.outcome()
    if outcome is None:
        return None
    how = outcome.termination
    if state.forfeited is not None:
        how = state.forfeited[1] or how
    return {"winner": outcome.winner, "reason": how}
