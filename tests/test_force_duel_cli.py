"""Force Duel card sets (the house set, validation errors naming the key, the schema)
and the ``force-duel`` commands, through click's CliRunner."""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from force_duel_helpers import SMALL

from battlejudge.cli.main import cli
from battlejudge.engines.force_duel.cards import (
    CountBonus,
    ForceWeapon,
    MaxCards,
    RecoverUnits,
    WeaponBonus,
    card_set_schema,
    load_book,
)
from battlejudge.engines.force_duel.position import Battle, read_position
from battlejudge.solver.force_duel import solve_force

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "force_duel"
MIXED = str(EXAMPLES / "position-mixed.json")
SURE = str(EXAMPLES / "position-sure-win.json")


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


# -- the house set ---------------------------------------------------------------------


def test_house_set_implements_the_described_cards_as_written() -> None:
    # Seed, "Strategy cards": the four cards the text describes.
    book = load_book("house")
    cards = {s.name: s for s in book.strategy}
    assert len(cards) == 15  # "there's 15 different strategy cards"
    assert cards["Bow Bonus"].effects == [
        WeaponBonus(kind="weapon_bonus", points=2, mine="bow", theirs="sword")
    ]
    assert cards["Bows Only"].effects == [ForceWeapon(kind="force_weapon", weapon="bow")]
    assert cards["Unit Return"].effects == [RecoverUnits(kind="recover_units", n=1)]
    assert cards["Two-Card Limit"].effects == [MaxCards(kind="max_cards", n=2)]
    described = {"Bow Bonus", "Bows Only", "Unit Return", "Two-Card Limit"}
    for name, card in cards.items():
        assert card.house_rule == (name not in described), name
    assert all(u.house_rule for u in book.units)
    assert len(book.set.house_rules) >= 10
    assert {"sword", "bow"} <= set(book.weapons)  # the text's weapons
    assert any(isinstance(e, CountBonus) for s in book.strategy for e in s.effects)


def test_example_house_set_is_the_shipped_one() -> None:
    shipped = (ROOT / "engines" / "force_duel" / "house.toml").read_text(encoding="utf-8")
    assert (EXAMPLES / "house.toml").read_text(encoding="utf-8") == shipped


def test_schema_command_and_published_schema() -> None:
    r = run("force-duel", "schema")
    assert r.exit_code == 0, r.output
    published = json.loads((ROOT / "docs" / "force-duel-cards.schema.json").read_text())
    assert json.loads(r.output) == published == card_set_schema()
    r = run("force-duel", "schema", "position")
    assert r.exit_code == 0 and "mine" in json.loads(r.output)["properties"]


# -- bad card sets ----------------------------------------------------------------------

BAD_SETS = [
    (
        SMALL.replace(
            'n = 2 }]\n[[strategy]]\nname = "Stand', 'n = 5 }]\n[[strategy]]\nname = "Stand'
        ),
        "cards.strategy[3].effects[0].n: Input should be less than or equal to 3",
    ),
    (
        SMALL.replace('weapon = "bow"\npower = 3', 'weapon = "axe"\npower = 3'),
        "cards.battle[1].weapon: unknown weapon 'axe'",
    ),
    (
        SMALL.replace('kind = "shield"', 'kind = "teleport"'),
        "cards.strategy[5].effects[0]: Input tag 'teleport'",
    ),
    (SMALL.replace('weapons = ["sword", "bow"]', ""), "cards.weapons: Field required"),
    (
        SMALL.replace('name = "Ambush"', 'name = "bow bonus"'),
        "cards.strategy[6].name: 'bow bonus' is already the name of strategy[0]",
    ),
    (
        SMALL.replace("max_battles = 30", "max_battles = 30\ncolour = 1"),
        "cards.rules.colour: Extra inputs are not permitted",
    ),
    (
        SMALL.replace("power = 6", "power = -6"),
        "cards.battle[2].power: Input should be greater than or equal to 0",
    ),
    (
        SMALL.split('[[strategy]]\nname = "Shield Wall"')[0],
        "cards.strategy: at least 8 strategy cards",
    ),
    (
        SMALL.replace('who = "both"', 'who = "everyone"', 1),
        "cards.units[0].who: Input should be 'owner' or 'both'",
    ),
    ("name = [", "not valid TOML"),
]


@pytest.mark.parametrize(("text", "message"), BAD_SETS)
def test_bad_card_set_exits_2_naming_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    r = run("force-duel", "ask", "force", SURE, "--cards", str(path))
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert "Traceback" not in r.output


# -- ask ---------------------------------------------------------------------------------


def test_ask_force_text_and_json() -> None:
    r = run("force-duel", "ask", "force", MIXED)
    assert r.exit_code == 0, r.output
    assert "Best Force choice: Force 1: 13/22, Force 2: 9/22" in r.output
    assert "45/154" in r.output
    r = run("force-duel", "ask", "force", MIXED, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    expected = solve_force(Battle(read_position(MIXED), load_book("house")).question())
    assert Fraction(out["value"]) == expected.value
    assert {k: Fraction(v) for k, v in out["strategy"].items()} == {
        str(k): p for k, p in expected.strategy
    }
    assert sum(Fraction(v) for v in out["strategy"].values()) == 1
    assert abs(out["lp"]["value"] - float(expected.value)) < 1e-7
    assert out["my_choices"] == [1, 2, 3] and out["weapons"] == {"p1": "spear", "p2": "bow"}


def test_ask_sure_win_valid_and_invalid() -> None:
    r = run("force-duel", "ask", "sure-win", SURE)
    assert r.exit_code == 0, r.output
    assert "VALID: Force 1 wins this battle" in r.output
    r = run("force-duel", "ask", "sure-win", MIXED, "--json")
    assert r.exit_code == 1, r.output
    out = json.loads(r.output)
    assert out["verdict"] == "invalid" and out["choice"] is None
    assert [c["force"] for c in out["counters"]] == [1, 2, 3]
    for c in out["counters"]:
        assert c["replayed"] == {"my_total": c["my_total"], "their_total": c["their_total"]}
        assert c["sentence"].startswith(f"Force {c['force']} is not sure")


def test_card_set_is_found_next_to_the_position(tmp_path: Path) -> None:
    (tmp_path / "small.toml").write_text(SMALL, encoding="utf-8")
    pos = {
        "cards": "small.toml",
        "player": "p2",
        "weapons": {"p1": "sword", "p2": "bow"},
        "mine": ["bow6-1", "bow3+2"],
        "theirs": ["sword5+1", "sword5+1"],
    }
    (tmp_path / "pos.json").write_text(json.dumps(pos), encoding="utf-8")
    r = run("force-duel", "ask", "force", str(tmp_path / "pos.json"), "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["cards"] == "small" and out["my_choices"] == [1, 2]
    # p2: bow6-1 alone (6) ties sword5+1 sword5+1 (5+1); with bow3+2 (6+2) he wins
    # against anything p1 shows.
    assert out["value"] == "1" and out["strategy"] == {"1": "0", "2": "1"}
    assert out["matrix"]["win"] == [["1", "0"], ["1", "1"]]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"weapons": {"p1": "spear"}}, "weapons.p2: Field required"),
        ({"weapons": {"p1": "axe", "p2": "bow"}}, "weapons.p1: unknown weapon 'axe'"),
        ({"mine": ["bow7+0", "bow9+9"]}, "mine[1]: unknown card 'bow9+9'"),
        ({"mine": ["Cavalry"]}, "mine[0]: 'Cavalry' is a unit card"),
        ({"theirs": ["sword7+0", "sword7+0"]}, "theirs: 2 x sword7+0, but a deck holds 1"),
        ({"strategy": {"p1": "Bows Only"}}, "weapons.p2: 'bow', but a card in play forces"),
        ({"strategy": {"p1": "Bow Blast"}}, "strategy.p1: unknown strategy card 'Bow Blast'"),
        ({"units": [{"owner": "p3", "card": "Cavalry"}]}, "units[0].owner: Input should be"),
        ({"player": None}, "player: Input should be 'p1' or 'p2'"),
    ],
)
def test_bad_position_exits_2_naming_the_key(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    data = json.loads(Path(SURE).read_text(encoding="utf-8"))
    data.update(change)
    if change.get("strategy", {}) == {"p1": "Bows Only"}:
        data["weapons"] = {"p1": "bow", "p2": "bow"}
        data["strategy"] = {"p1": "Swords Only"}
        message = "weapons.p2: 'bow', but a card in play forces 'sword'"
    path = tmp_path / "pos.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    r = run("force-duel", "ask", "force", str(path))
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert "Traceback" not in r.output


def test_unreadable_position_exits_2(tmp_path: Path) -> None:
    r = run("force-duel", "ask", "force", str(tmp_path / "missing.json"))
    assert r.exit_code == 2 and "missing.json" in r.output
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    r = run("force-duel", "ask", "sure-win", str(tmp_path / "bad.json"))
    assert r.exit_code == 2 and "not JSON" in r.output


def test_examples_folder_is_complete(tmp_path: Path) -> None:
    # Every example position answers; copies elsewhere still find the house set.
    for path in sorted(EXAMPLES.glob("position-*.json")):
        copy = tmp_path / path.name
        shutil.copy(path, copy)
        for question in ("force", "sure-win"):
            r = run("force-duel", "ask", question, str(copy), "--json")
            assert r.exit_code in (0, 1), (path, r.output)
