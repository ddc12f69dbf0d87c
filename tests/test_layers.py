"""Layering, one way only: solver <- proofs <- engines <- apps <- cli (STYLE.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = {
    "solver": {"solver"},
    "proofs": {"solver", "proofs"},
    "engines": {"solver", "proofs", "engines"},
    "apps": {"solver", "proofs", "engines", "apps"},
    "cli": {"solver", "proofs", "engines", "apps", "cli", "examples"},
    "examples": {"solver", "proofs", "engines", "apps", "examples"},
}
FOLDERS = set(ALLOWED)


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports(layer: str) -> None:
    bad = []
    for path in (ROOT / layer).rglob("*.py"):
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] in FOLDERS:
                bad.append(f"{path.relative_to(ROOT)}: bare 'import {name}' (use battlejudge.)")
            elif parts[0] == "battlejudge" and len(parts) > 1 and parts[1] not in ALLOWED[layer]:
                bad.append(f"{path.relative_to(ROOT)}: {layer} imports {name}")
    assert not bad, "\n".join(bad)


def test_the_check_catches_a_violation(tmp_path: Path) -> None:
    f = tmp_path / "x.py"
    f.write_text("from battlejudge.cli.main import cli\nimport solver.errors\n")
    assert _imports(f) == ["battlejudge.cli.main", "solver.errors"]
