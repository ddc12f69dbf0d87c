"""A griffe extension for the API reference: the docstrings are written for Sphinx and read
as Markdown, so their roles (:class:`Card`, :func:`~battlejudge.x.f`) become code spans and
the ``::`` that opens a literal block becomes a ``:`` (the indented block after it is already
a Markdown code block)."""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|func|meth|data|attr|mod|exc|obj|const|ref):`~?([^`]+)`")
LITERAL = re.compile(r"(?<=\S)::$", re.MULTILINE)


class SphinxRoles(griffe.Extension):
    """Rewrites every docstring of the loaded objects, once, when it is loaded."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Rewrite ``obj``'s own docstring for Markdown."""
        if obj.docstring is not None:
            obj.docstring.value = LITERAL.sub(":", ROLE.sub(r"`\1`", obj.docstring.value))
