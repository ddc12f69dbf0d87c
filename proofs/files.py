"""Reading the project's JSON files into their pydantic models, with errors that name the
file and the JSON path of the offending value (exit 2 at the CLI)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from battlejudge.solver.errors import InputError, json_path

__all__ = ["json_path", "read_model"]

M = TypeVar("M", bound=BaseModel)


def read_model(path: str | Path, model: type[M], kind: str = "") -> M:
    """Parse and validate a JSON file; ``kind`` names the file type in errors."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not JSON ({e.msg} at line {e.lineno})") from e
    try:
        return model.model_validate(raw)
    except ValidationError as e:
        err = e.errors()[0]
        what = f"not a {kind}: " if kind else ""
        raise InputError(f"{path}: {what}{json_path(err['loc']) or '(top)'}: {err['msg']}") from e
