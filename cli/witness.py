"""``battlejudge witness``: run a witness of proof logs (c2sp.org/tlog-witness), print its
verifier key, or answer one add-checkpoint request from a file.

Exit codes: 0 done (cosigned), 1 the witness refused the checkpoint (the line says why and
the HTTP status the service would give), 2 bad input (an unreadable key, request or state;
one line, never a traceback).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from battlejudge.cli.common import EXIT_NO, emit_json, fail
from battlejudge.proofs.keys import load_private_key, load_public_key
from battlejudge.proofs.witness import (
    MAX_BODY,
    MalformedRequest,
    Witness,
    WitnessRefusal,
    battlejudge_logs,
    witness_vkey,
)

_KEY = click.option(
    "--key",
    type=click.Path(exists=True, dir_okay=False),
    required=True,
    help="The witness's private key (a PEM file of battlejudge keys new).",
)
_NAME = click.option(
    "--name",
    required=True,
    help="The witness's key name, e.g. witness.example.org/w1 (no spaces, no '+').",
)
_STATE = click.option(
    "--state",
    type=click.Path(file_okay=False),
    required=True,
    help="The folder where the witness keeps the latest checkpoint it cosigned of each log.",
)
_LOGS = click.option(
    "--log",
    "logs",
    type=click.Path(exists=True, dir_okay=False),
    multiple=True,
    required=True,
    help="The public key (PEM) of a log to witness; repeat for more logs. A log's "
    "checkpoints have the origin battlejudge/KEYID of its key.",
)


def _witness(key: str, name: str, state: str, logs: tuple[str, ...]) -> Witness:
    return Witness(
        state, load_private_key(key), name, battlejudge_logs([load_public_key(p) for p in logs])
    )


@click.group("witness")
def witness() -> None:
    """A witness of proof logs: cosigns consistent checkpoints.

    A witness cosigns a log's checkpoint only if it extends every checkpoint of that log the
    witness cosigned before (c2sp.org/tlog-witness, c2sp.org/tlog-cosignature): a log
    cannot then show two histories without a witness seeing both.
    """


@witness.command("serve")
@_KEY
@_NAME
@_STATE
@_LOGS
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=7380, show_default=True, type=click.IntRange(0, 65535))
@click.option("--access-log", is_flag=True, help="Log every request on stderr.")
def serve(
    key: str, name: str, state: str, logs: tuple[str, ...], host: str, port: int, access_log: bool
) -> None:
    """Serve POST /add-checkpoint (c2sp.org/tlog-witness) and GET /healthz on HOST:PORT
    until interrupted. Loopback by default: logs on other machines reach it through
    --host 0.0.0.0 or a proxy in front of it."""
    from battlejudge.apps.witness import serve_witness

    w = _witness(key, name, state, logs)
    origins = ", ".join(sorted(w.logs))
    click.echo(f"battlejudge witness: http://{host}:{port} witnessing {origins}", err=True)
    click.echo(f"verifier key: {w.vkey()}", err=True)
    serve_witness(w, host, port, access_log)


@witness.command("vkey")
@_KEY
@_NAME
@click.option("--json", "as_json", is_flag=True, help="Print the name, key id and vkey as JSON.")
def vkey(key: str, name: str, as_json: bool) -> None:
    """Print the witness's verifier key NAME+KEYID+KEY (signature type 0x04), what logs and
    auditors are given to check its cosignatures."""
    text = witness_vkey(name, load_private_key(key))
    if as_json:
        emit_json({"name": name, "key_id": text.split("+")[1], "vkey": text})
        return
    click.echo(text)


@witness.command("add-checkpoint")
@click.argument("request_file", metavar="REQUEST_FILE", type=click.Path(dir_okay=False))
@_KEY
@_NAME
@_STATE
@_LOGS
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
def add_checkpoint(
    request_file: str, key: str, name: str, state: str, logs: tuple[str, ...], as_json: bool
) -> None:
    """Answer the add-checkpoint request in REQUEST_FILE (- for stdin) as the HTTP service
    would, with the same state: print the cosignature line. Exit 0 cosigned, 1 refused
    (the line names why, with the HTTP status), 2 bad input."""
    w = _witness(key, name, state, logs)
    if request_file == "-":
        body = sys.stdin.buffer.read(MAX_BODY + 1)
    else:
        with Path(request_file).open("rb") as f:
            body = f.read(MAX_BODY + 1)
    try:
        lines = w.add_checkpoint(body)
    except MalformedRequest as e:
        fail(f"{request_file}: {e}")
    except WitnessRefusal as e:
        if as_json:
            emit_json({"cosigned": False, "status": e.status, "error": str(e), "latest": e.latest})
        fail(f"refused ({e.status}): {e}", EXIT_NO)
    if as_json:
        emit_json({"cosigned": True, "cosignatures": lines.splitlines()})
        return
    click.echo(lines, nl=False)


COMMANDS: tuple[click.Command, ...] = (witness,)
