"""BattlePlan actions: small ints in ranges, one range per kind of decision.

Every action is one small step of the game so that a person can play it one line at a
time. The notation (:mod:`battlejudge.engines.battleplan.state` prints it, since a step's
verb depends on the card being resolved) is:

=====================  ==================================================================
``token c4``           chance: where the Buff Token lands (setup and every relocation)
``draw p1 extra-move`` chance: the buff a player draws into his hand
``roll-off 11-9``      chance: the setup dice totals of p1 and p2 (ties re-rolled)
``die 4``              chance: one of the round's three Game Dice
``place rook c1``      setup: put a piece in its own defensive zone
``assign rook 6``      plan: give a rolled value to a piece (public)
``card rook move``     plan: put the next card (move/attack/defend) on a piece's stack
``buff rook diagonal`` plan: assign a buff from hand to a piece
``done``               plan: the stacks are complete
``reveal rook``        battle: reveal the top card of a piece's stack
``buff before``        battle: use the piece's buff before the card (``after``, ``later``)
``move c4``            battle: the step a MOVE (or a move buff) takes; ``move none``
``defend c4``          battle: a DEFEND's step (the shield follows); ``defend none``
``attack c4``          battle: the piece attacked; ``attack none``
``pickup horse``       the player chooses which piece picks up the flag
=====================  ==================================================================
"""

from __future__ import annotations

from typing import TypeAlias

Action: TypeAlias = int

PLACE = 0
"""+ kind * 64 + square."""
ASSIGN = 200
"""+ kind * 8 + value (1..6)."""
CARD = 230
"""+ kind * 3 + card."""
BUFF = 240
"""+ kind * 4 + buff."""
DONE = 255
REVEAL = 260
"""+ kind."""
BUFF_BEFORE, BUFF_AFTER, BUFF_LATER = 265, 266, 267
NONE = 270
"""A step that has no effect (nothing legal to do)."""
TO = 300
"""+ square: where a step goes, or the square attacked."""
PICKUP = 370
"""+ kind."""
TOKEN = 400
"""+ square."""
DRAW = 470
"""+ buff."""
ROLLOFF = 500
"""+ p1_total * 19 + p2_total."""
DIE = 900
"""+ value."""
BUFF_CHOICES = {BUFF_BEFORE: "before", BUFF_AFTER: "after", BUFF_LATER: "later"}
