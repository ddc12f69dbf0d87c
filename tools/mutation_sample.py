"""Restrict a cosmic-ray session to the code under study (tools/mutation.sh).

``python tools/mutation_sample.py SESSION.sqlite [--only NAME,NAME] [--sample N] [--seed S]``

Marks as *skipped* (cosmic-ray's own outcome for work it does not run) every mutant
outside the named top-level functions or methods (``--only``, cosmic-ray's
``definition_name``), then, if ``--sample N`` is given, every mutant but a uniform random
sample of N of the rest. The sample is drawn from the mutants sorted by position and
operator, so the same source, ``N`` and seed give the same mutants. ``cr-report`` counts
only the mutants that ran. Not part of the package.
"""

from __future__ import annotations

import argparse
import random
import sqlite3

from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import WorkerOutcome, WorkResult


def rerun_survivors(session: str) -> None:
    """Drop the survivors' results: ``cosmic-ray exec`` then runs exactly them again (with
    the tests as they are now), and every other result stays."""
    with sqlite3.connect(session) as db:
        n = db.execute("DELETE FROM work_results WHERE upper(test_outcome) = 'SURVIVED'").rowcount
    print(f"{session}: {n} survivors to run again")


def main() -> None:
    """Parse the arguments and mark the mutants left out as skipped."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("session")
    ap.add_argument("--only", default="", help="comma-separated function or method names")
    ap.add_argument("--sample", type=int, default=0, help="run only N mutants (0: all)")
    ap.add_argument("--seed", type=int, default=35)
    ap.add_argument(
        "--rerun-survivors",
        action="store_true",
        help="forget the results of the mutants that survived, so exec runs them again",
    )
    args = ap.parse_args()
    if args.rerun_survivors:
        rerun_survivors(args.session)
        return
    only = {n for n in args.only.split(",") if n}
    with use_db(args.session, WorkDB.Mode.open) as db:
        items = []
        for item in db.pending_work_items:
            (spec,) = item.mutations
            key = (
                str(spec.module_path),
                spec.start_pos,
                spec.end_pos,
                spec.operator_name,
                spec.occurrence,
            )
            items.append((key, item.job_id, spec.definition_name))
        items.sort()
        kept = [job for _, job, name in items if not only or name in only]
        if args.sample and len(kept) > args.sample:
            kept = random.Random(args.seed).sample(kept, args.sample)
        keep = set(kept)
        skip = [job for _, job, _ in items if job not in keep]
        if skip:
            db.set_multiple_results(skip, WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
        print(f"{args.session}: {len(keep)} mutants to run, {len(skip)} skipped")


if __name__ == "__main__":
    main()
