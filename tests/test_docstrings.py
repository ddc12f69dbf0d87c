"""Every public function, class and method of the battlejudge packages has a docstring: the API
reference of the docs site (mkdocstrings, docs/reference/python.md) is made of them.

Public: the name does not start with ``_``, and neither does its module nor any class around it.
The modules are found by walking the installed packages (as tests/test_doctests.py does) and
read from their installed source with :mod:`ast`, the way mkdocstrings' griffe reads them, so a
dataclass's generated ``__doc__`` or a base class's docstring does not count as one.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGES = ["solver", "proofs", "engines", "apps", "cli"]


def _modules() -> dict[str, Path]:
    """Module name -> installed source file, for every public module of :data:`PACKAGES`."""
    found: dict[str, Path] = {}
    for layer in PACKAGES:
        pkg = importlib.import_module(f"battlejudge.{layer}")
        names = [pkg.__name__]
        for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{pkg.__name__}."):
            names.append(info.name)
        for name in names:
            if any(part.startswith("_") for part in name.split(".")):
                continue
            spec = importlib.util.find_spec(name)
            assert spec is not None and spec.origin is not None, name
            found[name] = Path(spec.origin)
    return found


def _is_accessor(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A property's setter or deleter, or an ``@overload`` signature: documented by the
    property getter or the implementation."""
    for decorator in node.decorator_list:
        if isinstance(decorator, ast.Attribute) and decorator.attr in {"setter", "deleter"}:
            return True
        name = decorator.id if isinstance(decorator, ast.Name) else getattr(decorator, "attr", "")
        if name == "overload":
            return True
    return False


def undocumented(tree: ast.Module, prefix: str) -> Iterator[str]:
    """The dotted names of the public functions, classes and methods directly in ``tree`` (a
    module or a class body) that have no docstring."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name.startswith("_"):
                continue
            if not isinstance(node, ast.ClassDef) and _is_accessor(node):
                continue
            name = f"{prefix}.{node.name}"
            if not (ast.get_docstring(node) or "").strip():
                yield name
            if isinstance(node, ast.ClassDef):
                yield from undocumented(ast.Module(body=node.body, type_ignores=[]), name)


MODULES = _modules()


def test_the_walk_finds_every_layer() -> None:
    for module in (
        "battlejudge.solver.battleline.claims",
        "battlejudge.proofs.log",
        "battlejudge.engines.battleline.state",
        "battlejudge.apps.service",
        "battlejudge.cli.main",
    ):
        assert module in MODULES


def test_the_check_can_fail() -> None:
    source = '''
def documented():
    """Yes."""

def bare(): pass

class Kind:
    def method(self): pass

    @property
    def size(self):
        """Fine."""

    @size.setter
    def size(self, value): pass

    def _private(self): pass

class _Hidden:
    def shown(self): pass
'''
    assert list(undocumented(ast.parse(source), "m")) == ["m.bare", "m.Kind", "m.Kind.method"]


def test_every_public_object_has_a_docstring() -> None:
    missing = [
        name
        for module, path in sorted(MODULES.items())
        for name in undocumented(ast.parse(path.read_text(encoding="utf-8")), module)
    ]
    if missing:
        pytest.fail(f"{len(missing)} public objects have no docstring:\n" + "\n".join(missing))
