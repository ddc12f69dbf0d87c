"""The RL tables' tensors (battlejudge issue 37): kept incrementally yet always equal to
a from-scratch build, holding only what the player may know, and perfect recall (equal
information-state strings <-> equal information-state tensors). The dense legal ids
and ``apply_id`` agree with the engine's legal actions.

Needs numpy only (no OpenSpiel): the tables are the engine side of the adapters.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from battlejudge.apps.rl.infostate import (
    BL_CARDS,
    information_state_pieces,
    line_code,
    log_size,
    observation_pieces,
)
from battlejudge.apps.rl.observations import BL_PLACES, Planes, tensor_of
from battlejudge.apps.rl.specs import GAMES, Table
from battlejudge.engines.game import CHANCE, sample_chance

SPECS = {spec.registry: spec for spec in GAMES}
HIDDEN = ["battleline", "force-duel", "battleplan"]
SMALL = {"battleplan": {"rounds": 3}, "lines-of-battle": {"turns": 12}}
"""House-rule limits that keep the long games short enough to check every step."""


def _table(registry: str, params: dict[str, Any] | None = None) -> Table:
    return Table(SPECS[registry].new_state({**SMALL.get(registry, {}), **(params or {})}))


class Reference:
    """Each player's information-state tensor built another way: the observation from
    scratch (:func:`tensor_of`), the ``told`` log from the lines and the actions, and
    Battle Line's ``seen``/``claim_step`` from the from-scratch ``cards``/``claimed``
    pieces before and after each action."""

    def __init__(self, table: Table) -> None:
        self.pieces = information_state_pieces(table.state)
        self.players = len(table.told)
        self.history = [Planes(self.pieces) for _ in range(self.players)]
        self.cap = log_size(table.state)
        self.battleline = "seen" in dict(self.pieces)
        self.cards = [self._cards(table, p) for p in range(self.players)]
        for p in range(self.players):
            if self.battleline:
                cards, claimed = self.cards[p]
                self._stamp(table, p, (0 * cards, 0 * claimed), self.cards[p])

    def _cards(self, table: Table, player: int) -> Any:
        t = tensor_of(table.state, player)
        return (t["cards"].copy(), t["claimed"].copy()) if self.battleline else None

    def _stamp(self, table: Table, p: int, old: Any, new: Any) -> None:
        """Cards newly at a place, and flags newly claimed, get the current step."""
        stamp = (len(table.told[p]) + 1) / (self.cap + 1)
        h = self.history[p]
        h["seen"][(new[0] > 0) & (old[0] == 0)] = stamp
        h["claim_step"][(new[1].sum(axis=1) > 0) & (old[1].sum(axis=1) == 0)] = stamp

    def apply(self, table: Table, action: Any) -> None:
        """Apply ``action`` to ``table`` and follow it here."""
        state = table.state
        chance = state.current_player() == CHANCE
        full = state.action_to_string(action)
        lines = [state.public_action_string(action, p) for p in range(self.players)]
        code = table.codec.encode(action, chance)
        if not chance:  # the fast encoder against the blocks' fields
            encode_fields = getattr(table.codec, "encode_fields", table.codec.encode)
            assert code == encode_fields(action, chance)
        table.apply(action)
        for p, line in enumerate(lines):
            if line is not None:
                n = len(table.told[p]) - 1
                if n < self.cap:
                    value = line_code(line, full, code, chance, table.codec) * 2.0**-24
                    self.history[p]["told"][n] = value
        for p in range(self.players):
            new = self._cards(table, p)
            if self.battleline:
                self._stamp(table, p, self.cards[p], new)
            self.cards[p] = new

    def information(self, table: Table, player: int) -> Any:
        """The reference tensor of ``player`` now."""
        out = self.history[player].tensor.copy()
        obs = tensor_of(table.state, player).tensor
        out[: obs.size] = obs
        return out

    def clone(self) -> Reference:
        """An independent copy."""
        twin = Reference.__new__(Reference)
        twin.__dict__.update(self.__dict__)
        twin.history = [h.copy() for h in self.history]
        twin.cards = list(self.cards)
        return twin


def _check(table: Table, ref: Reference) -> None:
    for p in range(ref.players):
        info = table.information_state_tensor(p)
        obs = table.observation_tensor(p)
        scratch = tensor_of(table.state, p).tensor
        assert obs.dtype == np.float32 and obs.shape == scratch.shape
        np.testing.assert_array_equal(obs, scratch)
        np.testing.assert_array_equal(info, ref.information(table, p))


def _step(table: Table, rng: random.Random, prefer: Callable[[Any], bool] | None = None) -> Any:
    """A random action (chance by its probabilities); one that ``prefer`` likes, when
    there is one, half the time."""
    state = table.state
    if state.current_player() == CHANCE:
        return sample_chance(state, rng)
    ids = table.legal_ids()
    engine = sorted(table.codec.encode(a, False) for a in state.legal_actions())
    assert ids == engine
    actions = [table.codec.decode(i, False) for i in ids]
    liked = [a for a in actions if prefer is not None and prefer(a)]
    return rng.choice(liked if liked and rng.random() < 0.5 else actions)


def _moves_a_tactic(action: Any) -> bool:
    """Battle Line actions that move cards around the table: Scout, Redeploy,
    Deserter, Traitor (Fog and Mud too when they may be taken), Mud discards."""
    from battlejudge.engines.battleline import actions as bla

    kinds = (bla.SCOUT, bla.REDEPLOY, bla.DESERTER, bla.TRAITOR, bla.DISCARD, bla.RETURN)
    return bool(action.kind in kinds or (action.kind == bla.PLAY and action.card in (64, 65)))


@pytest.mark.parametrize(
    ("registry", "params"),
    [
        *((name, {}) for name in sorted(SPECS)),
        # Deserter and Redeploy may then take Fog and Mud: environment cards move too
        ("battleline", {"environment_removable": True, "claim_timing": "advanced"}),
        ("battleline", {"deck": "troops"}),
    ],
)
def test_incremental_tensors_equal_a_from_scratch_build_after_every_action(
    registry: str, params: dict[str, Any]
) -> None:
    """Random games: after every action, and on clones and resampled copies played on,
    each player's observation tensor equals :func:`tensor_of` and his information-state
    tensor equals the :class:`Reference`."""
    rng = random.Random(f"{registry}{params}")
    prefer = _moves_a_tactic if registry == "battleline" else None
    for _ in range(2):
        table = _table(registry, params)
        ref = Reference(table)
        _check(table, ref)
        steps = 0
        while not table.state.is_terminal() and steps < 400:
            action = _step(table, rng, prefer)
            ref.apply(table, action)
            _check(table, ref)
            steps += 1
            if steps % 37 == 0:  # a clone plays on by itself and leaves the table alone
                twin, twin_ref = table.clone(), ref.clone()
                for _ in range(10):
                    if twin.state.is_terminal():
                        break
                    twin_ref.apply(twin, _step(twin, rng))
                    _check(twin, twin_ref)
                _check(table, ref)
            player = table.state.current_player()
            if steps % 53 == 0 and player >= 0:
                world = table.resample(player, rng)
                before = table.information_state_tensor(player)
                np.testing.assert_array_equal(world.information_state_tensor(player), before)
                for p in range(ref.players):  # both follow the new deal
                    np.testing.assert_array_equal(
                        world.observation_tensor(p), tensor_of(world.state, p).tensor
                    )
        assert steps > 0


def test_tensors_are_the_callers_to_keep() -> None:
    table = _table("battleline")
    rng = random.Random(3)
    kept = [table.observation_tensor(0), table.information_state_tensor(0)]
    copies = [k.copy() for k in kept]
    for _ in range(60):
        table.apply(_step(table, rng))
    for k, c in zip(kept, copies, strict=True):
        np.testing.assert_array_equal(k, c)


@pytest.mark.parametrize("registry", sorted(SPECS))
def test_shapes_are_the_pieces(registry: str) -> None:
    table = _table(registry)
    for pieces, tensor in (
        (observation_pieces(table.state), table.observation_tensor(0)),
        (information_state_pieces(table.state), table.information_state_tensor(1)),
    ):
        assert tensor.shape == (sum(int(np.prod(shape)) for _, shape in pieces),)


def test_apply_chance_id_refuses_an_impossible_outcome() -> None:
    table = _table("battleline")
    dealt = table.chance_outcomes()[0][0]
    table.apply_chance_id(dealt)
    with pytest.raises(ValueError, match=f"chance outcome {dealt} is not possible"):
        table.apply_chance_id(dealt)  # that card is in a hand now
    with pytest.raises(ValueError, match="action id 13944 is not legal"):
        table.apply_id(13944)


def test_apply_id_refuses_an_illegal_id_naming_it() -> None:
    table = _table("battleline")
    rng = random.Random(0)
    while table.state.current_player() == CHANCE:
        table.apply(_step(table, rng))
    illegal = next(i for i in range(table.codec.num_actions) if i not in table.legal_ids())
    with pytest.raises(ValueError, match=f"action id {illegal} is not legal") as refused:
        table.apply_id(illegal)
    assert table.legal_ids()  # nothing changed
    # one short line, not every legal id (a Battle Line decision may have hundreds)
    message = str(refused.value)
    assert "\n" not in message and len(message) < 160, message
    assert f"{len(table.legal_ids())} legal" in message


# -- what the tensor holds -------------------------------------------------------------


def _decisions(registry: str, seed: int, every: int) -> Iterator[Table]:
    """Tables at every ``every``-th decision of a random game."""
    rng = random.Random(seed)
    table = _table(registry)
    n = 0
    while not table.state.is_terminal():
        if table.state.current_player() != CHANCE:
            n += 1
            if n % every == 0:
                yield table
        table.apply(_step(table, rng))


Tensor = Callable[[Table, int], Any]


def _leaks(tensor: Tensor, registry: str, games: int = 3, worlds: int = 3) -> bool:
    """Whether ``tensor`` changes when what the player cannot see is dealt again
    (:meth:`Table.resample`) at decisions of random games."""
    rng = random.Random(7)
    for seed in range(games):
        for table in _decisions(registry, seed, every=5):
            for viewer in range(len(table.told)):
                mine = tensor(table, viewer)
                for _ in range(worlds):
                    world = table.resample(viewer, rng)
                    if not np.array_equal(tensor(world, viewer), mine):
                        return True
    return False


@pytest.mark.parametrize("registry", HIDDEN)
def test_information_state_tensor_holds_only_what_the_player_may_know(registry: str) -> None:
    assert not _leaks(lambda t, p: t.information_state_tensor(p), registry)
    assert not _leaks(lambda t, p: t.observation_tensor(p), registry)


@pytest.mark.parametrize("registry", HIDDEN)
def test_a_planted_leak_is_found(registry: str) -> None:
    """The check above can fail: a tensor that also holds the opponent's private state
    (his hand, or his engine information-state string's digest) is caught."""

    def leaky(table: Table, player: int) -> Any:
        secret = table.state.information_state_string(1 - player)
        return np.append(table.information_state_tensor(player), float(hash(secret) % 997))

    assert _leaks(leaky, registry)


# -- perfect recall --------------------------------------------------------------------


def _information_states(registry: str, budget: int) -> Iterator[tuple[str, bytes]]:
    """(string, tensor) pairs of both players (the string starts with the player: an
    information state is a player's), from random games and from states that
    share a player's information: resampled worlds, and the children of chance nodes
    the player cannot see (the opponent's draws), played on by the same actions."""
    rng = random.Random(registry)
    seed = 0
    produced = 0
    while produced < budget:
        seed += 1
        for table in _decisions(registry, seed, every=3):
            family = [table, table.resample(table.state.current_player(), rng)]
            # cousins: other short random futures from the same state (transpositions)
            for _ in range(2):
                sib = table.clone()
                for _ in range(rng.randrange(1, 6)):
                    if sib.state.is_terminal():
                        break
                    sib.apply(_step(sib, rng))
                family.append(sib)
            # siblings: the same short future from the same state (the same choices by
            # position among the legal actions), chance drawn anew for each
            choices, steps = rng.random(), rng.randrange(1, 8)
            for _ in range(3):
                sib, chance = table.clone(), random.Random(rng.random())
                for _ in range(steps):
                    if sib.state.is_terminal():
                        break
                    if sib.state.current_player() == CHANCE:
                        sib.apply(sample_chance(sib.state, chance))
                    else:
                        ids = sib.legal_ids()
                        sib.apply_id(ids[int(choices * len(ids))])
                family.append(sib)
            for member in family:
                for p in range(len(member.told)):
                    yield (
                        f"{p}:{member.information_state_string(p)}",
                        member.information_state_tensor(p).tobytes(),
                    )
                    produced += 1
            if produced >= budget:
                return


@pytest.mark.parametrize("registry", sorted(SPECS))
def test_equal_information_state_strings_iff_equal_tensors(registry: str) -> None:
    by_string: dict[str, bytes] = {}
    by_tensor: dict[bytes, str] = {}
    shared = 0
    for string, tensor in _information_states(registry, 3000):
        if string in by_string:
            shared += 1
            assert by_string[string] == tensor, "equal strings, different tensors"
        if tensor in by_tensor:
            assert by_tensor[tensor] == string, "different strings, equal tensors"
        by_string[string] = tensor
        by_tensor[tensor] = string
    assert len(by_string) > 100
    if registry != "lines-of-battle":
        assert shared > 100  # the test met many states that share an information state


def test_scout_returns_stay_hidden_in_the_tensor() -> None:
    """The Scout's returned cards: the other player's ``cards`` piece never shows them
    on the deck, and his told log holds the same code for any returned troop."""
    from battlejudge.engines.battleline.actions import RETURN

    rng = random.Random(5)
    found = 0
    for seed in range(200):
        table = _table("battleline")
        rng.seed(seed)
        while not table.state.is_terminal() and found < 3:
            state = table.state
            action = _step(table, rng)
            if getattr(action, "kind", None) == RETURN:
                other = 1 - state.current_player()
                table.apply(action)
                places = table.information_state_tensor(other)[: BL_CARDS * len(BL_PLACES)]
                on_deck = places.reshape(BL_CARDS, len(BL_PLACES))[:, -1]
                assert on_deck[action.card] == 0
                assert table.told[other][-1] in ("return troop", "return tactics")
                found += 1
            else:
                table.apply(action)
        if found >= 3:
            break
    assert found >= 1


@pytest.mark.parametrize("registry", HIDDEN)
def test_masked_lines_have_distinct_codes(registry: str) -> None:
    """The masked lines random games tell (``return troop``, ``p1 draws a strategy
    card``, a player's own draws) get one code each: no two share a CRC."""
    codes: dict[int, str] = {}
    rng = random.Random(2)
    for _ in range(4):
        table = _table(registry)
        while not table.state.is_terminal():
            state = table.state
            action = _step(table, rng)
            full = state.action_to_string(action)
            chance = state.current_player() == CHANCE
            for p in range(len(table.told)):
                line = state.public_action_string(action, p)
                if line is not None and line != full:
                    code = line_code(line, full, 0, chance, table.codec)
                    assert codes.setdefault(code, line) == line
            table.apply(action)
    assert codes
