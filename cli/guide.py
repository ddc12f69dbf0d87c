"""``battlejudge guide``: the offline rules guide for every game battlejudge knows (issue 5).

A thin layer over :mod:`battlejudge.apps.guide`: it parses the arguments, does the terminal I/O
and prints what the library answers.
"""

from __future__ import annotations

import click

from battlejudge.apps.guide import Answer, Guide, Session
from battlejudge.cli.common import EXIT_BAD_INPUT, emit_json, fail
from battlejudge.solver.errors import InputError

MODES = ("setup", "turn", "card", "ask")


def _show(answer: Answer, as_json: bool) -> None:
    if as_json:
        emit_json(answer.to_json())
    else:
        click.echo(answer.answer)


def _interactive(guide_: Guide, as_json: bool) -> None:
    """Greeting, then one reply per line until ``quit`` or end of input.

    With ``--json`` every reply is one JSON line on stdout and the prompt goes to stderr.
    """
    session = Session(guide_)
    _show(Answer(session.greeting(), None, 1.0), as_json)
    while True:
        try:
            line = click.prompt("", prompt_suffix="> ", default="", show_default=False, err=as_json)
        except click.Abort:
            # End of input (or Ctrl-C) ends the session like 'quit'.
            if not as_json:
                click.echo()
            return
        reply = session.respond(str(line))
        _show(reply.answer, as_json)
        if reply.done:
            return


@click.command("guide")
@click.argument("game", metavar="GAME")
@click.argument("mode", required=False, metavar="[setup|turn|card NAME|ask QUESTION]")
@click.argument("words", nargs=-1, metavar="")
@click.option(
    "--json", "as_json", is_flag=True, help="Answer as JSON: answer, direct, section, score."
)
def guide(game: str, mode: str | None, words: tuple[str, ...], as_json: bool) -> None:
    """A patient offline guide to the rules of GAME, answering from the rules alone.

    GAME is one of battleline, nine-circles, battleplan, lines-of-battle, force-duel.
    Without a mode it starts an interactive session (type 'quit' to leave). 'setup' and 'turn'
    walk you through setup and your first turn; 'card NAME' explains a card (either theme's
    name); 'ask QUESTION' answers one rules question: a direct answer first, then the rule it
    comes from, quoted with its section.
    """
    try:
        guide_ = Guide.for_game(game)
    except InputError as e:
        fail(str(e), EXIT_BAD_INPUT)
    if mode is None:
        _interactive(guide_, as_json)
        return
    key = mode.lower()
    text = " ".join(words).strip()
    if key in ("setup", "turn"):
        if text:
            fail(f"'{key}' takes no further argument, got {text!r}")
        _show(guide_.walkthrough("setup" if key == "setup" else "turn"), as_json)
    elif key == "card":
        if not text:
            fail("'card' needs a card name, e.g. battlejudge guide battleline card Fog")
        try:
            _show(guide_.card(text), as_json)
        except InputError as e:
            fail(str(e), EXIT_BAD_INPUT)
    elif key == "ask":
        if not text:
            fail("'ask' needs a question, e.g. battlejudge guide battleline ask \"Who starts?\"")
        _show(guide_.ask(text), as_json)
    else:
        fail(f"unknown guide mode {mode!r} (choose from {', '.join(MODES)})")


COMMANDS: tuple[click.Command, ...] = (guide,)

__all__ = ["COMMANDS", "guide"]
