"""The lean install (``pip install .``, no extras) never needs numpy (issue 37: numpy was a
direct dependency, 73 MB of a 173 MB install, used only by the guide's sentence vectors,
the RL tensors and bench leaf, whose extras bring it).

A subprocess hides every extra's packages (numpy included) as a lean install would lack
them, then imports every module of the package: a module that fails for want of numpy,
or that imports it anyway, fails the test. Modules that need another extra (OR-Tools,
OpenSpiel, wordllama, ...) are left out, as the lean install leaves them."""

from __future__ import annotations

import json
import subprocess
import sys

# what pyproject's extras bring that the lean install does not (numpy and what needs it)
EXTRAS_ONLY = [
    "numpy", "ortools", "pandas", "scipy", "pyspiel", "open_spiel", "pettingzoo",
    "gymnasium", "wordllama", "safetensors", "tokenizers", "bm25s", "snowballstemmer",
    "Stemmer", "rapidfuzz", "wordfreq", "msgpack", "psycopg", "pgserver", "ray",
    "playwright", "mkdocs", "hypothesis", "pytest",
]  # fmt: skip

RL_EXTRA = (
    "battlejudge.openspiel",
    "battlejudge.pettingzoo",
    "battlejudge.apps.rl.",
    "battlejudge.bench.rl",
    "battlejudge.examples.cfr_force_duel",
    "battlejudge.examples.openspiel_vs_heuristic",
)
"""The modules of the ``rl`` extra (OpenSpiel and PettingZoo, which bring numpy): they
import numpy before the toolkits, so they fail on numpy here."""

PROBE = r"""
import importlib, importlib.abc, json, pkgutil, sys
hidden = set(json.loads(sys.argv[1]))
class Lean(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in hidden:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Lean())
import battlejudge
needs_numpy, other_extra, imported = [], [], 0
for info in pkgutil.walk_packages(battlejudge.__path__, "battlejudge."):
    try:
        importlib.import_module(info.name)
        imported += 1
    except ModuleNotFoundError as e:
        top = (e.name or "").split(".")[0]
        (needs_numpy if top == "numpy" else other_extra).append(f"{info.name}: {top}")
print(json.dumps({"numpy": needs_numpy, "other": other_extra, "imported": imported,
                  "loaded": "numpy" in sys.modules}))
"""


def _lean_imports(hidden: list[str]) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(hidden)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_no_module_of_the_lean_install_needs_numpy() -> None:
    found = _lean_imports(EXTRAS_ONLY)
    needs = [entry for entry in found["numpy"] if not entry.startswith(RL_EXTRA)]  # type: ignore[union-attr]
    assert needs == []
    assert found["loaded"] is False
    assert isinstance(found["imported"], int) and found["imported"] > 150  # the probe ran


def test_the_probe_sees_a_module_that_needs_numpy() -> None:
    # hiding only numpy, a module that needs it is named: the RL adapters
    found = _lean_imports(["numpy"])
    named = found["numpy"]
    assert isinstance(named, list)
    assert any(entry.startswith("battlejudge.apps.rl.") for entry in named)
