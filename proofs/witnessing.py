"""A log's side of witnessing: at each commit, every configured witness is asked to cosign
the new checkpoint (c2sp.org/tlog-witness), with a consistency proof from the last
checkpoint it cosigned, computed from the log's tiles.

A witness cosigns only a checkpoint consistent with the last one it cosigned, so a log
that was rolled back, or that shows two histories, cannot get its cosignature: the
commit fails with the witness's refusal, and nothing is published with it. A witness that
cannot be reached does not stop the log: the checkpoint goes out without that
cosignature (a warning is logged), and readers that require it (``--witnesses-needed``)
wait for the next commit's. The last size each witness cosigned is learned from its
answers (a 409 names it), so a restarted writer needs no state of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from battlejudge.proofs.checkpoint import CheckpointError, parse_checkpoint
from battlejudge.proofs.log import Problem
from battlejudge.proofs.tiles import TileReader
from battlejudge.proofs.witness import (
    WitnessError,
    WitnessKey,
    add_signature_lines,
    parse_witness_key,
    request_cosignature,
    verify_cosignatures,
)
from battlejudge.solver.errors import InputError

__all__ = ["Cosigners", "WitnessLink", "cosignature_problem", "parse_witness_option"]

_logger = logging.getLogger(__name__)


@dataclass
class WitnessLink:
    """A witness the log asks: its URL (the prefix of its ``add-checkpoint``), its
    verifier key, and the size of the last checkpoint of ours it is known to have
    cosigned."""

    url: str
    key: WitnessKey
    size: int = 0


def parse_witness_option(text: str) -> WitnessLink:
    """``URL=VKEY`` (``--witness``): the witness's URL and its verifier key (a vkey, or a
    file holding one). :class:`InputError` naming the value otherwise."""
    url, sep, vkey = text.partition("=")
    if not sep or not url.startswith(("http://", "https://")) or not vkey:
        raise InputError(
            f"--witness {text.split('@')[-1][:80]!r}: give URL=VKEY (the witness's "
            "http(s):// URL and its verifier key, or a file holding it)"
        )
    return WitnessLink(url, parse_witness_key(vkey, "--witness"))


def _unreachable(e: WitnessError) -> bool:
    return ": unreachable (" in str(e)


class Cosigners:
    """The log's ``cosign`` hook (:class:`~battlejudge.proofs.log.ProofLog`,
    ``PgProofLog``): the signed note with the cosignatures of every witness that gave
    one. Raises :class:`WitnessError` when a witness refuses (a rollback, a fork)."""

    def __init__(self, links: Sequence[WitnessLink], *, timeout: float = 5.0) -> None:
        self.links = list(links)
        self.timeout = timeout

    def __call__(self, note: str, reader: TileReader) -> str:
        head = parse_checkpoint(note).checkpoint
        lines: list[str] = []
        for link in self.links:
            try:
                lines += self._ask(link, note, head.size, reader)
            except WitnessError as e:
                if not _unreachable(e):
                    raise
                _logger.warning(
                    "%s; the checkpoint of %d records goes out without it", e, head.size
                )
        return add_signature_lines(note, lines) if lines else note

    def _ask(self, link: WitnessLink, note: str, size: int, reader: TileReader) -> list[str]:
        old = link.size
        for _ in range(3):  # our guess, then the size the witness names (409), once more
            if old > size:
                raise WitnessError(
                    f"witness {link.url.split('@')[-1]}: it cosigned {old} records of this "
                    f"log, which now holds {size}: the log was rolled back"
                )
            proof = reader.consistency_path(old)
            got, latest = request_cosignature(
                link.url, old, proof, note, timeout=self.timeout, witness=link.key
            )
            if latest is None:
                link.size = size
                return got
            old = latest
        raise WitnessError(f"witness {link.url.split('@')[-1]}: its latest size keeps changing")


def cosignature_problem(
    note: str | None, keys: Sequence[WitnessKey], needed: int, record: int
) -> Problem | None:
    """What an audit reports of a checkpoint ``note`` that lacks ``needed`` valid
    cosignatures of the witnesses ``keys`` (a ``checkpoint`` problem, named at
    ``record``, one past the last), or None when it has them. :class:`InputError` when
    more are needed than keys given."""
    if note is None:
        return Problem(record, "checkpoint", "no checkpoint, so no witness cosignature on one")
    try:
        verify_cosignatures(note, keys, needed, "checkpoint")
    except CheckpointError as e:
        return Problem(record, "checkpoint", str(e))
    return None
