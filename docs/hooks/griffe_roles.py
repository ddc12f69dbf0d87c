"""A griffe extension for the API reference: the docstrings' Sphinx roles
(:class:`Card`, :func:`~battlejudge.x.f`) become Markdown code spans, since the
docstrings are read as Markdown."""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|func|meth|data|attr|mod|exc|obj|const|ref):`~?([^`]+)`")


class SphinxRoles(griffe.Extension):
    """Rewrites every docstring of the loaded objects, once, when it is loaded."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Replace the roles of ``obj``'s own docstring by code spans."""
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(r"`\1`", obj.docstring.value)
