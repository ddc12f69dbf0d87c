"""The battlejudge command, through click's CliRunner: answers, exit codes, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from battlejudge.bench import claims as bench_module
from battlejudge.cli.main import cli
from battlejudge.solver import battleline as bl

GMT = ["--mine", "R4 R5 R3", "--theirs", "B8", "--seen", "B7 B10"]


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input)


def test_claim_valid_with_explanation() -> None:
    r = run("claim", *GMT)
    assert r.exit_code == 0, r.output
    assert "VALID" in r.output
    assert "Blue 7 and Blue 10 are face up, so B8 can no longer become a Wedge" in r.output
    assert "Blocking set: B7 B10" in r.output
    assert "verified by dratify" in r.output


def test_claim_invalid_with_witness() -> None:
    r = run("claim", "--mine", "R4 R5 R3", "--theirs", "B8")
    assert r.exit_code == 1
    assert "INVALID" in r.output and "by adding" in r.output


def test_claim_json() -> None:
    r = run("claim", *GMT, "--json")
    assert r.exit_code == 0
    out = json.loads(r.output)
    assert out["verdict"] == "valid"
    assert out["mine"] == {
        "cards": ["R4", "R5", "R3"],
        "formation": "wedge",
        "sum": 12,
        "wilds": {},
    }
    assert out["blocking"] == ["B7", "B10"]
    assert out["witness"] is None
    r = run("claim", "--mine", "r4,r5,r3", "--theirs", "b8", "--json")
    out = json.loads(r.output)
    assert r.exit_code == 1 and out["verdict"] == "invalid"
    assert out["witness"]["formation"] == "wedge" and len(out["witness"]["added"]) == 2


def test_claim_mud_fog_and_completed_first() -> None:
    r = run("claim", "--mine", "R3 R4 R5 R6", "--theirs", "B8", "--seen", "B6 B9", "--mud")
    assert r.exit_code == 0, r.output
    r = run("claim", "--mine", "R10 Y10 B9", "--fog", "--json")
    assert r.exit_code == 1 and json.loads(r.output)["witness"]["sum"] == 30
    tie = ["--mine", "Y7 B2 G1", "--theirs", "Y3 B3 G4"]
    assert run("claim", *tie, "--completed-first", "mine").exit_code == 0
    assert run("claim", *tie, "--completed-first", "theirs").exit_code == 1


def test_claim_writes_a_certificate_that_verifies(tmp_path: Path) -> None:
    cert = tmp_path / "cert.json"
    assert run("claim", *GMT, "--certificate", str(cert)).exit_code == 0
    r = run("verify", str(cert), "--deep")
    assert r.exit_code == 0 and "VERIFIED" in r.output
    out = json.loads(run("verify", str(cert), "--json").output)
    assert out == {"verified": True, "verdict": "valid", "deep": False}
    bad = tmp_path / "bad.json"
    assert (
        run("claim", "--mine", "R4 R5 R3", "--theirs", "B8", "--certificate", str(bad)).exit_code
        == 1
    )
    assert run("verify", str(bad), "--deep").exit_code == 0  # the witness verifies


def test_verify_rejects_a_tampered_certificate(tmp_path: Path) -> None:
    cert = tmp_path / "cert.json"
    run("claim", *GMT, "--certificate", str(cert))
    data = json.loads(cert.read_text())
    data["question"]["seen"] = ["B7", "B9"]
    cert.write_text(json.dumps(data))
    r = run("verify", str(cert))
    assert r.exit_code == 1
    assert "certificate rejected" in r.output


def test_verify_not_a_certificate(tmp_path: Path) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    r = run("verify", str(junk))
    assert r.exit_code == 2 and "not JSON" in r.output
    junk.write_text('{"format": "battlejudge-certificate"}')
    r = run("verify", str(junk))
    assert r.exit_code == 2 and "not a battlejudge certificate" in r.output


def test_formation_command() -> None:
    r = run("formation", "R9 cavalry alexander")
    assert r.exit_code == 0
    assert r.output.strip() == "R9 cavalry alexander: Wedge 27 (cavalry as R8, alexander as R10)"
    out = json.loads(run("formation", "R3 R4 R5 R6", "--mud", "--json").output)
    assert out["formation"] == "wedge" and out["sum"] == 18


def test_claims_check_answers_every_line_in_order(tmp_path: Path) -> None:
    lines = [
        json.dumps({"mine": ["R4", "R5", "R3"], "theirs": ["B8"], "seen": ["B7", "B10"]}),
        "",
        json.dumps({"mine": ["R4", "R5", "R3"], "theirs": ["B8"]}),
        "{oops",
        json.dumps({"mine": ["R4", "R5", "R11"]}),
        json.dumps({"mine": ["R4", "R5", "R3"], "seeen": []}),
    ]
    f = tmp_path / "q.jsonl"
    f.write_text("\n".join(lines) + "\n")
    r = run("claims", "check", str(f))
    assert r.exit_code == 2
    out = [json.loads(x) for x in r.output.splitlines()]
    assert [o["line"] for o in out] == [1, 3, 4, 5, 6]
    assert out[0]["verdict"] == "valid" and out[0]["blocking"] == ["B7", "B10"]
    assert isinstance(out[0]["micros"], int)
    assert out[1]["verdict"] == "invalid" and out[1]["witness"]["formation"] == "wedge"
    assert "not JSON" in out[2]["error"]
    assert "R11" in out[3]["error"]
    assert "seeen" in out[4]["error"]


def test_claims_check_stdin_and_examples() -> None:
    from battlejudge import examples

    r = run("claims", "check", "-", input=examples.read_text("claims.jsonl"))
    assert r.exit_code == 0
    verdicts = [json.loads(x)["verdict"] for x in r.output.splitlines()]
    assert verdicts == [c["verdict"] for c in examples.rulebook_cases()]


def test_conflict_limit_gives_undecided_and_no_verdict() -> None:
    # The verdict is exact without a solver, but the certificate's refutation of this
    # one needs more than one conflict (most are refuted by unit propagation alone), so a
    # budget of one conflict runs out and no verdict is printed.
    r = run(
        "claim",
        "--mine",
        "R7 R8 R9",
        "--theirs",
        "shield",
        "--seen",
        "R3 R4",
        "--conflict-limit",
        "1",
    )
    assert r.exit_code == 3
    assert "undecided" in r.output and "VALID" not in r.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mine", "R4 R11 R3"], "unknown card 'R11' in mine"),
        (["--mine", "R4 R5 R3", "--theirs", "X9"], "unknown card 'X9' in theirs"),
        (["--mine", "R4 R5 R3", "--seen", "R4"], "R4 is given in seen and in mine"),
        (["--mine", "R4 R5 R4"], "R4 is given in mine twice"),
        (["--mine", "R4 R5 R3", "--theirs", "B1 B2 B3 B4"], "theirs has 4 cards"),
        (["--mine", "R4 R5 R3 R6"], "mine has 4 cards"),
        (["--mine", "alexander darius R3"], "mine has two Leaders"),
        (["--mine", "R4 R5 R3", "--theirs", "B8", "--seen", "B8"], "B8 is given in seen"),
        (["--mine", "R4 R5 fog"], "Fog is an environment tactic"),
        (["--mine", "R4 R5 R3", "--theirs", "mud"], "Mud is an environment tactic"),
        (["--mine", "R4 R5"], "a claim needs a complete formation of 3"),
        (["--mine", "R4 R5 R3", "--mud"], "a claim needs a complete formation of 4"),
        (["--mine", "R4 R5 R3", "--seen", "cavalry"], "seen lists face-up troops only"),
        (
            ["--mine", "R4 R5 R3", "--theirs", "B8", "--completed-first", "theirs"],
            "completed_first is 'theirs' but theirs has only 1",
        ),
        (["--mine", "Y7 B2 G1", "--theirs", "Y3 B3 G4"], "completed_first must say"),
        (["--mine", "R4 R5 R3", "--completed-first", "nobody"], "nobody"),
        (["--mine", "R4 R5 R3", "--conflict-limit", "0"], "0"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    r = CliRunner().invoke(cli, ["claim", *args])
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert "Traceback" not in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)


def test_bad_formation_input() -> None:
    r = run("formation", "R4 R5")
    assert r.exit_code == 2 and "needs 3 cards" in r.output
    r = run("formation", "R4 R5 Q1")
    assert r.exit_code == 2 and "'Q1' in CARDS" in r.output


def test_certificate_into_a_missing_folder_is_bad_input(tmp_path: Path) -> None:
    r = run("claim", *GMT, "--certificate", str(tmp_path / "nope" / "c.json"))
    assert r.exit_code == 2 and "Traceback" not in r.output


def test_demo_adjudicates_the_rulebook_examples() -> None:
    r = run("demo")
    assert r.exit_code == 0, r.output
    assert "12 rulebook examples adjudicated; 12 as the rulebook says" in r.output
    assert "Blue 7 and Blue 10 are face up" in r.output  # a valid proof with its explanation
    assert "Not yet: the opponent reaches Wedge" in r.output  # an invalid claim's witness
    assert "witness replayed" in r.output
    # --json: one document, like every other command's
    doc = json.loads(run("demo", "--json").output)
    assert doc["count"] == doc["as_expected"] == len(doc["examples"]) == 12
    assert all(e["as_expected"] and e["verified"] for e in doc["examples"])


def test_bench_claims_runs_and_names_its_baseline() -> None:
    # Figures only; wall-clock times are never asserted (shared, noisy machines).
    args = ["bench", "claims", "--count", "6", "--per-split", "2", "--repeat", "2", "--json"]
    r = run(*args)
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    hard, splits = out["hard"], out["splits"]
    assert hard["count"] == 6 and hard["oracle_agrees"] == 6
    assert hard["speedup_total"] > 0 and hard["brute_force"]["n"] == 6
    # every split, warm, against the brute force on the same questions, and fresh
    assert set(splits["decide"]) == set(splits["brute_force"]) == set(bench_module.SPLITS)
    assert splits["agrees"] == splits["total"] == 2 * len(bench_module.SPLITS)
    assert set(splits["fresh"]) == {*bench_module.SPLITS, "all (after the first)"}
    assert splits["fresh_first_us"] > 0
    for name, ok in splits["checks"].items():
        assert isinstance(ok, bool), name
    r = run(
        "bench",
        "claims",
        "--count",
        "6",
        "--per-split",
        "2",
        "--repeat",
        "1",
        "--no-brute-force",
        "--no-fresh",
    )
    assert r.exit_code == 0 and "decide" in r.output and "mud empty-side valid" in r.output
    assert "fresh process" not in r.output


def test_bench_claim_splits_hold_what_they_say() -> None:
    """Each split's questions are of its kind, and its verdict is the brute force's."""
    for split, q in bench_module.split_suite(7, 3):
        assert q.mud == split.startswith("mud")
        if split.startswith("wild"):
            assert any(not c.is_troop for c in (*q.mine, *q.theirs))
        if "empty-side" in split:
            assert not q.theirs
        answer = bl.oracle.decide(q.mine, q.theirs, q.seen, q.mud, q.fog, q.completed_first)
        assert answer.valid == (not split.endswith("invalid"))


def test_long_runs_report_progress_when_piped(capsys: pytest.CaptureFixture[str]) -> None:
    """Not a terminal: plain lines on stderr with the count and an estimate (issue 21:
    a tournament ran ten silent minutes when piped)."""
    from battlejudge.cli.common import progress

    with progress(4, "tournament", "games", every=0.0) as tick:
        for _ in range(4):
            tick()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("tournament: 1/4 games, ") and "left" in lines[0]
    assert lines[-1].startswith("tournament: 4/4 games, ") and lines[-1].endswith("done")
    with progress(4, "quick", "games") as tick:  # shorter than the interval: silent
        tick()
    assert capsys.readouterr().err == ""


def test_one_name_per_concept_with_the_old_names_unlisted() -> None:
    """Issue 21: --player/--seat/--viewer and --bot/--engine were one concept each."""
    pos = str(Path(__file__).resolve().parent.parent / "examples/positions/wedge-beats-blue-8.json")
    new = run("claim", pos, "--flag", "1", "--seat", "north", "--json")
    old = run("claim", pos, "--flag", "1", "--player", "north", "--json")
    assert new.exit_code == old.exit_code == 0
    assert json.loads(new.output)["verdict"] == json.loads(old.output)["verdict"] == "valid"
    for command, current, former in (
        ("claim", "--seat", "--player"),
        ("show", "--seat", "--player"),
        ("play", "--seat", "--player"),
        ("bot", "--bot", "--engine"),
    ):
        shown = run(command, "--help").output
        assert current in shown and former not in shown, command
