"""The proof log's Merkle tree as C2SP tlog-tiles: tiles of 256 hashes and entry bundles,
written at each commit and read back to prove inclusion and consistency in O(log n) reads.

The format (c2sp.org/tlog-tiles, in our words):

- a **tile** at level ``L`` and index ``N`` holds up to 256 consecutive hashes of the tree
  at height ``8 * L``: at level 0 the leaf hashes, at level ``L`` the roots of the full
  tiles of level ``L - 1``. Its path is ``tile/<L>/<N>``, with ``N`` written in groups of
  three digits, all but the last prefixed by ``x`` (1234067 is ``x001/x234/067``); a tile
  of fewer than 256 hashes (the right edge of the tree) is **partial**, at
  ``tile/<L>/<N>.p/<W>`` for its width ``W``;
- an **entry bundle** ``tile/entries/<N>[.p/<W>]`` holds the entries of the level-0 tile
  of the same index, each as a big-endian 16-bit length and the entry's bytes (here: a
  record's line, so a record is at most 65,535 bytes long).

Every file is immutable once written (a partial tile of width ``W`` is always the same
hashes), so they may be cached for ever. :class:`TileState` is the right edge of a tree
(the partial tile of every level, and the lines of the partial entry bundle): O(log n)
memory, enough to append, to work out the root and to name the files each commit
writes. :class:`TileReader` computes any subtree hash, and so any RFC 9162 proof, from
the few tiles it covers, fetched through a function (a directory, a database, a URL).
This module imports only the standard library and :mod:`battlejudge.proofs.merkle`.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final, Protocol

from battlejudge.proofs.merkle import (
    EMPTY_ROOT,
    HASH_SIZE,
    audit_path,
    fold_root,
    node_hash,
    perfect_root,
    prefix_path,
)
from battlejudge.solver.errors import InputError

__all__ = [
    "MAX_ENTRY",
    "WIDTH",
    "DirTiles",
    "TileError",
    "TileReader",
    "TileState",
    "bundle_entries",
    "encode_bundle",
    "parse_tile_path",
    "tile_path",
]

HEIGHT: Final = 8
WIDTH: Final = 1 << HEIGHT
"""Hashes in a full tile (and entries in a full bundle)."""
MAX_ENTRY: Final = 0xFFFF
"""The longest entry a bundle can hold (its length is a 16-bit number)."""
MAX_LEVEL: Final = 63
_PATH = re.compile(
    r"tile/(entries|0|[1-9][0-9]?)/((?:x[0-9]{3}/)*[0-9]{3})(?:\.p/([1-9][0-9]{0,2}))?"
)


class TileError(InputError):
    """A tile that is missing or is not what its path says (wrong length)."""


# -- paths ----------------------------------------------------------------------------------
def _index_path(n: int) -> str:
    groups = [n % 1000]
    n //= 1000
    while n:
        groups.append(n % 1000)
        n //= 1000
    groups.reverse()
    return "/".join([f"x{g:03d}" for g in groups[:-1]] + [f"{groups[-1]:03d}"])


def tile_path(level: int | None, index: int, width: int = WIDTH) -> str:
    """``tile/<L>/<N>[.p/<W>]``, or ``tile/entries/<N>[.p/<W>]`` for ``level`` None."""
    head = "tile/entries" if level is None else f"tile/{level}"
    tail = "" if width == WIDTH else f".p/{width}"
    return f"{head}/{_index_path(index)}{tail}"


def parse_tile_path(path: str) -> tuple[int | None, int, int]:
    """``(level, index, width)`` of a tile path (level None for an entry bundle), only for
    the one spelling :func:`tile_path` gives; :class:`TileError` for anything else."""
    m = _PATH.fullmatch(path)
    if m is None:
        raise TileError(f"{path[:80]!r} is not a tile path (tile/<L>/<N>[.p/<W>])")
    level = None if m.group(1) == "entries" else int(m.group(1))
    if level is not None and level > MAX_LEVEL:
        raise TileError(f"{path!r}: level {level} is above {MAX_LEVEL}")
    index = int(m.group(2).replace("x", "").replace("/", ""))
    width = int(m.group(3)) if m.group(3) else WIDTH
    if width > WIDTH or tile_path(level, index, width) != path:
        raise TileError(f"{path[:80]!r} is not a tile path in its one spelling")
    return level, index, width


def encode_bundle(entries: Iterable[bytes]) -> bytes:
    """An entry bundle: each entry as a big-endian 16-bit length and its bytes."""
    out = bytearray()
    for e in entries:
        if len(e) > MAX_ENTRY:
            raise InputError(f"an entry of {len(e)} bytes: a log entry is at most {MAX_ENTRY}")
        out += len(e).to_bytes(2, "big") + e
    return bytes(out)


def bundle_entries(data: bytes, width: int, where: str = "entry bundle") -> list[bytes]:
    """The ``width`` entries of a bundle; :class:`TileError` if it holds anything else."""
    out: list[bytes] = []
    at = 0
    while at < len(data) and len(out) < width:
        n = int.from_bytes(data[at : at + 2], "big")
        if at + 2 + n > len(data):
            break
        out.append(data[at + 2 : at + 2 + n])
        at += 2 + n
    if len(out) != width or at != len(data):
        raise TileError(f"{where}: not a bundle of {width} entries")
    return out


def bundle_entry(data: bytes, width: int, index: int, where: str = "entry bundle") -> bytes:
    """Entry ``index`` of a bundle of ``width`` entries, without cutting out the others;
    :class:`TileError` if the bundle is not one of ``width`` entries."""
    at, found = 0, b""
    for i in range(width):
        n = int.from_bytes(data[at : at + 2], "big")
        if at + 2 + n > len(data):
            raise TileError(f"{where}: not a bundle of {width} entries")
        if i == index:
            found = data[at + 2 : at + 2 + n]
        at += 2 + n
    if at != len(data) or not 0 <= index < width:
        raise TileError(f"{where}: not a bundle of {width} entries")
    return found


def _split_hashes(data: bytes, width: int, where: str) -> list[bytes]:
    if len(data) != width * HASH_SIZE:
        raise TileError(
            f"{where}: {len(data)} bytes where a tile of {width} hashes has {width * HASH_SIZE}"
        )
    return [data[i : i + HASH_SIZE] for i in range(0, len(data), HASH_SIZE)]


def _peaks(rows: Sequence[Sequence[bytes]]) -> list[bytes]:
    """The perfect subtrees of a tree whose levels' partial tiles are ``rows`` (level 0
    first), biggest first."""
    peaks = []
    for row in reversed(rows):
        at = 0
        for j in range(HEIGHT - 1, -1, -1):
            if len(row) >> j & 1:
                peaks.append(perfect_root(row[at : at + (1 << j)]))
                at += 1 << j
    return peaks


# -- the right edge -------------------------------------------------------------------------
class TileState:
    """The right edge of a tree kept as tiles: for each level, the hashes of its partial
    tile (``edges[L]``, fewer than 256), and, when ``bundles`` is on, the entries of the
    partial entry bundle. Appending a leaf completes the tiles it closes; they are
    handed back, to be written."""

    def __init__(self, bundles: bool = True) -> None:
        self.size = 0
        self.edges: list[list[bytes]] = [[]]
        self.entries: list[bytes] | None = [] if bundles else None

    def append(self, leaf: bytes, entry: bytes | None = None) -> dict[str, bytes]:
        """Add a leaf hash (and its entry, for the bundles); returns the full tiles and
        bundle this closed, by path."""
        done: dict[str, bytes] = {}
        if self.entries is not None:
            if entry is None:
                raise ValueError("a tile state that keeps bundles needs every entry")
            if len(entry) > MAX_ENTRY:
                raise InputError(
                    f"a record of {len(entry)} bytes: a log entry is at most {MAX_ENTRY}"
                )
            self.entries.append(entry)
        self.size += 1
        level, h = 0, leaf
        while True:
            row = self.edges[level]
            row.append(h)
            if len(row) < WIDTH:
                return done
            index = (self.size >> (HEIGHT * (level + 1))) - 1
            done[tile_path(level, index)] = b"".join(row)
            if level == 0 and self.entries is not None:
                done[tile_path(None, index)] = encode_bundle(self.entries)
                self.entries = []
            h = perfect_root(row)
            self.edges[level] = []
            level += 1
            if level == len(self.edges):
                self.edges.append([])

    def copy(self) -> TileState:
        """An independent copy of this right edge (O(log n) hashes)."""
        twin = TileState(bundles=self.entries is not None)
        twin.size = self.size
        twin.edges = [list(row) for row in self.edges]
        twin.entries = None if self.entries is None else list(self.entries)
        return twin

    def root(self) -> bytes:
        """The RFC 9162 root of the tree of :attr:`size` leaves."""
        return fold_root(_peaks(self.edges)) if self.size else EMPTY_ROOT

    def partial(self) -> dict[str, bytes]:
        """The partial tiles (and bundle) of the tree at its size, by path."""
        out = {}
        for level, row in enumerate(self.edges):
            if row:
                index = self.size >> (HEIGHT * (level + 1))
                out[tile_path(level, index, len(row))] = b"".join(row)
        if self.entries:
            out[tile_path(None, self.size >> HEIGHT, len(self.entries))] = encode_bundle(
                self.entries
            )
        return out

    def last_leaf(self, fetch: Callable[[str], bytes | None]) -> bytes | None:
        """The hash of the last leaf (from the partial level-0 tile, else the last full one)."""
        if not self.size:
            return None
        if self.edges[0]:
            return self.edges[0][-1]
        data = fetch(tile_path(0, (self.size >> HEIGHT) - 1))
        return data[-HASH_SIZE:] if data and len(data) == WIDTH * HASH_SIZE else None

    @classmethod
    def load(
        cls, fetch: Callable[[str], bytes | None], size: int, bundles: bool = True
    ) -> TileState:
        """The right edge of the tree of ``size`` leaves, read from its partial tiles
        (:class:`TileError` when one is missing or wrong: rebuild the tiles)."""
        state = cls(bundles)
        state.size = size
        levels = max(1, (size.bit_length() + HEIGHT - 1) // HEIGHT)
        state.edges = []
        for level in range(levels):
            width = (size >> (HEIGHT * level)) & (WIDTH - 1)
            row: list[bytes] = []
            if width:
                path = tile_path(level, size >> (HEIGHT * (level + 1)), width)
                data = fetch(path)
                if data is None:
                    raise TileError(f"{path}: missing")
                row = _split_hashes(data, width, path)
            state.edges.append(row)
        if bundles:
            width = size & (WIDTH - 1)
            state.entries = []
            if width:
                path = tile_path(None, size >> HEIGHT, width)
                data = fetch(path)
                if data is None:
                    raise TileError(f"{path}: missing")
                state.entries = bundle_entries(data, width, path)
        return state


# -- reading proofs from tiles --------------------------------------------------------------
class _Cache:
    """An LRU of parsed tiles (and their inner hashes) and entry bundles, by path (tiles
    never change), holding at most ``budget`` bytes (as counted by the caller)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        self.items: OrderedDict[str, tuple[object, int]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, path: str) -> object | None:
        with self.lock:
            item = self.items.get(path)
            if item is None:
                return None
            self.items.move_to_end(path)
            return item[0]

    def put(self, path: str, item: object, size: int) -> None:
        with self.lock:
            old = self.items.pop(path, None)
            if old is not None:
                self.used -= old[1]
            self.items[path] = (item, size)
            self.used += size
            while self.used > self.budget and len(self.items) > 1:
                self.used -= self.items.popitem(last=False)[1][1]


SHARED_CACHE: Final = _Cache(64 << 20)
"""Parsed tiles shared by the readers of one process (the service's proof route): 64 MiB."""


class TileReader:
    """Subtree hashes, roots and RFC 9162 proofs of the tree of ``size`` leaves, computed
    from its tiles: a proof reads at most a few tiles per level (three for a million
    records), each once. ``fetch(path)`` returns a tile's bytes or None; a partial tile
    that is gone is taken from the start of the full tile that replaced it. ``key``
    separates the cache entries of different logs sharing ``cache``."""

    def __init__(
        self,
        fetch: Callable[[str], bytes | None],
        size: int,
        *,
        key: str = "",
        cache: _Cache | None = None,
    ) -> None:
        self.fetch = fetch
        self.size = size
        self.key = key
        self.cache = cache if cache is not None else _Cache(4 << 20)

    def _width(self, level: int, index: int) -> int:
        covered = self.size >> (HEIGHT * level)  # hashes at this level
        if covered >= (index + 1) * WIDTH:
            return WIDTH
        width = covered - index * WIDTH
        if width <= 0:
            raise TileError(f"tile {level}/{index} is beyond a tree of {self.size} leaves")
        return width

    def _get(self, level: int | None, index: int, width: int) -> bytes:
        path = tile_path(level, index, width)
        data = self.fetch(path)
        if data is None and width < WIDTH:
            full = self.fetch(tile_path(level, index))
            if full is not None and level is not None:
                data = full[: width * HASH_SIZE]
            elif full is not None:
                data = encode_bundle(bundle_entries(full, WIDTH, path)[:width])
        if data is None:
            raise TileError(f"{path}: missing")
        return data

    def _rows(self, level: int, index: int) -> list[list[bytes]]:
        """The tile's hashes and every complete node above them inside the tile."""
        width = self._width(level, index)
        path = tile_path(level, index, width)
        cached = self.cache.get(self.key + path)
        if cached is not None:
            return cached  # type: ignore[return-value]
        row = _split_hashes(self._get(level, index, width), width, path)
        rows = [row]
        while len(row) > 1:
            row = [node_hash(row[i], row[i + 1]) for i in range(0, len(row) - 1, 2)]
            rows.append(row)
        self.cache.put(self.key + path, rows, 2 * width * (HASH_SIZE + 40))
        return rows

    def subtree(self, start: int, end: int) -> bytes:
        """MTH(D[start:end]) for the ranges RFC 9162's recursion reaches."""
        n = end - start
        if n <= 0:
            return EMPTY_ROOT
        if n & (n - 1):
            k = 1 << ((n - 1).bit_length() - 1)
            return node_hash(self.subtree(start, start + k), self.subtree(start + k, end))
        height = n.bit_length() - 1
        level, j = divmod(height, HEIGHT)
        at = start >> (HEIGHT * level)  # index among this level's hashes
        rows = self._rows(level, at >> HEIGHT)
        return rows[j][(at & (WIDTH - 1)) >> j]

    def leaf(self, index: int) -> bytes:
        """The hash of leaf ``index``."""
        return self.subtree(index, index + 1)

    def root(self, size: int | None = None) -> bytes:
        """MTH of the first ``size`` leaves (all by default)."""
        return self.subtree(0, self.size if size is None else size)

    def inclusion_path(self, index: int) -> list[bytes]:
        """PATH(index, D[size]) (RFC 9162, 2.1.3.1)."""
        return audit_path(self.subtree, index, self.size)

    def consistency_path(self, first: int) -> list[bytes]:
        """PROOF(first, D[size]) (RFC 9162, 2.1.4.1)."""
        return prefix_path(self.subtree, first, self.size)

    def entry(self, index: int) -> bytes:
        """Entry ``index``, from its bundle."""
        if not 0 <= index < self.size:
            raise TileError(f"no entry {index} in a tree of {self.size} leaves")
        bundle, at = divmod(index, WIDTH)
        width = self._width(0, bundle)
        path = tile_path(None, bundle, width)
        cached = self.cache.get(self.key + path)
        if cached is None:
            cached = self._get(None, bundle, width)
            self.cache.put(self.key + path, cached, len(cached) + 40)
        data: bytes = cached  # type: ignore[assignment]
        return bundle_entry(data, width, at, path)


# -- where tiles live -----------------------------------------------------------------------
class TileStore(Protocol):
    """Somewhere tiles are kept: read one by path, write several."""

    def read(self, path: str) -> bytes | None:
        """The tile's bytes, or None when it is not there."""
        ...

    def write(self, tiles: Mapping[str, bytes], durable: Iterable[str] = ()) -> None:
        """Write tiles by path (the ``durable`` ones synced to disk before returning)."""
        ...


class DirTiles:
    """Tiles as files under a directory, at their own paths (``DIR/tile/0/x001/234``), so
    that any static web server can serve the directory as a tiled log. Each file is
    written whole (a temporary file renamed over); full tiles are synced to disk, since
    they are never written again; partial ones are checked and rewritten when the log is
    opened. The folders are not synced: a tile whose name a crash took back is missing,
    which a reader names and the next writer's rebuild mends."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self._folders: set[Path] = set()  # made already

    def read(self, path: str) -> bytes | None:
        """The file's bytes, or None."""
        try:
            with open(self.root / path, "rb") as f:
                return f.read()  # our own files: a tile or a bundle, at most ~16 MiB
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    def write(self, tiles: Mapping[str, bytes], durable: Iterable[str] = ()) -> None:
        """Write each tile (atomically); fsync the ``durable`` ones."""
        sync = set(durable)
        for path, data in tiles.items():
            target = self.root / path
            if target.parent not in self._folders:
                target.parent.mkdir(parents=True, exist_ok=True)
                self._folders.add(target.parent)
            tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
            try:
                fd = os.open(tmp, flags, 0o644)
            except FileNotFoundError:  # the folder was removed since (a rebuild elsewhere)
                target.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(tmp, flags, 0o644)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                if path in sync:
                    os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, target)
