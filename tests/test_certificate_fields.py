"""``verify`` checks every field a certificate states (issue 34, item 7).

The fields and how each is checked are listed in the docstring of
:mod:`battlejudge.proofs.battleline.certificate`. Here: a formation label relabelled, under
Fog (where only the sum counts and the rules code names every formation a host) and
without, for the claimant and for the witness, is rejected by ``battlejudge verify`` with
the field named; every genuine certificate of the rulebook examples still verifies; and a
Hypothesis test changes one stated field of a genuine certificate at a time and expects
the certificate rejected.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import assume, given
from hypothesis import strategies as st

from battlejudge import examples
from battlejudge.cli.main import cli
from battlejudge.proofs.battleline import certificate as cf
from battlejudge.solver import battleline as bl
from battlejudge.solver.battleline.cards import CARDS
from battlejudge.solver.battleline.formation import CATEGORIES, best_formation
from battlejudge.solver.errors import VerificationError

RULEBOOK = {c["name"]: bl.ClaimQuestion.from_json(c["question"]) for c in examples.rulebook_cases()}
"""examples/rulebook.json: each case cites its rulebook section or ruling."""
EXTRA = {
    # Fog: only the sum counts (Rules: Fog); wild cards take their highest value.
    "fog-wild-mine": bl.ClaimQuestion(mine="alexander R9 O8", theirs="cavalry B2", fog=True),
    "fog-wild-witness": bl.ClaimQuestion(mine="R1 O2 Y4", theirs="darius", fog=True),
    "wild-mine": bl.ClaimQuestion(mine="B8 alexander B10", theirs="R2"),  # alexander as B9
    "wild-witness": bl.ClaimQuestion(mine="R2 R4 R6", theirs="cavalry"),  # cavalry as R8
    "mud-invalid": bl.ClaimQuestion(mine="R4 R5 R3 R6", theirs="B8", mud=True),
}
QUESTIONS = {**RULEBOOK, **EXTRA}
GENUINE: dict[str, dict[str, Any]] = {
    name: cf.to_file_model(bl.prove(q).certificate).model_dump(mode="json")
    for name, q in QUESTIONS.items()
}
"""Each question's certificate, as its file's JSON."""
VERY_LONG = "600"
"""--time-limit for ``verify``'s worker: a safety net no check here comes near (a wall-clock
limit must never decide a test: tests/conftest.py)."""


def _check(data: dict[str, Any]) -> None:
    """The file ``verify`` reads: the schema, the rebuilt certificate, the check."""
    bl.verify(cf.from_file_model(cf.CertificateFile.model_validate(data)))


def _verify_command(tmp_path: Path, data: dict[str, Any]) -> tuple[int, str]:
    path = tmp_path / "cert.json"
    path.write_text(json.dumps(data))
    r = CliRunner().invoke(cli, ["verify", str(path), "--time-limit", VERY_LONG])
    return r.exit_code, r.stdout + r.stderr


def test_the_examples_cover_fog_and_wild_cards_on_both_sides() -> None:
    fog = [d for d in GENUINE.values() if d["question"]["fog"]]
    assert {d["verdict"] for d in fog} == {"valid", "invalid"}
    assert all(d["mine"]["formation"] == "host" for d in fog)
    assert all(d["witness"]["formation"] == "host" for d in fog if d["witness"])
    assert any(d["mine"]["wilds"] for d in fog) and any(
        d["witness"]["wilds"] for d in fog if d["witness"]
    )


# -- relabelled formations ---------------------------------------------------------------------
RELABELLED = [
    (name, field, label)
    for name, field in [
        ("fog-sums-blocked", "mine"),  # valid under Fog: host 40, relabelled
        ("fog-sums-only", "mine"),  # invalid under Fog
        ("fog-sums-only", "witness"),
        ("fog-wild-mine", "mine"),
        ("fog-wild-witness", "witness"),
        ("wedge-beats-blue-8", "mine"),  # no Fog: Wedge 12
        ("leader-in-wedge", "mine"),
        ("leader-in-wedge", "witness"),
        ("wild-witness", "witness"),
    ]
    for label in CATEGORIES
    if label != GENUINE[name][field]["formation"]
]


@pytest.mark.parametrize(("name", "field", "label"), RELABELLED)
def test_a_relabelled_formation_is_rejected_by_verify(
    tmp_path: Path, name: str, field: str, label: str
) -> None:
    data = json.loads(json.dumps(GENUINE[name]))
    true_label = data[field]["formation"]
    data[field]["formation"] = label
    code, out = _verify_command(tmp_path, data)
    assert code == 1, out
    assert f"{field}.formation says {label!r}" in out
    assert f"makes {bl.format_cards(_cards(name, field))} a {true_label!r}" in out
    if QUESTIONS[name].fog:
        assert "under Fog only the sum counts" in out


def _cards(name: str, field: str) -> tuple[bl.Card, ...]:
    q = QUESTIONS[name]
    if field == "mine":
        return q.mine
    return (*q.theirs, *bl.parse_cards(GENUINE[name]["witness"]["added"]))


@pytest.mark.parametrize("name", ["fog-sums-blocked", "fog-sums-only", "leader-in-wedge"])
def test_a_changed_sum_is_rejected_naming_the_field(tmp_path: Path, name: str) -> None:
    for field in ("mine", "witness"):
        if GENUINE[name][field] is None:
            continue
        data = json.loads(json.dumps(GENUINE[name]))
        data[field]["sum"] += 1
        code, out = _verify_command(tmp_path, data)
        assert code == 1 and f"{field}.sum says" in out, out


# -- genuine certificates still verify ---------------------------------------------------------
def test_the_demo_verifies_every_rulebook_certificate() -> None:
    r = CliRunner().invoke(cli, ["demo", "--json"])
    assert r.exit_code == 0, r.output
    shown = json.loads(r.stdout)
    assert shown["count"] == len(RULEBOOK) and shown["as_expected"] == len(RULEBOOK)
    assert all(e["verified"] is True for e in shown["examples"])


@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_every_genuine_certificate_verifies_from_its_file(tmp_path: Path, name: str) -> None:
    # The golden cases (tests/test_golden.py, examples/rulebook.json) and the extra Fog,
    # Mud and wild-card ones, written to a file and verified by the command.
    code, out = _verify_command(tmp_path, GENUINE[name])
    assert code == 0 and "VERIFIED" in out, out
    _check(GENUINE[name])


# -- one stated field changed at a time --------------------------------------------------------
Draw = Callable[[st.SearchStrategy[Any]], Any]
TROOPS = [str(c) for c in CARDS if c.is_troop]
WILDS = [str(c) for c in CARDS if not c.is_troop]


def _other(draw: Draw, choices: list[Any], now: Any) -> Any:
    return draw(st.sampled_from([c for c in choices if c != now]))


def _hex(draw: Draw, now: str) -> str:
    new: str = draw(st.text("0123456789abcdef", min_size=64, max_size=64))
    assume(new != now)
    return new


def _pack(text: str) -> str:
    return base64.b64encode(zlib.compress(text.encode())).decode()


def _unpack(blob: str) -> str:
    return zlib.decompress(base64.b64decode(blob)).decode()


def _cards_changed(draw: Draw, cards: list[str], pool: list[str]) -> list[str]:
    """``cards`` with one card added, dropped or replaced (from ``pool``)."""
    how = draw(st.sampled_from(["add", "drop", "replace"] if cards else ["add"]))
    fresh = [c for c in pool if c not in cards]
    assume(fresh or how == "drop")
    if how == "add":
        return [*cards, draw(st.sampled_from(fresh))]
    i = draw(st.integers(0, len(cards) - 1))
    if how == "drop":
        return cards[:i] + cards[i + 1 :]
    return [*cards[:i], draw(st.sampled_from(fresh)), *cards[i + 1 :]]


def _wilds_changed(draw: Draw, wilds: dict[str, str]) -> dict[str, str]:
    new: dict[str, str] = draw(
        st.dictionaries(st.sampled_from(WILDS + TROOPS[:3]), st.sampled_from(TROOPS), max_size=2)
    )
    assume(new != wilds)
    return new


def _added_changed(draw: Draw, d: dict[str, Any]) -> list[str]:
    """The witness's troops changed so that what it states is no longer true: one too many
    or too few, a card face up, or another troop that makes a different formation (a
    replacement making the same one is another true witness, not a false statement)."""
    q = d["question"]
    added = list(d["witness"]["added"])
    face_up = q["mine"] + q["seen"] + q["theirs"]
    how = draw(st.sampled_from(["add", "drop", "face-up", "replace"] if added else ["add"]))
    if how == "add":
        return [*added, draw(st.sampled_from([t for t in TROOPS if t not in added]))]
    i = draw(st.integers(0, len(added) - 1))
    if how == "drop":
        return added[:i] + added[i + 1 :]
    if how == "face-up":
        return [*added[:i], draw(st.sampled_from(face_up)), *added[i + 1 :]]
    pool = [t for t in TROOPS if t not in face_up and t not in added]
    new = [*added[:i], draw(st.sampled_from(pool)), *added[i + 1 :]]
    made = best_formation([*q["theirs"], *new], q["mud"], q["fog"])
    stated = d["witness"]
    assume(
        (made.name, made.total, made.wild_choices())
        != (stated["formation"], stated["sum"], stated["wilds"])
    )
    return new


def _mutate(field: str, d: dict[str, Any], draw: Draw) -> None:
    """Change ``field`` of the certificate ``d`` (and nothing else) to another value the
    schema accepts; assume() away fields the certificate does not state."""
    q, w = d["question"], d["witness"]
    valid = d["verdict"] == "valid"
    if field.startswith("question."):
        key = field.split(".")[1]
        if key in ("mine", "theirs", "seen"):
            q[key] = _cards_changed(draw, q[key], TROOPS + WILDS)
        elif key in ("mud", "fog"):
            q[key] = not q[key]
        else:
            q[key] = _other(draw, [None, "mine", "theirs"], q[key])
    elif field == "question_sha256":
        d[field] = _hex(draw, d[field])
    elif field == "verdict":
        d[field] = "invalid" if valid else "valid"
    elif field.startswith(("mine.", "witness.")):
        side, key = field.split(".")
        assume(d[side] is not None)
        part = d[side]
        if key == "formation":
            part[key] = _other(draw, list(CATEGORIES), part[key])
        elif key == "sum":
            part[key] += draw(st.integers(-12, 12).filter(bool))
        elif key == "wilds":
            part[key] = _wilds_changed(draw, part[key])
        else:
            part[key] = _added_changed(draw, d)
    elif field == "witness":
        d[field] = None if w is not None else GENUINE["fog-sums-only"]["witness"]
    elif field == "blocking":
        # Another set: more or fewer face-up troops (the CNF no longer matches), or a card
        # that is not face up (never blocking); an invalid verdict has no blocking set.
        face_up = q["mine"] + q["seen"]
        pool = [t for t in TROOPS if (t in face_up) == draw(st.booleans())]
        before = set(d[field])
        d[field] = _cards_changed(draw, d[field], pool)
        assume(set(d[field]) != before)
    elif field in ("cnf", "proof"):
        d[field] = None if d[field] is not None else GENUINE["fog-sums-blocked"][field]
    elif field.startswith(("cnf.", "proof.")):
        blob, key = field.split(".")
        assume(d[blob] is not None)
        if key == "sha256":
            d[blob][key] = _hex(draw, d[blob][key])
        else:
            lines = _unpack(d[blob][key]).splitlines()
            i = draw(st.integers(0, len(lines) - 1))
            changed = lines[:i] + lines[i + 1 :]  # one line dropped
            d[blob][key] = _pack("\n".join(changed) + "\n")
    elif field == "encoder":
        d[field] = _other(draw, ["battleline-cnf/1", "battleline-cnf/3", ""], d[field])
    else:  # pragma: no cover
        raise AssertionError(field)


FIELDS = [
    "question.mine",
    "question.theirs",
    "question.seen",
    "question.mud",
    "question.fog",
    "question.completed_first",
    "question_sha256",
    "verdict",
    "mine.formation",
    "mine.sum",
    "mine.wilds",
    "witness",
    "witness.added",
    "witness.formation",
    "witness.sum",
    "witness.wilds",
    "blocking",
    "cnf",
    "cnf.sha256",
    "cnf.data",
    "proof",
    "proof.sha256",
    "proof.data",
    "encoder",
]
"""Every field a certificate states, but those the schema fixes (``format``, ``version``,
``game``, ``cnf.encoding``, ``proof.encoding``: test_the_schema_fixes_the_rest) and the
informational ``solver`` (tests/test_certificate_file.py::test_the_solver_name_is_
informational)."""


@given(st.sampled_from(sorted(GENUINE)), st.sampled_from(FIELDS), st.data())
def test_changing_any_one_stated_field_is_rejected(name: str, field: str, data: Any) -> None:
    d = json.loads(json.dumps(GENUINE[name]))
    _mutate(field, d, data.draw)
    assume(d != GENUINE[name])
    with pytest.raises(VerificationError) as e:
        _check(d)
    if field.startswith(("mine.", "witness.")) and field != "witness.added":
        assert field in str(e.value)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("format", "battlejudge-cert"),
        ("version", 2),
        ("game", "nine-circles"),
        ("cnf.encoding", "gzip+base64"),
        ("proof.encoding", "raw"),
    ],
)
def test_the_schema_fixes_the_rest(field: str, value: object) -> None:
    from pydantic import ValidationError

    d = json.loads(json.dumps(GENUINE["fog-sums-blocked"]))
    *outer, key = field.split(".")
    (d[outer[0]] if outer else d)[key] = value
    with pytest.raises(ValidationError, match=key):
        cf.CertificateFile.model_validate(d)
