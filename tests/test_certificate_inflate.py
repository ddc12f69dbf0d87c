"""The inflate cap of certificate bodies is exact (proofs/battleline/certificate.py: the
CNF inflates to at most ``MAX_CNF_BYTES`` and the proof to at most what the size rule
allows): a body of exactly the cap is read, one byte more is refused, whether the extra
byte is the last of the input or more input is left."""

from __future__ import annotations

import base64
import zlib

import pytest

from battlejudge.proofs.battleline.certificate import BlobModel, _unpack
from battlejudge.solver.errors import VerificationError


def _blob(text: str) -> BlobModel:
    return BlobModel(sha256="", data=base64.b64encode(zlib.compress(text.encode())).decode())


@pytest.mark.parametrize("cap", [1, 10, 1000])
def test_a_body_of_exactly_the_cap_is_read(cap: int) -> None:
    text = "p" * cap
    assert _unpack(_blob(text), "CNF", "cnf.data", cap, "the cap") == text


@pytest.mark.parametrize("cap", [1, 10, 1000])
@pytest.mark.parametrize("extra", [1, 2, 5000])
def test_a_body_past_the_cap_is_refused(cap: int, extra: int) -> None:
    with pytest.raises(VerificationError, match=f"cnf.data inflates past {cap} bytes, the cap"):
        _unpack(_blob("p" * (cap + extra)), "CNF", "cnf.data", cap, "the cap")
