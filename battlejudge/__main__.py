"""``python -m battlejudge``: the ``battlejudge`` command (the same click group as the
console script; everything lives in :mod:`battlejudge.cli.main`)."""

from __future__ import annotations

from battlejudge.cli.main import main

if __name__ == "__main__":
    main()
