"""How an engine (bot, referee, online table) asks battlejudge about claims.

Run it: ``python -m battlejudge.examples.engine_api`` (CI runs it too).
"""

from __future__ import annotations

from battlejudge.solver import battleline as bl


def main() -> None:
    # Every turn, the fast decision for each flag: a few microseconds, no SAT call.
    table = [
        bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10"),
        bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8"),
        bl.ClaimQuestion(mine="G1 G2 G3", theirs="alexander", mud=False),
    ]
    for q in table:
        d = bl.decide(q)
        print(f"{q!r}: {'claimable' if d.valid else 'not yet'}")

    # When a player claims: the certified verdict, kept as evidence.
    p = bl.prove(table[0])
    assert bl.verify(p) is True
    print(p.verdict, [str(c) for c in p.blocking], p.explanation[0])

    # A refused claim is answered with the completion that beats it.
    refused = bl.prove(table[1])
    assert refused.witness is not None
    print(refused.explanation[0])


if __name__ == "__main__":
    main()
