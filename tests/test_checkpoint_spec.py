"""The checkpoint and witness code against the examples published with the C2SP
specifications (signed-note.md, tlog-checkpoint.md, tlog-cosignature.md, tlog-witness.md),
and against the example key and note of golang.org/x/mod/sumdb/note, the implementation
c2sp.org/signed-note was written from (the C2SP examples come without their public keys,
so only that one can show a signature verifying).

Each test's docstring names the spec file and section its example comes from. Our own
checkpoints carry a ``time ...`` extension line, which the specs' examples lack: where
:func:`~battlejudge.proofs.checkpoint.parse_checkpoint` refuses them for that, the test
says so and checks the same thing at the signed-note level."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from battlejudge.proofs.checkpoint import (
    Checkpoint,
    CheckpointError,
    note_key_id,
    parse_checkpoint,
    verify_checkpoint,
)
from battlejudge.proofs.witness import (
    Witness,
    WitnessKey,
    WitnessRefusal,
    add_checkpoint_body,
    add_signature_lines,
    cosign,
    cosignature_message,
    cosigner_key_id,
    format_vkey,
    parse_add_checkpoint,
    parse_vkey,
    parse_witness_key,
    read_note,
    read_tree_head,
    verify_cosignatures,
    verify_note_signature,
)
from battlejudge.solver.errors import InputError

# signed-note.md, the example at the top of the document.
QUASIMODO = (
    "Ognuno sta solo sul cuor della terra\n"
    "trafitto da un raggio di sole:\n"
    "\n"
    "ed è subito sera.\n"
    "\n"
    "— quasimodo.example/salvatore "
    "NnugSzTjtVAewIS+Z/iJhUPeFDkO/5QQ2i5ddnGITLlC+EhfLW9oJKONrMouFSQU0xMcXxj99ihAQwaqP3ZekRwNtIc=\n"
)

# tlog-checkpoint.md, the example at the top of the document.
SOFA_TEXT = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
SOFA_LOG_LINE = (
    "— example.com/behind-the-sofa "
    "Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8="
)
SOFA = f"{SOFA_TEXT}\n{SOFA_LOG_LINE}\n"

# tlog-cosignature.md, the example checkpoint with a cosignature, and the example of the
# Ed25519 signed message (section "Ed25519 signed message").
SOFA_COSIGNATURE = (
    "— witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2"
    "oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA=="
)
SOFA_COSIGNED = f"{SOFA}{SOFA_COSIGNATURE}\n"
SOFA_MESSAGE = (
    "cosignature/v1\n"
    "time 1679315147\n"
    "example.com/behind-the-sofa\n"
    "20852163\n"
    "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
)

# tlog-witness.md, section "add-checkpoint": the example request body and response body.
WITNESS_REQUEST = (
    "old 20852014\n"
    "PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n"
    "jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=\n"
    "5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=\n"
    "/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=\n"
    "\n"
    f"{SOFA_TEXT}"
    "\n"
    f"{SOFA_LOG_LINE}\n"
    "— example.com/behind-the-sofa "
    "opLqBQsREYCgu6xQkYQwJr9fo45a62DN9EdmHXnZdXNqlcVGlCum2Wks+49/V6267UEjw6QUXTS5Rovnzv++qbSzm9Q=\n"
)
WITNESS_RESPONSE = (
    "— witness.example/w1 CMp+6LWBU0anHGH5aNDTJkH/gj79sG+T6+iP2ThYN5krrDJbR1HDnucjL39QsZTSvVjyQLrd"
    "k3DXDqI5G2HgLatVs0pWh6Up69HVOw==\n"
    "— witness.example/w1 I7rEps0pvK2UqkS2gSpVUDhrhVtQV9lgF6pRrWAvjJHjyWpW7VcE3SiOlVlbQNt64vWhO+Dl"
    "kL0+UfzuOBMh9ChdMkP1vi/lCAsmlw==\n"
    "— witness.example/w2 AWui8Sk55XjYLOijihBjhqEH6nS1ndDymE0a+6idX7pLcnoB+dhnz0854aLZgrrKbYKA7nC3"
    "HNJhm/kWl7oJlqU3rXXvpysAdyP3wQ==\n"
)

# golang.org/x/mod/sumdb/note, package documentation ("Generating Keys", "Signing Notes",
# "Verifying Notes"): the example verifier key, signer key and signed note.
PETER_VKEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
PETER_SKEY = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
PETER_TEXT = (
    "If you think cryptography is the answer to your problem,\n"
    "then you don't know what your problem is.\n"
)
PETER_NOTE = (
    f"{PETER_TEXT}\n— PeterNeumann "
    "x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"
)


def peter_key() -> Ed25519PrivateKey:
    """The example signer key: its last part is base64(0x01 || 32-byte Ed25519 seed)."""
    raw = base64.b64decode(PETER_SKEY.split("+", 4)[4])  # the base64 may hold '+' too
    assert raw[0] == 1
    return Ed25519PrivateKey.from_private_bytes(raw[1:])


def raw_public(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


# -- signed-note.md ----------------------------------------------------------------------------
def test_signed_note_example_reads() -> None:
    """signed-note.md, the example note and section "Format": the text may hold empty lines;
    it is separated from the signatures by the last one, and includes its final newline."""
    note = read_note(QUASIMODO)
    assert note.text == (
        "Ognuno sta solo sul cuor della terra\ntrafitto da un raggio di sole:\n\n"
        "ed è subito sera.\n"
    )
    ((name, kid, sig),) = note.signatures
    assert name == "quasimodo.example/salvatore" and len(kid) == 4 and len(sig) == 64
    with pytest.raises(CheckpointError):
        parse_checkpoint(QUASIMODO)  # a note, but no checkpoint


@pytest.mark.parametrize(
    "bad",
    [
        QUASIMODO[:-1],  # "a text ending in newline ... signature lines ... newline"
        QUASIMODO.replace("sera.", "sera.\t"),  # no control characters but newline
        QUASIMODO.replace("— quasimodo", "- quasimodo"),  # an em dash starts the line
        QUASIMODO.replace("quasimodo.example/salvatore", "quasimodo.example/salva tore"),
        QUASIMODO.replace("example/salvatore", "example/salva\u00a0tore"),  # a Unicode space
        QUASIMODO.replace("example/salvatore", "example/salva+tore"),  # no plus in names
        QUASIMODO.replace("NnugSzTj", "NnugSzT!"),  # base64
        QUASIMODO.replace("\n\n—", "\n—"),  # the signatures follow a blank line
    ],
)
def test_signed_note_format_violations_are_refused(bad: str) -> None:
    """signed-note.md, section "Format": UTF-8 text ending in a newline, a blank line, then
    lines of an em dash, a space, a key name without spaces or '+', a space, base64."""
    with pytest.raises(CheckpointError):
        read_note(bad)


def test_ed25519_key_id_and_signature_of_the_reference_example() -> None:
    """signed-note.md, section "Ed25519 signatures" (key ID = SHA-256(name || 0x0A || 0x01 ||
    key)[:4]), on the example key and note of golang.org/x/mod/sumdb/note: our key ID is its
    c74f20a3, our signature line its line byte for byte (Ed25519 is deterministic)."""
    key = peter_key()
    assert note_key_id("PeterNeumann", key.public_key()).hex() == "c74f20a3"
    expected = hashlib.sha256(b"PeterNeumann\n\x01" + raw_public(key)).digest()[:4]
    assert note_key_id("PeterNeumann", key.public_key()) == expected
    blob = note_key_id("PeterNeumann", key.public_key()) + key.sign(PETER_TEXT.encode())
    assert f"{PETER_TEXT}\n— PeterNeumann {base64.b64encode(blob).decode()}\n" == PETER_NOTE
    assert verify_note_signature(PETER_NOTE, "PeterNeumann", key.public_key()) == PETER_TEXT
    with pytest.raises(CheckpointError, match="does not match"):
        verify_note_signature(
            PETER_NOTE.replace("cryptography", "cryptographY"), "PeterNeumann", key.public_key()
        )


def test_the_reference_verifier_key() -> None:
    """signed-note.md, section "Signatures" (the key ID and the signature type byte) as
    verifier keys NAME+KEYID+base64(type || key), the example of golang.org/x/mod/sumdb/note:
    it parses, prints back the same, and is no witness key (type 0x01, not 0x04)."""
    name, sig_type, key = parse_vkey(PETER_VKEY)
    assert (name, sig_type) == ("PeterNeumann", b"\x01")
    assert raw_public(peter_key()) == key.public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    assert format_vkey(name, sig_type, key) == PETER_VKEY
    assert verify_note_signature(PETER_NOTE, name, key) == PETER_TEXT
    with pytest.raises(InputError, match=r"not a witness key \(0x04\)"):
        parse_witness_key(PETER_VKEY)
    with pytest.raises(InputError, match="does not match"):
        parse_vkey(PETER_VKEY.replace("c74f20a3", "c74f20a4"))


def test_verifiers_ignore_unknown_keys_sharing_a_name_or_an_id() -> None:
    """signed-note.md, section "Signatures": signatures from unknown keys are ignored, even
    if they share a name or ID (but not both) with a known key; a known key's signature that
    fails rejects the note."""
    key = peter_key()
    kid = note_key_id("PeterNeumann", key.public_key())
    stranger = Ed25519PrivateKey.generate()
    same_name = note_key_id("PeterNeumann", stranger.public_key()) + stranger.sign(b"x")
    same_id = kid + stranger.sign(b"x")
    lines = [
        f"— PeterNeumann {base64.b64encode(same_name).decode()}",
        f"— SomeoneElse {base64.b64encode(same_id).decode()}",
    ]
    note = add_signature_lines(PETER_NOTE, lines)
    assert verify_note_signature(note, "PeterNeumann", key.public_key()) == PETER_TEXT
    only_strangers = add_signature_lines(PETER_TEXT, lines)
    with pytest.raises(CheckpointError, match="no signature of PeterNeumann"):
        verify_note_signature(only_strangers, "PeterNeumann", key.public_key())
    forged = f"— PeterNeumann {base64.b64encode(kid + stranger.sign(b'x')).decode()}"
    with pytest.raises(CheckpointError, match="does not match"):
        verify_note_signature(
            add_signature_lines(PETER_NOTE, [forged]), "PeterNeumann", key.public_key()
        )


def test_sixteen_signatures_are_accepted() -> None:
    """signed-note.md, section "Format": verifiers MUST accept at least 16 signatures."""
    log = peter_key()
    note = Checkpoint("battlejudge/spec", 3, bytes(32), "2026-01-01T00:00:00.000Z").sign(log)
    witnesses = [(f"w.example/{i}", Ed25519PrivateKey.generate()) for i in range(16)]
    lines = [cosign(note, k, name, 1_700_000_000 + i) for i, (name, k) in enumerate(witnesses)]
    cosigned = add_signature_lines(note, lines)
    assert len(parse_checkpoint(cosigned).signatures) == 17
    assert verify_checkpoint(cosigned, log.public_key()).size == 3
    keys = [WitnessKey(name, k.public_key()) for name, k in witnesses]
    assert verify_cosignatures(cosigned, keys, 16) == 16


# -- tlog-checkpoint.md ------------------------------------------------------------------------
def test_checkpoint_example_reads() -> None:
    """tlog-checkpoint.md, section "Note text": origin, tree size in decimal, base64 root of
    the Merkle tree; the log's key name in its signature line matches the origin."""
    note = read_note(SOFA)
    head = read_tree_head(note.text)
    assert head.origin == "example.com/behind-the-sofa" and head.size == 20852163
    assert head.root == base64.b64decode("CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=")
    ((name, kid, sig),) = note.signatures
    assert (name, kid.hex(), len(sig)) == (head.origin, "033de0ae", 64)


def test_our_checkpoint_reader_wants_its_time_line() -> None:
    """tlog-checkpoint.md, section "Note text": extension lines are optional. Our checkpoints
    always have a ``time`` one and parse_checkpoint requires it, so it refuses the spec's
    example; read_tree_head (what the witness reads) takes both, and ignores extensions."""
    with pytest.raises(CheckpointError, match=r"no 'time \.\.\.' line"):
        parse_checkpoint(SOFA)
    spec = read_tree_head(SOFA_TEXT)
    ours = read_tree_head(Checkpoint(spec.origin, spec.size, spec.root, "2026-01-01").text())
    assert ours == spec


@pytest.mark.parametrize(
    "text",
    [
        "example.com/behind-the-sofa\n020852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
        "example.com/behind-the-sofa\n20852163\n",
        "\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
        f"{SOFA_TEXT}\nextension\n",  # extension lines are non-empty
        "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jx=\n",
    ],
)
def test_checkpoint_text_violations_are_refused(text: str) -> None:
    """tlog-checkpoint.md, section "Note text": at least three non-empty lines, a size
    without leading zeroes, a root hash, non-empty extension lines."""
    with pytest.raises(CheckpointError):
        read_tree_head(text)


def test_our_checkpoints_are_the_spec_format() -> None:
    """tlog-checkpoint.md, sections "Note text" and "Signatures", with the signed-note
    example key: our checkpoint's first three lines are the spec's, its key name is its
    origin, and the signature verifies as a plain signed note."""
    key = peter_key()
    cp = Checkpoint("battlejudge/spec", 20852163, read_tree_head(SOFA_TEXT).root, "2026-01-01")
    note = cp.sign(key)
    assert note.startswith(
        "battlejudge/spec\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
    )
    assert verify_note_signature(note, "battlejudge/spec", key.public_key()) == cp.text()
    assert verify_checkpoint(note, key.public_key()) == cp


# -- tlog-cosignature.md -----------------------------------------------------------------------
def test_cosignature_signed_message_example() -> None:
    """tlog-cosignature.md, section "Ed25519 signed message": the header line, the timestamp
    line and the note text, byte for byte the spec's example."""
    assert cosignature_message(SOFA_TEXT, 1679315147) == SOFA_MESSAGE.encode()
    assert cosignature_message(SOFA_TEXT, 0).startswith(b"cosignature/v1\ntime 0\n")


def test_cosignature_example_layout() -> None:
    """tlog-cosignature.md, section "Format" and the example at the top: a note signature
    line whose base64 is the 4-byte key ID, the 8-byte big-endian timestamp (1679315147,
    the time of the signed-message example) and the 64-byte Ed25519 signature; ours has the
    same shape and its key ID uses the type byte 0x04."""
    note = read_note(SOFA_COSIGNED)
    assert note.text == SOFA_TEXT
    name, kid, sig = note.signatures[1]
    assert (name, kid.hex(), len(sig)) == ("witness.example.com/w1", "8d66cf3f", 72)
    assert int.from_bytes(sig[:8], "big") == 1679315147
    w = Ed25519PrivateKey.generate()
    ours = read_note(add_signature_lines(SOFA, [cosign(SOFA, w, name, 1679315147)]))
    ours_name, ours_kid, ours_sig = ours.signatures[1]
    assert (ours_name, len(ours_sig), ours_sig[:8]) == (name, 72, sig[:8])
    assert ours_kid == hashlib.sha256(name.encode() + b"\n\x04" + raw_public(w)).digest()[:4]
    assert ours_kid == cosigner_key_id(name, w.public_key())
    w.public_key().verify(ours_sig[8:], SOFA_MESSAGE.encode())


def test_cosignature_example_of_an_unknown_key_is_ignored() -> None:
    """tlog-cosignature.md, section "Format": clients ignore signature lines that do not match
    the name and key ID of a cosigner they are configured with."""
    stranger = WitnessKey("witness.example.com/w1", Ed25519PrivateKey.generate().public_key())
    with pytest.raises(CheckpointError, match="0 valid witness cosignatures of 1 needed"):
        verify_cosignatures(SOFA_COSIGNED, [stranger], 1)
    assert verify_cosignatures(SOFA_COSIGNED, [stranger], 0) == 0


# -- tlog-witness.md ---------------------------------------------------------------------------
def test_add_checkpoint_example_request() -> None:
    """tlog-witness.md, section "add-checkpoint": the example request body is an old size
    line, four base64 proof hashes, an empty line and a checkpoint with two signatures; our
    encoder writes the same bytes."""
    request = parse_add_checkpoint(WITNESS_REQUEST.encode())
    assert request.old == 20852014 and len(request.proof) == 4
    assert request.proof[0] == base64.b64decode("PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=")
    note = read_note(request.note)
    assert read_tree_head(note.text).size == 20852163 and len(note.signatures) == 2
    assert add_checkpoint_body(20852014, request.proof, request.note) == WITNESS_REQUEST.encode()


def test_add_checkpoint_example_response() -> None:
    """tlog-witness.md, section "add-checkpoint": the example response is signature lines,
    each ending in a newline, that a client appends to the checkpoint (here the timestamps
    are not real ones: the example's bytes are made up)."""
    lines = WITNESS_RESPONSE.splitlines()
    cosigned = add_signature_lines(SOFA, lines)
    note = read_note(cosigned)
    assert [n for n, _, _ in note.signatures] == [
        "example.com/behind-the-sofa",
        "witness.example/w1",
        "witness.example/w1",
        "witness.example/w2",
    ]
    assert all(len(sig) == 72 for _, _, sig in note.signatures[1:])
    assert add_signature_lines(cosigned, lines) == cosigned


def test_a_witness_answers_the_example_as_the_spec_says(tmp_path: Path) -> None:
    """tlog-witness.md, section "add-checkpoint": an unknown origin is 404; a known origin
    whose signatures do not verify against the trusted key is 403; an old size with a
    leading zero, or more than 63 proof lines, is a malformed request (400)."""
    key = Ed25519PrivateKey.generate()
    origin = "example.com/behind-the-sofa"
    unknown = Witness(tmp_path / "a", key, "w.example/1", {})
    with pytest.raises(WitnessRefusal) as info:
        unknown.add_checkpoint(WITNESS_REQUEST.encode())
    assert info.value.status == 404
    known = Witness(tmp_path / "b", key, "w.example/1", {origin: key.public_key()})
    with pytest.raises(WitnessRefusal) as info:
        known.add_checkpoint(WITNESS_REQUEST.encode())
    assert info.value.status == 403
    hashes = (base64.b64encode(bytes(32)).decode() + "\n") * 60
    for bad in (
        WITNESS_REQUEST.replace("old 20852014", "old 020852014"),
        WITNESS_REQUEST.replace("\n\nexample.com", f"\n{hashes}\nexample.com"),  # 64 lines
    ):
        with pytest.raises(WitnessRefusal) as info:
            known.add_checkpoint(bad.encode())
        assert info.value.status == 400
