"""A pytest plugin for mutation runs (tools/mutation.sh): the Hypothesis profile
``mutation``, deterministic and without an example database, so that every mutant meets
the same examples and a failure found on one mutant is not replayed on the next.

Loaded with ``-p mutation_profile --hypothesis-profile=mutation`` (``tools/`` on
``PYTHONPATH``). Not part of the package.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "mutation",
    max_examples=int(os.environ.get("MUTATION_EXAMPLES", "40")),
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
