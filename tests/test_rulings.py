"""docs/rulings.md is the project's own rulings page (issue 21): numbered as the code cites
it, every citation names a ruling that exists, and nothing in it (or in the README) links
outside the repository. The contested house rules are decided once: the engines' defaults
are the ones the page names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from battlejudge.engines.battleline.config import RulesConfig
from battlejudge.engines.battleplan.state import new_game as battleplan_game

ROOT = Path(__file__).resolve().parent.parent
RULINGS = ROOT / "docs" / "rulings.md"
CODE = ["solver", "proofs", "engines", "apps", "cli", "examples", "docs"]


def numbered() -> set[str]:
    """The ruling numbers the page defines: ``1.``-``17.`` and ``**BP1.**``, ``**LB1.**``."""
    text = RULINGS.read_text(encoding="utf-8")
    found = set(re.findall(r"^(\d+)\. \*\*", text, re.MULTILINE))
    found |= set(re.findall(r"^- \*\*((?:BP|LB)\d+)\.\*\*", text, re.MULTILINE))
    return found


def citations() -> list[tuple[str, str]]:
    """Every ``docs/rulings.md N`` citation (lists and ranges too) in the code and docs."""
    out = []
    for folder in CODE:
        for path in (ROOT / folder).rglob("*"):
            if path.suffix not in (".py", ".md", ".json", ".toml") or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8")
            for m in re.finditer(r"rulings\.md,? ((?:(?:BP|LB)?\d+(?:-\d+)?(?:, | and )?)+)", text):
                for part in re.split(r", | and ", m.group(1)):
                    if "-" in part:
                        lo, hi = part.split("-")
                        out += [(str(path), str(n)) for n in range(int(lo), int(hi) + 1)]
                    elif part:
                        out.append((str(path), part))
    return out


def test_rulings_are_numbered_in_order() -> None:
    have = numbered()
    plain = sorted(int(n) for n in have if n.isdigit())
    assert plain == list(range(1, 18))
    assert {f"BP{i}" for i in range(1, 9)} <= have and {f"LB{i}" for i in range(1, 7)} <= have


def test_every_citation_names_a_ruling() -> None:
    cites = citations()
    assert len(cites) > 50
    have = numbered()
    bad = [f"{path}: ruling {n}" for path, n in cites if n not in have]
    assert bad == []


@pytest.mark.parametrize("page", ["docs/rulings.md", "README.md"])
def test_no_link_leaves_the_repository(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)]+)\)", text):
        if page == "README.md" and target.startswith("https://pypi.org/"):
            continue  # where to install a dependency from, not a rules text
        assert "://" not in target, target
        assert (ROOT / page).parent.joinpath(target.split("#")[0]).resolve().is_relative_to(ROOT)
        assert (ROOT / page).parent.joinpath(target.split("#")[0]).exists(), target
    assert "RULINGS.md" not in text and "../shared" not in text


def test_the_contested_house_rules_are_decided_once() -> None:
    """The defaults the page names (rulings 10, 17, BP8) are the engines' defaults."""
    text = RULINGS.read_text(encoding="utf-8")
    assert "**Setting `environment_removable`** (default `false`)" in text
    assert "**Setting `stalemate`** (default `dead`)" in text
    assert "`-o friendly_fire=any` (the default is `with-enemy`)" in text
    config = RulesConfig()
    assert config.environment_removable is False and config.stalemate == "dead"
    assert RulesConfig.parse("") == config
    assert battleplan_game().friendly_fire == "with-enemy"
