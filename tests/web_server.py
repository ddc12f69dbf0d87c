"""Helpers of the web table's tests: a live service, ``create_app`` served by uvicorn in a thread on
127.0.0.1 and a free port, its worker processes forked from multiprocessing's forkserver (as
in ``battlejudge serve``), and the attributes of a page."""

from __future__ import annotations

import multiprocessing
import socket
import threading
import time
from html.parser import HTMLParser

import uvicorn

from battlejudge.apps.service import ServiceConfig, create_app


class LiveServer:
    """The service with its web pages (``create_app(config)``), on a random free port of
    127.0.0.1: the web table's, the service's and the service log's tests use it."""

    def __init__(self, config: ServiceConfig | None = None) -> None:
        from multiprocessing import forkserver

        multiprocessing.get_context("forkserver").set_forkserver_preload(
            ["battlejudge.apps.claim_work"]
        )
        forkserver.ensure_running()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        app = self.app = create_app(config or ServiceConfig())
        cfg = uvicorn.Config(app, log_level="warning", access_log=False)
        self.server = uvicorn.Server(cfg)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]})

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        tables = self.app.state.running.get("tables")
        if tables is not None:  # open event streams would hold the shutdown
            tables.end_streams()
        self.server.should_exit = True
        self.thread.join(20)
        self.sock.close()


class Attributes(HTMLParser):
    """Every attribute of a page, by name: ``found["data-verdict"]`` lists its values."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.found: dict[str, list[str]] = {}
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            self.found.setdefault(name, []).append(value or "")
        for name, value in attrs:
            if name in ("src", "href"):
                self.found.setdefault(f"{tag}.{name}", []).append(value or "")
