"""Deciding, proving and verifying flag claims.

- :func:`decide`: the fast verdict, for engines that ask about every flag every turn.
- :func:`prove`: the verdict with its evidence: for a valid claim the minimal blocking
  set, the explanation and a DRAT-certified refutation; for an invalid one the
  completion that beats it, replayed by the rules code.
- :func:`verify`: checks a certificate with a checker that shares no code with the
  solver (``dratify``), re-encodes the question, and replays witnesses with the
  oracle's own evaluation.

Rules: Flags; docs/rulings.md 1-8 and 16.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import dratify
from dratify import check_proof, parse_dimacs

from battlejudge.solver.battleline import decider, oracle
from battlejudge.solver.battleline.backend import (
    PROOF_SOLVER,
    SolverCache,
    refute,
    solver_version,
)
from battlejudge.solver.battleline.cards import TROOP_COUNT, Card, Troop, format_cards
from battlejudge.solver.battleline.encode import (
    ENCODER_VERSION,
    EncodingKey,
    encode_key,
    selector_names,
    sha256,
    table_literals,
)
from battlejudge.solver.battleline.explain import Reason, explain_complete, explain_valid
from battlejudge.solver.battleline.formation import (
    CATEGORIES,
    RANK,
    Formation,
    best_formation,
    describe_strength,
)
from battlejudge.solver.battleline.question import ClaimQuestion
from battlejudge.solver.errors import (
    BattlejudgeError,
    InputError,
    RuleError,
    UndecidedError,
    VerificationError,
)
from battlejudge.solver.proof_limits import proof_size_error

Verdict = Literal["valid", "invalid"]
Status = Literal["valid", "invalid", "unknown"]

_CACHE = SolverCache()


def default_cache() -> SolverCache:
    """The process-wide solver cache used when none is passed."""
    return _CACHE


@dataclass(frozen=True)
class Witness:
    """A completion that beats the claim: the troops added and the formation reached."""

    added: tuple[Card, ...]
    formation: Formation

    def to_json(self) -> dict[str, Any]:
        """The witness in the JSON of ``claim --json`` and certificate files: the troops added, the
        formation they make, its sum and the wild cards' chosen identities."""
        return {
            "added": [str(c) for c in self.added],
            "formation": self.formation.name,
            "sum": self.formation.total,
            "wilds": self.formation.wild_choices(),
        }

    def sentence(self, mine: Formation) -> str:
        """The witness as said at the table."""
        wilds = "".join(f", {w} as {t}" for w, t in self.formation.wild_choices().items())
        if not self.added:
            tied = self.formation.strength == mine.strength
            rel = "ties" if tied else "beats"
            tail = ", and you completed last" if tied else ""
            return (
                f"Not yet: their complete {self.formation.label}{wilds} {rel} your "
                f"{mine.label}{tail}."
            )
        return (
            f"Not yet: the opponent reaches {self.formation.label} by adding "
            f"{format_cards(self.added)}{wilds}, which beats your {mine.label}."
        )


@dataclass(frozen=True)
class Decision:
    """The fast verdict. ``valid`` is None when a limit was hit (``status == 'unknown'``).

    The evidence (:attr:`mine`, :attr:`added`, :attr:`witness`) is worked out when read,
    so an engine asking only for the verdict does not pay for it.
    """

    question: ClaimQuestion
    status: Status

    @property
    def valid(self) -> bool | None:
        """True for a valid claim, False for an invalid one, None when a limit was hit (UNKNOWN is
        never turned into a verdict)."""
        return None if self.status == "unknown" else self.status == "valid"

    @property
    def mine(self) -> Formation:
        """The claimant's formation, with the identities its wild cards take."""
        q = self.question
        return best_formation(q.mine, q.mud, q.fog)

    @property
    def added(self) -> tuple[Troop, ...] | None:
        """For an invalid claim, the troops (codes) of the opponent's best completion,
        which beats the claim (:func:`.decider.best_completion`); empty when his side is
        complete already; None for a valid claim."""
        if self.status != "invalid":
            return None
        q = self.question
        theirs = q.codes[1]
        if len(theirs) == q.size:
            return ()
        return decider.best_completion(theirs, q.pool, q.size, q.fog)[1]

    @property
    def witness(self) -> Witness | None:
        """For an invalid claim, the completion that beats it (or ties it when the
        claimant completed last), with the formation it reaches; None otherwise."""
        added = self.added
        if added is None:
            return None
        q = self.question
        cards = tuple(Card(t) for t in added)
        return Witness(cards, best_formation((*q.theirs, *cards), q.mud, q.fog))


@dataclass(frozen=True)
class Certificate:
    """The evidence for a verdict, as the proofs layer writes it to a file.

    Valid: the CNF (the encoder's formula plus the table as unit clauses: the
    opponent's troops in, the blocking set out) and a DRAT refutation of it.
    Invalid: the witness. The hashes are as stored; :func:`verify` recomputes them.
    """

    question: ClaimQuestion
    verdict: Verdict
    mine: Formation
    witness: Witness | None
    blocking: tuple[Card, ...]
    cnf: str | None
    cnf_sha256: str | None
    proof: str | None
    proof_sha256: str | None
    question_sha256: str = ""
    """SHA-256 of the canonical question: an edited question no longer matches."""
    encoder: str = ENCODER_VERSION
    solver: str = PROOF_SOLVER
    solver_version: str = ""


@dataclass(frozen=True)
class ProvedClaim:
    """A certified verdict: ``verdict``, ``witness`` or ``blocking`` with ``reasons``."""

    question: ClaimQuestion
    verdict: Verdict
    mine: Formation
    witness: Witness | None
    blocking: tuple[Card, ...]
    certificate: Certificate

    @property
    def valid(self) -> bool:
        """True when the verdict is ``valid`` (proved with a checked DRAT refutation)."""
        return self.verdict == "valid"

    @functools.cached_property
    def reasons(self) -> tuple[Reason, ...]:
        """Why each blocking card matters (none for an invalid claim): worked out when
        first read, since engines that only log certificates never read them."""
        if self.witness is not None or not self.valid:
            return ()
        mine, key, _ = _setup(self.question)
        return _reasons(self.question, mine, key, self.blocking)

    @property
    def explanation(self) -> list[str]:
        """The argument, one sentence per line, as said at the table."""
        if self.witness is not None:
            return [self.witness.sentence(self.mine)]
        return [r.text for r in self.reasons]


# -- setting up a question -----------------------------------------------------------------
def _tie_needs_first(mine: Formation) -> RuleError:
    return RuleError(
        f"both sides are complete and tie at {mine.label}: completed_first must say "
        f"who completed first ('mine' or 'theirs')"
    )


def _ties_lost(q: ClaimQuestion) -> bool:
    """Does the claimant lose a tie (docs/rulings.md 7)? :func:`decider.claimant_completed_last`,
    which says the rule; an undecided tie is named by its formation."""
    try:
        return decider.claimant_completed_last(q)
    except decider.UndecidedTie:
        raise _tie_needs_first(best_formation(q.mine, q.mud, q.fog)) from None


def _setup(q: ClaimQuestion) -> tuple[Formation, EncodingKey, list[int]]:
    mine = best_formation(q.mine, q.mud, q.fog)
    rank, total = mine.strength
    key = EncodingKey(q.size, q.fog, q.theirs_wilds, rank, total, _ties_lost(q))
    return mine, key, table_literals(q.theirs_troops, q.face_up)


def decide(
    q: ClaimQuestion, *, conflict_limit: int | None = None, cache: SolverCache | None = None
) -> Decision:
    """The fast verdict, exact and without a SAT call: the opponent's best reachable
    formation against the claimant's (:mod:`.decider`, docs/rulings.md 4-7). For an invalid
    claim the decision gives the opponent's best completion. ``conflict_limit`` and ``cache``
    are accepted for callers of the SAT path and not needed here: this never hits a limit.

    >>> decide(ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10")).valid
    True
    >>> decide(ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7")).witness.added
    (Card.parse('B9'), Card.parse('B10'))
    """
    del conflict_limit, cache
    mine, theirs = q.codes
    size = q.size
    lost = len(theirs) == size and _ties_lost(q)  # claim_holds reads it only then
    valid = decider.claim_holds(mine, theirs, q.pool, size, q.fog, lost)
    return Decision(q, "valid" if valid else "invalid")


# -- proving ---------------------------------------------------------------------------
def _beats(
    q: ClaimQuestion, my_key: int, ties_lost: bool, forced: Sequence[Troop], out: int
) -> bool:
    """Can the opponent still beat the claim when he must add the troops ``forced`` and
    may add only the troops outside the 60-bit mask ``out`` (and not face up at his own
    side)? Exact, by :mod:`.decider` (docs/rulings.md 5, 7): the same answer the SAT
    formula of the question gives under the same units."""
    size, fog = q.size, q.fog
    side = (*q.codes[1], *forced)
    if len(side) > size:
        return False
    if len(side) == size:
        key = decider.best_key(side, decider.EMPTY_POOL, size, fog)
        return decider.wins_flag(key, my_key, ties_lost)
    pool = decider.pool_outside(out | _mask(forced))
    return decider.wins_flag(decider.best_key(side, pool, size, fog, my_key), my_key, False)


def _mask(troops: Iterable[Troop]) -> int:
    m = 0
    for t in troops:
        m |= 1 << t
    return m


def _minimal_blocking(q: ClaimQuestion, mine: Formation, ties_lost: bool) -> tuple[Troop, ...]:
    """Deletion-based minimal subset of the face-up troops that keeps the claim valid.

    Deterministic: it starts from every face-up troop and tries them in card order, each
    step an exact answer (:func:`_beats`, the bitmask decider, which agrees with the SAT
    path on every question), so the same question always gives the same set.
    """
    my_key = decider.strength(q.codes[0], q.size, q.fog)
    theirs = _mask(q.theirs_troops)
    kept = sorted(q.face_up)
    for t in list(kept):
        trial = [b for b in kept if b != t]
        if not _beats(q, my_key, ties_lost, (), theirs | _mask(trial)):
            kept = trial
    return tuple(kept)


def _canonical_witness(q: ClaimQuestion, mine: Formation, ties_lost: bool) -> Witness:
    """The witness of an invalid claim, the same whatever was asked before.

    Going through the troops not on the table from the highest card down, each is kept
    out of the completion when a beating completion without it (and within the choices
    already made) exists, else it is forced in. Every choice is an exact answer
    (:func:`_beats`), so the completion depends on the question alone.
    """
    my_key = decider.strength(q.codes[0], q.size, q.fog)
    on_table = q.face_up | q.theirs_troops
    out = _mask(on_table)
    forced: list[Troop] = []
    for t in sorted(set(range(TROOP_COUNT)) - on_table, reverse=True):
        if _beats(q, my_key, ties_lost, forced, out | 1 << t):
            out |= 1 << t
        else:
            forced.append(t)
    added = tuple(Card(t) for t in sorted(forced))
    formation = best_formation((*q.theirs, *added), q.mud, q.fog)
    beaten = decider.wins_flag(formation.key, mine.key, ties_lost)
    if not beaten or len(added) + len(q.theirs) != q.size:
        raise BattlejudgeError(
            f"internal error: witness {format_cards(added)} for {q!r} does not replay "
            f"({formation.label} against {mine.label})"
        )
    return Witness(added, formation)


def certificate_units(q: ClaimQuestion, blocking: Sequence[Card]) -> list[int]:
    """The unit clauses a certificate adds: the opponent's troops in, the blocking set out."""
    return table_literals(q.theirs_troops, (c.code for c in blocking))


def certificate_cnf(q: ClaimQuestion, blocking: Sequence[Card]) -> str:
    """The exact DIMACS text the encoder builds for a valid claim with this blocking set."""
    _mine, key, _ = _setup(q)
    return encode_key(key, q.theirs_troops).dimacs(
        certificate_units(q, blocking), comments=(ENCODER_VERSION, f"question {q.canonical()}")
    )


def prove(
    q: ClaimQuestion, *, conflict_limit: int | None = None, cache: SolverCache | None = None
) -> ProvedClaim:
    """The certified verdict. Raises :class:`UndecidedError` if a limit is hit.

    The verdict, the minimal blocking set, the canonical witness and the explanation
    come from the exact bitmask decider (:mod:`.decider`); the certificate of a valid claim
    is the encoder's formula with the table as unit clauses, refuted by a fresh
    proof-logging solver (within ``conflict_limit`` conflicts when given). ``cache`` is
    accepted for callers of the earlier SAT path and not needed.
    """
    del cache
    if conflict_limit is not None and conflict_limit < 1:
        # MiniSat and CaDiCaL read a budget of 0 as "no budget": never let it mean that.
        raise InputError(f"conflict limit must be at least 1, got {conflict_limit}")
    mine, key, _ = _setup(q)
    version = solver_version()
    canonical = q.canonical()
    if not decide(q).valid:
        witness = _canonical_witness(q, mine, key.ties_lost)
        cert = Certificate(
            q,
            "invalid",
            mine,
            witness,
            (),
            None,
            None,
            None,
            None,
            question_sha256=sha256(canonical),
            solver_version=version,
        )
        return ProvedClaim(q, "invalid", mine, witness, (), cert)
    blocking = tuple(Card(t) for t in _minimal_blocking(q, mine, key.ties_lost))
    # Smaller: the terms the opponent's own troops already rule out are left out.
    enc = encode_key(key, q.theirs_troops)
    units = certificate_units(q, blocking)
    unit_clauses = [(u,) for u in units]
    # Most tables refute the formula without its at-most block (the blocking units alone
    # rule every term out), and a DRAT proof of a subset of the clauses proves the whole
    # formula too: CaDiCaL adds only RUP lemmas, and RUP only gains from more clauses.
    # The solver then reads 30 clauses, not 420; the certificate's CNF is the whole one.
    proof = refute([*enc.core_clauses, *unit_clauses], conflict_limit) if enc.shared else None
    if proof is None:
        proof = refute([*enc.clauses, *unit_clauses], conflict_limit)
    if proof is None:
        if conflict_limit is None:
            raise BattlejudgeError(f"internal error: certificate formula for {q!r} is satisfiable")
        raise UndecidedError(f"no verdict within {conflict_limit} conflicts for {q!r}")
    cnf = enc.dimacs(units, comments=(ENCODER_VERSION, f"question {canonical}"))
    proof_text = "\n".join(proof) + "\n"
    cert = Certificate(
        q,
        "valid",
        mine,
        None,
        blocking,
        cnf,
        sha256(cnf),
        proof_text,
        sha256(proof_text),
        question_sha256=sha256(canonical),
        solver_version=version,
    )
    return ProvedClaim(q, "valid", mine, None, blocking, cert)


def _reasons(
    q: ClaimQuestion, mine: Formation, key: EncodingKey, blocking: tuple[Card, ...]
) -> tuple[Reason, ...]:
    if q.theirs_complete:
        return (explain_complete(best_formation(q.theirs, q.mud, q.fog), mine),)
    my_key = decider.strength(q.codes[0], q.size, q.fog)
    theirs = q.codes[1]
    taken = _mask(q.theirs_troops)

    def possible(name: str, blocked: Sequence[Card]) -> bool:
        """Can the opponent still make this formation, beating the claim, when only
        ``blocked`` troops are out of his reach?"""
        pool = decider.pool_outside(taken | _mask(c.code for c in blocked))
        only = -1 if q.fog else RANK[name]
        return decider.best_key(theirs, pool, q.size, q.fog, only=only) > my_key

    selectors = [(n, key.fog or RANK[n] == key.rank) for n in selector_names(key)]
    return explain_valid(q.theirs, q.mine, mine, blocking, selectors, key.ties_lost, possible)


# -- verification ----------------------------------------------------------------------
def _reject(why: str) -> VerificationError:
    return VerificationError(f"certificate rejected: {why}")


def _say_wilds(wilds: dict[str, str], none: str) -> str:
    return ", ".join(f"{card} as {troop}" for card, troop in wilds.items()) or none


def _check_formation(
    field: str, stated: Formation, cards: Sequence[Card], q: ClaimQuestion
) -> None:
    """A formation a certificate states (``mine`` or ``witness``) must be the one the rules
    code (``best_formation``) makes of ``cards``: its name, its sum and the identities of
    its wild cards, each shown to people, each checked, the error naming the first field
    that is wrong. Under Fog only the sum counts (Rules: Fog) and the rules code names
    every formation a host, so a Fog formation stated under any other name is rejected:
    the verdict would not change, but the label people read would be false. Its strength
    must also be the oracle's own evaluation (which shares no code with the rules code)."""
    rules = best_formation(cards, q.mud, q.fog)
    said = format_cards(cards)
    if stated.name != rules.name:
        fog = " (under Fog only the sum counts: every formation is a host)" if q.fog else ""
        raise _reject(
            f"{field}.formation says {stated.name!r}, but the rules code makes {said} a "
            f"{rules.name!r}, {rules.label}{fog}"
        )
    if stated.total != rules.total:
        raise _reject(f"{field}.sum says {stated.total}, but {said} makes {rules.label}")
    strength = oracle.strength(cards, q.fog)
    if rules.strength != strength:
        raise _reject(
            f"{field}: the rules code makes {said} {rules.label}, the oracle's evaluation "
            f"{describe_strength(strength, q.fog)}"
        )
    wilds, want = stated.wild_choices(), rules.wild_choices()
    if wilds != want:
        raise _reject(
            f"{field}.wilds says {_say_wilds(wilds, 'nothing')}, but the rules give "
            f"{_say_wilds(want, 'none (no wild card)')}"
        )


def verify(certified: Certificate | ProvedClaim, *, deep: bool = False) -> Literal[True]:
    """Check a certificate; return True or raise :class:`VerificationError` saying why.

    Valid: the proof is in proportion to the CNF (``proof_limits``, before any costly work);
    stored hashes match; every blocking card is face up in the question; the CNF
    is byte for byte what the encoder builds for the question and blocking set; the DRAT
    proof refutes it (``dratify``, which shares no code with the solver). Invalid: the
    witness adds unseen troops only, the right number, and beats the claim by the
    oracle's own evaluation; no blocking set, CNF or proof. Both: each formation stated
    (``mine`` and the witness's) has the name, sum and wild identities the rules code
    gives for its cards (under Fog: a host, by its sum), and the oracle's strength.
    ``deep`` also re-decides the question by brute force. The file fields and how each is
    checked: :mod:`battlejudge.proofs.battleline.certificate`.
    """
    c = certified.certificate if isinstance(certified, ProvedClaim) else certified
    q = c.question
    if c.encoder != ENCODER_VERSION:
        raise _reject(f"made by encoder {c.encoder!r}, this checker knows {ENCODER_VERSION!r}")
    if sha256(q.canonical()) != c.question_sha256:
        raise _reject("the question does not match its SHA-256 (was it edited?)")
    _check_formation("mine", c.mine, q.mine, q)
    if c.verdict == "valid":
        _verify_valid(c)
    elif c.verdict == "invalid":
        _verify_invalid(c)
    else:
        raise _reject(f"unknown verdict {c.verdict!r}")
    if deep:
        answer = oracle.decide(q.mine, q.theirs, q.seen, q.mud, q.fog, q.completed_first)
        if answer.valid != (c.verdict == "valid"):
            raise _reject(f"verdict {c.verdict!r} disagrees with the brute-force oracle")
    return True


def _verify_valid(c: Certificate) -> None:
    q = c.question
    if c.witness is not None:
        raise _reject("a valid verdict carries no witness")
    if c.cnf is None or c.proof is None:
        raise _reject("a valid verdict needs a CNF and a DRAT proof")
    too_big = proof_size_error(c.cnf, c.proof)  # before any work: a padded proof is slow
    if too_big is not None:
        raise _reject(too_big)
    if sha256(c.cnf) != c.cnf_sha256:
        raise _reject("the CNF does not match its SHA-256")
    if sha256(c.proof) != c.proof_sha256:
        raise _reject("the proof does not match its SHA-256")
    face_up = q.mine_troops | q.seen_troops
    for card in c.blocking:
        if not card.is_troop or card.code not in face_up:
            raise _reject(f"blocking card {card} is not a face-up troop of the question")
    try:
        expected = certificate_cnf(q, c.blocking)
    except (ValueError, BattlejudgeError) as e:
        raise _reject(f"the question cannot be encoded: {e}") from e
    if c.cnf != expected:
        raise _reject("the CNF is not the one the encoder builds for this question")
    try:
        result = check_proof(parse_dimacs(c.cnf), c.proof, engine=drat_engine())
    except Exception as e:  # the checker's own parse errors: a malformed proof
        raise _reject(f"the DRAT checker could not read the proof: {e}") from e
    if not (result.ok and result.reached_empty):
        raise _reject("the DRAT proof does not refute the CNF")


@functools.cache
def drat_engine() -> Literal["native", "python"]:
    """Which of dratify's two checkers reads the proofs: ``native``, its Rust engine (the
    ``cdclkit-native`` wheel, registered with dratify here; several times faster), when
    installed, else ``python``, its pure-Python engine. The two are independent
    implementations, kept in agreement by their authors' differential tests and by ours
    (tests/test_drat_engines.py). ``BATTLEJUDGE_DRAT_ENGINE=python`` asks for the
    pure-Python one; neither shares code with the solver that wrote the proof."""
    if os.environ.get("BATTLEJUDGE_DRAT_ENGINE", "").strip().lower() == "python":
        return "python"
    try:
        import cdclkit_native
    except ImportError:
        return "python"
    dratify.register_native(cdclkit_native)
    return "native"


def _verify_invalid(c: Certificate) -> None:
    q = c.question
    w = c.witness
    if w is None:
        raise _reject("an invalid verdict needs a witness")
    if c.blocking:
        raise _reject("an invalid verdict carries no blocking set")
    if c.cnf is not None or c.proof is not None:
        raise _reject("an invalid verdict carries no CNF or proof")
    taken = q.face_up | q.theirs_troops
    codes = [a.code for a in w.added]
    if any(not a.is_troop for a in w.added) or len(set(codes)) != len(codes):
        raise _reject("the witness may add distinct troops only")
    if set(codes) & taken:
        bad = sorted(set(codes) & taken)
        raise _reject(f"witness card {Card(bad[0])} is face up, not in the pool")
    if len(codes) + len(q.theirs) != q.size:
        raise _reject(f"the witness adds {len(codes)} troops to a side of {len(q.theirs)}")
    theirs = oracle.strength((*q.theirs, *w.added), q.fog)
    mine = oracle.strength(q.mine, q.fog)
    lost = oracle.ties_lost(q.theirs_complete, q.completed_first)
    if not oracle.beats(theirs, mine, lost):
        raise _reject(
            f"the witness reaches {describe_strength(theirs, q.fog)}, which does not beat "
            f"{describe_strength(mine, q.fog)}"
        )
    _check_formation("witness", w.formation, (*q.theirs, *w.added), q)


__all__ = [
    "CATEGORIES",
    "Certificate",
    "Decision",
    "ProvedClaim",
    "Witness",
    "certificate_cnf",
    "decide",
    "default_cache",
    "prove",
    "verify",
]
