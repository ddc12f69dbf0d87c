"""The proof log's tiles (C2SP tlog-tiles): paths, the right edge, and proofs computed from
tiles, checked against the in-memory RFC 9162 tree (:class:`MerkleTree`)."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from battlejudge.proofs.merkle import MerkleTree, leaf_hash, verify_consistency, verify_inclusion
from battlejudge.proofs.tiles import (
    DirTiles,
    TileError,
    TileReader,
    TileState,
    bundle_entries,
    encode_bundle,
    parse_tile_path,
    tile_path,
)


def _entry(i: int) -> bytes:
    return b'{"n":%d}' % i


def _grow(n: int, store: dict[str, bytes], commits: list[int]) -> TileState:
    """A tile state grown to ``n`` leaves, committing (writing the partial tiles) at every
    size in ``commits``, as the log does."""
    state = TileState()
    for i in range(n):
        store.update(state.append(leaf_hash(_entry(i)), _entry(i)))
        if state.size in commits:
            store.update(state.partial())
    store.update(state.partial())
    return state


def test_index_paths_are_spelt_as_the_spec_says() -> None:
    """c2sp.org/tlog-tiles, "Merkle Tree": index 1234067 is ``x001/x234/067``."""
    assert tile_path(0, 1234067) == "tile/0/x001/x234/067"
    assert tile_path(2, 5, 17) == "tile/2/005.p/17"
    assert tile_path(None, 1000) == "tile/entries/x001/000"
    assert parse_tile_path("tile/0/x001/x234/067") == (0, 1234067, 256)
    assert parse_tile_path("tile/entries/005.p/3") == (None, 5, 3)


@pytest.mark.parametrize(
    "path",
    [
        "tile/0/5",
        "tile/0/x000/005",
        "tile/00/005",
        "tile/64/000",
        "tile/0/000.p/0",
        "tile/0/000.p/256",
        "tile/0/000.p/007",
        "tile/0/001/002",
        "tile/../000",
        "tile/entries/x1/000",
        "checkpoint",
    ],
)
def test_other_spellings_are_not_tile_paths(path: str) -> None:
    with pytest.raises(TileError):
        parse_tile_path(path)


def test_a_tree_of_70000_has_the_tiles_the_spec_lists() -> None:
    """c2sp.org/tlog-tiles, "Partial Tiles": a tree of size 70,000 is 273 full level-0
    tiles, a partial level-0 tile of width 112, one full level-1 tile, a partial level-1
    tile of width 17 and a partial level-2 tile of width 1."""
    store: dict[str, bytes] = {}
    state = TileState(bundles=False)
    for i in range(70_000):
        store.update(state.append(hashlib.sha256(i.to_bytes(4, "big")).digest()))
    store.update(state.partial())
    level0 = [p for p in store if p.startswith("tile/0/")]
    assert len([p for p in level0 if ".p/" not in p]) == 273
    assert [p for p in level0 if ".p/" in p] == ["tile/0/273.p/112"]
    assert sorted(p for p in store if p.startswith("tile/1/")) == ["tile/1/000", "tile/1/001.p/17"]
    assert [p for p in store if p.startswith("tile/2/")] == ["tile/2/000.p/1"]
    # a tree of 256 is a full level-0 tile and a level-1 tile of width 1
    small = TileState(bundles=False)
    done = {}
    for i in range(256):
        done.update(small.append(leaf_hash(_entry(i))))
    assert set(done) | set(small.partial()) == {"tile/0/000", "tile/1/000.p/1"}


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 1400), st.data())
def test_roots_and_proofs_from_tiles_are_the_trees(n: int, data: st.DataObject) -> None:
    commits = set(data.draw(st.lists(st.integers(1, max(n, 1)), max_size=6)))
    store: dict[str, bytes] = {}
    state = _grow(n, store, commits)
    tree = MerkleTree(leaf_hash(_entry(i)) for i in range(n))
    assert state.root() == tree.root()
    reader = TileReader(store.get, n)
    assert reader.root() == tree.root()
    if n:
        index = data.draw(st.integers(0, n - 1))
        path = reader.inclusion_path(index)
        assert path == tree.inclusion_path(index)
        assert verify_inclusion(index, n, leaf_hash(reader.entry(index)), path, tree.root())
        assert reader.entry(index) == _entry(index)
    for old in sorted(commits | {0, n}):
        if old > n:
            continue
        # a checkpoint at an earlier size: its partial tiles were written then
        assert TileReader(store.get, old).root() == tree.root(old)
        proof = reader.consistency_path(old)
        assert proof == tree.consistency_path(old)
        assert verify_consistency(old, n, tree.root(old), tree.root(), proof)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 1100))
def test_the_right_edge_loads_back_from_its_partial_tiles(n: int) -> None:
    store: dict[str, bytes] = {}
    state = _grow(n, store, set())
    again = TileState.load(store.get, n)
    assert again.edges == state.edges
    assert again.entries == state.entries
    assert again.root() == state.root()
    # and grows on as the original does
    for i in range(n, n + 300):
        assert again.append(leaf_hash(_entry(i)), _entry(i)) == state.append(
            leaf_hash(_entry(i)), _entry(i)
        )
    assert again.root() == state.root()


def test_a_partial_tile_that_is_gone_is_read_from_the_full_one() -> None:
    store: dict[str, bytes] = {}
    _grow(600, store, {100})
    del store["tile/0/000.p/100"]
    del store["tile/entries/000.p/100"]
    reader = TileReader(store.get, 100)
    assert reader.root() == MerkleTree(leaf_hash(_entry(i)) for i in range(100)).root()
    assert reader.entry(99) == _entry(99)


def test_missing_or_wrong_tiles_are_named() -> None:
    store: dict[str, bytes] = {}
    _grow(300, store, set())
    store["tile/0/000"] = store["tile/0/000"][:-1]
    with pytest.raises(TileError, match=r"tile/0/000: 8191 bytes"):
        TileReader(store.get, 300).inclusion_path(3)
    with pytest.raises(TileError, match="missing"):
        TileReader({}.get, 300).root()
    with pytest.raises(TileError, match="missing"):
        TileState.load({}.get, 300)


def test_bundles_round_trip_and_refuse_what_they_cannot_hold() -> None:
    entries = [b"", b"a", b"x" * 300]
    assert bundle_entries(encode_bundle(entries), 3) == entries
    with pytest.raises(TileError):
        bundle_entries(encode_bundle(entries) + b"\0", 3)
    with pytest.raises(TileError):
        bundle_entries(encode_bundle(entries), 4)
    with pytest.raises(ValueError, match="at most 65535"):
        encode_bundle([b"x" * 65536])


def test_tiles_in_a_folder_are_files_at_their_paths(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tiles = DirTiles(tmp_path)
    store: dict[str, bytes] = {}
    state = _grow(513, store, set())
    tiles.write(store, durable=[p for p in store if ".p/" not in p])
    assert (tmp_path / "tile" / "0" / "001").read_bytes() == store["tile/0/001"]
    assert TileReader(tiles.read, 513).root() == state.root()
    assert tiles.read("tile/0/999") is None
    assert not list(tmp_path.rglob("*.tmp"))
