"""No secret of a log's URL is ever shown.

``redact`` against libpq's own reading of random URLs (Hypothesis: random passwords with
``@ : / ? & = %`` and unicode, percent-encoded as libpq reads them, or not encoded at all);
the messages libpq and psycopg build from a URL they cannot use; and every command that
takes a log (found by walking the click command tree: a new one fails
``test_every_command_that_takes_a_log_is_exercised`` until it is added to ``CASES``), run
against nothing listening and against a real PostgreSQL whose role has a password
(pgserver, conftest.py), with the password both in ``user:PASSWORD@`` and in
``?password=PASSWORD``: it shows nowhere in stdout, stderr, JSON or HTTP answers, and
errors are one line, exit 2, no traceback.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import click
import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import assume, given
from hypothesis import strategies as st

from battlejudge.cli.main import cli
from battlejudge.proofs.backends import (
    HIDDEN,
    WITHHELD,
    StoreError,
    redact,
    redact_message,
    redact_urls,
)
from battlejudge.proofs.log import append_proved
from battlejudge.proofs.store import open_store
from battlejudge.solver import battleline as bl

psycopg = pytest.importorskip("psycopg")
from psycopg import sql  # noqa: E402
from psycopg.conninfo import conninfo_to_dict  # noqa: E402

PASSWORD = "Sekr3t:p@ss/w?rd&=%ü #W0rd"
"""The role's password: a URL must encode most of it. Either end showing is a leak."""
MARKS = ("Sekr3t", "W0rd")
WRONG = "Sekr3t-not-the-W0rd"
ENCODED = quote(PASSWORD, safe="")
ROLE = "bj_redact"
KEY = Ed25519PrivateKey.generate()
VALID = bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10"))
QUESTION = ["--mine", "R4 R5 R3", "--theirs", "B8", "--seen", "B7 B10"]
MAIN = [sys.executable, "-c", "from battlejudge.cli.main import main; main()"]
FALLBACK = ("postgresql://" + HIDDEN, "postgres://" + HIDDEN)


# -- what is shown -----------------------------------------------------------------------------
@dataclass
class Ran:
    """One run of a command (in process or not), or one HTTP answer."""

    what: str
    code: int
    stdout: str
    stderr: str
    status: int | None = None
    """An HTTP answer's status (its ``code`` is then 0)."""


def assert_secret_free(ran: Ran) -> None:
    """No piece of the password in the output, nor in any JSON printed (decoded)."""
    texts = [ran.stdout, ran.stderr]
    for line in ran.stdout.splitlines():
        if line.startswith(("{", "[")):
            texts.append(json.dumps(json.loads(line), ensure_ascii=False))
    for text in texts:
        for mark in MARKS:
            assert mark not in text, f"{ran.what}: the password shows in {text!r}"
        assert "Traceback" not in text, f"{ran.what}: {text}"


def assert_one_line_error(ran: Ran) -> str:
    assert_secret_free(ran)
    assert ran.code == 2, f"{ran.what}: exit {ran.code}: {ran.stdout} {ran.stderr}"
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("battlejudge: error: "), (ran.what, lines)
    return lines[0]


def run(*args: str, input: str | None = None) -> Ran:
    r = CliRunner().invoke(cli, list(args), input=input)
    stderr = r.stderr
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        stderr += "".join(traceback.format_exception(r.exception))
    return Ran(shlex.join(args), r.exit_code, r.stdout, stderr)


def run_process(*args: str, timeout: float = 300) -> Ran:
    r = subprocess.run([*MAIN, *args], capture_output=True, text=True, timeout=timeout)
    return Ran(shlex.join(args), r.returncode, r.stdout, r.stderr)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# -- redact: random passwords against libpq's reading ------------------------------------------
SCHEMES = st.sampled_from(["postgresql://", "postgres://"])
HOSTS = st.lists(
    st.tuples(
        st.from_regex(r"[a-z][a-z0-9-]{0,8}(\.[a-z][a-z0-9-]{0,6}){0,2}", fullmatch=True),
        st.none() | st.integers(1, 65535),
    ),
    min_size=1,
    max_size=3,
).map(lambda hs: ",".join(h if p is None else f"{h}:{p}" for h, p in hs))
NAMES = st.from_regex(r"[a-z_][a-z0-9_]{0,10}", fullmatch=True)
PASSWORDS = st.text(
    st.one_of(
        st.sampled_from("@:/?&=%#[] +'\"\\"),
        st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
    ),
    min_size=1,
    max_size=24,
)
"""libpq takes any password but for NUL (%00 is refused)."""
USERINFO_SAFE = "!$&'()*+,;=:[]"  # what libpq takes unencoded in a password
QUERY_SAFE = "!$'()*+,;:/?[]"  # ... and in a parameter's value


def libpq_reads(url: str) -> dict[str, str]:
    """The parameters libpq reads out of ``url`` (psycopg.ProgrammingError: none)."""
    return {k: str(v) for k, v in conninfo_to_dict(url).items() if v is not None}


def _leaks(password: str, shown: str) -> bool:
    return password in shown or quote(password, safe="") in shown


@given(SCHEMES, NAMES, PASSWORDS, HOSTS, NAMES, st.sampled_from(["", USERINFO_SAFE]), st.booleans())
def test_a_password_in_the_user_info_is_hidden(
    scheme: str, user: str, password: str, hosts: str, db: str, safe: str, query: bool
) -> None:
    tail = "?application_name=bj&passfile=/home/j/.pgpass" if query else ""
    url = f"{scheme}{user}:{quote(password, safe=safe)}@{hosts}/{db}{tail}"
    seen = libpq_reads(url)  # libpq reads what the test meant
    assert (seen["password"], seen["host"].split(","), seen["dbname"]) == (
        password,
        [h.partition(":")[0] for h in hosts.split(",")],
        db,
    )
    expected = f"{scheme}{user}:{HIDDEN}@{hosts}/{db}{tail}"
    assume(not _leaks(password, expected) and password not in unquote(expected))
    shown = redact(url)
    assert shown == expected  # host, port, database and other parameters kept as written
    assert not _leaks(password, shown) and password not in unquote(shown)
    assert redact(shown) == shown


@given(
    SCHEMES,
    NAMES,
    PASSWORDS,
    HOSTS,
    st.sampled_from(["password", "sslpassword"]),
    st.sampled_from(["", QUERY_SAFE]),
    st.booleans(),
)
def test_a_secret_parameter_is_hidden(
    scheme: str, db: str, password: str, hosts: str, name: str, safe: str, encode_name: bool
) -> None:
    key = name.replace("w", "%77") if encode_name else name  # libpq decodes names too
    head = f"{scheme}/{db}?host={hosts}&user=judge"
    url = f"{head}&{key}={quote(password, safe=safe)}&passfile=/p"
    assert libpq_reads(url)[name] == password
    expected = f"{head}&{key}={HIDDEN}&passfile=/p"
    assume(not _leaks(password, expected) and password not in unquote(expected))
    shown = redact(url)
    assert shown == expected
    assert not _leaks(password, shown) and password not in unquote(shown)


@given(SCHEMES, NAMES, PASSWORDS, HOSTS, NAMES, st.booleans())
def test_an_unencoded_password_never_shows(
    scheme: str, user: str, password: str, hosts: str, db: str, in_query: bool
) -> None:
    """Written as typed: libpq may read another password (or none) out of it, or refuse
    it; either way no piece libpq could take for a secret is shown."""
    if in_query:
        url = f"{scheme}{hosts}/{db}?user={user}&password={password}&port=5432"
        expected = f"{scheme}{hosts}/{db}?user={user}&password={HIDDEN}&port=5432"
    else:
        url = f"{scheme}{user}:{password}@{hosts}/{db}"
        expected = f"{scheme}{user}:{HIDDEN}@{hosts}/{db}"
    skeleton = expected + " ".join(FALLBACK)
    assume(not _leaks(password, skeleton))
    shown = redact(url)
    assert not _leaks(password, shown)
    if not set(password) & set("@:/?#&=% []") and password.isprintable():
        assert shown == expected
    try:
        seen = libpq_reads(url)
    except (psycopg.ProgrammingError, UnicodeDecodeError):  # (%aa is no UTF-8)
        return
    for name in ("password", "sslpassword"):
        value = seen.get(name)
        if value and value not in skeleton:
            assert value not in shown, (name, value)


@given(st.text(), PASSWORDS)
def test_a_message_never_quotes_the_password(noise: str, password: str) -> None:
    """libpq quotes the token it cannot read (a bad escape, a space) or the whole URL."""
    for url in (
        f"postgresql://judge:{password}@h/db",
        f"postgresql://judge:{quote(password, safe='')}@h/db",
        f"postgresql:///db?host=h&password={password}",
    ):
        assume(not _leaks(password, "postgresql://judge:***@h/db?host=h&password=***"))
        assume(password not in WITHHELD)
        text = f'{noise} "{password}" {url}: {quote(password, safe="")}'
        assert not _leaks(password, redact_message(text, url))


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://a:b@h/db", "postgresql://a:***@h/db"),
        ("postgresql://a@h/db", "postgresql://a@h/db"),
        ("postgresql://a:@h/db", "postgresql://a:@h/db"),  # an empty password hides nothing
        ("postgresql:///db?host=/tmp", "postgresql:///db?host=/tmp"),
        ("postgres://u:p@h1:5432,h2:5433/db", "postgres://u:***@h1:5432,h2:5433/db"),
        ("postgresql://u:p@[::1]:5432/db", "postgresql://u:***@[::1]:5432/db"),
        ("postgresql://u:S3c@[::1/db", "postgresql://u:***@[::1/db"),  # urlsplit refuses it
        (
            "postgresql:///db?host=/tmp&user=judge&password=pw&sslpassword=k&passfile=/p/.pgpass",
            "postgresql:///db?host=/tmp&user=judge&password=***&sslpassword=***"
            "&passfile=/p/.pgpass",
        ),
        (
            "postgresql://h/db?oauth_client_secret=s&scram_client_key=k&pass%77ord=y&port=1",
            "postgresql://h/db?oauth_client_secret=***&scram_client_key=***&pass%77ord=***&port=1",
        ),
        ("postgresql://h/db?port=1&api_TOKEN=t", "postgresql://h/db?port=1&api_TOKEN=***"),
        (  # a raw & in the password: libpq reads a parameter W0rd, and says so
            "postgresql://h/db?password=Sekr3t&W0rd=1&port=5",
            "postgresql://h/db?password=***&port=5",
        ),
        ("POSTGRESQL://u:pw@h/db", "POSTGRESQL://u:***@h/db"),  # a file path to us, but still
        ("postgresql:/u:pw@h/db", "postgresql:/u:***@h/db"),  # what Path() makes of it
        ("postgresql://u:p@ss@h/db", "postgresql://***"),  # libpq: password p, host ss@h
        ("postgresql://u:p/ss@h/db", "postgresql://***"),
        ("postgresql://h/db?user=a@b", "postgresql://***"),
        ("postgresql://h/db?password=a&b", "postgresql://***"),
        ("postgresql://h/db?password=a=b", "postgresql://***"),
        ("postgresql://u:p w@h/db", "postgresql://***"),
        ("postgresql://u:p%zz@h/db", "postgresql://***"),
        ("postgresql://h/db#x", "postgresql://h/db#x"),  # unsure, but nothing to hide
        ("host=/tmp password=pw dbname=x", "host=/tmp password=*** dbname=x"),
        ("host=h password = 'p w' user=u", "host=h password = *** user=u"),
        ("/var/log/battlejudge/claims.log", "/var/log/battlejudge/claims.log"),
        ("logs/password=1.log", "logs/password=1.log"),
        ("C:\\logs\\a b.log", "C:\\logs\\a b.log"),
    ],
)
def test_redact(url: str, shown: str) -> None:
    assert redact(url) == shown
    assert redact(shown) == shown


@given(st.text())
def test_file_paths_are_left_alone(path: str) -> None:
    assume("=" not in path and "postgres" not in path.lower())
    assert redact(path) == path == redact_urls(path)


# -- libpq's and psycopg's own messages ----------------------------------------------------------
def _garbled(port: int) -> list[str]:
    """URLs with the password typed as is: libpq reads them otherwise than they look, and
    quotes pieces of them in its errors."""
    at = f"127.0.0.1:{port}"
    q = f"postgresql:///db?host=127.0.0.1&port={port}"
    return [
        f"postgresql://judge:Sekr3t W0rd@{at}/db",
        f"postgresql://judge:Sekr3t%zzW0rd@{at}/db",
        f"postgresql://judge:Sekr3t@W0rd@{at}/db",
        f"postgresql://judge:Sekr3t/W0rd@{at}/db",
        f"postgresql://judge:Sekr3t?W0rd@{at}/db",
        f"postgresql://judge:Sekr3t#W0rd@{at}/db",
        f"postgresql://judge:Sekr3t:W0rd@{at}/db",
        "postgresql://judge:Sekr3tW0rd@[::1/db",
        f"postgresql://judge:Sekr3tW0rd@{at}/db?sslmode=bogus",
        "postgresql://judge:Sekr3tW0rd@127.0.0.1:port/db",
        f"postgres://judge:Sekr3tW0rd@{at},127.0.0.1:{free_port()}/db",
        f"{q}&password=Sekr3t&W0rd",
        f"{q}&password=Sekr3t=W0rd",
        f"{q}&password=Sekr3t W0rd",
        f"{q}&password=Sekr3t%00W0rd",
        f"{q}&pass%77ord=Sekr3tW0rd",
        f"{q}&password=Sekr3tW0rd&nonsense=1",
    ]


def test_connect_never_quotes_the_password() -> None:
    from battlejudge.proofs.pglog import connect

    for url in _garbled(free_port()):
        with pytest.raises(StoreError) as caught:
            connect(url)
        message = str(caught.value)
        assert not any(mark in message for mark in MARKS), (url, message)
        assert "\n" not in message


def test_garbled_urls_and_libpq_strings_at_the_command_line() -> None:
    port = free_port()
    typos = [  # not URLs to battlejudge (a file), but what the user meant was one
        f"host=127.0.0.1 port={port} password=Sekr3tW0rd",
        f"POSTGRESQL://judge:Sekr3tW0rd@127.0.0.1:{port}/db",
        f"postgresql:/judge:Sekr3tW0rd@127.0.0.1:{port}/db",
        f"postgresql:judge:Sekr3tW0rd@127.0.0.1:{port}/db",
    ]
    for url in [*_garbled(port), *typos]:
        assert_one_line_error(run("audit", url))
        assert_one_line_error(run("log", "export", url))
        assert_one_line_error(run("log", "init", url))
    for url in _garbled(port):
        assert_one_line_error(run("claim", *QUESTION, "--log", url))


# -- every command that takes a log --------------------------------------------------------------
def _walk(group: click.Group, ctx: click.Context, path: str) -> Iterator[tuple[str, click.Command]]:
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        full = f"{path} {name}".strip()
        if isinstance(command, click.Group):
            yield from _walk(command, click.Context(command, parent=ctx, info_name=name), full)
        else:
            yield full, command


def _takes_a_log(command: click.Command) -> bool:
    """An argument LOG or URL, or an option that takes a PostgreSQL database (--log,
    --pg-url: their help says so)."""
    for p in command.params:
        if isinstance(p, click.Argument) and (p.metavar or (p.name or "").upper()) in (
            "LOG",
            "URL",
        ):
            return True
        if isinstance(p, click.Option) and "postgres" in (p.help or "").lower():
            return True
    return False


def commands_that_take_a_log() -> set[str]:
    ctx = click.Context(cli, info_name="battlejudge")
    return {name for name, command in _walk(cli, ctx, "") if _takes_a_log(command)}


@dataclass
class Where:
    """A database for one run: its URL, and the files a command needs."""

    url: str
    tmp: Path
    key: Path
    pub: Path
    file_log: Path
    old_checkpoint: Path


Run = Callable[[Where], list[Ran]]


def ours(engine: str) -> str:
    code = "from battlejudge.cli.main import main; main()"
    return shlex.join([sys.executable, "-c", code, "bot", "--bot", engine])


def _serve(w: Where, *extra: str) -> list[Ran]:
    """``battlejudge serve --log URL`` as a process: its startup, a claim logged, the log's
    checkpoint and proofs over HTTP, and a proof it cannot give (an error naming the log)."""
    import httpx

    port = free_port()
    args = ["serve", "--port", str(port), "--log", w.url, "--key", str(w.key), *extra]
    proc = subprocess.Popen(
        [*MAIN, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    answers = []
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while proc.poll() is None:
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "serve did not start"
            time.sleep(0.2)
        if proc.poll() is None:
            question = bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10").to_json()
            for method, path, body in [
                ("POST", "/v1/claims", question),
                ("GET", "/v1/log/checkpoint", None),
                ("GET", "/v1/log/proof/0", None),
                ("GET", "/v1/log/proof/999", None),
            ]:
                r = httpx.request(method, f"{base}{path}", json=body, timeout=60)
                answers.append(Ran(f"{method} {path}", 0, r.text, "", r.status_code))
    finally:
        stopped = proc.poll() is None  # (uvicorn passes the SIGINT on after its shutdown)
        if stopped:
            proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
    for answer in answers:
        assert_secret_free(answer)
    return [Ran(shlex.join(args), 0 if stopped else proc.returncode, out, err), *answers]


def _prove(w: Where) -> list[Ran]:
    made = run("log", "prove", w.url, "--record", "0")
    proof = w.tmp / "proof.json"
    proof.write_text(made.stdout)
    checked = run("log", "verify-inclusion", str(proof), "--pubkey", str(w.pub), "--json")
    return [made, checked]


def _prove_consistency(w: Where) -> list[Ran]:
    made = run("log", "prove-consistency", w.url, "--from", str(w.old_checkpoint))
    proof = w.tmp / "consistency.json"
    proof.write_text(made.stdout)
    checked = run("log", "verify-consistency", str(proof), "--pubkey", str(w.pub))
    return [made, checked]


def _small_bench() -> list[str]:
    """The options of ``bench log`` that make it quick, whichever it has."""
    ctx = click.Context(cli, info_name="battlejudge")
    bench = dict(_walk(cli, ctx, ""))["bench log"]
    have = {o for p in bench.params for o in p.opts}
    if "--quick" in have:
        return ["--quick"]
    small = [("--records", "16"), ("--writers", "1"), ("--leaves", "2")]
    return [a for option in small if option[0] in have for a in option]


def _refuses_a_url(ran: Ran) -> list[Ran]:
    """A command that mends file logs only: with a URL, a one-line refusal (exit 2)."""
    assert_one_line_error(ran)
    return [Ran(ran.what, 0, ran.stdout, "")]


@dataclass
class Case:
    run: Run
    """Run the command on the log at the URL (its errors are checked against nothing listening)."""
    works: Run | None = None
    """What succeeds against a real database holding a log (default: ``run``), or None."""
    empty: bool = False
    """It wants a database with no log in it (it makes one)."""


CASES: dict[str, Case] = {
    "claim": Case(lambda w: [run("claim", *QUESTION, "--log", w.url, "--key", str(w.key))]),
    "selfplay": Case(
        lambda w: [
            run("selfplay", "--games", "1", "--seed", "3", "--log", w.url, "--key", str(w.key)),
            run("selfplay", "--games", "1", "--json", "--log", w.url, "--key", str(w.key)),
        ]
    ),
    "play": Case(
        lambda w: [
            run("play", "--bot", "random", "--log", w.url, "--key", str(w.key), input="quit\n")
        ]
    ),
    "referee": Case(
        lambda w: [
            run(
                *("referee", "--north", ours("random"), "--south", ours("random")),
                *("--json", "--log", w.url, "--key", str(w.key)),
            )
        ]
    ),
    "serve": Case(lambda w: [run("serve", "--port", "1", "--log", w.url)], works=_serve),
    "audit": Case(
        lambda w: [run("audit", w.url), run("audit", w.url, "--json", "--pubkey", str(w.pub))]
    ),
    "log repair": Case(
        lambda w: [run("log", "repair", w.url)],
        works=lambda w: _refuses_a_url(run("log", "repair", w.url)),
    ),
    "log init": Case(lambda w: [run("log", "init", w.url)], empty=True),
    "log checkpoint": Case(
        lambda w: [
            run("log", "checkpoint", w.url, "--json"),
            run("log", "checkpoint", w.url, "--write", "--key", str(w.key)),
        ]
    ),
    "log prove": Case(lambda w: [run("log", "prove", w.url, "--record", "0")], works=_prove),
    "log prove-consistency": Case(
        lambda w: [run("log", "prove-consistency", w.url, "--from", str(w.old_checkpoint))],
        works=_prove_consistency,
    ),
    "log export": Case(
        lambda w: [
            run("log", "export", w.url),
            run("log", "export", w.url, "--out", str(w.tmp / "exported.log")),
        ]
    ),
    "log import": Case(
        lambda w: [run("log", "import", str(w.file_log), w.url, "--key", str(w.key))],
        empty=True,
    ),
    "bench log": Case(
        lambda w: [run_process("bench", "log", *_small_bench(), "--json", "--pg-url", w.url)],
        empty=True,
    ),
    "bench tables": Case(
        lambda w: [
            run_process(
                *("bench", "tables", "--store", w.url, "--tables", "1", "--think", "0"),
                *("--seconds", "0.5", "--warmup", "0", "--baseline-seconds", "0.2", "--json"),
            )
        ],
        empty=True,
    ),
}
"""Every command that takes a log, and how to run it."""


def test_every_command_that_takes_a_log_is_exercised() -> None:
    found = commands_that_take_a_log()
    assert found - set(CASES) == set(), "commands that take a log but are not in CASES"
    assert set(CASES) - found == set(), "CASES names commands that take no log"


def _pem(path: Path, private: bool) -> Path:
    if private:
        data = KEY.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    else:
        data = KEY.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    path.write_bytes(data)
    return path


def _files(tmp: Path) -> dict[str, Path]:
    """The keys, a sound file log of two claims (to import) and an older checkpoint."""
    log = tmp / "claims.log"
    store = open_store(log, KEY)
    try:
        append_proved(store, VALID, game="g", turn=0, flag=1)
        old = store.write_checkpoint()
        append_proved(store, VALID, game="g", turn=1, flag=1)
        store.write_checkpoint()
    finally:
        store.close()
    (tmp / "old.checkpoint").write_text(old)
    return {
        "key": _pem(tmp / "judge.key", True),
        "pub": _pem(tmp / "judge.pub", False),
        "file_log": log,
        "old_checkpoint": tmp / "old.checkpoint",
    }


def url_forms(db: str, host: str, port: int | None = None) -> dict[str, str]:
    """The password in the user info, and in the query (with an sslpassword too)."""
    if port is None:  # a socket folder
        userinfo = f"postgresql://{ROLE}:{ENCODED}@/{db}?host={host}"
        query = f"postgresql:///{db}?host={host}"
    else:
        userinfo = f"postgresql://{ROLE}:{ENCODED}@{host}:{port}/{db}"
        query = f"postgresql:///{db}?host={host}&port={port}"
    query += f"&user={ROLE}&password={ENCODED}&sslpassword={ENCODED}"
    return {"userinfo": userinfo, "query": query}


FORMS = ["userinfo", "query"]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("command", sorted(CASES))
def test_nothing_listening(command: str, form: str, tmp_path: Path) -> None:
    url = url_forms("tournament", "127.0.0.1", free_port())[form]
    where = Where(url, tmp_path, **_files(tmp_path))
    for ran in CASES[command].run(where):
        line = assert_one_line_error(ran)
        assert HIDDEN in line, line  # the log is named, without its password


# -- against a real database whose role has a password ------------------------------------------
@pytest.fixture(scope="module")
def role(pg_server: Any) -> str:
    """The socket folder of the session's server, where role ROLE logs in with PASSWORD
    (scram-sha-256: the password is checked, not trusted)."""
    admin = pg_server.get_uri()
    hba = Path(pg_server.pgdata) / "pg_hba.conf"
    text = hba.read_text()
    if ROLE not in text:
        hba.write_text(f"local all {ROLE} scram-sha-256\n" + text)
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ROLE,)).fetchone():
            conn.execute(
                sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                    sql.Identifier(ROLE), sql.Literal(PASSWORD)
                )
            )
        conn.execute("SELECT pg_reload_conf()")
    socket_dir = libpq_reads(admin)["host"]
    wrong = url_forms("postgres", socket_dir)["userinfo"].replace(ENCODED, "x")
    for _ in range(100):  # the server reloads its configuration in the background
        try:
            psycopg.connect(wrong).close()
        except psycopg.OperationalError:
            break
        time.sleep(0.05)
    return socket_dir


_databases = iter(range(10**6))


@pytest.fixture
def database(pg_server: Any, role: str) -> str:
    """A database of its own, owned by ROLE."""
    name = f"redact_{os.getpid()}_{next(_databases)}"
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(
                sql.Identifier(name), sql.Identifier(ROLE)
            )
        )
    return name


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("command", sorted(CASES))
def test_against_a_database(
    command: str, form: str, role: str, database: str, tmp_path: Path
) -> None:
    case = CASES[command]
    url = url_forms(database, role)[form]
    where = Where(url, tmp_path, **_files(tmp_path))
    if not case.empty:  # a log of two signed claims, and its checkpoint after the first
        store = open_store(url, KEY, create=True)
        try:
            append_proved(store, VALID, game="g", turn=0, flag=1)
            where.old_checkpoint.write_text(store.write_checkpoint())
            append_proved(store, VALID, game="g", turn=1, flag=1)
        finally:
            store.close()
    runs = (case.works or case.run)(where)
    assert runs
    for ran in runs:
        assert_secret_free(ran)
        assert ran.code == 0, f"{ran.what}: exit {ran.code}: {ran.stdout} {ran.stderr}"
    if command == "serve":
        assert [r.status for r in runs[1:]] == [200, 200, 200, 404]
    if command == "selfplay":
        assert f"claims logged to {redact(url)}" in runs[0].stdout
    if command == "log init":
        assert runs[0].stdout == f"{redact(url)}: proof log made.\n"


def test_wrong_password(role: str, database: str) -> None:
    for url in url_forms(database, role).values():
        url = url.replace(ENCODED, quote(WRONG, safe=""))
        for args in (["audit", url], ["claim", *QUESTION, "--log", url]):
            line = assert_one_line_error(run(*args))
            assert "password authentication failed" in line and HIDDEN in line, line


def test_no_log_there(role: str, database: str) -> None:
    for url in url_forms(database, role).values():
        line = assert_one_line_error(run("audit", url))
        assert f"{redact(url)}: no proof log there" in line


def test_serve_with_the_log_down(tmp_path: Path) -> None:
    """--log-optional: the service starts without its log; the warning it logs, and the
    errors it answers about the log, name it without its password."""
    for url in url_forms("tournament", "127.0.0.1", free_port()).values():
        files = _files(tmp_path)
        where = Where(url, tmp_path, **files)
        started, claimed, checkpoint, proof, missing = _serve(where, "--log-optional")
        assert_secret_free(started)
        assert f"{redact(url)}: cannot connect" in started.stderr
        assert claimed.status == 200 and "log_seq" not in json.loads(claimed.stdout)
        assert [a.status for a in (checkpoint, proof, missing)] == [503, 503, 503]
