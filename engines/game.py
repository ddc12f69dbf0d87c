"""The one small state interface every game implements (shaped like OpenSpiel's).

A state says whose decision it is (a player index, :data:`CHANCE` or
:data:`TERMINAL`), lists the legal actions sorted, applies one (checked, or unchecked
on the fast path), clones, scores a finished game, lists chance outcomes with exact
:class:`~fractions.Fraction` probabilities, and prints what one player may know.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import random
from abc import ABC, abstractmethod
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Generic, TypeVar

from battlejudge.solver.errors import RuleError

CHANCE = -1
"""``current_player()`` at a chance node (a deal, a draw, a die)."""
TERMINAL = -2
"""``current_player()`` once the game is over."""

A = TypeVar("A", bound=Hashable)


class IllegalActionError(RuleError):
    """An action that the rules do not allow in this state; the message says why."""


@dataclass(frozen=True)
class GameFacts:
    """What a game declares about itself."""

    name: str
    players: int
    chance: bool
    hidden_information: bool
    max_length: int
    """An upper bound on the number of actions in one game."""


class GameState(ABC, Generic[A]):
    """A position of a game; mutable, copied with :meth:`clone`."""

    facts: GameFacts

    @abstractmethod
    def current_player(self) -> int:
        """The player to decide, or :data:`CHANCE` or :data:`TERMINAL`."""

    @abstractmethod
    def legal_actions(self) -> list[A]:
        """Sorted; non-empty until the game is over (chance nodes list their outcomes)."""

    @abstractmethod
    def apply_action_unchecked(self, action: A) -> None:
        """Apply ``action`` without checking it. Legality is the caller's job: an illegal
        action leaves the state undefined."""

    def apply_action(self, action: A) -> None:
        """Apply ``action`` after checking it is legal; raise :class:`IllegalActionError`
        saying why otherwise."""
        if action not in self.legal_actions():
            raise IllegalActionError(self.why_illegal(action))
        self.apply_action_unchecked(action)

    def is_legal(self, action: A) -> bool:
        """True if ``action`` may be applied here (:meth:`why_illegal` says why not)."""
        return action in self.legal_actions()

    def why_illegal(self, action: A) -> str:
        """A sentence saying why ``action`` is not legal here (games refine it)."""
        return f"{action} is not a legal action here"

    def action_to_string(self, action: A) -> str:
        """The action in the game's record notation (canonical; :meth:`parse_action`
        reads it back in the same state). Games refine it; the default is ``str``."""
        return str(action)

    def public_action_string(self, action: A, viewer: int) -> str | None:
        """What ``viewer`` may be told of ``action`` taken in this state (None: nothing).
        Games with hidden moves (secret commits, shuffles) mask them; the default tells
        the whole action."""
        return self.action_to_string(action)

    def parse_action(self, text: str) -> A:
        """The legal action whose notation is ``text`` (case and spacing are ignored);
        raise :class:`IllegalActionError` naming ``text`` when no legal action has it.
        Games with a lenient parser of their own refine it."""
        wanted = _normal(text)
        for action in self.legal_actions():
            if _normal(self.action_to_string(action)) == wanted:
                return action
        raise IllegalActionError(f"{text.strip()!r} is not a legal action here")

    def is_terminal(self) -> bool:
        """Whether the game is over (the current player is :data:`TERMINAL`)."""
        return self.current_player() == TERMINAL

    @abstractmethod
    def returns(self) -> list[float]:
        """Each player's score: zero before the end."""

    @abstractmethod
    def chance_outcomes(self) -> list[tuple[A, Fraction]]:
        """At a chance node, every outcome with its exact probability (they sum to 1)."""

    def uniform_chance(self) -> Sequence[A] | None:
        """At a chance node whose outcomes are all equally likely: the outcomes, in
        :meth:`chance_outcomes`' order (else None). A fast path for :func:`sample_chance`,
        which then draws exactly what it would draw from :meth:`chance_outcomes`; games
        that can say it cheaply refine it."""
        return None

    @abstractmethod
    def information_state_string(self, player: int) -> str:
        """Everything ``player`` may know here, and nothing else."""

    @abstractmethod
    def clone(self) -> GameState[A]:
        """An independent copy."""

    @abstractmethod
    def serialize(self) -> str:
        """Text from which :meth:`deserialize` rebuilds an equal state."""


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def sample_chance(state: GameState[A], rng: random.Random) -> A:
    """Draw a chance outcome with its exact probability, using ``rng``."""
    uniform = state.uniform_chance()
    if uniform is not None:
        # What ``rng.choices(outcomes, weights=[1/n] * n)`` does, without building the
        # Fractions: the same random number, the same cumulative weights, the same index.
        cum = _uniform_cum_weights(len(uniform))
        return uniform[bisect.bisect(cum, rng.random() * (cum[-1] + 0.0), 0, len(cum) - 1)]
    outcomes = state.chance_outcomes()
    weights = [float(p) for _, p in outcomes]
    return rng.choices([a for a, _ in outcomes], weights=weights)[0]


@functools.cache
def _uniform_cum_weights(n: int) -> list[float]:
    """``random.choices``' cumulative weights for ``n`` outcomes of probability 1/n each."""
    return list(itertools.accumulate([float(Fraction(1, n))] * n))


def random_playout(
    state: GameState[A], rng: random.Random, max_steps: int | None = None
) -> list[A]:
    """Play uniformly random legal actions (chance by its probabilities) to the end;
    returns the actions taken. Raises if the game does not end within ``max_steps``."""
    limit = max_steps if max_steps is not None else state.facts.max_length
    taken: list[A] = []
    while not state.is_terminal():
        if len(taken) >= limit:
            raise RuntimeError(f"{state.facts.name}: no end within {limit} actions")
        if state.current_player() == CHANCE:
            action = sample_chance(state, rng)
        else:
            action = rng.choice(state.legal_actions())
        state.apply_action(action)
        taken.append(action)
    return taken
