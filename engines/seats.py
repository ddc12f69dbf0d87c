"""Seats as the Python API takes them: a player index (0, 1) or the seat's name.

Every public engine function that takes a seat (a player, a viewer, who moves first) goes
through :func:`player_index`, so ``state.claimable(1, "north")`` and ``state.claimable(1, 0)``
are the same call, and anything else (``"west"``, ``2``, ``None``, ``True``) is refused in
one line naming the value and the seats accepted, rather than indexing the wrong side
(``-1`` is the last seat in Python) or failing deep inside with a ``TypeError``.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import SupportsIndex, TypeAlias

from battlejudge.solver.errors import InputError

Seat: TypeAlias = int | str
"""A seat as the API takes it: its player index (0 for the first seat) or its name
(``"north"``, ``"south"``; the other games' ``"p1"``, ``"p2"``), in any case."""


def player_index(player: object, seats: Sequence[str], what: str = "player") -> int:
    """The player index of ``player``: an index ``0 <= player < len(seats)`` as it is, a
    seat name (any case, surrounding blanks ignored) as its index. Raises
    :class:`InputError` (a ``ValueError``) naming ``what``, the value and the seats
    accepted otherwise; a bool is refused (``True`` is not a seat, though Python counts
    it as 1).

    >>> player_index("South", ("north", "south"))
    1
    >>> player_index(2, ("north", "south"))
    Traceback (most recent call last):
    ...
    battlejudge.solver.errors.InputError: player must be north or south (or 0, 1), got 2
    """
    if type(player) is int and 0 <= player < len(seats):  # the hot path: the engines' own calls
        return player
    if isinstance(player, str):
        name = player.strip().lower()
        if name in seats:
            return seats.index(name)
    elif isinstance(player, SupportsIndex) and not isinstance(player, bool):
        try:
            index = operator.index(player)  # numpy integers, too
        except TypeError:
            pass
        else:
            if 0 <= index < len(seats):
                return index
    names = " or ".join([", ".join(seats[:-1]), seats[-1]] if len(seats) > 1 else seats)
    numbers = ", ".join(map(str, range(len(seats))))
    raise InputError(f"{what} must be {names} (or {numbers}), got {player!r}")
