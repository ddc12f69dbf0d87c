"""Rule scenarios for the Battle Line engine: every tactic and every ruling.

Sources: the rulebook (shared/seeds/000_0870e4ed0b9070e4.txt: Troop Cards, Flags,
Tactics Cards, Game End, Advanced Rule) and docs/rulings.md, Battle Line rulings
1-16. Each test cites the rule it checks. Positions are built with
``battleline_helpers.build`` (flags 1-9 as in the notation; every undealt card lies in
a known deck order, so no chance node is involved).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Literal

import pytest
from battleline_helpers import act, build, claims_offered, environment, flag, legal, names, side

from battlejudge.engines.battleline.actions import CLAIM, DISCARD, Action
from battlejudge.engines.battleline.actions import DESERTER as DESERTER_KIND
from battlejudge.engines.battleline.cards import (
    ALEXANDER,
    CAVALRY,
    DARIUS,
    DESERTER,
    FOG,
    MUD,
    REDEPLOY,
    SCOUT,
    SHIELD,
    TRAITOR,
    card_name,
    display_name,
    parse_card,
)
from battlejudge.engines.battleline.config import RulesConfig
from battlejudge.engines.battleline.state import (
    CLAIM_END,
    CLAIM_START,
    DRAW_GAME,
    DRAW_PHASE,
    MUD_DISCARD,
    NORTH,
    OVER,
    PLAY_PHASE,
    SCOUT_DRAW,
    SCOUT_RETURN,
    SOUTH,
    BattleLineState,
    new_game,
)
from battlejudge.engines.game import CHANCE, TERMINAL, IllegalActionError

# A complete side that any Wedge or Phalanx beats and that no fourth card (under Mud)
# lifts above a Host: mixed colors, no run, no pair (Y2 G5 B9, sum 16).
WEAK_SOUTH = "Y2 G5 B9"


def test_alexander_is_a_wild_leader() -> None:
    # Rulebook, Tactics Cards (Leader): any color and value, chosen when the flag is
    # resolved; docs/rulings.md 2: each side takes its best formation.
    s = build(
        {1: {"north": "R9:1 R10:3", "south": "Y10:2 G10:4 P10:6"}},
        hands={"north": "alexander R1 R2 O1 O2 Y1 Y3", "south": "B1 B2 B3 B4 B5 B6 B7"},
    )
    assert s.phase == PLAY_PHASE
    act(s, "alexander@1")
    assert side(s, 1, NORTH) == ["R9", "R10", "alexander"]
    assert s.tactics_played == [1, 0]
    proof = s.judge_claim(1, NORTH)
    assert proof.valid
    assert proof.mine.name == "wedge" and proof.mine.total == 27
    assert proof.mine.wild_choices() == {"alexander": "R8"}
    # Wedge 27 beats the complete Phalanx 30: the claim is offered after playing.
    assert s.phase == CLAIM_END and claims_offered(s) == {1}
    act(s, "claim 1")
    assert flag(s, 1).claimed_by == NORTH


def test_darius_is_a_wild_leader() -> None:
    # Rulebook, Tactics Cards (Leader); docs/rulings.md 2. Darius completes a Phalanx of 7s
    # (21), which beats South's complete Battalion Order (B9 B8 B2 = 19).
    s = build(
        {2: {"north": "Y7:1 G7:3", "south": "B9:2 B8:4 B2:6"}},
        hands={"north": "darius R1 R2 O1 O2 Y1 Y3", "south": "P1 P2 P3 P4 P5 P6 P10"},
    )
    act(s, "darius@2")
    proof = s.judge_claim(2, NORTH)
    assert proof.valid and proof.mine.name == "phalanx" and proof.mine.total == 21
    assert proof.mine.wild_choices()["darius"].endswith("7")
    assert claims_offered(s) == {2}


def test_formation_ranks_sums_and_no_wrap_around() -> None:
    # docs/rulings.md 1 and rulebook (Formations): Wedge > Phalanx > Battalion Order >
    # Skirmish Line > Host; same category: higher sum; 9-10-1 is no run.
    s = build(
        {
            1: {"north": "R9 R10 R1", "south": "O2 Y2 G2"},  # Battalion 20 < Phalanx 6
            2: {"north": "B5 B7 B9", "south": "P1 P4 P6"},  # Battalion 21 > Battalion 11
            3: {"north": "Y4 O5 G6", "south": "O10 P9 Y7"},  # Skirmish 15 > Host 26
            4: {"north": "R3 R4 R5", "south": "Y8 R8 G8"},  # Wedge 12 > Phalanx 24
        },
        hands={"north": "R2 R6 R7 O1 O3 O4 O6", "south": "Y1 Y3 Y5 Y6 G1 G3 G4"},
        settle=False,
    )
    kinds = [s.judge_claim(n, NORTH).mine.name for n in range(1, 5)]
    assert kinds == ["battalion", "battalion", "skirmish", "wedge"]
    assert s.judge_claim(1, NORTH).mine.total == 20
    assert claims_offered(s) == {2, 3, 4}
    assert s.judge_claim(1, SOUTH).valid and s.judge_claim(1, SOUTH).mine.name == "phalanx"


def test_wild_cards_may_copy_visible_troops() -> None:
    # docs/rulings.md 2: each side takes its best formation independently, and a wild card
    # may take the identity of a troop visible elsewhere (R8 lies at flag 2, R10 at flag
    # 1): Alexander as R8 gives Wedge 27; Darius as a 10 gives South's Phalanx 30.
    s = build(
        {
            1: {"north": "R9 R10 alexander", "south": "Y10 G10 darius"},
            2: {"south": "R8"},
        },
        hands={"north": "R1 R2 O1 O2 O3 O4 O5", "south": "B1 B2 B3 B4 B5 B6 B7"},
        settle=False,
    )
    proof = s.judge_claim(1, NORTH)
    assert proof.valid and proof.mine.wild_choices() == {"alexander": "R8"}
    theirs = s.judge_claim(1, SOUTH)
    assert theirs.mine.name == "phalanx" and theirs.mine.total == 30
    assert claims_offered(s) == {1}


def test_second_leader_stays_in_hand() -> None:
    # docs/rulings.md 3 and rulebook (Leader): one Leader per player on the whole line; a
    # second Leader "remains unplayable in the player's hand until the end of the game".
    s = build(
        hands={
            "north": "alexander darius R1 R2 R3 O1 O2",
            "south": "cavalry deserter Y1 Y2 Y3 G1 G2",
        }
    )
    assert "darius@3" in legal(s)  # before any Leader is out, either one may go
    act(s, "alexander@1", "draw troop")
    act(s, "cavalry@2", "draw troop")
    # North is not ahead in tactics (1 against 1): only the Leader rule stops Darius.
    assert s.to_move == NORTH and s.can_play_tactic(NORTH)
    assert not any(a.card == DARIUS for a in s.legal_actions())
    with pytest.raises(IllegalActionError):
        act(s, "darius@3")
    act(s, "R1@4", "draw troop")
    # South deserts Alexander: Darius still stays in hand (until the end of the game).
    act(s, "deserter alexander@1", "draw troop")
    assert ALEXANDER in s.discards[NORTH]
    assert s.to_move == NORTH and s.can_play_tactic(NORTH)
    assert DARIUS in s.hands[NORTH]
    assert not any(a.card == DARIUS for a in s.legal_actions())


def test_second_leader_unplayable_in_a_position_with_the_first_discarded() -> None:
    # docs/rulings.md 3 and rulebook (Leader): the second Leader stays unplayable "until the
    # end of the game". A position whose North discard pile holds Alexander (deserted or
    # redeployed away: a Leader only reaches its owner's pile once played) must not let
    # North play Darius, as the same game played move by move does not.
    s = build(
        hands={"north": "darius R1 R2 R3 O1 O2 O3", "south": "Y1 Y2 Y3 Y4 Y5 Y6 Y7"},
        discards={"north": "alexander", "south": "deserter"},
    )
    assert s.can_play_tactic(NORTH)
    assert not any(a.card == DARIUS for a in s.legal_actions())


def test_companion_cavalry_is_any_color_eight() -> None:
    # Rulebook (Companion Cavalry): a troop of value 8, color chosen when resolved.
    # R9 R10 + Cavalry = Wedge 27 (cavalry as R8), beating a complete Phalanx 30.
    s = build(
        {1: {"north": "R9:1 R10:3", "south": "Y10:2 G10:4 P10:6"}},
        hands={"north": "cavalry R1 R2 O1 O2 Y1 Y3", "south": "B1 B2 B3 B4 B5 B6 B7"},
    )
    act(s, "cavalry@1")
    proof = s.judge_claim(1, NORTH)
    assert proof.valid and proof.mine.name == "wedge" and proof.mine.total == 27
    assert proof.mine.wild_choices() == {"cavalry": "R8"}
    assert claims_offered(s) == {1}
    # Its value is fixed: B5 B6 + Cavalry is no Wedge (a Leader would make B4-B6 or
    # B5-B7) but Battalion Order 19, which South's Phalanx of 6s beats.
    s = build(
        {2: {"north": "B5:1 B6:3", "south": "R6:2 O6:4 Y6:6"}},
        hands={"north": "cavalry R1 R2 O1 O2 Y1 Y3", "south": "G1 G2 G3 P1 P2 P3 P4"},
    )
    act(s, "cavalry@2")
    proof = s.judge_claim(2, NORTH)
    assert not proof.valid
    assert proof.mine.name == "battalion" and proof.mine.total == 19
    assert claims_offered(s) == set()
    assert s.judge_claim(2, SOUTH).valid


def test_shield_bearers_value_at_most_three_in_a_slot() -> None:
    # Rulebook (Shield Bearers): any color, value not larger than 3, played like a
    # troop into a slot. G4 G5 + Shield = Wedge G3-G5 (12), beating a Host.
    s = build(
        {1: {"north": "G4:1 G5:3", "south": "R9:2 R10:4 O10:6"}},
        hands={"north": "shield R1 R2 O1 O2 Y1 Y3", "south": "B1 B2 B3 B4 B5 B6 B7"},
    )
    act(s, "shield@1")
    assert side(s, 1, NORTH) == ["G4", "G5", "shield"]
    assert flag(s, 1).sides[NORTH][-1].turn == s.turn
    assert not flag(s, 1).open_slot(NORTH)  # the slot is taken: the side is full
    proof = s.judge_claim(1, NORTH)
    assert proof.valid and proof.mine.name == "wedge" and proof.mine.total == 12
    assert proof.mine.wild_choices() == {"shield": "G3"}
    assert claims_offered(s) == {1}
    # P5 P6 + Shield: the wedge would need a 4 or a 7, both above 3: Battalion 14.
    s = build(
        {2: {"north": "P5:1 P6:3", "south": "R9:2 O9:4 Y9:6"}},
        hands={"north": "shield R1 R2 O1 O2 Y1 Y3", "south": "B1 B2 B3 B4 B5 B6 B7"},
    )
    act(s, "shield@2")
    proof = s.judge_claim(2, NORTH)
    assert not proof.valid and proof.mine.name == "battalion" and proof.mine.total == 14


def test_fog_decides_by_sum_only() -> None:
    # Rulebook (Fog) and docs/rulings.md 8: with Fog only the total counts. North's Wedge
    # R1-R3 (6) beats South's Host 29, until South plays Fog at that complete flag.
    s = build(
        {1: {"north": "R1:2 R2:4 R3:6", "south": "P10:1 Y10:3 G9:5"}},
        to_move="south",
        hands={"north": "O1 O2 O3 O4 O5 O6 O7", "south": "fog B1 B2 B3 B4 B5 B6"},
    )
    assert not s.judge_claim(1, SOUTH).valid
    act(s, "fog@1")
    assert environment(s, 1) == ["fog"]
    assert flag(s, 1).environment[0].owner == SOUTH
    q = s.claim_question(1, SOUTH)
    assert q.fog and not q.mud
    assert s.phase == CLAIM_END and claims_offered(s) == {1}
    act(s, "claim 1")
    assert flag(s, 1).claimed_by == SOUTH


def test_mud_on_a_full_flag_needs_four_cards() -> None:
    # Rulebook (Mud); docs/rulings.md 4 and 8: Mud may go to any unclaimed flag, even one with
    # complete 3-card formations, which then become incomplete.
    s = build(
        {1: {"north": "R8:1 R9:3 R10:5", "south": WEAK_SOUTH}},
        to_move="south",
        hands={"north": "R7 O1 O2 O3 O4 O5 O6", "south": "mud B1 B2 B3 P1 P2 P3"},
    )
    assert "mud@1" in legal(s)
    act(s, "mud@1")
    assert flag(s, 1).size == 4
    assert flag(s, 1).open_slot(NORTH) and flag(s, 1).open_slot(SOUTH)
    assert claims_offered(s) == set()
    with pytest.raises(IllegalActionError, match="3 of 4 cards"):
        s.judge_claim(1, NORTH)
    act(s, "draw troop")
    assert s.to_move == NORTH and s.phase == PLAY_PHASE  # no claim at the start
    assert "R7@1" in legal(s)
    act(s, "R7@1")
    q = s.claim_question(1, NORTH)
    assert q.mud and len(q.mine) == 4 and len(q.theirs) == 3
    assert s.judge_claim(1, NORTH).mine.name == "wedge"
    assert claims_offered(s) == {1}


def test_fog_and_mud_together_compare_four_card_sums() -> None:
    # docs/rulings.md 8: Fog and Mud together: 4-card sums. North's Wedge R1-R4 (10) loses to
    # South's four-card total 21 (a Host without Fog).
    s = build(
        {
            3: {
                "north": "R1:2 R2:4 R3:6 R4:8",
                "south": "Y9:1 G5:3 B4:5 P3:7",
                "env": "mud:south:9 fog:north:10",
            }
        },
        to_move="south",
        hands={"north": "O1 O2 O3 O4 O5 O6 O7", "south": "B1 B2 B3 P1 P2 P4 P5"},
        settle=False,
    )
    proof = s.judge_claim(3, SOUTH)
    assert proof.valid and proof.mine.total == 21 and proof.mine.fog
    assert claims_offered(s) == {3}


def test_scout_draws_three_returns_two_on_top() -> None:
    # Rulebook (Scout); docs/rulings.md 13: draw three in total from one or both decks, then
    # put two cards from the hand back on top of their decks; the next draw from that
    # deck gives them back.
    s = build(
        hands={"north": "scout R1 R2 R3 R4 R5 R6", "south": "O1 O2 O3 O4 O5 O6 O7"},
        troop_deck="Y1 Y2 Y3",
        tactics_deck="fog mud",
    )
    act(s, "scout")
    assert s.phase == SCOUT_DRAW and legal(s) == {"draw troop", "draw tactics"}
    assert s.discards[NORTH] == [SCOUT] and s.tactics_played == [1, 0]
    act(s, "draw troop", "draw tactics", "draw troop")
    assert s.phase == SCOUT_RETURN
    assert sorted(names(s.hands[NORTH])) == sorted(
        ["R1", "R2", "R3", "R4", "R5", "R6", "Y1", "fog", "Y2"]
    )
    assert legal(s) == {f"return {card_name(c)}" for c in s.hands[NORTH]}
    act(s, "return R1", "return fog")
    # Hand back at 7: no draw; South's turn.
    assert len(s.hands[NORTH]) == 7 and s.to_move == SOUTH
    assert "R1" not in names(s.hands[NORTH]) and "fog" not in names(s.hands[NORTH])
    # Face down: only the scouting player knows the returned cards.
    assert s.to_dict(viewer=NORTH)["known_top"]["troop"][-1] == "R1"
    assert s.to_dict(viewer=SOUTH)["known_top"]["troop"][-1] == "?"
    act(s, "O1@1", "draw troop")
    assert s.hands[SOUTH][-1] == parse_card("R1")
    act(s, "R2@2", "draw tactics")
    assert s.hands[NORTH][-1] == FOG
    s.card_count()


def test_scout_returns_are_told_to_the_other_player_by_deck_only() -> None:
    # Rulebook (Scout): the two cards go back face down; the other player sees which deck
    # each goes on, never the card (the web tables print "return troop" the same way).
    s = build(
        hands={"north": "scout R1 R2 R3 R4 R5 R6", "south": "O1 O2 O3 O4 O5 O6 O7"},
        troop_deck="Y1 Y2 Y3",
        tactics_deck="fog mud",
    )
    act(s, "scout", "draw troop", "draw tactics", "draw troop")
    for text, deck in (("return R1", "troop"), ("return fog", "tactics")):
        action = s.parse_action(text)
        assert s.public_action_string(action, NORTH) == text
        assert s.public_action_string(action, SOUTH) == f"return {deck}"
        act(s, text)


def test_scout_two_returns_to_one_deck_come_back_last_returned_first() -> None:
    # Rulebook (Scout): the returned cards lie on top of their deck; the player returns
    # them one after the other, the last one returned is the top card.
    s = build(
        hands={"north": "scout R1 R2 R3 R4 R5 R6", "south": "O1 O2 O3 O4 O5 O6 O7"},
        troop_deck="Y1 Y2 Y3 Y4",
    )
    act(s, "scout", "draw troop", "draw troop", "draw troop", "return R1", "return R2")
    act(s, "O1@1", "draw troop")
    assert s.hands[SOUTH][-1] == parse_card("R2")
    act(s, "R3@2", "draw troop")
    assert s.hands[NORTH][-1] == parse_card("R1")
    act(s, "O2@1", "draw troop")
    assert s.hands[SOUTH][-1] == parse_card("Y4")


def test_scout_playable_with_empty_decks() -> None:
    # docs/rulings.md 13: Scout may be played whatever is left in the decks: with both decks
    # empty it draws nothing and still returns two cards.
    s = build(
        hands={
            "north": "scout alexander cavalry shield fog mud R1",
            "south": "darius redeploy deserter traitor O1 O2 O3",
        },
        rest="discards",
        tactics_played={"north": 0, "south": 0},
    )
    assert s.deck_size(0) == 0 and s.deck_size(1) == 0
    assert "scout" in legal(s)
    act(s, "scout")
    assert s.phase == SCOUT_RETURN
    act(s, "return R1", "return fog")
    # The two returned cards are the decks now; the end-of-turn draw takes one back.
    assert s.deck_size(0) == 1 and s.deck_size(1) == 1
    assert s.phase == DRAW_PHASE and len(s.hands[NORTH]) == 4
    act(s, "draw troop")
    assert s.hands[NORTH][-1] == parse_card("R1") and s.to_move == SOUTH


def test_scout_with_one_card_left_draws_one() -> None:
    # docs/rulings.md 13: "draw up to three in total": one card left, one draw, two returns.
    s = build(
        hands={
            "north": "scout alexander cavalry shield fog R1 R2",
            "south": "darius redeploy deserter traitor O1 O2 O3",
        },
        tactics_deck="mud",
        rest="discards",
        tactics_played={"north": 0, "south": 0},
    )
    act(s, "scout")
    assert legal(s) == {"draw tactics"}
    act(s, "draw tactics")
    assert s.phase == SCOUT_RETURN and MUD in s.hands[NORTH]
    act(s, "return mud", "return R2")
    assert len(s.hands[NORTH]) == 5


def test_redeploy_moves_own_card_or_discards_it() -> None:
    # Rulebook (Redeploy); docs/rulings.md 9: one of the player's own cards (troop or tactic)
    # from an unclaimed flag to another open slot at an unclaimed flag, or discarded.
    s = build(
        {
            1: {"north": "R5 R6", "south": "O1"},
            3: {"north": "G2", "south": "B8 B9 B10", "claimed": "south"},
            4: {"north": "P1 P2 P3"},
            6: {"north": "cavalry"},
        },
        hands={"north": "redeploy R1 R2 R3 O2 O3 O4", "south": "Y1 Y2 Y3 Y4 Y5 Y6 Y7"},
        discards={"south": "scout"},
    )
    options = legal(s)
    assert {"redeploy R5@1>2", "redeploy R5@1>5", "redeploy R5@1>discard"} <= options
    assert "redeploy cavalry@6>2" in options  # a morale tactic may be redeployed
    assert "redeploy O1@1>2" not in options  # not the opponent's card
    assert "redeploy G2@3>2" not in options  # not from a claimed flag
    assert "redeploy R5@1>3" not in options  # not into a claimed flag
    assert "redeploy R5@1>4" not in options  # flag 4 is full on North's side
    assert "redeploy R5@1>1" not in options  # another slot, not the same flag
    moved = s.clone()
    act(moved, "redeploy R5@1>2")
    assert side(moved, 1, NORTH) == ["R6"] and side(moved, 2, NORTH) == ["R5"]
    assert flag(moved, 2).sides[NORTH][0].turn == moved.turn  # placed now (docs/rulings.md 7)
    assert moved.discards[NORTH] == [REDEPLOY] and moved.tactics_played == [2, 1]
    moved.card_count()
    act(s, "redeploy R6@1>discard")
    assert side(s, 1, NORTH) == ["R5"]
    assert sorted(names(s.discards[NORTH])) == ["R6", "redeploy"]
    s.card_count()


def test_deserter_discards_any_opponent_card() -> None:
    # Rulebook (Deserter); docs/rulings.md 9: any one opponent card, troop or tactic, from an
    # unclaimed flag, discarded on the opponent's side.
    s = build(
        {
            3: {"south": "B7"},
            4: {"south": "cavalry G5"},
            5: {"north": "R9", "south": "Y1 Y2 Y3", "claimed": "south"},
            6: {"env": "fog:south:1"},
            7: {"north": "R1"},
        },
        hands={"north": "deserter R2 R3 O2 O3 O4 O5", "south": "P1 P2 P3 P4 P5 P6 P7"},
        discards={"north": "scout"},
    )
    options = legal(s)
    assert {"deserter B7@3", "deserter cavalry@4", "deserter G5@4", "deserter fog@6"} <= options
    assert "deserter Y1@5" not in options  # claimed flag
    assert "deserter R1@7" not in options  # own card
    deserter_moves = {a for a in s.legal_actions() if a.kind == DESERTER_KIND}
    assert len(deserter_moves) == 4
    act(s, "deserter cavalry@4")
    assert side(s, 4, SOUTH) == ["G5"]
    assert s.discards[SOUTH] == [CAVALRY] and s.discards[NORTH] == [SCOUT, DESERTER]
    assert s.tactics_played == [2, 2]
    s.card_count()


def test_traitor_takes_an_opponent_troop_into_own_empty_slot() -> None:
    # Rulebook (Traitor); docs/rulings.md 9: an opponent TROOP (not a tactic) from an
    # unclaimed flag into an empty slot on the player's own side at an unclaimed flag.
    s = build(
        {
            4: {"south": "G5 cavalry"},
            5: {"north": "R9", "south": "Y1 Y2 Y3", "claimed": "south"},
            7: {"north": "R1 R2 R3"},
        },
        hands={"north": "traitor R4 O2 O3 O4 O5 O6", "south": "P1 P2 P3 P4 P5 P6 P7"},
        discards={"north": "scout"},
    )
    options = legal(s)
    assert {"traitor G5@4>6", "traitor G5@4>4", "traitor G5@4>1"} <= options
    assert not any(t.startswith("traitor cavalry") for t in options)  # a tactic
    assert not any(t.startswith("traitor Y1@5") for t in options)  # claimed flag
    assert "traitor G5@4>7" not in options  # North's side of flag 7 is full
    assert "traitor G5@4>5" not in options  # claimed flag
    act(s, "traitor G5@4>6")
    assert side(s, 4, SOUTH) == ["cavalry"] and side(s, 6, NORTH) == ["G5"]
    assert flag(s, 6).sides[NORTH][0].turn == s.turn
    assert s.discards[NORTH] == [SCOUT, TRAITOR]
    s.card_count()


def _environment_table(removable: bool) -> BattleLineState:
    return build(
        {
            1: {"north": "R1", "env": "fog:north:1"},
            2: {"south": "O1", "env": "mud:south:2"},
        },
        hands={"north": "redeploy deserter R2 R3 R4 R5 R6", "south": "Y1 Y2 Y3 Y4 Y5 Y6 Y7"},
        environment_removable=removable,
    )


def test_environment_removable_setting() -> None:
    # docs/rulings.md 10 (setting environment_removable, default false: the rulebook's
    # "played tactics stay until the end of the game"): Deserter and Redeploy may target
    # Fog and Mud only when it is on.
    assert RulesConfig().environment_removable is False
    assert RulesConfig.parse("").environment_removable is False
    on = _environment_table(True)
    assert {"deserter mud@2", "redeploy fog@1>discard", "redeploy fog@1>3"} <= legal(on)
    assert "deserter fog@1" not in legal(on)  # Fog is North's own card
    off = _environment_table(False)
    env_moves = [a for a in off.legal_actions() if a.card in (FOG, MUD)]
    assert env_moves == []
    assert "deserter O1@2" in legal(off) and "redeploy R1@1>3" in legal(off)
    for token in ("deserter mud@2", "redeploy fog@1>discard"):
        with pytest.raises(IllegalActionError):
            act(off.clone(), token)
    act(on, "deserter mud@2")
    assert environment(on, 2) == [] and on.discards[SOUTH] == [MUD]


def test_mud_leaving_owner_discards_even_off_turn() -> None:
    # docs/rulings.md 10: when Mud leaves a flag, a side holding 4 cards discards one of its
    # owner's choice; the owner decides even when it is not his turn.
    s = build(
        {1: {"north": "R1:2 R2:4 R3:6", "south": "B1:3 B5:5 B7:7 B9:8", "env": "mud:north:1"}},
        hands={"north": "redeploy R4 R5 R6 O1 O2 O3", "south": "Y1 Y2 Y3 Y4 Y5 Y6 Y7"},
        discards={"south": "scout"},
    )
    moved = s.clone()
    act(s, "redeploy mud@1>discard")
    assert s.phase == MUD_DISCARD and s.to_move == NORTH
    assert s.current_player() == SOUTH
    assert legal(s) == {"discard B1@1", "discard B5@1", "discard B7@1", "discard B9@1"}
    assert all(a.kind == DISCARD for a in s.legal_actions())
    act(s, "discard B1@1")
    assert side(s, 1, SOUTH) == ["B5", "B7", "B9"] and s.discards[SOUTH] == [
        SCOUT,
        parse_card("B1"),
    ]
    assert sorted(names(s.discards[NORTH])) == ["mud", "redeploy"]
    # Back to North: Wedge 6 now beats South's Battalion Order 21.
    assert s.current_player() == NORTH and claims_offered(s) == {1}
    s.card_count()
    # Redeploying the Mud to another flag moves the four-card rule there.
    act(moved, "redeploy mud@1>2")
    assert environment(moved, 2) == ["mud"] and flag(moved, 2).size == 4
    assert moved.current_player() == SOUTH and moved.phase == MUD_DISCARD


def test_tactics_limit_counts_deserted_tactics() -> None:
    # docs/rulings.md 11: never more than one tactic ahead of the opponent; every tactic
    # played counts, including discarded and deserted ones.
    s = build(
        {3: {"env": "fog:north:1"}},
        to_move="south",
        hands={"north": "alexander cavalry R1 R2 R3 R4 R5", "south": "deserter Y1 Y2 Y3 Y4 Y5 Y6"},
    )
    assert s.tactics_played == [1, 0] and not s.can_play_tactic(NORTH)
    act(s, "deserter fog@3", "draw troop")
    assert s.discards[NORTH] == [FOG] and s.tactics_played == [1, 1]
    assert "alexander@1" in legal(s) and "cavalry@1" in legal(s)
    act(s, "alexander@1", "draw troop")
    act(s, "Y1@2", "draw troop")
    # North has one tactic on the table, but two played: one ahead, no more tactics.
    assert s.to_move == NORTH and s.tactics_played == [2, 1]
    assert not any(a.card >= 60 for a in s.legal_actions())
    assert "R1@2" in legal(s)
    with pytest.raises(IllegalActionError):
        act(s, "cavalry@2")


def test_pass_only_when_no_troop_can_be_played() -> None:
    # docs/rulings.md 12 and rulebook (Troop Cards): a player who can play a troop must play
    # a card; he may pass only with all his slots full or only tactics in hand.
    s = build(hands={"north": "R1 R2 fog", "south": "O1 O2 O3"})
    assert "pass" not in legal(s)
    with pytest.raises(IllegalActionError):
        act(s, "pass")
    only_tactics = build(hands={"north": "fog mud", "south": "O1 O2 O3"})
    assert {"pass", "fog@1", "mud@9"} <= legal(only_tactics)
    act(only_tactics, "pass")
    assert only_tactics.phase == DRAW_PHASE  # he still draws at the end of his turn
    full = build(
        {
            n: {"north": " ".join(f"{c}{v}" for c, v in zip("ROY", (n, n, n), strict=True))}
            for n in range(1, 10)
        },
        hands={"north": "G1 G2 fog", "south": "B1 B2 B3"},
        settle=False,
    )
    if full.phase == CLAIM_START:
        act(full, "done")
    assert full.phase == PLAY_PHASE
    assert not any(a.kind == CLAIM for a in full.legal_actions())
    assert "pass" in legal(full) and not any(t.startswith("G1@") for t in legal(full))


def _timing_table(timing: str) -> BattleLineState:
    return build(
        {1: {"north": "R8:1 R9:3", "south": "Y2:2 G5:4 B9:6"}},
        hands={"north": "R10 O1 O2 O3 O4 O5 O6", "south": "P1 P2 P3 P4 P5 P6 P7"},
        claim_timing=timing,  # type: ignore[arg-type]
    )


def test_claim_timing_standard_claims_after_playing() -> None:
    # docs/rulings.md 14 (setting claim_timing, default standard): claims any time during the
    # turn before drawing.
    assert RulesConfig().claim_timing == "standard"
    s = _timing_table("standard")
    act(s, "R10@1")
    assert s.phase == CLAIM_END and claims_offered(s) == {1}
    act(s, "claim 1")
    assert flag(s, 1).claimed_by == NORTH and s.claims[-1].turn == 7


def test_claim_timing_advanced_claims_only_at_turn_start() -> None:
    # docs/rulings.md 14 and rulebook (Advanced Rule): claims only at the beginning of the
    # turn, so the claim waits for North's next turn.
    s = _timing_table("advanced")
    act(s, "R10@1")
    assert s.phase == DRAW_PHASE and s.claimable(1, NORTH)
    with pytest.raises(IllegalActionError):
        act(s, "claim 1")
    act(s, "draw troop", "P1@2", "draw troop")
    assert s.to_move == NORTH and s.phase == CLAIM_START and claims_offered(s) == {1}
    act(s, "claim 1")
    assert flag(s, 1).claimed_by == NORTH and s.phase == PLAY_PHASE


def test_breakthrough_ends_the_game_at_once() -> None:
    # docs/rulings.md 15 and rulebook (Game End): three adjacent flags win at once, no other
    # flag is claimed after that; match points: winner 5, loser 1 per flag held.
    s = build(
        {
            1: {"north": "R1 R2 R3", "south": "O1", "claimed": "north"},
            2: {"north": "O4 O5 O6", "south": "Y1", "claimed": "north"},
            3: {"north": "R8 R9 R10", "south": WEAK_SOUTH},
            4: {"north": "P8 P9 P10", "south": "G1 B1"},
            5: {"north": "B4 B5 B6", "south": "P1 P2"},
            6: {"north": "G2", "south": "Y8 Y9 Y10", "claimed": "south"},
            7: {"north": "G3", "south": "O8 O9 O10", "claimed": "south"},
        },
        hands={"north": "R4 R5 R6 R7", "south": "P3 P4 P5 P6"},
    )
    assert s.phase == CLAIM_START and claims_offered(s) == {3, 4, 5}
    act(s, "claim 4")  # flags 1, 2, 4: not three adjacent, only three flags
    assert s.phase == CLAIM_START and s.winner == -1 and claims_offered(s) == {3, 5}
    act(s, "claim 3")  # flags 1, 2, 3: a breakthrough
    assert s.phase == OVER and s.current_player() == TERMINAL and s.winner == NORTH
    assert s.end_reason == "breakthrough"
    assert s.legal_actions() == []
    assert flag(s, 5).claimed_by == -1  # play halts
    assert s.returns() == [1.0, -1.0]
    assert s.match_points() == (5, 2)


@pytest.mark.parametrize("triple", [(i, i + 1, i + 2) for i in range(1, 8)])
@pytest.mark.parametrize("last", [0, 1, 2])
def test_breakthrough_on_every_triple_of_adjacent_flags(
    triple: tuple[int, int, int], last: int
) -> None:
    # docs/rulings.md 15 and rulebook (Game End): any three adjacent flags win at once,
    # whichever of the three is claimed last (flags 7-9 as much as 1-3).
    held = [f for i, f in enumerate(triple) if i != last]
    flags: dict[int, dict[str, str]] = {
        held[0]: {"north": "O4 O5 O6", "south": "O1", "claimed": "north"},
        held[1]: {"north": "Y4 Y5 Y6", "south": "Y1", "claimed": "north"},
        triple[last]: {"north": "R8 R9 R10", "south": WEAK_SOUTH},
    }
    s = build(flags, hands={"north": "R4 R5 R6 R7", "south": "P3 P4 P5 P6"})
    assert s.winner == -1 and s.end_reason is None
    act(s, f"claim {triple[last]}")
    assert s.phase == OVER and s.winner == NORTH and s.end_reason == "breakthrough"


@pytest.mark.parametrize("gap", [(1, 2, 4), (7, 9, 5), (1, 5, 9), (2, 3, 5), (6, 7, 9)])
def test_three_flags_not_adjacent_do_not_win(gap: tuple[int, int, int]) -> None:
    # docs/rulings.md 15: three flags win only when adjacent (no wrap from 9 to 1).
    flags: dict[int, dict[str, str]] = {
        gap[0]: {"north": "O4 O5 O6", "south": "O1", "claimed": "north"},
        gap[1]: {"north": "Y4 Y5 Y6", "south": "Y1", "claimed": "north"},
        gap[2]: {"north": "R8 R9 R10", "south": WEAK_SOUTH},
    }
    s = build(flags, hands={"north": "R4 R5 R6 R7", "south": "P3 P4 P5 P6"})
    act(s, f"claim {gap[2]}")
    assert s.winner == -1 and s.end_reason is None and s.phase != OVER


def test_wrap_around_flags_9_1_2_do_not_win() -> None:
    # The flags are a line, not a circle: 8, 9 and 1 are not adjacent.
    flags: dict[int, dict[str, str]] = {
        8: {"north": "O4 O5 O6", "south": "O1", "claimed": "north"},
        9: {"north": "Y4 Y5 Y6", "south": "Y1", "claimed": "north"},
        1: {"north": "R8 R9 R10", "south": WEAK_SOUTH},
    }
    s = build(flags, hands={"north": "R4 R5 R6 R7", "south": "P3 P4 P5 P6"})
    act(s, "claim 1")
    assert s.winner == -1 and s.end_reason is None


def test_forfeit_ends_the_game_for_the_other_player() -> None:
    s = build({}, hands={"north": "R4 R5 R6 R7", "south": "P3 P4 P5 P6"})
    s.forfeit(NORTH)
    assert s.is_terminal() and s.winner == SOUTH and s.end_reason == "forfeit"
    assert s.returns() == [-1.0, 1.0] and s.legal_actions() == []
    with pytest.raises(IllegalActionError):
        s.forfeit(SOUTH)


def test_envelopment_ends_the_game_at_once() -> None:
    # docs/rulings.md 15: any five flags win at once (here none three adjacent).
    s = build(
        {
            1: {"north": "R1 R2 R3", "south": "O1", "claimed": "north"},
            2: {"north": "G2", "south": "Y8 Y9 Y10", "claimed": "south"},
            3: {"north": "O4 O5 O6", "south": "Y1", "claimed": "north"},
            5: {"north": "B4 B5 B6", "south": "P1", "claimed": "north"},
            7: {"north": "G7 G8 G9", "south": "B1", "claimed": "north"},
            9: {"north": "R8 R9 R10", "south": WEAK_SOUTH},
        },
        to_move="south",
        hands={"north": "R4 R5 R6 R7", "south": "P3 P4 P5 P6"},
        turn=30,
    )
    assert s.to_move == SOUTH and s.winner == -1
    act(s, "P3@4", "draw troop")
    assert claims_offered(s) == {9}
    act(s, "claim 9")
    assert s.phase == OVER and s.winner == NORTH and s.end_reason == "envelopment"
    assert s.flags_held(NORTH) == [1, 3, 5, 7, 9]
    assert s.returns() == [1.0, -1.0] and s.match_points() == (5, 1)


def test_refused_claim_answered_with_witness() -> None:
    # docs/rulings.md 16: a failed claim is answered with a concrete completion that beats
    # the formation. Rulebook example: R3 R4 R5 against B8 while B7 and B10 are unseen.
    s = build(
        {1: {"north": "R3 R4 R5", "south": "B8"}},
        hands={"north": "B7 B10 R1 R2 O1 O2 O3", "south": "Y1 Y2 Y3 Y4 Y5 Y6 Y7"},
    )
    assert s.phase == PLAY_PHASE and not s.claimable(1, NORTH)
    proof = s.judge_claim(1, NORTH)
    assert not proof.valid and proof.witness is not None
    witness = proof.witness
    added = {str(c) for c in witness.added}
    assert len(added) == 2 and "B8" not in added
    assert all(c.startswith("B") for c in added)
    assert witness.formation.name == "wedge"
    assert witness.formation.strength > proof.mine.strength
    with pytest.raises(IllegalActionError) as info:
        act(s, "claim 1")
    assert proof.explanation[0] in str(info.value)
    assert all(c in str(info.value) for c in added)
    assert flag(s, 1).claimed_by == -1


def test_holding_claim_names_the_blocking_cards() -> None:
    # docs/rulings.md 16: a holding claim comes with the minimal set of face-up cards that
    # block every beating completion (rulebook: "if the Blue 7 and Blue 10 have been
    # played"); the engine keeps that certificate with the claim.
    s = build(
        {
            1: {"north": "R3 R4 R5", "south": "B8"},
            2: {"north": "G9", "south": "B7"},
            4: {"north": "P6", "south": "Y6"},
        },
        hands={"north": "R1 R2 O1 O2 O3 O4 O5", "south": "Y1 Y2 Y3 Y4 Y5 Y7 Y8"},
        discards={"south": "B10"},
        settle=False,
    )
    assert claims_offered(s) == {1}
    act(s, "claim 1")
    record = s.claims[-1]
    assert (record.player, record.flag) == (NORTH, 1) and record.proof.valid
    assert {str(c) for c in record.proof.blocking} == {"B7", "B10"}


def test_claim_question_uses_face_up_cards_only() -> None:
    # docs/rulings.md 5: the proof uses cards at every flag (both sides, claimed flags
    # included) and both discard piles; never the claimant's hand.
    table = {
        1: {"north": "R3 R4 R5", "south": "B8"},
        2: {"north": "B7", "south": "Y1 Y2 Y3", "claimed": "south"},
        4: {"north": "G9", "south": "P2"},
    }
    s = build(
        table,
        hands={"north": "B9 B6 R1 R2 O1 O2 O3", "south": "G1 G2 G3 G4 G5 G6 G7"},
        discards={"north": "B10", "south": "O5 scout"},
        settle=False,
    )
    q = s.claim_question(1, NORTH)
    assert [str(c) for c in q.mine] == ["R3", "R4", "R5"]
    assert [str(c) for c in q.theirs] == ["B8"]
    assert {str(c) for c in q.seen} == {"B7", "Y1", "Y2", "Y3", "G9", "P2", "B10", "O5"}
    assert claims_offered(s) == {1}  # B7 (claimed flag) and B10 (discard) block it
    # Same table, B10 in North's hand instead of his discards: it may not be used.
    s = build(
        table,
        hands={"north": "B10 B6 R1 R2 O1 O2 O3", "south": "G1 G2 G3 G4 G5 G6 G7"},
        discards={"south": "O5 scout"},
    )
    q = s.claim_question(1, NORTH)
    assert "B10" not in {str(c) for c in q.seen}
    assert not s.claimable(1, NORTH) and s.phase == PLAY_PHASE


def test_claim_needs_a_complete_formation() -> None:
    # docs/rulings.md 4: to claim, the claimant needs 3 cards (4 with Mud, see the Mud tests),
    # even when no completion of his could lose: R10 O10 against a complete Host 7.
    s = build(
        {1: {"north": "R10 O10", "south": "Y1 G2 B4"}},
        hands={"north": "R1 R2 O1 O2 O3 O4 O5", "south": "P1 P2 P3 P4 P5 P6 P7"},
    )
    assert s.phase == PLAY_PHASE and not s.claimable(1, NORTH)
    with pytest.raises(IllegalActionError, match="2 of 3 cards"):
        act(s, "claim 1")
    act(s, "R1@1")
    assert claims_offered(s) == {1}


def test_claim_holds_when_pool_cannot_complete_the_opponent() -> None:
    # docs/rulings.md 6: too few troops left (all 60 minus the face-up ones, the claimant's
    # hand included, docs/rulings.md 5) to complete the opponent's side: the claim holds,
    # whatever the opponent could really play.
    def table(north_hand: str) -> BattleLineState:
        return build(
            {1: {"north": "O1 Y2 G4", "south": "B10"}},
            hands={"north": north_hand, "south": "darius scout redeploy deserter traitor"},
            rest="discards",
            settle=False,
        )

    one_left = table("alexander cavalry shield fog mud R10")
    assert claims_offered(one_left) == {1}  # only R10 is not face up: B10 stays alone
    # Two troops not face up (both in North's own hand) are enough for B10 R10 P10, a
    # Phalanx 30, though South holds no troop at all.
    two_left = table("alexander cavalry shield fog mud R10 P10")
    proof = two_left.judge_claim(1, NORTH)
    assert not proof.valid and proof.witness is not None
    assert {str(c) for c in proof.witness.added} == {"R10", "P10"}
    assert claims_offered(two_left) == set()


def test_claims_offered_exactly_when_proved() -> None:
    # Engine contract (docs/rulings.md 4-6): a claim is legal only when the solver proves it.
    s = build(
        {
            1: {"north": "R8 R9 R10", "south": WEAK_SOUTH},  # holds
            2: {"north": "R3 R4 R5", "south": "B8"},  # B7/B10 unseen: refused
            3: {"north": "O9 O10", "south": "P5"},  # incomplete
            5: {"north": "P8 P9 P10"},  # the top Wedge 27: South can at best tie
            6: {"north": "O1 P3 G4", "south": "B2"},  # a weak host: refused
        },
        hands={"north": "R1 R2 O2 O3 O4 O5 O6", "south": "Y3 Y4 Y5 Y6 Y7 Y8 Y9"},
        settle=False,
    )
    proved = {
        i + 1
        for i in range(9)
        if len(s.flags[i].sides[NORTH]) == 3 and s.judge_claim(i + 1, NORTH).valid
    }
    assert claims_offered(s) == proved
    assert {1} <= proved and not ({2, 3, 6} & proved)
    with pytest.raises(IllegalActionError, match="2 of 3"):
        act(s, "claim 3")


def test_claimed_flag_is_closed_to_cards_and_tactics() -> None:
    # Rulebook (Flags): after a claim neither player may place cards at that flag, nor
    # may any Tactics card affect those cards (docs/rulings.md 9: unclaimed flags only).
    s = build(
        {
            1: {"north": "R8 R9 R10", "south": "Y2", "claimed": "north"},
            2: {"north": "O5", "south": "P7"},
        },
        to_move="south",
        hands={
            "north": "R1 R2 R3 R4 R5 R6 R7",
            "south": "G3 fog mud redeploy deserter traitor shield",
        },
    )
    options = legal(s)
    # The same kinds of action do reach flag 2 (the check is not vacuous).
    assert {"G3@2", "fog@2", "deserter O5@2", "traitor O5@2>3", "redeploy P7@2>3"} <= options
    assert "shield@2" in options and "traitor O5@2>2" in options
    assert not any(a.flag == 1 or a.source == 1 for a in s.legal_actions())
    with pytest.raises(IllegalActionError):
        act(s, "G3@1")


def test_tie_after_traitor_completer_loses() -> None:
    # docs/rulings.md 7: Traitor counts as placing the card at that moment. North completes
    # his Host 10 with a card taken from South (placed at turn 1), at turn 7: he
    # completed last and loses the tie to South's Host 10 (complete at turn 6).
    s = build(
        {
            1: {"north": "Y7:3 B2:5", "south": "Y3:2 B3:4 G4:6"},
            5: {"south": "G1:1"},
        },
        hands={"north": "traitor R1 R2 O1 O2 O3 O4", "south": "P1 P2 P3 P4 P5 P6 P7"},
    )
    act(s, "traitor G1@5>1")
    assert side(s, 1, NORTH) == ["Y7", "B2", "G1"]
    assert s.claim_question(1, NORTH).completed_first == "theirs"
    proof = s.judge_claim(1, NORTH)
    assert not proof.valid and "completed last" in proof.explanation[0]
    assert claims_offered(s) == set()
    act(s, "draw troop")
    assert s.to_move == SOUTH and claims_offered(s) == {1}
    act(s, "claim 1")
    assert flag(s, 1).claimed_by == SOUTH


def test_tie_after_redeploy_completer_loses() -> None:
    # docs/rulings.md 7: Redeploy counts as placing the card at that moment (G1 was placed at
    # turn 1 elsewhere; moved at turn 7 it completes North's side last).
    s = build(
        {
            1: {"north": "Y7:3 B2:5", "south": "Y3:2 B3:4 G4:6"},
            5: {"north": "G1:1"},
        },
        hands={"north": "redeploy R1 R2 O1 O2 O3 O4", "south": "P1 P2 P3 P4 P5 P6 P7"},
    )
    act(s, "redeploy G1@5>1")
    assert flag(s, 1).completed_at(NORTH) == 7
    assert not s.judge_claim(1, NORTH).valid and claims_offered(s) == set()
    act(s, "draw troop")
    assert claims_offered(s) == {1} and s.judge_claim(1, SOUTH).valid


def test_tie_after_deserter_recompleting_side_loses() -> None:
    # docs/rulings.md 7: completion is tracked per card. North completed his Host 10 first
    # (turn 5 against 6) and would win the tie; South deserts one of North's cards and
    # North re-completes at turn 8, so now North completed last and South wins the tie.
    s = build(
        {1: {"north": "Y7:1 B2:3 G1:5", "south": "Y3:2 B3:4 G4:6"}},
        to_move="south",
        hands={"north": "R1 R2 O1 O2 O3 O4 O5", "south": "deserter P1 P2 P3 P4 P5 P6"},
    )
    assert s.claim_question(1, NORTH).completed_first == "mine"
    assert s.judge_claim(1, NORTH).valid and not s.judge_claim(1, SOUTH).valid
    act(s, "deserter G1@1")
    assert s.discards[NORTH] == [parse_card("G1")]
    assert claims_offered(s) == set()  # North could still add a 10
    act(s, "draw troop", "R1@1")
    assert s.claim_question(1, NORTH).completed_first == "theirs"
    assert claims_offered(s) == set() and not s.judge_claim(1, NORTH).valid
    act(s, "draw troop")
    assert s.to_move == SOUTH and claims_offered(s) == {1}


def test_tie_after_fog_fog_is_no_formation_card() -> None:
    # docs/rulings.md 7 and 8: Fog makes North's Wedge R1-R3 (6) and South's Skirmish Line
    # Y1 B2 G3 (6) tie on sums. Fog is not a formation card: South completed first
    # (turn 5 against 6), so South wins the tie on the turn he plays the Fog.
    s = build(
        {1: {"north": "R1:2 R2:4 R3:6", "south": "Y1:1 B2:3 G3:5"}},
        to_move="south",
        hands={"north": "O1 O2 O3 O4 O5 O6 O7", "south": "fog P1 P2 P3 P4 P5 P6"},
    )
    assert not s.judge_claim(1, SOUTH).valid
    act(s, "fog@1")
    q = s.claim_question(1, SOUTH)
    assert q.fog and q.completed_first == "mine"
    assert claims_offered(s) == {1}
    act(s, "claim 1")
    assert flag(s, 1).claimed_by == SOUTH


def test_tie_against_incomplete_side_goes_to_claimant() -> None:
    # docs/rulings.md 7: if the opponent is incomplete, every tie goes to the claimant (the
    # opponent would play last). R10 O10 Y10 against G10 B10: P10 only ties.
    s = build(
        {1: {"north": "R10 O10 Y10", "south": "G10 B10"}},
        hands={"north": "R1 R2 O1 O2 O3 O4 O5", "south": "Y1 Y2 Y3 Y4 Y5 Y6 Y7"},
        settle=False,
    )
    q = s.claim_question(1, NORTH)
    assert q.completed_first is None and len(q.theirs) == 2
    assert claims_offered(s) == {1}
    act(s, "claim 1")
    assert flag(s, 1).claimed_by == NORTH


def test_tie_after_mud_removed_from_full_flag() -> None:
    # docs/rulings.md 7, 8 and 10: Mud on full flags made both sides add a fourth card; when
    # the Mud is deserted each side discards one of its owner's choice and the card
    # stamps decide who completed first: North (turn 5) before South (turn 6).
    s = build(
        {
            1: {
                "north": "R8:1 R9:3 R10:5 Y1:8",
                "south": "B8:2 B9:4 B10:6 G2:9",
                "env": "mud:south:7",
            }
        },
        hands={"north": "deserter R1 R2 O1 O2 O3 O4", "south": "P1 P2 P3 P4 P5 P6 P7"},
    )
    act(s, "deserter mud@1")
    assert s.phase == MUD_DISCARD and s.current_player() == NORTH
    assert legal(s) == {"discard R8@1", "discard R9@1", "discard R10@1", "discard Y1@1"}
    act(s, "discard Y1@1")
    assert s.current_player() == SOUTH and s.to_move == NORTH
    act(s, "discard G2@1")
    assert side(s, 1, NORTH) == ["R8", "R9", "R10"] and side(s, 1, SOUTH) == ["B8", "B9", "B10"]
    assert s.discards[SOUTH] == [MUD, parse_card("G2")]
    assert s.claim_question(1, NORTH).completed_first == "mine"
    assert s.phase == CLAIM_END and claims_offered(s) == {1}
    s.card_count()


def test_nine_circles_names_in_and_out() -> None:
    # docs/rulings.md, Nine Circles: the same game with other names; input accepts them,
    # output uses them; Mud, Scout and Redeploy keep their Battle Line names.
    expected = {
        ALEXANDER: ("Beelzebub", "beelzebub"),
        DARIUS: ("Mephistopheles", "mephistopheles"),
        CAVALRY: ("Shapeshifter", "shapeshifter"),
        SHIELD: ("3-headed monkey", "3-headed-monkey"),
        FOG: ("Mano a Mano!", "mano-a-mano"),
        MUD: ("Mud", "mud"),
        SCOUT: ("Scout", "scout"),
        REDEPLOY: ("Redeploy", "redeploy"),
        DESERTER: ("Day off", "day-off"),
        TRAITOR: ("We have Cookies!", "we-have-cookies"),
    }
    for code, (display, slug) in expected.items():
        assert parse_card(display) == code and parse_card(slug) == code
        assert display_name(code, "nine-circles") == display
        assert card_name(code, "nine-circles") == slug
    assert Action.parse("Beelzebub@2") == Action.parse("alexander@2")
    assert Action.parse("Mano a Mano!@3") == Action.parse("fog@3")
    assert Action.parse("3-headed monkey@1") == Action.parse("shield@1")
    assert Action.parse("day-off G5@4") == Action.parse("deserter G5@4")
    assert Action.parse("we-have-cookies G5@4>6") == Action.parse("traitor G5@4>6")
    # A Nine Circles game: same rules (the Alexander scenario), names on output.
    s = build(
        {
            1: {"north": "R9:1 R10:3", "south": "Y10:2 G10:4 P10:6"},
            4: {"south": "G5:5"},
        },
        hands={"north": "Beelzebub Day-off R1 O1 O2 Y1 Y3", "south": "B1 B2 B3 B4 B5 B6 B7"},
        theme="nine-circles",
    )
    assert s.naming.flag == "circle"
    options = legal(s)
    assert "beelzebub@1" in options and "day-off G5@4" in options
    assert not any("alexander" in t or "deserter" in t for t in options)
    assert Action.parse("redeploy R7@3>5").notation(s.naming) == "redeploy R7@3>5"
    assert Action.parse("scout").notation(s.naming) == "scout"
    assert Action.parse("traitor G5@4>6").notation(s.naming) == "we-have-cookies G5@4>6"
    assert Action.parse("fog@3").notation(s.naming) == "mano-a-mano@3"
    with pytest.raises(IllegalActionError, match="circle 1"):
        act(s, "claim 1")
    act(s, "Beelzebub@1")
    assert claims_offered(s) == {1}
    act(s, "claim 1")
    assert flag(s, 1).claimed_by == NORTH
    assert "circle" in s.why_illegal(Action.parse("claim 2"))


def test_nine_circles_guile_names_with_spaces_parse() -> None:
    # docs/rulings.md, Nine Circles: input accepts the Nine Circles names, "Day off" and
    # "We have Cookies!" included (Action.parse: "any theme's names").
    assert Action.parse("Day off G5@4") == Action.parse("deserter G5@4")
    assert Action.parse("We have Cookies! G5@4>6") == Action.parse("traitor G5@4>6")


def test_deal_seven_each_first_player_moves() -> None:
    # Rulebook (Preparation, Objective): seven troops to each hand, the rest as the troop
    # deck, the ten tactics as their own deck; the non-dealer (``first``) plays first and
    # draws at the end of his turn.
    s = new_game(RulesConfig(), first=SOUTH)
    assert s.current_player() == CHANCE
    outcomes = s.chance_outcomes()
    assert len(outcomes) == 60 and all(p == Fraction(1, 60) for _, p in outcomes)
    act(s, *(f"card R{v}" for v in range(1, 8)), *(f"card O{v}" for v in range(1, 8)))
    assert names(s.hands[SOUTH]) == [f"R{v}" for v in range(1, 8)]
    assert names(s.hands[NORTH]) == [f"O{v}" for v in range(1, 8)]
    assert s.to_move == SOUTH and s.phase == PLAY_PHASE and s.turn == 1
    assert s.deck_size(0) == 46 and s.deck_size(1) == 10
    act(s, "R1@1", "draw troop")
    assert s.current_player() == CHANCE
    act(s, "card Y1")
    assert s.hands[SOUTH][-1] == parse_card("Y1") and s.to_move == NORTH
    assert s.card_count() == 70


def _idle_table(south_flag: bool, stalemate: Literal["dead", "idle"]) -> BattleLineState:
    """Empty decks; both players hold tactics they may play (the limit allows both)."""
    table = {1: {"north": "R1 R2 R3", "south": "O1", "claimed": "north"}}
    if south_flag:
        table[2] = {"north": "O2", "south": "Y1 Y2 Y3", "claimed": "south"}
    return build(
        table,
        hands={
            "north": "alexander cavalry fog scout traitor",
            "south": "darius shield mud redeploy deserter",
        },
        rest="discards",
        tactics_played={"north": 0, "south": 0},
        stalemate=stalemate,
    )


def test_two_idle_turns_end_the_game_with_stalemate_idle() -> None:
    # docs/rulings.md 17, setting stalemate=idle: two turns in a row with no card played,
    # no claim and no draw end the game, whatever the players could have done; more flags
    # wins, else a draw.
    s = _idle_table(False, "idle")
    act(s, "pass")
    assert s.phase != OVER and s.to_move == SOUTH and s.idle_turns == 1
    act(s, "pass")
    assert s.phase == OVER and s.winner == NORTH and s.end_reason == "stalemate"
    assert s.returns() == [1.0, -1.0] and s.match_points() == (5, 0)
    even = _idle_table(True, "idle")
    act(even, "pass", "pass")
    assert even.phase == OVER and even.winner == DRAW_GAME and even.returns() == [0.0, 0.0]
    # One idle turn followed by a card played does not end it.
    busy = _idle_table(False, "idle")
    act(busy, "pass", "darius@3", "pass")
    assert busy.phase != OVER


def test_passing_by_choice_does_not_end_the_game_by_default() -> None:
    # docs/rulings.md 17 (default stalemate=dead): the rulebook says the game goes on until
    # it is decided; players who pass while they could play a tactic end nothing.
    assert RulesConfig().stalemate == "dead"
    s = _idle_table(False, "dead")
    act(s, "pass", "pass", "pass", "pass")
    assert s.phase != OVER and s.idle_turns == 0


def test_a_dead_position_ends_the_game() -> None:
    # docs/rulings.md 17: empty hands and decks, no claim for anyone: neither player can do
    # anything but pass, so two such turns end the game; the player with more flags wins.
    s = build(
        {1: {"north": "R1 R2 R3", "south": "O1", "claimed": "north"}},
        discards={
            "north": "alexander cavalry fog scout traitor",
            "south": "darius shield mud redeploy deserter",
        },
        rest="discards",
    )
    assert s.legal_actions() == [Action.parse("pass")]
    act(s, "pass")
    assert s.phase != OVER and s.idle_turns == 1
    act(s, "pass")
    assert s.phase == OVER and s.winner == NORTH and s.end_reason == "stalemate"
