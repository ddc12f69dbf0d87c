"""Bundled examples: the rulebook's flag examples and question files.

Shipped inside the package (as ``battlejudge.examples``) so ``battlejudge demo`` runs
from an installed copy as well as from a checkout.
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any


def read_text(name: str) -> str:
    """The text of a bundled example file, e.g. ``read_text('claims.jsonl')``."""
    return files(__name__).joinpath(name).read_text(encoding="utf-8")


def rulebook_cases() -> list[dict[str, Any]]:
    """The rulebook's flag examples with their sources and expected verdicts."""
    cases: list[dict[str, Any]] = json.loads(read_text("rulebook.json"))["cases"]
    return cases
