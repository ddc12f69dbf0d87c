"""The example scripts in examples/ run as a user would run them."""

from __future__ import annotations

import subprocess
import sys


def test_engine_api_example_runs() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "battlejudge.examples.engine_api"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    assert "claimable" in out and "not yet" in out
    assert "Blue 7 and Blue 10 are face up" in out
