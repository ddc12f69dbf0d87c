"""Battle Line (and its Nine Circles theme) as the generic machinery sees it: the
registry entries ``battleline`` and ``nine-circles``, its bots, its ``.blg`` records as a
:class:`~battlejudge.engines.games.RecordFormat`, its position files, and what a human
may type in ``battlejudge play``.

Options (``-o KEY=VALUE``): ``theme`` (``battleline`` or ``nine-circles``: names only,
the rules are the same), ``claim_timing`` (``standard`` or ``advanced``, docs/rulings.md 14),
``environment_removable`` (``false``, the default, or ``true``, docs/rulings.md 10),
``stalemate`` (``dead``, the default, or ``idle``, docs/rulings.md 17) and ``deck``
(``full``, or ``troops`` for the 60 troops of the community bot protocol).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from battlejudge.engines.battleline import position as positions
from battlejudge.engines.battleline.actions import CARD, CLAIM, DRAW, END_CLAIMS, Action
from battlejudge.engines.battleline.bots.expert import ExpertBot
from battlejudge.engines.battleline.bots.heuristic import HeuristicBot
from battlejudge.engines.battleline.bots.random_bot import RandomBot
from battlejudge.engines.battleline.bots.search import SearchBot
from battlejudge.engines.battleline.cards import check_theme
from battlejudge.engines.battleline.config import STALEMATES, RulesConfig
from battlejudge.engines.battleline.record import (
    DECKS,
    GameRecord,
    record_from_state,
    remove_tactics,
    replay,
)
from battlejudge.engines.battleline.render import render as render_table
from battlejudge.engines.battleline.state import (
    CLAIM_END,
    CLAIM_START,
    HAND_SIZE,
    NORTH,
    PLAYERS,
    SOUTH,
    BattleLineState,
)
from battlejudge.engines.game import CHANCE, GameState, IllegalActionError
from battlejudge.engines.games import GameInfo, GameMeta, Options, Problem, Replayed, Setup
from battlejudge.engines.seats import Seat
from battlejudge.proofs.battleline.certificate import CertificateFile
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import InputError

OPTIONS = {
    "theme": "battleline or nine-circles (names only; the rules are the same)",
    "claim_timing": "standard (claims until the draw) or advanced (at the turn's start only)",
    "environment_removable": "false (default: played Fog and Mud stay) or true: may Deserter "
    "and Redeploy take them",
    "stalemate": "dead (default: the game ends when nobody can do anything but pass) or idle "
    "(after two turns with nothing played, claimed or drawn)",
    "deck": "full, or troops (the 60 troops of the community bot protocol)",
}

HELP = """Type an action in record notation, for example:
  R7@3            play Red 7 (or a morale or environment tactic) at flag 3
  claim 2         claim flag 2 (the solver must prove it)
  can I claim 2?  ask whether flag 2 can be claimed: the proof or the witness
  scout, return R3, redeploy R7@3>5, deserter G5@4, traitor G5@4>6, discard R3@5
  pass, done (no more claims), draw troop, draw tactics
  moves           list the legal actions; quit to stop."""


def config_of(options: Options) -> tuple[RulesConfig, bool]:
    """The rules settings and whether the game is troops-only, from the options;
    :class:`InputError` names a bad value."""
    theme = check_theme(options.get("theme", "battleline"))
    timing = options.get("claim_timing", "standard")
    removable = options.get("environment_removable", "false").lower()
    stalemate = options.get("stalemate", "dead").lower()
    deck = options.get("deck", "full").lower()
    if removable not in ("true", "false"):
        raise InputError(f"option environment_removable={removable!r} is not true or false")
    if timing not in ("standard", "advanced"):
        raise InputError(f"option claim_timing={timing!r} is not standard or advanced")
    if deck not in DECKS:
        raise InputError(f"option deck={deck!r} is not {' or '.join(DECKS)}")
    if stalemate not in STALEMATES:
        raise InputError(f"option stalemate={stalemate!r} is not {' or '.join(STALEMATES)}")
    config = RulesConfig(removable == "true", timing, theme, stalemate)  # type: ignore[arg-type]
    return config, deck == "troops"


def new_game(options: Options) -> BattleLineState:
    """A game at the deal, north to move first."""
    config, troops_only = config_of(options)
    state = BattleLineState(config, NORTH)
    return remove_tactics(state) if troops_only else state


def _prepare(state: GameState[Any], setup: Setup) -> None:
    assert isinstance(state, BattleLineState)
    state.certify = setup.certify
    state.log = setup.log
    state.game_id = setup.game_id


def _render(state: GameState[Any], viewer: int | None) -> Any:
    assert isinstance(state, BattleLineState)
    return render_table(state, viewer)


def _stats(state: GameState[Any]) -> dict[str, Any]:
    assert isinstance(state, BattleLineState)
    return {"turns": state.turn, "claims": len(state.claims)}


class BlgRecords:
    """Battle Line's ``.blg`` records (:mod:`.record`) as a record format: replay
    re-proves every claim; ``upto`` counts turns (the table at the start of that turn)."""

    def sniff(self, text: str) -> bool:
        """Whether ``text`` looks like a ``.blg`` record (it starts with a tag, a comment or a
        turn number)."""
        head = text.lstrip()[:1]
        return head in ("[", "#") or head.isdigit()

    def write(
        self,
        game: GameInfo,
        state: GameState[Any],
        moves: Sequence[tuple[int, str]],
        meta: GameMeta,
    ) -> str:
        """The ``.blg`` text of a finished game: the tags from ``meta`` and the game's rules and
        deal, then one line per turn."""
        assert isinstance(state, BattleLineState)
        tags: dict[str, str] = {}
        if meta.event is not None:
            tags["Event"] = meta.event
        if meta.game_id is not None:
            tags["Game"] = meta.game_id
        if meta.date is not None:
            tags["Date"] = meta.date
        for seat in PLAYERS:
            if seat in meta.bots:
                tags[seat.capitalize()] = meta.bots[seat]
        if meta.seed is not None:
            tags["Seed"] = str(meta.seed)
        return record_from_state(state, tags).dumps()

    def replay(self, text: str, upto: int | None = None) -> Replayed:
        """Replay the record (up to turn ``upto``), checking every action and re-proving every
        claim; the state reached, the result, and the first problem found if any."""
        rec = GameRecord.loads(text)
        report = replay(rec, upto_turn=upto)
        state = report.state
        theme = rec.config().theme
        game = NINE_CIRCLES if theme == "nine-circles" else GAME
        result: str | None = None
        if state.is_terminal():
            result = PLAYERS[state.winner] if 0 <= state.winner <= 1 else "draw"
        p = report.problem
        problem = None
        if p is not None:
            problem = Problem(p.line, p.kind, p.detail, f"turn {p.turn}", {**p.__dict__})
        return Replayed(
            game,
            state,
            problem,
            {"turns": len(rec.turns), "claims": report.claims, "result": result},
            f"{len(rec.turns)} turns replayed, {report.claims} claims re-proved and verified; "
            f"result {result or 'unfinished'}.",
        )


BLG = BlgRecords()

_ASK = re.compile(
    r"^\s*(?:can\s+i\s+claim|claim\s*\?)\s*(?:flag|circle)?\s*(\d+)\s*\??\s*$", re.IGNORECASE
)


def human_input(state: GameState[Any], line: str) -> tuple[list[Any], str | None]:
    """A line typed in ``battlejudge play``: "can I claim 3?" is answered by the solver
    (the proof or the witness, nothing is played); a play typed while a claim window is
    open first closes it; anything else is one action in record notation."""
    assert isinstance(state, BattleLineState)
    ask = _ASK.match(line)
    if ask:
        return [], answer_claim(state, int(ask.group(1)), state.current_player())
    action = Action.parse(line)
    if (
        action.kind != CLAIM
        and state.phase in (CLAIM_START, CLAIM_END)
        and action not in state.legal_actions()
    ):
        return [Action(END_CLAIMS), action], None
    return [action], None


LEGEND = """Legend: troops are a color and a value (R O Y G B P: red, orange, yellow, green,
blue, purple; 1-10), in their color; tactics are named on grey. North's cards are above the
flags, south's below. In the middle row: ▲ a flag north holds, ▼ one south holds, Fog or Mud
at the flag, · nothing."""


def narrate(state: GameState[Any], action: Any, human: int) -> str | None:
    """What ``battlejudge play`` tells the human of an action just applied (``state`` is
    after it): the card he drew, named (a chance draw, or the card a Scout put back on
    top); a claim, his or the bot's, with its certificate checked again (the explanation,
    the blocking cards and the DRAT proof, verified by dratify); None for the rest, which
    ``play`` tells as the seat may see it."""
    assert isinstance(state, BattleLineState)
    a = action
    if a.kind == CLAIM and state.claims and state.claims[-1].flag == a.flag:
        record = state.claims[-1]
        proof = record.proof
        who = "You" if record.player == human else PLAYERS[record.player].capitalize()
        lines = [f"{who} claimed {state.naming.flag} {a.flag}; the claim holds:"]
        lines += [f"  {line}" for line in proof.explanation]
        blocking = " ".join(state.naming.card(c.code) for c in proof.blocking)
        lines.append(f"  blocking cards: {blocking or 'none needed'}")
        cert = proof.certificate
        if cert.proof is not None and cert.cnf is not None:
            verified = "verified by dratify" if bl.verify(proof) else "NOT verified"
            lines.append(
                f"  proof: DRAT refutation of a {cert.cnf.count(chr(10))}-line CNF, "
                f"{cert.proof.count(chr(10))} lines, {verified}"
            )
        return "\n".join(lines)
    drew = state.last_drawn
    dealt = len(state.history) <= 2 * HAND_SIZE  # the deal: the hand shows those cards
    if a.kind == CARD and not dealt and drew == a.card and drew in state.hands[human]:
        return f"You drew {state.naming.card(drew)}."
    if a.kind == DRAW and state.current_player() != CHANCE and state.to_move == human:
        if state.hands[human] and state.hands[human][-1] == drew:
            return f"You drew {state.naming.card(drew)} (the card put back on top)."
    return None


def answer_claim(state: BattleLineState, flag: int, player: Seat) -> str:
    """'Can I claim flag N?' (N from 1) for ``player`` (0, 1, ``"north"`` or ``"south"``):
    the solver's proof or witness, without claiming."""
    if not 1 <= flag <= 9:
        return f"There is no {state.naming.flag} {flag}."
    try:
        proof = state.judge_claim(flag, player)
    except IllegalActionError as e:
        return f"No: {e}."
    lines = [f"Yes, {state.naming.flag} {flag} can be claimed (certified):"] if proof.valid else []
    lines += [f"  {line}" for line in proof.explanation]
    return "\n".join(lines)


def _dump_position(state: GameState[Any], viewer: int | None) -> str:
    """The position file of a state; for a ``viewer``, his own hand only and no decks."""
    assert isinstance(state, BattleLineState)
    pos = positions.from_state(state, hidden=viewer is not None)
    if viewer is not None:
        own = [state.naming.card(c) for c in state.hands[viewer]]
        pos.hands = positions.PerPlayerCards(**{PLAYERS[viewer]: own})
    return positions.dumps(pos)


def _entry(name: str, title: str, defaults: dict[str, str]) -> GameInfo:
    return GameInfo(
        name=name,
        title=title,
        suffix=".blg",
        seats=(PLAYERS[NORTH], PLAYERS[SOUTH]),
        new_game=new_game,
        deserialize=BattleLineState.deserialize,
        bots={
            "random": RandomBot,
            "heuristic": HeuristicBot,
            "search": SearchBot,
            "expert": ExpertBot,
        },
        render=_render,
        records=BLG,
        options=OPTIONS,
        defaults=defaults,
        help=HELP,
        play_bot="heuristic",
        prepare=_prepare,
        logs_claims=True,
        read_position=positions.read_state,
        dump_position=_dump_position,
        schemas={
            "position": positions.PositionFile.model_json_schema,
            "certificate": CertificateFile.model_json_schema,
        },
        human_input=human_input,
        stats=_stats,
        narrate=narrate,
        legend=LEGEND,
    )


GAME = _entry("battleline", "Battle Line", {})
NINE_CIRCLES = _entry("nine-circles", "Nine Circles", {"theme": "nine-circles"})


def make_bot(name: str, seed: int, **bot_options: Any) -> Any:
    """A Battle Line bot by name (``random``, ``heuristic``, ``search``) or
    ``module:Class``, seeded (``search`` takes ``budget_s`` and ``iterations``)."""
    return GAME.make_bot(name, seed, **bot_options)
