"""The registry of claim kinds: what the proof log and its audit need from a game's
certificates, without knowing the game.

A claim record holds a question, a verdict and a certificate file's JSON. The log stores
the question in canonical form and checks that the certificate carries the same question
and verdict; the audit checks the certificate itself. Both ask a :class:`ClaimKind` for
that, looked up here by name, so ``proofs/log.py`` and ``proofs/audit.py`` name no game.
A game's kind lives beside its certificate files (``battlejudge.proofs.<game>.kind``) and
is registered by module name, loaded on first use, like the games of
:mod:`battlejudge.engines.games`.

The record format (version 3) has no field naming the kind: every claim record is of
:data:`DEFAULT_KIND`, Battle Line's flag claims. A second kind would add one.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Protocol

from battlejudge.solver.errors import InputError

__all__ = [
    "DEFAULT_KIND",
    "CheckedCertificate",
    "ClaimKind",
    "claim_kind",
    "kind_modules",
    "kind_names",
    "register_kind",
]


@dataclass(frozen=True)
class CheckedCertificate:
    """What checking a certificate found: why it is not a certificate at all
    (``unreadable``), or its ``verdict``, the question it certifies (``certified``: the
    kind's parsed question, or why it cannot be read) and why it does not verify
    (``rejected``; None: it verifies)."""

    unreadable: str | None
    verdict: str = ""
    certified: Any = ""
    rejected: str | None = None


class ClaimKind(Protocol):
    """One kind of certified claim, as the proof log and the audit use it."""

    name: str
    """The kind's registry name."""

    def question(self, question: Any) -> Any:
        """The record's question parsed (any value comparing equal for the same question);
        ``ValueError`` saying why it is not a question of this kind."""

    def canonical(self, question: Any) -> Any:
        """A parsed :meth:`question` as the canonical JSON the log stores."""

    def check(self, certificate: Any, deep: bool) -> CheckedCertificate:
        """Read and verify a certificate file's JSON (``deep``: the slow independent
        checks too)."""

    def parts(
        self, proved: Any, certificate: dict[str, Any] | None = None
    ) -> tuple[Any, str, dict[str, Any]]:
        """A proved claim of this kind as (question JSON, verdict, certificate file JSON);
        ``certificate``: that JSON when the caller has it already (not made again)."""


DEFAULT_KIND = "battleline-claim"
"""The kind of every claim record of format 3 (records name no kind)."""

_MODULES: dict[str, tuple[str, str]] = {
    DEFAULT_KIND: ("battlejudge.proofs.battleline.kind", "KIND"),
}
_loaded: dict[str, ClaimKind] = {}


def register_kind(name: str, module: str, attribute: str = "KIND") -> None:
    """Make :func:`claim_kind` load the :class:`ClaimKind` ``attribute`` of ``module``;
    :class:`InputError` if the name is taken."""
    if name in _MODULES:
        raise InputError(f"the claim kind {name!r} is taken")
    _MODULES[name] = (module, attribute)


def kind_names() -> list[str]:
    """Every registered kind's name, the default first."""
    return list(_MODULES)


def kind_modules() -> list[str]:
    """The modules of every registered kind (what a worker process preloads)."""
    return [module for module, _ in _MODULES.values()]


def claim_kind(name: str = DEFAULT_KIND) -> ClaimKind:
    """The registered kind ``name``; :class:`InputError` names an unknown one."""
    found = _loaded.get(name)
    if found is not None:
        return found
    entry = _MODULES.get(name)
    if entry is None:
        raise InputError(f"unknown claim kind {name!r} (kinds: {', '.join(_MODULES)})")
    kind: ClaimKind = getattr(importlib.import_module(entry[0]), entry[1])
    _loaded[name] = kind
    return kind
