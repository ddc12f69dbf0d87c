"""The table viewer's work, run in a worker process (module-level, so it pickles; free of the
web stack): a game record replayed to a turn, or a position file read, by the engine
(:func:`~battlejudge.engines.battleline.record.replay`, which re-proves every claim made on
the way, and :func:`~battlejudge.engines.battleline.position.to_state`), drawn as plain data;
and, when asked, a flag's claim question from that table
(:meth:`~battlejudge.engines.battleline.state.BattleLineState.claim_question`) proved and
verified as every other claim is (:func:`battlejudge.apps.claim_work.proved`).
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from battlejudge.apps import claim_work
from battlejudge.engines.battleline.position import PositionFile, to_state
from battlejudge.engines.battleline.record import GameRecord, replay
from battlejudge.engines.battleline.state import PLAYERS, BattleLineState
from battlejudge.solver.errors import InputError

Kind: TypeAlias = Literal["record", "position"]


def view(
    kind: Kind,
    text: str,
    step: int | None,
    ask: tuple[int, int] | None,
    conflict_limit: int | None,
) -> dict[str, Any]:
    """The table of a record before turn ``step`` is played (None or past the last turn:
    the end of the game) or of a position; with ``ask`` = (flag 1-9, player 0-1), also that
    claim's question (``question``) and its proved claim and verification (``proved``), or
    why it cannot be asked (``ask_error``, the question's own message). Raises
    :class:`InputError` (``RecordError``) for a record or position that cannot be read."""
    out: dict[str, Any] = {"kind": kind, "problem": None, "turns": [], "step": None}
    if kind == "record":
        rec = GameRecord.loads(text)
        out["tags"] = dict(rec.tags)
        out["turns"] = [(t.number, t.line()) for t in rec.turns]
        last = rec.turns[-1].number if rec.turns else 0
        end = step is None or step > last
        report = replay(rec) if end else replay(rec, upto_turn=max(1, step or 1))
        state = report.state
        out["step"] = last + 1 if end else max(1, step or 1)
        out["last"] = last + 1
        if report.problem is not None:
            p = report.problem
            out["problem"] = f"turn {p.turn} (line {p.line}): {p.kind}: {p.detail}"
    else:
        try:
            pos = PositionFile.model_validate_json(text)
        except ValueError as e:
            raise InputError(f"not a battlejudge position: {e}") from None
        state = to_state(pos)
    out.update(table(state))
    if ask is not None:
        flag, player = ask
        try:
            q = state.claim_question(flag, player)
        except ValueError as e:
            out["ask_error"] = str(e)
        else:
            out["question"] = q
            out["proved"] = claim_work.proved(q, conflict_limit)
    return out


def flag_views(state: BattleLineState) -> list[dict[str, Any]]:
    """Each flag as card codes: each side's cards, the environment (Fog, Mud), who claimed it
    and how many cards a side needs there (the table viewer's and the play page's flags)."""
    return [
        {
            "north": [p.card for p in f.sides[0]],
            "south": [p.card for p in f.sides[1]],
            "environment": [p.card for p in f.environment],
            "claimed_by": PLAYERS[f.claimed_by] if f.claimed_by >= 0 else None,
            "size": f.size,
        }
        for f in state.flags
    ]


def table(state: BattleLineState) -> dict[str, Any]:
    """What is on the table, as card codes: each flag's sides, environment, owner and
    size; the hands; the decks' sizes; the discards; the claims made; whose turn."""
    return {
        "theme": state.config.theme,
        "turn": state.turn,
        "to_move": PLAYERS[state.to_move],
        "over": state.is_terminal(),
        "winner": PLAYERS[state.winner] if state.winner >= 0 else None,
        "end_reason": state.end_reason,
        "flags": flag_views(state),
        "hands": {"north": list(state.hands[0]), "south": list(state.hands[1])},
        "decks": {"troop": state.deck_size(0), "tactics": state.deck_size(1)},
        "discards": {"north": list(state.discards[0]), "south": list(state.discards[1])},
        "claims": [
            {"turn": c.turn, "player": PLAYERS[c.player], "flag": c.flag} for c in state.claims
        ],
    }
