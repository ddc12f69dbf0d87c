"""The interactive guide as a pure state machine: a line in, a reply out (the CLI does the I/O)."""

from __future__ import annotations

from dataclasses import dataclass

from battlejudge.apps.guide.guide import Answer, Guide, UnknownCardError
from battlejudge.apps.guide.reference import WalkthroughKind
from battlejudge.apps.guide.text import plain

QUIT_WORDS = frozenset({"quit", "exit", "bye", "goodbye", "q"})
_YES = frozenset({"yes", "y", "yeah", "yep", "sure", "i do"})
_NO = frozenset({"no", "n", "nope", "no thanks", "no thank you", "i don t", "not really"})
_SETUP = frozenset({"setup", "set up"})
_TURN = frozenset({"turn", "first turn", "my turn"})


@dataclass(frozen=True)
class Reply:
    """One reply of the session; ``done`` once the player has said ``quit``."""

    answer: Answer
    done: bool = False


class Session:
    """A conversation with the guide: walkthroughs, card lookups, questions, until ``quit``.

    After a walkthrough the guide asks its follow-up question; a bare yes or no to it is answered
    as such rather than searched.
    """

    def __init__(self, guide: Guide) -> None:
        self.guide = guide
        self._pending: WalkthroughKind | None = None

    def greeting(self) -> str:
        """The guide's greeting."""
        return self.guide.greeting()

    def help(self) -> str:
        """The session's commands, one per line (``card NAME`` only for games with card
        sections)."""
        cards = ", ".join(self.guide.card_names())
        lines = [
            "setup          the setup steps",
            "turn           what to do on your first turn",
        ]
        if cards:
            lines.append(f"card NAME      explain a card ({cards})")
        lines += ["anything else  a rules question", "quit           leave the guide"]
        return "\n".join(lines)

    def respond(self, line: str) -> Reply:
        """The reply to one line of input."""
        text = line.strip()
        key = plain(text)
        pending, self._pending = self._pending, None
        if key in QUIT_WORDS:
            return Reply(self._say(f"Goodbye, and enjoy your game of {self.guide.title}!"), True)
        if not key:
            return Reply(self._say("Ask me anything about the rules, or type 'help'."))
        if key in {"help", "h"} or text == "?":
            return Reply(self._say(self.help()))
        if pending is not None and key in _YES:
            return Reply(self._say("Of course: what would you like to know?"))
        if pending is not None and key in _NO:
            if pending == "setup":
                follow = "When you are ready to play, type 'turn' and I will guide your first turn."
            else:
                follow = "Good luck! Ask me whenever a rules question comes up."
            return Reply(self._say(f"Great. {follow}"))
        if key in _SETUP:
            return Reply(self._walkthrough("setup"))
        if key in _TURN:
            return Reply(self._walkthrough("turn"))
        if key == "cards" and self.guide.card_names():
            return Reply(self._say("The cards: " + ", ".join(self.guide.card_names()) + "."))
        if key.startswith("card ") and text[:5].lower() == "card ":
            try:
                return Reply(self.guide.card(text[5:].strip()))
            except UnknownCardError as e:
                return Reply(self._say(f"Sorry, {e}. Type 'cards' for the list."))
        answer = self.guide.ask(text)
        for kind in self.guide.reference.walkthroughs:
            if answer == self.guide.walkthrough(kind):
                # ask() routed a setup or first-turn question to its walkthrough.
                self._pending = kind
        return Reply(answer)

    def _walkthrough(self, kind: WalkthroughKind) -> Answer:
        self._pending = kind
        return self.guide.walkthrough(kind)

    @staticmethod
    def _say(text: str) -> Answer:
        return Answer(text, None, 1.0)
