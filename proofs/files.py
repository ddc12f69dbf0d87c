"""Reading the project's JSON files into their pydantic models, with errors that name the
file and the JSON path of the offending value (exit 2 at the CLI)."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from battlejudge.solver.errors import InputError, json_path
from battlejudge.solver.json_input import parse_json

__all__ = ["json_path", "read_model"]

M = TypeVar("M", bound=BaseModel)


def read_model(path: str | Path, model: type[M], kind: str = "", max_bytes: int | None = None) -> M:
    """Parse and validate a JSON file within the JSON limits (``parse_json``); ``kind``
    names the file type in errors. A file of more than ``max_bytes`` is refused unread."""
    if max_bytes is not None and (size := Path(path).stat().st_size) > max_bytes:
        raise InputError(
            f"{path}: {size} bytes, more than the {max_bytes} a {kind or 'file'} may have"
        )
    raw = parse_json(Path(path).read_bytes(), str(path))
    try:
        return model.model_validate(raw)
    except ValidationError as e:
        err = e.errors()[0]
        what = f"not a {kind}: " if kind else ""
        raise InputError(f"{path}: {what}{json_path(err['loc']) or '(top)'}: {err['msg']}") from e
