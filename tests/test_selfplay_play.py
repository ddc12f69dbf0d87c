"""Self-play, play against a bot, claim --log, and audit --games (issue 4 integration)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from battlejudge.cli.main import cli
from battlejudge.engines.battleline.actions import END_CLAIMS
from battlejudge.engines.battleline.game import GAME, make_bot
from battlejudge.engines.battleline.state import new_game
from battlejudge.engines.game import CHANCE, sample_chance
from battlejudge.engines.records import header_block
from battlejudge.engines.selfplay import selfplay
from battlejudge.proofs.log import ProofLog, read_log


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input)


def _selfplay(tmp: Path, name: str, seed: int = 3, games: int = 3) -> tuple[Path, Path]:
    out, log = tmp / f"{name}-games", tmp / f"{name}.log"
    r = run(
        "selfplay",
        "--games",
        str(games),
        "--bots",
        "random,heuristic",
        "--seed",
        str(seed),
        "--out",
        str(out),
        "--log",
        str(log),
    )
    assert r.exit_code == 0, r.output
    return out, log


def test_selfplay_is_reproducible_from_the_seed(tmp_path: Path) -> None:
    out_a, log_a = _selfplay(tmp_path, "a")
    out_b, log_b = _selfplay(tmp_path, "b")
    files_a = sorted(p.name for p in out_a.iterdir())
    assert files_a == ["game-3-0000.blg", "game-3-0001.blg", "game-3-0002.blg"]
    for name in files_a:
        assert (out_a / name).read_text() == (out_b / name).read_text()
    qa = [(r.game, r.turn, r.flag, r.question) for r in read_log(log_a)[0] if r.kind == "claim"]
    qb = [(r.game, r.turn, r.flag, r.question) for r in read_log(log_b)[0] if r.kind == "claim"]
    assert qa == qb and qa  # same claims, same questions


def test_every_claim_of_selfplay_is_logged_and_audits_clean(tmp_path: Path) -> None:
    out, log = _selfplay(tmp_path, "s")
    records, problems = read_log(log)
    assert not problems
    for path in out.iterdir():
        assert run("replay", str(path)).exit_code == 0
    claims = sum(path.read_text().count("claim ") for path in out.iterdir())
    assert len([r for r in records if r.kind == "claim"]) == claims
    # each game's header block is logged with its claims (issue 34: every header bound)
    bound = {r.game: r.headers for r in records if r.kind == "game"}
    assert bound == {
        f"3-{i}": header_block((out / f"game-3-{i:04d}.blg").read_text()) for i in range(3)
    }
    r = run("audit", str(log), "--games", str(out), "--json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["ok"] and report["records"] == claims + 3 and report["problems"] == []
    assert report["notes"] == []


def test_audit_games_catches_a_missing_claim_and_a_changed_question(tmp_path: Path) -> None:
    out, log = _selfplay(tmp_path, "t")
    lines = log.read_bytes().splitlines(keepends=True)
    # Drop the last game's header block and its last claim: the chain is intact, but a
    # game's claim is no longer logged (and that game's headers are no longer bound).
    log.write_bytes(b"".join(lines[:-2]))
    r = run("audit", str(log), "--games", str(out), "--json")
    assert r.exit_code == 1
    kinds = {p["kind"] for p in json.loads(r.output)["problems"]}
    assert "missing-claim" in kinds
    # A game record whose claim is not in the log at all (a different game id).
    game = out / "game-3-0000.blg"
    game.write_text(game.read_text().replace('[Game "3-0"]', '[Game "elsewhere"]'))
    r = run("audit", str(log), "--games", str(out), "--json")
    kinds = {p["kind"] for p in json.loads(r.output)["problems"]}
    assert {"no-game-record", "missing-claim"} <= kinds


def test_claim_log_appends_one_signed_record(tmp_path: Path) -> None:
    assert run("keys", "new", "--out", str(tmp_path / "judge")).exit_code == 0
    log = tmp_path / "claims.log"
    args = ["--mine", "R4 R5 R3", "--theirs", "B8", "--seen", "B7 B10", "--log", str(log)]
    assert run("claim", *args, "--key", str(tmp_path / "judge.key")).exit_code == 0
    assert (
        run(
            "claim",
            "--mine",
            "R4 R5 R3",
            "--theirs",
            "B8",
            "--log",
            str(log),
            "--key",
            str(tmp_path / "judge.key"),
        ).exit_code
        == 1
    )
    records, problems = read_log(log)
    assert [r.verdict for r in records] == ["valid", "invalid"] and not problems
    r = run("audit", str(log), "--pubkey", str(tmp_path / "judge.pub"), "--json")
    assert json.loads(r.output)["problems"] == []
    # without --key the writer cannot vouch for the signed log: it refuses, naming why
    r = run("claim", "--mine", "R4 R5 R3", "--theirs", "B8", "--log", str(log))
    assert r.exit_code == 2 and "give its --key" in r.stderr
    assert len(read_log(log)[0]) == 2


def test_engine_logs_refused_claims_too(tmp_path: Path) -> None:
    state = new_game()
    log = ProofLog(tmp_path / "g.log")
    state.log, state.game_id = log, "g"
    rng = random.Random(1)
    refused = 0
    while not state.is_terminal() and refused == 0:
        if state.current_player() == CHANCE:
            state.apply_action(sample_chance(state, rng))
            continue
        for i, f in enumerate(state.flags):
            p = state.to_move
            if (
                state.claim_window_open()
                and f.claimed_by < 0
                and len(f.sides[p]) == f.size
                and not state.claimable(i + 1, p)
            ):
                from battlejudge.engines.battleline.actions import CLAIM, Action
                from battlejudge.engines.game import IllegalActionError

                try:
                    state.apply_action(Action(CLAIM, flag=i + 1))
                except IllegalActionError as e:
                    assert "cannot claim" in str(e) and "Not yet" in str(e)
                    refused += 1
                break
        if refused:
            break
        state.apply_action(rng.choice(state.legal_actions()))
    records, _ = read_log(tmp_path / "g.log")
    assert refused == 1 and records[-1].verdict == "invalid" and records[-1].game == "g"


def _script(seed: int, human_turns: int) -> str:
    """Input for `play`: mirror the game the command will play (same seeds, same bot)
    and type the human's first legal action each time, after some bad input."""
    bot = make_bot("random", seed + 1)
    state = new_game(first=0)
    rng = random.Random(seed)
    lines = ["help", "moves", "can I claim 1?", "R11@3", "claim 9"]
    turns = 0
    while not state.is_terminal() and turns < human_turns:
        who = state.current_player()
        if who == CHANCE:
            state.apply_action(sample_chance(state, rng))
        elif who == 1:
            state.apply_action(bot.step(state))
        else:
            legal = [a for a in state.legal_actions() if a.kind != END_CLAIMS]
            action = legal[0] if legal else state.legal_actions()[0]
            state.apply_action(action)
            lines.append(action.notation())
            turns += 1
    return "\n".join([*lines, "quit"]) + "\n"


def test_play_against_a_bot_with_scripted_input() -> None:
    r = run("play", "--bot", "random", "--seed", "5", input=_script(5, 12))
    assert r.exit_code == 0, r.output
    out = r.output
    assert "you are north" in out and "Type an action" in out  # greeting and help
    assert "R7@3" in out or "@" in out  # moves listed in notation
    assert "Not allowed" in out  # R11 is no card: explained, asked again
    assert "south: " in out  # the bot's moves are announced
    assert out.count("north to move") >= 3  # the table is drawn turn after turn
    assert "Traceback" not in out


def test_play_nine_circles_names_and_circle_questions() -> None:
    r = run(
        "play",
        "--bot",
        "random",
        "--seed",
        "2",
        "--theme",
        "nine-circles",
        input="can I claim circle 4?\nquit\n",
    )
    assert r.exit_code == 0 and "Circle" in r.output and "Nine Circles" in r.output
    assert "No: north has 0 of 3 cards at circle 4" in r.output


def test_selfplay_bad_input() -> None:
    r = run("selfplay", "--bots", "random", "--games", "1")
    assert r.exit_code == 2 and "two names" in r.output
    r = run("selfplay", "--bots", "random,nobody", "--games", "1")
    assert r.exit_code == 2 and "nobody" in r.output and "Traceback" not in r.output


def test_selfplay_api_yields_summaries(tmp_path: Path) -> None:
    games = list(selfplay(GAME, ("random", "heuristic"), 2, 9, out=tmp_path))
    assert [g.game_id for g in games] == ["9-0", "9-1"]
    # the two bots swap seats every game
    assert [g.seats["north"] for g in games] == ["random", "heuristic"]
    assert all(g.stats["turns"] > 0 for g in games)
    assert all(g.record is not None and g.record.exists() for g in games)


def _log_games(log: Path) -> dict[str, int]:
    """Claims per game id in a proof log."""
    records, problems = read_log(log)
    assert not problems
    per: dict[str, int] = {}
    for r in records:
        if r.kind == "claim":
            per[r.data["game"]] = per.get(r.data["game"], 0) + 1
    return per


def test_selfplay_commits_games_together_and_records_follow_their_claims(tmp_path: Path) -> None:
    """Claims of the games finished within the commit interval go to the log in one append
    (one fsync, one checkpoint), and a game's record is written only after its claims."""
    log = ProofLog(tmp_path / "g.log")
    appends: list[int] = []
    real = log.append_records

    def counting(entries):  # type: ignore[no-untyped-def]
        entries = list(entries)
        appends.append(sum(1 for e in entries if e.get("kind") != "game"))
        # no record of a game whose claims are in this append is on disk yet
        for game_id in {e["game"] for e in entries}:
            index = int(game_id.split("-")[1])
            assert not (tmp_path / f"game-4-{index:04d}.blg").exists()
        return real(entries)

    log.append_records = counting  # type: ignore[method-assign]
    games = list(selfplay(GAME, ("random", "random"), 6, 4, out=tmp_path, log=log))
    assert len(games) == 6
    per = _log_games(tmp_path / "g.log")
    assert sum(appends) == sum(per.values()) > 0
    assert len(appends) < 6  # grouped: six quick random games need fewer appends than games
    for g in games:
        assert g.record is not None
        assert g.record.read_text().count("claim ") == per.get(g.game_id, 0)


def test_selfplay_stopped_early_keeps_the_games_it_finished(tmp_path: Path) -> None:
    """A consumer that stops after the first summaries (Ctrl-C in the command) still finds
    every finished game's record and claims on disk, and nothing else."""
    log = ProofLog(tmp_path / "s.log")
    run_ = selfplay(GAME, ("random", "random"), 50, 5, out=tmp_path, log=log)
    first = next(run_)
    run_.close()
    written = sorted(p.name for p in tmp_path.glob("*.blg"))
    assert first.record is not None and first.record.name in written
    assert len(written) < 50
    per = _log_games(tmp_path / "s.log")
    for name in written:
        game_id = f"5-{int(name[7:11])}"
        assert (tmp_path / name).read_text().count("claim ") == per.get(game_id, 0)
    assert set(per) <= {f"5-{int(n[7:11])}" for n in written}


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda t: t.replace('[Event "battlejudge selfplay"]', '[Event "Finals"]'), "header Event"),
        (lambda t: t.replace("[North ", "[North2 "), "header North"),
        (lambda t: t.replace('[Seed "', '[Seed "1'), "header Seed"),
    ],
)
def test_audit_games_names_a_header_changed_since_it_was_logged(
    tmp_path: Path, change: Any, named: str
) -> None:
    """Issue 34: every header of a game record is bound by the log: an edited Event, North,
    Seed (or any tag) is a header-mismatch naming it."""
    out, log = _selfplay(tmp_path, "h")
    game = out / "game-3-0001.blg"
    game.write_text(change(game.read_text()))
    r = run("audit", str(log), "--games", str(out), "--json")
    assert r.exit_code == 1
    problems = json.loads(r.output)["problems"]
    assert any(p["kind"] == "header-mismatch" and named in p["detail"] for p in problems)


def test_a_record_without_its_result_does_not_replay_sound(tmp_path: Path) -> None:
    out, log = _selfplay(tmp_path, "r")
    game = out / "game-3-0000.blg"
    text = "\n".join(x for x in game.read_text().splitlines() if not x.startswith("[Result "))
    game.write_text(text + "\n")
    r = run("replay", str(game), "--json")
    assert r.exit_code == 1
    assert json.loads(r.output)["problem"]["kind"] == "no-result"
    r = run("audit", str(log), "--games", str(out), "--json")
    problems = json.loads(r.output)["problems"]
    assert any(p["kind"] == "unsound-game" and "no Result" in p["detail"] for p in problems)


def test_old_logs_audit_with_a_note_that_headers_are_not_bound(tmp_path: Path) -> None:
    out, log = _selfplay(tmp_path, "o")
    # the log as an older battlejudge wrote it: claims only, re-chained
    lines = [x for x in log.read_bytes().splitlines() if b'"kind":"game"' not in x]
    from battlejudge.proofs.log import ProofLog as _Log

    old = tmp_path / "old.log"
    with _Log(old, adopt=True) as fresh:
        fresh.append_records([json.loads(x) for x in lines])
    r = run("audit", str(old), "--games", str(out), "--json")
    assert r.exit_code == 0, r.output
    notes = json.loads(r.output)["notes"]
    assert len(notes) == 1 and "not bound" in notes[0] and "3 game records" in notes[0]
    r = run("audit", str(old), "--games", str(out))
    assert "Note: the headers of 3 game records are not bound" in r.output
