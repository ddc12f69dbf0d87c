"""The online tables' game work (apps/tables/work.py), in-process: what a seat may do, what
a refused claim leaves behind, and that the same refused claim is not judged again until
the table changes (issue 36)."""

from __future__ import annotations

import pickle
import random

import pytest

from battlejudge.apps.tables import work
from battlejudge.solver.errors import InputError

SEATS = ("north", "south")


def play_until_refused(seed: int) -> tuple[work.Change, int, int]:
    """A human-vs-human game played at random until a claim is refused: the change with
    the refusal, the seat that claimed and the flag."""
    rng = random.Random(seed)
    change = work.start("testtable1", "battleline", ("human", "human"), {}, seed)
    for _ in range(600):
        seat = SEATS.index(change.to_move or "north")
        view = change.views[SEATS[seat]]
        for flag in view["may_claim"]:
            tried = work.act(change.blob, seat, f"claim {flag}")
            if tried.refused is not None:
                return tried, seat, flag
            change = tried
            break
        else:
            change = work.act(change.blob, seat, rng.choice(view["legal"]))
        assert not change.over, "the game ended before any claim was refused"
    raise AssertionError("no claim was refused")


def test_a_refused_claim_is_recorded_with_its_witness_and_changes_nothing_else() -> None:
    refused, seat, flag = play_until_refused(3)
    claim = refused.refused["claim"]  # type: ignore[index]
    assert claim["accepted"] is False and claim["verdict"] == "invalid"
    assert claim["witness"] is not None and claim["player"] == SEATS[seat]
    assert claim["flag"] == flag and claim["verified"] is True
    assert len(refused.records) == 1  # for the proof log
    for viewer in (*SEATS, "spectator"):
        assert refused.views[viewer]["claims"][-1] == claim
    assert refused.views[SEATS[seat]]["last"][-1] == {
        "turn": refused.views["spectator"]["turn"],
        "seat": SEATS[seat],
        "action": f"claim {flag}",
        "refused": True,
    }
    assert refused.to_move == SEATS[seat]  # still his decision


def test_the_same_refused_claim_is_not_judged_again_until_the_table_changes() -> None:
    refused, seat, flag = play_until_refused(3)
    with pytest.raises(InputError, match="was refused and nothing has changed"):
        work.act(refused.blob, seat, f"claim {flag}")
    # once the seat has played on, the claim may be tried again (and is judged afresh)
    view = refused.views[SEATS[seat]]
    later = work.act(refused.blob, seat, view["legal"][-1])
    game = pickle.loads(later.blob)
    assert game.refused[(seat, flag)] < len(game.state.history)


def test_a_seat_not_to_move_is_told_so() -> None:
    change = work.start("testtable2", "battleline", ("human", "human"), {}, 1)
    assert change.to_move == "north"
    with pytest.raises(work.NotYourTurn, match="north is to move"):
        work.act(change.blob, 1, change.views["north"]["legal"][0])
    assert change.views["south"]["legal"] == [] and change.views["spectator"]["hand"] is None


def test_bad_tables_are_refused_naming_the_value() -> None:
    with pytest.raises(InputError, match="game must be one of"):
        work.start("testtable3", "chess", ("human", "human"), {}, 1)
    with pytest.raises(InputError, match=r"options\.colour: no such option"):
        work.start("testtable3", "battleline", ("human", "human"), {"colour": "x"}, 1)
    with pytest.raises(InputError, match="south must be human or one of bot:heuristic"):
        work.start("testtable3", "battleline", ("human", "bot:random"), {}, 1)


def test_views_show_each_seat_its_own_hand_only() -> None:
    change = work.start("testtable4", "nine-circles", ("human", "bot:heuristic"), {}, 9)
    game = pickle.loads(change.blob)
    naming = game.state.naming
    for i, seat in enumerate(SEATS):
        own = [naming.card(c) for c in game.state.hands[i]]
        assert change.views[seat]["hand"] == own
        other = {naming.card(c) for c in game.state.hands[1 - i]}
        assert not other & set(change.views[seat]["hand"])
    assert change.views["north"]["theme"] == "nine-circles"
