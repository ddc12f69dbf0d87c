"""The witness of a proof log (c2sp.org/tlog-witness, c2sp.org/tlog-cosignature): cosignatures
and verifier keys, what the witness cosigns and what it refuses (with the spec's HTTP
statuses), its state across restarts and concurrent requests, the HTTP app, the client,
and the ``battlejudge witness`` commands."""

from __future__ import annotations

import base64
import json
import multiprocessing
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from fastapi.testclient import TestClient

from battlejudge.apps.witness import SIZE_TYPE, create_witness_app
from battlejudge.cli.main import cli
from battlejudge.proofs.checkpoint import (
    Checkpoint,
    CheckpointError,
    note_key_id,
    origin_for,
    parse_checkpoint,
    verify_checkpoint,
)
from battlejudge.proofs.merkle import MerkleTree, leaf_hash
from battlejudge.proofs.witness import (
    MAX_BODY,
    MalformedRequest,
    Witness,
    WitnessError,
    WitnessKey,
    WitnessRefusal,
    WitnessStateError,
    add_checkpoint_body,
    add_signature_lines,
    battlejudge_logs,
    cosign,
    cosignature_message,
    cosigner_key_id,
    format_vkey,
    parse_add_checkpoint,
    parse_vkey,
    parse_witness_key,
    request_cosignature,
    verify_cosignatures,
    witness_vkey,
)
from battlejudge.solver.errors import InputError

LOG_KEY = Ed25519PrivateKey.generate()
OTHER_LOG = Ed25519PrivateKey.generate()
W_KEY = Ed25519PrivateKey.generate()
W_NAME = "witness.test/w1"
ORIGIN = origin_for(LOG_KEY)
TIME = "2026-11-23T20:14:03.118Z"
STAMP = 1_790_000_000
TREE = MerkleTree(leaf_hash(b"record %d" % i) for i in range(40))
FORK = MerkleTree(leaf_hash(b"record %d" % i if i != 3 else b"rewritten") for i in range(40))


def note(size: int, tree: MerkleTree = TREE, key: Ed25519PrivateKey | None = LOG_KEY) -> str:
    """The log's signed checkpoint of the first ``size`` leaves of ``tree``."""
    return Checkpoint(ORIGIN, size, tree.root(size), TIME).sign(key)


def body(old: int, size: int, tree: MerkleTree = TREE, proof_tree: MerkleTree = TREE) -> bytes:
    """An add-checkpoint request from ``old`` to the checkpoint of ``size`` leaves."""
    return add_checkpoint_body(old, proof_tree.consistency_path(old, size), note(size, tree))


def make_witness(state: Path, clock: int = STAMP) -> Witness:
    return Witness(state, W_KEY, W_NAME, battlejudge_logs([LOG_KEY.public_key()]), lambda: clock)


def refusal(w: Witness, request: bytes) -> WitnessRefusal:
    with pytest.raises(WitnessRefusal) as info:
        w.add_checkpoint(request)
    return info.value


def wkey() -> WitnessKey:
    return WitnessKey(W_NAME, W_KEY.public_key())


# -- cosignatures --------------------------------------------------------------------------------
def test_cosignature_round_trip_and_layout() -> None:
    line = cosign(note(7), W_KEY, W_NAME, STAMP)
    dash, name, blob = line.split(" ")
    raw = base64.b64decode(blob)
    assert (dash, name, len(raw)) == ("\u2014", W_NAME, 4 + 8 + 64)
    assert raw[:4] == cosigner_key_id(W_NAME, W_KEY.public_key())
    assert raw[:4] != note_key_id(W_NAME, W_KEY.public_key())  # type 0x04, not 0x01
    assert int.from_bytes(raw[4:12], "big") == STAMP
    text = parse_checkpoint(note(7)).text
    W_KEY.public_key().verify(raw[12:], cosignature_message(text, STAMP))
    assert cosignature_message(text, STAMP).startswith(f"cosignature/v1\ntime {STAMP}\n".encode())
    cosigned = add_signature_lines(note(7), [line])
    assert verify_cosignatures(cosigned, [wkey()], 1) == 1
    assert verify_checkpoint(cosigned, LOG_KEY.public_key()).size == 7
    # the Checkpoint itself, the note text alone and the signed note cosign the same text
    cp = parse_checkpoint(note(7)).checkpoint
    assert cosign(cp, W_KEY, W_NAME, STAMP) == line
    assert cosign(cp.text(), W_KEY, W_NAME, STAMP) == line


@pytest.mark.parametrize(
    "tamper",
    ["text", "timestamp", "signature", "key id"],
)
def test_a_tampered_cosignature_is_rejected(tamper: str) -> None:
    line = cosign(note(7), W_KEY, W_NAME, STAMP)
    cosigned = add_signature_lines(note(7), [line])
    _, name, blob = line.split(" ")
    raw = bytearray(base64.b64decode(blob))
    if tamper == "text":
        cosigned = cosigned.replace("\n7\n", "\n8\n")
    else:
        at = {"timestamp": 11, "signature": 40, "key id": 0}[tamper]
        raw[at] ^= 1
        bad = f"\u2014 {name} {base64.b64encode(bytes(raw)).decode()}"
        cosigned = add_signature_lines(note(7), [bad])
    with pytest.raises(CheckpointError) as info:
        verify_cosignatures(cosigned, [wkey()], 1)
    message = str(info.value)
    assert "\n" not in message and "1 needed" in message and W_NAME in message
    assert ("bad cosignature" if tamper != "key id" else "missing") in message


def test_verify_cosignatures_counts_distinct_known_witnesses() -> None:
    w2 = Ed25519PrivateKey.generate()
    stranger = Ed25519PrivateKey.generate()
    lines = [
        cosign(note(7), W_KEY, W_NAME, STAMP),
        cosign(note(7), W_KEY, W_NAME, STAMP + 5),  # the same witness again
        cosign(note(7), w2, "witness.test/w2", STAMP),
        cosign(note(7), stranger, "witness.test/w3", STAMP),  # unknown: ignored
        cosign(note(7), stranger, W_NAME, STAMP),  # a known name, another key: ignored
    ]
    cosigned = add_signature_lines(note(7), lines)
    keys = [wkey(), wkey(), WitnessKey("witness.test/w2", w2.public_key())]
    assert verify_cosignatures(cosigned, keys, 2) == 2
    assert verify_cosignatures(cosigned, keys, 0) == 2
    w4 = WitnessKey("witness.test/w4", Ed25519PrivateKey.generate().public_key())
    with pytest.raises(
        CheckpointError,
        match=r"2 valid witness cosignatures of 3 needed; "
        r"missing: witness\.test/w4",
    ):
        verify_cosignatures(cosigned, [*keys, w4], 3)
    with pytest.raises(InputError, match="only 2 witness keys"):
        verify_cosignatures(cosigned, keys, 3)
    # the log's own note signature is no cosignature, even under the witness's name and key
    with pytest.raises(CheckpointError, match="0 valid"):
        verify_cosignatures(note(7), [WitnessKey(ORIGIN, LOG_KEY.public_key())], 1)


def test_add_signature_lines_deduplicates_and_stays_a_checkpoint() -> None:
    a = cosign(note(7), W_KEY, W_NAME, STAMP)
    b = cosign(note(7), W_KEY, W_NAME, STAMP + 1)
    once = add_signature_lines(note(7), [a, a + "\n", b])
    assert add_signature_lines(once, [b, a]) == once
    signed = parse_checkpoint(once)
    assert len(signed.signatures) == 3 and signed.checkpoint.size == 7
    unsigned = Checkpoint(ORIGIN, 7, TREE.root(7), TIME).text()
    assert add_signature_lines(unsigned, [a]) == f"{unsigned}\n{a}\n"
    assert add_signature_lines(unsigned, []) == unsigned
    with pytest.raises(CheckpointError, match="not a signature line"):
        add_signature_lines(note(7), ["- not a signature line"])
    with pytest.raises(CheckpointError):
        add_signature_lines(note(7), [a + "\n" + b])


# -- verifier keys -------------------------------------------------------------------------------
def test_vkey_round_trip(tmp_path: Path) -> None:
    vkey = witness_vkey(W_NAME, W_KEY)
    name, kid, blob = vkey.split("+", 2)
    assert name == W_NAME and bytes.fromhex(kid) == wkey().key_id
    assert base64.b64decode(blob)[0] == 0x04
    parsed = parse_witness_key(vkey)
    assert (parsed.name, parsed.raw) == (W_NAME, wkey().raw)
    assert parsed.vkey() == vkey == witness_vkey(W_NAME, W_KEY.public_key())
    assert eval(repr(parsed)).vkey() == vkey  # repr pastes back
    assert parse_witness_key(f"{name}+{kid.upper()}+{blob}").vkey() == vkey
    path = tmp_path / "w1.vkey"
    path.write_text(f"  {vkey}\n")
    assert parse_witness_key(str(path)).vkey() == vkey
    log_vkey = format_vkey(ORIGIN, b"\x01", LOG_KEY.public_key())
    assert parse_vkey(log_vkey)[1] == b"\x01"


def _vkey_variants() -> list[tuple[str, str]]:
    vkey = witness_vkey(W_NAME, W_KEY)
    name, kid, blob = vkey.split("+", 2)
    raw = base64.b64decode(blob)
    other = f"{int(kid, 16) ^ 1:08x}"
    return [
        ("wrong key id", f"{name}+{other}+{blob}"),
        ("another name", f"witness.test/w9+{kid}+{blob}"),
        ("short key id", f"{name}+{kid[:7]}+{blob}"),
        ("not hex", f"{name}+{kid[:7]}z+{blob}"),
        ("not base64", f"{name}+{kid}+{blob[:-2]}!!"),
        ("short key", f"{name}+{kid}+{base64.b64encode(raw[:-1]).decode()}"),
        ("unknown type", f"{name}+{kid}+{base64.b64encode(bytes([2]) + raw[1:]).decode()}"),
        ("log key type", format_vkey(W_NAME, b"\x01", W_KEY.public_key())),
        ("a space in the name", f"a b+{kid}+{blob}"),
        ("a plus in the name", f"a+b+{kid}+{blob}"),
        ("no parts", name),
        ("empty", ""),
    ]


@pytest.mark.parametrize("case", _vkey_variants(), ids=lambda c: c[0])
def test_bad_vkeys_are_refused(case: tuple[str, str]) -> None:
    with pytest.raises(InputError) as info:
        parse_witness_key(case[1], "--witness-key")
    assert str(info.value).startswith("--witness-key") and "\n" not in str(info.value)


def test_a_name_with_a_space_or_plus_has_no_vkey() -> None:
    for name in ("a b", "a+b", ""):
        with pytest.raises(InputError):
            witness_vkey(name, W_KEY)
        with pytest.raises(InputError):
            cosign(note(1), W_KEY, name, STAMP)


# -- the add-checkpoint request ------------------------------------------------------------------
def test_request_body_round_trip() -> None:
    proof = TREE.consistency_path(5, 9)
    request = parse_add_checkpoint(add_checkpoint_body(5, proof, note(9)))
    assert (request.old, list(request.proof), request.note) == (5, proof, note(9))


@pytest.mark.parametrize(
    "bad",
    [
        b"",
        b"old 5",
        b"new 5\n\n",
        b"old 05\n\n",
        b"old -1\n\n",
        b"old 5\nAAAA\n\n",
        b"old 5\n" + base64.b64encode(b"x" * 32) + b"\n",
        b"old 5\n" + (base64.b64encode(b"x" * 32) + b"\n") * 64 + b"\n",
        b"old 5\n\n\xff\n",
        b"old 5\n\n" + b"x" * MAX_BODY,
    ],
)
def test_malformed_requests_are_400(bad: bytes, tmp_path: Path) -> None:
    with pytest.raises(MalformedRequest) as info:
        make_witness(tmp_path).add_checkpoint(bad)
    assert info.value.status == 400 and isinstance(info.value, InputError)


def test_63_proof_lines_are_read() -> None:
    h = base64.b64encode(b"x" * 32) + b"\n"
    assert len(parse_add_checkpoint(b"old 5\n" + h * 63 + b"\n" + note(9).encode()).proof) == 63


# -- the witness -------------------------------------------------------------------------------
def test_it_cosigns_a_growing_chain(tmp_path: Path) -> None:
    w = make_witness(tmp_path)
    old = 0
    for size in (1, 2, 5, 8, 8, 13, 32, 33):
        answer = w.add_checkpoint(body(old, size))
        assert answer.endswith("\n") and answer.count("\n") == 1
        cosigned = add_signature_lines(note(size), [answer])
        assert verify_cosignatures(cosigned, [w.witness_key()], 1) == 1
        latest = w.latest(ORIGIN)
        assert latest is not None and (latest.size, latest.root) == (size, TREE.root(size))
        old = size


def test_a_first_checkpoint_of_size_zero_and_an_empty_proof(tmp_path: Path) -> None:
    w = make_witness(tmp_path)
    w.add_checkpoint(body(0, 0))
    assert refusal(w, add_checkpoint_body(0, [TREE.root(1)], note(3))).status == 422
    w.add_checkpoint(body(0, 3))


def test_rollback_is_refused(tmp_path: Path) -> None:
    w = make_witness(tmp_path)
    w.add_checkpoint(body(0, 10))
    # old is the witness's latest but the checkpoint is smaller: 400
    e = refusal(w, add_checkpoint_body(10, [], note(6)))
    assert (e.status, str(e)[:9]) == (400, "rollback:") and "10" in str(e)
    # old agrees with the smaller checkpoint: 409 with the witness's latest size
    e = refusal(w, body(0, 6))
    assert (e.status, e.latest, str(e)[:9]) == (409, 10, "rollback:")


def test_a_fork_at_the_same_size_is_409(tmp_path: Path) -> None:
    w = make_witness(tmp_path)
    w.add_checkpoint(body(0, 10))
    e = refusal(w, add_checkpoint_body(10, [], note(10, FORK)))
    assert (e.status, e.latest, str(e)[:5]) == (409, 10, "fork:")
    assert w.add_checkpoint(add_checkpoint_body(10, [], note(10)))  # the same one again is fine


def test_a_later_checkpoint_of_another_history_is_422(tmp_path: Path) -> None:
    w = make_witness(tmp_path)
    w.add_checkpoint(body(0, 10))
    # the fork's own (internally valid) proof from 10 to 20 does not start at the cosigned root
    e = refusal(w, body(10, 20, FORK, FORK))
    assert (e.status, str(e)[:5]) == (422, "fork:")
    # an honest checkpoint with a proof that does not hold
    e = refusal(w, add_checkpoint_body(10, TREE.consistency_path(9, 20), note(20)))
    assert e.status == 422
    assert w.latest(ORIGIN).size == 10  # type: ignore[union-attr]
    w.add_checkpoint(body(10, 20))


def test_a_stale_old_size_is_409_with_the_latest_size(tmp_path: Path) -> None:
    w = make_witness(tmp_path)
    w.add_checkpoint(body(0, 10))
    e = refusal(w, body(4, 12))
    assert (e.status, e.latest, str(e)[:9]) == (409, 10, "conflict:")
    e = refusal(w, body(0, 12))
    assert (e.status, e.latest) == (409, 10)
    w.add_checkpoint(body(e.latest, 12))


def test_unknown_origin_is_404(tmp_path: Path) -> None:
    other = Checkpoint(origin_for(OTHER_LOG), 3, TREE.root(3), TIME).sign(OTHER_LOG)
    e = refusal(make_witness(tmp_path), add_checkpoint_body(0, [], other))
    assert e.status == 404 and origin_for(OTHER_LOG) in str(e)


@pytest.mark.parametrize("how", ["unsigned", "other key", "changed"])
def test_a_checkpoint_without_the_logs_valid_signature_is_403(how: str, tmp_path: Path) -> None:
    if how == "unsigned":
        text = note(3, key=None)
    elif how == "other key":  # signed under the log's origin by another key
        text = note(3, key=OTHER_LOG)
    else:
        text = note(3).replace("\n3\n", "\n4\n")
    e = refusal(make_witness(tmp_path), add_checkpoint_body(0, [], text))
    assert e.status == 403 and "\n" not in str(e)
    assert make_witness(tmp_path).latest(ORIGIN) is None


def test_the_state_survives_a_restart(tmp_path: Path) -> None:
    make_witness(tmp_path).add_checkpoint(body(0, 10))
    again = make_witness(tmp_path)
    assert refusal(again, body(0, 10, FORK)).latest == 10
    assert refusal(again, add_checkpoint_body(10, [], note(10, FORK))).status == 409
    again.add_checkpoint(body(10, 15))
    assert make_witness(tmp_path).latest(ORIGIN).size == 15  # type: ignore[union-attr]
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["battlejudge%2F" + ORIGIN.split("/")[1] + s for s in (".json", ".lock")]
    state = json.loads((tmp_path / files[0]).read_text())
    assert state["size"] == 15 and state["note"] == note(15)


def test_a_damaged_state_file_stops_the_witness(tmp_path: Path) -> None:
    w = make_witness(tmp_path)
    w.add_checkpoint(body(0, 10))
    path = next(tmp_path.glob("*.json"))
    path.write_text('{"size": 3}')
    with pytest.raises(WitnessStateError, match="not a witness state file"):
        w.add_checkpoint(body(10, 12))


def test_concurrent_forks_get_one_cosignature(tmp_path: Path) -> None:
    """Eight threads, each with its own Witness on the same folder, offer eight different
    checkpoints of size 10 as the first: exactly one is cosigned."""
    forks = [
        MerkleTree(leaf_hash(b"fork %d record %d" % (f, i)) for i in range(10)) for f in range(8)
    ]

    def offer(tree: MerkleTree) -> int:
        try:
            make_witness(tmp_path).add_checkpoint(body(0, 10, tree))
        except WitnessRefusal as e:
            return e.status
        return 200

    with ThreadPoolExecutor(8) as pool:
        statuses = sorted(pool.map(offer, forks))
    assert statuses == [200] + [409] * 7


def _offer_in_process(args: tuple[str, int]) -> int:
    state, size = args
    w = make_witness(Path(state))
    try:
        w.add_checkpoint(body(0, size))
    except WitnessRefusal as e:
        return e.status
    return 200


def test_concurrent_processes_cosign_one_first_checkpoint(tmp_path: Path) -> None:
    """Processes racing to be first with checkpoints of different sizes: one is cosigned
    (the others' old size 0 is stale by then), and the state holds that one."""
    sizes = [3, 5, 7, 9]
    # close and join, never terminate: a SIGTERM handler another test left in this
    # process (a CLI's signal handling) is inherited by forked workers and would keep
    # them alive, so that ``with Pool()`` (which terminates) hung the suite
    pool = multiprocessing.get_context("fork").Pool(4)
    try:
        statuses = pool.map(_offer_in_process, [(str(tmp_path), s) for s in sizes])
    finally:
        pool.close()
        pool.join()
    assert sorted(statuses) == [200, 409, 409, 409]
    winner = sizes[statuses.index(200)]
    assert make_witness(tmp_path).latest(ORIGIN).size == winner  # type: ignore[union-attr]


# -- over HTTP -------------------------------------------------------------------------------
@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_witness_app(make_witness(tmp_path), max_body=MAX_BODY)) as c:
        yield c


def test_http_statuses(client: TestClient) -> None:
    ok = client.post("/add-checkpoint", content=body(0, 10))
    assert ok.status_code == 200 and ok.headers["content-type"].startswith("text/plain")
    assert ok.text.startswith("\u2014 " + W_NAME + " ") and ok.text.endswith("\n")
    stale = client.post("/add-checkpoint", content=body(4, 12))
    assert (stale.status_code, stale.text) == (409, "10\n")
    assert stale.headers["content-type"] == SIZE_TYPE
    fork = client.post("/add-checkpoint", content=add_checkpoint_body(10, [], note(10, FORK)))
    assert (fork.status_code, fork.text, fork.headers["content-type"]) == (409, "10\n", SIZE_TYPE)
    cases = {
        400: b"old x\n\n",
        403: add_checkpoint_body(10, [], note(12, key=OTHER_LOG)),
        404: add_checkpoint_body(
            0, [], Checkpoint(origin_for(OTHER_LOG), 3, TREE.root(3), TIME).sign(OTHER_LOG)
        ),
        422: body(10, 20, FORK, FORK),
    }
    for status, request in cases.items():
        answer = client.post("/add-checkpoint", content=request)
        assert answer.status_code == status
        assert answer.headers["content-type"].startswith("text/plain")
        assert answer.text.count("\n") == 1 and "Traceback" not in answer.text
    rollback = client.post("/add-checkpoint", content=add_checkpoint_body(10, [], note(4)))
    assert rollback.status_code == 400 and rollback.text.startswith("rollback:")
    assert client.post("/add-checkpoint", content=body(10, 20)).status_code == 200


def test_http_limits_and_other_paths(client: TestClient) -> None:
    big = client.post("/add-checkpoint", content=b"old 0\n\n" + b"x" * MAX_BODY)
    assert big.status_code == 413 and big.text.count("\n") == 1
    bad_length = client.post(
        "/add-checkpoint", content=b"old 0\n\n", headers={"content-length": "x"}
    )
    assert bad_length.status_code in (400, 413)
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/add-checkpoint").status_code == 405
    assert client.get("/nowhere").status_code == 404


def test_http_state_error_is_one_line_500(tmp_path: Path) -> None:
    w = make_witness(tmp_path)
    w.add_checkpoint(body(0, 3))
    next(tmp_path.glob("*.json")).write_text("{")
    with TestClient(create_witness_app(w)) as c:
        answer = c.post("/add-checkpoint", content=body(3, 5))
    assert answer.status_code == 500 and answer.text.count("\n") == 1


# -- the client against a real server -----------------------------------------------------------
@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """The witness app under uvicorn on a free loopback port; yields its URL."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(create_witness_app(make_witness(tmp_path)), log_level="error")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(2000):
        if srv.started:
            break
        threading.Event().wait(0.01)
    assert srv.started
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(30)
    sock.close()


def test_the_client_gets_cosignatures_and_retries_from_the_latest(server: str) -> None:
    lines, latest = request_cosignature(server, 0, [], note(10), witness=wkey())
    assert latest is None and len(lines) == 1
    assert verify_cosignatures(add_signature_lines(note(10), lines), [wkey()], 1) == 1
    lines, latest = request_cosignature(server + "/", 4, TREE.consistency_path(4, 12), note(12))
    assert (lines, latest) == ([], 10)
    lines, latest = request_cosignature(server, 10, TREE.consistency_path(10, 12), note(12))
    assert len(lines) == 1 and latest is None
    with pytest.raises(WitnessError, match=r"same size 12 \(a fork\)"):
        request_cosignature(server, 12, [], note(12, FORK))
    with pytest.raises(WitnessError, match=r"refused \(422\): fork:"):
        request_cosignature(server, 12, FORK.consistency_path(12, 20), note(20, FORK))
    other = Checkpoint(origin_for(OTHER_LOG), 3, TREE.root(3), TIME).sign(OTHER_LOG)
    with pytest.raises(WitnessError, match=rf"witness {server}: refused \(404\): unknown log"):
        request_cosignature(server, 0, [], other)
    stranger = WitnessKey(W_NAME, OTHER_LOG.public_key())
    with pytest.raises(WitnessError, match="no valid cosignature"):
        request_cosignature(server, 12, [], note(12), witness=stranger)


def test_the_client_never_prints_credentials(server: str) -> None:
    url = server.replace("http://", "http://judge:s3cret@") + "/?token=t0ken#frag"
    lines, _ = request_cosignature(url, 0, [], note(2))
    assert len(lines) == 1
    other = Checkpoint(origin_for(OTHER_LOG), 3, TREE.root(3), TIME).sign(OTHER_LOG)
    with pytest.raises(WitnessError) as info:
        request_cosignature(url, 0, [], other)
    assert "s3cret" not in str(info.value) and "t0ken" not in str(info.value)
    assert server in str(info.value)


def test_the_client_reports_an_unreachable_witness() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    with pytest.raises(WitnessError, match=rf"witness http://127.0.0.1:{port}: unreachable"):
        request_cosignature(f"http://u:pw@127.0.0.1:{port}", 0, [], note(2), timeout=2)
    with pytest.raises(WitnessError, match="not an http"):
        request_cosignature("file:///etc/passwd", 0, [], note(2))


# -- the commands ---------------------------------------------------------------------------
@pytest.fixture
def keys(tmp_path: Path) -> dict[str, str]:
    paths = {}
    for what, key in (("w", W_KEY), ("log", LOG_KEY)):
        private = tmp_path / f"{what}.key"
        private.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        public = tmp_path / f"{what}.pub"
        public.write_bytes(
            key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )
        paths[what], paths[f"{what}.pub"] = str(private), str(public)
    return paths


def test_cli_vkey(keys: dict[str, str]) -> None:
    result = CliRunner().invoke(cli, ["witness", "vkey", "--key", keys["w"], "--name", W_NAME])
    assert result.exit_code == 0 and result.output == witness_vkey(W_NAME, W_KEY) + "\n"
    result = CliRunner().invoke(
        cli, ["witness", "vkey", "--key", keys["w"], "--name", W_NAME, "--json"]
    )
    assert json.loads(result.output)["vkey"] == witness_vkey(W_NAME, W_KEY)
    result = CliRunner().invoke(cli, ["witness", "vkey", "--key", keys["log.pub"], "--name", "x"])
    assert result.exit_code == 2 and "not an unencrypted PEM private key" in result.output


def test_cli_add_checkpoint(keys: dict[str, str], tmp_path: Path) -> None:
    def run(request: bytes, *extra: str) -> tuple[int, str]:
        path = tmp_path / "request.txt"
        path.write_bytes(request)
        args = ["witness", "add-checkpoint", str(path), "--key", keys["w"], "--name", W_NAME]
        args += ["--state", str(tmp_path / "state"), "--log", keys["log.pub"], *extra]
        result = CliRunner().invoke(cli, args)
        return result.exit_code, result.output

    code, out = run(body(0, 10))
    assert code == 0 and verify_cosignatures(add_signature_lines(note(10), [out]), [wkey()], 1)
    code, out = run(body(4, 12))
    assert code == 1 and out.startswith("battlejudge: error: refused (409): conflict:")
    assert out.count("\n") == 1
    code, out = run(add_checkpoint_body(10, [], note(10, FORK)), "--json")
    assert code == 1
    doc = json.loads(out.splitlines()[0])
    assert (doc["cosigned"], doc["status"], doc["latest"]) == (False, 409, 10)
    code, out = run(b"old 1O\n\n")
    assert code == 2 and out.count("\n") == 1 and "request.txt" in out
    code, out = run(body(10, 12), "--json")
    assert code == 0 and json.loads(out)["cosigned"] is True


def test_cli_lists_witness() -> None:
    result = CliRunner().invoke(cli, ["witness", "--help"])
    assert result.exit_code == 0
    for command in ("serve", "vkey", "add-checkpoint"):
        assert command in result.output
