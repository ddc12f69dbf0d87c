"""mkdocs hooks: the pages made from the code rather than written by hand.

- ``<!-- battlejudge:schema module:function -->`` becomes the JSON Schema that function
  returns (the same one ``battlejudge schema ...`` prints), in a collapsed block;
- ``<!-- battlejudge:http-api -->`` becomes the HTTP API reference, from the OpenAPI document
  of the service's FastAPI application (``battlejudge.apps.service.create_app``), and the whole
  document is published as ``openapi.json`` beside the site;
- the CLI reference comes from click through mkdocs-click, and the Python API from the
  docstrings through mkdocstrings: those need no hook.
"""

from __future__ import annotations

import importlib
import json
import re
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

MARKER = "<!-- battlejudge:http-api -->"
SCHEMA = re.compile(r"<!-- battlejudge:schema ([\w.]+):([\w.]+) -->")


def _openapi() -> dict[str, Any]:
    from battlejudge.apps.service import create_app

    return create_app().openapi()


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _schema_block(schema: dict[str, Any]) -> list[str]:
    return ["```json", *json.dumps(schema, indent=2).splitlines(), "```", ""]


def http_api_markdown(spec: dict[str, Any]) -> str:
    """One section per operation: its summary and description, its query and path parameters,
    its request body's schema and its responses."""
    lines: list[str] = []
    for path, operations in spec["paths"].items():
        for method, op in operations.items():
            lines += [f"## `{method.upper()} {path}`", ""]
            if op.get("summary"):
                lines += [f"**{op['summary']}.**", ""]
            if op.get("description"):
                lines += [op["description"].replace("``", "`"), ""]
            params = op.get("parameters", [])
            if params:
                lines += [
                    "| parameter | in | type | required | default |",
                    "| --- | --- | --- | --- | --- |",
                ]
                for p in params:
                    schema = p.get("schema", {})
                    default = _cell(json.dumps(schema["default"])) if "default" in schema else ""
                    required = "yes" if p.get("required") else "no"
                    lines.append(
                        f"| `{p['name']}` | {p['in']} | {schema.get('type', '')} "
                        f"| {required} | {default} |"
                    )
                lines.append("")
            body = op.get("requestBody", {}).get("content", {}).get("application/json")
            if body:
                lines += ['??? note "Request body (JSON Schema)"', ""]
                lines += ["    " + line for line in _schema_block(body["schema"])]
            lines += ["| status | meaning |", "| --- | --- |"]
            for status, response in op.get("responses", {}).items():
                lines.append(f"| {status} | {_cell(response.get('description', ''))} |")
            lines.append("")
    components = spec.get("components", {}).get("schemas", {})
    if components:
        lines += ["## Schemas", ""]
        for name, schema in components.items():
            lines += [f'??? note "{name}"', ""]
            lines += ["    " + line for line in _schema_block(schema)]
    return "\n".join(lines)


def _schema_markdown(match: re.Match[str]) -> str:
    function: Any = importlib.import_module(match[1])
    for name in match[2].split("."):
        function = getattr(function, name)
    schema = function()
    title = schema.get("title", match[2])
    return "\n".join(
        [f'??? example "JSON Schema: {title}"', ""]
        + ["    " + line if line else "" for line in _schema_block(schema)]
    )


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Publish the service's OpenAPI document as ``openapi.json``."""
    files.append(
        File.generated(config, "openapi.json", content=json.dumps(_openapi(), indent=2) + "\n")
    )
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Fill the generated sections of the pages that ask for them."""
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, http_api_markdown(_openapi()))
    return SCHEMA.sub(_schema_markdown, markdown)
