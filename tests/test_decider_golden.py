"""Golden claims for every formation kind, plain, under Mud and under Fog, each with the
opponent one card from beating the claim.

Each case names the claimant's formation, the opponent's incomplete side (one card
short) and *every* troop that would beat the claim if it completed that side. The
table itself is checked against the brute-force oracle's own evaluation
(:func:`test_the_beating_cards_are_exactly_the_listed_ones`). Then each case is asked
twice: with all the beating cards but one face up (the claim fails, and the one card
left is the answer), and with all of them face up (the claim holds). Every question goes
through the exact decider (``decider.holds``), the public certified path
(``decide``, ``prove``, ``verify``) and the oracle.

Sources: the rulebook (/work/shared/seeds/000_0870e4ed0b9070e4.txt), section
FORMATIONS (the five kinds, with the examples used here: R4 R5 R3, Y8 R8 G8, B2 B7 B4,
Y4 R6 G5, Y5 B5 G3; the higher sum wins within a kind), its Fog and Mud tactics
("merely decided on the basis of the total value", "four cards on either side") and
FLAGS; docs/rulings.md 1 (formations, no wrap-around), 5 (any troop not face up may
complete the opponent's side), 7 (an incomplete opponent loses every tie) and 8 (Fog,
Mud, both).

The Mud Phalanx cases guard a mutant that once survived the suite: the Phalanx pruning
bound of :func:`~battlejudge.solver.battleline.decider.best_key` written with 3 cards
instead of the side's size made the decider accept Mud ``R7 B7 G7 Y7`` against a
Phalanx of 8s.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from battlejudge.solver import battleline as bl
from battlejudge.solver.battleline import decider, oracle
from battlejudge.solver.errors import RuleError


@dataclass(frozen=True)
class Case:
    """A claim, the opponent's side one card short, and every troop that beats the claim."""

    name: str
    mine: str
    theirs: str
    beaters: str
    """Every troop that completes ``theirs`` into a formation above ``mine``, the one the
    answer names last (the others are face up in the failing question)."""
    mud: bool = False
    fog: bool = False
    source: str = ""


CASES = [
    # -- plain flags (rulebook FORMATIONS; docs/rulings.md 1, 7) --
    Case(
        "wedge",
        "R4 R5 R3",
        "B9 B10",
        "B8",  # 8-9-10, the only Wedge left: there is no 11 (docs/rulings.md 1)
        source="rulebook FORMATIONS (Wedge R4 R5 R3); docs/rulings.md 1",
    ),
    Case(
        "phalanx",
        "Y8 R8 G8",
        "B9 O9",
        "R9 Y9 G9 P9",  # a Phalanx of 9s beats one of 8s: the higher sum
        source="rulebook FORMATIONS (Phalanx Y8 R8 G8, higher sum wins); docs/rulings.md 1",
    ),
    Case(
        "battalion",
        "B2 B7 B4",
        "G1 G2",
        "G3",  # a Wedge; G10 makes a Battalion 13, a tie, which the claimant wins
        source="rulebook FORMATIONS (Battalion B2 B7 B4); docs/rulings.md 1, 7",
    ),
    Case(
        "skirmish",
        "Y4 R6 G5",
        "B9 R10",
        "R8 O8 Y8 G8 B8 P8",  # a Skirmish Line 27
        source="rulebook FORMATIONS (Skirmish Line Y4 R6 G5); docs/rulings.md 1",
    ),
    Case(
        "host",
        "Y5 B5 G3",
        "R1 O2",
        "R3 O3 Y3 B3 P3",  # a Skirmish Line 6 beats any Host; 1+2+10 only ties
        source="rulebook FORMATIONS (Host Y5 B5 G3); docs/rulings.md 1, 7",
    ),
    # -- Mud: four cards a side (rulebook, Mud; docs/rulings.md 8) --
    Case(
        "mud-wedge",
        "R3 R4 R5 R6",
        "B8 B9 B10",
        "B7",
        mud=True,
        source="rulebook Mud (four cards on either side); docs/rulings.md 1, 8",
    ),
    Case(
        "mud-phalanx",
        "R7 B7 G7 Y7",
        "R8 O8 Y8",
        "G8 B8 P8",  # a Phalanx of four 8s, 32 against 28
        mud=True,
        source="rulebook Mud; docs/rulings.md 1, 8",
    ),
    Case(
        "mud-battalion",
        "B2 B7 B4 B9",
        "G1 G2 G3",
        "G4",  # a Wedge; G10 makes a Battalion 16, below 22
        mud=True,
        source="rulebook Mud; docs/rulings.md 1, 8",
    ),
    Case(
        "mud-skirmish",
        "Y4 R6 G5 B7",
        "B8 R9 G10",
        "R7 O7 Y7 G7 P7",  # a Skirmish Line 34 (B7 is the claimant's)
        mud=True,
        source="rulebook Mud; docs/rulings.md 1, 8",
    ),
    Case(
        "mud-host",
        "Y5 B5 G3 R9",
        "O1 P2 Y3",
        "R4 O4 Y4 G4 B4 P4",  # a Skirmish Line 10 beats any Host; 6+10 is below 22
        mud=True,
        source="rulebook Mud; docs/rulings.md 1, 8",
    ),
    # -- Fog: only the sum counts (rulebook, Fog; docs/rulings.md 8) --
    # Each opponent's side sums to the claim's total less 9: only a 10 beats it, a 9 ties.
    Case(
        "fog-wedge",
        "R4 R5 R3",
        "B1 O2",
        "R10 O10 Y10 G10 B10 P10",  # 13 above 12, a Host beating a Wedge
        fog=True,
        source="rulebook Fog (total value only); docs/rulings.md 8, 7",
    ),
    Case(
        "fog-phalanx",
        "Y8 R8 G8",
        "B7 O8",
        "R10 O10 Y10 G10 B10 P10",
        fog=True,
        source="rulebook Fog; docs/rulings.md 8, 7",
    ),
    Case(
        "fog-battalion",
        "B2 B7 B4",
        "G1 G3",
        # G2 would make a Wedge, worth its sum 6 only
        "R10 O10 Y10 G10 B10 P10",
        fog=True,
        source="rulebook Fog; docs/rulings.md 8, 7",
    ),
    Case(
        "fog-skirmish",
        "Y4 R6 G5",
        "B2 O4",
        "R10 O10 Y10 G10 B10 P10",
        fog=True,
        source="rulebook Fog; docs/rulings.md 8, 7",
    ),
    Case(
        "fog-host",
        "Y5 B5 G3",
        "R1 O3",
        "R10 O10 Y10 G10 B10 P10",
        fog=True,
        source="rulebook Fog; docs/rulings.md 8, 7",
    ),
    Case(
        "fog-and-mud-phalanx",
        "R7 B7 G7 Y7",
        "R8 O9 P2",
        "R10 O10 Y10 G10 B10 P10",  # four-card totals: 29 above 28
        mud=True,
        fog=True,
        source="docs/rulings.md 8 (under both, four-card totals), 7",
    ),
]
IDS = [c.name for c in CASES]


def _cards(text: str) -> list[bl.Card]:
    return [bl.Card.parse(t) for t in text.split()]


def _strength(cards: list[bl.Card], fog: bool) -> tuple[int, int]:
    return oracle.strength(cards, fog)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_beating_cards_are_exactly_the_listed_ones(case: Case) -> None:
    """The table by the oracle's own evaluation: the claimant's side has the kind the case
    names, the opponent is one card short, and a troop completes his side above the claim
    exactly when the case lists it (a tie is the claimant's: docs/rulings.md 7)."""
    mine, theirs = _cards(case.mine), _cards(case.theirs)
    size = 4 if case.mud else 3
    assert len(mine) == size and len(theirs) == size - 1
    kind = case.name.removeprefix("fog-and-mud-").removeprefix("mud-").removeprefix("fog-")
    assert bl.best_formation(mine, mud=case.mud).name == kind
    target = _strength(mine, case.fog)
    taken = {c.code for c in (*mine, *theirs)}
    beating = {
        str(bl.Card(t))
        for t in range(60)
        if t not in taken and _strength([*theirs, bl.Card(t)], case.fog) > target
    }
    assert beating == set(case.beaters.split()), case.source


def _question(case: Case, seen: list[str]) -> bl.ClaimQuestion:
    return bl.ClaimQuestion(case.mine, case.theirs, seen, mud=case.mud, fog=case.fog)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_one_beating_card_unseen_and_the_claim_fails(case: Case) -> None:
    """All beating troops but one face up: the claim fails and the answer is that troop
    completing the opponent's side (docs/rulings.md 5, 16)."""
    *shown, last = case.beaters.split()
    q = _question(case, shown)
    assert decider.holds(q) is False, case.source
    assert oracle.decide(q.mine, q.theirs, q.seen, q.mud, q.fog).valid is False
    d = bl.decide(q)
    assert d.valid is False and d.witness is not None
    assert [str(c) for c in d.witness.added] == [last]
    p = bl.prove(q)
    assert p.verdict == "invalid" and p.witness is not None
    assert [str(c) for c in p.witness.added] == [last]
    assert bl.verify(p, deep=True)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_beating_card_face_up_and_the_claim_holds(case: Case) -> None:
    """Every beating troop face up: the claim holds, with a DRAT certificate that
    verifies, and the blocking cards are among those troops and the claimant's own
    (docs/rulings.md 5, 16: G3 blocks the Skirmish Lines 1-2-3 at the Host case)."""
    q = _question(case, case.beaters.split())
    assert decider.holds(q) is True, case.source
    assert oracle.decide(q.mine, q.theirs, q.seen, q.mud, q.fog).valid is True
    assert bl.decide(q).valid is True
    p = bl.prove(q)
    assert p.verdict == "valid" and p.witness is None
    assert p.blocking
    assert {str(c) for c in p.blocking} <= {*case.beaters.split(), *case.mine.split()}
    assert bl.verify(p, deep=True)


@pytest.mark.parametrize(
    ("seen", "valid"),
    [
        ("", False),  # O8 Y8 G8, or any three of the five 8s left
        ("O8 Y8", False),  # G8 B8 P8 are still unseen
        ("O8 Y8 G8", True),  # two 8s left: no Phalanx, and every red run of four needs R7
    ],
)
def test_mud_phalanx_of_sevens_against_an_eight(seen: str, valid: bool) -> None:
    """Mud ``R7 B7 G7 Y7`` (a Phalanx 28) against ``R8``: three more 8s make a Phalanx 32
    (rulebook Mud; docs/rulings.md 1, 8). The case a weakened Phalanx bound got wrong."""
    q = bl.ClaimQuestion("R7 B7 G7 Y7", "R8", seen, mud=True)
    assert oracle.decide(q.mine, q.theirs, q.seen, q.mud).valid is valid
    assert decider.holds(q) is valid
    p = bl.prove(q)
    assert p.valid is valid
    if not valid:
        assert p.witness is not None and p.witness.formation.label == "Phalanx 32"
    assert bl.verify(p, deep=True)


@pytest.mark.parametrize(
    ("unseen", "valid"),
    [("Y6 G6", False), ("Y6", False), ("G6", False), ("", True)],
)
def test_a_skirmish_line_from_any_color_left(unseen: str, valid: bool) -> None:
    """A Skirmish Line takes its cards from any colors (rulebook FORMATIONS; docs/rulings.md
    1): the Host ``B10 P9 R1`` (20: 9, 10, 1 is no run) against ``R4 O5``, with every 3 and
    6 face up but the ones named. Either 6 left makes the Skirmish Line 4-5-6 that beats
    the Host; 4 + 5 + 10 is a Host of 19 only."""
    rest = [f"{c}{v}" for v in (3, 6) for c in "ROYGBP" if f"{c}{v}" not in unseen.split()]
    q = bl.ClaimQuestion("B10 P9 R1", "R4 O5", rest)
    assert bl.best_formation(q.mine).label == "Host 20"
    assert oracle.decide(q.mine, q.theirs, q.seen).valid is valid
    assert decider.holds(q) is valid
    assert bl.decide(q).valid is valid
    p = bl.prove(q)
    assert p.valid is valid
    if not valid:
        assert p.witness is not None and p.witness.formation.label == "Skirmish Line 15"
    assert bl.verify(p, deep=True)


@pytest.mark.parametrize(("mine", "theirs"), [("R1 R2 R3", "B1 B2 B3"), ("R8 R9 R10", "G8 G9 G10")])
def test_two_complete_wedges_that_tie(mine: str, theirs: str) -> None:
    """Both sides complete with Wedges of one sum (rulebook FLAGS, docs/rulings.md 7): the
    side that completed first wins, and without saying who did there is no verdict."""
    q = bl.ClaimQuestion(mine, theirs)
    with pytest.raises(RuleError, match="completed_first"):
        decider.holds(q)
    with pytest.raises(RuleError, match="completed_first"):
        bl.decide(q)
    for first, valid in (("mine", True), ("theirs", False)):
        q = bl.ClaimQuestion(mine, theirs, completed_first=first)
        assert oracle.decide(q.mine, q.theirs, q.seen, completed_first=first).valid is valid
        assert decider.holds(q) is valid
        assert bl.verify(bl.prove(q), deep=True)
