"""``battlejudge bench log`` in its quick mode (every figure there, every ratio a positive
number; the targets are never asserted: they are wall times), and the synthetic logs it
builds: their tiles are the ones a writer makes, so a writer opens them from the tiles."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from battlejudge.bench.synthetic_log import build_synthetic_log
from battlejudge.proofs.log import EPOCH, ProofLog, checkpoint_path, tiles_path
from battlejudge.proofs.logview import open_view
from battlejudge.proofs.transparency import verify_inclusion_proof

MAIN = (sys.executable, "-c", "from battlejudge.cli.main import main; main()")
KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))


def _tiles(log: Path) -> dict[str, bytes]:
    """Every tile and bundle of a log, by path (not its epoch or checkpoint copy)."""
    root = tiles_path(log)
    return {
        str(f.relative_to(root)): f.read_bytes()
        for f in root.rglob("*")
        if f.is_file() and f.name not in (EPOCH, "checkpoint")
    }


@pytest.mark.parametrize("n", [0, 1, 255, 256, 600])
def test_a_synthetic_log_has_the_tiles_a_writer_makes(tmp_path: Path, n: int) -> None:
    path = tmp_path / "synthetic.log"
    build_synthetic_log(path, n, KEY)
    epoch = (tiles_path(path) / EPOCH).read_bytes()
    note = (tiles_path(path) / "checkpoint").read_bytes()
    assert note == checkpoint_path(path).read_bytes()
    ProofLog(path, KEY).close()  # opened from the tiles: they are not started again
    assert (tiles_path(path) / EPOCH).read_bytes() == epoch
    rebuilt = tmp_path / "rebuilt.log"
    shutil.copy(path, rebuilt)
    ProofLog(rebuilt, KEY, adopt=True).close()  # adopt: the tiles made from the whole log
    assert _tiles(path) == _tiles(rebuilt)
    if n:
        proof = open_view(path).inclusion_proof(n - 1)
        verify_inclusion_proof(proof, KEY.public_key())


def test_building_again_starts_a_new_epoch(tmp_path: Path) -> None:
    path = tmp_path / "synthetic.log"
    build_synthetic_log(path, 300, KEY)
    epoch = (tiles_path(path) / EPOCH).read_bytes()
    build_synthetic_log(path, 10, KEY)
    assert (tiles_path(path) / EPOCH).read_bytes() != epoch
    assert len(_tiles(path)) == 2  # the partial tile and bundle of 10: no tile of before


def _positive(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value) and value > 0


def test_bench_log_quick_reports_every_figure(pg_url: str) -> None:
    args = ["bench", "log", "--quick", "--records", "1500", "--clients", "1,2"]
    args += ["--fetches", "20", "--seconds", "0.4", "--interval", "0.05"]
    args += ["--pg-url", pg_url, "--json"]
    r = subprocess.run([*MAIN, *args], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["settings"]["interval"] == 0.05
    assert data["settings"]["interval_option"] in ("--checkpoint-interval", "--commit-interval")
    points = data["throughput"]["points"]
    assert [(p["backend"], p["clients"]) for p in points] == [
        ("file", 1),
        ("file", 2),
        ("postgresql", 1),
        ("postgresql", 2),
    ]
    for p in points:
        assert p["errors"] == 0
        for name in ("claims_per_s", "p50_ms", "p99_ms", "baseline_claims_per_s", "ratio"):
            assert _positive(p[name]), (name, p)
    assert [b["clients"] for b in data["throughput"]["baseline"]] == [1, 2]
    v = data["victim"]
    for phase in ("alone", "beside_batches"):
        assert v[phase]["requests"] > 0 and v[phase]["errors"] == 0
        assert _positive(v[phase]["p50_ms"]) and _positive(v[phase]["p99_ms"])
    assert _positive(v["ratio_p99"]) and v["batches"] >= 0
    assert data["build"]["big"]["records"] == 1500 and data["build"]["small"]["records"] == 1000
    for name, n in (("big", 1500), ("small", 1000)):
        p = data["proofs"][name]
        assert p["records"] == n and p["fetches"] == 20 and p["verified"] == 5
        assert p["opened_from_tiles"] is True and _positive(p["service_rss_mb"])
        for figure in (p["p50_ms"], p["p99_ms"], p["start_s"], *p["in_process"].values()):
            assert _positive(figure), p
        a = data["audit"][name]
        assert a["records"] == n and a["clean"] is True and a["exit"] == 0
        assert _positive(a["seconds"]) and _positive(a["peak_rss_mb"])
    for ratio in ("ratio_p50", "ratio_p99", "ratio_start"):
        assert _positive(data["proofs"][ratio])
    assert _positive(data["audit"]["ratio_per_record"])
    assert _positive(data["audit"]["ratio_peak_rss"])
    assert len(data["targets"]) == 5
    assert all(isinstance(ok, bool) for ok in data["targets"].values())


def test_bench_log_refuses_a_database_holding_a_log(pg_url: str) -> None:
    """The bench signs with a key of its own: it starts a log, never continues one."""
    from battlejudge.bench.synthetic_log import synthetic_claim
    from battlejudge.proofs.log import append_proved
    from battlejudge.proofs.store import open_store

    store = open_store(pg_url, KEY, create=True)
    append_proved(store, synthetic_claim())
    store.close()
    r = subprocess.run(
        [*MAIN, "bench", "log", "--quick", "--pg-url", pg_url, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and r.stdout == ""
    assert "holds a proof log already" in r.stderr and len(r.stderr.splitlines()) == 1
