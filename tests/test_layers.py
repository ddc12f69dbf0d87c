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


# -- import cycles -------------------------------------------------------------------------------
def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def module_names(root: Path) -> dict[str, Path]:
    """Every module of the namespace under ``root`` by its dotted name, as pyproject's
    package-dir maps the folders."""
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    out = {}
    for package, folder in pyproject["tool"]["setuptools"]["package-dir"].items():
        for path in (root / folder).rglob("*.py"):
            parts = list(path.relative_to(root / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([package, *parts])] = path
    return out


def import_graph(root: Path) -> dict[str, set[str]]:
    """Each module's imports of the namespace's modules, at any depth (function-local
    imports too, which hide a cycle from Python but not from a reader), except those under
    ``if TYPE_CHECKING:`` (annotations only, never run). ``from P import M`` of a module M
    counts as importing M; of a name, as importing P."""
    modules = module_names(root)

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {
            id(n)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and _is_type_checking(node)
            for stmt in node.body
            for n in ast.walk(stmt)
        }
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package
                    for _ in range(node.level - 1):
                        up = up.rpartition(".")[0]
                    base = f"{up}.{base}" if base else up
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                    for a in node.names
                ]
            for target in targets:
                found = owner(target) if target.startswith(TOP) else None
                if found is not None and found != name:
                    deps.add(found)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of ``graph``: its strongly connected components of more than one
    module (Tarjan's algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles() -> None:
    """No two modules import each other, directly or around a loop, even through imports
    inside functions (issue 35: such cycles hid between proofs.store and proofs.pglog,
    engines.games and engines.records, apps.service and apps.web)."""
    found = cycles(import_graph(ROOT))
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_cycle_check_sees_function_local_imports(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools.package-dir]\n"battlejudge.proofs" = "proofs"\n'
    )
    proofs = tmp_path / "proofs"
    proofs.mkdir()
    (proofs / "__init__.py").write_text("")
    (proofs / "a.py").write_text("from battlejudge.proofs.b import x\n")
    (proofs / "b.py").write_text("def f():\n    from battlejudge.proofs import a\n")
    (proofs / "c.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from battlejudge.proofs.d import y\n"
    )
    (proofs / "d.py").write_text("from battlejudge.proofs.c import z\n")
    graph = import_graph(tmp_path)
    assert graph["battlejudge.proofs.c"] == set()  # annotations only
    assert cycles(graph) == [["battlejudge.proofs.a", "battlejudge.proofs.b"]]


# -- generic code names no game -----------------------------------------------------------------
def game_packages(root: Path) -> set[str]:
    """The games' folder names: every package under engines/ (each game has one)."""
    return {p.parent.name for p in (root / RULES).glob("*/__init__.py")}


ONE_GAME: dict[str, str] = {
    "apps/claim_work.py": "the service's claims are Battle Line's flag claims",
    "apps/routes/": "the JSON API's claims, positions and certificates are Battle Line's",
    "apps/audit_games.py": "only Battle Line's games log claims (GameInfo.logs_claims)",
    "apps/protocol/": "the community bot protocol is Battle Line's",
    "apps/web/": "the web table shows and judges Battle Line positions and games",
    "apps/tables/work.py": "the online tables play Battle Line (either theme); the store, the "
    "service and the API around it name no game",
    "apps/rl/": "each game's tensors and action codecs (the game lists come from the registry)",
    "bench/": "benchmarks time named games' questions, bots and pages",
    "cli/bench.py": "the benchmarks' options name the games they time",
    "cli/claims.py": "claim, claims, formation and verify ask Battle Line's flag questions",
    "cli/demo.py": "the demo is the rulebook's Battle Line examples",
    "cli/referee.py": "the community bot protocol is Battle Line's",
    "examples/": "the bundled examples are games' own positions and records",
}
"""Modules outside a game's folder that serve one game by design, each with the reason.
Everything else outside a game's folder is generic and imports no game."""


def generic_problems(root: Path) -> list[str]:
    """Every import of a game's modules by a module outside every game's folder (and not in
    :data:`ONE_GAME`). Registries name their games' modules as strings, not imports."""
    games = game_packages(root)
    bad = []
    for layer in sorted(FOLDERS):
        for path in sorted((root / layer).rglob("*.py")):
            where = path.relative_to(root)
            if games & set(where.with_suffix("").parts) or any(
                where.as_posix().startswith(p) for p in ONE_GAME
            ):
                continue
            for name in _imports(path):
                if name.startswith(f"{TOP}.") and games & set(name.split(".")):
                    bad.append(f"{where}: a generic module imports {name}")
    return bad


def test_generic_modules_import_no_game() -> None:
    stale = [where for where in ONE_GAME if not (ROOT / where).exists()]
    assert not stale, f"ONE_GAME names what is not there: {stale}"
    bad = generic_problems(ROOT)
    assert not bad, "\n".join(bad)


def test_the_generic_check_catches_a_game_import(tmp_path: Path) -> None:
    (tmp_path / "engines" / "chess").mkdir(parents=True)
    (tmp_path / "engines" / "chess" / "__init__.py").write_text("")
    (tmp_path / "engines" / "chess" / "rules.py").write_text("import battlejudge.solver.chess\n")
    (tmp_path / "proofs").mkdir()
    (tmp_path / "proofs" / "log.py").write_text("from battlejudge.solver.chess import mate\n")
    assert generic_problems(tmp_path) == [
        "proofs/log.py: a generic module imports battlejudge.solver.chess"
    ]
