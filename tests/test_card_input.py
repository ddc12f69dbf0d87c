"""Public functions taking cards accept the card notation as one string or a sequence of
cards, and refuse anything else with a one-line error naming the value (issue 35, 7).

The notation is README "Card notation": a troop is a color letter and a value (``R10``), the
morale tactics are named (``alexander``), cards are separated by spaces or commas.
"""

from __future__ import annotations

import pytest

from battlejudge.engines.battleline.cards import parse_card
from battlejudge.solver import battleline as bl
from battlejudge.solver.battleline.cards import parse_cards
from battlejudge.solver.errors import InputError

R1, R2, R3 = (bl.Card.parse(n) for n in ("R1", "R2", "R3"))


@pytest.mark.parametrize(
    "cards",
    ["R1 R2 R3", "r1, r2,r3", ["R1", "R2", "R3"], ("R1", R2, "r3"), (c for c in (R1, R2, R3))],
    ids=["string", "commas", "list", "tuple", "iterable"],
)
def test_parse_cards_reads_a_string_or_a_sequence(cards: object) -> None:
    assert parse_cards(cards, "mine") == (R1, R2, R3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("cards", "shown"),
    [(5, "5"), (b"R1 R2", "b'R1 R2'"), (R1, "Card.parse('R1')"), (3.5, "3.5")],
    ids=["int", "bytes", "lone-card", "float"],
)
def test_parse_cards_refuses_other_types_naming_the_value(cards: object, shown: str) -> None:
    with pytest.raises(InputError) as err:
        parse_cards(cards, "mine")  # type: ignore[arg-type]
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("mine must be a string of cards")
    assert message.endswith(f"got {shown}")


def test_a_number_inside_the_sequence_is_named() -> None:
    with pytest.raises(InputError, match=r"^7 in mine is not a card name$"):
        parse_cards(["R1", 7], "mine")  # type: ignore[list-item]


def test_best_formation_reads_the_notation_as_cards_not_letters() -> None:
    # Rules: Formations: three consecutive values of one color are a Wedge, scored by sum.
    assert bl.best_formation("R1 R2 R3").label == "Wedge 6"
    assert bl.best_formation(["R1", "R2", "R3"]) == bl.best_formation("R1 R2 R3")
    assert bl.best_formation(("R1", R2, R3)) == bl.best_formation("R1 R2 R3")
    with pytest.raises(InputError, match=r"got 123$"):
        bl.best_formation(123)  # type: ignore[arg-type]


def test_format_cards_takes_what_parse_cards_takes() -> None:
    assert bl.format_cards("r1,alexander") == "R1 alexander"
    assert bl.format_cards([R1, "R2"]) == "R1 R2"
    with pytest.raises(InputError, match=r"got 9$"):
        bl.format_cards(9)  # type: ignore[arg-type]


def test_the_question_takes_strings_or_sequences_and_names_a_wrong_type() -> None:
    q = bl.ClaimQuestion(mine="R4 R5 R3", theirs=("B8",), seen=["B7", "B10"])
    assert q == bl.ClaimQuestion(mine=["R4", "R5", "R3"], theirs="B8", seen="B7 B10")
    with pytest.raises(InputError, match=r"^theirs must be a string of cards .* got 47$"):
        bl.ClaimQuestion(mine="R4 R5 R3", theirs=47)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"^mine must be a sequence of card codes .* got 'R1'$"):
        bl.ClaimQuestion.from_codes("R1")  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"^seen must be a sequence of card codes .* got 7$"):
        bl.ClaimQuestion.from_codes([3, 4, 2], [], 7)  # type: ignore[arg-type]


@pytest.mark.parametrize("parse", [bl.Card.parse, parse_card], ids=["solver", "engine"])
def test_one_card_parsers_refuse_a_non_string(parse: object) -> None:
    with pytest.raises(InputError, match=r"^a card is a string such as 'R10', got 10$"):
        parse(10)  # type: ignore[operator]
