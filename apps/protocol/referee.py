"""The referee: games between two programs speaking the community bot protocol.

Each game starts both programs afresh (any language: a command line, run without a
shell, each in a process group of its own), plays the troops-only game of the protocol
(:func:`battlejudge.engines.battleline.record.remove_tactics`: the GMT rules of docs/rulings.md
with the 60 troops) and ends by terminating both process groups.

The exchange (:mod:`.messages` has the message formats):

1. setup, north then south: ``player S name``, the bot answers ``player S <name>``; then
   ``colors color1 ... color6`` to the same bot;
2. every turn, to the player to move only: ``player S hand ...``, ``flag claim-status ...``,
   the 18 ``flag N cards north|south ...`` lines (N = 1..9), ``opponent play N CARD`` (the
   opponent's most recent play; left out until the opponent has played), then
   ``go play-card`` if the player has a troop and a flag with an open slot (otherwise the
   player passes, docs/rulings.md 12), and the bot answers ``play N CARD``;
3. after the play the referee decides, with the solver, every claim the player who just
   moved can prove (each certified, and logged when there is a proof log), then the mover
   draws a troop while the deck lasts. Game end is not announced: both bots are
   terminated.

Failures, as the reference engine treats them:

- a reply it cannot use (not ``play N CARD``, a card not in hand, a flag without an open
  slot) is replaced by the lowest flag with an open slot and the first card of the hand
  as sent, without telling the bot, and recorded as a :class:`Violation` (a bad answer
  to the name request is recorded too, and the seat name is used);
- a bot that exits or closes its output (``crash``), does not answer within the timeout
  (``timeout``), or prints a line it was not asked for (``unsolicited``) forfeits the game;
  the reason is recorded. A program that cannot be started forfeits as ``crash``.

A program that failed in every game it played (it forfeited each, or none of its replies
could be used) did not play the match: :func:`could_not_play` names it, and the
``referee`` command exits 1 saying so, so a broken bot is never reported as a success.

Guarantees: whatever the bots do, :func:`referee_game` returns a result and leaves no
process of either bot running: the process group gets SIGTERM, then SIGKILL after a
grace period, and the bot is reaped (the group id cannot be reused meanwhile: the
leader is only reaped after the SIGKILL). An interruption (Ctrl-C, and within
:func:`stop_signals_interrupt` SIGTERM and SIGHUP) does the same to the game in
progress; :func:`referee_match` checks the bot commands and refuses to replace
records before the first game, and writes each record whole.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import select
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final, Literal

from battlejudge.apps.protocol import messages as pr
from battlejudge.engines.battleline.actions import (
    CLAIM,
    DRAW,
    END_CLAIMS,
    PASS,
    PLAY,
    TROOP_DECK,
    Action,
)
from battlejudge.engines.battleline.record import (
    GameRecord,
    record_from_state,
    remove_tactics,
)
from battlejudge.engines.battleline.state import (
    CLAIM_END,
    CLAIM_START,
    DRAW_GAME,
    DRAW_PHASE,
    FACTS,
    NORTH,
    PLAY_PHASE,
    BattleLineState,
    ClaimLog,
)
from battlejudge.engines.game import CHANCE, sample_chance
from battlejudge.engines.records import (
    DEFAULT_PREFIX,
    check_prefix,
    header_block,
    record_name,
    refuse_existing,
)
from battlejudge.proofs.atomic import write_atomic
from battlejudge.proofs.log import game_record
from battlejudge.solver.errors import InputError

log = logging.getLogger(__name__)

ForfeitKind = Literal["crash", "timeout", "unsolicited"]
MAX_LINE = 64 * 1024
"""A bot line longer than this (without a newline) is taken as a crash of its output."""
DEFAULT_TIMEOUT = 10.0
DEFAULT_GRACE = 1.0


# -- results ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Violation:
    """A reply the referee could not use, and what it did instead."""

    seat: pr.Seat
    turn: int
    """The game turn (0 for the setup)."""
    reply: str
    detail: str
    substitute: str = ""
    """The play made instead (``play N CARD``), or empty for a setup reply."""

    def to_json(self) -> dict[str, Any]:
        """The violation as JSON: the player, turn, the reply received, what was wrong and the
        play substituted."""
        return {
            "player": self.seat,
            "turn": self.turn,
            "reply": self.reply,
            "detail": self.detail,
            "substitute": self.substitute or None,
        }

    def note(self) -> str:
        """The violation as a record comment (no braces, one line)."""
        reply = self.reply.replace("{", "(").replace("}", ")")
        text = f"violation: {self.seat} replied {reply!r}: {self.detail}"
        if self.substitute:
            text += f"; played {self.substitute} instead"
        return " ".join(text.replace("{", "(").replace("}", ")").split())


@dataclass(frozen=True)
class Forfeit:
    """Why a bot lost the game without finishing it."""

    seat: pr.Seat
    kind: ForfeitKind
    detail: str
    status: int | None = None
    """A crashed bot's exit status when it had exited (negative: the signal that ended it)."""

    def sentence(self) -> str:
        """The forfeit in one sentence: who, why and the detail."""
        return f"{self.seat} forfeits ({self.kind}): {self.detail}"


@dataclass
class GameResult:
    """One refereed game. ``winner`` is ``north``, ``south`` or ``draw``; ``reason`` is
    ``breakthrough``, ``envelopment``, ``stalemate`` (the engine's house rule: nobody
    can or will act) or ``forfeit`` (then ``forfeit`` says who and why)."""

    index: int
    game_id: str
    seed: int
    commands: tuple[str, str]
    names: tuple[str, str]
    winner: str
    reason: str
    detail: str
    forfeit: Forfeit | None
    violations: list[Violation]
    turns: int
    claims: int
    record: GameRecord
    path: Path | None = None
    swapped: bool = False
    """True when the match's second program sat north."""
    transcript: list[tuple[pr.Seat, str, str]] = field(default_factory=list)
    """Every line exchanged: (seat, ``>`` to the bot or ``<`` from it, line)."""

    def to_json(self) -> dict[str, Any]:
        """The game's result as JSON: game id and seed, the programs on each seat, winner, reason
        and detail, the forfeit if any, and the violations."""
        return {
            "game": self.game_id,
            "seed": self.seed,
            "north": self.names[0],
            "south": self.names[1],
            "winner": self.winner,
            "reason": self.reason,
            "detail": self.detail,
            "forfeit": None
            if self.forfeit is None
            else {
                "player": self.forfeit.seat,
                "kind": self.forfeit.kind,
                "detail": self.forfeit.detail,
            },
            "violations": [v.to_json() for v in self.violations],
            "turns": self.turns,
            "claims": self.claims,
            "record": None if self.path is None else str(self.path),
        }


class _Forfeited(Exception):
    def __init__(self, forfeit: Forfeit) -> None:
        super().__init__(forfeit.sentence())
        self.forfeit = forfeit


# -- one bot process ----------------------------------------------------------------------
class BotProcess:
    """A bot program in its own process group, spoken to line by line.

    Reads and writes never block past their deadline (non-blocking pipes and
    ``select``), so a bot that stops reading or writing cannot stall the referee.
    """

    def __init__(
        self,
        command: str,
        seat: pr.Seat,
        *,
        stderr: IO[Any] | int | None = None,
        grace: float = DEFAULT_GRACE,
    ) -> None:
        self.seat = seat
        self.command = command
        self.grace = grace
        argv = check_command(command)
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
                bufsize=0,
            )
        except OSError as e:
            raise _Forfeited(
                Forfeit(seat, "crash", f"cannot start {command!r}: {e.strerror or e}")
            ) from None
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        self._buffer = bytearray()
        self._lines: deque[str] = deque()
        self._eof = False
        self.closed = False

    @property
    def pid(self) -> int:
        """The bot program's process id."""
        return self.proc.pid

    def _crash(self, what: str) -> _Forfeited:
        status = self.exit_status()
        deadline = time.monotonic() + 0.2  # a bot that closed its output is likely exiting
        while status is None and time.monotonic() < deadline:
            time.sleep(0.005)
            status = self.exit_status()
        tail = f" (exit status {status})" if status is not None else ""
        return _Forfeited(Forfeit(self.seat, "crash", f"{what}{tail}", status))

    def exit_status(self) -> int | None:
        """The exit status if the bot has exited, without reaping it (None if running)."""
        if self.proc.returncode is not None:
            return self.proc.returncode
        try:
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return None
        if info is None:
            return None
        return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status

    def _pump(self, timeout: float) -> None:
        """Read what the bot wrote, waiting at most ``timeout`` seconds for something."""
        if self._eof:
            return
        ready, _, _ = select.select([self._out], [], [], max(0.0, timeout))
        if not ready:
            return
        try:
            data = os.read(self._out, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._eof = True
            if self._buffer:
                self._lines.append(self._buffer.decode("utf-8", "replace").rstrip("\r"))
                self._buffer.clear()
            return
        self._buffer += data
        while True:
            cut = self._buffer.find(b"\n")
            if cut < 0:
                break
            line = bytes(self._buffer[:cut]).decode("utf-8", "replace").rstrip("\r")
            del self._buffer[: cut + 1]
            self._lines.append(line)
        if len(self._buffer) > MAX_LINE:
            raise _Forfeited(
                Forfeit(self.seat, "unsolicited", f"a line longer than {MAX_LINE} bytes")
            )

    def send(self, line: str, timeout: float) -> None:
        """Write one line (a newline is added); a bot that stopped reading for
        ``timeout`` seconds times out, one that exited crashes."""
        data = memoryview((line + "\n").encode("utf-8"))
        deadline = time.monotonic() + timeout
        while data:
            try:
                written = os.write(self._in, data)
            except BlockingIOError:
                written = 0
            except (BrokenPipeError, ConnectionResetError):
                raise self._crash("stopped reading its input") from None
            data = data[written:]
            if data:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _Forfeited(
                        Forfeit(self.seat, "timeout", f"did not read its input for {timeout:g} s")
                    )
                select.select([], [self._in], [], left)

    def read_line(self, timeout: float) -> str:
        """The next line the bot writes, waiting at most ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not self._lines:
            if self._eof:
                raise self._crash("closed its output")
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Forfeited(Forfeit(self.seat, "timeout", f"no reply within {timeout:g} s"))
            self._pump(left)
        return self._lines.popleft()

    def check(self) -> None:
        """Forfeit the bot if it printed a line nobody asked for, or if it has exited."""
        self._pump(0.0)
        if self._lines:
            extra = self._lines[0]
            raise _Forfeited(
                Forfeit(self.seat, "unsolicited", f"printed {extra[:200]!r} without being asked")
            )
        if self._eof or self.exit_status() is not None:
            raise self._crash("exited" if not self._eof else "closed its output")

    def close(self) -> None:
        """Terminate the bot's process group: end of input, SIGTERM, SIGKILL after the
        grace period; then reap the bot. Safe to call twice."""
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        group = self.pid  # start_new_session: the bot leads its own group
        _signal_group(group, signal.SIGTERM)
        deadline = time.monotonic() + self.grace
        while self.exit_status() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        # The leader is not reaped yet, so the group id still belongs to this group.
        _signal_group(group, signal.SIGKILL)
        self.proc.wait()
        with contextlib.suppress(OSError):
            assert self.proc.stdout is not None
            self.proc.stdout.close()


def check_command(command: str) -> list[str]:
    """The argument list of a bot command (split as a POSIX shell would, but run without
    one); raises :class:`InputError` naming the command if it cannot be read."""
    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise InputError(f"cannot read the command {command!r}: {e}") from None
    if not argv:
        raise InputError("a bot command is empty")
    return argv


def check_program(command: str) -> list[str]:
    """:func:`check_command`, and the program it names can be run: a path must be an
    executable file, a bare name must be found on PATH; raises :class:`InputError`
    naming the command and the program otherwise (checked before a match starts, so
    a mistyped command is an error rather than a match of forfeits)."""
    argv = check_command(command)
    program = argv[0]
    if os.sep in program:
        path = Path(program)
        if not path.exists():
            raise InputError(f"bot command {command!r}: {program!r} does not exist")
        if not path.is_file() or not os.access(path, os.X_OK):
            raise InputError(f"bot command {command!r}: {program!r} is not an executable file")
    elif shutil.which(program) is None:
        raise InputError(f"bot command {command!r}: no executable {program!r} on PATH")
    return argv


class Interrupted(KeyboardInterrupt):
    """A stop signal (SIGINT, SIGTERM or SIGHUP) arrived; handled as Ctrl-C is."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def stop_signals_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM (what ``timeout``, a cancelled CI job or ``docker
    stop`` send) and SIGHUP raise :class:`Interrupted` as SIGINT (Ctrl-C) does, so a
    match stopped by any of them ends the same way: the game in progress is abandoned,
    its bots killed (:func:`referee_game` always does), and the records of the games
    that ended are kept. Main thread only (Python runs signal handlers there)."""

    def interrupt(signum: int, _frame: object) -> None:
        raise Interrupted(signum)

    previous = {s: signal.signal(s, interrupt) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold the stop signals back within the block (the bots' termination, a record's
    writing), so an interruption cannot cut it short; they are delivered after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _signal_group(group: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, sig)


# -- one game -----------------------------------------------------------------------------
def _open_flags(state: BattleLineState, player: int) -> list[int]:
    return [i for i, f in enumerate(state.flags) if f.open_slot(player)]


def turn_messages(
    state: BattleLineState, player: int, last_play: tuple[int, int] | None
) -> list[pr.Message]:
    """What the player to move is told before he plays, in protocol order (without
    ``go play-card``). ``last_play`` is the opponent's most recent (flag, card)."""
    seat = pr.SEATS[player]
    statuses: tuple[pr.ClaimStatus, ...] = tuple(
        "unclaimed" if f.claimed_by < 0 else pr.SEATS[f.claimed_by] for f in state.flags
    )
    msgs: list[pr.Message] = [
        pr.Hand(seat, tuple(state.hands[player])),
        pr.FlagStatus(statuses),
    ]
    for i, f in enumerate(state.flags):
        for side in (0, 1):
            msgs.append(pr.FlagCards(i + 1, pr.SEATS[side], tuple(p.card for p in f.sides[side])))
    if last_play is not None:
        msgs.append(pr.OpponentPlay(last_play[0], last_play[1]))
    return msgs


class _Game:
    """The state of one refereed game (see :func:`referee_game`)."""

    def __init__(
        self,
        commands: tuple[str, str],
        seed: int,
        timeout: float,
        grace: float,
        log: ClaimLog | None,
        game_id: str,
        stderr: IO[Any] | int | None,
    ) -> None:
        self.commands = commands
        self.timeout = timeout
        self.grace = grace
        self.stderr = stderr
        self.rng = random.Random(seed)
        self.state = remove_tactics(BattleLineState(first=NORTH))
        self.state.log = log
        self.state.game_id = game_id
        self.bots: list[BotProcess | None] = [None, None]
        self.names: list[str] = [pr.SEATS[0], pr.SEATS[1]]
        self.violations: list[Violation] = []
        self.last_play: list[tuple[int, int] | None] = [None, None]
        self.transcript: list[tuple[pr.Seat, str, str]] = []

    def bot(self, player: int) -> BotProcess:
        bot = self.bots[player]
        assert bot is not None
        return bot

    def send(self, player: int, msg: pr.Message) -> None:
        line = pr.format_message(msg)
        self.transcript.append((pr.SEATS[player], ">", line))
        self.bot(player).send(line, self.timeout)

    def receive(self, player: int) -> str:
        line = self.bot(player).read_line(self.timeout)
        self.transcript.append((pr.SEATS[player], "<", line))
        return line

    def check_bots(self) -> None:
        for bot in self.bots:
            if bot is not None:
                bot.check()

    def run(self) -> None:
        state = self.state
        while state.current_player() == CHANCE:  # the deal
            state.apply_action_unchecked(sample_chance(state, self.rng))
        for player in (0, 1):
            self.bots[player] = BotProcess(
                self.commands[player], pr.SEATS[player], stderr=self.stderr, grace=self.grace
            )
        for player in (0, 1):
            self.setup(player)
        steps = 0
        while not state.is_terminal():
            steps += 1
            if steps > FACTS.max_length:  # cannot happen: each turn plays, draws or idles
                raise RuntimeError("the refereed game did not end")
            self.turn()

    def setup(self, player: int) -> None:
        seat = pr.SEATS[player]
        self.check_bots()
        self.send(player, pr.NameRequest(seat))
        reply = self.receive(player)
        try:
            msg = pr.parse_message(reply)
        except pr.ProtocolError as e:
            msg, problem = None, str(e)
        else:
            problem = f"expected 'player {seat} <name>'"
        if isinstance(msg, pr.NameReply) and msg.seat == seat:
            self.names[player] = msg.name
        else:
            self.violations.append(Violation(seat, 0, reply, problem))
        self.send(player, pr.Colors(pr.PROTOCOL_COLORS))

    def turn(self) -> None:
        state = self.state
        player = state.to_move
        if state.phase == CLAIM_START:
            # Claims are decided for the player who just moved, after his play.
            state.apply_action(Action(END_CLAIMS))
        assert state.phase == PLAY_PHASE, state.phase
        self.check_bots()
        for msg in turn_messages(state, player, self.last_play[1 - player]):
            self.send(player, msg)
        if state.troop_playable(player):
            self.check_bots()
            self.send(player, pr.GoPlay())
            reply = self.receive(player)
            action = self.use_reply(player, reply)
            self.last_play[player] = (action.flag, action.card)
        else:
            action = Action(PASS)
        state.apply_action(action)
        while not state.is_terminal() and state.phase == CLAIM_END:
            claims = [a for a in state.legal_actions() if a.kind == CLAIM]
            state.apply_action(claims[0] if claims else Action(END_CLAIMS))
        if not state.is_terminal() and state.phase == DRAW_PHASE:
            state.apply_action(Action(DRAW, deck=TROOP_DECK))
            if state.current_player() == CHANCE:
                state.apply_action_unchecked(sample_chance(state, self.rng))

    def use_reply(self, player: int, reply: str) -> Action:
        """The play the reply names, or the reference engine's substitute (the lowest
        flag with an open slot, the first card of the hand as sent) and a violation."""
        state = self.state
        try:
            msg = pr.parse_message(reply)
        except pr.ProtocolError as e:
            problem = str(e)
        else:
            if isinstance(msg, pr.Play):
                action = Action(PLAY, card=msg.card, flag=msg.flag)
                if action in state.legal_actions():
                    return action
                problem = self.why_not(player, msg)
            else:
                problem = f"expected 'play <flag> <card>', got {reply.strip()!r}"
        flag = _open_flags(state, player)[0]
        card = state.hands[player][0]
        substitute = Action(PLAY, card=card, flag=flag + 1)
        shown = pr.format_message(pr.Play(flag + 1, card))
        self.violations.append(Violation(pr.SEATS[player], state.turn, reply, problem, shown))
        return substitute

    def why_not(self, player: int, play: pr.Play) -> str:
        state = self.state
        card = pr.format_card(play.card)
        if play.card not in state.hands[player]:
            return f"{card} is not in {pr.SEATS[player]}'s hand"
        f = state.flags[play.flag - 1]
        if f.claimed_by >= 0:
            return f"flag {play.flag} is already claimed"
        return f"flag {play.flag} has no open slot on {pr.SEATS[player]}'s side"

    def close(self) -> None:
        for bot in self.bots:
            if bot is not None:
                bot.close()


def referee_game(
    north: str,
    south: str,
    *,
    seed: int,
    timeout: float = DEFAULT_TIMEOUT,
    grace: float = DEFAULT_GRACE,
    log: ClaimLog | None = None,
    game_id: str = "game",
    index: int = 0,
    stderr: IO[Any] | int | None = None,
    tags: dict[str, str] | None = None,
) -> GameResult:
    """Referee one game between the programs ``north`` and ``south`` (command lines).

    The deal and every draw come from ``random.Random(seed)``. Every claim is proved,
    verified by the engine and appended to ``log`` (with ``game_id``). Returns the result
    and the game's record; both bots are terminated before it returns, whatever happened.
    """
    game = _Game((north, south), seed, timeout, grace, log, game_id, stderr)
    forfeit: Forfeit | None = None
    try:
        game.run()
    except _Forfeited as e:
        forfeit = e.forfeit
    finally:
        with _signals_deferred():
            game.close()
    state = game.state
    if forfeit is not None and not state.is_terminal():
        state.forfeit(pr.SEATS.index(forfeit.seat), forfeit.kind)
    winner: str = "draw" if state.winner == DRAW_GAME else pr.SEATS[state.winner]
    reason = state.end_reason or ""
    if forfeit is not None:
        detail = forfeit.sentence()
    else:
        held = [len(state.flags_held(p)) for p in (0, 1)]
        detail = f"{reason}: flags held north {held[0]}, south {held[1]}"
    record = _record(game, seed, game_id, tags or {}, winner, detail)
    return GameResult(
        index=index,
        game_id=game_id,
        seed=seed,
        commands=(north, south),
        names=(game.names[0], game.names[1]),
        winner=winner,
        reason=reason,
        detail=detail,
        forfeit=forfeit,
        violations=game.violations,
        turns=state.turn,
        claims=len(state.claims),
        record=record,
        transcript=game.transcript,
    )


def _record(
    game: _Game, seed: int, game_id: str, tags: dict[str, str], winner: str, detail: str
) -> GameRecord:
    base = {
        "Event": "battlejudge referee",
        "Game": game_id,
        "North": game.names[0],
        "South": game.names[1],
        "Seed": str(seed),
        "NorthCommand": game.commands[0],
        "SouthCommand": game.commands[1],
        "Termination": detail,
        **tags,
    }
    setup = [v.note() for v in game.violations if v.turn == 0]
    if setup:
        base["Setup"] = "; ".join(setup)
    rec = record_from_state(game.state, base)
    rec.tags["Result"] = winner
    by_turn = {t.number: t for t in rec.turns}
    for v in game.violations:
        turn = by_turn.get(v.turn)
        if turn is not None:
            turn.comment = "; ".join(filter(None, [turn.comment, v.note()]))
    return rec


# -- a match ------------------------------------------------------------------------------
def game_seed(seed: int, index: int) -> int:
    """The seed of game ``index`` of a match (as self-play derives its game seeds)."""
    return seed * 1_000_003 + index


def referee_match(
    first: str,
    second: str,
    *,
    games: int,
    seed: int,
    swap: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    grace: float = DEFAULT_GRACE,
    out: Path | None = None,
    log: ClaimLog | None = None,
    stderr: IO[Any] | int | None = None,
    overwrite: bool = False,
    prefix: str = DEFAULT_PREFIX,
) -> Iterator[GameResult]:
    """Referee ``games`` games: ``first`` north and ``second`` south, their seats swapped
    every other game with ``swap``. Yields each result (written to
    ``out/PREFIX-SEED-NNNN.blg`` when ``out`` is given, atomically) as soon as the game is
    over.

    Before the first game, raises :class:`InputError` when a command cannot be run
    (:func:`check_program`), for a bad ``prefix``, or, unless ``overwrite``, when a record
    the match would write already exists (naming it): records are never replaced
    silently."""
    for command in (first, second):
        check_program(command)
    check_prefix(prefix)
    if out is not None:
        if not overwrite:
            refuse_existing([record_path(out, seed, i, prefix) for i in range(games)])
        out.mkdir(parents=True, exist_ok=True)
    for i in range(games):
        north, south = (second, first) if swap and i % 2 else (first, second)
        gs = game_seed(seed, i)
        result = referee_game(
            north,
            south,
            seed=gs,
            timeout=timeout,
            grace=grace,
            log=log,
            game_id=f"{seed}-{i}",
            index=i,
            stderr=stderr,
        )
        result.swapped = swap and i % 2 == 1
        if out is not None:
            result.path = record_path(out, seed, i, prefix)
            if not overwrite:  # another run may have written it since the check
                refuse_existing([result.path])
            text = result.record.dumps()
            with _signals_deferred():
                if log is not None and hasattr(log, "append_records"):
                    # the log binds every header of the record (audit --games compares)
                    log.append_records([game_record(result.game_id, header_block(text))])
                write_atomic(result.path, text)
        yield result


def record_path(out: Path, seed: int, index: int, prefix: str = DEFAULT_PREFIX) -> Path:
    """Where :func:`referee_match` writes game ``index``'s record of a match with ``seed``
    (:func:`~battlejudge.engines.records.record_name`, as self-play names its records)."""
    return out / record_name(seed, index, ".blg", prefix)


@dataclass
class ProgramSummary:
    """One bot program's totals over a referee run: games, wins, losses, draws, forfeits and
    protocol violations."""

    command: str
    name: str = ""
    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    forfeits: int = 0
    violations: int = 0

    def to_json(self) -> dict[str, Any]:
        """The totals as JSON."""
        return {
            "command": self.command,
            "name": self.name,
            "games": self.games,
            "wins": self.wins,
            "losses": self.losses,
            "draws": self.draws,
            "forfeits": self.forfeits,
            "violations": self.violations,
        }


FailureKind = Literal["crash", "timeout", "unsolicited", "unusable"]
"""How a program failed a game: the three forfeits, or ``unusable`` (it was asked to play
and every reply it gave had to be replaced)."""

_FAILED: dict[str, str] = {
    "crash": "crashed",
    "timeout": "timed out",
    "unsolicited": "broke the protocol",
    "unusable": "gave no usable reply",
}


@dataclass(frozen=True)
class CouldNotPlay:
    """A program that failed every game it was in: it forfeited (crashed, timed out, broke
    the protocol) or none of its replies could be used. ``program`` names it by the seat
    it was given (``north`` for the match's first program, whose seat ``--swap`` changes)."""

    program: pr.Seat
    command: str
    games: int
    kinds: tuple[FailureKind, ...]
    """How it failed, game by game."""
    accounts: tuple[str, ...]
    """What happened, game by game, as a clause: ``it exited at once (status 1)``."""

    def sentence(self) -> str:
        """One line: ``north (/bin/false) could not play: it exited at once (status 1) in
        all 3 games``."""
        where = {1: "in its one game", 2: "in both games"}.get(
            self.games, f"in all {self.games} games"
        )
        if len(set(self.accounts)) == 1:
            what = f"{self.accounts[0]} {where}"
        else:
            verbs = list(dict.fromkeys(_FAILED[k] for k in self.kinds))
            said = verbs[0] if len(verbs) == 1 else ", ".join(verbs[:-1]) + " or " + verbs[-1]
            what = f"{where} it {said} (game 1: {self.accounts[0]})"
        return f"{self.program} ({self.command}) could not play: {what}"

    def to_json(self) -> dict[str, Any]:
        """The failure as JSON: the program (its seat), command, games, how it failed in each
        game (``crash``, ``timeout``, ``unsolicited``, ``unusable``) and the one-line message."""
        return {
            "program": self.program,
            "command": self.command,
            "games": self.games,
            "kinds": list(self.kinds),
            "message": self.sentence(),
        }


GO_PLAY: Final = pr.format_message(pr.GoPlay())


def _exit_text(status: int) -> str:
    if status >= 0:
        return f"status {status}"
    try:
        return f"killed by {signal.Signals(-status).name}"
    except ValueError:
        return f"killed by signal {-status}"


def _failure(result: GameResult, seat: pr.Seat) -> tuple[FailureKind, str] | None:
    """How the program at ``seat`` failed this game (a clause saying what happened), or
    None if it played: it forfeited, or it was asked to play and no reply was usable."""
    f = result.forfeit
    if f is not None and f.seat == seat:
        answered = any(s == seat and way == "<" for s, way, _ in result.transcript)
        if f.kind == "crash" and not answered and f.status is not None:
            return "crash", f"it exited at once ({_exit_text(f.status)})"
        verb = _FAILED[f.kind]
        return f.kind, f"it {verb} ({f.detail})"
    asked = sum(
        1 for s, way, line in result.transcript if s == seat and way == ">" and line == GO_PLAY
    )
    bad = [v for v in result.violations if v.seat == seat and v.turn > 0]
    if asked and len(bad) == asked:
        return "unusable", f"none of its replies could be used ({bad[0].detail})"
    return None


def could_not_play(first: str, second: str, results: list[GameResult]) -> list[CouldNotPlay]:
    """The programs (``first`` north, ``second`` south, as :func:`referee_match` seats
    them) that failed every game of ``results``: each forfeited (crash, timeout,
    unsolicited lines) or gave no usable reply when asked to play. Empty when both played,
    or when no game was played."""
    out = []
    for index, command in enumerate((first, second)):
        failures = []
        for r in results:
            failure = _failure(r, pr.SEATS[index ^ int(r.swapped)])
            if failure is None:
                break
            failures.append(failure)
        else:
            if failures:
                out.append(
                    CouldNotPlay(
                        pr.SEATS[index],
                        command,
                        len(failures),
                        tuple(k for k, _ in failures),
                        tuple(a for _, a in failures),
                    )
                )
    return out


def summarize(first: str, second: str, results: list[GameResult]) -> list[ProgramSummary]:
    """Wins, losses, draws, forfeits and violations of each program over a match."""
    out = [ProgramSummary(first), ProgramSummary(second)]
    for r in results:
        for seat in (0, 1):
            program = out[seat ^ int(r.swapped)]
            program.name = program.name or r.names[seat]
            program.games += 1
            if r.winner == "draw":
                program.draws += 1
            elif r.winner == pr.SEATS[seat]:
                program.wins += 1
            else:
                program.losses += 1
            if r.forfeit is not None and r.forfeit.seat == pr.SEATS[seat]:
                program.forfeits += 1
            program.violations += sum(1 for v in r.violations if v.seat == pr.SEATS[seat])
    return out
