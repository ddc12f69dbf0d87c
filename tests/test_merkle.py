"""RFC 9162 Merkle hashing and proofs against published Certificate Transparency vectors,
and against the RFC's recursive definitions written out plainly (an oracle)."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from battlejudge.proofs import merkle as mk

# Source of every vector below: the Certificate Transparency reference implementation,
# github.com/transparency-dev/merkle, files proof/verify_test.go (leaves, roots,
# inclusionProofs, consistencyProofs; leaf numbers there count from 1) and
# rfc6962/rfc6962_test.go (TestRFC6962Hasher). RFC 9162 hashes exactly as RFC 6962 does.
LEAVES = [
    bytes.fromhex(h)
    for h in (
        "",
        "00",
        "10",
        "2021",
        "3031",
        "40414243",
        "5051525354555657",
        "606162636465666768696a6b6c6d6e6f",
    )
]
ROOTS = [
    bytes.fromhex(h)
    for h in (
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
        "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
        "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
        "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
        "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
    )
]
# (leaf number counting from 1, tree size, audit path)
INCLUSION = [
    (1, 1, []),
    (
        1,
        8,
        [
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        6,
        8,
        [
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (3, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
    (
        2,
        5,
        [
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
]
# (first size, second size, consistency proof)
CONSISTENCY = [
    (1, 1, []),
    (
        1,
        8,
        [
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        6,
        8,
        [
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (
        2,
        5,
        [
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
    (
        6,
        7,
        [
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
]
SOME_HASH = bytes.fromhex("abacaba000000000000000000000000000000000000000000060061e00123456")


def _tree(n: int) -> mk.MerkleTree:
    return mk.MerkleTree(mk.leaf_hash(d) for d in LEAVES[:n])


def test_hasher_vectors() -> None:
    # rfc6962_test.go, TestRFC6962Hasher
    assert mk.EMPTY_ROOT.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert mk.leaf_hash(b"").hex() == (
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"
    )
    assert mk.leaf_hash(b"L123456").hex() == (
        "395aa064aa4c29f7010acfe3f25db9485bbd4b91897b6ad7ad547639252b4d56"
    )
    assert mk.node_hash(b"N123", b"N456").hex() == (
        "aa217fe888e47007fa15edab33c2b492a722cb106c64667fc2b044444de66bbb"
    )


@pytest.mark.parametrize("size", range(1, 9))
def test_roots(size: int) -> None:
    tree = _tree(8)
    assert tree.root(size) == ROOTS[size - 1]
    assert _tree(size).root() == ROOTS[size - 1]
    assert mk.root_hash([mk.leaf_hash(d) for d in LEAVES[:size]]) == ROOTS[size - 1]


def test_empty_tree() -> None:
    assert mk.MerkleTree().root() == mk.EMPTY_ROOT


@pytest.mark.parametrize(("leaf", "size", "path"), INCLUSION)
def test_inclusion_vectors(leaf: int, size: int, path: list[str]) -> None:
    want = [bytes.fromhex(h) for h in path]
    assert _tree(8).inclusion_path(leaf - 1, size) == want
    h = mk.leaf_hash(LEAVES[leaf - 1])
    root = ROOTS[size - 1]
    assert mk.verify_inclusion(leaf - 1, size, h, want, root)
    # the probes of verify_test.go's corruptInclusionProof: every one must fail
    probes = [
        (leaf - 2, size, h, want, root),
        (leaf, size, h, want, root),
        ((leaf - 1) ^ 2, size, h, want, root),
        (leaf - 1, size * 2, h, want, root),
        (leaf - 1, size // 2, h, want, root),
        (leaf - 1, size, b"WrongLeaf", want, root),
        (leaf - 1, size, h, want, mk.EMPTY_ROOT),
        (leaf - 1, size, h, want, SOME_HASH),
        (leaf - 1, size, h, [*want, b""], root),
        (leaf - 1, size, h, [*want, root], root),
        (leaf - 1, size, h, [b"", *want], root),
        (leaf - 1, size, h, [root, *want], root),
    ]
    for i in range(len(want)):
        flipped = list(want)
        flipped[i] = bytes([flipped[i][0] ^ 8]) + flipped[i][1:]
        probes.append((leaf - 1, size, h, flipped, root))
    if want:
        probes.append((leaf - 1, size, h, want[:-1], root))
    if len(want) > 1:
        probes.append((leaf - 1, size, h, [want[0], SOME_HASH, *want[1:]], root))
    for index, n, lh, p, r in probes:
        assert not mk.verify_inclusion(index, n, lh, p, r), (index, n, lh, p, r)


@pytest.mark.parametrize(("first", "second", "path"), CONSISTENCY)
def test_consistency_vectors(first: int, second: int, path: list[str]) -> None:
    want = [bytes.fromhex(h) for h in path]
    assert _tree(8).consistency_path(first, second) == want
    r1, r2 = ROOTS[first - 1], ROOTS[second - 1]
    assert mk.verify_consistency(first, second, r1, r2, want)
    if not want:
        return
    # the probes of verify_test.go's corruptConsistencyProof: every one must fail
    probes = [
        (first - 1, second, r1, r2, want),
        (first + 1, second, r1, r2, want),
        (first ^ 2, second, r1, r2, want),
        (first, second * 2, r1, r2, want),
        (first, second // 2, r1, r2, want),
        (first, second, b"WrongRoot", r2, want),
        (first, second, r1, b"WrongRoot", want),
        (first, second, r2, r1, want),
        (first, second, r1, r2, []),
        (first, second, r1, r2, [*want, b""]),
        (first, second, r1, r2, [*want, r1]),
        (first, second, r1, r2, [*want, r2]),
        (first, second, r1, r2, [b"", *want]),
        (first, second, r1, r2, [r1, *want]),
        (first, second, r1, r2, [r2, *want]),
        (first, second, r1, r2, [want[0], *want]),
        (first, second, r1, r2, want[:-1]),
    ]
    for i in range(len(want)):
        flipped = list(want)
        flipped[i] = bytes([flipped[i][0] ^ 16]) + flipped[i][1:]
        probes.append((first, second, r1, r2, flipped))
    for m, n, a, b, p in probes:
        assert not mk.verify_consistency(m, n, a, b, p), (m, n, a, b, p)


def test_consistency_edge_cases() -> None:
    # verify_test.go, TestVerifyConsistency
    root1, root2 = b"don't care 1", b"don't care 2"
    empty = mk.EMPTY_ROOT
    assert mk.verify_consistency(0, 0, empty, empty, [])
    assert mk.verify_consistency(0, 1, root1, root2, [])
    assert not mk.verify_consistency(1, 0, root1, root2, [])
    assert not mk.verify_consistency(2, 1, root1, root2, [])
    assert not mk.verify_consistency(1, 2, root1, root2, [])
    assert not mk.verify_consistency(0, 0, empty, root2, [])
    assert not mk.verify_consistency(0, 0, empty, empty, [empty])
    assert not mk.verify_consistency(0, 1, empty, empty, [empty])
    assert not mk.verify_consistency(1, 1, empty, empty, [empty])


# -- the RFC's recursive definitions, written out as an oracle ------------------------------
def _mth(d: list[bytes]) -> bytes:
    n = len(d)
    if n == 0:
        return hashlib.sha256(b"").digest()
    if n == 1:
        return hashlib.sha256(b"\x00" + d[0]).digest()
    k = 1
    while k * 2 < n:
        k *= 2
    return hashlib.sha256(b"\x01" + _mth(d[:k]) + _mth(d[k:])).digest()


def _path(m: int, d: list[bytes]) -> list[bytes]:
    n = len(d)
    if n == 1:
        return []
    k = 1
    while k * 2 < n:
        k *= 2
    if m < k:
        return [*_path(m, d[:k]), _mth(d[k:])]
    return [*_path(m - k, d[k:]), _mth(d[:k])]


def _subproof(m: int, d: list[bytes], whole: bool) -> list[bytes]:
    n = len(d)
    if m == n:
        return [] if whole else [_mth(d)]
    k = 1
    while k * 2 < n:
        k *= 2
    if m <= k:
        return [*_subproof(m, d[:k], whole), _mth(d[k:])]
    return [*_subproof(m - k, d[k:], False), _mth(d[:k])]


@given(st.lists(st.binary(max_size=4), min_size=1, max_size=40), st.data())
def test_against_the_rfc_definitions(data: list[bytes], draw: st.DataObject) -> None:
    tree = mk.MerkleTree(mk.leaf_hash(d) for d in data)
    n = len(data)
    size = draw.draw(st.integers(1, n))
    index = draw.draw(st.integers(0, size - 1))
    first = draw.draw(st.integers(1, size))
    assert tree.root(size) == _mth(data[:size])
    path = tree.inclusion_path(index, size)
    assert path == _path(index, data[:size])
    assert mk.verify_inclusion(index, size, mk.leaf_hash(data[index]), path, tree.root(size))
    proof = tree.consistency_path(first, size)
    assert proof == (_subproof(first, data[:size], True) if first < size else [])
    assert mk.verify_consistency(first, size, tree.root(first), tree.root(size), proof)
    if index + 1 < size:  # the path of one leaf does not prove another
        other = mk.leaf_hash(data[index + 1])
        assert data[index + 1] == data[index] or not mk.verify_inclusion(
            index, size, other, path, tree.root(size)
        )


def test_bad_sizes_are_value_errors() -> None:
    tree = _tree(3)
    with pytest.raises(ValueError, match="tree size 4"):
        tree.root(4)
    with pytest.raises(ValueError, match="leaf index 3"):
        tree.inclusion_path(3)
    with pytest.raises(ValueError, match="tree size 4"):
        tree.consistency_path(4, 3)
