"""The offline rules guide for every game battlejudge knows (issues 5 and 20).

Each game's rules reference is a Markdown file in ``data/`` written in the project's own words,
with battlejudge's rulings marked as such, and beside it the facts players ask about and the ways
they ask them (``data/<game>.toml``). :class:`Guide` answers from those alone: setup and first-turn
walkthroughs, card entries under either theme's names, and rules questions ranked by keywords and,
with the ``guide`` extra, sentence vectors (:mod:`.retrieve`), answered with the direct answer
first and the rule quoted with its section, or :data:`FALLBACK` when the confidence is too low.

>>> guide = Guide.for_game("battleline")
>>> guide.ask("How many cards can I put next to one flag?").section
'Troop Cards'
>>> guide.card("Mano a Mano!").section
'Fog'
"""

from __future__ import annotations

from battlejudge.apps.guide.guide import (
    FALLBACK,
    HIGH,
    THRESHOLD,
    Answer,
    Guide,
    UnknownCardError,
)
from battlejudge.apps.guide.reference import (
    GAMES,
    Faq,
    Reference,
    Section,
    UnknownGameError,
    Walkthrough,
    game_id,
    load,
)
from battlejudge.apps.guide.session import Reply, Session

__all__ = [
    "FALLBACK",
    "GAMES",
    "HIGH",
    "THRESHOLD",
    "Answer",
    "Faq",
    "Guide",
    "Reference",
    "Reply",
    "Section",
    "Session",
    "UnknownCardError",
    "UnknownGameError",
    "Walkthrough",
    "game_id",
    "load",
]
