"""Layering, one way only: solver <- proofs <- engines <- apps <- cli (STYLE.md); and the
rules packages (engines/) start no process and open no server (the design card:
"applications (service, referee, web) live outside the rules packages")."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = {
    "solver": {"solver"},
    "proofs": {"solver", "proofs"},
    "engines": {"solver", "proofs", "engines"},
    "apps": {"solver", "proofs", "engines", "apps"},
    # benchmarks and measurements: they start services and bots to time them
    "bench": {"solver", "proofs", "engines", "apps", "bench", "examples"},
    "cli": {"solver", "proofs", "engines", "apps", "bench", "cli", "examples"},
    "examples": {"solver", "proofs", "engines", "apps", "examples", "battlejudge"},
    # the repo-root battlejudge/ folder (battlejudge.openspiel, ...): the top layer, like cli
    "battlejudge": {
        "solver",
        "proofs",
        "engines",
        "apps",
        "bench",
        "cli",
        "examples",
        "battlejudge",
    },
}
FOLDERS = set(ALLOWED)
TOP = "battlejudge"
"""The folder of the namespace's own modules: ``battlejudge.X`` where X is no layer."""
RULES = "engines"
"""The rules packages: game rules, notation and bots, nothing that runs a server or a process."""

PROCESS_MODULES = {
    # processes and their signals
    "subprocess": "starts processes",
    "multiprocessing": "starts processes",
    "concurrent.futures": "runs process pools",
    "pty": "starts processes",
    "signal": "handles process signals",
    # sockets, event loops and servers (asyncio also spawns subprocesses)
    "asyncio": "runs an event loop, servers and subprocesses",
    "socket": "opens sockets",
    "socketserver": "runs a server",
    "select": "waits on sockets and pipes",
    "selectors": "waits on sockets and pipes",
    "ssl": "opens network connections",
    "http": "runs an HTTP server or client",
    "urllib.request": "opens network connections",
    # the HTTP stack of the service and its tests
    "fastapi": "is the web framework",
    "starlette": "is the web framework",
    "uvicorn": "is the web server",
    "httpx": "is an HTTP client",
}
"""Modules only an application needs; none of them is imported anywhere under engines/
(apps/service.py and apps/protocol/referee.py are the ones that do)."""

OS_PROCESS_CALLS = {"system", "popen", "fork", "forkpty", "kill", "killpg", "setsid"}
OS_PROCESS_PREFIXES = ("spawn", "exec", "posix_spawn", "wait")


def _imports(path: Path) -> list[str]:
    """Every absolute module name ``path`` imports, at any depth (function bodies too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _is_os_process_call(name: str) -> bool:
    return name in OS_PROCESS_CALLS or name.startswith(OS_PROCESS_PREFIXES)


def _os_process_uses(path: Path) -> list[str]:
    """``os.system``, ``os.fork``, ``os.spawn*``, ``os.exec*``, ``os.kill``... used in
    ``path``, as ``os.NAME`` or ``from os import NAME``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
            and _is_os_process_call(node.attr)
        ):
            found.append(f"os.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "os" and node.level == 0:
            found += [f"os.{a.name}" for a in node.names if _is_os_process_call(a.name)]
    return found


def layer_problems(root: Path, layer: str) -> list[str]:
    """Every import under ``root/layer`` of a layer that ``layer`` may not import, and
    every bare ``import solver`` (a second copy of the module)."""
    bad = []
    for path in sorted((root / layer).rglob("*.py")):
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] in FOLDERS - {TOP}:
                bad.append(f"{path.relative_to(root)}: bare 'import {name}' (use battlejudge.)")
            elif parts[0] == "battlejudge" and len(parts) > 1:
                target = parts[1] if parts[1] in FOLDERS else TOP
                if target not in ALLOWED[layer]:
                    bad.append(f"{path.relative_to(root)}: {layer} imports {name}")
    return bad


def process_problems(root: Path, folder: str) -> list[str]:
    """Every import under ``root/folder`` of a module of :data:`PROCESS_MODULES` (or of
    a submodule: ``http.server``, ``asyncio.subprocess``), and every process call of ``os``."""
    bad = []
    for path in sorted((root / folder).rglob("*.py")):
        where = path.relative_to(root)
        for name in _imports(path):
            for module, why in PROCESS_MODULES.items():
                if name == module or name.startswith(module + "."):
                    bad.append(f"{where}: imports {name} ({module} {why})")
        bad += [
            f"{where}: uses {call} (starts or signals processes)" for call in _os_process_uses(path)
        ]
    return bad


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports(layer: str) -> None:
    bad = layer_problems(ROOT, layer)
    assert not bad, "\n".join(bad)


def test_rules_packages_run_no_server_and_no_process() -> None:
    bad = process_problems(ROOT, RULES)
    assert not bad, "\n".join(bad)


def test_the_layers_are_the_installed_folders() -> None:
    """Every folder pyproject installs has a layer here (so the walk above covers it), and
    every package folder inside a layer is installed (the wheel ships it)."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setup = pyproject["tool"]["setuptools"]
    folders = setup["package-dir"]
    assert {f"battlejudge.{layer}" if layer != TOP else TOP: layer for layer in FOLDERS} == folders
    assert setup["packages"][0] == TOP and next(iter(folders)) == TOP
    assert not (ROOT / TOP / "__init__.py").exists(), "battlejudge/ is a namespace portion"
    packages = set(setup["packages"])
    for layer in FOLDERS:
        for init in (ROOT / layer).rglob("__init__.py"):
            dotted = ".".join(("battlejudge", *init.parent.relative_to(ROOT).parts))
            assert dotted in packages, f"{init.parent.relative_to(ROOT)} is not in packages"


def test_the_checks_catch_violations(tmp_path: Path) -> None:
    engines = tmp_path / "engines" / "battleline"
    engines.mkdir(parents=True)
    (engines / "x.py").write_text(
        "from battlejudge.apps.service import create_app\n"
        "import solver.errors\n"
        "from http.server import HTTPServer\n"
        "import os\n"
        "\n"
        "def f() -> None:\n"
        "    import subprocess\n"
        "    from asyncio import subprocess as aio\n"
        "    os.system('true')\n"
        "    from os import execv\n"
    )
    (tmp_path / "solver").mkdir()
    (tmp_path / "solver" / "y.py").write_text("import battlejudge.apps.protocol.referee\n")
    (tmp_path / "proofs").mkdir()
    (tmp_path / "proofs" / "z.py").write_text(
        "from battlejudge.apps import audit_games\nimport battlejudge.openspiel\n"
    )

    assert layer_problems(tmp_path, "engines") == [
        "engines/battleline/x.py: engines imports battlejudge.apps.service",
        "engines/battleline/x.py: bare 'import solver.errors' (use battlejudge.)",
    ]
    assert layer_problems(tmp_path, "solver") == [
        "solver/y.py: solver imports battlejudge.apps.protocol.referee"
    ]
    assert layer_problems(tmp_path, "proofs") == [
        "proofs/z.py: proofs imports battlejudge.apps",
        "proofs/z.py: proofs imports battlejudge.openspiel",
    ]
    assert layer_problems(tmp_path, "apps") == []
    assert process_problems(tmp_path, "engines") == [
        "engines/battleline/x.py: imports http.server (http runs an HTTP server or client)",
        "engines/battleline/x.py: imports subprocess (subprocess starts processes)",
        "engines/battleline/x.py: imports asyncio"
        " (asyncio runs an event loop, servers and subprocesses)",
        "engines/battleline/x.py: uses os.execv (starts or signals processes)",
        "engines/battleline/x.py: uses os.system (starts or signals processes)",
    ]
    # an application may do all of this
    apps = tmp_path / "apps"
    apps.mkdir()
    (apps / "s.py").write_text("import subprocess\nimport uvicorn\nimport battlejudge.engines\n")
    assert layer_problems(tmp_path, "apps") == []
    # the namespace's top modules (battlejudge/__main__.py) are the top layer: rules code
    # may not import them, they may import everything
    top = tmp_path / "battlejudge"
    top.mkdir()
    (top / "__main__.py").write_text("from battlejudge.cli.main import main\n")
    (tmp_path / "solver" / "w.py").write_text("import battlejudge.__main__\n")
    assert layer_problems(tmp_path, "battlejudge") == []
    assert layer_problems(tmp_path, "solver") == [
        "solver/w.py: solver imports battlejudge.__main__",
        "solver/y.py: solver imports battlejudge.apps.protocol.referee",
    ]
