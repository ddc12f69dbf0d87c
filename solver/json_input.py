"""Reading JSON that comes from outside: one parser with a nesting-depth limit and an
integer-size limit, for every file, line and record battlejudge reads.

Python's own ``json`` turns JSON nested a few thousand deep into a ``RecursionError``
and an integer of more than 4,300 digits into a message that names neither the file
nor the field. :func:`parse_json` refuses both (and ``NaN``, ``Infinity`` and numbers
too big for a float, which are not JSON) with an :class:`InputError` naming the source
and the JSON path of the offending value, before any schema sees the data:

- nesting: at most :data:`MAX_DEPTH` arrays and objects inside one another;
- integers: at most :data:`MAX_INT_DIGITS` digits (no file battlejudge reads needs more
  than a 64-bit seed, 20 digits).

Nothing battlejudge writes comes near either limit: the deepest file (a position) nests
6 deep.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any, Final

from battlejudge.solver.errors import InputError, json_path

__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "parse_json"]

MAX_DEPTH: Final = 64
"""Arrays and objects nested inside one another, at most."""
MAX_INT_DIGITS: Final = 40
"""Digits of one integer, at most (a 128-bit number has 39)."""

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},:]')
_SHOWN = 8
"""Path parts printed in a message before the middle of a long path is left out."""


class _Refused:
    """Stands in for a number the limits refuse, so the walk can say where it was."""

    def __init__(self, why: str) -> None:
        self.why = why


def _where(loc: Sequence[int | str]) -> str:
    """A JSON path, its middle left out when it is long (a deep path is mostly ``[0]``)."""
    if len(loc) <= _SHOWN:
        return json_path(loc) or "(top)"
    head = json_path(loc[: _SHOWN // 2])
    tail = json_path(["", *loc[-_SHOWN // 2 :]])
    return f"{head}...{tail}"


def _prefix(source: str) -> str:
    return f"{source}: " if source else ""


def parse_json(
    text: str | bytes,
    source: str = "",
    *,
    max_depth: int = MAX_DEPTH,
    max_int_digits: int = MAX_INT_DIGITS,
) -> Any:
    """Parse one JSON document within the limits, or raise :class:`InputError`.

    The message starts with ``source`` (a file name, ``line 3``...) when given and
    names the JSON path of the value that breaks a limit (``flags[0].north``), so a
    caller can print it as it is. ``text`` as bytes must be UTF-8.

    >>> parse_json('{"seed": 7}')
    {'seed': 7}
    >>> parse_json('{"seed": ' + '9' * 50 + '}', 'game.json')
    Traceback (most recent call last):
    ...
    battlejudge.solver.errors.InputError: game.json: seed: an integer of 50 digits (at most 40)
    """
    refused: list[_Refused] = []

    def parse_int(digits: str) -> int | _Refused:
        n = len(digits.lstrip("-"))
        if n > max_int_digits:
            refused.append(_Refused(f"an integer of {n} digits (at most {max_int_digits})"))
            return refused[-1]
        return int(digits)

    def parse_float(number: str) -> float | _Refused:
        value = float(number)
        if math.isinf(value):
            refused.append(_Refused(f"the number {number:.20} is too big for a float"))
            return refused[-1]
        return value

    def parse_constant(name: str) -> _Refused:
        refused.append(_Refused(f"{name} is not JSON"))
        return refused[-1]

    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(f"{_prefix(source)}not UTF-8 (byte {e.start})") from None
    try:
        data = json.loads(
            text, parse_int=parse_int, parse_float=parse_float, parse_constant=parse_constant
        )
    except json.JSONDecodeError as e:
        raise InputError(
            f"{_prefix(source)}not JSON (line {e.lineno}, column {e.colno}: {e.msg})"
        ) from None
    except RecursionError:
        loc = _too_deep(text, max_depth)
        raise InputError(_deep_message(source, loc or [], max_depth)) from None
    if refused or text.count("[") + text.count("{") > max_depth:
        _walk(data, source, max_depth)
    return data


def _deep_message(source: str, loc: Sequence[int | str], max_depth: int) -> str:
    return f"{_prefix(source)}{_where(loc)}: JSON nested more than {max_depth} deep"


def _walk(data: Any, source: str, max_depth: int) -> None:
    """Find the first refused number or too-deep container, in document order."""
    stack: list[tuple[Any, tuple[int | str, ...]]] = [(data, ())]
    while stack:
        value, loc = stack.pop()
        if isinstance(value, _Refused):
            raise InputError(f"{_prefix(source)}{_where(loc)}: {value.why}")
        if isinstance(value, dict | list):
            if len(loc) >= max_depth:
                raise InputError(_deep_message(source, loc, max_depth))
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend((v, (*loc, k)) for k, v in reversed(list(items)))


def _too_deep(text: str, max_depth: int) -> list[int | str] | None:
    """The path of the first container nested more than ``max_depth`` deep, found by
    scanning the tokens (for text too deep for ``json`` itself to parse)."""
    # One frame per open container: [index or key, is an object, expecting a key].
    frames: list[list[Any]] = []
    for m in _TOKEN.finditer(text):
        token = m.group()
        c = token[0]
        if c in "[{":
            if len(frames) >= max_depth:
                return [f[0] for f in frames]
            frames.append([0, c == "{", c == "{"])
        elif c in "]}":
            if frames:
                frames.pop()
        elif not frames:
            continue
        elif c == ",":
            top = frames[-1]
            if top[1]:
                top[2] = True
            else:
                top[0] += 1
        elif c == ":":
            frames[-1][2] = False
        elif frames[-1][1] and frames[-1][2]:
            frames[-1][0] = json.loads(token)
    return None
