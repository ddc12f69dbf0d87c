"""Importing record lines into a proof log checks that they continue its hash chain
(proofs/log.py ``continue_chain``): each line's ``seq`` is the next one and its ``prev``
is the SHA-256 of the line before (the log's last hash for the first line); any other
line is refused, whatever hash it names instead."""

from __future__ import annotations

import pytest

from battlejudge.proofs.log import GENESIS, chain_record, continue_chain, game_record, sha256_hex
from battlejudge.solver.errors import InputError


def _chain(n: int, seq: int = 0, prev: str = GENESIS) -> list[bytes]:
    lines = []
    for i in range(n):
        record = game_record(
            f"g-{i}", ['[Event "x"]', '[Result "north"]'], time="2026-01-01T00:00:00Z"
        )
        _, line = chain_record(record, seq + i, prev, None)
        lines.append(line)
        prev = sha256_hex(line)
    return lines


def test_lines_that_continue_the_chain_are_taken() -> None:
    lines = _chain(3)
    assert continue_chain(lines, 0, GENESIS, "log") == (sha256_hex(lines[-1]), 3)
    assert continue_chain([], 5, "a" * 64, "log") == ("a" * 64, 5)


@pytest.mark.parametrize(
    "other", ["f" * 64, "1" * 64, "0" * 63 + "1"], ids=["above", "below", "near"]
)
def test_a_line_naming_another_previous_hash_is_refused(other: str) -> None:
    # Hashes above and below the right one: only equality continues a chain.
    good = _chain(2, seq=7, prev="8" * 64)
    with pytest.raises(InputError, match=r"line 0 to import \(seq 7\) does not continue"):
        continue_chain(_chain(1, seq=7, prev=other), 7, "8" * 64, "log")
    with pytest.raises(InputError, match=r"line 1 to import \(seq 8\) does not continue"):
        continue_chain([good[0], _chain(1, seq=8, prev=other)[0]], 7, "8" * 64, "log")


@pytest.mark.parametrize("seq", [6, 8])
def test_a_line_with_another_seq_is_refused(seq: int) -> None:
    with pytest.raises(InputError, match=f"seq {seq}"):
        continue_chain(_chain(1, seq=seq, prev="8" * 64), 7, "8" * 64, "log")
