"""The offline rules guide (issues 5 and 20): retrieval, answers, references, cards, CLI.

The evaluation set lives in tests/guide/eval/: tuned.toml (player-style questions the guide was
tuned on), heldout.toml (written first and never tuned on) and formal.toml (the first guide's
questions). The accuracy tests hold each part above a floor a little under its measured figure
(``battlejudge bench guide`` prints the figures), and no part may hold a confident wrong answer.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from battlejudge.apps.guide import (
    FALLBACK,
    GAMES,
    HIGH,
    THRESHOLD,
    Guide,
    Session,
    UnknownCardError,
    UnknownGameError,
    game_id,
    load,
)
from battlejudge.apps.guide.embed import shared_embedder
from battlejudge.apps.guide.reference import (
    WALKTHROUGH_HEADINGS,
    WalkthroughKind,
    parse,
    sentences,
    with_faqs,
)
from battlejudge.apps.guide.text import expand_shorthand, plain
from battlejudge.bench.guide import PARTS, Figures, discover_parts, load_cases
from battlejudge.bench.guide import run as run_cases
from battlejudge.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
EVAL = Path(__file__).parent / "guide" / "eval"
SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"
EMBEDDINGS = shared_embedder() is not None

SETUP_FOLLOW_UP = "Do you have any questions about the setup process?"
TURN_FOLLOW_UP = "Do you have any questions about what to do on your turn?"

# Floors a little under the figures `battlejudge bench guide` measured (top-1 section accuracy
# over the in-scope questions of each part), with and without the embedding model. heldout was
# never tuned on; fresh3 to fresh8 were each sealed until one run (fresh3 to fresh6 were read
# afterwards and are development parts now, like the others; fresh7 and fresh8 are not read).
# See docs/guide.md for the figures before and after each change. Any other part in the folder
# has no floor until it has been measured; it is still checked for cited sections and run by the
# benchmark.
FLOORS = {
    True: {
        "tuned": 0.96,
        "heldout": 0.94,
        "formal": 0.98,
        "fresh": 0.94,
        "fresh2": 0.96,
        "dev3": 0.96,
        "dev4": 0.91,
        "dev5": 0.91,
        "dev6": 0.90,
        "dev7": 0.96,
        "dev8": 0.87,
        "dev9": 0.91,
        "dev10": 0.88,
        "dev11": 0.87,
        # first run 77.9% (Force Duel 59.6%), before anything was read from it (sixth round)
        "dev12": 0.87,
        # first run 90.6% (Force Duel 88.3%), before anything was read from it (seventh round)
        "dev13": 0.93,
        # sealed until measured once at the end of the fifth round (92.3%); read since
        "fresh3": 0.94,
        # sealed until measured once after the seventh round (94.3%); read in the eighth
        "fresh4": 0.95,
        # sealed until measured once after the eighth round (91.6%, Nine Circles 84.0%); read in
        # the ninth (92.7%, Nine Circles 90.0%)
        "fresh5": 0.91,
        # sealed until measured once after the ninth round (90.6%, Nine Circles 86.3%); read in
        # the tenth (91.0% with the label the blind review added; the round changed no ranking)
        "fresh6": 0.90,
        # sealed until measured once after the tenth round (92.1%, Force Duel 86.5%)
        "fresh7": 0.91,
        # the direct answers' part (issue 37), written with the guide in view: 97.6%
        "leads": 0.95,
        # sealed until measured once after the direct answers (issue 37): 95.3%, no confident
        # wrong answer (lead words right for 106 of 193)
        "fresh8": 0.93,
    },
    False: {
        "tuned": 0.83,
        "heldout": 0.84,
        "formal": 0.96,
        "fresh": 0.82,
        "fresh2": 0.87,
        "dev3": 0.89,
        "dev4": 0.68,
        "dev5": 0.72,
        "dev6": 0.73,
        "dev7": 0.78,
        "dev8": 0.74,
        "dev9": 0.78,
        "dev10": 0.77,
        "dev11": 0.76,
        "dev12": 0.68,
        "dev13": 0.79,
        "fresh3": 0.83,
        "fresh4": 0.87,
        "fresh5": 0.81,
        "fresh6": 0.80,
        "fresh7": 0.82,
        "leads": 0.92,
        # the same single run, keywords alone: 89.1%
        "fresh8": 0.87,
    },
}

# Every tactics card under both themes' names (docs/rulings.md): name -> (Battle Line entry,
# Nine Circles entry). Mud, Scout and Redeploy keep their Battle Line names in Nine Circles.
CARDS: dict[str, tuple[str, str]] = {
    "Alexander": ("Leader", "Beelzebub and Mephistopheles"),
    "Darius": ("Leader", "Beelzebub and Mephistopheles"),
    "Companion Cavalry": ("Companion Cavalry", "Shapeshifter"),
    "Shield Bearers": ("Shield Bearers", "3-headed monkey"),
    "Fog": ("Fog", "Mano a Mano!"),
    "Mud": ("Mud", "Mud"),
    "Scout": ("Scout", "Scout"),
    "Redeploy": ("Redeploy", "Redeploy"),
    "Deserter": ("Deserter", "Day off"),
    "Traitor": ("Traitor", "We have Cookies!"),
    "Beelzebub": ("Leader", "Beelzebub and Mephistopheles"),
    "Mephistopheles": ("Leader", "Beelzebub and Mephistopheles"),
    "Shapeshifter": ("Companion Cavalry", "Shapeshifter"),
    "3-headed monkey": ("Shield Bearers", "3-headed monkey"),
    "Mano a Mano!": ("Fog", "Mano a Mano!"),
    "Day off": ("Deserter", "Day off"),
    "We have Cookies!": ("Traitor", "We have Cookies!"),
}


@cache
def guide(game: str) -> Guide:
    return Guide.for_game(game)


@cache
def keyword_guide(game: str) -> Guide:
    return Guide(load(game), embedder=None)


@cache
def figures(part: str, embeddings: bool) -> Figures:
    return Figures(
        run_cases(load_cases(EVAL / f"{part}.toml"), guide if embeddings else keyword_guide)
    )


# --- the evaluation set -----------------------------------------------------------------------


def test_evaluation_set_size() -> None:
    """Issue 20: at least 150 player questions over the five games, and 30 out of scope."""
    cases = [c for part in ("tuned", "heldout") for c in load_cases(EVAL / f"{part}.toml")]
    assert sum(c.in_scope for c in cases) >= 150
    assert sum(not c.in_scope for c in cases) >= 30
    assert {c.game for c in cases} == set(GAMES)


def test_heldout_questions_are_not_tuned_questions() -> None:
    """No held-out question is a tuned one, nor one of its game's ways of asking a fact."""
    tuned = {
        (c.game, c.question.lower())
        for p in ("tuned", "formal")
        for c in load_cases(EVAL / f"{p}.toml")
    }
    asked = {(g, q.lower()) for g in GAMES for f in load(g).faqs for q in f.questions}
    heldout = [(c.game, c.question.lower()) for c in load_cases(EVAL / "heldout.toml")]
    assert [q for q in heldout if q in tuned or q in asked] == []


@pytest.mark.parametrize("part", discover_parts(EVAL))
def test_evaluation_set_cites_existing_sections(part: str) -> None:
    """Every part in the folder, ours or written outside, names sections the guide has."""
    for case in load_cases(EVAL / f"{part}.toml"):
        reference = load(case.game)
        names = {s.name for s in reference.sections}
        # a walkthrough may be cited by its heading too (bench.guide counts it right)
        names |= {WALKTHROUGH_HEADINGS[k] for k in reference.walkthroughs}
        assert set(case.sections) <= names, case


@pytest.mark.parametrize("part", tuple(FLOORS[True]))
def test_accuracy_floor(part: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Top-1 section accuracy stays above the floor taken from the measurement."""
    f = figures(part, EMBEDDINGS)
    with capsys.disabled():
        print(f"\nguide top-1 {part}: {100 * f.accuracy:.1f}% (embeddings: {EMBEDDINGS})")
    wrong = [f"{o.case.question!r} -> {o.answer.section!r}" for o in f.in_scope if not o.right]
    assert f.accuracy >= FLOORS[EMBEDDINGS][part], "\n".join(wrong)


@pytest.mark.parametrize("part", tuple(FLOORS[False]))
def test_keyword_accuracy_floor(part: str) -> None:
    """Without the embedding model (the guide extra missing) the guide still answers."""
    assert figures(part, False).accuracy >= FLOORS[False][part]


@pytest.mark.parametrize("part", discover_parts(EVAL))
@pytest.mark.parametrize("embeddings", [True, False])
def test_no_confident_wrong_answer(part: str, embeddings: bool) -> None:
    """Issue 20: an answer from the wrong section never comes with high confidence."""
    if embeddings and not EMBEDDINGS:
        pytest.skip("the embedding model (the guide extra) is not installed")
    f = figures(part, embeddings)
    assert [(o.case.question, o.answer.section, o.answer.score) for o in f.confident_wrong] == []


def test_keywords_alone_still_answer_but_never_confidently() -> None:
    """Without the embedding model the guide answers from keywords, capped under HIGH."""
    f = figures("formal", False)
    # Walkthroughs and card entries are routed, not ranked; every ranked answer stays under HIGH.
    ranked = [keyword_guide(o.case.game).search(o.case.question) for o in f.outcomes]
    assert max(r.confidence for r in ranked) < HIGH


def test_bench_guide(tmp_path: Path) -> None:
    (tmp_path / "tuned.toml").write_text(
        '[battleline]\nquestions = [{ q = "Who plays first?", sections = ["Turn"] }]\n'
        'out_of_scope = ["What should I eat during the game?"]\n'
    )
    result = CliRunner().invoke(
        cli, ["bench", "guide", "--sets", str(tmp_path), "--part", "tuned", "--json"]
    )
    assert result.exit_code == 0, result.output
    rows = {r["game"]: r for r in json.loads(result.stdout)["rows"]}
    assert set(rows) == {"battleline", "all"}
    assert rows["all"]["top1_accuracy"] == 1.0 and rows["all"]["fallback_recall"] == 1.0
    assert rows["all"]["questions"] == 1 and rows["all"]["out_of_scope"] == 1
    missing = CliRunner().invoke(cli, ["bench", "guide", "--sets", str(tmp_path), "--part", "x"])
    assert missing.exit_code == 2 and "x.toml" in missing.stderr and "tuned" in missing.stderr


def test_bench_guide_measures_every_part_in_the_folder(tmp_path: Path) -> None:
    """A part dropped into the folder (say a fresh held-out one) is measured by its file name."""
    (tmp_path / "tuned.toml").write_text(
        '[battleline]\nquestions = [{ q = "Who plays first?", sections = ["Turn"] }]\n'
    )
    (tmp_path / "zz-outside.toml").write_text(
        '[force-duel]\nout_of_scope = ["What should I eat during the game?"]\n'
    )
    result = CliRunner().invoke(cli, ["bench", "guide", "--sets", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    rows = [(r["part"], r["game"]) for r in json.loads(result.stdout)["rows"]]
    assert rows == [
        ("tuned", "battleline"),
        ("tuned", "all"),
        ("zz-outside", "force-duel"),
        ("zz-outside", "all"),
    ]
    only = CliRunner().invoke(
        cli, ["bench", "guide", "--sets", str(tmp_path), "--part", "zz-outside", "--json"]
    )
    assert {r["part"] for r in json.loads(only.stdout)["rows"]} == {"zz-outside"}
    assert discover_parts(EVAL)[: len(PARTS)] == PARTS  # known first, then others by name
    empty = CliRunner().invoke(cli, ["bench", "guide", "--sets", str(tmp_path / "none")])
    assert empty.exit_code == 2 and "none" in empty.stderr
    # A malformed part written outside: one line naming the file and the entry, exit code 2.
    for text, needle in [("[chess]\nquestions = []\n", "[chess]"), ("[battleline\n", "TOML")]:
        (tmp_path / "zz-outside.toml").write_text(text)
        bad = CliRunner().invoke(cli, ["bench", "guide", "--sets", str(tmp_path)])
        assert bad.exit_code == 2, bad.output
        assert "zz-outside.toml" in bad.stderr and needle in bad.stderr
        assert "Traceback" not in bad.output


@pytest.mark.parametrize(
    ("slip", "meant"),
    [
        ("meny", "many"),  # a letter wrong
        ("formaton", "formation"),  # a letter missing
        ("cardss", "cards"),  # a letter extra
        ("crads", "cards"),  # two neighbours swapped
        ("cadrs", "cards"),  # a rules word before an everyday one ("cares")
        ("formmatoin", "formation"),  # two slips in a long word
        ("opponnant", "opponent"),
        ("afttre", None),  # two slips in a word under eight letters: too many neighbours
        ("crdas", None),
        ("xqzvk", None),  # nothing near
    ],
)
def test_nearest_word(slip: str, meant: str | None) -> None:
    """A slip of the keyboard is read as the reference word the fewest edits away."""
    assert guide("battleline").retriever.nearest_word(slip) == meant


def test_without_rapidfuzz_questions_are_read_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """rapidfuzz belongs to the guide extra: without it no slip is corrected, and nothing fails."""
    import sys

    monkeypatch.setitem(sys.modules, "rapidfuzz", None)  # makes `import rapidfuzz` fail
    retriever = guide("battleline").retriever
    assert retriever.nearest_word("formaton") is None
    assert retriever.respell("how meny formatons") == "how meny formatons"
    assert guide("battleline").ask("how many cards make a formation?").answered


def test_guide_only_libraries_are_in_the_guide_extra() -> None:
    """bm25s, snowballstemmer, PyStemmer and rapidfuzz serve only the guide: a plain install of
    battlejudge does not pull them; the guide extra does, and so does the test extra (CI)."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def names(requirements: list[str]) -> set[str]:
        return {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].lower() for r in requirements}

    only_guide = {"bm25s", "snowballstemmer", "pystemmer", "rapidfuzz"}
    assert not only_guide & names(project["dependencies"])
    extras = project["optional-dependencies"]
    assert only_guide <= names(extras["guide"]) and only_guide <= names(extras["test"])


def test_without_the_guide_extra_the_guide_names_it() -> None:
    """Without the stemmer (the guide extra), asking is one line naming the extra, exit 2."""
    code = (
        "import sys; sys.modules['snowballstemmer'] = None; "
        "from battlejudge.cli.main import cli; "
        "cli(['guide', 'battleline', 'ask', 'hand size?'])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "battlejudge: error: the rules guide's keyword search needs snowballstemmer, "
        "which is not installed: pip install 'battlejudge[guide]'"
    ]


@pytest.mark.skipif(not EMBEDDINGS, reason="telling real words from slips needs the tokenizer")
def test_misspellings_are_read_but_real_words_stay() -> None:
    """Slips of the keyboard are read as the word meant; a real English word the rules do not
    use is never "corrected" into one they do ("world" is not "would", "online" not "nine")."""
    retriever = guide("nine-circles").retriever
    assert retriever.respell("how meny circels to win") == "how many circles to win"
    assert retriever.respell("can i play nine circles online?") == (
        "can i play nine circles online?"
    )
    assert guide("lines-of-battle").retriever.respell("who won the world championship") == (
        "who won the world championship"
    )
    # Ordinary words two edits from a rules word, once read as it (development parts dev5-dev7):
    # "recipe" was "revive", "halves" "have", "morale" "more", "norway" "normal".
    for game, question in [
        ("nine-circles", "any good recipe for actual cookies for game night?"),
        ("force-duel", "is a pancake recipe in the rules?"),
        ("battleplan", "what are the two halves of a round"),
        ("lines-of-battle", "do units have morale or rout?"),
        ("nine-circles", "how do I shuffle 60 cards without bending them"),
        ("force-duel", "what's the capital of norway?"),
    ]:
        assert guide(game).retriever.respell(question) == question, (game, question)
    answer = guide("battleline").ask("who wins if formations are tyed at a flag")
    assert answer.section in ("Flags", "Ruling 7: Ties and who completed last"), answer


def test_common_english_words_are_not_slips() -> None:
    """A common English word one edit from a rules word is no slip (wordfreq's English list):
    "rude" was read as "rule", "heal" as "head", "lore" as "lose", so questions about manners,
    healing or the story looked like rules questions (development parts dev6, dev10, dev11 and
    fresh3 asked so); "whats the lore, why are the pieces fighting?" got BattlePlan's Flags and
    Winning at 0.79. Real slips are still read: "oppnent" is "opponent", "cadrs" "cards"."""
    from battlejudge.apps.guide.english import common_words

    words = common_words()
    if not words:
        pytest.skip("wordfreq (the guide extra) is not installed")
    assert {"rude", "heal", "lore", "cheating"} <= words
    assert not {"oppnent", "cadrs", "formmatoin"} & words
    for game, question in [
        ("battleline", "is it rude to think for five minutes on a turn"),
        ("lines-of-battle", "can a unit heal during the game"),
        ("battleplan", "whats the lore, why are the pieces fighting"),
    ]:
        assert guide(game).retriever.respell(question) == question, (game, question)
    assert guide("battleline").retriever.respell("can my oppnent see my cadrs") == (
        "can my opponent see my cards"
    )
    assert not guide("battleplan").ask("whats the lore, why are the pieces fighting").answered


@pytest.mark.skipif(not EMBEDDINGS, reason="the length is weighed in the model's calibration")
def test_a_long_story_is_not_sent_to_the_fallback_for_its_length() -> None:
    """Coverage and the share of foreign words are shares of the question, so a long story from
    last night's game scored low however well a section answered it; the question's length is a
    signal of its own since the sixth round (leaving each part out of the fit: 92.34% -> 92.86%
    top-1 on average). This one fell back at 0.23 before; Reshuffling and Losing Units answer."""
    answer = guide("force-duel").ask(
        "so we were playing last night and my friend had lost four of his five units, then his "
        "battle deck ran out completely, and he says he only loses one more unit, is he right"
    )
    assert answer.section in ("Reshuffling", "Losing Units", "Game End"), answer
    assert THRESHOLD <= answer.score < HIGH
    assert not guide("force-duel").ask("what is the capital of france").answered


@pytest.mark.skipif(not EMBEDDINGS, reason="confident answers need the embedding model")
def test_a_question_near_what_the_rules_leave_open_is_not_confident() -> None:
    """fresh4's one confident wrong answer (eighth round): the unit cards' section won at 0.95,
    by its name, over the section saying what the unit cards do is not given (lead 0.84). A
    runner-up that says what the rules leave open needs a lead of OPEN_MARGIN."""
    answer = guide("force-duel").ask(
        "what do the unit cards in the battle deck actually do to the battle"
    )
    assert answer.answered and answer.score < HIGH, answer


def test_confidence_needs_the_nearest_way_of_asking_and_a_lead_over_an_open_section() -> None:
    """Strong evidence is not enough when another section holds a nearer way of asking (fresh4:
    "how many strategy cards are in the deck", a Components way of asking word for word, won by
    Strategy Cards), or when the runner-up says what the rules leave open and the lead is short."""
    from battlejudge.apps.guide.retrieve import OPEN_MARGIN, STRONG, Features

    retriever = guide("force-duel").retriever
    if retriever.embedder is None:
        pytest.skip("confident answers need the embedding model")
    strong = Features(0.95, 1.0, OPEN_MARGIN + 0.5, 0.0, 0.0, -0.5, 0.3, 0.9, False)
    assert retriever.confidence(strong) >= HIGH
    assert retriever.confidence(Features(0.95, 1.0, 1.5, 0.0, 0.0, -0.5, 0.3, 0.99)) < HIGH
    assert retriever.confidence(Features(0.95, 1.0, 1.5, 0.0, 0.0, -0.5, 0.3, 0.9, True)) >= HIGH
    short = STRONG["margin"] + 0.2
    assert retriever.confidence(Features(0.95, 1.0, short, 0.0, 0.0, -0.5, 0.3, 0.9)) >= HIGH
    assert retriever.confidence(Features(0.95, 1.0, short, 0.0, 0.0, -0.5, 0.3, 0.9, True)) < HIGH


@pytest.mark.skipif(not EMBEDDINGS, reason="ways of asking are matched by the embedding model")
@pytest.mark.parametrize(
    ("game", "question", "answers"),
    [
        # fresh4 and dev5: a Components way of asking word for word; Strategy Cards won by name
        ("force-duel", "how many strategy cards are in the deck", ("Components",)),
        ("force-duel", "how many force cards do we each get", ("Components", "Setup")),
        ("lines-of-battle", "where do i set my army up", ("Board and Deployment",)),
        ("lines-of-battle", "cavalry charges a spearman from the front and we tie?", ("Ruling 4",)),
    ],
)
def test_a_near_way_of_asking_beats_the_section_the_question_names(
    game: str, question: str, answers: tuple[str, ...]
) -> None:
    """The eighth round's ranking rule (NEAR_WEIGHT): a question nearly word for word one of a
    section's ways of asking goes to it, though its words name another section."""
    answer = guide(game).ask(question)
    assert answer.section is not None and answer.section.startswith(answers), answer


def test_open_sections_must_be_sections() -> None:
    """A front matter naming an open section the reference does not have stops with one line."""
    source = (EVAL.parents[2] / "apps/guide/data/force-duel.md").read_text()
    broken = source.replace('open_sections = ["What the Rules', 'open_sections = ["What Nobody', 1)
    assert broken != source
    with pytest.raises(ValueError, match="open_sections \\['What Nobody"):
        parse(broken, "force-duel")


def test_a_question_about_another_game_falls_back() -> None:
    """A question naming another game asks about that game, and this guide's rules do not answer
    it, however near its words come to them: every development part asked some (12 were answered,
    "how many players can join a game of lines of battle" by Nine Circles' guide at 0.78), and no
    in-scope question of any part names another game. Nine Circles is Battle Line re-themed
    (``same_rules_as``), so each may name the other."""
    from battlejudge.apps.guide.reference import other_games

    assert set(other_games("nine-circles")) == {"BattlePlan", "Lines of Battle", "Force Duel"}
    assert "Battle Line" in other_games("force-duel")
    for game, question in [
        ("battleline", "how do you set up lines of battle"),
        ("nine-circles", "what does the fog card do in battleplan"),
        ("force-duel", "how many cards in hand do you have in Battle-Line?"),
        ("lines-of-battle", "in force_duel who attacks first"),
        ("battleplan", "how do you claim a flag in battleline"),
    ]:
        answer = guide(game).ask(question)
        assert (answer.answer, answer.section) == (FALLBACK, None), (game, question)
    assert guide("nine-circles").ask("is nine circles the same game as battle line").answered
    assert guide("battleline").ask("what is fog called in nine circles").answered


def test_a_draw_is_a_tie_but_drawing_a_card_is_not() -> None:
    """A draw is players' word for a tie (Force Duel's battles: the Points section); "draw a
    card" still means drawing. "what if the battle is a draw" went to Reshuffling before."""
    force_duel = guide("force-duel")
    assert force_duel.ask("what if the battle is a draw").section == "Points"
    assert force_duel.ask("on a draw do the cards still get chucked").section == "Points"
    assert force_duel.ask("do i draw a new strategy card after each battle").section == (
        "Strategy Cards"
    )


@pytest.mark.parametrize("embeddings", [True, False])
def test_pro_rules_are_the_advanced_rule(embeddings: bool) -> None:
    """Players call Battle Line's advanced rule "the pro rules" or "the pro version" (dev4 and
    dev8 asked so); both fell back before, since "pro" is a word the rules never use."""
    if embeddings and not EMBEDDINGS:
        pytest.skip("the embedding model (the guide extra) is not installed")
    battleline = guide("battleline") if embeddings else keyword_guide("battleline")
    assert battleline.ask("what changes in the pro rules").section == "Advanced Rule"
    assert battleline.ask("with the pro version, when do claims happen").section == (
        "Advanced Rule"
    )


def test_force_duel_players_words() -> None:
    """Players ask for Force Duel's overview "in a nutshell" and for the first attacker as who
    "swings first" (dev11); neither word is the rules' own, and both questions fell back."""
    force_duel = guide("force-duel")
    assert force_duel.ask("force duel in a nutshell?").section == "Overview"
    assert force_duel.ask("who swings first in the first battle").section == "Battle Deck"


@pytest.mark.parametrize("game", ["battleplan", "lines-of-battle", "force-duel"])
def test_a_guy_is_a_piece_or_a_unit(game: str) -> None:
    """Players call their pieces and units "guys" ("can i attack my own guy"): the same term as
    the rules' piece or unit for keyword search."""
    analyzer = guide(game).analyzer
    piece = "piece" if game == "battleplan" else "unit"
    assert analyzer.terms("my guys") == analyzer.terms(f"my {piece}s")


def test_leading_off_is_starting() -> None:
    """Asked "who leads off game two", a player means who starts it (Ruling 15: the winner starts
    the next game); dev8 and dev10 asked so and fell back, "lead off" being no rules word."""
    answer = guide("battleline").ask("who leads off the second game")
    assert answer.section in ("Game End", "Ruling 15: Game end and match scoring"), answer


def test_at_what_point_asks_when() -> None:
    """Asked "at what point", a player asks when, and its "point" is no score: Force Duel's
    "at what point in a battle are strategy cards played" went to Points (fresh3 asked so)
    instead of Strategy Cards."""
    assert expand_shorthand("at what point do I play it") == "when do I play it"
    answer = guide("force-duel").ask("at what point in a battle are strategy cards played")
    assert answer.section in ("Strategy Cards", "Battle"), answer


def test_fallback_sentence_is_exact() -> None:
    assert FALLBACK == (
        "I am sorry, but the answer to your question is not provided in the rules I have access to."
    )
    answer = guide("battleline").ask("What is the capital of France?")
    assert (answer.answer, answer.section) == (FALLBACK, None)
    assert guide("battleline").ask("???").answer == FALLBACK


# --- answers that answer ----------------------------------------------------------------------


def quoted(answer: str) -> str:
    return answer.split(" section, ", 1)[1].strip('"')


def test_answer_quotes_the_answering_sentence_and_names_the_section() -> None:
    answer = guide("battleline").ask("Can I claim a stone before drawing my card?")
    assert answer.section == "Flags"
    assert "According to the 'Flags' section, \"" in answer.answer
    sentence = quoted(answer.answer)
    assert sentence in load("battleline").section("Flags").text
    assert "before you draw" in sentence
    assert 0.0 < answer.score <= 1.0


@pytest.mark.skipif(not EMBEDDINGS, reason="direct answers need the embedding model")
@pytest.mark.parametrize(
    ("game", "question", "lead", "needle"),
    [
        ("battleline", "hand size?", "The dealer shuffles", "seven"),
        ("battleline", "What is the order of the formations?", "There are five kinds", "strongest"),
        ("battleline", "Who gets a flag when it is a tie?", "When the two formations are", "tied"),
        ("force-duel", "What is the hand size?", "After both strategy cards", "3 strategy cards"),
        ("lines-of-battle", "How far can archers shoot?", "Archers move 1 square", "5 squares"),
        ("lines-of-battle", "Can a unit attack after a swap?", "No:", "After a swap"),
    ],
)
def test_direct_answer_leads_then_the_rule(
    game: str, question: str, lead: str, needle: str
) -> None:
    """Issue 20: a question with a direct answer gets it first, then the rule that says it."""
    answer = guide(game).ask(question)
    assert answer.answer.startswith(lead), answer.answer
    assert needle in quoted(answer.answer)


# Issue 20's examples that went wrong, asked in our own words: (game, question, sections that
# answer, the section the old guide wrongly cited or None, words the answer must lead with or None,
# words the quoted rule must hold). Sources: the rules sections named, apps/guide/data/<game>.md.
ISSUE_EXAMPLES = [
    # Battle Line, Leader: one Leader per side (was "not provided", 0.33-0.47).
    (
        "battleline",
        "I've got Darius out already. Is Alexander still playable for me?",
        ("Leader", "Ruling 3: One Leader per side"),
        None,
        # the Leader entry's sentence or Ruling 3's, both the rule asked for
        ("You may have only one Leader", "No player may ever have more than one Leader"),
        "one Leader",
    ),
    # Battle Line, Flags: a tie goes against whoever completed last (was "not provided").
    (
        "battleline",
        "who takes a flag if both formations are completely equal?",
        ("Flags", "Ruling 7: Ties and who completed last"),
        None,
        ("When the two formations are tied", "A tie goes against"),
        "goes against whoever placed the final card",
    ),
    # Lines of Battle, Archers: reload after an attack (was "not provided").
    (
        "lines-of-battle",
        "can my archers shoot on two turns in a row?",
        ("Archers", "Ruling 6: Archer reload"),
        None,
        # no "No:": the rule says "skips", and only a negation in so many words leads with No
        ("An archer that attacked skips", "After an archer attacks, it must skip"),
        "skip",
    ),
    # Lines of Battle, Formation Swap: a swap uses up both units' turn (was "not provided").
    (
        "lines-of-battle",
        "I swapped two units; can one of them still attack this turn?",
        ("Formation Swap",),
        None,
        "No:",
        "After a swap",
    ),
    # BattlePlan, Move: the Move card, not the Defend card (was Defend at 0.88).
    (
        "battleplan",
        "what does the Move card do?",
        ("Move",),
        "Defend",
        None,
        "moves the piece one square up, down, left or right",
    ),
    (
        "battleplan",
        "how far does a piece go with a move card?",
        ("Move",),
        "Defend",
        None,
        "one square up, down, left or right",
    ),
    # Force Duel, Strategy Cards: the hand is three strategy cards (was the battle-deck passage).
    (
        "force-duel",
        "how many cards do I have in my hand?",
        ("Strategy Cards", "Setup"),
        "Battle Deck",
        ("After both strategy cards are down", "Each player then draws 3 strategy cards"),
        "3 strategy cards",
    ),
    # Nine Circles, Claiming Circles, under its own names (was "Players and Duration" at 0.72).
    (
        "nine-circles",
        "can I claim a circle if my opponent has only two monsters there?",
        ("Claiming Circles", "Ruling 5: What a claim proof may use"),
        "Players and Duration",
        None,
        "cannot add any Troop card",
    ),
    (
        "nine-circles",
        "when may I claim a circle?",
        ("Claiming Circles",),
        "Players and Duration",
        None,
        "second step of your turn",
    ),
]


@pytest.mark.skipif(not EMBEDDINGS, reason="paraphrases need the embedding model")
@pytest.mark.parametrize(
    ("game", "question", "sections", "not_section", "lead", "needle"), ISSUE_EXAMPLES
)
def test_issue_examples_are_answered_from_the_right_rule(
    game: str,
    question: str,
    sections: tuple[str, ...],
    not_section: str | None,
    lead: str | tuple[str, ...] | None,
    needle: str,
) -> None:
    """Issue 20: each example the old guide missed now cites a section that answers it, above
    the threshold, leads with the direct answer where there is one, and quotes the sentence
    that answers (not the section's first lines)."""
    answer = guide(game).ask(question)
    assert answer.section in sections and answer.section != not_section, answer
    assert answer.score >= THRESHOLD
    if lead is not None:
        assert answer.answer.startswith(lead), answer.answer
    assert needle in quoted(answer.answer), answer.answer


def test_quote_is_not_the_first_line_of_a_long_section() -> None:
    answer = guide("battleline").ask("Can unplayed tactics cards stop my claim?")
    flags = load("battleline").section("Flags")
    assert answer.section == "Flags"
    assert not flags.passages[0].startswith(quoted(answer.answer))
    assert "Tactics cards that have not been played" in answer.answer


# --- the embedding model ----------------------------------------------------------------------


@pytest.mark.skipif(not EMBEDDINGS, reason="the embedding model (the guide extra) is not installed")
def test_model_loads_from_the_installed_package_without_network() -> None:
    """The weights and tokenizer come from the installed wheel; no socket is ever opened, the
    model package itself is not imported (it reconfigures the root logger), nor is bm25s."""
    code = (
        "import socket, sys\n"
        "def refuse(*a, **k): raise OSError('network used')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "from battlejudge.apps.guide import Guide\n"
        "g = Guide.for_game('force-duel')\n"
        "assert g.embedder is not None\n"
        "print(g.ask('how many strategy cards do i keep in hand?').section)\n"
        "print('wordllama' in sys.modules, 'requests' in sys.modules)\n"
        "print('bm25s' in sys.modules, 'scipy' in sys.modules)\n"
    )
    env = {"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    # The shipped index is read with numpy alone: bm25s (and the scipy it imports) stay out.
    assert done.stdout.split("\n")[:3] == ["Strategy Cards", "False False", "False False"]


def test_importing_the_guide_loads_nothing_heavy() -> None:
    """The guide's modules import numpy, bm25s and the model only when a guide is built."""
    code = (
        "import sys\n"
        "import battlejudge.apps.guide, battlejudge.cli.guide\n"
        "heavy = ('numpy', 'bm25s', 'tokenizers', 'safetensors', 'scipy')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_keyword_path_imports_no_numpy() -> None:
    """Issue 37, part 8: without the sentence vectors the guide reads its shipped index and
    ranks with plain Python; numpy (only the embedding model's side needs it) is never imported,
    and with numpy made unimportable the guide answers exactly as with it."""
    ask = (
        "from battlejudge.apps.guide import GAMES, Guide\n"
        "from battlejudge.cli.main import cli\n"
        "for game in GAMES:\n"
        "    guide = Guide.for_game(game)\n"
        "    assert guide.embedder is None and guide.retriever.from_index, game\n"
        "    for q in ('who goes first?', 'can i atack diagonaly?', 'what does the box cost?'):\n"
        "        a = guide.ask(q)\n"
        "        print(a.section, a.direct, round(a.score, 9))\n"
        "assert 'numpy' not in sys.modules and 'bm25s' not in sys.modules\n"
        "cli(['guide', 'battleline', 'ask', 'does the Leader count as a 10?'])\n"
    )
    block = (
        "class NoNumpy:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'numpy': raise ImportError('numpy blocked')\n"
        "sys.meta_path.insert(0, NoNumpy())\n"
    )
    env = {**os.environ, "BATTLEJUDGE_GUIDE_EMBEDDINGS": "0"}
    outputs = []
    for code in ("import sys\n" + ask, "import sys\n" + block + ask):
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
        )
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    lines = outputs[0].splitlines()
    assert len(lines) == 3 * len(GAMES) + 1 and lines[0].startswith("Turn The player who")
    assert "According to the 'Leader' section" in lines[-1]


@pytest.mark.parametrize("game", GAMES)
def test_the_index_reads_alike_without_numpy(game: str) -> None:
    """The index file's arrays read without numpy are numpy's own, value for value."""
    import numpy as np

    from battlejudge.apps.guide.index import file_name, read

    stored = read(game)
    with np.load(ROOT / "apps" / "guide" / "data" / file_name(game)) as expected:
        assert set(stored) == set(expected.files)
        for key in expected.files:
            assert stored[key].tolist() == expected[key].ravel().tolist(), key
            assert np.array_equal(stored[key].numpy(), expected[key]), key


def test_an_unreadable_index_is_rebuilt(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from battlejudge.apps.guide import index

    bad = tmp_path / "battleline.index.npz"
    bad.write_bytes(b"PK not a zip")
    with pytest.raises(ValueError, match=r"not a \.npy"):
        index.parse_npy(b"\x00" * 20, "x.npy")
    monkeypatch.setattr(index, "file_name", lambda _game: str(bad))  # an absolute path
    assert index.read("battleline") == {}
    retriever = Guide(load("battleline"), embedder=None).retriever
    assert not retriever.from_index  # built here with bm25s instead
    assert retriever.rank("who goes first?").ranking[0].section == (
        load("battleline").sections.index(load("battleline").section("Turn"))
    )


@pytest.mark.parametrize("game", GAMES)
def test_shipped_index_is_up_to_date(game: str) -> None:
    """Every part of data/<game>.index.npz matches what the data and model build: otherwise
    `guide ask` rebuilds it at each start (regenerate with python -m
    battlejudge.apps.guide.reindex apps/guide/data)."""
    assert guide(game).retriever.from_index
    assert keyword_guide(game).retriever.from_index


def test_c_and_python_stemmers_agree_on_every_reference_word() -> None:
    """snowballstemmer uses PyStemmer's C engine when it is installed (the guide extra) and its
    own pure-Python one otherwise: both must give every word of the references and questions the
    same stem, or the shipped index would be stale (and rebuilt at each start) on one of them."""
    stemmer_c = pytest.importorskip("Stemmer").Stemmer("english")
    from snowballstemmer.english_stemmer import EnglishStemmer  # type: ignore[import-untyped]

    stemmer_py = EnglishStemmer()
    words: set[str] = set()
    for game in GAMES:
        reference = load(game)
        texts = [p for s in reference.sections for p in s.passages]
        texts += [q for f in reference.faqs for q in f.questions]
        words.update(w for t in texts for w in plain(t).split())
    assert len(words) > 1000
    assert [w for w in sorted(words) if stemmer_c.stemWord(w) != stemmer_py.stemWord(w)] == []


@pytest.mark.parametrize("game", ("battleline", "force-duel"))
def test_index_ranks_like_a_fresh_build(game: str) -> None:
    """The shipped index and one built here with bm25s rank every question alike, scores
    included; a stale index (a changed fingerprint) is ignored, not trusted."""
    import numpy as np

    from battlejudge.apps.guide.index import read
    from battlejudge.apps.guide.retrieve import Retriever

    reference = load(game)
    shipped = guide(game).retriever
    built = Retriever(reference, shipped.analyzer, shipped.embedder, stored={})
    assert not built.from_index
    for case in load_cases(EVAL / "fresh2.toml"):
        if case.game == game:
            a, b = shipped.rank(case.question), built.rank(case.question)
            assert [r.section for r in a.ranking] == [r.section for r in b.ranking]
            assert a.confidence == pytest.approx(b.confidence, abs=1e-5)
    stale = dict(read(game))
    for key in ("lexical_fingerprint", "vector_fingerprint"):
        stale[key] = np.array([f"{stale[key].tolist()[0]}-old"])
    # would rank nothing if trusted
    stale["passages_data"] = np.zeros_like(stale["passages_data"].numpy())
    rebuilt = Retriever(reference, shipped.analyzer, shipped.embedder, stored=stale)
    assert not rebuilt.from_index
    question = "how many cards can i hold"
    assert [r.section for r in rebuilt.rank(question).ranking] == [
        r.section for r in shipped.rank(question).ranking
    ]


def test_disabled_embeddings_fall_back_to_keywords(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BATTLEJUDGE_GUIDE_EMBEDDINGS", "0")
    shared_embedder.cache_clear()
    try:
        assert shared_embedder() is None
        assert Guide.for_game("battleline").ask("Who plays first?").section == "Turn"
    finally:
        monkeypatch.delenv("BATTLEJUDGE_GUIDE_EMBEDDINGS")
        shared_embedder.cache_clear()


# --- the questions players ask (data/<game>.toml) ---------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_every_section_has_questions(game: str) -> None:
    ref = load(game)
    asked = {f.section for f in ref.faqs}
    assert [s.name for s in ref.sections if s.name not in asked] == []


@pytest.mark.parametrize("game", GAMES)
def test_every_quote_is_one_sentence_of_its_section(game: str) -> None:
    ref = load(game)
    for faq in ref.faqs:
        if faq.quote is not None:
            section = ref.section(faq.section)
            found = [s for p in section.passages for s in sentences(p) if faq.quote in s]
            assert len(found) == 1, faq


def test_malformed_questions_are_rejected() -> None:
    ref = load("battleline")
    with pytest.raises(ValueError, match="unknown section 'Nope'"):
        with_faqs(ref, '[[faq]]\nsection = "Nope"\nquestions = ["x?"]\n')
    with pytest.raises(ValueError, match="no questions"):
        with_faqs(ref, '[[faq]]\nsection = "Fog"\nquestions = []\n')
    with pytest.raises(ValueError, match="matches no sentence of 'Fog'"):
        with_faqs(ref, '[[faq]]\nsection = "Fog"\nquote = "zebra"\nquestions = ["x?"]\n')


# --- references -------------------------------------------------------------------------------


def test_battleline_sections() -> None:
    names = [s.name for s in load("battleline").sections if s.kind == "rules"]
    for required in (
        "Components",
        "Preparation",
        "Objective",
        "Turn",
        "Troop Cards",
        "Formations",
        "Flags",
        "Tactics Cards",
        "Game End",
        "Advanced Rule",
    ):
        assert required in names


@pytest.mark.parametrize(
    ("game", "count"),
    [("battleline", 17), ("nine-circles", 17), ("battleplan", 7), ("lines-of-battle", 6)],
)
def test_rulings_are_marked_and_numbered(game: str, count: int) -> None:
    rulings = load(game).rulings
    numbers = [int(m.group(1)) for r in rulings if (m := re.match(r"Ruling (\d+):", r.name))]
    assert numbers == list(range(1, count + 1))
    assert all(r.group == "Rulings" for r in rulings)


def test_force_duel_points_to_the_card_set_file() -> None:
    ref = load("force-duel")
    assert [r.name for r in ref.rulings] == ["Ruling 1: The card-set file"]
    assert "card-set file" in ref.section("Ruling 1: The card-set file").text
    gaps = ref.section("What the Rules Leave Open").text
    assert "will not guess" in gaps
    answer = guide("force-duel").ask("What is the power of each battle card?")
    assert answer.section == "What the Rules Leave Open"


def test_nine_circles_names_ruling() -> None:
    text = load("nine-circles").section("Ruling: Same game as Battle Line").text
    for name in ("Beelzebub", "Shapeshifter", "3-headed monkey", "Mano a Mano!", "Day off"):
        assert name in text


def test_nine_circles_answers_use_its_own_names() -> None:
    """Issue 20: Nine Circles is answered with its own names (circles, Beelzebub...), never
    Battle Line's, except where its rules text names no card (Mud, Scout, Redeploy)."""
    battle_line_words = re.compile(
        r"\b(Flags?|Alexander|Darius|Companion Cavalry|Shield Bearers|Fog|Deserter|Traitor)\b"
    )
    reference = load("nine-circles")
    answers = [f.answer for f in reference.faqs if f.answer]
    for walkthrough in reference.walkthroughs.values():
        answers.extend(walkthrough.steps)
    assert [a for a in answers if battle_line_words.search(a)] == []
    said = guide("nine-circles").ask("who wins a tied circle?").answer
    assert "circle" in said and not battle_line_words.search(said)


@pytest.mark.parametrize("game", ["battle-line", "Nine Circles", "nine_circles", "BattlePlan"])
def test_game_names_are_lenient(game: str) -> None:
    assert game_id(game) in GAMES


def test_unknown_game() -> None:
    with pytest.raises(UnknownGameError, match="'chess'") as info:
        Guide.for_game("chess")
    assert isinstance(info.value, ValueError)


def test_malformed_reference_is_rejected() -> None:
    with pytest.raises(ValueError, match="front matter"):
        parse("# No front matter\n", "battleline")
    with pytest.raises(ValueError, match="walkthrough"):
        parse('+++\ntitle = "X"\n+++\n## Rules\n\nText.\n', "x")


@pytest.mark.skipif(not SEEDS.is_dir(), reason="shared/seeds is not beside the checkout")
@pytest.mark.parametrize("game", GAMES)
def test_reference_copies_no_seed_sentence(game: str) -> None:
    """The references are the project's own words: no 8-word run is taken from a seed.

    The guide's fixed phrases the issue requires verbatim are left out of the comparison.
    """
    n = 8

    def words(text: str) -> list[str]:
        return re.findall(r"[a-z0-9]+", text.lower())

    seeds = [w for f in sorted(SEEDS.glob("0*.txt")) for w in [words(f.read_text())]]
    seen = {tuple(s[i : i + n]) for s in seeds for i in range(len(s) - n + 1)}
    source = (Path(__file__).resolve().parents[1] / "apps/guide/data" / f"{game}.md").read_text()
    for phrase in (SETUP_FOLLOW_UP, TURN_FOLLOW_UP, FALLBACK):
        source = source.replace(phrase, "")
    ours = words(source)
    copied = [" ".join(ours[i : i + n]) for i in range(len(ours) - n + 1)]
    assert [c for c in copied if tuple(c.split()) in seen] == []


# --- cards ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CARDS))
@pytest.mark.parametrize("game", ["battleline", "nine-circles"])
def test_card_lookup_under_both_themes(game: str, name: str) -> None:
    want = CARDS[name][0 if game == "battleline" else 1]
    answer = guide(game).card(name)
    assert answer.section == want
    assert answer.direct is not None
    assert answer.answer.startswith(f"{answer.direct} According to the '{want}' section, ")
    # A card question in words finds the same entry.
    assert guide(game).ask(f"What does {name} do?").section == want


@pytest.mark.parametrize("game", ["battleline", "nine-circles"])
def test_every_card_entry_names_both_themes(game: str) -> None:
    cards = load(game).cards
    assert len(cards) == 9  # ten cards; the two Leaders share one entry
    for card in cards:
        for name, entries in CARDS.items():
            if card.name in entries:
                assert any(n.lower() == name.lower() for n in card.names)


@pytest.mark.parametrize(
    ("game", "name", "section"),
    [
        ("battleline", "mano a mano", "Fog"),
        ("battleline", "LEADERS", "Leader"),
        ("battleline", "companion", "Companion Cavalry"),
        ("battleplan", "Diagonal Move", "Diagonal Move"),
        ("battleplan", "defend", "Defend"),
        ("force-duel", "Two-Card Limit", "Two-Card Limit"),
    ],
)
def test_card_names_are_lenient(game: str, name: str, section: str) -> None:
    assert guide(game).card(name).section == section


def test_unknown_card() -> None:
    with pytest.raises(UnknownCardError, match=r"'Fgo'.*did you mean 'Fog'"):
        guide("battleline").card("Fgo")
    with pytest.raises(UnknownCardError, match="has no cards"):
        guide("lines-of-battle").card("Archers")


# --- walkthroughs -----------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_walkthroughs(game: str) -> None:
    g = guide(game)
    kinds: tuple[tuple[WalkthroughKind, str], ...] = (
        ("setup", SETUP_FOLLOW_UP),
        ("turn", TURN_FOLLOW_UP),
    )
    for kind, follow_up in kinds:
        answer = g.walkthrough(kind)
        lines = answer.answer.splitlines()
        steps = [line for line in lines if re.match(r"\d+\. ", line)]
        assert len(steps) >= 3
        assert lines[-1] == follow_up
        assert answer.section is not None


def test_battleline_walkthroughs_follow_the_seed() -> None:
    setup = guide("battleline").walkthrough("setup").answer.splitlines()
    assert [line[:2] for line in setup[:4]] == ["1.", "2.", "3.", "4."]
    assert "nine Flags" in setup[0] and "seven" in setup[1]
    assert "Troop cards" in setup[2] and "Tactics cards" in setup[3]
    assert setup[-1] == SETUP_FOLLOW_UP and len(setup) == 6
    turn = guide("battleline").walkthrough("turn").answer.splitlines()
    assert "did not deal" in turn[0] and "three" in turn[1] and "seven" in turn[2]
    assert "formation" in turn[3]
    assert turn[-1] == TURN_FOLLOW_UP and len(turn) == 6


def test_setup_question_gets_the_walkthrough() -> None:
    answer = guide("battleline").ask("How do I set up the game?")
    assert answer.answer.endswith(SETUP_FOLLOW_UP)
    assert guide("battleline").ask("What do I do on my turn?").answer.endswith(TURN_FOLLOW_UP)


def test_a_question_for_one_fact_is_not_a_walkthrough() -> None:
    """ "Who takes the first turn?" asks one fact: the rules answer it, not the walkthrough
    (fresh: Nine Circles got its first-turn walkthrough at confidence 1.0, a confident wrong
    answer, where the ruling on dealing and starting answers)."""
    for game in ("battleline", "nine-circles"):
        answer = guide(game).ask("who takes the first turn?")
        assert not answer.answer.endswith(TURN_FOLLOW_UP), answer
        assert answer.score < HIGH or answer.section in ("Turn", "Ruling: Same game as Battle Line")


def test_words_of_a_known_name_are_not_foreign() -> None:
    """A card's other-theme name or a synonym phrase ("Day off", "ran out") is rules vocabulary
    even though its words alone ("day", "ran") are not: it must not lower the confidence."""
    retriever = guide("battleline").retriever
    assert retriever.novelty("can day off remove a leader") == (0.0, 0.0)
    assert retriever.novelty("the troop deck ran out, now what") == (0.0, 0.0)
    assert retriever.novelty("can I sleeve the day off card")[0] > 0.0


@pytest.mark.parametrize(
    ("game", "shorthand", "section"),
    [
        ("battleplan", "can i kill two pieces w/ one atk", "Attack"),
        ("nine-circles", "does the loser get any pts at all", "Scoring Multiple Games"),
        ("lines-of-battle", "how does a frontal atk work", "Combat Phase"),
        ("battleline", "if my oppo has no cards yet at a flag can i claim?", "Flags"),
        # fresh4 (eighth round): "hav" and "nxt" were foreign words, and both fell back
        ("force-duel", "how many force cards does each player hav", "Components"),
        ("nine-circles", "does the winner start the nxt game", "Scoring Multiple Games"),
    ],
)
def test_chat_shorthand_reads_as_the_words_it_stands_for(
    game: str, shorthand: str, section: str
) -> None:
    """Players write "atk", "w/", "pts", "oppo": the guide answers them like the written-out
    question (each of these fell back, under 0.4, before the shorthand was expanded)."""
    from battlejudge.apps.guide.text import expand_shorthand

    written = expand_shorthand(shorthand)
    assert written != shorthand
    short, full = guide(game).ask(shorthand), guide(game).ask(written)
    assert short.section == full.section == section, (short, full)
    assert short.score == pytest.approx(full.score)
    assert short.score >= THRESHOLD


def test_a_card_named_in_a_rules_question_is_not_its_entry() -> None:
    """A question that names a card but asks more than what the card does is ranked like any
    rules question (fresh2: 'how many attack cards do I get' got the Attack entry at 1.0)."""
    answer = guide("battleplan").ask("how many attack cards do I get")
    assert answer.section == "Components", answer
    assert guide("battleplan").ask("what does the attack card do").section == "Attack"
    assert guide("battleline").ask("explain Fog").section == "Fog"


@pytest.mark.parametrize(
    ("game", "question", "answers"),
    [
        ("battleline", "can traitor take his companion cavalry", ("Traitor", "Ruling 9")),
        ("battleline", "his shield bearers, can i deserter them", ("Deserter", "Ruling 9")),
        ("nine-circles", "day off his 3-headed monkey", ("Day off", "Ruling 9")),
    ],
)
def test_a_card_played_on_another_card_answers_not_its_target(
    game: str, question: str, answers: tuple[str, ...]
) -> None:
    """Named beside an acting card (Traitor, Deserter, Redeploy...), a card is the target: its
    entry never says what the acting card may do to it (Companion Cavalry's entry won these)."""
    answer = guide(game).ask(question)
    assert answer.section is not None and answer.section.startswith(answers), answer


def test_acting_cards_must_be_cards() -> None:
    """A front matter naming an acting card the game does not have stops with one line."""
    source = (EVAL.parents[2] / "apps/guide/data/battleline.md").read_text()
    broken = source.replace('acting_cards = ["Traitor"', 'acting_cards = ["Spy"', 1)
    assert broken != source
    with pytest.raises(ValueError, match="acting_cards \\['Spy'\\] are not cards"):
        parse(broken, "battleline")


def test_out_of_scope_examples_are_our_own() -> None:
    """The shared out-of-scope examples and each game's own load, and none is a question of the
    evaluation set (they must teach the guide what to decline, not memorise the answers)."""
    from battlejudge.apps.guide.reference import out_of_scope_questions

    examples = {plain(q) for q in out_of_scope_questions()}
    assert len(examples) >= 50
    own = {game: load(game).out_of_scope for game in GAMES}
    assert own["lines-of-battle"] and own["force-duel"] and own["battleplan"]
    examples |= {plain(q) for questions in own.values() for q in questions}
    asked = {
        plain(c.question) for p in discover_parts(EVAL) for c in load_cases(EVAL / f"{p}.toml")
    }
    assert examples & asked == set()


@pytest.mark.skipif(not EMBEDDINGS, reason="the out-of-scope gap needs the sentence vectors")
def test_out_of_scope_gap_is_signed() -> None:
    """The confidence sees how much nearer a question is to an out-of-scope example than to the
    winner's nearest way of asking, and also how much farther: a way of asking word for word is
    far nearer the rules (negative gap), an opinion question nearer the examples (positive)."""
    battleline = guide("battleline")
    assert battleline.search("How many people can play?").features.off_topic < 0.0
    assert battleline.search("is it smart to attack early").features.off_topic > 0.0


# --- session ----------------------------------------------------------------------------------


def test_session() -> None:
    session = Session(guide("battleline"))
    assert "Battle Line" in session.greeting() and "quit" in session.greeting()
    assert session.respond("setup").answer.answer.endswith(SETUP_FOLLOW_UP)
    assert "turn" in session.respond("no").answer.answer
    assert session.respond("turn").answer.answer.endswith(TURN_FOLLOW_UP)
    assert "what would you like to know" in session.respond("yes").answer.answer
    assert session.respond("yes").answer.answer == FALLBACK  # no pending follow-up question
    assert session.respond("card Day off").answer.section == "Deserter"
    assert "Sorry" in session.respond("card Nope").answer.answer
    assert "card NAME" in session.respond("help").answer.answer
    reply = session.respond("What is the capital of France?")
    assert reply.answer.answer == FALLBACK and not reply.done
    assert session.respond("quit").done


# --- command line -----------------------------------------------------------------------------


def run(*args: str, stdin: str | None = None) -> Any:
    return CliRunner().invoke(cli, ["guide", *args], input=stdin)


def test_cli_ask() -> None:
    result = run("battleline", "ask", "Who plays first?")
    assert result.exit_code == 0
    assert "According to the 'Turn' section, " in result.stdout
    assert "not the dealer" in result.stdout


def test_cli_ask_words_without_quotes() -> None:
    result = run("nine-circles", "ask", "What", "does", "Shapeshifter", "do?")
    assert result.exit_code == 0 and "'Shapeshifter' section" in result.stdout


def test_cli_json() -> None:
    result = run("battleline", "ask", "What is a Phalanx?", "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert set(data) == {"answer", "direct", "section", "score"}
    assert data["answer"].startswith(data["direct"]) and "A Phalanx is" in data["direct"]
    assert data["section"] == "Formations" and 0 < data["score"] <= 1
    result = run("battleline", "--json", "ask", "Can I trade cards with my opponent?")
    data = json.loads(result.stdout)
    assert (data["answer"], data["section"]) == (FALLBACK, None)
    assert data["score"] < THRESHOLD


def test_cli_setup_turn_card() -> None:
    result = run("battleline", "setup")
    assert result.exit_code == 0 and result.stdout.startswith("1. ")
    assert result.stdout.rstrip().endswith(SETUP_FOLLOW_UP)
    result = run("lines-of-battle", "turn")
    assert result.exit_code == 0 and result.stdout.rstrip().endswith(TURN_FOLLOW_UP)
    result = run("nine-circles", "card", "Traitor", "--json")
    assert json.loads(result.stdout)["section"] == "We have Cookies!"
    result = run("battleline", "card", "We", "have", "Cookies!")
    assert result.exit_code == 0 and "'Traitor' section" in result.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("chess",), "'chess'"),
        (("chess", "setup"), "'chess'"),
        (("battleline", "card", "Dragon"), "'Dragon'"),
        (("lines-of-battle", "card", "Archers"), "'Archers'"),
        (("battleline", "dance"), "'dance'"),
        (("battleline", "card"), "card name"),
        (("battleline", "ask"), "question"),
        (("battleline", "setup", "now"), "'now'"),
    ],
)
def test_cli_bad_input(args: tuple[str, ...], needle: str) -> None:
    result = run(*args)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and needle in lines[0]
    assert "Traceback" not in result.output


def test_cli_interactive_session() -> None:
    stdin = "setup\nno\nWhat does Fog do?\ncard Beelzebub\nWhat is the capital of France?\nquit\n"
    result = run("battleline", stdin=stdin)
    assert result.exit_code == 0
    out = result.stdout
    assert out.startswith("Hello! I am your guide to Battle Line")
    assert SETUP_FOLLOW_UP in out
    assert "'Fog' section" in out and "'Leader' section" in out
    assert FALLBACK in out
    assert out.rstrip().endswith("Goodbye, and enjoy your game of Battle Line!")


def test_cli_interactive_ends_at_end_of_input() -> None:
    result = run("force-duel", stdin="turn\n")
    assert result.exit_code == 0
    assert TURN_FOLLOW_UP in result.stdout and "Traceback" not in result.output


def test_cli_interactive_json() -> None:
    result = run("battleplan", "--json", stdin="How do I win?\nquit\n")
    assert result.exit_code == 0
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    assert replies[0]["section"] is None and "BattlePlan" in replies[0]["answer"]
    assert replies[1]["section"] in {"Objective", "Flags and Winning"}
    assert replies[-1]["answer"].startswith("Goodbye")


def test_title_as_setting_is_left_out_of_the_sentence_vector() -> None:
    """Every question a game's guide gets is in that game: "in Nine Circles" says nothing about
    which section answers, and is left out of the vector (as keyword search drops the title).
    Where the game is what is asked about ("what is Force Duel?") the title stays."""
    nine = guide("nine-circles").retriever
    assert nine.canonical("who plays first in Nine Circles?").split() == [
        "who",
        "plays",
        "first",
        "?",
    ]
    assert "nine-circles" not in nine.canonical("who deals in nine-circles")
    # The title naming what the question is about ("the nine circles rules", "the nine
    # circles deck") is its setting too; the nine circles on the table stay.
    assert nine.canonical("what comes in the nine circles deck").split() == [
        "what",
        "comes",
        "in",
        "the",
        "deck",
    ]
    assert nine.canonical("where do the nine circles go") == "where do the nine circles go"
    assert "9 circles" not in nine.canonical("who starts in 9 circles")
    duel = guide("force-duel").retriever
    assert duel.canonical("what is Force Duel?") == "what is Force Duel?"
    assert duel.canonical("the point of force duel") == "the point of force duel"
    if EMBEDDINGS:
        # Who starts is settled by the ruling that Battle Line's rules apply (its own words:
        # "the player who did not deal goes first"); with the title in the vector, the ways of
        # asking that name the game pulled the bare question to Turns.
        for q in ("who plays first?", "who plays first in nine circles?"):
            assert guide("nine-circles").ask(q).section == "Ruling: Same game as Battle Line"


@pytest.mark.parametrize("game", GAMES)
def test_ways_of_asking_drop_the_title_as_questions_do(game: str) -> None:
    """A way of asking that names the game ("who deals in nine circles") holds no keyword from
    the title: the question side drops it, so on the other side it only made "circle" (a Flag)
    or "force" (a force card) a keyword of facts that have nothing to do with them."""
    g = guide(game)
    title = plain(g.reference.title)
    named = 0
    for k, faq in enumerate(g.reference.faqs):
        for j, q in enumerate(faq.questions):
            written = plain(expand_shorthand(q))
            if title in written:
                named += 1
                without = g.analyzer.terms(written.replace(title, " "))
                assert g.retriever.question_terms[k][j] == frozenset(without), q
    assert named, f"no way of asking of {game} names the game"


def test_nine_circles_borrows_battle_lines_ways_of_asking() -> None:
    """Nine Circles is Battle Line re-themed: where both references say the same rule in the
    same section (the cards, Formations, Tactics Cards), every way of asking written for Battle
    Line is one of Nine Circles' too, under its own section (nine-circles.toml, [borrow])."""
    nine = load("nine-circles")
    fog = {q for f in load("battleline").faqs if f.section == "Fog" for q in f.questions}
    assert fog <= {q for f in nine.faqs if f.section == "Mano a Mano!" for q in f.questions}
    # Battle Line's Flags also holds the tie rule, which Nine Circles gives under Formations:
    # not borrowed, so its ways of asking do not pull tie questions to Claiming Circles.
    flags = {f.questions for f in load("battleline").faqs if f.section == "Flags"}
    assert not flags & {f.questions for f in nine.faqs}
    # Borrowed ways of asking bring no direct answer in Battle Line's words.
    assert not any(f.answer and "Flag" in f.answer for f in nine.faqs)


def test_borrowing_from_an_unknown_section_is_rejected() -> None:
    ref = load("nine-circles")
    source = '[borrow]\ngame = "battleline"\n[borrow.sections]\n"Mud" = "Swamp"\n'
    with pytest.raises(ValueError, match="unknown battleline section 'Swamp'"):
        with_faqs(ref, source)
    source = '[borrow]\ngame = "battleline"\n[borrow.sections]\n"Swamp" = "Mud"\n'
    with pytest.raises(ValueError, match="borrow names unknown section 'Swamp'"):
        with_faqs(ref, source)
    with pytest.raises(ValueError, match="'borrow' must be a table"):
        with_faqs(ref, 'borrow = "battleline"\n')


def test_a_cards_short_name_is_the_card_to_the_sentence_vectors() -> None:
    """Players shorten card names ("mephisto", "shifter", "monkey"): these are the card's names,
    so the sentence vectors read them as the card, as they read Darius as a Leader. A short name
    inside the full name is left alone, and a card's own name stays as written."""
    nine = guide("nine-circles").retriever
    assert nine.canonical("what does mephisto count as") == (
        "what does Beelzebub and Mephistopheles count as"
    )
    assert nine.canonical("the 3-headed monkey") == "the 3-headed monkey"
    assert nine.canonical("a monkey and a shifter") == "a 3-headed monkey and a Shapeshifter"
    # The full name written without its "!" is the card, not "mano" and two more words.
    assert nine.canonical("what does mano a mano do") == "what does Mano a Mano! do"
    assert guide("battleline").retriever.canonical("under fog") == "under fog"
    assert guide("nine-circles").card("mephisto").section == "Beelzebub and Mephistopheles"
    # Battle Line accepts Nine Circles' names, short ones included.
    assert guide("battleline").card("monkey").section == "Shield Bearers"
    assert guide("battleline").retriever.canonical("is mano just fog") == "is Fog just fog"
    if EMBEDDINGS:
        # fresh5: the short name alone had gone to the claim-proof ruling ("count with their
        # best choice"), the vectors not knowing Mephisto is the Leader.
        answer = guide("nine-circles").ask("what does mephisto count as")
        assert answer.section in ("Beelzebub and Mephistopheles", "Ruling 2: Wild cards")
