"""Every folder of the package that holds files is a listed package, so building the wheel
prints no setuptools warning ("Package ... is absent from the `packages` configuration")
and ships its files: the web table's static files and templates were such folders."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETUP = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
SKIP = {"__pycache__", "screenshots", ".hypothesis", ".pytest_cache"}


def folders_with_files() -> dict[str, Path]:
    """Dotted name -> folder, for every folder under a mapped package folder that holds a
    file and has an importable name (what setuptools warns about), the mapped ones too."""
    found: dict[str, Path] = {}
    for name, folder in SETUP["package-dir"].items():
        base = ROOT / folder
        for d in [base, *(p for p in base.rglob("*") if p.is_dir())]:
            rel = d.relative_to(base)
            if SKIP & set(rel.parts) or not all(part.isidentifier() for part in rel.parts):
                continue  # a name Python cannot import is package data of its parent
            if any(f.is_file() for f in d.iterdir()):
                found[".".join([name, *rel.parts])] = d
    return found


def test_every_folder_with_files_is_a_listed_package() -> None:
    listed = set(SETUP["packages"])
    missing = sorted(set(folders_with_files()) - listed)
    assert missing == [], f"add to [tool.setuptools] packages: {missing}"


def test_the_check_sees_the_web_table_folders() -> None:
    found = folders_with_files()
    assert "battlejudge.apps.web.static" in found and "battlejudge.apps.web.templates" in found
