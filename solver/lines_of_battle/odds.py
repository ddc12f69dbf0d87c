"""Exact combat odds: one attack, and the number of units a planned combat phase
destroys.

Rules: seed 003, Combat Phase; docs/rulings.md (Lines of Battle): attacks go straight ahead
and any unit in between blocks them; frontal combat needs the attacker's d6 to beat the
defender's (a tie is enough for a swordsman against a spearman and a spearman against
cavalry); side and rear attacks destroy without a roll; the attacker orders his attacks
and a destroyed unit leaves at once.

>>> from battlejudge.solver.lines_of_battle.position import parse_question
>>> q = parse_question({"board": "3x3", "to_move": "p1", "units": [
...     {"at": "B1", "side": "p1", "type": "swordsman", "facing": "N"},
...     {"at": "B2", "side": "p2", "type": "spearman", "facing": "S"}]})
>>> attack_odds(q.position, q.position.board.parse("B1"), q.position.board.parse("B2"))
Fraction(7, 12)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from battlejudge.solver.errors import InputError
from battlejudge.solver.lines_of_battle.core import (
    ARCHER,
    ASPECT_NAMES,
    COMMANDER,
    KIND_NAMES,
    RANGE,
    Square,
    aspect,
    kill_probability,
)
from battlejudge.solver.lines_of_battle.position import SEATS, Position, UnitAt


def first_in_line(pos: Position, unit: UnitAt, gone: Iterable[Square] = ()) -> Square | None:
    """The first square holding a unit straight ahead of ``unit`` within its range
    (units on squares in ``gone`` are destroyed), or None."""
    removed = set(gone)
    for sq in pos.board.line(unit.square, unit.facing, RANGE[unit.kind]):
        if sq not in removed and pos.at(sq) is not None:
            return sq
    return None


def why_not_attack(
    pos: Position, attacker: Square, target: Square, gone: Iterable[Square] = ()
) -> str | None:
    """Why ``attacker`` cannot attack ``target`` now (None when it can)."""
    b = pos.board
    removed = set(gone)
    a = pos.at(attacker)
    if a is None or attacker in removed:
        return f"no unit on {b.name(attacker)}"
    if a.owner != pos.to_move:
        return f"{b.name(attacker)} is not a unit of {SEATS[pos.to_move]}, who attacks"
    if a.kind == COMMANDER:
        return "the Commander cannot attack"
    if a.kind == ARCHER and a.reloading:
        return f"the archer on {b.name(attacker)} is reloading"
    t = pos.at(target)
    if t is None or target in removed:
        return f"no unit on {b.name(target)}"
    if t.owner == a.owner:
        return f"{b.name(target)} is a friendly unit"
    first = first_in_line(pos, a, removed)
    if first != target:
        if target in b.line(attacker, a.facing, RANGE[a.kind]):
            return f"the line from {b.name(attacker)} to {b.name(target)} is blocked"
        return f"{b.name(target)} is not straight ahead of {b.name(attacker)} within range"
    return None


def attack_odds(pos: Position, attacker: Square, target: Square) -> Fraction:
    """The exact probability that this attack, made now, destroys its target;
    :class:`InputError` says why the attack cannot be made."""
    why = why_not_attack(pos, attacker, target)
    if why is not None:
        raise InputError(f"attack {pos.board.name(attacker)}-{pos.board.name(target)}: {why}")
    a, t = pos.at(attacker), pos.at(target)
    assert a is not None and t is not None
    return kill_probability(a.kind, t.kind, aspect(a.facing, t.facing))


@dataclass(frozen=True)
class AttackOdds:
    """The exact probability that one attack kills its target, with the squares and the aspect
    (front, flank, rear) named."""

    attacker: str
    target: str
    aspect: str
    probability: Fraction


def describe_attack(pos: Position, attacker: Square, target: Square) -> AttackOdds:
    """The named :class:`AttackOdds` of ``attacker`` attacking ``target`` in ``pos``; an
    :class:`InputError` if that attack is not allowed."""
    p = attack_odds(pos, attacker, target)
    a, t = pos.at(attacker), pos.at(target)
    assert a is not None and t is not None
    b = pos.board
    return AttackOdds(b.name(attacker), b.name(target), ASPECT_NAMES[aspect(a.facing, t.facing)], p)


def phase_distribution(pos: Position, attacks: Sequence[tuple[Square, Square]]) -> list[Fraction]:
    """The exact distribution of the number of units a planned combat phase destroys
    (index = units destroyed). The attacks are made in order; one whose target is
    already destroyed, or whose line is still blocked, is skipped. Each unit attacks
    at most once (seed: Combat Phase), so a plan naming one twice is bad input, and
    so is a first attack that cannot be made."""
    names = pos.board.name
    used: set[Square] = set()
    for i, (a, _t) in enumerate(attacks):
        if a in used:
            raise InputError(f"attacks[{i}]: {names(a)} attacks twice (once a turn)")
        used.add(a)
        unit = pos.at(a)
        if unit is None or unit.owner != pos.to_move:
            raise InputError(f"attacks[{i}]: no unit of {SEATS[pos.to_move]} on {names(a)}")
    if attacks:
        a, t = attacks[0]
        why = why_not_attack(pos, a, t)
        if why is not None:
            raise InputError(f"attacks[0]: {names(a)}-{names(t)}: {why}")
    dist: dict[int, Fraction] = {}

    def walk(i: int, gone: frozenset[Square], p: Fraction) -> None:
        if i == len(attacks):
            dist[len(gone)] = dist.get(len(gone), Fraction(0)) + p
            return
        a, t = attacks[i]
        if why_not_attack(pos, a, t, gone) is not None:
            walk(i + 1, gone, p)
            return
        au, tu = pos.at(a), pos.at(t)
        assert au is not None and tu is not None
        k = kill_probability(au.kind, tu.kind, aspect(au.facing, tu.facing))
        walk(i + 1, gone | {t}, p * k)
        if k < 1:
            walk(i + 1, gone, p * (1 - k))

    walk(0, frozenset(), Fraction(1))
    top = max(dist)
    return [dist.get(n, Fraction(0)) for n in range(top + 1)]


def kind_name(pos: Position, sq: Square) -> str:
    """The kind of unit on ``sq`` (``empty`` when there is none)."""
    u = pos.at(sq)
    return "empty" if u is None else KIND_NAMES[u.kind]
