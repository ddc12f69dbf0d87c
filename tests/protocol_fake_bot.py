"""A scripted bot for the referee tests: speaks the Battle Line bot protocol with the
standard library only (as a bot in any language would), in one of these modes:

- ``good``: always the lowest flag with an open slot and the first card of its hand;
- ``bad``: like ``good``, but every other answer is unusable (in turn: a card it does
  not hold, a card that does not exist, flag 10, a full or claimed flag, then garbage);
- ``hang``: stops answering (sleeps) from its ``--after``-th play on;
- ``crash``: exits with status 3 at its ``--after``-th play;
- ``extra``: prints a second, unsolicited line after its ``--after``-th answer;
- ``stubborn``: like ``hang``, but ignores SIGTERM and leaves a child process that
  ignores it too (the referee must SIGKILL the whole process group);
- ``badname``: answers the name request with nonsense, then plays like ``good``.

Usage: ``python protocol_fake_bot.py MODE [--after N] [--pidfile FILE]`` (the child's pid
goes to FILE in ``stubborn`` mode).
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode")
    parser.add_argument("--after", type=int, default=1)
    parser.add_argument("--pidfile", default=None)
    args = parser.parse_args()
    mode = args.mode
    seat = "north"
    hand: list[str] = []
    mine: dict[int, int] = {}
    claimed: list[str] = ["unclaimed"] * 9
    plays = 0
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import signal, time\n"
                "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                "time.sleep(600)",
            ]
        )
        if args.pidfile:
            with open(args.pidfile, "w") as f:
                f.write(str(child.pid))

    def say(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    for raw in sys.stdin:
        words = raw.split()
        if words[:1] == ["player"] and words[2:] == ["name"]:
            seat = words[1]
            say("hello there" if mode == "badname" else f"player {seat} fake-{mode}")
        elif words[:1] == ["player"] and words[2:3] == ["hand"]:
            hand = words[3:]
        elif words[:2] == ["flag", "claim-status"]:
            claimed = words[2:]
        elif words[:1] == ["flag"] and words[2:3] == ["cards"] and words[3] == seat:
            mine[int(words[1])] = len(words) - 4
        elif words == ["go", "play-card"]:
            plays += 1
            open_flags = [
                f for f in range(1, 10) if mine.get(f, 0) < 3 and claimed[f - 1] == "unclaimed"
            ]
            good = f"play {open_flags[0]} {hand[0]}"
            if mode in ("hang", "stubborn") and plays >= args.after:
                time.sleep(600)
            if mode == "crash" and plays >= args.after:
                sys.exit(3)
            if mode == "bad" and plays % 2 == 0:
                full = [f for f in range(1, 10) if f not in open_flags]
                absent = next(
                    f"color{c},{n}"
                    for c in range(1, 7)
                    for n in range(1, 11)
                    if f"color{c},{n}" not in hand
                )
                choices = [
                    f"play {open_flags[0]} {absent}",
                    "play 1 color1,11",
                    f"play 10 {hand[0]}",
                    f"play {full[0]} {hand[0]}" if full else "play 0 color1,1",
                    "I resign",
                ]
                say(choices[(plays // 2 - 1) % len(choices)])
                continue
            if mode == "extra" and plays >= args.after:
                sys.stdout.write(good + "\nthinking about the next move\n")
                sys.stdout.flush()
                continue
            say(good)


if __name__ == "__main__":
    main()
