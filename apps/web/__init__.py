"""The web table, served by ``battlejudge serve`` beside the JSON API (docs/web.md).

Pages: the claim checker at ``/`` (the question in the URL; the answer, the certificate to
download and a drop zone to verify one; :mod:`.checker_routes`), the table viewer at
``/game`` (:mod:`.game_routes`), the online tables' lobby and pages at ``/tables``
(:mod:`.tables_routes`, over :mod:`battlejudge.apps.tables`), play against a bot at
``/play`` (:mod:`.play_routes`, a table of the same kind) and the judge's audit at
``/audit`` (:mod:`.audit_routes`), gathered with the pages' static files in :mod:`.routes`;
what they share (templates, the answer panel) is in :mod:`.pages`. Work that takes time runs
in the service's worker processes, in modules free of the web stack (:mod:`.game_work`,
:mod:`.audit_work`, :mod:`battlejudge.apps.tables.work`), which is why this package's own
module imports nothing. Everything the pages load comes from this package (``static/``:
htmx, vendored from the npm registry, and the pages' own style and scripts), so they work
offline. The pages hold no model of the rules: every answer is the server's, from the
project's own code.
"""
