"""The proof log as a tiled transparency log (issue 33): the service's pooled commits, its
C2SP tlog-tiles routes, proofs worked out by a client from tiles alone, and a witness that
catches rollbacks, forks and cut tails."""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
import uvicorn
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from web_server import LiveServer

from battlejudge.apps.service import ServiceConfig
from battlejudge.apps.witness import create_witness_app
from battlejudge.cli.main import cli
from battlejudge.proofs.audit import audit_log
from battlejudge.proofs.checkpoint import parse_checkpoint, verify_checkpoint
from battlejudge.proofs.log import (
    ProofLog,
    VouchError,
    append_proved,
    checkpoint_path,
    tiles_path,
)
from battlejudge.proofs.merkle import MerkleTree, leaf_hash
from battlejudge.proofs.sequencer import Sequencer
from battlejudge.proofs.tiles import bundle_entries
from battlejudge.proofs.transparency import verify_inclusion_proof
from battlejudge.proofs.witness import (
    Witness,
    WitnessError,
    battlejudge_logs,
    verify_cosignatures,
)
from battlejudge.proofs.witnessing import Cosigners, WitnessLink
from battlejudge.solver import battleline as bl

KEY = Ed25519PrivateKey.generate()
WITNESS_KEY = Ed25519PrivateKey.generate()
VALID = bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10").to_json()
INVALID = bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8").to_json()
PROVED = bl.prove(bl.ClaimQuestion.from_json(INVALID))


def _pem(tmp_path: Path) -> tuple[Path, Path]:
    key, pub = tmp_path / "judge.key", tmp_path / "judge.pub"
    key.write_bytes(
        KEY.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    pub.write_bytes(
        KEY.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return key, pub


def run(*args: str) -> object:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


# -- the sequencer -------------------------------------------------------------------------
class _Slow:
    """A store that records each commit's size and takes a while per commit."""

    name = "slow"

    def __init__(self) -> None:
        self.commits: list[int] = []
        self.seq = 0

    def append_records(self, records: list[dict[str, object]]) -> list[dict[str, object]]:
        time.sleep(0.01)
        self.commits.append(len(records))
        out = []
        for r in records:
            out.append({**r, "seq": self.seq})
            self.seq += 1
        return out


def test_the_sequencer_pools_entries_into_few_commits_in_order() -> None:
    store = _Slow()
    with Sequencer(store, interval=0.05) as seq, ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(seq.append_records, [{"n": i}]) for i in range(200)]
        batch = seq.submit([{"n": 1000 + i} for i in range(256)])
        written = [f.result()[0] for f in futures] + batch.result()
    assert sorted(r["seq"] for r in written) == list(range(456))
    assert sum(store.commits) == 456 and len(store.commits) < 100
    # a batch's records stay together and in order
    seqs = [r["seq"] for r in batch.result()]
    assert seqs == list(range(seqs[0], seqs[0] + 256))


def test_a_failed_commit_fails_each_of_its_entries_and_the_next_goes_on() -> None:
    class Flaky(_Slow):
        def append_records(self, records: list[dict[str, object]]) -> list[dict[str, object]]:
            if any(r.get("bad") for r in records):
                raise OSError("disk full")
            return super().append_records(records)

    with Sequencer(Flaky(), interval=0) as seq:
        with pytest.raises(OSError, match="disk full"):
            seq.append_records([{"bad": True}])
        assert seq.append_records([{"n": 1}])[0]["seq"] == 0


# -- the service: pooled commits and tlog-tiles routes ---------------------------------------
@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    key, pub = _pem(tmp_path)
    log = tmp_path / "claims.log"
    config = ServiceConfig(log_path=str(log), key_path=str(key), checkpoint_interval=0.02)
    with LiveServer(config) as live:
        yield live.url, log, pub


def test_claims_from_many_clients_are_logged_gapless_and_served_as_tiles(
    served: tuple[str, Path, Path], tmp_path: Path
) -> None:
    url, log, pub = served

    def claim(i: int) -> int:
        r = httpx.post(f"{url}/v1/claims", json=VALID if i % 2 else INVALID, timeout=60)
        assert r.status_code == 200, r.text
        seq: int = r.json()["log_seq"]
        return seq

    with ThreadPoolExecutor(8) as pool:
        batch = pool.submit(
            httpx.post, f"{url}/v1/claims:batch", json={"questions": [VALID] * 256}, timeout=60
        )
        seqs = list(pool.map(claim, range(40)))
        r = batch.result()
    assert r.status_code == 200
    seqs += [x["log_seq"] for x in r.json()["results"]]
    assert sorted(seqs) == list(range(296))
    assert audit_log(log, KEY.public_key()).ok

    note = httpx.get(f"{url}/checkpoint").text
    head = verify_checkpoint(note, KEY.public_key())
    assert head.size == 296
    tree = MerkleTree(leaf_hash(x) for x in log.read_bytes().splitlines())
    assert head.root == tree.root()
    # a full tile, a partial tile, a full and a partial entry bundle, as the spec names them
    full = httpx.get(f"{url}/tile/0/000")
    assert full.status_code == 200 and full.content == b"".join(tree.levels[0][:256])
    assert "immutable" in full.headers["cache-control"]
    partial = httpx.get(f"{url}/tile/0/001.p/40")
    assert partial.content == b"".join(tree.levels[0][256:296])
    lines = log.read_bytes().splitlines()
    entries = bundle_entries(httpx.get(f"{url}/tile/entries/001.p/40").content, 40)
    assert entries == lines[256:296]
    assert httpx.get(f"{url}/tile/1/000.p/1").content == tree.root(256)
    for bad in ("0/5", "0/001.p/41", "0/x000/001", "entries/002"):
        r = httpx.get(f"{url}/tile/{bad}")
        assert r.status_code == 404 and "error" in r.json() and str(tmp_path) not in r.text

    # the service's own proof, from tiles
    proof = httpx.get(f"{url}/v1/log/proof/290").json()
    assert verify_inclusion_proof(proof, KEY.public_key()).record["seq"] == 290  # type: ignore[index]

    # a client holding only a record and the tiles (the URL, or the folder)
    record = tmp_path / "record.txt"
    record.write_bytes(lines[123] + b"\n")
    for tiles in (url, str(tiles_path(log))):
        r = run("log", "verify-inclusion", "--record", str(record), "--tiles", tiles,
                "--pubkey", str(pub), "--json")  # fmt: skip
        assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
        assert json.loads(r.output)["holds"] is True  # type: ignore[attr-defined]
    record.write_bytes(lines[123].replace(b'"turn":null', b'"turn":7'))
    r = run("log", "verify-inclusion", "--record", str(record), "--tiles", url, "--pubkey",
            str(pub))  # fmt: skip
    assert r.exit_code == 1  # type: ignore[attr-defined]

    # consistency with a checkpoint kept earlier, from tiles
    old = tmp_path / "old.checkpoint"
    old.write_text(note)
    assert httpx.post(f"{url}/v1/claims", json=INVALID, timeout=60).json()["log_seq"] == 296
    # durable at once; its proof waits for the checkpoint that covers it (an interval)
    assert verify_inclusion_proof(httpx.get(f"{url}/v1/log/proof/296").json(), KEY.public_key())
    r = run("log", "verify-consistency", "--from", str(old), "--tiles", url, "--pubkey", str(pub))
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    assert "grew into the log of 297 records" in r.output  # type: ignore[attr-defined]


# -- the writer refuses a log it cannot vouch for --------------------------------------------
def _log(path: Path, n: int, key: Ed25519PrivateKey | None = KEY) -> None:
    with ProofLog(path, key, sync=False) as log:
        for turn in range(n):
            append_proved(log, PROVED, game="g", turn=turn)


def test_a_cut_tail_is_never_laundered(tmp_path: Path) -> None:
    """The issue's attack: delete the last record and the checkpoint, append with the
    judge's key. The writer refuses (exit 2 from the CLI), so the audit never says clean
    over the cut."""
    path = tmp_path / "claims.log"
    _log(path, 5)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]))
    with pytest.raises(VouchError, match="records were cut"):
        ProofLog(path, KEY)
    checkpoint_path(path).unlink()
    with pytest.raises(VouchError, match="no checkpoint"):
        ProofLog(path, KEY)
    key, _ = _pem(tmp_path)
    r = run("claim", "--mine", "R4 R5 R3", "--theirs", "B8", "--log", str(path), "--key", str(key))
    assert r.exit_code == 2 and "no checkpoint" in r.stderr  # type: ignore[attr-defined]
    assert len(r.stderr.strip().splitlines()) == 1  # type: ignore[attr-defined]
    assert path.read_bytes() == b"".join(lines[:-1])  # nothing appended
    r = run("log", "repair", str(path), "--key", str(key))
    assert r.exit_code == 2  # type: ignore[attr-defined]
    assert "no checkpoint" in r.stderr and "log checkpoint" in r.stderr  # type: ignore[attr-defined]
    # the judge who audited it and takes it as it is vouches for it explicitly
    assert run("log", "checkpoint", str(path), "--write", "--key", str(key)).exit_code == 0  # type: ignore[attr-defined]
    with ProofLog(path, KEY) as log:
        append_proved(log, PROVED)


@pytest.mark.parametrize("case", ["other-key", "other-origin", "unsigned", "edited-end"])
def test_the_writer_names_the_checkpoint_it_cannot_vouch_for(tmp_path: Path, case: str) -> None:
    path = tmp_path / "claims.log"
    _log(path, 3)
    note = checkpoint_path(path).read_text()
    head = parse_checkpoint(note).checkpoint
    if case == "other-key":
        other = Ed25519PrivateKey.generate()
        checkpoint_path(path).write_text(
            head.__class__(head.origin, head.size, head.root, head.time).sign(other)
        )
        match = "does not match|not signed by this key"
    elif case == "other-origin":
        checkpoint_path(path).write_text(
            head.__class__("example.com/log", head.size, head.root, head.time).sign(KEY)
        )
        match = "is of log 'example.com/log'"
    elif case == "unsigned":
        checkpoint_path(path).write_text(head.text())
        match = "not signed"
    else:
        data = path.read_bytes()
        path.write_bytes(data.replace(b'"turn":2', b'"turn":9'))
        match = "was changed"
    with pytest.raises(VouchError, match=match):
        ProofLog(path, KEY)


def test_a_writer_stopped_before_its_checkpoint_is_caught_up(tmp_path: Path) -> None:
    """Records fsynced but not yet checkpointed (a crash in between) continue the chain:
    the next writer takes them and publishes the checkpoint."""
    path = tmp_path / "claims.log"
    _log(path, 3)
    kept = checkpoint_path(path).read_text()
    _log(path, 2)
    checkpoint_path(path).write_text(kept)  # as if the last commit's checkpoint was lost
    with ProofLog(path, KEY) as log:
        assert log.next_seq == 5
    assert verify_checkpoint(checkpoint_path(path).read_text(), KEY.public_key()).size == 5
    assert audit_log(path, KEY.public_key()).ok


def test_old_logs_without_tiles_get_them(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    _log(path, 300)
    shutil.rmtree(tiles_path(path))
    with ProofLog(path, KEY) as log:
        append_proved(log, PROVED)
    assert (tiles_path(path) / "tile" / "0" / "000").stat().st_size == 8192
    r = run("log", "prove", str(path), "--record", "299")
    assert r.exit_code == 0  # type: ignore[attr-defined]
    assert verify_inclusion_proof(json.loads(r.output), KEY.public_key())  # type: ignore[attr-defined]


# -- a witness catches rollback, fork and cut tail ------------------------------------------
@pytest.fixture
def witness(tmp_path: Path) -> Iterator[WitnessLink]:
    w = Witness(
        tmp_path / "witness", WITNESS_KEY, "witness.test/w1", battlejudge_logs([KEY.public_key()])
    )
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_witness_app(w), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]})
    thread.start()
    while not server.started:
        time.sleep(0.01)
    try:
        yield WitnessLink(f"http://127.0.0.1:{sock.getsockname()[1]}", w.witness_key())
    finally:
        server.should_exit = True
        thread.join()


def _witnessed(path: Path, n: int, link: WitnessLink, key: Ed25519PrivateKey = KEY) -> None:
    with ProofLog(path, key, sync=False, cosign=Cosigners([link])) as log:
        for turn in range(n):
            append_proved(log, PROVED, game="w", turn=turn)


def _snapshot(path: Path, to: Path) -> None:
    to.mkdir()
    shutil.copy(path, to / path.name)
    shutil.copy(checkpoint_path(path), to / checkpoint_path(path).name)
    shutil.copytree(tiles_path(path), to / tiles_path(path).name)


def _restore(path: Path, snap: Path) -> None:
    shutil.rmtree(tiles_path(path))
    shutil.copy(snap / path.name, path)
    shutil.copy(snap / checkpoint_path(path).name, checkpoint_path(path))
    shutil.copytree(snap / tiles_path(path).name, tiles_path(path))


def test_each_checkpoint_is_cosigned(tmp_path: Path, witness: WitnessLink) -> None:
    path = tmp_path / "claims.log"
    _witnessed(path, 3, witness)
    note = checkpoint_path(path).read_text()
    assert verify_cosignatures(note, [witness.key], 1) == 1
    assert verify_checkpoint(note, KEY.public_key()).size == 3
    # a fresh writer (no memory of what the witness saw) is told its size and goes on
    witness.size = 0
    _witnessed(path, 2, witness)
    assert verify_cosignatures(checkpoint_path(path).read_text(), [witness.key], 1) == 1


def test_a_rollback_is_caught(tmp_path: Path, witness: WitnessLink) -> None:
    path = tmp_path / "claims.log"
    _witnessed(path, 3, witness)
    _snapshot(path, tmp_path / "at3")
    _witnessed(path, 3, witness)  # the witness has seen 6
    _restore(path, tmp_path / "at3")  # the old log with its own old checkpoint
    witness.size = 0
    with pytest.raises(WitnessError, match="rolled back"):
        _witnessed(path, 1, witness)


def test_a_fork_is_caught(tmp_path: Path, witness: WitnessLink) -> None:
    path = tmp_path / "claims.log"
    _witnessed(path, 3, witness)
    _snapshot(path, tmp_path / "at3")
    _witnessed(path, 2, witness)  # the witness has seen 5
    _restore(path, tmp_path / "at3")
    witness.size = 0
    with ProofLog(path, KEY, sync=False) as log:  # another history of the same length
        append_proved(log, PROVED, game="fork", turn=1)
    with pytest.raises(WitnessError, match=r"fork"):
        _witnessed(path, 1, witness)


def test_a_cut_tail_is_caught_even_with_an_older_signed_checkpoint(
    tmp_path: Path, witness: WitnessLink
) -> None:
    path = tmp_path / "claims.log"
    _witnessed(path, 4, witness)
    kept = checkpoint_path(path).read_text()  # a checkpoint of 4, kept by the attacker
    _witnessed(path, 1, witness)
    # cut the last record and put the older (genuine) checkpoint back
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]))
    checkpoint_path(path).write_text(kept)
    witness.size = 0  # the 5th record now differs: another tree of 5 than the cosigned one
    with pytest.raises(WitnessError, match=r"a fork|rolled back"):
        _witnessed(path, 1, witness)


def test_readers_require_the_cosignatures(tmp_path: Path, witness: WitnessLink) -> None:
    path = tmp_path / "claims.log"
    _, pub = _pem(tmp_path)
    _witnessed(path, 2, witness)
    vkey = witness.key.vkey()
    record = tmp_path / "record.txt"
    record.write_bytes(path.read_bytes().splitlines()[1])
    args = ["log", "verify-inclusion", "--record", str(record), "--tiles", str(tiles_path(path)),
            "--pubkey", str(pub), "--witness-key", vkey]  # fmt: skip
    assert run(*args).exit_code == 0  # type: ignore[attr-defined]
    # the same log without the witness: its checkpoint carries no cosignature
    with ProofLog(path, KEY, sync=False) as log:
        append_proved(log, PROVED)
    r = run(*args)
    assert r.exit_code == 1 and "0 valid witness cosignatures of 1" in r.output  # type: ignore[attr-defined]
    assert run(*args, "--witnesses-needed", "0").exit_code == 0  # type: ignore[attr-defined]


def test_the_audit_requires_the_cosignatures(tmp_path: Path, witness: WitnessLink) -> None:
    path = tmp_path / "claims.log"
    _, pub = _pem(tmp_path)
    _witnessed(path, 2, witness)
    args = ["audit", str(path), "--pubkey", str(pub), "--witness-key", witness.key.vkey()]
    assert run(*args).exit_code == 0  # type: ignore[attr-defined]
    with ProofLog(path, KEY, sync=False) as log:  # appended without the witness
        append_proved(log, PROVED)
    r = run(*args, "--json")
    assert r.exit_code == 1  # type: ignore[attr-defined]
    problems = json.loads(r.output)["problems"]  # type: ignore[attr-defined]
    assert [p["kind"] for p in problems] == ["checkpoint"]
    assert "0 valid witness cosignatures of 1 needed" in problems[0]["detail"]
    other = Witness(tmp_path / "w2", Ed25519PrivateKey.generate(), "witness.test/w2", {})
    r = run(*args, "--witness-key", other.vkey(), "--witnesses-needed", "3")
    assert r.exit_code == 2  # type: ignore[attr-defined]


def test_the_web_audit_requires_the_cosignatures(tmp_path: Path, witness: WitnessLink) -> None:
    path = tmp_path / "claims.log"
    _witnessed(path, 2, witness)

    def upload(c: httpx.Client, **form: str) -> httpx.Response:
        files = {
            "log": ("claims.log", path.read_bytes()),
            "checkpoint": ("claims.log.checkpoint", checkpoint_path(path).read_bytes()),
        }
        return c.post("/audit", files=files, data=form)

    with LiveServer(ServiceConfig()) as live, httpx.Client(base_url=live.url, timeout=60) as c:
        r = upload(c, witness_keys=witness.key.vkey())
        assert r.status_code == 200 and "witness cosignatures" not in r.text
        with ProofLog(path, KEY, sync=False) as log:  # appended without the witness
            append_proved(log, PROVED)
        r = upload(c, witness_keys=witness.key.vkey())
        assert "0 valid witness cosignatures of 1 needed" in r.text
        r = upload(c, witness_keys=witness.key.vkey(), witnesses_needed="0")
        assert "witness cosignatures" not in r.text
        r = upload(c, witness_keys="not-a-key")
        assert r.status_code == 422


def test_a_full_tile_a_crash_took_back_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    _log(path, 600)
    (tiles_path(path) / "tile" / "0" / "001").unlink()
    (tiles_path(path) / "tile" / "entries" / "000").write_bytes(b"")
    with ProofLog(path, KEY) as log:
        append_proved(log, PROVED)
    assert (tiles_path(path) / "tile" / "0" / "001").stat().st_size == 8192
    r = run("log", "prove", str(path), "--record", "300")
    assert verify_inclusion_proof(json.loads(r.output), KEY.public_key())  # type: ignore[attr-defined]


class _Published(_Slow):
    """A store that also publishes checkpoints, counting them."""

    def __init__(self) -> None:
        super().__init__()
        self.published: list[int] = []
        self.refuse = False

    def append_records(  # type: ignore[override]
        self, records: list[dict[str, object]], publish: bool = True
    ) -> list[dict[str, object]]:
        assert publish is False
        return super().append_records(records)

    def publish(self) -> None:
        if self.refuse:
            raise WitnessError("witness w: refused: it cosigned another checkpoint (a fork)")
        self.published.append(self.seq)


def test_the_sequencer_commits_at_once_and_publishes_at_most_every_interval() -> None:
    store = _Published()
    with Sequencer(store, interval=0.2) as seq:
        first = seq.append_records([{"n": 0}])  # an idle log commits at once
        assert first[0]["seq"] == 0 and store.commits == [1]
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda i: seq.append_records([{"n": i}]), range(100)))
        assert sum(store.commits) == 101
        commits = len(store.commits)
    # far fewer checkpoints than commits, the last covering everything (published on close)
    assert store.published[-1] == 101
    assert len(store.published) <= 2 + commits // 2


def test_a_refused_checkpoint_stops_the_sequencer() -> None:
    store = _Published()
    store.refuse = True
    with Sequencer(store, interval=0) as seq:
        seq.append_records([{"n": 0}])  # durable: the refusal comes with its checkpoint
        time.sleep(0.05)
        with pytest.raises(WitnessError, match="a fork"):
            seq.append_records([{"n": 1}])
    assert store.seq == 1


def test_a_checkpoint_the_disk_refused_is_published_at_the_next_interval() -> None:
    store = _Published()
    failures = [OSError("no space left on device")]

    def flaky() -> None:
        if failures:
            raise failures.pop()
        store.published.append(store.seq)

    store.publish = flaky  # type: ignore[method-assign]
    with Sequencer(store, interval=0.01) as seq:
        seq.append_records([{"n": 0}])
        time.sleep(0.1)
        assert seq.append_records([{"n": 1}])[0]["seq"] == 1  # not stopped
    assert store.published[-1] == 2


def test_log_errors_show_no_path_on_disk(served: tuple[str, Path, Path]) -> None:
    url, log, _ = served
    assert httpx.post(f"{url}/v1/claims", json=VALID, timeout=60).json()["log_seq"] == 0
    time.sleep(0.1)
    note = checkpoint_path(log)
    note.unlink()
    note.mkdir()  # a checkpoint that cannot be read
    for path in ("/checkpoint", "/v1/log/checkpoint", "/v1/log/proof/0"):
        r = httpx.get(f"{url}{path}", timeout=60)
        assert r.status_code == 503 and "error" in r.json(), (path, r.text)
        assert str(log.parent) not in r.text


@pytest.mark.parametrize("body", [{"verdict": "valid", "n": [1, {"a": "}"}]}, {"x": 1}, {}])
def test_the_log_seq_is_added_as_decoding_and_encoding_would(body: dict[str, object]) -> None:
    from battlejudge.apps.routes.claims import with_seq

    data = json.dumps(body).encode()
    assert with_seq(data, 42) == json.dumps({**body, "log_seq": 42}).encode()
    assert with_seq(data, None) == data
