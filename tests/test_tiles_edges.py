"""Edges of the tiled log (proofs/tiles.py) that the tree tests do not reach: the longest
entry a bundle holds, the last leaf of a tree that ends on a tile boundary, the entries
past the end, and the tile cache's least-recently-used eviction within its budget."""

from __future__ import annotations

import pytest

from battlejudge.proofs.merkle import leaf_hash
from battlejudge.proofs.tiles import (
    MAX_ENTRY,
    WIDTH,
    TileError,
    TileReader,
    TileState,
    _Cache,
    bundle_entries,
    bundle_entry,
    encode_bundle,
)
from battlejudge.solver.errors import InputError


def _log(n: int) -> tuple[TileState, dict[str, bytes]]:
    """A tree of ``n`` leaves with its tiles, full and partial, by path."""
    state, tiles = TileState(), {}
    for i in range(n):
        tiles.update(state.append(leaf_hash(i.to_bytes(2, "big")), b"e%d" % i))
    tiles.update(state.partial())
    return state, tiles


def test_the_longest_entry_fits_a_bundle() -> None:
    # A bundle stores each entry's length in 16 bits: MAX_ENTRY bytes and no more.
    longest = b"x" * MAX_ENTRY
    assert bundle_entries(encode_bundle([longest, b""]), 2) == [longest, b""]
    TileState().append(leaf_hash(longest), longest)
    with pytest.raises(InputError, match=f"at most {MAX_ENTRY}"):
        encode_bundle([longest + b"x"])
    with pytest.raises(InputError, match=f"at most {MAX_ENTRY}"):
        TileState().append(leaf_hash(b""), longest + b"x")


@pytest.mark.parametrize("n", [1, 2, WIDTH - 1, WIDTH, WIDTH + 1, 2 * WIDTH, 2 * WIDTH + 3])
def test_the_last_leaf_is_the_last_appended(n: int) -> None:
    # From the partial level-0 tile, or, when the tree ends on a tile boundary, from the
    # last full tile; None when that tile cannot be read.
    state, tiles = _log(n)
    last = leaf_hash((n - 1).to_bytes(2, "big"))
    assert state.last_leaf(tiles.get) == last
    again = TileState.load(tiles.get, n)
    assert again.last_leaf(tiles.get) == last
    if n % WIDTH == 0:
        assert state.last_leaf(lambda path: None) is None
    assert TileState().last_leaf(tiles.get) is None


@pytest.mark.parametrize("n", [1, WIDTH, WIDTH + 5])
def test_entries_are_read_up_to_the_last_one_only(n: int) -> None:
    _, tiles = _log(n)
    reader = TileReader(tiles.get, n)
    assert reader.entry(n - 1) == b"e%d" % (n - 1)
    assert reader.entry(0) == b"e0"
    for index in (n, n + 1, -1):
        with pytest.raises(TileError, match=f"no entry {index} in a tree of {n} leaves"):
            reader.entry(index)


def test_the_tile_cache_evicts_the_least_recently_used_within_its_budget() -> None:
    cache = _Cache(100)
    cache.put("a", "A", 60)
    cache.put("b", "B", 30)
    assert cache.get("a") == "A"  # now "b" is the least recently used
    cache.put("c", "C", 30)  # 120 > 100: "b" goes
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == ("A", None, "C")
    assert cache.used == 90
    cache.put("a", "A2", 10)  # a path put again counts once, at its new size
    assert cache.used == 40 and cache.get("a") == "A2"
    cache.put("big", "BIG", 500)  # over budget: everything older goes, the newest stays
    assert cache.get("big") == "BIG" and cache.get("a") is None and cache.get("c") is None
    assert cache.used == 500


@pytest.mark.parametrize("extra", [b"\x00", b"\x00\x00", b"junk"])
def test_a_bundle_with_bytes_past_its_entries_is_refused(extra: bytes) -> None:
    # A bundle of ``width`` entries is exactly those entries: anything after the last one
    # means it is not that bundle (bundle_entries and bundle_entry alike).
    data = encode_bundle([b"a", b"bc"])
    assert bundle_entry(data, 2, 1) == b"bc"
    for index in (0, 1):
        with pytest.raises(TileError, match="not a bundle of 2 entries"):
            bundle_entry(data + extra, 2, index)
    with pytest.raises(TileError, match="not a bundle of 2 entries"):
        bundle_entries(data + extra, 2)


def test_a_reader_answers_for_its_own_tree_only() -> None:
    # The log has grown past the reader's size: a leaf beyond that size is refused by name,
    # not read from the bigger tree's tiles.
    _, tiles = _log(2 * WIDTH + 3)
    reader = TileReader(tiles.get, WIDTH)
    assert reader.leaf(WIDTH - 1) == leaf_hash((WIDTH - 1).to_bytes(2, "big"))
    with pytest.raises(TileError, match=f"beyond a tree of {WIDTH} leaves"):
        reader.leaf(WIDTH)
