"""``battlejudge bench``: speed figures against the baselines they name."""

from __future__ import annotations

import dataclasses

import click

from battlejudge.cli.common import emit_json
from battlejudge.solver.battleline import bench as claim_bench


@click.group()
def bench() -> None:
    """Benchmarks: print their figures and the ratio against a baseline run in the same process."""


def _row(name: str, s: dict[str, float]) -> str:
    return f"  {name:<16}{s['median_ms']:>10.3f}{s['p99_ms']:>10.3f}{s['max_ms']:>10.3f}"


@bench.command("claims")
@click.option("--seed", default=1, show_default=True, help="Seed of the generated suite.")
@click.option(
    "--count",
    default=60,
    show_default=True,
    type=click.IntRange(min=6),
    help="Number of hard cases.",
)
@click.option(
    "--repeat",
    default=20,
    show_default=True,
    type=click.IntRange(min=1),
    help="Warm decisions timed per case.",
)
@click.option("--no-brute-force", is_flag=True, help="Skip the (slow) brute-force baseline.")
@click.option("--json", "as_json", is_flag=True)
def bench_claims(seed: int, count: int, repeat: int, no_brute_force: bool, as_json: bool) -> None:
    """Time decide, prove and verify on a seeded suite of hard claims (claims that hold),
    against the naive itertools brute force on the same suite."""
    r = claim_bench.run(seed=seed, count=count, repeat=repeat, brute=not no_brute_force)
    if as_json:
        emit_json(dataclasses.asdict(r))
        return
    kinds = ", ".join(f"{n} {k}" for k, n in r.kinds.items())
    click.echo(f"bench claims: seed {r.seed}, {r.count} hard cases (valid claims: {kinds})")
    click.echo(f"  {'(ms)':<16}{'median':>10}{'p99':>10}{'max':>10}")
    click.echo(_row("decide", r.decide))
    click.echo(_row("decide (cold)", r.decide_cold))
    click.echo(_row("prove", r.prove))
    click.echo(_row("verify", r.verify))
    if r.brute_force:
        click.echo(_row("brute force", r.brute_force))
        click.echo(
            f"  speed ratio vs naive itertools brute force (same suite, same process): "
            f"{r.speedup_total:,.0f}x on the total, {r.speedup_median:,.0f}x median per case"
        )
        click.echo(f"  brute force agrees with the solver on {r.oracle_agrees}/{r.count} cases")
    click.echo(f"  peak memory (RSS): {r.peak_rss_mb:.0f} MB")
    for name, ok in r.checks.items():
        click.echo(f"  target {name}: {'met' if ok else 'MISSED'}")


COMMANDS: tuple[click.Command, ...] = (bench,)


@bench.command("selfplay")
@click.option("--games", default=100, show_default=True, type=click.IntRange(min=1))
@click.option("--seed", default=1, show_default=True)
@click.option("--sign", is_flag=True, help="Sign every log record (Ed25519).")
@click.option("--json", "as_json", is_flag=True)
def bench_selfplay(games: int, seed: int, sign: bool, as_json: bool) -> None:
    """Random-vs-random self-play with every claim certified and logged (fsync per record),
    against the same games with claims decided but neither certified nor logged."""
    import tempfile
    from pathlib import Path

    from battlejudge.engines.battleline import bots
    from battlejudge.engines.battleline.selfplay import bench_selfplay as run
    from battlejudge.proofs.log import ProofLog

    with tempfile.TemporaryDirectory() as tmp:
        key = None
        if sign:
            from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

            key = Ed25519PrivateKey.generate()
        path = Path(tmp) / "bench.log"
        r = run(games, seed, bots.make_bot, ProofLog(path, key), lambda: path.stat().st_size)
    if as_json:
        emit_json(
            {
                "games": r.games,
                "claims": r.claims,
                "certified_s": r.certified_s,
                "baseline_s": r.baseline_s,
                "games_per_s": r.games_per_s,
                "baseline_games_per_s": r.baseline_games_per_s,
                "log_bytes": r.log_bytes,
                "target_met": r.games_per_s >= 20,
            }
        )
        return
    click.echo(
        f"bench selfplay: {games} random-vs-random games, seed {seed}, "
        f"{r.claims} claims{' (signed)' if sign else ''}"
    )
    click.echo(
        f"  certified and logged: {r.games_per_s:.1f} games/s "
        f"({r.certified_s / games * 1e3:.1f} ms/game, {r.log_bytes / r.claims / 1024:.1f} "
        f"KiB of log per claim)"
    )
    click.echo(
        f"  baseline (claims decided, not certified, not logged): "
        f"{r.baseline_games_per_s:.1f} games/s; ratio {r.certified_s / r.baseline_s:.2f}x "
        f"the baseline's time"
    )
    click.echo(f"  target >= 20 games/s on one core: {'met' if r.games_per_s >= 20 else 'MISSED'}")


@bench.command("audit")
@click.option("--claims", "n_claims", default=1000, show_default=True, type=click.IntRange(min=1))
@click.option("--seed", default=1, show_default=True)
@click.option("--no-deep", is_flag=True, help="Skip the (slow) --deep figure.")
@click.option("--json", "as_json", is_flag=True)
def bench_audit(n_claims: int, seed: int, no_deep: bool, as_json: bool) -> None:
    """Audit a log of self-play claims (DRAT check of every certificate; and --deep, the
    brute-force oracle too), against re-proving every logged question from scratch."""
    import tempfile
    import time
    from pathlib import Path

    from battlejudge.engines.battleline import bots
    from battlejudge.engines.battleline.selfplay import game_seed, play_one
    from battlejudge.proofs.audit import audit_log
    from battlejudge.proofs.log import ProofLog
    from battlejudge.solver import battleline as bl

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.log"
        log = ProofLog(path)
        written = 0
        i = 0
        while written < n_claims:
            gs = game_seed(seed, i)
            state = play_one(
                bots.make_bot("random", gs + 1),
                bots.make_bot("random", gs + 2),
                gs,
                log=log,
                game_id=f"bench-{i}",
            )
            written += len(state.claims)
            i += 1
        start = time.perf_counter()
        report = audit_log(path)
        audit_s = time.perf_counter() - start
        records = len(report.records)
        start = time.perf_counter()
        for rec in report.records:
            bl.prove(bl.ClaimQuestion.from_json(rec.question))
        baseline_s = time.perf_counter() - start
        deep_s = None
        if not no_deep:
            start = time.perf_counter()
            audit_log(path, deep=True)
            deep_s = time.perf_counter() - start
    out = {
        "records": records,
        "problems": len(report.problems),
        "audit_s": audit_s,
        "deep_s": deep_s,
        "reprove_s": baseline_s,
        "target_met": audit_s * 1000 / records <= 30,
    }
    if as_json:
        emit_json(out)
        return
    click.echo(
        f"bench audit: {records} logged claims from {i} self-play games, "
        f"{len(report.problems)} problems"
    )
    click.echo(
        f"  audit (chain + DRAT check of every certificate): {audit_s:.2f} s "
        f"({audit_s / records * 1e3:.2f} ms/record; {audit_s * 1000 / records:.1f} s per "
        f"1,000)"
    )
    if deep_s is not None:
        click.echo(f"  audit --deep (also the brute-force oracle): {deep_s:.2f} s")
    click.echo(
        f"  baseline (re-proving every question with bl.prove): {baseline_s:.2f} s; "
        f"audit takes {audit_s / baseline_s:.2f}x that"
    )
    ok = audit_s * 1000 / records <= 30
    click.echo(
        f"  target <= 30 s per 1,000 records with the DRAT check: {'met' if ok else 'MISSED'}"
    )
