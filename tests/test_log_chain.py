"""Importing record lines into a proof log checks that they continue its hash chain
(proofs/log.py ``continue_chain``): each line's ``seq`` is the next one and its ``prev``
is the SHA-256 of the line before (the log's last hash for the first line); any other
line is refused, whatever hash it names instead. And the checkpoint a writer goes on
from must be its own log's, of exactly the tree it holds."""

from __future__ import annotations

import pytest

from battlejudge.proofs.checkpoint import Checkpoint, origin_for
from battlejudge.proofs.log import (
    GENESIS,
    VouchError,
    chain_record,
    continue_chain,
    game_record,
    head_note,
    sha256_hex,
    vouch,
)
from battlejudge.proofs.merkle import leaf_hash
from battlejudge.proofs.tiles import TileState
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


# -- vouching: the checkpoint a writer appends after (proofs/log.py vouch, head_note) ----

TIME = "2026-01-01T00:00:00Z"


def _tree(n: int) -> TileState:
    state = TileState(bundles=False)
    for i in range(n):
        state.append(leaf_hash(bytes([i])))
    return state


@pytest.mark.parametrize("origin", ["another/log", "zzz/log", "battlejudge/unsigned2"])
def test_a_writer_does_not_vouch_for_another_logs_checkpoint(origin: str) -> None:
    # An unsigned log's checkpoints name the origin battlejudge/unsigned; a checkpoint of
    # any other origin (sorting before it or after) is another log's.
    state = _tree(3)
    mine = Checkpoint(origin_for(None), 3, state.root(), TIME).sign(None)
    assert vouch(mine, None, "log").size == 3
    other = Checkpoint(origin, 3, state.root(), TIME).sign(None)
    with pytest.raises(VouchError, match=f"the checkpoint is of log {origin!r}") as e:
        vouch(other, None, "log")
    assert "(an unsigned log: give its --key)" in str(e.value)  # what to do about it


def test_head_note_is_the_checkpoint_of_exactly_this_tree() -> None:
    state = _tree(5)
    note = Checkpoint(origin_for(None), 5, state.root(), TIME).sign(None)
    assert head_note(note, state) == note
    assert (
        head_note(Checkpoint(origin_for(None), 4, _tree(4).root(), TIME).sign(None), state) is None
    )
    assert (
        head_note(Checkpoint(origin_for(None), 5, _tree(4).root(), TIME).sign(None), state) is None
    )
    assert head_note(None, state) is None and head_note("not a checkpoint", state) is None
