"""HTTP/1.1 over raw asyncio streams for the load generators of ``bench serve`` and its
attacks: a client must cost less than the server it measures, so it writes its requests
and reads the answers itself."""

from __future__ import annotations

import asyncio

__all__ = ["post_request", "read_response"]


def post_request(path: str, key: str | None, body: bytes) -> bytes:
    """A JSON POST to ``path`` on loopback, with the API ``key`` as bearer (None: none)."""
    auth = "" if key is None else f"Authorization: Bearer {key}\r\n"
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """An HTTP/1.1 response's status and body (read to its Content-Length)."""
    status = int((await reader.readline()).split()[1])
    length = 0
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    return status, await reader.readexactly(length)
