"""One scenario per BattlePlan rule (seed 002 page and docs/rulings.md, BattlePlan, cited in
each test), played through the engine's actions."""

from __future__ import annotations

import random

import pytest
from battleplan_helpers import piece, pos

from battlejudge.engines.battleplan.actions import DRAW, TOKEN
from battlejudge.engines.battleplan.board import OFF, parse_square
from battlejudge.engines.battleplan.position import state_from_position
from battlejudge.engines.battleplan.state import (
    ASSIGNING,
    BATTLE,
    CHANCE,
    DICE,
    PLANNING,
    BattlePlanState,
    new_game,
)
from battlejudge.engines.game import TERMINAL, IllegalActionError
from battlejudge.solver.errors import InputError


def sq(name: str) -> int:
    return parse_square(name)


def play(state: BattlePlanState, *texts: str) -> None:
    for text in texts:
        state.apply_action(state.parse_action(text))


def test_a_shield_absorbs_one_attack() -> None:
    # Page 3, DEFEND: "a shield is destroyed by one attack" (docs/rulings.md: then gone).
    s = state_from_position(
        pos(
            "p2",
            [piece("d4", shield=True), piece("a1"), piece("h1")],
            [piece("d5", 2, cards=["attack", "attack"]), piece("h8"), piece("g8")],
        )
    )
    play(s, "reveal rook", "attack d4")
    assert s.pos[0] == sq("d4") and not s.shield[0]
    play(s, "reveal rook", "attack d4")  # p1 has nothing to reveal: p2 goes again
    assert s.deaths[0] == 1


def test_a_shield_ends_at_the_pieces_next_reveal_and_defend_gives_one() -> None:
    # Page 3: the shield lasts until the piece's next reveal; DEFEND moves then shields.
    s = state_from_position(
        pos(
            "p1",
            [piece("d4", 2, shield=True, cards=["move", "defend"]), piece("a1"), piece("h1")],
            [piece("h8"), piece("g8"), piece("f8")],
        )
    )
    play(s, "reveal rook")
    assert not s.shield[0]
    play(s, "move d5", "reveal rook", "defend d6")
    assert s.pos[0] == sq("d6") and s.shield[0]


def test_blocked_steps_have_no_effect_but_spend_the_turn() -> None:
    # Page 2 B3 and page 3: an impossible move has no effect; a blocked DEFEND still shields.
    s = state_from_position(
        pos(
            "p1",
            [piece("a1", 2, cards=["move", "defend"]), piece("b1"), piece("a2")],
            [piece("h8"), piece("g8"), piece("f8", 1, cards=["move"])],
        )
    )
    play(s, "reveal rook")
    assert [s.action_to_string(a) for a in s.legal_actions()] == ["move none"]
    play(s, "move none")
    assert s.current_player() == 1  # the turn is spent
    play(s, "reveal bishop", "move f7", "reveal rook", "defend none")
    assert s.pos[0] == sq("a1") and s.shield[0]


def test_attack_none_only_without_an_adjacent_enemy_and_friendly_fire_is_a_choice() -> None:
    # Page 3, ATTACK: an adjacent enemy is killed; friendly fire is allowed by choice.
    s = state_from_position(
        pos(
            "p1",
            [piece("d4", 1, cards=["attack"]), piece("d3"), piece("h1")],
            [piece("e5"), piece("h8"), piece("g8")],
        )
    )
    play(s, "reveal rook")
    assert [s.action_to_string(a) for a in s.legal_actions()] == ["attack d3", "attack e5"]
    s2 = state_from_position(
        pos(
            "p1",
            [piece("d4", 1, cards=["attack"]), piece("d3"), piece("h1")],
            [piece("a8"), piece("h8"), piece("g8")],
        )
    )
    # "If no adjacent enemy exists when ATTACK resolves, the attack has no effect"
    # (docs/rulings.md BP8): the friend at d3 cannot be hit then.
    s3 = s2.clone()
    play(s2, "reveal rook")
    assert [s2.action_to_string(a) for a in s2.legal_actions()] == ["attack none"]
    with pytest.raises(IllegalActionError, match=r"no enemy is adjacent.*BP8"):
        s2.parse_action("attack d3")
    # The option friendly_fire=any, for tables that play it so: the friend may be hit.
    s3.friendly_fire = "any"
    play(s3, "reveal rook")
    assert [s3.action_to_string(a) for a in s3.legal_actions()] == ["attack none", "attack d3"]
    with pytest.raises(InputError, match="friendly_fire"):
        new_game({"friendly_fire": "never"})
    assert new_game({"friendly_fire": "any"}).friendly_fire == "any"
    assert new_game().friendly_fire == "with-enemy"


def test_friendly_fire_on_a_carrier_drops_the_flag() -> None:
    # Page 4: friendly fire on a carrier is allowed (by choice: an enemy stands at d6); the
    # flag becomes unclaimed.
    s = state_from_position(
        pos(
            "p1",
            [piece("c7", 1, cards=["attack"]), piece("c8", carrier=True), piece("h1")],
            [piece("a8"), piece("d6"), piece("g7", 1, cards=["move"])],
        )
    )
    play(s, "reveal rook", "attack c8")
    assert s.deaths[1] == 1 and s.carrier[0] == OFF


def test_carrier_death_with_automatic_pickup() -> None:
    # Page 4: a piece already in the enemy zone picks the dropped flag up automatically.
    s = state_from_position(
        pos(
            "p2",
            [piece("c8", carrier=True), piece("e8"), piece("h1")],
            [piece("c7", 1, cards=["attack"]), piece("h7"), piece("a7", 1, cards=["move"])],
        )
    )
    play(s, "reveal rook", "attack c8")
    assert s.pos[0] == OFF and s.carrier[0] == 1


def test_carrier_death_with_two_pieces_in_the_zone_lets_the_player_choose() -> None:
    # Page 4: "Player chooses if there is two in the opponents defensive zone".
    s = state_from_position(
        pos(
            "p2",
            [piece("c8", carrier=True), piece("e8"), piece("a8")],
            [piece("c7", 1, cards=["attack"]), piece("h7"), piece("h6", 1, cards=["move"])],
        )
    )
    play(s, "reveal rook", "attack c8")
    assert s.current_player() == 0
    assert [s.action_to_string(a) for a in s.legal_actions()] == ["pickup horse", "pickup bishop"]
    play(s, "pickup bishop")
    assert s.carrier[0] == 2


def test_entering_the_enemy_zone_claims_the_flag_and_the_win_zone_wins() -> None:
    # Page 4: claim by entering the enemy's defensive zone; win by entering the Win Zone.
    s = state_from_position(
        pos(
            "p1",
            [piece("c7", 1, cards=["move"]), piece("h2"), piece("a1")],
            [piece("a7"), piece("b7"), piece("f6")],
        )
    )
    play(s, "reveal rook", "move c8")
    assert s.carrier[0] == 0
    s = state_from_position(
        pos(
            "p1",
            [piece("h2", 1, cards=["move"], carrier=True), piece("a1"), piece("b1")],
            [piece("a7"), piece("b7"), piece("f6", 1, cards=["move"])],
        )
    )
    play(s, "reveal rook", "move h1")
    assert s.current_player() == TERMINAL and s.returns() == [1.0, -1.0]


def test_a_non_carrier_on_the_win_square_does_not_win() -> None:
    s = state_from_position(
        pos(
            "p1",
            [piece("h2", 1, cards=["move"]), piece("a1"), piece("b1")],
            [piece("a7"), piece("b7"), piece("f6", 1, cards=["move"])],
        )
    )
    play(s, "reveal rook", "move h1")
    assert s.winner == -1 and s.current_player() == 1


def test_the_token_rerolls_onto_occupied_squares() -> None:
    # Page 4 and docs/rulings.md: entering the token draws a buff and re-rolls it; a landing on
    # an occupied square gives the occupant's owner a buff and rolls again.
    s = state_from_position(
        pos(
            "p1",
            [piece("d3", 1, cards=["move"]), piece("a1"), piece("b1")],
            [piece("e5"), piece("b7"), piece("f6", 1, cards=["move"])],
        )
    )
    s.token = sq("d4")
    play(s, "reveal rook", "move d4")
    assert s.current_player() == CHANCE
    s.apply_action(DRAW + 3)
    assert s.hand[0][3] == 1
    s.apply_action(TOKEN + sq("e5"))  # p2's rook stands there
    assert s.action_to_string(s.legal_actions()[0]).startswith("draw p2")
    s.apply_action(DRAW + 0)
    assert s.hand[1][0] == 1
    s.apply_action(TOKEN + sq("a1"))  # p1's horse
    s.apply_action(DRAW + 1)
    s.apply_action(TOKEN + sq("c6"))
    assert s.token == sq("c6") and s.hand[0] == [0, 1, 0, 1]
    assert s.current_player() == 1


def test_dead_pieces_flip_their_cards_and_respawn_in_scan_order() -> None:
    # Page 4: remaining cards of a dead piece flip with no effect; respawn at the start of
    # the next round on the left-most free square, a1->h1 for p1, h8->a8 for p2.
    s = state_from_position(
        pos(
            "p2",
            [piece("b4", 1, cards=["move"]), piece("c4"), piece("a1")],
            [piece("b5", 2, cards=["attack", "attack"]), piece("h8"), piece("g5")],
        )
    )
    play(s, "reveal rook", "attack b4", "reveal rook")  # p1 flips the dead rook's card
    assert s.pos[0] == OFF and s.current_player() == 1
    play(s, "reveal rook", "attack c4")
    # The round is over: both respawn, a1 is taken so b1, then c1.
    assert s.phase == DICE
    assert s.pos[0] == sq("b1") and s.pos[1] == sq("c1")
    s2 = BattlePlanState()
    s2.pos = [sq("a1"), sq("b1"), sq("c1"), OFF, OFF, sq("h8")]
    s2._respawn(1)
    assert s2.pos[3:] == [sq("g8"), sq("f8"), sq("h8")]


def test_dice_are_assigned_alternately_each_value_once() -> None:
    # Page 2, A2 and docs/rulings.md: alternate from the round's first player; each player uses
    # each rolled value exactly once.
    s = new_game()
    rng = random.Random(1)
    while s.phase != DICE:
        s.apply_action(rng.choice(s.legal_actions()))
    for v in (6, 4, 4):
        s.apply_action(s.parse_action(f"die {v}"))
    assert s.phase == ASSIGNING and s.current_player() == s.first
    order = []
    while s.phase == ASSIGNING:
        order.append(s.current_player())
        s.apply_action(s.legal_actions()[-1])
    assert order == [s.first, 1 - s.first] * 3
    for p in (0, 1):
        assert sorted(s.assigned[p * 3 : p * 3 + 3]) == [4, 4, 6]
    assert s.phase == PLANNING


def test_stacks_respect_the_per_piece_caps() -> None:
    # Page 2, A3: at most 3 MOVE, 2 ATTACK, 1 DEFEND per piece; the die is the card count.
    s = new_game()
    rng = random.Random(2)
    while s.phase != DICE:
        s.apply_action(rng.choice(s.legal_actions()))
    for _ in range(3):
        s.apply_action(s.parse_action("die 6"))
    while s.phase == ASSIGNING:
        s.apply_action(s.legal_actions()[0])
    p = s.current_player()
    play(s, "card rook move", "card rook move", "card rook move", "card rook defend")
    texts = [s.action_to_string(a) for a in s.legal_actions()]
    assert "card rook move" not in texts and "card rook defend" not in texts
    play(s, "card rook attack", "card rook attack")
    assert not any(
        t.startswith("card rook") for t in (s.action_to_string(a) for a in s.legal_actions())
    )
    assert s.stacks[p * 3] == [0, 0, 0, 2, 1, 1]
    assert "done" not in [s.action_to_string(a) for a in s.legal_actions()]


def test_buffs_are_used_before_or_after_the_card() -> None:
    # Page 3: a buff is revealed with one of the piece's reveals, before or after it.
    s = state_from_position(
        pos(
            "p1",
            [piece("d4", 1, cards=["move"], buff="diagonal"), piece("a1"), piece("b1")],
            [piece("a7"), piece("b7"), piece("f6", 1, cards=["move"])],
        )
    )
    play(s, "reveal rook", "buff before", "move e5", "move e6")
    assert s.pos[0] == sq("e6") and s.buff[0] == OFF and s.discard[3] == 1
    s = state_from_position(
        pos(
            "p1",
            [piece("d4", 1, cards=["attack"], buff="extra-attack"), piece("a1"), piece("b1")],
            [piece("d5"), piece("e5"), piece("f6", 1, cards=["move"])],
        )
    )
    play(s, "reveal rook", "buff after", "attack d5", "attack e5")
    assert s.pos[3] == OFF and s.pos[4] == OFF


def test_who_went_last_goes_first_next_round() -> None:
    # Page 2, B5: whoever goes last in the battle phase is first in the next plan phase.
    for seed in range(5):
        s = new_game()
        rng = random.Random(seed)
        while s.round < 2:
            if s.phase == BATTLE and not s.steps and not s.pending:
                last = s.current_player()  # about to reveal
            s.apply_action(rng.choice(s.legal_actions()))
        assert s.first == last
