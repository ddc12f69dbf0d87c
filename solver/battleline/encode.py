"""CNF encoding of "some completion of the opponent's side beats the claimant".

Pure: ``encode`` builds clauses and never calls a solver (the CPMpy split of model,
transformation and solving).

Variables 1..60 are the troops: ``troop_var(t)`` is true when troop ``t`` ends up in
the opponent's formation (already there or added from the pool). The formula is the
same for every question with the same :class:`EncodingKey`; what is on the table
enters as assumptions or unit clauses: the opponent's troops true, every face-up
troop the opponent cannot add false.

Shape of the formula, for a formation of ``n`` cards of which ``w`` are wild:
- at most ``n - w`` troop variables are true (a side holds ``n`` cards);
- every wild card has exactly one color and exactly one value it may take
  (Leader 1-10, Companion Cavalry 8, Shield Bearers 1-3);
- counters: ``y(v, m)`` implies at least ``m`` cards of value ``v``, ``z(c, m)`` at
  least ``m`` cards of color ``c`` (troops and wild identities alike, so a wild may
  copy a troop, docs/rulings.md 2);
- one selector per formation that could beat the claimant, and a clause that one
  selector holds. Each selector implies a disjunction of concrete terms, and every
  term forces ``n`` cards: Wedge = one term per color and run, each value of the run
  covered by that color's troop or a wild; Phalanx = ``n`` cards of one value, other
  values excluded; Battalion = ``n`` cards of one color, other colors excluded;
  Skirmish = each value of a run covered, other values excluded; Host = a multiset
  of values. Where the formation is the claimant's own, the sum must beat (or tie,
  when ties are lost) the claimant's sum. The concrete terms make most refutations
  pure unit propagation, which keeps DRAT proofs short.
Since the opponent takes his best formation, "some selector holds" is exactly "some
completion beats the claimant" (Rules: Formations, Flags; docs/rulings.md 1, 2, 7, 8).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations_with_replacement

from pysat.card import CardEnc, EncType

from battlejudge.solver.battleline.cards import (
    ALL_TROOPS,
    TROOP_COUNT,
    WILD_VALUES,
    Troop,
    color_of,
    value_of,
)
from battlejudge.solver.battleline.decider import FORMATION_SIZES, RUNS, Run, wins_flag
from battlejudge.solver.battleline.formation import (
    BATTALION,
    CATEGORIES,
    HOST,
    PHALANX,
    RANK,
    SKIRMISH,
    WEDGE,
)

ENCODER_VERSION = "battleline-cnf/2"
"""Version 2: certificate formulas leave out the terms the opponent's troops rule out."""
Clause = tuple[int, ...]


def troop_var(t: Troop) -> int:
    """The variable of troop ``t``: true when it is in the opponent's formation."""
    return t + 1


@dataclass(frozen=True, order=True)
class EncodingKey:
    """Everything the formula depends on; questions with one key share one solver.

    The opponent beats the claimant when his strength is above ``(rank, total)``, or
    equal to it when ``ties_lost`` (the claimant completed last, docs/rulings.md 7).
    """

    size: int
    fog: bool
    wilds: tuple[str, ...]
    rank: int
    total: int
    ties_lost: bool


@dataclass(frozen=True)
class Encoding:
    """A built formula and the names of its variables."""

    key: EncodingKey
    nvars: int
    clauses: tuple[Clause, ...]
    selectors: dict[str, int]
    """Formation name -> selector variable, for each formation that could beat."""
    wild_colors: tuple[tuple[int, ...], ...]
    """For the i-th wild of ``key.wilds``: one variable per color index."""
    wild_values: tuple[dict[int, int], ...]
    """For the i-th wild of ``key.wilds``: value -> variable."""

    def dimacs(self, units: Iterable[int] = (), comments: Sequence[str] = ()) -> str:
        """DIMACS text of the formula plus unit clauses, deterministic to the byte."""
        unit_list = list(units)
        lines = [f"c {c}" for c in comments]
        lines.append(f"p cnf {self.nvars} {len(self.clauses) + len(unit_list)}")
        if self.clauses:
            lines.append(self._clause_lines)
        lines.extend(f"{u} 0" for u in unit_list)
        return "\n".join(lines) + "\n"

    shared: tuple[int, int, str] | None = None
    """``(start, end, text)``: ``clauses[start:end]`` is a block shared by many formulas
    (the at-most constraint) whose DIMACS lines ``text`` were written once."""

    @functools.cached_property
    def core_clauses(self) -> tuple[Clause, ...]:
        """The clauses outside the shared block (all of them when there is none)."""
        if self.shared is None:
            return self.clauses
        start, end, _ = self.shared
        return self.clauses[:start] + self.clauses[end:]

    @functools.cached_property
    def _clause_lines(self) -> str:
        """The clauses' DIMACS lines, written once per formula (the encodings are cached)."""
        if self.shared is None:
            return _lines(self.clauses)
        start, end, text = self.shared
        parts = (_lines(self.clauses[:start]), text, _lines(self.clauses[end:]))
        return "\n".join(p for p in parts if p)


def _lines(clauses: Iterable[Clause]) -> str:
    return "\n".join(" ".join(map(str, c)) + " 0" for c in clauses)


@functools.cache
def _at_most_troops(bound: int, top: int) -> tuple[tuple[Clause, ...], int, str]:
    """At most ``bound`` troop variables true (a sequential counter whose auxiliary
    variables start after ``top``): its clauses, its top variable and its DIMACS lines.
    Most of every formula, and the same for every key with the same bound and wilds,
    so it is built once."""
    card = CardEnc.atmost(
        lits=[troop_var(t) for t in ALL_TROOPS],
        bound=bound,
        top_id=top,
        encoding=EncType.seqcounter,
    )
    clauses = tuple(tuple(c) for c in card.clauses)
    return clauses, card.nv, _lines(clauses)


@dataclass
class _Builder:
    key: EncodingKey
    top: int = TROOP_COUNT  # variables 1..60 are the troops
    clauses: list[Clause] = field(default_factory=list)
    counters: dict[tuple[str, int], list[int | None]] = field(default_factory=dict)
    runs: dict[int, int] = field(default_factory=dict)
    multisets: dict[tuple[int, ...], int] = field(default_factory=dict)
    wild_colors: list[tuple[int, ...]] = field(default_factory=list)
    wild_values: list[dict[int, int]] = field(default_factory=list)

    def new(self) -> int:
        self.top += 1
        return self.top

    def exactly_one(self, lits: Sequence[int]) -> None:
        self.clauses.append(tuple(lits))
        self.clauses.extend((-a, -b) for i, a in enumerate(lits) for b in lits[i + 1 :])

    def atleast(self, group: tuple[str, int], lits: Sequence[int], m: int) -> int | None:
        """A variable that implies "at least ``m`` of ``lits`` are true" (None: impossible).

        A one-directional sequential counter: only the implication the formula needs.
        """
        n = self.key.size
        if group not in self.counters:
            prev: list[int | None] = [None] * (n + 1)  # prev[j]: >= j among first i-1
            for i, lit in enumerate(lits, start=1):
                cur: list[int | None] = [None] * (n + 1)
                for j in range(1, min(i, n) + 1):
                    s = self.new()
                    cur[j] = s
                    keep = prev[j]
                    self.clauses.append((-s, lit) if keep is None else (-s, keep, lit))
                    if j > 1:
                        below = prev[j - 1]
                        assert below is not None  # j - 1 <= i - 1
                        self.clauses.append((-s, below) if keep is None else (-s, keep, below))
                prev = cur
            self.counters[group] = prev
        return self.counters[group][m] if m <= n else None

    def value_count(self, v: int, m: int) -> int | None:
        lits = [troop_var(c * 10 + v - 1) for c in range(6)]
        lits += [vals[v] for vals in self.wild_values if v in vals]
        return self.atleast(("value", v), lits, m)

    def color_count(self, c: int, m: int) -> int | None:
        lits = [troop_var(c * 10 + v - 1) for v in range(1, 11)]
        lits += [cols[c] for cols in self.wild_colors]
        return self.atleast(("color", c), lits, m)

    def covered(self, v: int, colors: Iterable[int]) -> list[int]:
        """Literals by which value ``v`` can be in the formation: a troop of one of
        ``colors`` or a wild card taking ``v``."""
        return [troop_var(c * 10 + v - 1) for c in colors] + [
            vals[v] for vals in self.wild_values if v in vals
        ]

    def wedge(self, c: int, r: Run) -> int:
        """One card of each value of the run, all of color ``c``: every troop is one of
        the run's cells, so a face-up cell refutes it by propagation alone."""
        t = self.new()
        for v in r.values:
            self.clauses.append((-t, *self.covered(v, [c])))
        self.clauses.extend((-t, cols[c]) for cols in self.wild_colors)
        return t

    def run(self, r: Run) -> int:
        """One card of each value of the run, any colors; troops off the run excluded."""
        if r.start not in self.runs:
            t = self.new()
            for v in r.values:
                self.clauses.append((-t, *self.covered(v, range(6))))
            self.clauses.extend((-t, x) for x in _OFF_RUN[self.key.size, r.start])
            self.runs[r.start] = t
        return self.runs[r.start]

    def phalanx(self, v: int) -> int | None:
        """``n`` cards of value ``v``: every wild takes ``v``, other values excluded."""
        if any(v not in vals for vals in self.wild_values):
            return None
        y = self.value_count(v, self.key.size)
        if y is None:
            return None
        t = self.new()
        self.clauses.append((-t, y))
        self.clauses.extend((-t, vals[v]) for vals in self.wild_values)
        self.clauses.extend((-t, x) for x in _NOT_VALUE[v])
        return t

    def one_color(self, c: int) -> int | None:
        """``n`` cards of color ``c``: every wild takes ``c``, other colors excluded."""
        z = self.color_count(c, self.key.size)
        if z is None:
            return None
        t = self.new()
        self.clauses.append((-t, z))
        self.clauses.extend((-t, cols[c]) for cols in self.wild_colors)
        self.clauses.extend((-t, x) for x in _NOT_COLOR[c])
        return t

    def multiset(self, values: tuple[int, ...]) -> int:
        """A variable implying the cards' values are exactly ``values`` (n cards)."""
        if values not in self.multisets:
            t = self.new()
            for v in sorted(set(values)):
                y = self.value_count(v, values.count(v))
                self.clauses.append((-t,) if y is None else (-t, y))
            self.multisets[values] = t
        return self.multisets[values]


_MULTISETS = {
    n: [(ms, sum(ms)) for ms in combinations_with_replacement(range(10, 0, -1), n)]
    for n in FORMATION_SIZES
}
"""Every multiset of values a formation of 3 or 4 cards can have, with its sum."""


def _beats(total: int, key: EncodingKey) -> bool:
    """Does a formation of the claim's category with sum ``total`` beat the claim? The tie
    rule (docs/rulings.md 7) is the decider's."""
    return wins_flag(total, key.total, key.ties_lost)  # ties_lost: the opponent was first


_Multiset = tuple[tuple[int, ...], int]
"""A multiset of values and its sum."""


@functools.cache
def _multisets_with(n: int, fixed_values: tuple[int, ...]) -> tuple[_Multiset, ...]:
    """The multisets of ``n`` values (in ``_MULTISETS`` order) that hold every value of
    ``fixed_values`` (sorted, with repeats) as often as it appears there."""
    need = {v: fixed_values.count(v) for v in set(fixed_values)}
    return tuple(
        (ms, total) for ms, total in _MULTISETS[n] if all(ms.count(v) >= k for v, k in need.items())
    )


_NOT_VALUE = {v: tuple(-troop_var(x) for x in ALL_TROOPS if value_of(x) != v) for v in range(1, 11)}
"""Per value: the negated troop variables of every other value."""
_NOT_COLOR = {c: tuple(-troop_var(x) for x in ALL_TROOPS if color_of(x) != c) for c in range(6)}
"""Per color index: the negated troop variables of every other color."""
_OFF_RUN = {
    (n, r.start): tuple(-troop_var(x) for x in ALL_TROOPS if value_of(x) not in r.values)
    for n in (3, 4)
    for r in RUNS[n]
}
"""Per run: the negated troop variables of the values off the run."""


@functools.lru_cache(maxsize=256)
def encode_key(key: EncodingKey, fixed: frozenset[Troop] = frozenset()) -> Encoding:
    """Build the formula for one key. Deterministic: the same arguments give the same clauses
    (so the last 256 are kept: proving and verifying a certificate build the same one).

    ``fixed`` names troops known to be in the opponent's formation (a certificate adds them
    as unit clauses): terms they contradict are left out (a Wedge of another color, a run
    or a multiset of values without theirs). Every term left out is unsatisfiable under
    those units, so the formula with the units is refuted exactly when the full one is;
    the certificate is just smaller. Decisions use ``fixed`` empty, so one formula serves
    every table with the same key.
    """
    b = _Builder(key)
    n = key.size
    fixed_colors = {color_of(t) for t in fixed}
    fixed_values = sorted(value_of(t) for t in fixed)

    def fits_color(c: int) -> bool:
        return fixed_colors <= {c}

    def fits_run(r: Run) -> bool:
        return len(set(fixed_values)) == len(fixed_values) and all(
            v in r.values for v in fixed_values
        )

    def fits_values(values: tuple[int, ...]) -> bool:
        return all(values.count(v) >= fixed_values.count(v) for v in set(fixed_values))

    for w in key.wilds:
        cols = tuple(b.new() for _ in range(6))
        vals = {v: b.new() for v in WILD_VALUES[w]}
        b.exactly_one(cols)
        b.exactly_one(list(vals.values()))
        b.wild_colors.append(cols)
        b.wild_values.append(vals)
    # A side holds n cards: at most n - w troops (docs/rulings.md 4, 8).
    at_most, nv, at_most_text = _at_most_troops(n - len(key.wilds), b.top)
    b.top = max(b.top, nv)
    shared = (len(b.clauses), len(b.clauses) + len(at_most), at_most_text)
    b.clauses.extend(at_most)

    runs = RUNS[n]

    def value_sums() -> list[int]:
        return [
            b.multiset(ms)
            for ms, total in _multisets_with(n, tuple(fixed_values))
            if _beats(total, key)
        ]

    selectors: dict[str, int] = {}
    for name in selector_names(key):
        g = b.new()
        selectors[name] = g
        conditional = key.fog or RANK[name] == key.rank
        # Each entry: a disjunction the selector implies.
        needs: list[list[int]]
        if name == WEDGE:
            good_runs = [
                r for r in runs if fits_run(r) and (not conditional or _beats(r.total, key))
            ]
            needs = [[b.wedge(c, r) for c in range(6) if fits_color(c) for r in good_runs]]
        elif name == PHALANX:
            good = [v for v in range(10, 0, -1) if not conditional or _beats(n * v, key)]
            good = [v for v in good if fits_values((v,) * n)]
            needs = [[t for v in good if (t := b.phalanx(v)) is not None]]
        elif name == BATTALION:
            colors = [t for c in range(6) if fits_color(c) and (t := b.one_color(c)) is not None]
            needs = [colors] + ([value_sums()] if conditional else [])
        elif name == SKIRMISH:
            good_runs = [
                r for r in runs if fits_run(r) and (not conditional or _beats(r.total, key))
            ]
            needs = [[b.run(r) for r in good_runs]]
        else:
            needs = [value_sums()]
        for options in needs:
            b.clauses.append((-g, *options))
    b.clauses.append(tuple(selectors.values()))
    return Encoding(
        key=key,
        nvars=b.top,
        clauses=tuple(b.clauses),
        selectors=selectors,
        wild_colors=tuple(b.wild_colors),
        wild_values=tuple(b.wild_values),
        shared=shared if at_most else None,
    )


def table_literals(theirs: Iterable[Troop], blocked: Iterable[Troop]) -> list[int]:
    """Literals for what is on the table: the opponent's troops in, blocked troops out."""
    return [troop_var(t) for t in sorted(theirs)] + [-troop_var(t) for t in sorted(blocked)]


def selector_names(key: EncodingKey) -> tuple[str, ...]:
    """The formations that could beat a claim of this key, best first: under Fog only
    the sum (Host); otherwise every category ranked at least the claim's (docs/rulings.md 1, 8)."""
    return (HOST,) if key.fog else tuple(c for c in CATEGORIES if RANK[c] >= key.rank)


def sha256(text: str) -> str:
    """The lowercase hex SHA-256 of ``text`` encoded as UTF-8 (the digests recorded in
    certificates)."""
    return hashlib.sha256(text.encode()).hexdigest()
