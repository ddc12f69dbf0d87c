"""The bot protocol: message notation (round trip, leniency, errors) and our bots as
protocol clients, played in-process against the referee's own turn messages."""

from __future__ import annotations

import io
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from battlejudge.apps.protocol import messages as pr
from battlejudge.apps.protocol.client import ProtocolClient, TableView, build_state
from battlejudge.apps.protocol.referee import turn_messages
from battlejudge.engines.battleline.actions import CLAIM, DRAW, END_CLAIMS, PASS, PLAY, Action
from battlejudge.engines.battleline.game import make_bot
from battlejudge.engines.battleline.record import remove_tactics
from battlejudge.engines.battleline.state import (
    CLAIM_END,
    CLAIM_START,
    DRAW_PHASE,
    BattleLineState,
)
from battlejudge.engines.game import CHANCE, sample_chance

seats = st.sampled_from(pr.SEATS)
troops = st.integers(0, 59)
flags = st.integers(1, 9)
color_names = st.lists(
    st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=8),
    min_size=6,
    max_size=6,
    unique_by=str.lower,
).map(tuple)
messages = st.one_of(
    seats.map(pr.NameRequest),
    st.builds(
        pr.NameReply,
        seats,
        st.text("abcdefghijklmnopqrstuvwxyz-_0123456789", min_size=1, max_size=12).filter(
            lambda s: s not in ("name", "hand")
        ),
    ),
    st.builds(pr.Hand, seats, st.lists(troops, max_size=7).map(tuple)),
    st.lists(st.sampled_from(["unclaimed", "north", "south"]), min_size=9, max_size=9)
    .map(tuple)
    .map(pr.FlagStatus),
    st.builds(pr.FlagCards, flags, seats, st.lists(troops, max_size=4).map(tuple)),
    st.builds(pr.OpponentPlay, flags, troops),
    st.just(pr.GoPlay()),
    st.builds(pr.Play, flags, troops),
)


@given(messages, color_names)
def test_print_then_parse_is_identity(msg: pr.Message, colors: tuple[str, ...]) -> None:
    line = pr.format_message(msg, colors)
    assert "\n" not in line and line == " ".join(line.split())
    assert pr.parse_message(line, colors) == msg


@given(color_names)
def test_colors_message_round_trips(colors: tuple[str, ...]) -> None:
    msg = pr.Colors(colors)
    assert pr.parse_message(pr.format_message(msg)) == msg


def test_exact_lines() -> None:
    """The formats of the protocol, byte for byte (issue 9)."""
    assert pr.format_message(pr.NameRequest("north")) == "player north name"
    assert pr.format_message(pr.Colors(pr.PROTOCOL_COLORS)) == (
        "colors color1 color2 color3 color4 color5 color6"
    )
    # R10 is color1,10; Y3 is color3,3; P1 is color6,1 (colors in our order R O Y G B P)
    assert pr.format_message(pr.Hand("south", (9, 22, 50))) == (
        "player south hand color1,10 color3,3 color6,1"
    )
    assert pr.format_message(pr.FlagCards(4, "north", ())) == "flag 4 cards north"
    assert pr.format_message(pr.FlagStatus(("unclaimed",) * 8 + ("south",))) == (
        "flag claim-status " + "unclaimed " * 8 + "south"
    )
    assert pr.format_message(pr.OpponentPlay(2, 0)) == "opponent play 2 color1,1"
    assert pr.format_message(pr.GoPlay()) == "go play-card"
    assert pr.format_message(pr.Play(9, 59)) == "play 9 color6,10"


def test_lenient_reading() -> None:
    assert pr.parse_message("  PLAY   3  Color2,7 \r") == pr.Play(3, 16)
    assert pr.parse_message("Player NORTH name") == pr.NameRequest("north")
    assert pr.parse_message("player south Deep Blue") == pr.NameReply("south", "Deep Blue")


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("play 10 color1,3", "'10' is not a flag number 1-9"),
        ("play 0 color1,3", "'0' is not a flag number 1-9"),
        ("play 3 color7,3", "is not a card"),
        ("play 3 color1,11", "the number must be 1-10"),
        ("play 3", "is not a message"),
        ("", "is not a message"),
        ("flag claim-status north", "needs 9 values"),
        ("flag 2 cards east color1,1", "'east' is not a seat"),
        ("colors a b c d e", "six different names"),
        ("player north hand " + "color1,1 " * 8, "at most 7 cards"),
        ("I resign", "is not a message"),
    ],
)
def test_bad_lines_are_named(line: str, fragment: str) -> None:
    with pytest.raises(pr.ProtocolError) as e:
        pr.parse_message(line)
    assert fragment in str(e.value)
    assert repr(" ".join(line.split())) in str(e.value)


# -- our bots as clients, in-process --------------------------------------------------------
def _client_game(engines: tuple[str, str], seed: int) -> tuple[BattleLineState, int]:
    """A troops-only game in which both players are protocol clients fed with the
    referee's turn messages; every reply must be a legal play. Returns the state and the
    number of plays."""
    rng = random.Random(seed)
    state = remove_tactics(BattleLineState())
    clients = []
    for i, engine in enumerate(engines):
        options = {"iterations": 16} if engine in ("search", "expert") else {}
        client = ProtocolClient(make_bot(engine, seed + i, **options), f"our-{engine}", seed)
        assert client.handle(f"player {pr.SEATS[i]} name") == f"player {pr.SEATS[i]} our-{engine}"
        assert client.handle("colors color1 color2 color3 color4 color5 color6") is None
        clients.append(client)
    last: list[tuple[int, int] | None] = [None, None]
    plays = 0
    while not state.is_terminal():
        if state.current_player() == CHANCE:
            state.apply_action_unchecked(sample_chance(state, rng))
            continue
        p = state.to_move
        if state.phase == CLAIM_START:
            state.apply_action(Action(END_CLAIMS))
        for msg in turn_messages(state, p, last[1 - p]):
            assert clients[p].handle(pr.format_message(msg)) is None
        if state.troop_playable(p):
            reply = clients[p].handle("go play-card")
            assert reply is not None
            msg = pr.parse_message(reply)
            assert isinstance(msg, pr.Play)
            action = Action(PLAY, card=msg.card, flag=msg.flag)
            assert action in state.legal_actions(), reply
            last[p] = (action.flag, action.card)
            plays += 1
        else:
            action = Action(PASS)
        state.apply_action(action)
        while not state.is_terminal() and state.phase == CLAIM_END:
            claims = [a for a in state.legal_actions() if a.kind == CLAIM]
            state.apply_action(claims[0] if claims else Action(END_CLAIMS))
        if not state.is_terminal() and state.phase == DRAW_PHASE:
            state.apply_action(Action(DRAW, deck=0))
    return state, plays


@pytest.mark.parametrize(
    ("engines", "seed"),
    [
        (("random", "heuristic"), 1),
        (("heuristic", "random"), 2),
        (("search", "heuristic"), 3),
        (("expert", "search"), 4),
    ],
)
def test_our_bots_answer_legal_plays_to_the_end(engines: tuple[str, str], seed: int) -> None:
    state, plays = _client_game(engines, seed)
    assert state.is_terminal()
    assert plays >= 12  # a game needs at least three complete formations a side
    assert all(c < 60 for h in state.hands for c in h)


def test_client_ignores_unknown_lines_and_answers_only_when_asked() -> None:
    client = ProtocolClient(make_bot("random", 0), "x")
    out = io.StringIO()
    lines = [
        "player south name\n",
        "hello referee\n",
        "colors red orange yellow green blue purple\n",
        "player south hand red,1 blue,10\n",
        "flag claim-status " + "unclaimed " * 9 + "\n",
        *(f"flag {n} cards {s}\n" for n in range(1, 10) for s in ("north", "south")),
        "opponent play 1 green,4\n",
        "go play-card\n",
        "something else\n",
    ]
    client.run(lines, out)
    replies = out.getvalue().splitlines()
    assert replies[0] == "player south x"
    assert len(replies) == 2
    play = pr.parse_message(replies[1], ("red", "orange", "yellow", "green", "blue", "purple"))
    assert isinstance(play, pr.Play) and play.card in (0, 49)


def test_client_view_deals_hidden_cards_consistently() -> None:
    """The state the bot sees: its hand exactly, the table exactly, 60 troops in all,
    the opponent's hand and the deck sized from the plays made, no tactic to hold."""
    view = TableView(seat=1, hand=[0, 1, 2, 3, 4, 5, 6])
    view.sides[0][0].extend([10, 11])
    view.sides[2][1].extend([20])
    state = build_state(view, random.Random(0))
    troops = [c for h in state.hands for c in h] + list(state.unknown[0])
    troops += [p.card for f in state.flags for side in f.sides for p in side]
    assert sorted(troops) == list(range(60))
    assert state.hands[1] == [0, 1, 2, 3, 4, 5, 6]
    assert len(state.hands[0]) == 7 and len(state.unknown[0]) == 46 - 3
    assert all(a.kind == PLAY and a.card < 7 for a in state.legal_actions())
