"""``battlejudge bench``: speed figures against the baselines they name."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import click

from battlejudge.bench import claims as claim_bench
from battlejudge.bench.serve import ServiceError
from battlejudge.cli.common import EXIT_BAD_INPUT, emit_json, fail
from battlejudge.solver.errors import InputError


@click.group()
def bench() -> None:
    """Benchmarks: print their figures and the ratio against a baseline run in the same process."""


def _row(name: str, s: dict[str, float]) -> str:
    return f"  {name:<16}{s['median_ms']:>10.3f}{s['p99_ms']:>10.3f}{s['max_ms']:>10.3f}"


@bench.command("claims")
@click.option("--seed", default=1, show_default=True, help="Seed of the generated suites.")
@click.option(
    "--count",
    default=60,
    show_default=True,
    type=click.IntRange(min=6),
    help="Number of hard cases (prove and verify).",
)
@click.option(
    "--per-split",
    default=30,
    show_default=True,
    type=click.IntRange(min=2),
    help="Questions per split (decide, warm and fresh).",
)
@click.option(
    "--repeat",
    default=20,
    show_default=True,
    type=click.IntRange(min=1),
    help="Warm decisions timed per case.",
)
@click.option("--no-brute-force", is_flag=True, help="Skip the (slow) brute-force baseline.")
@click.option("--no-fresh", is_flag=True, help="Skip the fresh-process figures.")
@click.option("--json", "as_json", is_flag=True)
def bench_claims(
    seed: int,
    count: int,
    per_split: int,
    repeat: int,
    no_brute_force: bool,
    no_fresh: bool,
    as_json: bool,
) -> None:
    """Time decide per split (3-card, Mud, wild cards x valid, invalid, and Mud against
    an empty side), warm and in a fresh process asking each question once (shuffled,
    built from strings inside the timing), beside the naive brute force on the same
    questions; then prove and verify on a suite of hard claims."""
    splits = claim_bench.run_splits(
        seed=seed,
        per_split=per_split,
        repeat=repeat,
        fresh=None if no_fresh else claim_bench.ask_in_fresh_process,
    )
    r = claim_bench.run(seed=seed, count=count, repeat=repeat, brute=not no_brute_force)
    if as_json:
        emit_json({"splits": dataclasses.asdict(splits), "hard": dataclasses.asdict(r)})
        return
    click.echo(
        f"bench claims: seed {seed}, {per_split} questions per split, decide timed "
        f"{repeat} times each (warm)"
    )
    head = f"  {'(us)':<22}{'median':>9}{'p90':>9}{'p99':>9}{'max':>9}"
    click.echo(head + f"{'brute median':>14}{'brute p99':>11}{'ratio':>8}")
    for split, d in splits.decide.items():
        b = splits.brute_force[split]
        click.echo(
            f"  {split:<22}{d['median_us']:>9.1f}{d['p90_us']:>9.1f}{d['p99_us']:>9.1f}"
            f"{d['max_us']:>9.1f}{b['median_us']:>14.0f}{b['p99_us']:>11.0f}"
            f"{b['median_us'] / d['median_us']:>7.0f}x"
        )
    c = splits.construct
    click.echo(
        f"  {'question from strings':<22}{c['median_us']:>9.1f}{c['p90_us']:>9.1f}"
        f"{c['p99_us']:>9.1f}{c['max_us']:>9.1f}"
    )
    if splits.fresh:
        click.echo(
            f"  fresh process, each question once, shuffled, construction included "
            f"(first question: {splits.fresh_first_us:.0f} us):"
        )
        for split, d in splits.fresh.items():
            click.echo(
                f"  {split:<22}{d['median_us']:>9.1f}{d['p90_us']:>9.1f}{d['p99_us']:>9.1f}"
                f"{d['max_us']:>9.1f}"
            )
    click.echo(f"  brute force agrees on {splits.agrees}/{splits.total} questions")
    for name, ok in splits.checks.items():
        click.echo(f"  target {name}: {'met' if ok else 'MISSED'}")
    kinds = ", ".join(f"{n} {k}" for k, n in r.kinds.items())
    click.echo(f"hard claims: {r.count} cases (valid claims: {kinds})")
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


@bench.command("guide")
@click.option(
    "--sets",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("tests", "guide", "eval"),
    show_default=True,
    help="Folder of the guide's question sets: every <part>.toml in it is a part.",
)
@click.option(
    "--part",
    "parts",
    multiple=True,
    metavar="PART",
    help="Only these parts (file names without .toml, e.g. tuned, heldout); default: all.",
)
@click.option("--keywords-only", is_flag=True, help="Rank without the embedding model.")
@click.option("--json", "as_json", is_flag=True)
def bench_guide(
    directory: Path, parts: tuple[str, ...], keywords_only: bool, as_json: bool
) -> None:
    """Rules guide: top-1 section accuracy, direct answers, fallback precision and recall,
    latency, per game.

    'direct' is the share of answers (fallbacks aside) that lead with a direct answer; 'lead'
    counts the questions whose set names lead words (right/asked). Latency is per question with
    the guide already built (warm); building each game's guide is timed on its own.
    """
    from battlejudge.bench.guide import bench_guides

    try:
        figures = bench_guides(directory, parts, keywords_only)
    except ValueError as e:
        fail(str(e), EXIT_BAD_INPUT)
    model, build_ms, rows = figures.retrieval, figures.build_ms, figures.rows
    if as_json:
        emit_json({"retrieval": model, "build_ms": build_ms, "rows": [r.to_json() for r in rows]})
        return
    click.echo(
        f"rules guide, {model}; guide build ms: "
        + ", ".join(f"{g} {ms:.0f}" for g, ms in build_ms.items())
    )
    click.echo(
        f"{'part':8} {'game':16} {'qs':>4} {'oos':>4} {'top-1':>7} {'direct':>7} {'lead':>7} "
        f"{'fb P':>5} {'fb R':>5} {'conf.wrong':>10} {'med ms':>7} {'max ms':>7}"
    )
    for r in rows:
        f = r.figures
        pr = "-" if f.fallback_precision is None else f"{f.fallback_precision:.2f}"
        rc = "-" if f.fallback_recall is None else f"{f.fallback_recall:.2f}"
        direct = "-" if f.direct_share is None else f"{100 * f.direct_share:.1f}%"
        lead = "-"
        if f.with_lead:
            lead = f"{sum(bool(o.lead_right) for o in f.with_lead)}/{len(f.with_lead)}"
        click.echo(
            f"{r.part:8} {r.game:16} {len(f.in_scope):4} {len(f.out_of_scope):4} "
            f"{100 * f.accuracy:6.1f}% {direct:>7} {lead:>7} {pr:>5} {rc:>5} "
            f"{len(f.confident_wrong):10} {f.latency_ms(0.5):7.2f} {f.latency_ms(1.0):7.2f}"
        )


COMMANDS: tuple[click.Command, ...] = (bench,)


@bench.command("selfplay")
@click.option("--games", default=100, show_default=True, type=click.IntRange(min=1))
@click.option("--seed", default=1, show_default=True)
@click.option("--sign", is_flag=True, help="Sign every log record (Ed25519).")
@click.option(
    "--cluster",
    default="local",
    show_default=True,
    help="ray or ray://HOST:PORT: also the same run on Ray with 1 and 2 workers.",
)
@click.option("--json", "as_json", is_flag=True)
def bench_selfplay(games: int, seed: int, sign: bool, cluster: str, as_json: bool) -> None:
    """Random-vs-random self-play with every claim certified and logged (fsync per record),
    against the same games with claims decided but neither certified nor logged. With
    --cluster ray: the same certified run here and on Ray with 1 and 2 workers instead."""
    from battlejudge.bench.selfplay import SELFPLAY_TARGET, run_selfplay, selfplay_figures

    if cluster != "local":
        _bench_cluster(cluster, games, seed, as_json)
        return
    r = run_selfplay(games, seed, sign)
    if as_json:
        emit_json(selfplay_figures(r))
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
    met = "met" if r.games_per_s >= SELFPLAY_TARGET else "MISSED"
    click.echo(f"  target >= {SELFPLAY_TARGET} games/s on one core: {met}")


def _bench_cluster(cluster: str, games: int, seed: int, as_json: bool) -> None:
    """``bench selfplay --cluster``: games/s here and on Ray with 1 and 2 workers."""
    from battlejudge.bench.selfplay import run_cluster

    figures = run_cluster(cluster, games, seed)
    if as_json:
        emit_json(figures)
        return
    click.echo(f"bench selfplay --cluster {cluster}: {games} random-vs-random games, seed {seed}")
    click.echo(f"  local (one process):  {figures['local_games_per_s']:.1f} games/s")
    click.echo(f"  Ray, 1 worker:        {figures['ray_1_worker_games_per_s']:.1f} games/s")
    click.echo(f"  Ray, 2 workers:       {figures['ray_2_workers_games_per_s']:.1f} games/s")
    click.echo(
        f"  scaling 2 workers / 1 worker: {figures['scaling_2_over_1']:.2f}x; "
        f"2 workers / local: {figures['ray_2_over_local']:.2f}x"
    )


@bench.command("audit")
@click.option("--claims", "n_claims", default=1000, show_default=True, type=click.IntRange(min=1))
@click.option("--seed", default=1, show_default=True)
@click.option("--no-deep", is_flag=True, help="Skip the (slow) --deep figure.")
@click.option("--json", "as_json", is_flag=True)
def bench_audit(n_claims: int, seed: int, no_deep: bool, as_json: bool) -> None:
    """Audit a log of self-play claims (DRAT check of every certificate; and --deep, the
    brute-force oracle too), against re-proving every logged question from scratch."""
    from battlejudge.bench.audit import run_audit

    a = run_audit(n_claims, seed, deep=not no_deep)
    records, audit_s, deep_s, baseline_s = a.records, a.audit_s, a.deep_s, a.reprove_s
    if as_json:
        emit_json(a.to_json())
        return
    click.echo(
        f"bench audit: {records} logged claims from {a.games} self-play games, "
        f"{a.problems} problems"
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
    click.echo(
        f"  target <= 30 s per 1,000 records with the DRAT check: "
        f"{'met' if a.target_met else 'MISSED'}"
    )


# -- bench serve --------------------------------------------------------------------------
@bench.command("serve")
@click.option("--requests", "n_requests", default=3000, show_default=True, type=click.IntRange(10))
@click.option("--clients", default=16, show_default=True, type=click.IntRange(min=1))
@click.option("--workers", default=2, show_default=True, type=click.IntRange(min=1))
@click.option("--seed", default=1, show_default=True)
@click.option(
    "--malformed",
    default=0.1,
    show_default=True,
    type=click.FloatRange(0.0, 0.9),
    help="Share of malformed requests in the second run.",
)
@click.option(
    "--attack",
    is_flag=True,
    help="Instead: a victim asking single questions while attackers run (proof bombs, "
    "batches, deep verifies, slow bodies, idle connections), against no attack.",
)
@click.option(
    "--attack-seconds",
    default=3.0,
    show_default=True,
    type=click.FloatRange(min=0.5),
    help="Seconds of each --attack phase.",
)
@click.option("--json", "as_json", is_flag=True)
def bench_serve(
    n_requests: int,
    clients: int,
    workers: int,
    seed: int,
    malformed: float,
    attack: bool,
    attack_seconds: float,
    as_json: bool,
) -> None:
    """Certified claims over HTTP: `battlejudge serve` on loopback, a load generator in a
    separate process with CLIENTS concurrent keep-alive connections; claims/s and p50/p99
    latency, first with good requests only, then with a share of malformed ones (every
    answer checked against the in-process verdict), against the baseline of proving and
    verifying the same questions in one process without HTTP; a third run asks a new
    question every time (the workers keep the verified proofs of questions asked before,
    so the repeats of the first two runs cost less than a question never seen). With
    --attack: the
    victim's latency, errors and recovery under each attack of issue 15
    (battlejudge.bench.attack)."""
    if attack:
        _print_attack(workers, seed, attack_seconds, as_json)
        return
    from battlejudge.bench.serve import SUITE, run_name, run_serve

    try:
        r = run_serve(n_requests, clients, workers, seed, malformed)
    except ServiceError as e:
        raise click.ClickException(str(e)) from None
    if as_json:
        emit_json(r)
        return
    baseline = r["baseline_claims_per_s"]
    click.echo(
        f"bench serve: {n_requests} requests per run, {clients} clients, {workers} workers, "
        f"{SUITE} distinct questions in the first two (seed {seed})"
    )
    for run in r["runs"]:
        click.echo(
            f"  {run_name(run)}: {run['claims_per_s']:.0f} certified claims/s, "
            f"p50 {run['p50_ms']:.1f} ms, p99 {run['p99_ms']:.1f} ms; {run['wrong_answers']} "
            f"wrong answers, {run['unanswered']} unanswered (busy or out of time); "
            f"{run['malformed_rejected']}/{run['malformed']} malformed rejected"
        )
        click.echo(
            f"    ratio vs baseline (prove + verify in one process, no HTTP, same run: "
            f"{baseline:.0f} claims/s): {run['claims_per_s'] / baseline:.2f}x"
        )
    for name, ok in r["targets"].items():
        click.echo(f"  target {name}: {'met' if ok else 'MISSED'}")


@bench.command("log")
@click.option(
    "--records",
    default=None,
    type=click.IntRange(min=1),
    help="Records in the big log the inclusion proofs and the audit are timed on "
    "[default: 1,000,000; --quick: 5,000].",
)
@click.option(
    "--seconds",
    default=None,
    type=click.FloatRange(min=0.2),
    help="Seconds of each throughput point (each victim phase: twice that) "
    "[default: 5; --quick: 0.5].",
)
@click.option(
    "--clients",
    default=None,
    help="Numbers of concurrent clients, comma-separated [default: 1,16,64; --quick: 1,4].",
)
@click.option(
    "--interval",
    default=None,
    type=click.FloatRange(0.0, 60.0),
    metavar="SECONDS",
    help="The logged services' --checkpoint-interval (--commit-interval where serve has "
    "that instead) [default: serve's own].",
)
@click.option(
    "--fetches",
    default=None,
    type=click.IntRange(min=1),
    help="Inclusion proofs fetched from each log [default: 2000; --quick: 100].",
)
@click.option(
    "--pg-url",
    default=None,
    help="An empty PostgreSQL database for the PostgreSQL log (its tables are made); by "
    "default a temporary server is started with pgserver when it is installed.",
)
@click.option("--no-pg", is_flag=True, help="Measure the file log only.")
@click.option(
    "--quick", is_flag=True, help="Small sizes and short points: a smoke test, not figures."
)
@click.option("--json", "as_json", is_flag=True)
def bench_log(
    records: int | None,
    seconds: float | None,
    clients: str | None,
    interval: float | None,
    fetches: int | None,
    pg_url: str | None,
    no_pg: bool,
    quick: bool,
    as_json: bool,
) -> None:
    """The proof log under `battlejudge serve --workers 2`, each figure beside a baseline
    measured in the same run (battlejudge.bench.log): logged claims/s with a file log
    and a PostgreSQL log at each number of CLIENTS asking single questions (baseline: no
    log); a victim's p50/p99 while another client posts 256-question batches (baseline:
    the victim alone); the service's start and inclusion-proof fetches p50/p99 on a
    RECORDS-record log it builds (baseline: a 1,000-record log); the audit's time and
    peak memory on both."""
    from battlejudge.bench import log as bench_module

    counts_text = clients or ("1,4" if quick else "1,16,64")
    try:
        counts = tuple(int(x) for x in counts_text.split(","))
    except ValueError:
        fail(f"--clients {counts_text!r}: give numbers separated by commas, e.g. 1,16,64")
    if not counts or min(counts) < 1:
        fail(f"--clients {counts_text!r}: each number of clients is at least 1")
    settings = bench_module.Settings(
        records=records or (5_000 if quick else 1_000_000),
        seconds=seconds or (0.5 if quick else 5.0),
        warmup=0.3 if quick else 1.0,
        clients=counts,
        interval=interval,
        fetches=fetches or (100 if quick else 2000),
        verify=5 if quick else 20,
        pg_url=pg_url,
        serve_interval=serve_interval(),
    )

    def progress(what: str) -> None:
        if not as_json:
            click.echo(f"  ... {what}", err=True)

    with bench_module.postgresql(settings, no_pg) as settings:
        r = bench_module.run_bench_log(settings, progress)
    if as_json:
        emit_json(r)
        return
    _print_bench_log(settings, r)


def serve_interval() -> tuple[str, float]:
    """``battlejudge serve``'s option for how often its log commits or publishes, and its
    default: ``--checkpoint-interval`` (claims committed as they come, a checkpoint
    published at most this often) or, in versions before it, ``--commit-interval`` (claims
    committed together at most this often)."""
    from battlejudge.cli.serve import serve

    for param in serve.params:
        for name in ("--checkpoint-interval", "--commit-interval"):
            if name in param.opts:
                return name, float(param.default)  # type: ignore[arg-type]
    raise InputError("bench log: battlejudge serve has no --checkpoint-interval option")


def _print_bench_log(s: Any, r: dict[str, Any]) -> None:
    t = r["throughput"]
    option, interval = r["settings"]["interval_option"], r["settings"]["interval"]
    click.echo(
        f"bench log: battlejudge serve --workers {s.workers} {option} {interval:g} on "
        f"loopback, {r['settings']['cores']} cores; {s.seconds:g} s per point, "
        f"{r['settings']['questions']} distinct questions, one API key per client"
    )
    click.echo("  1. logged claims/s (each client asks single questions back to back)")
    click.echo(
        f"    {'backend':<12}{'clients':>8}{'claims/s':>10}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'errors':>8}{'baseline/s':>12}{'ratio':>8}"
    )
    for p in t["points"]:
        click.echo(
            f"    {p['backend']:<12}{p['clients']:>8}{p['claims_per_s']:>10.0f}"
            f"{p['p50_ms']:>9.1f}{p['p99_ms']:>9.1f}{p['errors']:>8}"
            f"{p['baseline_claims_per_s']:>12.0f}{p['ratio']:>8.2f}"
        )
    for b in t["baseline"]:
        click.echo(
            f"    baseline (no --log), {b['clients']} clients: {b['claims_per_s']:.0f} claims/s, "
            f"p50 {b['p50_ms']:.1f} ms, p99 {b['p99_ms']:.1f} ms, {b['errors']} errors"
        )
    if option == "--commit-interval" and interval > 0:
        click.echo(
            f"    (a client waits for its claim's commit, and commits start at most every "
            f"{interval:g} s: so at most CLIENTS / {interval:g} claims/s)"
        )
    v = r["victim"]
    click.echo(
        f"  2. a victim asking single questions one at a time, file log, {v['seconds']:g} s "
        "per phase"
    )
    for name, p in (("alone (baseline)", v["alone"]), ("beside batches", v["beside_batches"])):
        click.echo(
            f"    {name:<18} p50 {p['p50_ms']:7.1f} ms  p99 {p['p99_ms']:7.1f} ms  "
            f"{p['requests']:>5} requests, {p['errors']} errors"
        )
    click.echo(
        f"    the neighbour: {v['batches']} batches of 256 in {v['seconds']:g} s, "
        f"{v['batch_claims_logged_per_s']:.0f} logged claims/s; the victim's p99 "
        f"{v['ratio_p99']:.2f}x alone"
    )
    b, p = r["build"], r["proofs"]
    click.echo(
        f"  3. inclusion proofs (GET /v1/log/proof/SEQ, random records, one keep-alive "
        f"client, {s.fetches} fetches per log)"
    )
    click.echo(
        f"    {b['big']['records']:,}-record log built in {b['big']['seconds']:.1f} s "
        f"({b['big']['bytes'] / 1e6:,.0f} MB, and as much again in tiles)"
    )
    for name in ("big", "small"):
        q = p[name]
        tiles = "opened from its tiles" if q["opened_from_tiles"] else "its tiles REBUILT"
        click.echo(
            f"    {q['records']:>9,} records: p50 {q['p50_ms']:6.2f} ms  p99 "
            f"{q['p99_ms']:6.2f} ms, {q['verified']} verified; serve started in "
            f"{q['start_s']:.2f} s ({tiles})"
        )
        if q["service_rss_mb"] is not None:
            click.echo(f"      the service's RSS after the fetches: {q['service_rss_mb']:.0f} MB")
        click.echo(
            f"      the same proofs made in the bench's process (no HTTP): p50 "
            f"{q['in_process']['p50_ms']:.2f} ms, p99 {q['in_process']['p99_ms']:.2f} ms"
        )
    click.echo(
        f"    ratio to the {p['small']['records']:,}-record baseline: p50 "
        f"{p['ratio_p50']:.2f}x, p99 {p['ratio_p99']:.2f}x, start {p['ratio_start']:.2f}x"
    )
    a = r["audit"]
    click.echo("  4. battlejudge audit LOG --pubkey PUB --json (a child process)")
    for name in ("big", "small"):
        q = a[name]
        click.echo(
            f"    {q['records']:>9,} records: {q['seconds']:7.1f} s "
            f"({q['seconds'] / q['records'] * 1e6:.0f} us a record), peak RSS "
            f"{q['peak_rss_mb']:.0f} MB, {'clean' if q['clean'] else 'NOT CLEAN'}"
        )
    click.echo(
        f"    ratio to the baseline: {a['ratio_per_record']:.2f}x the time a record, "
        f"{a['ratio_peak_rss']:.2f}x the peak memory"
    )
    for note in r["notes"]:
        click.echo(f"  {note}")
    for name, ok in r["targets"].items():
        click.echo(f"  target {name}: {'met' if ok else 'MISSED'}")


def _print_attack(workers: int, seed: int, seconds: float, as_json: bool) -> None:
    from battlejudge.bench.attack import run_attack

    r = run_attack(workers, seed, seconds)
    if as_json:
        emit_json(r)
        return
    click.echo(
        f"bench serve --attack: {workers} workers, {r['cores']} cores, {seconds:g} s per "
        "phase; a victim asking single questions one at a time"
    )
    click.echo(
        f"  {'phase':<18}{'requests':>9}{'errors':>8}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'req/s':>8}{'back after':>12}"
    )
    for p in r["phases"]:
        back = "-" if p["recovery_s"] is None else f"{p['recovery_s']:.2f} s"
        if p["name"] != "no attack" and p["recovery_s"] is None:
            back = "> 2 s"
        click.echo(
            f"  {p['name']:<18}{p['requests']:>9}{p['errors']:>8}{p['p50_ms']:>9.1f}"
            f"{p['p99_ms']:>9.1f}{p['per_s']:>8.0f}{back:>12}"
        )
    for name, ok in r["targets"].items():
        click.echo(f"  target {name}: {'met' if ok else 'MISSED'}")


@bench.command("startup")
@click.option("--runs", default=7, show_default=True, type=click.IntRange(min=1))
@click.option("--json", "as_json", is_flag=True)
def bench_startup(runs: int, as_json: bool) -> None:
    """Whole-process wall time of one-shot commands (start-up included), beside two
    baselines run in turn with them: a bare interpreter, and importing every command
    module at once (how every command started before the commands were loaded lazily)."""
    from battlejudge.bench.startup import run_startup
    from battlejudge.cli.main import COMMANDS

    rows = run_startup(runs, (m for m, _, _ in COMMANDS.values()))
    if as_json:
        emit_json({"runs": runs, "rows": rows})
        return
    click.echo(f"bench startup: whole-process wall, median of {runs} runs (first round dropped)")
    click.echo(f"  {'command':<24}{'median s':>10}{'max s':>9}{'vs eager':>10}  target")
    for r in rows:
        target = (
            ""
            if r["target_s"] is None
            else f"<= {r['target_s']} s: " + ("met" if r["met"] else "MISSED")
        )
        click.echo(
            f"  {r['name']:<24}{r['median_s']:>10.3f}{r['max_s']:>9.3f}"
            f"{r['ratio_to_eager_import']:>9.2f}x  {target}"
        )


@bench.command("web")
@click.option("--questions", "count", default=40, show_default=True, type=click.IntRange(5))
@click.option("--seed", default=1, show_default=True)
@click.option("--chromium", default=None, help="Path of Chromium (default: found on PATH).")
@click.option("--json", "as_json", is_flag=True)
def bench_web(count: int, seed: int, chromium: str | None, as_json: bool) -> None:
    """The claim checker in a real browser: for each question, the page with all but the
    claimant's last troop in place, then the tap on that troop, timed in the page from the
    click to the swapped-in answer (the system's Chromium driven by Playwright, against
    `battlejudge serve` on loopback with 2 workers); beside the same question asked of
    `POST /v1/claims` from Python in the same run. Target: the answer within 100 ms of the
    tap (p90)."""
    import shutil

    from battlejudge.apps.web.chromium import find_chromium
    from battlejudge.bench.web import TARGET_P90_MS, run_web

    path = chromium or find_chromium()
    if path is None or shutil.which(path) is None:
        fail("bench web needs Chromium (apt-get install chromium), or --chromium PATH")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        fail("bench web needs Playwright: pip install playwright (the test extra has it)")
    try:
        r = run_web(path, count, seed)
    except ServiceError as e:
        raise click.ClickException(str(e)) from None
    if as_json:
        emit_json(r.to_json())
        return
    t, a, verdicts = r.tap_to_answer_ms, r.api_ms, r.verdicts
    click.echo(
        f"bench web: {r.questions} questions on the page ({verdicts['valid']} valid, "
        f"{verdicts['invalid']} invalid), seed {seed}, Chromium {path}"
    )
    click.echo(
        f"  tap to answer on the page: p50 {t['p50']:.0f} ms, p90 {t['p90']:.0f} ms, "
        f"max {t['max']:.0f} ms"
    )
    click.echo(
        f"  baseline POST /v1/claims from Python ({r.api_questions} other questions of the "
        f"same splits, same run): p50 {a['p50']:.0f} ms, "
        f"p90 {a['p90']:.0f} ms; ratio {t['p50'] / a['p50']:.1f}x at the median"
    )
    met = "met" if r.target_met else "MISSED"
    click.echo(f"  target answer within {TARGET_P90_MS} ms of the tap (p90): {met}")


@bench.command("battleplan")
@click.option(
    "--position",
    "position_file",
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    help="A position file (default: the bundled examples/battleplan/start-of-battle.json).",
)
@click.option("--player", type=click.Choice(["p1", "p2"]), default="p1", show_default=True)
@click.option("--runs", default=5, show_default=True, type=click.IntRange(min=1))
@click.option("--no-baseline", is_flag=True, help="Skip the CP-SAT method (about 30 s).")
@click.option("--json", "as_json", is_flag=True)
def bench_battleplan(
    position_file: str | None, player: str, runs: int, no_baseline: bool, as_json: bool
) -> None:
    """``battleplan ask threats`` on the start-of-battle position (issue 17: at most 1 s
    for the whole command): the whole command in a fresh process, the fast path in
    process, and the CP-SAT method it replaces, timed in the same run."""
    from importlib.resources import files

    import battlejudge.bench.battleplan as bp

    path = Path(
        position_file or str(files("battlejudge.examples") / "battleplan" / "start-of-battle.json")
    )
    times = bp.time_command(path, player, runs)
    command_s, command_cpu_s = times.median_s, times.cpu_median_s
    r = bp.run(path, ["p1", "p2"].index(player), repeat=runs, baseline=not no_baseline)
    met = command_s <= bp.TARGET_S
    if as_json:
        emit_json(
            dataclasses.asdict(r)
            | {
                "command_median_s": command_s,
                "command_cpu_median_s": command_cpu_s,
                "target_s": bp.TARGET_S,
                "met": met,
            }
        )
        return
    click.echo(f"bench battleplan: ask threats {path.name} {player}, median of {runs} runs")
    click.echo(
        f"  whole command (fresh process): {command_s:8.3f} s  (max {max(times.walls):.3f} s; "
        f"CPU {command_cpu_s:.3f} s)"
    )
    click.echo(
        f"  fast path (in process):        {r.fast_median_s:8.3f} s  (method: {r.fast_method})"
    )
    if r.baseline_s is not None:
        click.echo(
            f"  baseline, CP-SAT method:       {r.baseline_s:8.3f} s  "
            f"({r.baseline_s / r.fast_median_s:,.0f}x the fast path; same answer: "
            f"{'yes' if r.same_answer else 'NO'})"
        )
    click.echo(f"  target whole command <= {bp.TARGET_S:g} s: {'met' if met else 'MISSED'}")


@bench.command("leaf")
@click.option("--games", default=40, show_default=True, type=click.IntRange(min=1))
@click.option("--bots", default="heuristic,heuristic", show_default=True, help="The two bots.")
@click.option("--deck", type=click.Choice(["full", "troops"]), default="full", show_default=True)
@click.option("--seed", default=1, show_default=True)
@click.option(
    "--fit", is_flag=True, help="Also refit the troops-only leaf's weights on these games (SciPy)."
)
@click.option("--json", "as_json", is_flag=True)
def bench_leaf(games: int, bots: str, deck: str, seed: int, fit: bool, as_json: bool) -> None:
    """How well the expert's leaf foretells the game: the log loss of its chance to win
    every position of --games games against their results (a coin: 0.693), before and
    after its calibration, at other calibrations, and the troops-only game's learned leaf
    (--fit: its weights refitted on these games, as expert.LEARNED was)."""
    from battlejudge.bench.calibration import UNCALIBRATED, run_leaf
    from battlejudge.engines.battleline.bots import expert
    from battlejudge.engines.battleline.game import GAME

    names = [b.strip() for b in bots.split(",")]
    if len(names) != 2:
        raise click.BadParameter(f"two bots, comma-separated, got {bots!r}", param_hint="--bots")
    for n in names:
        GAME.make_bot(n, 0)  # an unknown name fails here, with the bots' list
    figures, after = run_leaf(names, games, deck, seed, fit)
    old, before, weights = UNCALIBRATED, figures["uncalibrated"], figures.get("fitted", [])
    if as_json:
        emit_json(figures)
        return
    click.echo(
        f"bench leaf: {games} games {names[0]} vs {names[1]}, {deck} deck, "
        f"{figures['positions']} positions (log loss of the leaf's chance to win; lower is better)"
    )
    click.echo(f"  coin (0.5)                          {math.log(2):.4f}")
    click.echo(
        f"  leaf before calibration             {before:.4f}  (hand {old['hand_p']:g}, "
        f"draws {old['draw_p']:g} x {old['draws']:g} per open place, tau {old['tau']:g})"
    )
    click.echo(
        f"  expert's leaf                       {after[expert.TAU]:.4f}  (hand "
        f"{expert.LEAF_HAND_P:g}, draws {expert.DRAW_P:g} x {expert.DRAWS:g}, tau {expert.TAU:g})"
        f"  ratio {figures['ratio']:.2f}x the uncalibrated"
    )
    click.echo(
        "  expert's leaf at other tau:         "
        + ", ".join(f"{t:g}: {v:.4f}" for t, v in after.items())
    )
    click.echo(f"  learned leaf (troops-only games)    {figures['learned']:.4f}  (expert.LEARNED)")
    if fit:
        click.echo(
            f"  learned leaf refitted on these      {figures['fitted_loss']:.4f}  weights "
            + ", ".join(f"{v:.4f}" for v in weights)
        )


@bench.command("bots")
@click.option("--bot", "name", default="expert", show_default=True, help="The bot measured.")
@click.option(
    "--baseline", default="search", show_default=True, help="The bot it plays and is compared to."
)
@click.option("--budget", default=0.2, show_default=True, type=click.FloatRange(min=0.001))
@click.option("--games", default=2, show_default=True, type=click.IntRange(min=1))
@click.option("--deck", type=click.Choice(["full", "troops"]), default="full", show_default=True)
@click.option("--seed", default=1, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def bench_bots(
    name: str, baseline: str, budget: float, games: int, deck: str, seed: int, as_json: bool
) -> None:
    """Seconds, search iterations and peak memory per decision of a searching bot against
    the baseline it plays (whole games at --budget seconds per move). Strength is the
    tournament's: `battlejudge tournament --bots expert,search --budget S` (README)."""
    from battlejudge.bench.bots import bots_figures, run_bots

    sa, sb = run_bots(name, baseline, budget, games, deck, seed)
    both = bool(sa.get("decisions")) and bool(sb.get("decisions"))
    figures = bots_figures(name, baseline, budget, games, deck, sa, sb)
    if as_json:
        emit_json(figures)
        return
    click.echo(
        f"bench bots: {name} against {baseline}, {games} games, {deck} deck, budget {budget} s"
    )
    click.echo(
        f"  {'bot':<10}{'moves':>7}{'median s':>10}{'p95 s':>9}{'max s':>9}{'iter':>7}"
        f"{'peak MiB':>10}"
    )
    for who, s in ((name, sa), (baseline, sb)):
        if not s.get("decisions"):
            click.echo(f"  {who:<10}{0:>7}")
            continue
        click.echo(
            f"  {who:<10}{s['decisions']:>7.0f}{s['median_s']:>10.3f}{s['p95_s']:>9.3f}"
            f"{s['max_s']:>9.3f}{s['median_iterations']:>7.0f}{s['peak_mib']:>10.1f}"
        )
    if not both:
        click.echo(f"  no ratio: {name if not sa.get('decisions') else baseline} never searched")
        return
    peak = figures["ratio_peak_mib"]
    click.echo(
        f"  ratio {name}/{baseline}: {figures['ratio_median_s']:.2f}x the time per move, "
        + (f"{peak:.2f}x the peak memory per move" if peak is not None else "no memory ratio")
    )


# -- bench tables -------------------------------------------------------------------------
@bench.command("tables")
@click.option(
    "--tables", default=100, show_default=True, type=click.IntRange(min=1), help="Tables at once."
)
@click.option(
    "--think",
    default=0.5,
    show_default=True,
    type=click.FloatRange(min=0.0),
    metavar="SECONDS",
    help="Each seat's think time before an action, jittered ±50% (seeded), to model people; "
    "0: act as fast as possible.",
)
@click.option(
    "--seconds",
    default=30.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds measured after the warm-up.",
)
@click.option(
    "--warmup",
    default=5.0,
    show_default=True,
    type=click.FloatRange(min=0.0),
    metavar="SECONDS",
    help="Seconds played before the measuring starts.",
)
@click.option(
    "--actions",
    default=None,
    type=click.IntRange(min=1),
    help="Stop the measuring once this many actions are made (before --seconds).",
)
@click.option(
    "--baseline-seconds",
    default=5.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Seconds of the one-table baseline (run first, same think time).",
)
@click.option(
    "--seed", default=1, show_default=True, help="Seed of the tables, thinks and choices."
)
@click.option(
    "--workers",
    default=2,
    show_default=True,
    type=click.IntRange(min=1),
    help="The started service's --workers.",
)
@click.option(
    "--store",
    default=None,
    metavar="DIR|URL",
    help="The started service's --tables (a directory or a postgresql:// URL) "
    "[default: a temporary directory].",
)
@click.option(
    "--url",
    default=None,
    metavar="http://HOST:PORT",
    help="Aim at this running service (with its tables) instead of starting one.",
)
@click.option(
    "--one-address",
    is_flag=True,
    help="Every seat from one address, as a club behind one NAT (by default each seat on "
    "loopback has an address of its own, so the service sees each person as a client).",
)
@click.option("--json", "as_json", is_flag=True)
def bench_tables(
    tables: int,
    think: float,
    seconds: float,
    warmup: float,
    actions: int | None,
    baseline_seconds: float,
    seed: int,
    workers: int,
    store: str | None,
    url: str | None,
    one_address: bool,
    as_json: bool,
) -> None:
    """Online tables played by scripted seats (battlejudge.bench.tables): TABLES tables at
    once, each seat holding its event stream open and acting when its view says so (a
    random legal action after THINK seconds ±50%); for each action, the time from sending
    it to the other seat's stream delivering the new version, and the POST's own time;
    beside a one-table baseline measured first in the same run. A finished game's table is
    replaced by a new one. By default against `battlejudge serve --workers 2 --tables
    TMPDIR` started for the run. The issue's target: on a quiet 2-core machine, 100
    tables, p99 <= 100 ms; a miss is printed, not an error exit."""
    from battlejudge.bench.tables import Settings, endpoint_of, run_tables

    if store is not None and url is not None:
        raise click.UsageError("--store goes with the service the bench starts, not --url")
    try:
        if url is not None:
            endpoint_of(url)
        settings = Settings(
            tables=tables,
            think=think,
            seconds=seconds,
            warmup=warmup,
            actions=actions,
            baseline_seconds=baseline_seconds,
            seed=seed,
            workers=workers,
            store=store,
            url=url,
            one_address=one_address,
        )

        def progress(what: str) -> None:
            if not as_json:
                click.echo(f"  ... {what}", err=True)

        r = run_tables(settings, progress)
    except InputError as e:
        fail(str(e))
    except ServiceError as e:
        raise click.ClickException(str(e)) from None
    if as_json:
        emit_json(r)
        return
    _print_bench_tables(r)


def _print_bench_tables(r: dict[str, Any]) -> None:
    s, run, base = r["settings"], r["run"], r["baseline"]
    think = "as fast as possible" if s["think_s"] == 0 else f"think {s['think_s']:g} s ±50%"
    click.echo(
        f"bench tables: {s['tables']} tables of two scripted seats, {think}; against "
        f"{r['service']} ({r['cores']} cores; seat addresses: {r['seat_addresses']}); "
        f"{run['seconds']:.1f} s measured after a {s['warmup_s']:g} s warm-up (seed {s['seed']})"
    )
    click.echo(
        f"  {'':<14}{'actions':>8}{'per s':>8}  {'action -> other seat event ms':<32}"
        f"{'POST ms':<16}{'games':>6}"
    )
    click.echo(
        f"  {'tables':<14}{'':>8}{'':>8}  {'p50':>7}{'p90':>8}{'p99':>8}{'max':>8}  "
        f"{'p50':>7}{'p99':>8} {'ended':>6}"
    )
    for name, f in ((f"{run['tables']}", run), ("1 (baseline)", base)):
        e, p = f["event_ms"], f["post_ms"]
        click.echo(
            f"  {name:<14}{f['actions']:>8}{f['actions_per_s']:>8.1f}  {e['p50']:>7.1f}"
            f"{e['p90']:>8.1f}{e['p99']:>8.1f}{e['max']:>8.1f}  {p['p50']:>7.1f}{p['p99']:>8.1f}"
            f" {f['games_finished']:>6}"
        )
    ratio = r["ratio_p99"]
    click.echo(
        f"  ratio p99({run['tables']})/p99(1): "
        + ("-" if ratio is None else f"{ratio:.2f}x")
        + f" (the baseline's p99 is of {base['events_timed']} actions)"
    )
    for name, f in ((f"{run['tables']} tables", run), ("baseline", base)):
        errors = ", ".join(f"{k}: {v}" for k, v in f["errors"].items()) or "none"
        click.echo(f"  errors ({name}, warm-up included): {errors}")
    lag = run["bench_loop_lag_ms"]
    service = run["service_cpu_s"]
    click.echo(
        f"  the bench's own process: {run['bench_cpu_s']:.1f} CPU s in {run['seconds']:.1f} s "
        f"({run['bench_cpu_share']:.0%} of a core), its loop's lag p99 {lag['p99']:.1f} ms, "
        f"max {lag['max']:.1f} ms"
        + (
            ""
            if service is None
            else f"; the service (all its processes): {service:.1f} CPU s "
            f"({service / run['seconds'] / r['cores']:.0%} of {r['cores']} cores)"
        )
    )
    t = r["target"]
    note = "" if s["tables"] == t["tables"] else f" (the target is for {t['tables']} tables)"
    click.echo(f"  target p99 <= {t['p99_ms']:g} ms: {'met' if t['met'] else 'missed'}{note}")


@bench.command("rl")
@click.option(
    "--game",
    "game_names",
    multiple=True,
    help="An environment to measure (battleline, nine_circles, battleplan, lines_of_battle, "
    "force_duel; repeat it; default: all).",
)
@click.option(
    "--seconds",
    default=3.0,
    show_default=True,
    type=click.FloatRange(min=0.001),
    help="CPU seconds of random play per game, for the engine and again for PettingZoo.",
)
@click.option(
    "--games",
    default=3,
    show_default=True,
    type=click.IntRange(min=1),
    help="Random OpenSpiel games per game whose states time the per-call figures.",
)
@click.option(
    "--states",
    "max_states",
    default=2000,
    show_default=True,
    type=click.IntRange(min=1),
    help="At most this many states per game for the per-call figures.",
)
@click.option("--seed", default=1, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def bench_rl(
    game_names: tuple[str, ...],
    seconds: float,
    games: int,
    max_states: int,
    seed: int,
    as_json: bool,
) -> None:
    """The games for reinforcement learning (battlejudge.bench.rl), per game: the engine's
    own random playouts (the baseline: legal actions, apply, chance; no tensors), the
    PettingZoo environment played by random masked agents (observation, mask, step), both
    in decisions per CPU second, and their ratio; OpenSpiel's observation_tensor,
    information_state_tensor and legal_actions in microseconds per call (median over the
    decision states of random games). Targets (issue 37): PettingZoo Battle Line >= 5,000
    steps/s on a quiet core, information_state_tensor <= 100 us; a miss is printed, not
    an error exit."""
    try:
        from battlejudge.apps.rl.pettingzoo_envs import ENV_GAMES
        from battlejudge.bench.rl import run_rl
    except ImportError as e:
        fail(f"bench rl needs the rl extra (pip install 'battlejudge[rl]'): {e}")
    for name in game_names:
        if name not in ENV_GAMES:
            fail(f"--game {name!r} is not an environment (games: {', '.join(ENV_GAMES)})")
    chosen = list(dict.fromkeys(game_names)) or list(ENV_GAMES)

    def progress(game: str) -> None:
        if not as_json:
            click.echo(f"  ... {game}", err=True)

    r = run_rl(chosen, seconds, games, seed, max_states, progress)
    if as_json:
        emit_json(r)
        return
    s = r["settings"]
    click.echo(
        f"bench rl: {s['seconds']:g} CPU s of random play per game and figure, "
        f"{s['openspiel_games']} OpenSpiel games for the per-call figures, seed {s['seed']}; "
        f"{r['cores']} cores, load average {r['load_average_before'][0]:.2f} before, "
        f"{r['load_average_after'][0]:.2f} after"
    )
    click.echo(
        f"  {'game':<16}{'engine st/s':>12}{'PettingZoo st/s':>16}{'ratio':>7}"
        f"{'obs us':>9}{'infostate us':>13}{'legal us':>10}{'states':>8}"
    )
    for row in r["rows"]:
        click.echo(
            f"  {row['game']:<16}{row['engine_steps_per_s']:>12,.0f}"
            f"{row['pettingzoo_steps_per_s']:>16,.0f}{row['ratio']:>6.2f}x"
            f"{row['observation_tensor_us']:>9.1f}{row['information_state_tensor_us']:>13.1f}"
            f"{row['legal_actions_us']:>10.1f}{row['states']:>8}"
        )
    click.echo(
        "  (st/s: decisions per CPU second, each with the chance after it; ratio: PettingZoo "
        "over the engine's own playouts, same run)"
    )
    for name, t in r["targets"].items():
        bound = f">= {t['at_least']:,.0f}" if "at_least" in t else f"<= {t['at_most']:g}"
        verdict = "not measured" if t["met"] is None else ("met" if t["met"] else "MISSED")
        measured = "" if t["measured"] is None else f" (measured {t['measured']:,.1f})"
        click.echo(f"  target {name} {bound} ({t['game']}): {verdict}{measured}")
