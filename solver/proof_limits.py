"""How big a certificate's CNF and DRAT proof may be: a proof out of proportion to its
formula is refused before any checking.

Checking a DRAT proof is not linear in its length: every line added is checked against
every clause added before it, so a proof padded with copies of one of its own formula's
clauses (each a correct, useless step) costs time quadratic in the padding: 20,000
copies (a 7 KB compressed body) took 10 s to check. The rule below refuses such a proof
by counting its lines and bytes, which costs microseconds, and leaves a margin of about
twice the largest proof the solver wrote for any claim we measured:

- a CNF may have at most :data:`MAX_CNF_BYTES` bytes. The encoder's largest formula
  (``battleline-cnf/2``, four-card formations, no wild card, the weakest target, 60 unit
  clauses) has 58,595 bytes and 4,658 clauses; the verifier rebuilds the CNF and
  compares it byte for byte, so a larger one cannot be right anyway.
- a proof may have at most :data:`PROOF_LINES_PER_CNF_LINE` lines per line of its CNF
  plus :data:`PROOF_EXTRA_LINES`, and at most :data:`PROOF_BYTES_PER_CNF_BYTE` bytes per
  byte of its CNF plus :data:`PROOF_EXTRA_BYTES`.

Measured (``python-sat`` 1.9's CaDiCaL 1.9.5, 5,854 valid claims out of about 25,000 questions: the
``bench claims`` suite, the examples, and random questions weighted towards Mud, Fog and
wild cards, which need the longest proofs): at most 2.83 proof lines per CNF clause and
8.70 proof bytes per CNF byte; the longest proof had 1,961 lines and 75,021 bytes
against a CNF of 692 clauses and 8,692 bytes. Most proofs have a handful of lines: unit
propagation refutes most certificate formulas.

The rule bounds the size of the work, not its time: a proof within the rule can still
be slow (up to about a second here), which is why checks also run under a time budget
(:func:`battlejudge.proofs.battleline.certificate.verify_bounded`).
"""

from __future__ import annotations

from typing import Final

MAX_CNF_BYTES: Final = 256 * 1024
"""Bytes of a certificate's CNF, at most (four times the encoder's largest formula)."""
PROOF_LINES_PER_CNF_LINE: Final = 6
PROOF_EXTRA_LINES: Final = 100
PROOF_BYTES_PER_CNF_BYTE: Final = 20
PROOF_EXTRA_BYTES: Final = 4096

RULE: Final = (
    f"a proof may have {PROOF_LINES_PER_CNF_LINE} lines per CNF line + {PROOF_EXTRA_LINES} "
    f"and {PROOF_BYTES_PER_CNF_BYTE} bytes per CNF byte + {PROOF_EXTRA_BYTES}"
)
"""The rule, as error messages state it."""


def _lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def max_proof_lines(cnf: str) -> int:
    """The most lines a DRAT proof of ``cnf`` may have."""
    return PROOF_LINES_PER_CNF_LINE * _lines(cnf) + PROOF_EXTRA_LINES


def max_proof_bytes(cnf_bytes: int) -> int:
    """The most bytes a DRAT proof of a CNF of ``cnf_bytes`` bytes may have."""
    return PROOF_BYTES_PER_CNF_BYTE * cnf_bytes + PROOF_EXTRA_BYTES


def proof_size_error(cnf: str, proof: str) -> str | None:
    """Why this CNF or proof is too big to check (one line), or None when within the rule.

    Costs a scan for newlines: the point is to refuse before any checking starts.

    >>> cnf = "p cnf 1 2\\n1 0\\n-1 0\\n"
    >>> proof_size_error(cnf, "0\\n") is None
    True
    >>> proof_size_error(cnf, "1 0\\n" * 200).split(" (")[0]
    'the DRAT proof has 200 lines, more than the 118 a proof of a 3-line CNF may have'
    """
    cnf_bytes = len(cnf)  # DRAT and DIMACS are ASCII: a character is a byte
    if cnf_bytes > MAX_CNF_BYTES:
        return f"the CNF has {cnf_bytes} bytes, more than the {MAX_CNF_BYTES} a CNF may have"
    lines, most = _lines(proof), max_proof_lines(cnf)
    if lines > most:
        return (
            f"the DRAT proof has {lines} lines, more than the {most} a proof of a "
            f"{_lines(cnf)}-line CNF may have ({RULE})"
        )
    size, most = len(proof), max_proof_bytes(cnf_bytes)
    if size > most:
        return (
            f"the DRAT proof has {size} bytes, more than the {most} a proof of a "
            f"{cnf_bytes}-byte CNF may have ({RULE})"
        )
    return None
