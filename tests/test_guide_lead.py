"""The guide's direct answers (issue 37, part 5): every answer leads with one sentence built from
the cited section's own sentences, then the quote; and ``bench guide`` measures it.

The player's report: only 2 of 10 Battle Line answers began with a direct answer; "does the
Leader count as a 10?" was answered from the wrong rule, "what is the difference between a Wedge
and a Phalanx?" got one example and no definitions, and "same formation, who wins?" left out the
tie rule.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from battlejudge.apps.guide import FALLBACK, GAMES, Answer, Guide, load
from battlejudge.apps.guide.embed import shared_embedder
from battlejudge.apps.guide.lead import (
    decapitalise,
    definition,
    is_yes_no,
    polarity,
    question_kind,
    trim,
)
from battlejudge.bench.guide import Figures, first_sentence, load_cases, run
from battlejudge.cli.main import cli

EVAL = Path(__file__).parent / "guide" / "eval"
EMBEDDINGS = shared_embedder() is not None

LEAD_FLOOR = {
    "leads": {True: 0.74, False: 0.57},
    "fresh8": {True: 0.5, False: 0.42},
}
"""Least share of a part's questions naming lead words whose first sentence holds one. leads
(written with the guide in view): 32 of 42 with the embedding model, 25 of 42 without. fresh8
(sealed until one run after the direct answers were built): 106 of 193 and 96 of 193 then;
102 and 84 once a Yes or No leads only where the project's written answer agrees (4 of the
18 Yes/No leads of that run were wrong; a yes/no question whose lead word is "yes" or "no"
is counted wrong when the rule's sentence leads alone, even when it answers)."""


@cache
def guide(game: str, embeddings: bool = True) -> Guide:
    """The game's guide, with the embedding model (when installed) or on keywords alone."""
    return Guide(load(game), embedder="default" if embeddings else None)


def keyword_guide(game: str) -> Guide:
    return guide(game, False)


def grounded(answer: Answer, guide_: Guide) -> list[str]:
    """The pieces of the answer's direct answer that are not words of its cited section (empty
    when it is built from the section's sentences: chosen, trimmed, joined, a Yes or No put in
    front)."""
    assert answer.direct is not None and answer.section is not None
    text = re.sub(r"^(?:Yes|No): ", "", answer.direct)
    section = " ".join(guide_.reference.section(answer.section).passages).lower()
    pieces = [p.strip().rstrip(".") for p in text.split("; ")]
    return [p for p in pieces if p.lower() not in section]


# --- the player's three misses ------------------------------------------------------------------


@pytest.mark.skipif(not EMBEDDINGS, reason="the paraphrase needs the embedding model")
def test_the_leader_counts_as_a_10() -> None:
    """A Leader is wild (any color and value), so yes; it was answered from the claim ruling.
    The lead is the rule's own sentence: no Yes or No is put before it unless the project's
    written answer agrees (a sentence's reading alone was wrong in 4 of 18 on fresh8)."""
    answer = guide("battleline").ask("does the Leader count as a 10?")
    assert answer.section in {"Leader", "Ruling 2: Wild cards"}, answer
    first = first_sentence(answer.answer)
    assert not first.startswith("No"), first
    assert "any value from 1 to 10" in first, first


def test_the_difference_between_a_wedge_and_a_phalanx_gives_both_definitions() -> None:
    answer = guide("battleline").ask("what is the difference between a Wedge and a Phalanx?")
    assert answer.section == "Formations", answer
    first = first_sentence(answer.answer)
    assert first.startswith("A Wedge is three cards of one color whose values follow each other")
    assert "a Phalanx is three cards of the same value" in first
    # both definitions are quoted, examples and all
    assert "for example green 6, 7 and 8" in answer.answer
    assert "for example a red 5, a blue 5 and a purple 5" in answer.answer


def test_same_formation_who_wins_gives_the_sum_and_the_tie_rule() -> None:
    answer = guide("battleline").ask("same formation, who wins?")
    assert answer.section == "Formations", answer
    first = first_sentence(answer.answer)
    assert "the higher sum of the three values wins" in first
    assert "the player who completed his formation first wins the Flag" in first


# --- every answer -------------------------------------------------------------------------------


def asked_questions(game: str) -> list[str]:
    """Two ways of asking of every fact of ``game`` (thousands of questions in all would be
    slow), and the leads part's questions."""
    questions = [q for f in load(game).faqs for q in f.questions[:2]]
    questions += [c.question for c in load_cases(EVAL / "leads.toml") if c.game == game]
    return questions


@pytest.mark.parametrize("embeddings", [True, False])
@pytest.mark.parametrize("game", GAMES)
def test_every_answer_leads_with_a_direct_answer_from_its_section(
    game: str, embeddings: bool
) -> None:
    """Rules answers and card entries lead with their direct answer, then the quote; the direct
    answer is the cited section's own words (no text the rules do not hold)."""
    if embeddings and not EMBEDDINGS:
        pytest.skip("the embedding model (the guide extra) is not installed")
    guide_ = guide(game) if embeddings else keyword_guide(game)
    walkthroughs = [guide_.walkthrough(k) for k in guide_.reference.walkthroughs]
    checked = 0
    for question in asked_questions(game):
        answer = guide_.ask(question)
        if answer.answer == FALLBACK or answer in walkthroughs:
            assert answer.direct is None
            continue
        assert answer.direct is not None, question
        assert answer.answer.startswith(f"{answer.direct} According to the '{answer.section}'")
        assert "\n" not in answer.direct
        assert grounded(answer, guide_) == [], (question, answer.direct)
        checked += 1
    assert checked >= 40


@pytest.mark.parametrize("game", ["battleline", "nine-circles", "battleplan"])
def test_card_entries_lead_with_what_the_card_is(game: str) -> None:
    guide_ = guide(game)
    for name in guide_.card_names():
        answer = guide_.card(name)
        assert answer.direct is not None
        assert grounded(answer, guide_) == [], answer.direct
        assert answer.answer.startswith(answer.direct)
    fog = guide("battleline").card("Mano a Mano!")
    assert fog.direct == (
        "Fog (Mano a Mano! in Nine Circles) is an Environment Tactic that changes the unclaimed "
        "Flag where it is laid."
    )


def test_the_fallback_and_walkthroughs_stay_as_they_are() -> None:
    answer = guide("battleline").ask("What is the capital of France?")
    assert (answer.answer, answer.direct) == (FALLBACK, None)
    assert guide("battleline").ask("How do I set up the game?").answer.startswith("1. ")


# --- how a question is read ---------------------------------------------------------------------


WEDGE_PHALANX = ("wedge", "phalanx")


@pytest.mark.parametrize(
    ("question", "kind", "things"),
    [
        (
            "what is the difference between a Wedge and a Phalanx?",
            "difference",
            ("wedge", "phalanx"),
        ),
        ("whats the diff between fog and mud", "difference", ("fog", "mud")),
        ("wedge vs battalion?", "difference", ("wedge", "battalion")),
        ("what's a skirmish line", "define", ("skirmish line",)),
        ("What does envelopment mean?", "define", ("envelopment",)),
        ("whats in the buff deck", "other", ()),
        ("same formation, who wins?", "wins", ()),
        ("what happens if the totals are equal?", "wins", ()),
        ("does the Leader count as a 10?", "yesno", ()),
        ("so can i claim before drawing", "yesno", ()),
        ("if he has two cards there, can I claim?", "yesno", ()),
        ("is my back row the defensive zone or just one square", "other", ()),
        ("how many cards do i start with", "other", ()),
    ],
)
def test_question_kind(question: str, kind: str, things: tuple[str, ...]) -> None:
    asked = question_kind(question)
    assert (asked.kind, asked.things) == (kind, things)


def test_is_yes_no() -> None:
    assert is_yes_no("Can't I play two leaders?")
    assert not is_yes_no("who can claim a flag?")
    assert not is_yes_no("is it a flush or a straight?")
    assert not is_yes_no("is there a variant for experts?")


UNPLAYED = "Tactics cards that have not been played yet cannot stop a claim."
POLARITY_CASES = [
    ("can i claim a flag before i draw?", "at any time before you draw, you may claim", "Yes"),
    ("can i play both leaders?", "You may have only one Leader on your side", "No"),
    ("can't I play both leaders?", "You may have only one Leader on your side", "No"),
    # the sentence's relative clause and the question's own negation are no answer
    ("can unplayed tactics stop a claim?", UNPLAYED, "No"),
    ("can tactics cards that haven't been played stop a claim?", UNPLAYED, "No"),
    ("can i pass if i have no troop to play?", "If you have no Troop card, you may pass", "Yes"),
    ("is it two player only?", "Battle Line is a game for two players.", "Yes"),
    # the clause that holds the question's words decides, a reason after it does not
    ("do values wrap around?", "Values never wrap around: 9, 10 and 1 are not in a row.", "No"),
    (
        "can a wild card copy a card?",
        "A wild card may copy a troop, since nothing forbids it.",
        "Yes",
    ),
    # a sentence that does not say it in so many words gets no Yes or No
    ("can Traitor steal his Companion Cavalry?", "Traitor is a Guile Tactic that steals.", None),
    ("does mud slow the game down?", "Scout is a Guile Tactic.", None),
    ("can three people play battle line?", "Battle Line is a game for two players.", None),
    # two words of one no; a player's "only" sets the scene; "whether or not" negates nothing
    ("can units move diagonally?", "Units move only orthogonally, never diagonally.", "No"),
    ("he only played 1, can i have played 3 tactics?", "You may never have played 3 tactics", "No"),
    ("can i play a tactics card?", "You may play a Tactics card whether or not you can.", "Yes"),
    # a Yes needs the question's every word: here "first" and "then" lead nowhere
    ("can i attack first and then move?", "First the Movement phase, then the Combat phase.", None),
    (
        "can i put 4 cards at one flag?",
        "You may place at most three Troop cards beside a Flag",
        "No",
    ),
]


@pytest.mark.parametrize(("question", "sentence", "expected"), POLARITY_CASES)
def test_polarity(question: str, sentence: str, expected: str | None) -> None:
    g = guide("battleline")
    idf = g.retriever.passage_lexical.idf
    assert polarity(question, sentence, g.analyzer.terms, idf, g._name_terms) == expected


def test_trim_keeps_the_rule_and_drops_the_example() -> None:
    assert trim("A Phalanx is three cards of the same value, for example a red 5.") == (
        "A Phalanx is three cards of the same value."
    )
    assert (
        trim(
            "When both formations are of the same kind, the higher sum wins: a green "
            "Battalion Order of 2, 6 and 9 (sum 17) is stronger than a purple one."
        )
        == "When both formations are of the same kind, the higher sum wins."
    )
    assert trim("Each troop value carries a name: 1 Skirmishers, 2 Peltasts.") == (
        "Each troop value carries a name: 1 Skirmishers, 2 Peltasts."
    )
    assert trim("For example, a Wedge beats a Phalanx.") == "A Wedge beats a Phalanx."
    assert decapitalise("When both tie") == "when both tie"
    assert decapitalise("Fog stays") == "Fog stays"
    rules = "Values never wrap around. Under Fog only sums count. Values are 1 to 10."
    assert decapitalise("Values never wrap around.", rules) == "values never wrap around."
    assert decapitalise("Fog stays.", rules) == "Fog stays."
    assert decapitalise("Battle Line is for two.", rules) == "Battle Line is for two."
    assert decapitalise("Scout is played.", rules, lambda w: w == "Scout") == "Scout is played."


def test_definition_prefers_the_thing_itself() -> None:
    terms = guide("battleline").analyzer.terms
    leader = [s for p in load("battleline").section("Leader").passages for s in p.split(". ")]
    assert definition("leader", leader, terms) is not None
    assert definition("leader", leader, terms).startswith("A Leader is")  # type: ignore[union-attr]
    assert definition("phalanx", leader, terms) is None


# --- the benchmark ------------------------------------------------------------------------------


def test_bench_reports_direct_answers_and_leads(tmp_path: Path) -> None:
    (tmp_path / "p.toml").write_text(
        "[battleline]\nquestions = [\n"
        '  { q = "same formation, who wins?", sections = ["Formations"],'
        ' lead = ["higher sum", "completed first"] },\n'
        '  { q = "can i play both leaders?", sections = ["Leader"], lead = ["yes"] },\n'
        '  { q = "How do I set up the game?", sections = ["Setup walkthrough"] },\n'
        "]\n"
        'out_of_scope = ["What should I eat during the game?"]\n'
    )
    result = CliRunner().invoke(cli, ["bench", "guide", "--sets", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    row = next(r for r in json.loads(result.stdout)["rows"] if r["game"] == "all")
    assert row["lead_questions"] == 2
    # the second lead is wrong on purpose: the answer is No
    assert row["lead_accuracy"] == 0.5
    assert row["direct_share"] == 1.0
    # a walkthrough cited by its heading is right
    assert row["top1_accuracy"] == 1.0
    text = CliRunner().invoke(cli, ["bench", "guide", "--sets", str(tmp_path)])
    assert "direct" in text.stdout and " 1/2 " in text.stdout


@pytest.mark.parametrize("lead", ["[]", '"yes"', '[""]', "[3]"])
def test_a_malformed_lead_is_one_line_naming_it(tmp_path: Path, lead: str) -> None:
    (tmp_path / "p.toml").write_text(
        f'[battleline]\nquestions = [{{ q = "who starts?", sections = ["Turn"], lead = {lead} }}]\n'
    )
    result = CliRunner().invoke(cli, ["bench", "guide", "--sets", str(tmp_path)])
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "p.toml" in lines[0] and "question 1" in lines[0], lines


def test_a_lead_is_matched_as_whole_words() -> None:
    """ "no" is not found in "nothing"; the fallback holds no lead."""
    cases = load_cases(EVAL / "leads.toml")
    case = next(c for c in cases if c.question == "can i play both leaders?")
    outcome = run([case], guide)[0]
    assert outcome.lead_right is True
    nothing = Answer("Nothing changes. According to the 'Turn' section, \"...\"", "Turn", 0.5)
    assert first_sentence(nothing.answer) == "Nothing changes."
    assert type(outcome)(case, nothing, 0.0).lead_right is False
    assert type(outcome)(case, Answer(FALLBACK, None, 0.1), 0.0).lead_right is False


@pytest.mark.parametrize("part", sorted(LEAD_FLOOR))
@pytest.mark.parametrize("embeddings", [True, False])
def test_lead_floor(part: str, embeddings: bool) -> None:
    """Every answer leads with a direct answer, and the lead words are there for the share of
    questions naming them that was measured."""
    if embeddings and not EMBEDDINGS:
        pytest.skip("the embedding model (the guide extra) is not installed")
    guide_for = guide if embeddings else keyword_guide
    figures = Figures(run(load_cases(EVAL / f"{part}.toml"), guide_for))
    wrong = [
        f"{o.case.question!r} -> {o.first_sentence!r}"
        for o in figures.with_lead
        if not o.lead_right
    ]
    assert figures.direct_share == 1.0
    assert (figures.lead_accuracy or 0.0) >= LEAD_FLOOR[part][embeddings], "\n".join(wrong)
