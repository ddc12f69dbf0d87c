"""The API's own documentation and liveness: ``/docs`` (Swagger UI served from the package's
own copy, so it works offline), the Swagger UI files it loads, ``/healthz``, and the file
schemas (positions, certificates) the OpenAPI document refers to."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse, HTMLResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from battlejudge.engines.battleline.position import PositionFile
from battlejudge.proofs.battleline.certificate import CertificateFile

SWAGGER_UI: Final = Path(__file__).parent.parent / "static" / "swagger-ui"
"""The vendored Swagger UI (its README says where it comes from)."""
_ASSETS: Final = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui-init.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon-32x32.png": "image/png",
}
_DOCS_PAGE: Final = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>battlejudge - API</title>
<link rel="stylesheet" href="/static/swagger-ui/swagger-ui.css">
<link rel="icon" href="/static/swagger-ui/favicon-32x32.png">
<script src="/static/swagger-ui/swagger-ui-bundle.js" defer></script>
<script src="/static/swagger-ui/swagger-ui-init.js" defer></script>
</head>
<body>
<div id="swagger-ui"></div>
</body>
</html>
"""
"""``/docs``: Swagger UI with no inline script (the Content-Security-Policy allows none), its
set-up in ``swagger-ui-init.js``, ours, beside the vendored files."""

router = APIRouter()


@router.get("/docs", include_in_schema=False)
async def docs() -> HTMLResponse:
    """Swagger UI from the package's own copy (apps/static/swagger-ui)."""
    return HTMLResponse(_DOCS_PAGE)


@router.get("/static/swagger-ui/{name}", include_in_schema=False)
async def swagger_asset(name: str) -> Response:
    """The Swagger UI files /docs loads."""
    if name not in _ASSETS:
        raise StarletteHTTPException(404)
    return FileResponse(SWAGGER_UI / name, media_type=_ASSETS[name])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """Liveness: ``{"status": "ok"}``."""
    return {"status": "ok"}


def add_file_schemas(app: FastAPI) -> None:
    """Put the position and certificate file schemas into the OpenAPI components."""
    original = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            doc = original()
            components = doc.setdefault("components", {}).setdefault("schemas", {})
            for name, model in (
                ("PositionFile", PositionFile),
                ("CertificateFile", CertificateFile),
            ):
                schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
                components.update(schema.pop("$defs", {}))
                components[name] = schema
            app.openapi_schema = doc
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
