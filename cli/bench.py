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
