"""The Force Duel engine: conformance over thousands of seeded games, the described
strategy cards, unit cards, deck exhaustion, hidden information, records."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest
from conformance import check_playout
from force_duel_helpers import act, rigged, small_cards

from battlejudge.engines.force_duel.game import GAME
from battlejudge.engines.force_duel.state import (
    DRAW_RESULT,
    FORCE,
    FORCE_BASE,
    OVER,
    SHUFFLE,
    STRATEGY,
    WEAPON,
    WEAPON_BASE,
    ForceDuelState,
    new_game,
)
from battlejudge.engines.game import CHANCE, IllegalActionError, sample_chance
from battlejudge.engines.records import GameRecord, replay
from battlejudge.engines.runner import play_game
from battlejudge.solver.errors import InputError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "force_duel"
HANDS = (
    ["Bow Bonus", "Bows Only", "Unit Return"],
    ["Two-Card Limit", "Shield Wall", "Reinforcements"],
)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> str:
    return small_cards(tmp_path_factory.mktemp("cards"))


# -- conformance ---------------------------------------------------------------------

CHUNK = 250


@pytest.mark.parametrize("start", range(0, 1000, CHUNK))
def test_conformance_house_set(start: int) -> None:
    outcomes: Counter[int | None] = Counter()
    for seed in range(start, start + CHUNK):
        units = 1 + seed % 7
        state = check_playout(
            lambda u=units: new_game("house", u), ForceDuelState.deserialize, seed, deep_every=13
        )
        assert isinstance(state, ForceDuelState)
        assert state.phase == OVER
        for p in (0, 1):
            assert state.card_count(p) == state.book.deck_size
            assert state.alive[p] + state.graves[p] == units
        outcomes[state.winner] += 1
    assert outcomes[0] and outcomes[1]


@pytest.mark.parametrize("start", range(0, 1000, CHUNK))
def test_conformance_small_set(start: int, small: str) -> None:
    reshuffles = 0
    for seed in range(start, start + CHUNK):
        units = 1 + seed % 9
        state = check_playout(
            lambda u=units: new_game(small, u), ForceDuelState.deserialize, seed, deep_every=5
        )
        assert isinstance(state, ForceDuelState)
        reshuffles += state.reshuffles
        assert state.battles <= state.book.set.rules.max_battles
    assert reshuffles > 0


def test_notation_round_trips_in_random_games() -> None:
    rng = random.Random(5)
    for _ in range(8):
        state = new_game()
        while not state.is_terminal():
            for a in state.legal_actions():
                text = state.action_to_string(a)
                assert state.parse_action(text) == a
                assert state.parse_action("  " + text.upper() + " ") == a
            a = (
                sample_chance(state, rng)
                if state.current_player() == CHANCE
                else rng.choice(state.legal_actions())
            )
            state.apply_action(a)


# -- the battle sequence ------------------------------------------------------------


def test_battle_sequence_and_scoring() -> None:
    # Seed, "Battle": the first card's power plus the extras of the next cards.
    s = rigged(HANDS, (["bow5+1", "bow3+2", "bow2+3"], ["sword7+0", "sword2+3"]))
    assert (s.phase, s.current_player()) == (WEAPON, 0)
    act(s, "weapon bow", "play Unit Return")
    assert (s.phase, s.current_player()) == (STRATEGY, 1)
    act(s, "play Shield Wall")
    assert s.current_player() == CHANCE
    act(s, "p1 draws Ambush", "p2 draws Overwhelm", "sword")
    assert s.phase == FORCE
    act(s, "force 3", "force 2")
    r = s.last
    assert r is not None
    assert r.totals == (5 + 2 + 3, 7 + 3)
    assert r.winner is None and r.lost == (0, 0)  # same points: nobody wins
    assert len(s.decks[0]) == 22 - 3 and len(s.decks[1]) == 22 - 2  # used cards leave
    assert s.attacker == 0  # nobody has won yet: the attacker attacks again (house rule)
    assert sorted(s.hands[0]) == sorted(
        s.book.strategy_of(n, "") for n in ("Bow Bonus", "Bows Only", "Ambush")
    )


def test_winner_attacks_next_and_tie_keeps_last_winner() -> None:
    # Seed, "Battle": the winner attacks next; after a tie, the last winner.
    s = rigged(HANDS, (["bow7+0", "sword2+3", "sword3+2"], ["bow2+3", "bow3+2", "spear2+3"]))
    act(s, "bow", "Unit Return", "Shield Wall", "p1 draws Ambush", "p2 draws Overwhelm", "bow")
    act(s, "1", "1")
    assert s.last is not None and s.last.winner == 0
    assert s.alive == [5, 5]  # p2's Shield Wall: he loses no unit
    assert s.attacker == 0
    # Next battle: sword2+3 (power 2) against bow3+2 with spear: p2 wins.
    act(s, "sword", "Bow Bonus", "Two-Card Limit", "p1 draws Stand Firm", "p2 draws Sword Bonus")
    act(s, "bow", "1", "1")
    assert s.last is not None and s.last.winner == 1 and s.alive == [4, 5]
    assert s.attacker == 1


# -- the strategy cards the seed describes --------------------------------------------


def test_bow_bonus() -> None:
    # Seed, "Strategy cards": 2 extra points if the enemy uses swords and you bows.
    s = rigged(HANDS, (["bow5+1"], ["sword5+1"]))
    act(s, "bow", "Bow Bonus", "Reinforcements", "p1 draws Ambush", "p2 draws Overwhelm")
    act(s, "sword", "1", "1")
    assert s.last is not None and s.last.totals == (5 + 2, 5 + 2)  # p2: Reinforcements
    s = rigged(HANDS, (["bow5+1"], ["spear5+1"]))
    act(s, "bow", "Bow Bonus", "Shield Wall", "p1 draws Ambush", "p2 draws Overwhelm")
    act(s, "spear", "1", "1")
    assert s.last is not None and s.last.totals == (5, 5)  # spears: no bonus


def test_bows_only_forces_the_defender() -> None:
    # Seed: "Your enemy has to use bows in the battle".
    s = rigged(HANDS, (["bow5+1"], ["sword5+1"]))
    act(s, "sword", "Bows Only", "Shield Wall", "p1 draws Ambush", "p2 draws Overwhelm")
    assert s.phase == WEAPON and s.legal_actions() == [s.parse_action("bow")]
    with pytest.raises(IllegalActionError, match="forces the weapon"):
        s.apply_action(WEAPON_BASE + s.book.weapons.index("sword"))
    act(s, "weapon bow", "1", "1")
    assert s.last is not None and s.last.totals == (1, 1)  # sword5+1 fought with bows


def test_bows_only_overrides_the_attackers_weapon() -> None:
    s = rigged((HANDS[1], ["Bows Only", "Ambush", "Overwhelm"]), (["sword6+1"], ["bow6+1"]))
    act(s, "sword", "Shield Wall", "Bows Only", "p1 draws Bow Bonus", "p2 draws Stand Firm")
    assert s.weapons[0] == s.book.weapons.index("bow")
    act(s, "bow", "1", "1")
    assert s.last is not None and s.last.totals == (1, 6)


def test_unit_return() -> None:
    # Seed: "If you win the battle you get one unit back".
    hands = (["Unit Return", "Bows Only", "Ambush"], ["Shield Wall", "Overwhelm", "Stand Firm"])
    s = rigged(hands, (["bow2+3", "bow7+0"], ["bow5+1", "bow2+3"]), attacker=1)
    act(s, "bow", "Stand Firm", "Ambush", "p2 draws Two-Card Limit", "p1 draws Bow Bonus")
    act(s, "bow", "1", "1")
    assert s.alive == [4, 5] and s.graves == [1, 0]
    act(s, "bow", "Shield Wall", "Unit Return", "p2 draws Sword Bonus", "p1 draws Swords Only")
    act(s, "bow", "1", "1")
    assert s.last is not None and s.last.winner == 0 and s.last.recovered == (1, 0)
    assert s.alive == [5, 5] and s.graves == [0, 0]  # p2 shielded, p1 got his unit back


def test_unit_return_without_gravestones_does_nothing() -> None:
    s = rigged(HANDS, (["bow7+0"], ["bow2+3"]))
    act(s, "bow", "Unit Return", "Reinforcements", "p1 draws Ambush", "p2 draws Overwhelm")
    act(s, "bow", "1", "1")
    assert s.last is not None and s.last.winner == 0 and s.last.recovered == (0, 0)
    assert s.alive == [5, 4]


def test_two_card_limit() -> None:
    # Seed: "You force your enemy to use max 2 cards in the battle".
    s = rigged((HANDS[1], HANDS[0]), (["bow5+1"], ["bow5+1"]))
    act(s, "bow", "Two-Card Limit", "Unit Return", "p1 draws Ambush", "p2 draws Overwhelm")
    act(s, "bow", "force 3")
    assert s.legal_actions() == [s.parse_action("1"), s.parse_action("2")]
    with pytest.raises(IllegalActionError, match="limits p2 to 2 cards"):
        s.apply_action(FORCE_BASE + 3)
    with pytest.raises(IllegalActionError):
        s.parse_action("force 3")


# -- simultaneous choices are hidden ------------------------------------------------------


def test_commits_are_hidden_from_the_other_player() -> None:
    views = []
    for card in ("Bow Bonus", "Bows Only"):
        s = rigged(HANDS, (["bow5+1"], ["sword5+1"]))
        act(s, "bow", card)
        views.append((s.information_state_string(0), s.information_state_string(1)))
    assert views[0][1] == views[1][1]  # the defender cannot see the attacker's card
    assert views[0][0] != views[1][0]
    act(s, "Shield Wall", "p1 draws Ambush", "p2 draws Overwhelm")
    assert "strategy p1 Bows Only" in s.information_state_string(1)  # revealed together
    views = []
    for force in ("1", "3"):
        s = rigged(HANDS, (["bow5+1"], ["sword5+1"]))
        act(s, "bow", "Unit Return", "Shield Wall", "p1 draws Ambush", "p2 draws Overwhelm")
        act(s, "sword", force)
        views.append((s.information_state_string(0), s.information_state_string(1)))
    assert views[0][1] == views[1][1]
    assert views[0][0] != views[1][0]


def test_public_action_strings_hide_the_other_players_secrets() -> None:
    s = rigged(HANDS, (["bow5+1"], ["sword5+1"]))
    act(s, "bow")
    play = s.parse_action("Bow Bonus")
    assert s.public_action_string(play, 1) == "p1 puts a strategy card down"
    assert s.public_action_string(play, 0) == "play Bow Bonus"
    act(s, "Bow Bonus", "Shield Wall")
    draw = s.parse_action("p1 draws Ambush")
    assert s.public_action_string(draw, 1) == "p1 draws a strategy card"
    assert s.public_action_string(draw, 0) == "p1 draws Ambush"
    fresh = new_game()
    for _ in range(6):
        fresh.apply_action(fresh.legal_actions()[0])
    assert fresh.public_action_string(fresh.legal_actions()[0], 1) is None  # p1's shuffle


def test_deck_order_is_seen_by_its_owner_only() -> None:
    a = rigged(HANDS, (["bow5+1"], ["sword5+1", "bow2+3"]))
    b = rigged(HANDS, (["bow5+1"], ["bow2+3", "sword5+1"]))
    assert a.information_state_string(0) == b.information_state_string(0)
    assert a.information_state_string(1) != b.information_state_string(1)


# -- unit cards ----------------------------------------------------------------------


def test_unit_card_in_top_three_sets_the_battle_rule() -> None:
    # Seed, "Unit cards": a unit card among the top 3 is placed on the table and says
    # how the next battle is played (house: Cavalry limits both players to 2 cards).
    s = rigged(HANDS, (["bow5+1", "bow3+2", "Cavalry", "bow2+3"], ["sword5+1"]))
    cavalry = s.book.kind_of("Cavalry", "")
    assert s.in_play == [(0, cavalry)]
    assert s.decks[0][:3] == [s.book.kind_of(c, "") for c in ("bow5+1", "bow3+2", "bow2+3")]
    assert s.out[0][cavalry] == 1
    act(s, "bow", "Unit Return", "Shield Wall", "p1 draws Ambush", "p2 draws Overwhelm", "bow")
    assert s.force_choices(0) == (1, 2) and s.force_choices(1) == (1, 2)


def test_unit_cards_of_both_players_cancel() -> None:
    s = rigged(HANDS, (["bow5+1", "Cavalry"], ["Archers", "sword5+1"]))
    assert s.in_play == []
    assert sorted(s.cancelled) == [
        (0, s.book.kind_of("Cavalry", "")),
        (1, s.book.kind_of("Archers", "")),
    ]
    act(s, "sword", "Unit Return", "Shield Wall", "p1 draws Ambush", "p2 draws Overwhelm")
    assert len(s.legal_actions()) == 3  # no Archers rule: any weapon
    act(s, "spear")
    assert s.force_choices(0) == (1, 2, 3)  # no Cavalry rule


def test_unit_card_deeper_than_three_waits() -> None:
    s = rigged(HANDS, (["bow5+1", "bow3+2", "bow2+3", "Knights"], ["sword2+3"]))
    assert s.in_play == []
    act(s, "bow", "Unit Return", "Shield Wall", "p1 draws Ambush", "p2 draws Overwhelm")
    act(s, "sword", "1", "1")
    knights = s.book.kind_of("Knights", "")
    assert s.in_play == [(0, knights)]  # moved up into the top three
    act(s, "bow", "Bow Bonus", "Reinforcements", "p1 draws Stand Firm", "p2 draws Sword Bonus")
    act(s, "sword", "1", "1")
    # bow3+2, Knights (owner +2), Bow Bonus (bow against sword +2)
    assert s.last is not None and s.last.totals[0] == 3 + 2 + 2


def test_two_unit_cards_of_one_player_both_apply() -> None:
    s = rigged(HANDS, (["Cavalry", "Knights", "bow5+1"], ["sword5+1"]))
    assert [k for _, k in s.in_play] == [s.book.kind_of(c, "") for c in ("Cavalry", "Knights")]
    act(s, "bow", "Unit Return", "Shield Wall", "p1 draws Ambush", "p2 draws Overwhelm", "sword")
    assert s.force_choices(1) == (1, 2)
    act(s, "1", "1")
    assert s.last is not None and s.last.totals == (5 + 2, 5)


def test_archers_force_both_weapons() -> None:
    s = rigged(HANDS, (["Archers", "sword5+1"], ["sword5+1"]))
    assert s.legal_actions() == [s.parse_action("bow")]  # binds the attacker at once
    act(s, "bow", "Unit Return", "Shield Wall", "p1 draws Ambush", "p2 draws Overwhelm")
    assert s.legal_actions() == [s.parse_action("bow")]


# -- deck exhaustion, reshuffle, the end ----------------------------------------------


def test_deck_exhaustion_and_reshuffle(small: str) -> None:
    # Seed: when a player's battle cards are all out of the game he loses two units;
    # both decks are reshuffled (even the other player's), and the strategy deck too.
    hands = (["Bow Bonus", "Bows Only", "Unit Return"], ["Two-Card Limit", "Stand Firm", "Ambush"])
    s = rigged(hands, (["sword5+1", "sword5+1", "bow3+2", "bow6-1"], []), cards=small, units=6)
    assert s.in_play == []  # p1's unit cards lie below his battle cards
    act(s, "sword", "Bow Bonus", "Stand Firm", "p1 draws Shield Wall", "p2 draws Decisive Blow")
    act(s, "sword", "3", "1")  # 5+1-1 against 5: a tie, won by p2's Stand Firm
    assert s.last is not None and s.last.winner == 1 and s.alive == [5, 6]
    cavalry, knights = (s.book.kind_of(c, "") for c in ("Cavalry", "Knights"))
    assert s.in_play == [(0, cavalry), (0, knights)]  # moved up, laid out
    # The strategy deck is empty: the played cards make a new one (house rule).
    act(s, "sword", "Ambush", "Bows Only", "p2 draws Stand Firm", "p1 draws Bow Bonus")
    act(s, "bow", "2", "1")  # p1's last battle card
    r = s.last
    assert r is not None and r.exhausted == (0,)
    assert r.lost[0] == 2 + (1 if r.winner == 1 else 0)
    assert s.phase == SHUFFLE and s.current_player() == CHANCE
    assert s.decks == [[], []] and s.pools == [list(s.book.deck)] * 2
    assert s.out == [[0] * s.book.kinds] * 2
    assert sum(s.strat_discard) == 0 and sum(s.strat_deck) == 8 - 6
    assert len(s.hands[0]) == len(s.hands[1]) == 3  # hands are kept
    rng = random.Random(1)
    while s.phase == SHUFFLE:
        s.apply_action(sample_chance(s, rng))
    assert len(s.decks[0]) + len(s.out[0]) and s.phase == WEAPON


def test_game_ends_when_a_player_has_no_units() -> None:
    s = rigged(HANDS, (["bow7+0"], ["bow2+3"]), units=1)
    act(s, "bow", "Unit Return", "Reinforcements", "p1 draws Ambush", "p2 draws Overwhelm")
    act(s, "bow", "1", "1")
    assert s.is_terminal() and s.winner == 0 and s.returns() == [1.0, -1.0]
    assert s.legal_actions() == []


def test_battle_limit_ends_the_game(tmp_path: Path) -> None:
    # House rule: after max_battles the player with more units wins; equal: a draw.
    from force_duel_helpers import SMALL

    path = tmp_path / "short.toml"
    path.write_text(SMALL.replace("max_battles = 30", "max_battles = 1"), encoding="utf-8")
    state, _ = play_game(
        GAME, [GAME.make_bot("random", 1), GAME.make_bot("random", 2)], 3, {"cards": str(path)}
    )
    assert isinstance(state, ForceDuelState)
    assert state.battles == 1 and state.is_terminal()
    a, b = state.alive
    assert state.winner == (DRAW_RESULT if a == b else (0 if a > b else 1))


# -- records, options ------------------------------------------------------------------


def test_records_round_trip_and_replay() -> None:
    bots = [GAME.make_bot("equilibrium", 1), GAME.make_bot("random", 2)]
    state, rec = play_game(GAME, bots, 11, {"cards": "house", "units": "3"})
    text = rec.dumps()
    again = GameRecord.loads(text)
    assert again.dumps() == text
    report = replay(again)
    assert report.sound and report.state.serialize() == state.serialize()


def test_example_game_replays() -> None:
    rec = GameRecord.loads((EXAMPLES / "house-game.fdg").read_text(encoding="utf-8"))
    assert rec.game == "force-duel" and rec.options["cards"] == "house"
    report = replay(rec)
    assert report.sound and report.state.is_terminal()


def test_a_tampered_record_is_caught() -> None:
    text = (EXAMPLES / "house-game.fdg").read_text(encoding="utf-8")
    lines = text.splitlines()
    at = next(
        i for i, ln in enumerate(lines) if ln.endswith(": force 1") or ln.endswith(": force 2")
    )
    lines[at] = lines[at].rsplit(" ", 1)[0] + " 4"
    report = replay(GameRecord.loads("\n".join(lines)))
    assert not report.sound and report.problem is not None
    assert report.problem.kind == "illegal-action" and "force" in report.problem.detail


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"units": "0"}, "option units: '0'"),
        ({"units": "many"}, "option units: 'many'"),
        ({"cards": "/no/such/cards.toml"}, "cannot read card set '/no/such/cards.toml'"),
    ],
)
def test_bad_options(options: dict[str, str], message: str) -> None:
    with pytest.raises(InputError, match=message):
        GAME.new_game(options)


def test_bots_play_whole_games(small: str) -> None:
    for seed in range(6):
        names = ["equilibrium", "random"] if seed % 2 else ["random", "equilibrium"]
        bots = [GAME.make_bot(n, seed) for n in names]
        state, rec = play_game(GAME, bots, seed, {"cards": small if seed % 3 else "house"})
        assert state.is_terminal() and rec.result in ("p1", "p2", "draw")
