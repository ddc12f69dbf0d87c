"""``battlejudge demo``: adjudicate the bundled rulebook examples."""

from __future__ import annotations

import click

from battlejudge import examples
from battlejudge.cli.common import EXIT_NO, EXIT_OK, emit_json
from battlejudge.engines.battleline.answer_json import result_json
from battlejudge.solver import battleline as bl


@click.command()
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='One JSON document: {"examples": [{"name", "source", "expected", "as_expected", '
    '"verified", ...claim --json\'s keys}], "count", "as_expected"}.',
)
def demo(as_json: bool) -> None:
    """Adjudicate the rulebook's flag examples (examples/rulebook.json): each verdict
    with its explanation or witness, every certificate checked.

    Exit 0 when every example gets the verdict (and blocking set) the rulebook gives.
    """
    cases = examples.rulebook_cases()
    agree = 0
    results = []
    for case in cases:
        q = bl.ClaimQuestion.from_json(case["question"])
        p = bl.prove(q)
        verified = bl.verify(p)
        expected_blocking = case.get("blocking")
        ok = p.verdict == case["verdict"] and (
            expected_blocking is None or [str(c) for c in p.blocking] == expected_blocking
        )
        agree += ok
        if as_json:
            results.append(
                {
                    "name": case["name"],
                    "source": case["source"],
                    "expected": case["verdict"],
                    "as_expected": ok,
                    "verified": verified,
                    **result_json(p),
                }
            )
            continue
        colour = "green" if p.valid else "red"
        click.echo(click.style(f"{p.verdict.upper():8}", fg=colour, bold=True) + case["name"])
        click.echo(f"  source: {case['source']}")
        theirs = bl.format_cards(q.theirs) or "-"
        env = "".join(f", {n}" for n, on in (("Mud", q.mud), ("Fog", q.fog)) if on)
        click.echo(
            f"  mine {bl.format_cards(q.mine)} ({p.mine.label}) against {theirs}"
            f"; seen {bl.format_cards(q.seen) or '-'}{env}"
        )
        for line in p.explanation:
            click.echo(f"  {line}")
        if p.valid:
            cert = p.certificate
            assert cert.proof is not None
            click.echo(
                f"  blocking set {{{', '.join(map(str, p.blocking))}}}; DRAT proof of "
                f"{cert.proof.count(chr(10))} lines verified by dratify"
            )
        else:
            click.echo("  witness replayed by the rules code and the independent oracle")
        if not ok:
            click.secho(f"  EXPECTED {case['verdict']} {expected_blocking or ''}", fg="red")
        click.echo()
    if as_json:
        emit_json({"examples": results, "count": len(cases), "as_expected": agree})
    else:
        click.echo(
            f"{len(cases)} rulebook examples adjudicated; {agree} as the rulebook says; "
            f"every certificate verified."
        )
    raise click.exceptions.Exit(EXIT_OK if agree == len(cases) else EXIT_NO)


COMMANDS: tuple[click.Command, ...] = (demo,)
