"""Merkle tree hashing, inclusion and consistency proofs of RFC 9162 (Certificate
Transparency 2.0), section 2.1, with SHA-256.

- leaf hash: ``SHA-256(0x00 || leaf bytes)``; node hash: ``SHA-256(0x01 || left || right)``;
  the hash of the empty tree is ``SHA-256()`` (RFC 9162, 2.1.1);
- :func:`inclusion_path` and :func:`consistency_path` build the proofs of 2.1.3.1 and
  2.1.4.1; :func:`verify_inclusion` and :func:`verify_consistency` are the verification
  algorithms of 2.1.3.2 and 2.1.4.2, step by step.

:class:`MerkleTree` keeps the leaf hashes and the hash of every complete (power-of-two,
aligned) subtree, so appending is amortised O(1) and a root or proof costs O(log n) hashes.
This module imports only the standard library: a proof is checked without the solver.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Iterable, Sequence
from typing import Final

__all__ = [
    "EMPTY_ROOT",
    "MerkleTree",
    "audit_path",
    "consistency_path",
    "fold_root",
    "inclusion_path",
    "leaf_hash",
    "node_hash",
    "perfect_root",
    "prefix_path",
    "root_hash",
    "verify_consistency",
    "verify_inclusion",
]

HASH_SIZE: Final = 32
EMPTY_ROOT: Final = hashlib.sha256(b"").digest()
"""MTH({}): the hash of the empty tree (RFC 9162, 2.1.1)."""


def leaf_hash(data: bytes) -> bytes:
    """MTH({d0}) = SHA-256(0x00 || d0) (RFC 9162, 2.1.1)."""
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """SHA-256(0x01 || left || right) (RFC 9162, 2.1.1)."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than ``n`` (n > 1): the size of the left subtree."""
    return 1 << ((n - 1).bit_length() - 1)


class MerkleTree:
    """The leaf hashes of a log and the hashes of its complete subtrees.

    ``levels[h][i]`` is the hash of leaves ``[i * 2**h, (i + 1) * 2**h)``; level 0 holds
    the leaf hashes. Every hash RFC 9162's recursive definitions need is one of these or
    is combined from O(log n) of them.
    """

    def __init__(self, leaf_hashes: Iterable[bytes] = ()) -> None:
        self.levels: list[list[bytes]] = [[]]
        for h in leaf_hashes:
            self.append(h)

    def __len__(self) -> int:
        return len(self.levels[0])

    def append(self, leaf: bytes) -> None:
        """Add a leaf hash (``leaf_hash(data)``), completing the subtrees it closes."""
        level, h = 0, leaf
        while True:
            row = self.levels[level]
            row.append(h)
            if len(row) % 2:
                return
            h = node_hash(row[-2], row[-1])
            level += 1
            if level == len(self.levels):
                self.levels.append([])

    def leaf(self, index: int) -> bytes:
        """The leaf hash at ``index`` (RFC 9162, 2.1.1)."""
        return self.levels[0][index]

    def subtree(self, start: int, end: int) -> bytes:
        """MTH(D[start:end]) for a range the RFC's recursion reaches: ``start`` a
        multiple of the largest power of two not above ``end - start``."""
        n = end - start
        if n == 0:
            return EMPTY_ROOT
        if n & (n - 1) == 0:  # a complete subtree: stored
            return self.levels[n.bit_length() - 1][start // n]
        k = _split(n)
        return node_hash(self.subtree(start, start + k), self.subtree(start + k, end))

    def root(self, size: int | None = None) -> bytes:
        """MTH of the first ``size`` leaves (all of them by default)."""
        n = len(self) if size is None else size
        self._check_size(n)
        return self.subtree(0, n)

    def _check_size(self, size: int) -> None:
        if not 0 <= size <= len(self):
            raise ValueError(f"tree size {size} is not between 0 and {len(self)}")

    def inclusion_path(self, index: int, size: int | None = None) -> list[bytes]:
        """PATH(m, D[n]) (RFC 9162, 2.1.3.1): the audit path of leaf ``index`` in the
        tree of the first ``size`` leaves, bottom up."""
        n = len(self) if size is None else size
        self._check_size(n)
        return audit_path(self.subtree, index, n)

    def consistency_path(self, first: int, size: int | None = None) -> list[bytes]:
        """PROOF(m, D[n]) (RFC 9162, 2.1.4.1): the hashes that show the tree of the
        first ``first`` leaves is a prefix of the tree of ``size`` leaves. Empty when
        ``first`` is 0 or ``size`` (nothing to prove)."""
        n = len(self) if size is None else size
        self._check_size(n)
        return prefix_path(self.subtree, first, n)


Subtree = Callable[[int, int], bytes]
"""``subtree(start, end)``: MTH(D[start:end]) for the ranges RFC 9162's recursion reaches
(``start`` a multiple of the largest power of two not above ``end - start``): what the
path algorithms below ask of a tree, kept in memory (:class:`MerkleTree`) or in tiles
(:mod:`battlejudge.proofs.tiles`)."""


def audit_path(subtree: Subtree, index: int, n: int) -> list[bytes]:
    """PATH(index, D[n]) (RFC 9162, 2.1.3.1) over any store of subtree hashes."""
    if not 0 <= index < n:
        raise ValueError(f"leaf index {index} is not in a tree of {n} leaves")
    path: list[bytes] = []
    start, end, m = 0, n, index
    while end - start > 1:  # walk down; the RFC appends siblings on the way back up
        k = _split(end - start)
        if m < k:
            path.append(subtree(start + k, end))
            end = start + k
        else:
            path.append(subtree(start, start + k))
            start, m = start + k, m - k
    path.reverse()
    return path


def prefix_path(subtree: Subtree, first: int, n: int) -> list[bytes]:
    """PROOF(first, D[n]) (RFC 9162, 2.1.4.1) over any store of subtree hashes; empty
    when ``first`` is 0 or ``n``."""
    if not 0 <= first <= n:
        raise ValueError(f"tree size {first} is not between 0 and {n}")
    if first in (0, n):
        return []
    path: list[bytes] = []
    start, end, m, whole = 0, n, first, True
    while m != end - start:
        k = _split(end - start)
        if m <= k:
            path.append(subtree(start + k, end))
            end = start + k
        else:
            path.append(subtree(start, start + k))
            start, m, whole = start + k, m - k, False
    if not whole:  # SUBPROOF(m, D[m], false) = {MTH(D[m])}
        path.append(subtree(start, end))
    path.reverse()
    return path


def perfect_root(hashes: Sequence[bytes]) -> bytes:
    """MTH of consecutive subtree hashes of equal size, as many as a power of two
    (a tile's hashes, or part of them): the root of the perfect tree over them."""
    row = list(hashes)
    while len(row) > 1:
        row = [node_hash(row[i], row[i + 1]) for i in range(0, len(row), 2)]
    return row[0]


def fold_root(peaks: Sequence[bytes]) -> bytes:
    """MTH of a tree given its perfect subtrees left to right, each smaller than the one
    before (the binary digits of its size): RFC 9162's recursion, folded from the right."""
    if not peaks:
        return EMPTY_ROOT
    root = peaks[-1]
    for h in reversed(peaks[:-1]):
        root = node_hash(h, root)
    return root


def root_hash(leaves: Sequence[bytes]) -> bytes:
    """MTH of the given leaf hashes."""
    return MerkleTree(leaves).root()


def inclusion_path(index: int, leaves: Sequence[bytes]) -> list[bytes]:
    """PATH(index, D[n]) over the given leaf hashes."""
    return MerkleTree(leaves).inclusion_path(index)


def consistency_path(first: int, leaves: Sequence[bytes]) -> list[bytes]:
    """PROOF(first, D[n]) over the given leaf hashes."""
    return MerkleTree(leaves).consistency_path(first)


def _equal(a: bytes, b: bytes) -> bool:
    return len(a) == HASH_SIZE and hmac.compare_digest(a, b)


def verify_inclusion(
    index: int, size: int, leaf: bytes, path: Sequence[bytes], root: bytes
) -> bool:
    """Whether ``path`` proves the leaf hash ``leaf`` is leaf ``index`` of the tree of
    ``size`` leaves whose root is ``root``: the algorithm of RFC 9162, 2.1.3.2."""
    if not 0 <= index < size or any(len(p) != HASH_SIZE for p in path):
        return False
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while not (fn & 1 or fn == 0):
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and _equal(r, root)


def verify_consistency(
    first: int, second: int, first_root: bytes, second_root: bytes, path: Sequence[bytes]
) -> bool:
    """Whether ``path`` proves the tree of ``first`` leaves (root ``first_root``) is a
    prefix of the tree of ``second`` leaves (root ``second_root``): the algorithm of
    RFC 9162, 2.1.4.2. Equal sizes need equal roots and an empty path; the empty tree is
    a prefix of every tree (an empty path)."""
    if not 0 <= first <= second or any(len(p) != HASH_SIZE for p in path):
        return False
    if first == second:
        return not path and _equal(first_root, second_root)
    if first == 0:
        return not path
    if not path:
        return False
    hashes = list(path)
    if first & (first - 1) == 0:  # an exact power of two: the old root is a node
        hashes.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = hashes[0]
    for c in hashes[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while not (fn & 1 or fn == 0):
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and _equal(fr, first_root) and _equal(sr, second_root)
