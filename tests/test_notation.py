"""Notation: lenient parsers, canonical printers, round trips (STYLE.md, Data)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from battlejudge.solver import battleline as bl
from battlejudge.solver.battleline.cards import Card, format_cards, parse_cards

from strategies import any_questions

ALL_CARDS = [Card(code) for code in range(64)]


@given(st.lists(st.sampled_from(ALL_CARDS)), st.sampled_from([" ", ",", ", ", "  "]))
def test_cards_round_trip(cards: list[Card], sep: str) -> None:
    assert parse_cards(format_cards(cards)) == tuple(cards)
    text = sep.join(str(c) for c in cards)
    assert parse_cards(text.lower()) == tuple(cards)  # case-insensitive


@given(st.sampled_from(ALL_CARDS))
def test_card_repr_is_pasteable(card: Card) -> None:
    assert eval(repr(card)) == card


@given(any_questions(budget=10**9))
def test_question_json_round_trip(q: bl.ClaimQuestion) -> None:
    assert bl.ClaimQuestion.from_json(q.to_json()) == q
    import json

    assert bl.ClaimQuestion.from_json(json.loads(q.canonical())).canonical() == q.canonical()
    ClaimQuestion = bl.ClaimQuestion
    assert eval(repr(q), {"ClaimQuestion": ClaimQuestion}) == q


def test_long_tactic_names() -> None:
    assert parse_cards("Companion-Cavalry shield_bearers ALEXANDER") == parse_cards(
        "cavalry shield alexander"
    )


def test_seen_order_does_not_matter() -> None:
    a = bl.ClaimQuestion(mine="R4 R5 R3", seen="B10 B7")
    b = bl.ClaimQuestion(mine="R4 R5 R3", seen="B7,B10")
    assert a == b and hash(a) == hash(b) and a.canonical() == b.canonical()
