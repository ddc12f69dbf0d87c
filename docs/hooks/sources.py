"""mkdocs hook: the Python API reference finds ``battlejudge`` in this checkout whatever the
editable install.

pyproject.toml maps the package's subpackages from the repository's top-level folders
(``[tool.setuptools.package-dir]``: ``battlejudge.apps`` is ``apps/``, ...). An install with
``--config-settings editable_mode=strict`` lays out a tree of links in the package's shape,
which griffe (mkdocstrings' Python handler) reads like any folder; a plain ``pip install -e``
installs an import hook instead, which Python follows but griffe, reading files without
importing them, cannot (``battlejudge.apps.service could not be found``). So this hook lays out
that tree itself, in a temporary folder, from the same package-dir table, and makes it the
first search path of the Python handler: the reference then documents this checkout's sources,
with a plain, strict or no editable install alike.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority


def package_dirs(pyproject: Path) -> dict[str, Path]:
    """Package name -> its source folder, from ``[tool.setuptools.package-dir]`` (folders
    relative to ``pyproject``'s)."""
    table = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    mapping: dict[str, str] = table["tool"]["setuptools"]["package-dir"]
    return {name: (pyproject.parent / folder).resolve() for name, folder in mapping.items()}


def link_tree(dirs: dict[str, Path], into: Path) -> None:
    """Lay out the packages of ``dirs`` under ``into`` as an installed package is laid out:
    a package with a mapped subpackage becomes a folder of links to its own entries (beside
    the subpackage's), any other is one link to its source folder."""
    for name in sorted(dirs, key=lambda n: n.count(".")):
        target = into.joinpath(*name.split("."))
        nested = {n.rsplit(".", 1)[1] for n in dirs if n.rsplit(".", 1)[0] == name and "." in n}
        target.parent.mkdir(parents=True, exist_ok=True)
        if not nested:
            target.symlink_to(dirs[name], target_is_directory=True)
            continue
        target.mkdir()
        for entry in dirs[name].iterdir():
            if entry.name not in nested and entry.name != "__pycache__":
                (target / entry.name).symlink_to(entry)


_trees: dict[Path, Path] = {}


def source_tree(pyproject: Path) -> Path:
    """The folder to search for the package (laid out once per process, removed at exit)."""
    if pyproject not in _trees:
        into = Path(tempfile.mkdtemp(prefix="battlejudge-docs-"))
        atexit.register(shutil.rmtree, into, ignore_errors=True)
        link_tree(package_dirs(pyproject), into)
        _trees[pyproject] = into
    return _trees[pyproject]


@event_priority(100)  # before mkdocstrings' own on_config, which makes the handler
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Put the tree first on the search path of mkdocstrings' Python handler."""
    pyproject = Path(config.config_file_path).resolve().parent / "pyproject.toml"
    handlers: dict[str, Any] = config.plugins["mkdocstrings"].config["handlers"]
    python = handlers.setdefault("python", {})
    python["paths"] = [str(source_tree(pyproject)), *python.get("paths", [])]
    return config
