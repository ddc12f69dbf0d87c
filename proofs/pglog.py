"""Proof logs in PostgreSQL: the same records, chain, Merkle tree and checkpoints as a file
log, shared by writers on many machines (``--log postgresql://user:pass@host/db``).

Three tables (``battlejudge log init URL`` makes them; a schema of the URL's
``search_path`` holds one log):

- ``battlejudge_log(seq, line, digest, leaf)``: one row per record; ``line`` is the
  record's exact line (what its hash, signature and Merkle leaf cover), ``digest`` its
  SHA-256 (the next record's ``prev``), ``leaf`` its RFC 9162 leaf hash;
- ``battlejudge_checkpoint(size, note)``: the signed checkpoint written with every batch;
- ``battlejudge_meta(key, value)``: the log format version (``format``);
- ``battlejudge_tile(level, idx, width, data)``: the tree's hash tiles (C2SP tlog-tiles,
  :mod:`battlejudge.proofs.tiles`), written in each append's transaction; the entry
  bundles are the log's rows, read in ranges.

Appends are serialized by the database, not by a lock on any one machine: each batch is
one transaction that first takes a transaction-scoped advisory lock, reads the rows added
since this writer last looked, chains and inserts its records with the next ``seq``
numbers, and inserts the new checkpoint. A writer killed mid-batch loses only that
uncommitted transaction, so the seqs have no gaps and no duplicates (``seq`` is the
primary key besides).

Needs the ``postgres`` extra (psycopg 3); imported only when a URL is used.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from battlejudge.proofs.backends import StoredLog, StoreError, redact, redact_message, redact_urls
from battlejudge.proofs.checkpoint import Checkpoint, origin_for, parse_checkpoint
from battlejudge.proofs.log import (
    FORMAT_VERSION,
    GENESIS,
    Cosigner,
    LogRecord,
    PreparedRecord,
    Problem,
    VouchError,
    chain_any,
    claim_record,
    continue_chain,
    newer_format,
    parse_line,
    recovery,
    sha256_hex,
    utc_now,
    vouch,
)
from battlejudge.proofs.merkle import leaf_hash
from battlejudge.proofs.tiles import (
    MAX_ENTRY,
    WIDTH,
    TileError,
    TileReader,
    TileState,
    encode_bundle,
    parse_tile_path,
)
from battlejudge.solver.errors import InputError

__all__ = ["PgProofLog", "init_pg", "read_pg"]

_logger = logging.getLogger(__name__)

LOCK_KEY: Final = 0x6A75_6467_6C6F_6721 & 0x7FFF_FFFF_FFFF_FFFF
"""The advisory lock every writer takes before appending (any fixed 64-bit number)."""
CONNECT_TIMEOUT: Final = 5
"""Seconds to wait for the database before giving up on it."""

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS battlejudge_meta (
    key text PRIMARY KEY,
    value text NOT NULL
);
CREATE TABLE IF NOT EXISTS battlejudge_log (
    seq bigint PRIMARY KEY CHECK (seq >= 0),
    line text NOT NULL,
    digest text NOT NULL,
    leaf bytea NOT NULL
);
CREATE TABLE IF NOT EXISTS battlejudge_checkpoint (
    size bigint PRIMARY KEY,
    note text NOT NULL
);
"""
TILE_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS battlejudge_tile (
    level smallint NOT NULL,
    idx bigint NOT NULL,
    width smallint NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (level, idx, width)
);
"""


def _psycopg(url: str) -> Any:
    try:
        import psycopg
    except ImportError:
        raise StoreError(
            f"{redact(url)}: PostgreSQL logs need the postgres extra: "
            "pip install 'battlejudge[postgres]'"
        ) from None
    return psycopg


def _one_line(error: BaseException, url: str | None = None) -> str:
    """The error's message on one line, with no secret: libpq and psycopg may quote the
    connection string or a piece of it (a badly escaped password, a host that is really
    the end of one), so every URL in it is redacted and, given ``url``, a message that
    still holds one of its secrets is withheld
    (:func:`~battlejudge.proofs.store.redact_message`)."""
    text = " ".join(part.strip() for part in str(error).splitlines() if part.strip())
    text = text or type(error).__name__
    return redact_urls(text) if url is None else redact_message(text, url)


def connect(url: str) -> Any:
    """A connection (autocommit off), or :class:`StoreError` naming the URL without its
    password: unreachable, refused, wrong credentials, no such database, a URL libpq
    cannot parse. The message never holds a secret of the URL."""
    psycopg = _psycopg(url)
    try:
        return psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT)
    except (psycopg.ProgrammingError, ValueError) as e:  # a URL libpq cannot parse
        raise StoreError(f"{redact(url)}: not a PostgreSQL URL: {_one_line(e, url)}") from None
    except psycopg.Error as e:
        raise StoreError(f"{redact(url)}: cannot connect: {_one_line(e, url)}") from None


def _check_format(conn: Any, url: str) -> None:
    """The log's tables exist and hold a format this code reads."""
    row = conn.execute("SELECT to_regclass('battlejudge_log'), to_regclass('battlejudge_meta')")
    log_table, meta_table = row.fetchone()
    if log_table is None or meta_table is None:
        raise StoreError(
            f"{redact(url)}: no proof log there (table battlejudge_log is missing): "
            f"make one with battlejudge log init URL"
        )
    got = conn.execute("SELECT value FROM battlejudge_meta WHERE key = 'format'").fetchone()
    version = int(got[0]) if got and got[0].isdigit() else 0
    if version > FORMAT_VERSION:
        raise StoreError(
            f"{redact(url)}: log format version {version}: this battlejudge reads versions "
            f"1 to {FORMAT_VERSION}; upgrade battlejudge to use this log"
        )


def init_pg(url: str) -> bool:
    """Make the log's tables (nothing if they are there); True if it made them."""
    psycopg = _psycopg(url)
    conn = connect(url)
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            existed = conn.execute("SELECT to_regclass('battlejudge_log')").fetchone()[0]
            conn.execute(SCHEMA)
            conn.execute(TILE_SCHEMA)
            conn.execute(
                "INSERT INTO battlejudge_meta VALUES ('format', %s) ON CONFLICT DO NOTHING",
                (str(FORMAT_VERSION),),
            )
        _check_format(conn, url)
        return existed is None
    except psycopg.Error as e:
        raise StoreError(f"{redact(url)}: {_one_line(e, url)}") from None
    finally:
        conn.close()


def read_pg(url: str) -> StoredLog:
    """Every record of the log at ``url`` (ordered by seq) and its latest checkpoint, as of
    one snapshot."""
    psycopg = _psycopg(url)
    conn = connect(url)
    try:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        with conn.transaction():
            _check_format(conn, url)
            rows = conn.execute("SELECT line FROM battlejudge_log ORDER BY seq").fetchall()
            note = conn.execute(
                "SELECT note FROM battlejudge_checkpoint ORDER BY size DESC LIMIT 1"
            ).fetchone()
    except psycopg.Error as e:
        raise StoreError(f"{redact(url)}: {_one_line(e, url)}") from None
    finally:
        conn.close()
    records: list[LogRecord] = []
    problems: list[Problem] = []
    for index, (text,) in enumerate(rows):
        raw = text.encode("utf-8")
        parsed = parse_line(raw)
        if isinstance(parsed, dict):
            records.append(LogRecord(index, parsed, raw, sha256_hex(raw)))
        else:
            problems.append(Problem(index, "malformed", parsed))
    newer_format(problems, redact(url))
    return StoredLog(redact(url), records, problems, note[0] if note else None, len(rows))


class PgTiles:
    """A PostgreSQL log's tiles: hash tiles in ``battlejudge_tile``; entry bundles made
    from the records' rows (the log table is the entries), on the caller's connection."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def read(self, path: str) -> bytes | None:
        """The tile's bytes, or None when it is not there."""
        level, index, width = parse_tile_path(path)
        if level is None:
            start = index * WIDTH
            rows = self.conn.execute(
                "SELECT line FROM battlejudge_log WHERE seq >= %s AND seq < %s ORDER BY seq",
                (start, start + width),
            ).fetchall()
            if len(rows) != width:
                return None
            return encode_bundle(r[0].encode("utf-8") for r in rows)
        row = self.conn.execute(
            "SELECT data FROM battlejudge_tile WHERE level = %s AND idx = %s AND width = %s",
            (level, index, width),
        ).fetchone()
        return bytes(row[0]) if row else None

    def write(self, tiles: Mapping[str, bytes], durable: Iterable[str] = ()) -> None:
        """Insert the hash tiles (bundles are the log's rows already); in the caller's
        transaction, so they commit with the records."""
        rows = []
        for path, data in tiles.items():
            level, index, width = parse_tile_path(path)
            if level is not None:
                rows.append((level, index, width, data))
        if rows:
            with self.conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO battlejudge_tile VALUES (%s, %s, %s, %s) "
                    "ON CONFLICT (level, idx, width) DO UPDATE SET data = EXCLUDED.data",
                    rows,
                )


class PgProofLog:
    """A proof log in PostgreSQL, with the interface of :class:`ProofLog`: ``append``,
    ``append_batch``, ``append_records``, ``checkpoint``, ``write_checkpoint``.
    Every record and checkpoint is signed with ``key`` when given; the tree's tiles are
    kept in ``battlejudge_tile`` and written in each append's transaction.

    The writer vouches for the log as :class:`ProofLog` does (:class:`VouchError`;
    ``adopt=True`` takes it as it is) and keeps only the tree's right edge. Raises
    :class:`StoreError` when the database cannot be reached or holds no log
    (``create=True`` makes the tables instead), or, on an append, when the database
    went away: nothing of that batch is then in the log. One instance may be shared by
    threads; it reconnects after a ``fork`` and after a lost connection.
    """

    def __init__(
        self,
        url: str,
        key: Ed25519PrivateKey | None = None,
        *,
        create: bool = False,
        adopt: bool = False,
        cosign: Cosigner | None = None,
    ) -> None:
        self.url = url
        self.key = key
        self.origin = origin_for(key)
        self.sync = True
        self.cosign = cosign
        self._adopt = adopt
        self._psycopg = _psycopg(url)
        self._mutex = threading.Lock()
        self._conn: Any = None
        self._pid = 0
        self._state = TileState(bundles=False)
        self._looked = False
        self._last = GENESIS
        self._held: dict[str, bytes] = {}
        self._dirty = False
        if create:
            init_pg(url)
        with self._mutex:
            self._run(lambda conn: self._catch_up(conn))

    @property
    def name(self) -> str:
        """The database URL without its password."""
        return redact(self.url)

    @property
    def next_seq(self) -> int:
        """The sequence number the next record will get (the number of records)."""
        return self._state.size

    def _connection(self) -> Any:
        if self._conn is None or self._pid != os.getpid() or self._conn.closed:
            self._conn = connect(self.url)
            self._pid = os.getpid()
            _check_format(self._conn, self.url)
            self._conn.execute(TILE_SCHEMA)  # a log made before tiles gets the table
            self._conn.commit()
        return self._conn

    def _run(self, work: Any) -> Any:
        """Run ``work(conn)`` in one transaction; database errors become StoreError."""
        try:
            conn = self._connection()
            with conn.transaction():
                return work(conn)
        except self._psycopg.Error as e:
            if self._conn is not None and (self._conn.closed or self._conn.broken):
                self._conn = None
            raise StoreError(f"{self.name}: {_one_line(e, self.url)}") from None

    def _forget(self) -> None:
        """Look at the log afresh next time (when it changed under this writer)."""
        self._state, self._looked, self._last = TileState(bundles=False), False, GENESIS
        self._held, self._dirty = {}, False

    def _catch_up(self, conn: Any) -> None:
        """Add the rows other writers appended since our last look to the tree's right
        edge; the first look vouches for the log (or adopts it)."""
        if not self._looked:
            self._first_look(conn)
            self._looked = True
            return
        n = self._state.size
        rows = conn.execute(
            "SELECT seq, digest, leaf FROM battlejudge_log WHERE seq >= %s ORDER BY seq",
            (max(n - 1, 0),),
        ).fetchall()
        if n and (not rows or rows[0][0] != n - 1 or rows[0][1] != self._last):
            _logger.warning("%s: the log changed under this writer; reading it again", self.name)
            self._forget()
            self._catch_up(conn)
            return
        self._take(conn, rows[1:] if n else rows)

    def _take(self, conn: Any, rows: Sequence[Any]) -> None:
        """Add rows (seq, digest, leaf) to the tree's right edge; the full tiles they
        complete are written 64 at a time, the partial ones with the next checkpoint."""
        for seq, digest, leaf in rows:
            if seq != self._state.size:
                raise StoreError(f"{self.name}: seq {self._state.size} is missing from the log")
            self._held.update(self._state.append(bytes(leaf)))
            self._last = digest
            if len(self._held) >= 64:
                self._flush_tiles(conn, partial=False)

    def _flush_tiles(self, conn: Any, partial: bool = True) -> None:
        PgTiles(conn).write(self._held | (self._state.partial() if partial else {}))
        self._held = {}

    def _first_look(self, conn: Any) -> None:
        # the checkpoint first: the log only grows, so every row it covers is read after
        got = conn.execute(
            "SELECT note FROM battlejudge_checkpoint ORDER BY size DESC LIMIT 1"
        ).fetchone()
        note = got[0] if got else None
        count = conn.execute("SELECT count(*) FROM battlejudge_log").fetchone()[0]
        self._forget()
        if self._adopt or (count == 0 and note is None):
            self._rebuild(conn, None)
            return
        if count == 0:
            assert note is not None
            head = parse_checkpoint(note, f"{self.name} checkpoint").checkpoint
            if head.size:
                raise VouchError(
                    f"{self.name}: the log is empty but its checkpoint covers {head.size} "
                    f"records: they were cut; {recovery(self.name)}"
                )
            return
        head = vouch(note, self.key, self.name)
        if count < head.size:
            raise VouchError(
                f"{self.name}: records were cut from its end: its checkpoint of {head.time} "
                f"covers {head.size} records, the log holds {count}; {recovery(self.name)}"
            )
        try:
            state = TileState.load(PgTiles(conn).read, head.size, bundles=False)
            if head.size == 0 or state.root() != head.root:
                raise TileError("the tiles do not match the checkpoint")
        except TileError as e:
            _logger.warning("%s: %s; rebuilding the tiles from the log", self.name, e)
            self._rebuild(conn, head)
            return
        row = conn.execute(
            "SELECT digest, leaf FROM battlejudge_log WHERE seq = %s", (head.size - 1,)
        ).fetchone()
        if row is None or bytes(row[1]) != state.last_leaf(PgTiles(conn).read):
            raise VouchError(
                f"{self.name}: record {head.size - 1}, the last its checkpoint of {head.time} "
                f"covers, was changed; {recovery(self.name)}"
            )
        self._state, self._last = state, row[0]
        rows = conn.execute(
            "SELECT seq, digest, leaf FROM battlejudge_log WHERE seq >= %s ORDER BY seq",
            (head.size,),
        ).fetchall()
        self._take(conn, rows)

    def _rebuild(self, conn: Any, head: Checkpoint | None) -> None:
        """The first look from every row: tiles written again; with a checkpoint, the rows
        it covers must hash to its root."""
        rows = conn.execute("SELECT seq, digest, leaf FROM battlejudge_log ORDER BY seq").fetchall()
        if head is not None:
            self._take(conn, rows[: head.size])
            self._flush_tiles(conn)  # the partial tiles a reader of that checkpoint needs
            if self._state.root() != head.root:
                raise VouchError(
                    f"{self.name}: the log does not match its checkpoint of {head.time} "
                    f"({head.size} records): records were changed; {recovery(self.name)}"
                )
            rows = rows[head.size :]
        self._take(conn, rows)

    def append(
        self,
        *,
        question: dict[str, Any],
        verdict: str,
        certificate: dict[str, Any],
        game: str | None = None,
        turn: int | None = None,
        player: str | None = None,
        flag: int | None = None,
        time: str | None = None,
    ) -> dict[str, Any]:
        """Append one claim record and a checkpoint, in one transaction; return the
        record (with ``seq``, ``prev`` and ``sig``)."""
        record = claim_record(
            question=question,
            verdict=verdict,
            certificate=certificate,
            game=game,
            turn=turn,
            player=player,
            flag=flag,
            time=time,
        )
        return self.append_records([record])[0]

    def append_batch(self, entries: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Append several claims in one transaction with one checkpoint."""
        return self.append_records([claim_record(**e) for e in entries])

    def append_records(
        self, records: Sequence[Mapping[str, Any] | PreparedRecord], *, publish: bool = True
    ) -> list[dict[str, Any]]:
        """Chain, sign and insert records already checked, their tiles, then a signed
        checkpoint, in one transaction (``publish=False`` leaves the checkpoint to
        :meth:`publish`); returns the records as written."""
        if not records:
            return []

        def work(conn: Any) -> list[dict[str, Any]]:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            self._catch_up(conn)
            out, rows = [], []
            seq, prev = self._state.size, self._last
            for record in records:
                chained, line = chain_any(record, seq, prev, self.key)
                if len(line) > MAX_ENTRY:
                    raise InputError(
                        f"a record of {len(line)} bytes: a log entry is at most {MAX_ENTRY} "
                        "bytes (a tile's entry bundle holds no more)"
                    )
                prev = sha256_hex(line)
                out.append(chained)
                rows.append((seq, line.decode("ascii"), prev, leaf_hash(line)))
                seq += 1
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO battlejudge_log VALUES (%s, %s, %s, %s)", rows)
            self._take(conn, [(r[0], r[2], r[3]) for r in rows])
            if publish:
                self._insert_checkpoint(conn, self.checkpoint().sign(self.key))
            else:
                self._dirty = True
            return out

        return self._locked(work)  # type: ignore[no-any-return]

    def publish(self) -> None:
        """Insert the tiles and a signed (and cosigned) checkpoint of every row so far,
        when records were appended with ``publish=False`` since the last one."""

        def work(conn: Any) -> None:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            self._catch_up(conn)
            if self._dirty or self._held:
                self._insert_checkpoint(conn, self.checkpoint().sign(self.key))

        self._locked(work)

    def _locked(self, work: Any) -> Any:
        with self._mutex:
            known = (self._state.copy(), self._looked, self._last, dict(self._held), self._dirty)
            try:
                return self._run(work)
            except BaseException:
                # Rolled back: back to what was known before it. Rows committed earlier
                # stay this writer's own (a failed publish must not make it refuse records
                # it wrote and has not checkpointed yet); the next look checks them again.
                self._state, self._looked, self._last, self._held, self._dirty = known
                raise

    def _insert_checkpoint(self, conn: Any, note: str) -> str:
        self._flush_tiles(conn)
        self._dirty = False
        if self.cosign is not None:
            note = self.cosign(note, TileReader(PgTiles(conn).read, self._state.size))
        conn.execute(
            "INSERT INTO battlejudge_checkpoint VALUES (%s, %s) "
            "ON CONFLICT (size) DO UPDATE SET note = EXCLUDED.note",
            (self._state.size, note),
        )
        return note

    def import_lines(self, lines: Sequence[bytes], checkpoint: str | None = None) -> None:
        """Insert records byte for byte (an import), which must continue the chain, in
        one transaction; then ``checkpoint`` if it is a tree head of a prefix of the log
        after them (kept as it was signed), and a fresh one for the whole log if it is
        not exactly that. Raises :class:`InputError` for a line that does not continue
        the chain."""
        given = None
        if checkpoint is not None:
            try:
                given = parse_checkpoint(checkpoint).checkpoint
            except InputError:
                given = None

        def work(conn: Any) -> None:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            self._catch_up(conn)
            last, _ = continue_chain(lines, self._state.size, self._last, self.name)
            rows = []
            for i, raw in enumerate(lines):
                rows.append(
                    (self._state.size + i, raw.decode("ascii"), sha256_hex(raw), leaf_hash(raw))
                )
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO battlejudge_log VALUES (%s, %s, %s, %s)", rows)
            kept = None
            for row in rows:
                self._take(conn, [(row[0], row[2], row[3])])
                if given is not None and self._state.size == given.size:
                    if self._state.root() == given.root:
                        kept = given.size
                        self._flush_tiles(conn)  # the partial tiles of that size
                        conn.execute(
                            "INSERT INTO battlejudge_checkpoint VALUES (%s, %s)",
                            (given.size, checkpoint),
                        )
            self._last = last
            if kept != self._state.size:
                self._insert_checkpoint(conn, self.checkpoint().sign(self.key))

        self._locked(work)

    def checkpoint(self) -> Checkpoint:
        """The tree head as of this writer's last look (not signed, not written)."""
        return Checkpoint(self.origin, self._state.size, self._state.root(), utc_now())

    def write_checkpoint(self) -> str:
        """Catch up with the log, write a fresh signed checkpoint, return its note."""

        def work(conn: Any) -> str:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            self._catch_up(conn)
            return self._insert_checkpoint(conn, self.checkpoint().sign(self.key))

        return self._locked(work)  # type: ignore[no-any-return]

    def reader(self) -> TileReader:
        """A reader of the tree (as of this writer's last look) from the tile table, on a
        connection of its own."""
        conn = connect(self.url)
        return TileReader(PgTiles(conn).read, self._state.size)

    def close(self) -> None:
        """Close the connection (only in the process that opened it: a forked child must not
        close its parent's)."""
        conn, self._conn = self._conn, None
        if conn is not None and self._pid == os.getpid():
            conn.close()

    def __enter__(self) -> PgProofLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        signed = ", signed" if self.key is not None else ""
        return f"<PgProofLog {self.name!r}{signed}, next seq {self._state.size}>"


PG_BATCH: Final = 2000
"""Rows :func:`iter_pg` fetches from the server at a time."""


@contextlib.contextmanager
def iter_pg(
    url: str, start: int = 0
) -> Iterator[tuple[str | None, Iterator[tuple[int, str]], Callable[[], int]]]:
    """The log at ``url`` as of one snapshot, to read in memory that does not grow with it:
    its latest checkpoint note, its rows from the key ``start`` on as ``(seq, line)`` in
    seq order through a server-side cursor (:data:`PG_BATCH` rows at a time), and a
    function that counts those rows. A context manager: the snapshot and the connection
    last until it exits. Raises :class:`StoreError` (also while the rows are read) for a
    database that cannot be reached, holds no log or goes away."""
    psycopg = _psycopg(url)
    conn = connect(url)
    try:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        with conn.transaction():
            _check_format(conn, url)
            note = conn.execute(
                "SELECT note FROM battlejudge_checkpoint ORDER BY size DESC LIMIT 1"
            ).fetchone()

            def count() -> int:
                row = conn.execute(
                    "SELECT count(*) FROM battlejudge_log WHERE seq >= %s", (start,)
                ).fetchone()
                return int(row[0])

            with conn.cursor(name="battlejudge_lines") as cursor:
                cursor.itersize = PG_BATCH
                cursor.execute(
                    "SELECT seq, line FROM battlejudge_log WHERE seq >= %s ORDER BY seq", (start,)
                )

                def rows() -> Iterator[tuple[int, str]]:
                    try:
                        yield from cursor
                    except psycopg.Error as e:
                        raise StoreError(f"{redact(url)}: {_one_line(e, url)}") from None

                yield (note[0] if note else None), rows(), count
    except psycopg.Error as e:
        raise StoreError(f"{redact(url)}: {_one_line(e, url)}") from None
    finally:
        conn.close()
