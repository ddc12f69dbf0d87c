"""Hypothesis profiles: the default keeps CI quick; ``--hypothesis-profile=thorough``
runs many more examples of every property test."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

_common = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.filter_too_much],
}
settings.register_profile("default", max_examples=150, **_common)  # type: ignore[arg-type]
settings.register_profile("thorough", max_examples=3000, **_common)  # type: ignore[arg-type]
settings.load_profile("default")
