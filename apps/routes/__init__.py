"""The JSON API's routers, one module per area, gathered by
:func:`battlejudge.apps.service.create_app`:

- :mod:`.docs`: ``/docs`` (Swagger UI from the package's own copy), its files, ``/healthz``;
- :mod:`.claims`: ``POST /v1/claims`` and ``/v1/claims:batch``;
- :mod:`.certificates`: ``POST /v1/verify``;
- :mod:`.positions`: ``POST /v1/positions/claim``;
- :mod:`.log`: the proof log, C2SP tlog-tiles at the root and ``/v1/log/...``.

What they share (the running service, the client's name, the answer's JSON and its errors,
the OpenAPI fragments) is in :mod:`.common`. The web pages' routers are in
:mod:`battlejudge.apps.web`.
"""
