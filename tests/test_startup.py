"""A lean start-up: commands import what they need and nothing else (issue 17).

``battlejudge --help`` lists the commands from the table in ``cli/main.py`` without
importing them, so the table must say what the commands say; a one-shot claim must not pay
for OR-Tools, pandas, the web stack, signatures or rich; and without the ``games`` extra the
questions that need OR-Tools answer with one line naming the extra. Times are measured by
``battlejudge bench startup``, never asserted here.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from battlejudge.cli import main
from battlejudge.solver.errors import MissingExtraError, missing_extra

CLI_MODULES = (
    "claims",
    "games",
    "demo",
    "bench",
    "guide",
    "logs",
    "referee",
    "serve",
    "battleplan",
    "witness",
    "lines_of_battle",
    "force_duel",
)

HEAVY = (
    "ortools",
    "pandas",
    "numpy",
    "fastapi",
    "uvicorn",
    "cryptography",
    "rich",
    "pydantic",
    "httpx",
    "psycopg",
    "wordllama",
    "bm25s",
    "multiprocessing",
    "importlib.metadata",
)

_RUN = """
import json, sys
{before}
from battlejudge.cli.main import main
sys.argv = ["battlejudge", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit as e:
    code = e.code
else:
    code = 0
loaded = sorted(m for m, v in sys.modules.items() if v is not None and m.startswith({heavy!r}))
print(json.dumps({{"code": code, "loaded": loaded}}), file=sys.stderr)
"""


def _run(args: list[str], before: str = "") -> tuple[int, list[str], str]:
    """Run the CLI in a fresh interpreter: exit code, heavy modules loaded, stderr's
    other lines."""
    code = _RUN.format(before=before, heavy=HEAVY)
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    *lines, last = out.stderr.strip().splitlines()
    result = json.loads(last)
    return result["code"], result["loaded"], "\n".join(lines)


def test_table_matches_every_command() -> None:
    """Every command of every CLI module is in the table, under its own name, with its own
    short help, and the table names nothing else."""
    seen = {}
    for name in CLI_MODULES:
        module = importlib.import_module(f"battlejudge.cli.{name}")
        for command in module.COMMANDS:
            attr = next(k for k, v in vars(module).items() if v is command)
            seen[command.name] = (name, attr, command.get_short_help_str(limit=10**6))
    assert seen == main.COMMANDS


def test_help_lists_the_commands_as_click_would() -> None:
    """``--help`` lists what click lists for the commands as ``battlejudge`` loads them (each
    summarized by its whole first sentence), without loading them."""
    eager = click.Group("battlejudge")
    ctx = click.Context(main.cli)
    for name in main.COMMANDS:
        eager.add_command(main.cli.get_command(ctx, name), name)
    lazy = CliRunner().invoke(main.cli, ["--help"]).output
    expected = CliRunner().invoke(eager, ["--help"]).output
    assert lazy.split("Commands:")[1] == expected.split("Commands:")[1]


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["claim", "--mine", "R4 R5 R3", "--theirs", "B8", "--seen", "B7 B10"],
        ["claim", "--mine", "R4 R5 R3", "--theirs", "B8"],
        ["formation", "R9 cavalry alexander"],
    ],
)
def test_commands_import_no_heavy_module(args: list[str]) -> None:
    code, loaded, _ = _run(args)
    assert code in (0, 1)
    assert loaded == []


@pytest.mark.parametrize(
    "args",
    [
        ["battleplan", "schema"],
        ["lines-of-battle", "schema"],
        ["force-duel", "ask", "force", "examples/force_duel/position-mixed.json"],
        ["selfplay", "--game", "lines-of-battle", "--bots", "planner,random", "--games", "1"],
    ],
)
def test_missing_games_extra_is_one_line(args: list[str]) -> None:
    code, _, err = _run(args, before="sys.modules['ortools'] = None")
    assert code == 2
    assert err.count("\n") == 0
    assert "pip install 'battlejudge[games]'" in err
    assert "Traceback" not in err


def test_games_without_the_extra_still_play() -> None:
    """The rules and the bots that need no solver do not need OR-Tools."""
    args = ["selfplay", "--game", "battleplan", "--bots", "greedy,random", "--games", "1"]
    code, loaded, _ = _run(args, before="sys.modules['ortools'] = None")
    assert code == 0
    assert not [m for m in loaded if m.startswith(("ortools", "pandas"))]


def test_missing_extra_names_only_optional_modules() -> None:
    err = ModuleNotFoundError("No module named 'ortools'", name="ortools.sat")
    found = missing_extra(err)
    assert isinstance(found, MissingExtraError)
    assert "battlejudge[games]" in str(found)
    assert missing_extra(ModuleNotFoundError("x", name="battlejudge.nothing")) is None
    assert missing_extra(ImportError("cannot import name 'x'")) is None


def test_bench_startup_reports_every_case_against_its_baselines() -> None:
    from battlejudge.bench.startup import STARTUP_CASES

    out = CliRunner().invoke(main.cli, ["bench", "startup", "--runs", "1", "--json"])
    assert out.exit_code == 0, out.output
    rows = {r["name"]: r for r in json.loads(out.output)["rows"]}
    assert list(rows) == ["python (bare)", "every command imported"] + [
        n for n, _, _ in STARTUP_CASES
    ]
    assert rows["every command imported"]["ratio_to_eager_import"] == 1.0
    for name, _, target in STARTUP_CASES:
        assert rows[name]["target_s"] == target
        assert rows[name]["met"] == (rows[name]["median_s"] <= target)
