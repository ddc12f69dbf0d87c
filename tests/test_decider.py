"""The exact fast claim decider (``solver/battleline/decider.py``) against the brute-force
oracle and the SAT path, on every kind of question: wild cards, Fog, Mud, Fog and Mud,
both sides complete (ties with ``completed_first``), near-empty pools.

Rules: Formations, Flags; docs/rulings.md 1, 2, 4-8. The oracle keeps its own evaluation.
"""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from battlejudge.solver import battleline as bl
from battlejudge.solver.battleline import decider, oracle
from battlejudge.solver.battleline.cards import TROOP_COUNT
from battlejudge.solver.errors import RuleError

from strategies import TROOPS, WILDS, any_questions, oracle_answer, questions

SETTINGS = settings()  # the loaded profile (tests/conftest.py): 150 examples, or thorough
FEWER = settings(max_examples=max(50, settings().max_examples // 3))


@SETTINGS
@given(any_questions())
def test_holds_agrees_with_the_oracle_and_the_sat_path(q: bl.ClaimQuestion) -> None:
    expected = oracle_answer(q).valid
    assert decider.holds(q) == expected
    assert bl.decide(q).valid == expected


@SETTINGS
@given(any_questions())
def test_decide_witness_beats_the_claim(q: bl.ClaimQuestion) -> None:
    """An invalid decision's witness is legal (unseen troops completing the opponent's
    side) and beats the claim, or ties it when the claimant completed last, by the
    oracle's own evaluation (docs/rulings.md 5, 7, 16)."""
    d = bl.decide(q)
    assert d.valid == oracle_answer(q).valid
    w = d.witness
    if d.valid:
        assert w is None and d.added is None
        return
    assert w is not None
    assert not {c.code for c in w.added} & (q.face_up | q.theirs_troops)
    assert all(c.is_troop for c in w.added)
    done = (*q.theirs, *w.added)
    assert len(done) == q.size
    theirs, mine = oracle.strength(done, q.fog), oracle.strength(q.mine, q.fog)
    assert theirs > mine or (theirs == mine and q.completed_first == "theirs")
    assert w.formation.strength == theirs


def test_question_from_codes_is_the_question_from_strings() -> None:
    q = bl.ClaimQuestion("R4 R5 R3", "B8 alexander", "B7 B10", mud=False)
    assert bl.ClaimQuestion.from_codes([3, 4, 2], [47, 60], [46, 49]) == q
    assert q.codes == ((3, 4, 2), (47, 60))
    with pytest.raises(ValueError, match="card code 64 in theirs"):
        bl.ClaimQuestion.from_codes([3, 4, 2], [64])
    with pytest.raises(RuleError, match="R4 is given in theirs and in mine"):
        bl.ClaimQuestion.from_codes([3, 4, 2], [3])


@SETTINGS
@given(any_questions())
def test_pool_is_every_troop_not_face_up_and_not_theirs(q: bl.ClaimQuestion) -> None:
    unseen = set(range(60)) - q.face_up - q.theirs_troops
    assert q.pool == decider.pool_from(unseen)


@SETTINGS
@given(any_questions())
def test_the_sat_formula_agrees_with_the_oracle(q: bl.ClaimQuestion) -> None:
    """The encoder's formula (the certificate path) is satisfiable exactly when some
    completion beats the claim: checked on its own, now that decide no longer asks it."""
    from battlejudge.solver.battleline.backend import SolverCache
    from battlejudge.solver.battleline.claims import _setup

    _, key, lits = _setup(q)
    cache = SolverCache()
    try:
        assert cache.solve(key, lits).sat == (not oracle_answer(q).valid)
    finally:
        cache.clear()


@st.composite
def near_empty(draw: st.DrawFn) -> bl.ClaimQuestion:
    """A question with at most six troops left unseen: the pool may be too small to
    complete the opponent's side (docs/rulings.md 6), or hold just the one beating card."""
    q = draw(questions())
    at_flag = q.mine_troops | q.theirs_troops
    rest = [c for c in TROOPS if c.code not in at_flag]
    unseen = draw(st.lists(st.sampled_from(rest), max_size=6, unique=True))
    seen = [c for c in rest if c not in unseen]
    return bl.ClaimQuestion(q.mine, q.theirs, seen, q.mud, q.fog, q.completed_first)


@SETTINGS
@given(near_empty())
def test_near_empty_pools(q: bl.ClaimQuestion) -> None:
    assert decider.holds(q) == oracle_answer(q).valid


@st.composite
def tied_sides(draw: st.DrawFn) -> tuple[bl.ClaimQuestion, bool]:
    """Both sides complete with the same values, colors permuted (so the same category
    and sum: a tie), sometimes with a wild card standing in for one of the opponent's
    troops; returns the question without ``completed_first`` and whether it ties."""
    mud, fog = draw(st.booleans()), draw(st.booleans())
    size = 4 if mud else 3
    mine = draw(st.lists(st.sampled_from(TROOPS), min_size=size, max_size=size, unique=True))
    colors = draw(st.permutations(range(6)))
    theirs: list[str | bl.Card] = [bl.Card(colors[c.code // 10] * 10 + c.code % 10) for c in mine]
    assume(not set(theirs) & set(mine))
    if draw(st.booleans()):
        theirs[draw(st.integers(0, size - 1))] = draw(st.sampled_from(WILDS))
    taken = {c.code for c in mine} | {c.code for c in theirs if isinstance(c, bl.Card)}
    rest = [c for c in TROOPS if c.code not in taken]
    seen = draw(st.lists(st.sampled_from(rest), max_size=20, unique=True))
    q = bl.ClaimQuestion(mine, theirs, seen, mud=mud, fog=fog)
    tie = oracle.strength(q.mine, fog) == oracle.strength(q.theirs, fog)
    return q, tie


@SETTINGS
@given(tied_sides(), st.sampled_from(["mine", "theirs"]))
def test_both_sides_complete_ties_go_to_who_completed_first(
    case: tuple[bl.ClaimQuestion, bool], first: str
) -> None:
    q, tie = case
    q = bl.ClaimQuestion(q.mine, q.theirs, q.seen, q.mud, q.fog, completed_first=first)
    expected = oracle_answer(q).valid
    assert decider.holds(q) == expected
    if tie:
        assert expected == (first == "mine")


@FEWER
@given(tied_sides())
def test_a_tie_needs_completed_first(case: tuple[bl.ClaimQuestion, bool]) -> None:
    q, tie = case
    if tie:
        with pytest.raises(RuleError, match="completed_first"):
            decider.holds(q)
        with pytest.raises(RuleError, match="completed_first"):
            bl.decide(q)
    else:
        assert decider.holds(q) == oracle_answer(q).valid


def _codes(cards: list[bl.Card]) -> list[int]:
    return [c.code for c in cards]


@st.composite
def sides_and_pools(draw: st.DrawFn) -> tuple[list[bl.Card], list[bl.Card], bool, bool]:
    """An incomplete side (troops and wild cards) and a small pool to complete it from."""
    mud, fog = draw(st.booleans()), draw(st.integers(0, 3)) == 0
    size = 4 if mud else 3
    wilds = [bl.Card.parse(w) for w in draw(st.lists(st.sampled_from(WILDS), unique=True))]
    if {"alexander", "darius"} <= {str(w) for w in wilds}:
        wilds = [w for w in wilds if str(w) != "darius"]
    wilds = wilds[: size - 1]
    n_troops = draw(st.integers(0, size - 1 - len(wilds)))
    side = [*wilds, *draw(st.permutations(TROOPS))[:n_troops]]
    rest = [c for c in TROOPS if c not in side]
    pool = draw(st.lists(st.sampled_from(rest), max_size=12, unique=True))
    return side, pool, mud, fog


@SETTINGS
@given(sides_and_pools())
def test_best_key_is_the_best_completion(
    case: tuple[list[bl.Card], list[bl.Card], bool, bool],
) -> None:
    side, pool, mud, fog = case
    size = 4 if mud else 3
    best = max(
        (oracle.strength((*side, *extra), fog) for extra in combinations(pool, size - len(side))),
        default=None,
    )
    got = decider.best_key(_codes(side), decider.pool_from(_codes(pool)), size, fog)
    if best is None:
        assert got == decider.NO_FORMATION
    else:
        assert divmod(got, decider.RANK_SCALE) == best


@SETTINGS
@given(sides_and_pools())
def test_best_completion_reaches_the_best_key_from_the_pool(
    case: tuple[list[bl.Card], list[bl.Card], bool, bool],
) -> None:
    """The witness path: the troops ``best_completion`` adds come from the pool, complete
    the side, and reach the best key, evaluated by the oracle's own rules code."""
    side, pool, mud, fog = case
    size = 4 if mud else 3
    pool_codes = decider.pool_from(_codes(pool))
    key, added = decider.best_completion(_codes(side), pool_codes, size, fog)
    assert key == decider.best_key(_codes(side), pool_codes, size, fog)
    if key == decider.NO_FORMATION:
        assert added == ()
        return
    assert set(added) <= set(_codes(pool))
    assert len(added) == size - len(side)
    done = (*side, *(bl.Card(t) for t in added))
    assert divmod(key, decider.RANK_SCALE) == oracle.strength(done, fog)


def test_runs_are_consecutive_values_without_wrap_around() -> None:
    # docs/rulings.md 1: 9-10-1 is not consecutive; Mud makes runs of four (docs/rulings.md 8).
    for n in (3, 4):
        runs = decider.RUNS[n]
        assert [list(r.values) for r in runs] == [
            list(range(s, s + n)) for s in range(11 - n, 0, -1)
        ]
        for r in runs:
            assert r.total == sum(r.values)
            assert r.mask == sum(1 << (v - 1) for v in r.values)


def test_holds_examples() -> None:
    # Against the Wedge 3-4-5, B8 needs a Wedge: B6 B7, B7 B9 or B9 B10; B7 and B10 face
    # up rule out all three.
    assert decider.holds(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10"))
    assert not decider.holds(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7"))
    # Too few troops left to complete the opponent's side: the claim holds (docs/rulings.md 6).
    taken = {"R1", "R2", "R3", "G9"}
    seen = [str(c) for c in TROOPS if str(c) not in taken | {"G10"}]
    assert decider.holds(bl.ClaimQuestion(mine="R1 R2 R3", theirs="G9", seen=seen))


_ANY_CARD = st.integers(0, 63).map(lambda c: bl.CARDS[c])


@SETTINGS
@given(
    st.lists(_ANY_CARD, max_size=5),
    st.lists(_ANY_CARD, max_size=5),
    st.lists(_ANY_CARD, max_size=8),
    st.booleans(),
    st.sampled_from([None, "mine", "theirs"]),
)
def test_quick_checks_accept_exactly_what_the_full_checks_accept(
    mine: list[bl.Card], theirs: list[bl.Card], seen: list[bl.Card], mud: bool, first: str | None
) -> None:
    """The question's cheap checks on the common case let nothing through that the
    full rules checks (docs/rulings.md 3-5) refuse."""
    from battlejudge.solver.battleline.question import _validate

    try:
        _validate(tuple(mine), tuple(theirs), tuple(seen), mud, first)
        expected = None
    except RuleError as e:
        expected = str(e)
    try:
        bl.ClaimQuestion(mine, theirs, seen, mud=mud, completed_first=first)
        got = None
    except RuleError as e:
        got = str(e)
    assert got == expected


@SETTINGS
@given(any_questions(), st.integers(-6, 6), st.booleans(), st.integers(0, 4 * 64 + 40))
def test_best_key_with_a_floor_is_exact_above_it(
    q: bl.ClaimQuestion, delta: int, near: bool, anywhere: int
) -> None:
    """``floor`` only prunes: the key is the unpruned one whenever that is above the
    floor, and at most the floor otherwise (what ``claim_holds`` relies on). Floors are
    drawn near the answer, where pruning can go wrong, and anywhere."""
    theirs = [c.code for c in q.theirs]
    pool = q.pool
    full = decider.best_key(theirs, pool, q.size, q.fog)
    floor = full + delta if near else anywhere
    pruned = decider.best_key(theirs, pool, q.size, q.fog, floor)
    if full > floor:
        assert pruned == full
    else:
        assert pruned <= floor


@pytest.mark.parametrize(
    ("side", "pool", "mud"),
    [
        ("", "R10 B10 G10", False),
        ("", "R10 B10 G10 Y10 R1", True),
        ("alexander", "R10 B10 G3", False),
        ("alexander cavalry", "B8 R2", False),
    ],
)
def test_a_side_with_no_troop_yet_can_reach_a_phalanx(side: str, pool: str, mud: bool) -> None:
    """An empty side, or one of wild cards only, reaches a Phalanx when the pool holds
    no run and no color's three (Rules: Formations; docs/rulings.md 2): the best key is
    the best completion the oracle finds among every choice from the pool."""
    size = 4 if mud else 3
    mine = bl.parse_cards(side) if side else []
    troops = bl.parse_cards(pool)
    best = max(
        oracle.strength((*mine, *extra), False) for extra in combinations(troops, size - len(mine))
    )
    assert best[0] == decider.PHALANX
    got = decider.best_key(_codes(mine), decider.pool_from(_codes(troops)), size)
    assert divmod(got, decider.RANK_SCALE) == best


@given(st.lists(st.integers(0, 69), max_size=20))
def test_pool_without_takes_out_exactly_the_troops_named(codes: list[int]) -> None:
    """Troops named leave the pool, tactics (60 on) are ignored, nothing else changes."""
    left = decider.pool_without(decider.FULL_POOL, codes)
    kept = [t for t in range(TROOP_COUNT) if t not in codes]
    assert left == decider.pool_from(kept)
    assert decider.pool_size(left) == len(kept)
