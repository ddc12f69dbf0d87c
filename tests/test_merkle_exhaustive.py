"""Every inclusion and consistency proof of every small tree, made and checked (RFC 9162,
2.1.3 and 2.1.4): the proofs the log hands out verify, and no other leaf, size or root
passes with them. Exhaustive up to :data:`N` leaves, so every shape of the right edge
(where the verifiers' inner loops run) is met, not only the ones a random draw finds.
"""

from __future__ import annotations

import pytest

from battlejudge.proofs import merkle as mk

N = 17
"""Sizes 1..N: every tree shape up to two full levels above 8, and 16 + 1."""
LEAVES = [mk.leaf_hash(bytes([i])) for i in range(N)]
TREE = mk.MerkleTree(LEAVES)
ROOTS = [TREE.root(n) for n in range(N + 1)]


@pytest.mark.parametrize("size", range(1, N + 1))
def test_every_inclusion_proof_verifies_and_proves_only_its_leaf(size: int) -> None:
    for index in range(size):
        path = TREE.inclusion_path(index, size)
        assert mk.verify_inclusion(index, size, LEAVES[index], path, ROOTS[size]), (index, size)
        assert path == mk.inclusion_path(index, LEAVES[:size])
        # another leaf, another position, another tree: all refused (RFC 9162, 2.1.3.2)
        other = LEAVES[(index + 1) % N]
        assert not mk.verify_inclusion(index, size, other, path, ROOTS[size])
        for wrong in {index - 1, index + 1} - {-1, size}:
            assert not mk.verify_inclusion(wrong, size, LEAVES[index], path, ROOTS[size])
        assert not mk.verify_inclusion(index, size, LEAVES[index], path, ROOTS[size - 1])
        if path:
            assert not mk.verify_inclusion(index, size, LEAVES[index], path[:-1], ROOTS[size])
            assert not mk.verify_inclusion(
                index, size, LEAVES[index], [*path, path[-1]], ROOTS[size]
            )


@pytest.mark.parametrize("size", range(1, N + 1))
def test_every_consistency_proof_verifies_and_only_for_its_trees(size: int) -> None:
    for first in range(size + 1):
        proof = TREE.consistency_path(first, size)
        assert mk.verify_consistency(first, size, ROOTS[first], ROOTS[size], proof)
        assert proof == mk.consistency_path(first, LEAVES[:size])
        if 0 < first < size:
            assert proof
            other = mk.MerkleTree([*LEAVES[: first - 1], mk.leaf_hash(b"x")]).root()
            assert not mk.verify_consistency(first, size, other, ROOTS[size], proof)
            assert not mk.verify_consistency(first, size, ROOTS[first], ROOTS[size - 1], proof)
            assert not mk.verify_consistency(first, size, ROOTS[first], ROOTS[size], proof[:-1])


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8])
def test_a_leaf_index_outside_the_tree_is_a_value_error(size: int) -> None:
    # RFC 9162, 2.1.3.1: PATH(m, D[n]) is defined for 0 <= m < n only.
    for index in (size, size + 1, size + 7, -1):
        with pytest.raises(ValueError, match=f"leaf index {index} "):
            TREE.inclusion_path(index, size)
        assert not mk.verify_inclusion(index, size, LEAVES[0], [], ROOTS[size])


@pytest.mark.parametrize("size", [1, 2, 4, 8, 16])
def test_perfect_root_is_the_root_of_a_perfect_tree(size: int) -> None:
    # RFC 9162, 2.1.1: MTH of 2**k leaves, the tiles' full subtrees.
    assert mk.perfect_root(LEAVES[:size]) == ROOTS[size]
    halves = [ROOTS[size // 2], mk.MerkleTree(LEAVES[size // 2 : size]).root()]
    if size > 1:
        assert mk.perfect_root(halves) == ROOTS[size]


@pytest.mark.parametrize("size", range(N + 1))
def test_fold_root_of_the_peaks_is_the_root(size: int) -> None:
    # RFC 9162, 2.1.1: a tree is its perfect subtrees left to right, one per binary digit
    # of its size, largest first; folding them from the right gives MTH(D[n]).
    peaks, start = [], 0
    for bit in reversed(range(size.bit_length())):
        if size >> bit & 1:
            peaks.append(mk.perfect_root(LEAVES[start : start + (1 << bit)]))
            start += 1 << bit
    assert mk.fold_root(peaks) == ROOTS[size]


BIG = 600
BIG_LEAVES = [mk.leaf_hash(i.to_bytes(2, "big")) for i in range(BIG)]
BIG_TREE = mk.MerkleTree(BIG_LEAVES)


@pytest.mark.parametrize("size", [257, 300, 511, 512, 513, 600])
def test_proofs_in_trees_of_hundreds_of_leaves(size: int) -> None:
    # The same proofs where the sizes and indexes are past 256, on the right edge too,
    # and a consistency proof from every prefix size around the powers of two.
    root = BIG_TREE.root(size)
    assert root == mk.root_hash(BIG_LEAVES[:size])
    for index in {*range(size - 20, size), 0, 1, 255, 256, 257, size // 2} - {size}:
        path = BIG_TREE.inclusion_path(index, size)
        assert mk.verify_inclusion(index, size, BIG_LEAVES[index], path, root), index
    for first in {f for f in (1, 2, 255, 256, 257, 300, 384, size - 1, size) if f <= size}:
        proof = BIG_TREE.consistency_path(first, size)
        assert mk.verify_consistency(first, size, BIG_TREE.root(first), root, proof), first


@pytest.mark.parametrize("short", [b"", b"x", bytes(31), bytes(33)], ids=["0", "1", "31", "33"])
def test_hashes_of_the_wrong_length_never_verify(short: bytes) -> None:
    # RFC 9162 hashes are SHA-256 (32 bytes): a leaf or root of another length proves
    # nothing, even equal to the other side of the comparison.
    assert not mk.verify_inclusion(0, 1, short, [], short)
    assert not mk.verify_consistency(3, 3, short, short, [])
    path = TREE.inclusion_path(0, 2)
    assert not mk.verify_inclusion(0, 2, LEAVES[0], [short], ROOTS[2])
    assert mk.verify_inclusion(0, 2, LEAVES[0], path, ROOTS[2])
