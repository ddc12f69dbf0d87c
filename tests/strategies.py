"""Hypothesis strategies for Battle Line flag questions (shared by the test files)."""

from __future__ import annotations

from hypothesis import assume
from hypothesis import strategies as st

from battlejudge.solver import battleline as bl
from battlejudge.solver.battleline.backend import SolverCache

WILDS = ("alexander", "darius", "cavalry", "shield")
TROOPS = [bl.Card(t) for t in range(60)]
ORACLE_BUDGET = 60_000
"""Most hands the brute-force oracle may classify for one example (keeps tests fast)."""


def _near(cards: list[bl.Card]) -> list[bl.Card]:
    """Troops that matter to these cards: same color within 3 values, or same value."""
    out = []
    for t in TROOPS:
        for c in cards:
            if not c.is_troop:
                continue
            same_color = t.code // 10 == c.code // 10 and abs(t.code - c.code) <= 3
            same_value = t.code % 10 == c.code % 10
            if t != c and (same_color or same_value):
                out.append(t)
                break
    return out


@st.composite
def questions(draw: st.DrawFn, budget: int = ORACLE_BUDGET) -> bl.ClaimQuestion:
    """Random flag questions: wild cards on both sides, Mud, Fog, random and targeted
    seen sets, complete and incomplete opposing sides, every tie setting."""
    mud = draw(st.booleans())
    fog = draw(st.integers(0, 4)) == 0
    size = 4 if mud else 3
    order = list(draw(st.permutations(TROOPS)))
    shape = draw(st.sampled_from(["wedge", "wedge", "wedge", "phalanx", "random"]))
    if shape == "wedge":
        color = draw(st.integers(0, 5))
        start = draw(st.integers(1, 11 - size))
        head = [bl.Card(color * 10 + v - 1) for v in range(start, start + size)]
    elif shape == "phalanx":
        value = draw(st.integers(1, 10))
        colors = draw(st.permutations(range(6)))[:size]
        head = [bl.Card(c * 10 + value - 1) for c in colors]
    else:
        head = []
    order = head + [c for c in order if c not in head]
    wild_mine = draw(st.lists(st.sampled_from(WILDS), max_size=2, unique=True))[: size - 1]
    wild_theirs = [
        w
        for w in draw(st.lists(st.sampled_from(WILDS), max_size=2, unique=True))
        if w not in wild_mine
    ]
    leaders = {"alexander", "darius"}
    assume(len(leaders & set(wild_mine)) < 2 and len(leaders & set(wild_theirs)) < 2)
    mine_troops = order[: size - len(wild_mine)]
    rest = order[size - len(wild_mine) :]
    n_theirs = draw(st.integers(0, size))
    wt = wild_theirs[:n_theirs]
    theirs_troops = rest[: n_theirs - len(wt)]
    if draw(st.booleans()) and theirs_troops:
        # A promising opposing side: troops of one color close together.
        base = theirs_troops[0].code
        pals = [
            bl.Card(t)
            for t in range(60)
            if t // 10 == base // 10 and 0 < abs(t - base) <= 2 and bl.Card(t) not in mine_troops
        ]
        theirs_troops = (theirs_troops[:1] + pals)[: len(theirs_troops)]
    rest = [c for c in rest if c not in theirs_troops]
    near = [c for c in _near([*theirs_troops, *mine_troops]) if c in rest]
    seen = draw(st.lists(st.sampled_from(near), max_size=8, unique=True)) if near else []
    seen += [c for c in rest[: draw(st.integers(0, 24))] if c not in seen]
    complete = len(wt) + len(theirs_troops) == size
    completed_first = (
        draw(st.sampled_from([None, "mine", "theirs"]))
        if complete
        else (draw(st.sampled_from([None, "mine"])))
    )
    mine = draw(st.permutations([*wild_mine, *map(str, mine_troops)]))
    theirs = draw(st.permutations([*wt, *map(str, theirs_troops)]))
    q = bl.ClaimQuestion(mine, theirs, seen, mud=mud, fog=fog, completed_first=completed_first)
    assume(bl.oracle.work(q.theirs, len(q.seen), q.mud, len(q.mine_troops)) <= budget)
    if q.theirs_complete and q.completed_first is None:
        tie = (
            bl.best_formation(q.theirs, mud, fog).strength
            == bl.best_formation(q.mine, mud, fog).strength
        )
        assume(not tie)
    return q


@st.composite
def blocked_questions(draw: st.DrawFn, budget: int = ORACLE_BUDGET) -> bl.ClaimQuestion:
    """Questions walked towards validity: while the claim fails, one card of the
    solver's witness goes face up. These are the claims that just became valid, where
    blocking sets are interesting. (The tests still judge them by the oracle.)"""
    q = draw(questions(budget))
    # A fresh cache: a warm solver's witness depends on what it learned before, and
    # Hypothesis needs the same draws to give the same question.
    cache = SolverCache()
    for _ in range(draw(st.integers(5, 40))):
        d = bl.decide(q, cache=cache)
        if d.witness is None or not d.witness.added:
            break
        card = draw(st.sampled_from(d.witness.added))
        q = bl.ClaimQuestion(
            q.mine,
            q.theirs,
            (*q.seen, card),
            mud=q.mud,
            fog=q.fog,
            completed_first=q.completed_first,
        )
    cache.clear()
    return q


def any_questions(budget: int = ORACLE_BUDGET) -> st.SearchStrategy[bl.ClaimQuestion]:
    return st.one_of(questions(budget), blocked_questions(budget))


def oracle_answer(q: bl.ClaimQuestion) -> bl.oracle.OracleAnswer:
    return bl.oracle.decide(q.mine, q.theirs, q.seen, q.mud, q.fog, q.completed_first)
