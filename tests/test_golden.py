"""Golden cases from the rulebook (seed 000) and the rulings (docs/rulings.md)."""

from __future__ import annotations

import pytest

from battlejudge import examples
from battlejudge.solver import battleline as bl

CASES = examples.rulebook_cases()


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_rulebook_examples(case: dict[str, object]) -> None:
    # Each case cites its source in examples/rulebook.json.
    q = bl.ClaimQuestion.from_json(case["question"])
    p = bl.prove(q)
    assert p.verdict == case["verdict"], case["source"]
    assert bl.decide(q).valid == (case["verdict"] == "valid")
    if "blocking" in case:
        assert [str(c) for c in p.blocking] == case["blocking"], case["source"]
    assert bl.verify(p, deep=True)


def test_claims_jsonl_holds_the_rulebook_questions() -> None:
    import json

    lines = [json.loads(x) for x in examples.read_text("claims.jsonl").splitlines() if x]
    assert lines[: len(CASES)] == [c["question"] for c in CASES]


def test_gmt_blue_8_explanation() -> None:
    # Rulebook, Flags: "the Wedge R4 R5 R3 beats B8 if Blue 7 and Blue 10 have been played".
    p = bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10 Y3 G9"))
    assert {str(c) for c in p.blocking} == {"B7", "B10"}
    assert p.explanation == [
        "Blue 7 and Blue 10 are face up, so B8 can no longer become a Wedge above 12."
    ]
    assert [r.formation for r in p.reasons] == ["wedge"]


def test_gmt_blue_8_without_the_blue_cards_is_beaten_by_a_blue_wedge() -> None:
    p = bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7"))
    assert p.verdict == "invalid" and p.witness is not None
    assert [str(c) for c in p.witness.added] == ["B9", "B10"]  # the only Wedge left
    assert p.witness.formation.name == "wedge" and p.witness.formation.total == 27


@pytest.mark.parametrize(
    ("cards", "name", "total"),
    [
        # Rulebook, Formations: one example of each formation.
        ("R4 R5 R3", "wedge", 12),
        ("Y8 R8 G8", "phalanx", 24),
        ("B2 B7 B4", "battalion", 13),
        ("Y4 R6 G5", "skirmish", 15),
        ("Y5 B5 G3", "host", 13),
        # Rulebook, Formations: R4 R6 R3 (13) beats B7 B1 B3 (11); Y7 B2 G1 ties Y3 B3 G4.
        ("R4 R6 R3", "battalion", 13),
        ("B7 B1 B3", "battalion", 11),
        ("Y7 B2 G1", "host", 10),
        ("Y3 B3 G4", "host", 10),
        # docs/rulings.md 1: no wrap-around.
        ("R9 R10 R1", "battalion", 20),
        # Rulebook, Leader: B8 and a Leader make a Blue Wedge with a Blue 9 and 10 at best.
        ("B8 alexander B10", "wedge", 27),
        # docs/rulings.md 2: Companion Cavalry is an 8 of any color; Shield Bearers 1-3.
        ("R9 cavalry alexander", "wedge", 27),
        ("G1 G2 shield", "wedge", 6),
        ("G8 Y8 cavalry", "phalanx", 24),
        ("shield cavalry alexander", "battalion", 21),
        # docs/rulings.md 2: a wild card may copy a troop in the same formation.
        ("R10 O10 alexander", "phalanx", 30),
    ],
)
def test_formations(cards: str, name: str, total: int) -> None:
    f = bl.best_formation(cards.split())
    assert (f.name, f.total) == (name, total)


def test_mud_and_fog_formations() -> None:
    # docs/rulings.md 8: Mud extends formations to four cards; Fog counts sums only.
    assert bl.best_formation("R3 R4 R5 R6".split(), mud=True).label == "Wedge 18"
    assert bl.best_formation("R3 R4 R5".split(), fog=True).label == "total 12 (Fog)"
    assert bl.best_formation("R3 R4 R5 alexander".split(), mud=True, fog=True).total == 22
    with pytest.raises(ValueError, match="needs 4 cards"):
        bl.best_formation("R3 R4 R5".split(), mud=True)


def test_ties() -> None:
    # docs/rulings.md 7: against an incomplete side every tie is the claimant's...
    assert bl.decide(bl.ClaimQuestion(mine="R8 R9 R10", theirs="O8 O9")).valid
    # ...and with both sides complete, the side that completed last loses the tie.
    done = {"mine": "R8 R9 R10", "theirs": "O8 O9 O10"}
    assert bl.decide(bl.ClaimQuestion(**done, completed_first="mine")).valid
    p = bl.prove(bl.ClaimQuestion(**done, completed_first="theirs"))
    assert not p.valid and p.witness is not None and p.witness.added == ()
    assert "ties your Wedge 27, and you completed last" in p.explanation[0]
    with pytest.raises(ValueError, match="completed_first must say"):
        bl.decide(bl.ClaimQuestion(**done))


def test_pool_too_small_means_the_claim_holds() -> None:
    # docs/rulings.md 6: with every troop but one face up, the opponent cannot complete.
    mine = ["R1", "O3", "Y5"]
    theirs = ["G7"]
    seen = [str(bl.Card(t)) for t in range(60) if str(bl.Card(t)) not in mine + theirs + ["P10"]]
    p = bl.prove(bl.ClaimQuestion(mine, theirs, seen))
    assert p.valid
    assert bl.verify(p, deep=True)


def test_unplayed_tactics_and_the_claimants_hand_are_not_proof() -> None:
    # docs/rulings.md 5: only face-up troops block; seen lists troops only.
    with pytest.raises(ValueError, match="seen lists face-up troops only"):
        bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="alexander")


def test_wild_on_the_opponents_side_counts_at_its_best() -> None:
    # docs/rulings.md 5: wild cards already on the opponent's side count with their best choice.
    q = bl.ClaimQuestion(mine="R8 R9 R10", theirs="alexander")
    p = bl.prove(q)
    assert p.verdict == "valid"  # only a tie (another 8-9-10 Wedge) is reachable
    q = bl.ClaimQuestion(mine="R7 R8 R9", theirs="alexander")
    p = bl.prove(q)
    assert p.verdict == "invalid" and p.witness is not None
    assert p.witness.formation.label == "Wedge 27"
