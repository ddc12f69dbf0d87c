"""The referee: our bots through the protocol, the scripted fake bot's failures, the
exact message transcript of a seeded game, records that replay, no process left behind."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from battlejudge.apps.protocol import messages as pr
from battlejudge.apps.protocol.referee import GameResult, referee_game
from battlejudge.cli.main import cli
from battlejudge.engines.battleline.record import GameRecord, RecordError, replay

FAKE = str(Path(__file__).with_name("protocol_fake_bot.py"))
TAG = "BATTLEJUDGE_REFEREE_TEST"


def ours(engine: str) -> str:
    """Our bot as a protocol client, run with this interpreter (works in any venv)."""
    code = "from battlejudge.cli.main import main; main()"
    return shlex.join([sys.executable, "-c", code, "bot", "--engine", engine])


def fake(mode: str, *args: str) -> str:
    return shlex.join([sys.executable, FAKE, mode, *args])


def _tagged_processes(tag: str) -> list[int]:
    """Live (not zombie) processes whose environment carries ``tag``, except us."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read()
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"{TAG}={tag}".encode() in env.split(b"\0") and state not in ("Z", "X"):
            found.append(int(entry))
    return found


@pytest.fixture(autouse=True)
def no_leftover_processes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every process the test starts inherits a tag; none may be alive afterwards."""
    tag = uuid.uuid4().hex
    monkeypatch.setenv(TAG, tag)
    yield
    assert _tagged_processes(tag) == []


def play(north: str, south: str, seed: int = 3, timeout: float = 1.0) -> GameResult:
    return referee_game(north, south, seed=seed, timeout=timeout, grace=0.3)


def replays_soundly(result: GameResult) -> None:
    text = result.record.dumps()
    rec = GameRecord.loads(text)
    assert rec.dumps() == text
    report = replay(rec)
    assert report.sound, report.problem
    assert report.claims == result.claims


# -- our bots ---------------------------------------------------------------------------------
def test_our_bots_play_whole_games_through_the_referee(tmp_path: Path) -> None:
    out, log = tmp_path / "games", tmp_path / "claims.log"
    runner = CliRunner()
    args = ["referee", "--north", ours("random"), "--south", ours("heuristic")]
    args += ["--games", "2", "--swap", "--seed", "5", "--out", str(out), "--log", str(log)]
    r = runner.invoke(cli, [*args, "--json"])
    assert r.exit_code == 0, r.output
    *games, data = [json.loads(line) for line in r.output.splitlines()]  # a line per game
    assert [g["north"] for g in games] == ["battlejudge-random", "battlejudge-heuristic"]
    assert all(g["reason"] in ("breakthrough", "envelopment", "stalemate") for g in games)
    assert all(g["violations"] == [] and g["forfeit"] is None for g in games)
    programs = data["summary"]["programs"]
    assert sum(p["wins"] + p["draws"] / 2 for p in programs) == 2
    assert programs[0]["name"] == "battlejudge-random" and programs[0]["games"] == 2
    claims = sum(g["claims"] for g in games)
    assert claims >= 6  # each game is won by claiming at least three flags
    for path in sorted(out.glob("*.blg")):
        r = runner.invoke(cli, ["replay", str(path), "--json"])
        assert r.exit_code == 0, r.output
        assert json.loads(r.output)["sound"] is True
    r = runner.invoke(cli, ["audit", str(log), "--games", str(out), "--json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["records"] == claims + 2 and report["notes"] == []  # each game's headers
    # a header edited since the game was logged is named (issue 34: every header bound)
    first = sorted(out.glob("*.blg"))[0]
    first.write_text(first.read_text().replace("[Event ", "[Event2 ", 1))
    r = runner.invoke(cli, ["audit", str(log), "--games", str(out), "--json"])
    problems = json.loads(r.output)["problems"]
    assert r.exit_code == 1 and any("header Event" in p["detail"] for p in problems)


def test_text_output_has_results_and_summary() -> None:
    r = CliRunner().invoke(
        cli, ["referee", "--north", fake("good"), "--south", fake("bad"), "--timeout", "2"]
    )
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].startswith("game 1: fake-good (north) vs fake-bad (south): winner ")
    assert any("violation: south replied" in line for line in lines)
    assert lines[-3].startswith("summary: 1 games, ")
    assert lines[-2].startswith("  fake-good: ") and lines[-1].startswith("  fake-bad: ")


def test_a_command_that_cannot_be_read_is_bad_input() -> None:
    r = CliRunner().invoke(cli, ["referee", "--north", "'unterminated", "--south", fake("good")])
    assert r.exit_code == 2
    assert "cannot read the command" in r.output and "Traceback" not in r.output


# -- the fake bot's failures --------------------------------------------------------------------
def test_good_fake_bots_finish_the_game() -> None:
    result = play(fake("good"), fake("good"))
    assert result.forfeit is None and result.violations == []
    assert result.reason in ("breakthrough", "envelopment", "stalemate")
    assert result.names == ("fake-good", "fake-good")
    replays_soundly(result)


def test_unusable_replies_are_replaced_and_recorded() -> None:
    result = play(fake("bad"), fake("good"))
    assert result.forfeit is None
    bad = [v for v in result.violations if v.seat == "north"]
    assert len(bad) >= 5
    details = " ".join(v.detail for v in bad)
    for fragment in ("is not in north's hand", "the number must be 1-10", "'10' is not a flag"):
        assert fragment in details
    assert "expected 'play <flag> <card>'" in details or "is not a message" in details
    replays_soundly(result)
    turns = {t.number: t for t in result.record.turns}
    for v in bad:
        turn = turns[v.turn]
        assert "violation: north replied" in turn.comment
        # The substitute is the reference engine's: lowest open flag, first card in hand.
        sub = pr.parse_message(v.substitute)
        assert isinstance(sub, pr.Play)
        assert turn.tokens[0] == f"{_our_name(sub.card)}@{sub.flag}"


def _our_name(code: int) -> str:
    return "ROYGBP"[code // 10] + str(code % 10 + 1)


def test_a_bad_name_reply_is_a_setup_violation() -> None:
    result = play(fake("good"), fake("badname"))
    assert result.forfeit is None
    assert [(v.seat, v.turn, v.reply) for v in result.violations] == [
        (
            "south",
            0,
            "hello there",
        )
    ]
    assert result.names[1] == "south"
    assert "hello there" in result.record.tags["Setup"]
    replays_soundly(result)


@pytest.mark.parametrize(
    ("mode", "kind", "fragment"),
    [
        ("hang", "timeout", "no reply within 0.5 s"),
        ("crash", "crash", "exit status 3"),
        ("extra", "unsolicited", "'thinking about the next move'"),
    ],
)
def test_failing_bots_forfeit(mode: str, kind: str, fragment: str) -> None:
    result = play(fake("good"), fake(mode, "--after", "3"), timeout=0.5)
    assert result.forfeit is not None
    assert (result.forfeit.seat, result.forfeit.kind) == ("south", kind)
    assert fragment in result.forfeit.detail
    assert (result.winner, result.reason) == ("north", "forfeit")
    assert result.record.tags["Result"] == "north"
    assert result.record.tags["Termination"].startswith(f"south forfeits ({kind})")
    replays_soundly(result)  # the game up to the forfeit replays


def proc_state(pid: int) -> str | None:
    """The process state letter of ``pid`` in /proc (``R``, ``S``, ``Z``...), None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None


def test_a_stubborn_bot_and_its_child_are_killed(tmp_path: Path) -> None:
    """A bot that ignores SIGTERM, with a child that ignores it too: SIGKILL to the
    whole process group after the grace period."""
    pidfile = tmp_path / "child.pid"
    result = play(fake("stubborn", "--after", "2", "--pidfile", str(pidfile)), fake("good"), 0, 0.5)
    assert result.forfeit is not None and result.forfeit.kind == "timeout"
    child = int(pidfile.read_text())
    # reparented, and dead (a zombie at most, or reaped). SIGKILL is final once sent, but on
    # a loaded machine the kernel may not have ended the child yet when we first look
    # ('R' was seen once): wait for it, so a child that survives still fails the test.
    deadline = time.monotonic() + 10
    while (state := proc_state(child)) not in ("Z", "X", None) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert state in ("Z", "X", None)


def test_a_program_that_cannot_start_forfeits() -> None:
    result = play("/nonexistent/bot --fast", fake("good"))
    assert result.forfeit is not None
    assert (result.forfeit.seat, result.forfeit.kind) == ("north", "crash")
    assert "cannot start" in result.forfeit.detail
    assert result.winner == "south"
    replays_soundly(result)


# -- the transcript -----------------------------------------------------------------------------
def test_transcript_of_a_seeded_game_line_by_line() -> None:
    """Every line of a seeded game against the sequence of issue 9, with the table
    rebuilt from the bots' own replies only (an oracle that shares nothing with the
    referee's message code)."""
    result = play(fake("good"), fake("good"), seed=11)
    lines = [f"{seat} {arrow} {text}" for seat, arrow, text in result.transcript]
    colors = "colors color1 color2 color3 color4 color5 color6"
    assert lines[:6] == [
        "north > player north name",
        "north < player north fake-good",
        f"north > {colors}",
        "south > player south name",
        "south < player south fake-good",
        f"south > {colors}",
    ]
    table: dict[tuple[int, str], list[str]] = {(n, s): [] for n in range(1, 10) for s in pr.SEATS}
    claimed = ["unclaimed"] * 9
    last_play: dict[str, str] = {}
    hands: dict[str, list[str]] = {}
    seen: set[str] = set()
    i = 6
    turn = 0
    while i < len(lines):
        seat = pr.SEATS[turn % 2]
        other = pr.SEATS[1 - turn % 2]
        turn += 1

        def take(expected: str, seat: str = seat) -> str:
            nonlocal i
            assert lines[i].startswith(f"{seat} > {expected}"), (i, lines[i], expected)
            i += 1
            return lines[i - 1].split(" > ", 1)[1]

        hand = take(f"player {seat} hand").split()[3:]
        assert len(hand) <= 7
        if seat in hands:  # the played card left; at most one new card came in
            new = [c for c in hand if c not in hands[seat]]
            assert len(new) <= 1 and not set(new) & seen
        hands[seat] = hand
        seen.update(hand)
        status = take("flag claim-status").split()[2:]
        assert all(old in ("unclaimed", new) for old, new in zip(claimed, status, strict=True))
        claimed = status
        for n in range(1, 10):
            for s in pr.SEATS:
                cards = " ".join(table[(n, s)])
                assert take(f"flag {n} cards {s}") == f"flag {n} cards {s} {cards}".rstrip()
        if other in last_play:
            assert take("opponent play") == f"opponent play {last_play[other]}"
        open_flags = [
            n for n in range(1, 10) if claimed[n - 1] == "unclaimed" and len(table[(n, seat)]) < 3
        ]
        if not hand or not open_flags:
            assert i == len(lines) or not lines[i].endswith("go play-card")
            continue
        take("go play-card")
        assert lines[i].startswith(f"{seat} < play ")
        _, flag, card = lines[i].split(" < ", 1)[1].split()
        i += 1
        assert card in hand and int(flag) in open_flags
        table[(int(flag), seat)].append(card)
        last_play[seat] = f"{flag} {card}"
    assert turn == result.turns or turn == result.turns + 1
    assert sum(len(v) for v in table.values()) == len(result.record.turns) - sum(
        1 for t in result.record.turns if t.tokens[:1] == ["pass"]
    )


# -- the record extensions ----------------------------------------------------------------------
def test_record_comments_and_deck_tag_round_trip() -> None:
    text = (
        '[DealNorth "R1 R2 R3 R4 R5 R6 R7"]\n[DealSouth "O1 O2 O3 O4 O5 O6 O7"]\n'
        '[Deck "troops"]\n[Result "*"]\n\n'
        "1. N: R1@1 | draw troop Y1 {violation: north replied 'x': bad; played R1@1 instead}\n"
        "2. S: O1@1 | draw troop Y2\n"
    )
    rec = GameRecord.loads(text)
    assert rec.turns[0].comment.startswith("violation: north replied 'x'")
    assert rec.turns[0].tokens == ["R1@1", "draw troop Y1"]
    assert GameRecord.loads(rec.dumps()) == rec
    report = replay(rec)
    assert report.sound and report.state.deck_size(1) == 0


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("1. N: R1@1 {a} | draw troop Y1", "a comment must be one {...} at the end"),
        ("1. N: R1@1 | draw troop Y1 {a {b}}", "a comment must be one {...} at the end"),
    ],
)
def test_misplaced_comments_are_bad_records(line: str, fragment: str) -> None:
    with pytest.raises(RecordError, match="line 1"):
        GameRecord.loads(line)
    with pytest.raises(RecordError) as e:
        GameRecord.loads(line)
    assert fragment in str(e.value)


def test_unknown_deck_tag_is_a_bad_record() -> None:
    rec = GameRecord.loads('[Deck "jokers"]\n[DealNorth "R1"]\n')
    with pytest.raises(RecordError, match="Deck tag must be full or troops"):
        replay(rec)


# -- stopping, commands, records ---------------------------------------------------------------
MAIN = [sys.executable, "-c", "from battlejudge.cli.main import main; main()"]


def _wait_for(what: str, ready: Callable[[], bool], proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while not ready():
        assert proc.poll() is None, f"the referee ended before {what}"
        assert time.monotonic() < deadline, f"no {what}"
        time.sleep(0.02)


def _no_tagged_left() -> None:
    tag = os.environ[TAG]
    deadline = time.monotonic() + 30
    while _tagged_processes(tag) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _tagged_processes(tag) == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_ends_the_match_like_ctrl_c(tmp_path: Path, sig: signal.Signals) -> None:
    """SIGTERM and SIGHUP: the game in progress stops, its bots die (even one that
    ignores SIGTERM and leaves a child), the records of the games that ended are kept
    and the summary covers them; --json printed each game as it ended."""
    out = tmp_path / "games"
    proc = subprocess.Popen(
        [
            *MAIN,
            *("referee", "--north", fake("good"), "--games", "40", "--out", str(out)),
            *("--south", fake("good"), "--json", "--grace", "0.2"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = json.loads(proc.stdout.readline())  # printed when game 1 ended, not at the end
    assert first["game"] == "1-0" and first["record"] == str(out / "game-1-0000.blg")
    proc.send_signal(sig)
    rest, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + sig, err
    *games, last = [first, *(json.loads(line) for line in rest.splitlines())]
    assert last["summary"]["stopped_by"] == sig.name
    assert last["summary"]["games"] == len(games) < 40
    assert f"stopped by {sig.name}" in err and "Traceback" not in err
    for g in games:  # every finished game's record is there, whole
        GameRecord.loads(Path(g["record"]).read_text())
    assert len(list(out.glob("*.blg"))) == len(games)
    _no_tagged_left()


def test_a_stop_signal_kills_a_bot_that_ignores_sigterm(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    stubborn = fake("stubborn", "--after", "2", "--pidfile", str(pidfile))
    proc = subprocess.Popen(
        [*MAIN, "referee", "--north", fake("good"), "--south", stubborn, "--timeout", "600"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for("stubborn bot", pidfile.exists, proc)
    time.sleep(0.3)  # it is now hanging on its second play (not a timing assertion)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "summary: 0 games" in out
    _no_tagged_left()  # the bot, its child and the other bot are gone


@pytest.mark.parametrize(
    ("command", "fragment"),
    [
        ("no-such-bot-program --x", "no executable 'no-such-bot-program' on PATH"),
        ("/nonexistent/bot", "'/nonexistent/bot' does not exist"),
        (FAKE, "is not an executable file"),  # a script without the executable bit
    ],
)
def test_a_bot_command_that_cannot_run_is_exit_2_before_any_game(
    tmp_path: Path, command: str, fragment: str
) -> None:
    out = tmp_path / "games"
    r = CliRunner().invoke(
        cli, ["referee", "--north", fake("good"), "--south", command, "--out", str(out)]
    )
    assert r.exit_code == 2, r.output
    assert f"bot command {command!r}" in r.output and fragment in r.output
    assert not out.exists()  # no game was played


def test_existing_records_are_not_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "games"
    out.mkdir()
    (out / "game-1-0001.blg").write_text("mine\n")
    args = ["referee", "--north", fake("good"), "--south", fake("good"), "--games", "2"]
    r = CliRunner().invoke(cli, [*args, "--out", str(out)])
    assert r.exit_code == 2
    assert f"{out / 'game-1-0001.blg'} exists: not overwritten" in r.output
    assert (out / "game-1-0001.blg").read_text() == "mine\n"
    assert not (out / "game-1-0000.blg").exists()
    r = CliRunner().invoke(cli, [*args, "--out", str(out), "--overwrite"])
    assert r.exit_code == 0, r.output
    GameRecord.loads((out / "game-1-0001.blg").read_text())
