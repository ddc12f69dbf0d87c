"""Limits on input: JSON depth and integer size on every JSON file, line and record
(issue 15, item 5), named by file and JSON path, never a traceback."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from battlejudge.cli.main import cli
from battlejudge.proofs.battleline import certificate as cf
from battlejudge.proofs.log import ProofLog, append_proved, read_log
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import InputError
from battlejudge.solver.json_input import MAX_DEPTH, MAX_INT_DIGITS, parse_json

EXAMPLES = Path(__file__).parent.parent / "examples"
GMT = bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10")
DEEP = 100_000
HUGE = 5_000


def run(*args: str, input: str | bytes | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input)


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def no_traceback(r: Result) -> None:
    assert "Traceback" not in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception


# -- the parser ------------------------------------------------------------------------------
def test_within_the_limits_is_plain_json() -> None:
    text = '{"a": [1, 2.5, "x", null, true], "b": {"c": -12}}'
    assert parse_json(text) == json.loads(text)
    assert parse_json(text.encode()) == json.loads(text)
    assert parse_json(nested(MAX_DEPTH)) == json.loads(nested(MAX_DEPTH))
    assert parse_json("9" * MAX_INT_DIGITS) == int("9" * MAX_INT_DIGITS)
    assert parse_json("-" + "9" * MAX_INT_DIGITS) == -int("9" * MAX_INT_DIGITS)


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 500, 5_000, DEEP])
def test_too_deep_names_the_source_and_the_path(depth: int) -> None:
    text = '{"flags": [{"north": ' + nested(depth - 3) + "}]}"
    with pytest.raises(InputError) as e:
        parse_json(text, "pos.json")
    message = str(e.value)
    assert message.startswith("pos.json: flags[0].north[0]")
    assert message.endswith(f"JSON nested more than {MAX_DEPTH} deep")
    assert "\n" not in message and len(message) < 200


def test_the_path_names_keys_after_other_keys() -> None:
    text = '{"a": 1, "b": "x,y", "c": [0, {"d": ' + nested(DEEP) + "}]}"
    with pytest.raises(InputError, match=r"^src: c\[1\]\.d\[0\]\.\.\.\[0\]\[0\]\[0\]\[0\]: JSON"):
        parse_json(text, "src")


def test_too_many_digits_names_the_path() -> None:
    text = '{"flags": [{"north": [{"card": "R4", "turn": ' + "7" * HUGE + "}]}]}"
    with pytest.raises(InputError) as e:
        parse_json(text, "pos.json")
    assert str(e.value) == (
        f"pos.json: flags[0].north[0].turn: an integer of {HUGE} digits (at most {MAX_INT_DIGITS})"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"x": NaN}', "x: NaN is not JSON"),
        ("[1, Infinity]", "[1]: Infinity is not JSON"),
        ('{"x": 1e999}', "x: the number 1e999 is too big for a float"),
        ("[1, 2", "not JSON (line 1, column 6: Expecting ',' delimiter)"),
        (b'{"x": "\xff"}', "not UTF-8 (byte 7)"),
    ],
)
def test_what_is_not_json(text: str | bytes, message: str) -> None:
    with pytest.raises(InputError) as e:
        parse_json(text, "f.json")
    assert str(e.value) == f"f.json: {message}"


# -- every reader ----------------------------------------------------------------------------
def _position(tmp_path: Path, example: str, field: str, bad: str) -> Path:
    """An example position file with one field's value replaced by ``bad`` JSON text."""
    data = json.loads((EXAMPLES / example).read_text(encoding="utf-8"))
    data[field] = "@BAD@"
    path = tmp_path / "pos.json"
    path.write_text(json.dumps(data).replace('"@BAD@"', bad), encoding="utf-8")
    return path


def _battleline(path: Path) -> object:
    from battlejudge.engines.battleline.position import load_position

    return load_position(path)


def _force_duel(path: Path) -> object:
    from battlejudge.engines.force_duel.position import read_position

    return read_position(str(path))


def _lines_of_battle(path: Path) -> object:
    from battlejudge.solver.lines_of_battle.position import load_question

    return load_question(str(path))


def _battleplan(path: Path) -> object:
    from battlejudge.cli.battleplan import load_position

    return load_position(str(path))


READERS: list[tuple[str, str, Callable[[Path], object]]] = [
    ("positions/wedge-beats-blue-8.json", "flags", _battleline),
    ("force_duel/position-sure-win.json", "units", _force_duel),
    ("lines_of_battle/odds.json", "units", _lines_of_battle),
    ("battleplan/kill-adjacent.json", "pieces", _battleplan),
]


@pytest.mark.parametrize(("example", "field", "read"), READERS)
def test_every_position_reader_refuses_deep_json(
    tmp_path: Path, example: str, field: str, read: Callable[[Path], object]
) -> None:
    path = _position(tmp_path, example, field, nested(DEEP))
    with pytest.raises(InputError, match=rf"pos\.json: {field}\[0\]\[0\].*nested more than"):
        read(path)


@pytest.mark.parametrize(("example", "field", "read"), READERS)
def test_every_position_reader_refuses_huge_integers(
    tmp_path: Path, example: str, field: str, read: Callable[[Path], object]
) -> None:
    path = _position(tmp_path, example, field, "1" + "0" * HUGE)
    with pytest.raises(InputError, match=rf"pos\.json: {field}: an integer of {HUGE + 1} digits"):
        read(path)


def test_the_readers_still_read_their_examples() -> None:
    for example, _field, read in READERS:
        read(EXAMPLES / example)


def test_a_saved_force_duel_card_set_is_read_within_the_limits() -> None:
    from battlejudge.engines.force_duel.cards import book_from_canonical

    with pytest.raises(InputError, match=r"saved card set: .*nested more than"):
        book_from_canonical(nested(DEEP))


# -- the commands named in the issue ----------------------------------------------------------
def _certificate(tmp_path: Path, bad: str) -> Path:
    path = tmp_path / "cert.json"
    cf.save_certificate(bl.prove(GMT).certificate, path)
    data = json.loads(path.read_text())
    data["mine"]["sum"] = "@BAD@"
    path.write_text(json.dumps(data).replace('"@BAD@"', bad))
    return path


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (nested(DEEP), r"mine\.sum\[0\]\[0\]\.\.\.\[0\]\[0\]\[0\]\[0\]: JSON nested more than 64"),
        ("1" * HUGE, rf"mine\.sum: an integer of {HUGE} digits"),
    ],
)
def test_verify_names_the_file_and_the_field(tmp_path: Path, bad: str, message: str) -> None:
    path = _certificate(tmp_path, bad)
    with pytest.raises(InputError, match=rf"cert\.json: {message}"):
        cf.load_certificate(path)
    r = run("verify", str(path))
    assert r.exit_code == 2, r.output
    assert "cert.json: mine.sum" in r.output
    no_traceback(r)


@pytest.mark.parametrize("bad", [nested(DEEP), "1" * HUGE])
def test_claim_position_names_the_file(tmp_path: Path, bad: str) -> None:
    path = _position(tmp_path, "positions/wedge-beats-blue-8.json", "flags", bad)
    r = run("claim", str(path), "--flag", "1", "--player", "north")
    assert r.exit_code == 2, r.output
    assert "pos.json: flags" in r.output
    no_traceback(r)


def test_claims_check_answers_the_other_lines() -> None:
    good = json.dumps(GMT.to_json())
    deep = '{"mine": ' + nested(DEEP) + "}"
    huge = '{"mine": ["R4"], "theirs": [' + "2" * HUGE + "]}"
    r = run("claims", "check", "-", input="\n".join([good, deep, huge, good]) + "\n")
    assert r.exit_code == 2, r.output
    no_traceback(r)
    out = [json.loads(x) for x in r.output.splitlines()]
    assert [o["line"] for o in out] == [1, 2, 3, 4]
    assert out[0]["verdict"] == out[3]["verdict"] == "valid"
    assert out[1]["error"].startswith("mine[0][0][0]")
    assert "nested more than" in out[1]["error"]
    assert out[2]["error"] == f"theirs[0]: an integer of {HUGE} digits (at most {MAX_INT_DIGITS})"


def _log_with(tmp_path: Path, bad: str) -> Path:
    path = tmp_path / "claims.log"
    with ProofLog(path, sync=False) as log:
        for _ in range(3):
            append_proved(log, bl.prove(GMT), game="g", turn=1, flag=1)
    lines = path.read_text().splitlines()
    record: dict[str, Any] = json.loads(lines[1])
    record["turn"] = "@BAD@"
    lines[1] = json.dumps(record).replace('"@BAD@"', bad)
    path.write_text("".join(x + "\n" for x in lines))
    return path


@pytest.mark.parametrize(
    ("bad", "detail"),
    [
        (nested(DEEP), "turn[0][0][0]...[0][0][0][0]: JSON nested more than 64 deep"),
        ("3" * HUGE, f"turn: an integer of {HUGE} digits (at most {MAX_INT_DIGITS})"),
    ],
)
def test_audit_names_the_record(tmp_path: Path, bad: str, detail: str) -> None:
    path = _log_with(tmp_path, bad)
    records, problems = read_log(path)
    assert len(records) == 2
    assert [(p.record, p.kind, p.detail) for p in problems] == [(1, "malformed", detail)]
    r = run("audit", str(path))
    assert r.exit_code == 1, r.output
    assert f"record 1: malformed: {detail}" in r.output
    no_traceback(r)
    # The log still takes appends, continuing the chain from its last record.
    with ProofLog(path, sync=False) as log:
        assert log.next_seq == 3


def test_claims_check_answers_every_good_line_around_bytes_that_are_not_utf8(
    tmp_path: Path,
) -> None:
    good = json.dumps(GMT.to_json()).encode()
    bad = b'{"mine": ["R4 \xff R5"]}'
    path = tmp_path / "q.jsonl"
    path.write_bytes(b"\n".join([good, bad, b"", b"\xfe\xff", good]) + b"\n")
    r = run("claims", "check", str(path))
    assert r.exit_code == 2, r.output
    no_traceback(r)
    out = [json.loads(x) for x in r.output.splitlines()]
    assert [o["line"] for o in out] == [1, 2, 4, 5]
    assert out[0]["verdict"] == out[3]["verdict"] == "valid"
    assert out[1] == {"line": 2, "error": "not UTF-8 (byte 14)"}
    assert out[2] == {"line": 4, "error": "not UTF-8 (byte 0)"}
    # The same from standard input.
    r = run("claims", "check", "-", input=path.read_bytes())
    again = [json.loads(x) for x in r.output.splitlines()]
    assert [{k: v for k, v in o.items() if k != "micros"} for o in again] == [
        {k: v for k, v in o.items() if k != "micros"} for o in out
    ]
