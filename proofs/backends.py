"""What every proof-log backend (a file, PostgreSQL) shares, importing none of them: the
rule telling a database URL from a file path, the redaction of secrets from every URL
shown, the error of a log that cannot be reached, and the writer's interface
(:class:`LogStore`) and a whole log as read (:class:`StoredLog`). The backends
(:mod:`~battlejudge.proofs.log`'s file log, :mod:`~battlejudge.proofs.pglog`) and the
dispatch over them (:mod:`~battlejudge.proofs.store`, :mod:`~battlejudge.proofs.stream`)
import this module, so none of them imports another to share these.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Final, Protocol
from urllib.parse import unquote

from battlejudge.proofs.checkpoint import Checkpoint
from battlejudge.proofs.log import LogRecord, Problem
from battlejudge.solver.errors import InputError

__all__ = [
    "SCHEMES",
    "LogStore",
    "StoreError",
    "StoredLog",
    "is_url",
    "redact",
    "redact_message",
    "redact_urls",
]

SCHEMES = ("postgresql://", "postgres://")


class StoreError(InputError):
    """A log that cannot be reached or used: database down, wrong credentials, no log
    there. The message names the log (a URL without its password) and what is wrong."""


class LogStore(Protocol):
    """What every backend offers a writer (:class:`ProofLog`, ``PgProofLog``)."""

    @property
    def name(self) -> str:
        """The log as a person names it (a path, or a URL without its password)."""
        ...

    def append(
        self,
        *,
        question: dict[str, Any],
        verdict: str,
        certificate: dict[str, Any],
        game: str | None = None,
        turn: int | None = None,
        player: str | None = None,
        flag: int | None = None,
        time: str | None = None,
    ) -> dict[str, Any]:
        """Append one decided claim with its game context; returns the record written (with its
        ``seq``, ``prev`` and signature)."""
        ...

    def append_records(self, records: Any) -> list[dict[str, Any]]:
        """Chain, sign and append records already checked (an import: their ``seq``, ``prev``
        and ``sig`` are replaced), then write the checkpoint; returns the records as written."""
        ...

    def checkpoint(self) -> Checkpoint:
        """The tree head as of this writer's last look (size and Merkle root; not signed)."""
        ...

    def write_checkpoint(self) -> str:
        """Bring the tree up to date, store a fresh signed checkpoint and return its note."""
        ...

    def close(self) -> None:
        """Release the log (file handle or database connection)."""
        ...


@dataclass(frozen=True)
class StoredLog:
    """A whole log as read: its complete records, the lines that are not records, its
    latest checkpoint note (None: it has none) and how many lines it has."""

    name: str
    records: list[LogRecord]
    problems: list[Problem]
    checkpoint: str | None
    lines: int


def is_url(target: str | os.PathLike[str]) -> bool:
    """Whether ``target`` names a database log rather than a file."""
    return str(target).startswith(SCHEMES)


HIDDEN: Final = "***"
"""What a secret of a URL is shown as."""
SECRET_WORDS: Final = ("password", "passwd", "pwd", "passphrase", "secret", "token", "credential")
"""A URL parameter whose name (percent-decoded, in any case) has one of these in it holds a
secret: ``password``, ``sslpassword``, ``oauth_client_secret``... (and libpq's SCRAM keys).
``passfile`` does not: it is the path of a file of passwords, shown like any other path."""
LIBPQ_KEYWORDS: Final = frozenset(
    """service user password passfile channel_binding connect_timeout dbname host hostaddr
    port client_encoding options application_name fallback_application_name keepalives
    keepalives_idle keepalives_interval keepalives_count tcp_user_timeout sslmode
    sslnegotiation sslcompression sslcert sslkey sslkeylogfile sslpassword sslcertmode
    sslrootcert sslcrl sslcrldir sslsni requirepeer require_auth min_protocol_version
    max_protocol_version ssl_min_protocol_version ssl_max_protocol_version gssencmode
    krbsrvname gsslib gssdelegation replication target_session_attrs load_balance_hosts
    scram_client_key scram_server_key oauth_issuer oauth_client_id oauth_client_secret
    oauth_scope ssl""".split()
)
"""The parameters libpq knows (PostgreSQL 18). One it does not know, after a secret one, is
taken for the rest of that secret typed with a raw ``&`` (``password=Sekr3t&W0rd=1``)."""
WITHHELD: Final = (
    "the reason is not shown, as it may quote a password (in a URL, percent-encode "
    "@ : / ? # & = % and spaces in the user name, password and parameters)"
)
"""What is said instead of a database's message that may quote a secret."""
_SCHEME = re.compile(r"postgres(?:ql)?:/*", re.IGNORECASE)  # any case, slashes: a typo is a path
_URL_IN_TEXT = re.compile(r"postgres(?:ql)?:/*\S*", re.IGNORECASE)  # (Path() keeps one /)
_KEYWORD = re.compile(  # libpq's other form: host=h password=pw (or password = 'p w')
    rf"(?<![^\s'\"(])([\w.-]*(?:{'|'.join(SECRET_WORDS)})[\w.-]*\s*=\s*)"
    r"('(?:[^'\\]|\\.)*(?:'|$)|\S*)",
    re.IGNORECASE,
)
_UNSURE = re.compile(r"[#\s\x00-\x1f\x7f]|%(?![0-9A-Fa-f]{2})|%00")
"""What makes libpq read a URL otherwise than it looks, or quote a piece of it in an error."""


def _is_secret(name: str) -> bool:
    key = unquote(name).lower()
    return key in ("scram_client_key", "scram_server_key") or any(w in key for w in SECRET_WORDS)


def _split(url: str, scheme: int) -> tuple[str, list[str]] | None:
    """``url`` with its secrets hidden, and its secrets as written; None when its parts
    cannot be told apart for certain, as libpq tells them apart.

    libpq ends the user info at the first ``@`` (or at a ``/`` before any), splits it at
    its first ``:``, ends the hosts at ``/`` or ``?`` and splits the parameters at ``&``
    and ``=``; it quotes a token with a bad escape or a space in its error. So a URL is
    certain when its only raw ``@`` ends a user info before any ``/`` or ``?``, every
    parameter has one ``=``, and it has no ``#``, space, control character or bad escape.
    Parameters libpq does not know right after a secret one are taken for the rest of it.
    """
    rest = url[scheme:]
    if _UNSURE.search(rest):
        return None
    cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    if "@" in tail or authority.count("@") > 1:
        return None
    secrets: list[str] = []
    if "@" in authority:
        userinfo, hosts = authority.split("@")
        user, _, password = userinfo.partition(":")
        if password:
            secrets.append(password)
            authority = f"{user}:{HIDDEN}@{hosts}"
    path, mark, query = tail.partition("?")
    params = []
    after_secret = False
    for param in query.split("&") if query else []:
        name, equals, value = param.partition("=")
        if param and (not equals or "=" in value):
            return None
        if after_secret and unquote(name) not in LIBPQ_KEYWORDS:  # the secret's rest: left out
            secrets += [param, name, value]
            continue
        after_secret = _is_secret(name)
        if after_secret and value:
            secrets.append(value)
            value = HIDDEN
        params.append(f"{name}{equals}{value}")
    return url[:scheme] + authority + path + mark + "&".join(params), secrets


def _may_hold_secret(rest: str) -> bool:
    return "@" in rest or any(word in unquote(rest).lower() for word in SECRET_WORDS)


def redact(url: str) -> str:
    """``url`` as it may be shown: a ``postgresql://`` (or ``postgres://``) URL with its
    password hidden (``postgresql://judge:***@h1,h2/db``) and the value of every secret
    parameter (``?password=***``, ``sslpassword``, any name in :data:`SECRET_WORDS`,
    percent-encoded or not); host, port, database and other parameters as written. A URL
    that libpq may read otherwise than it looks (a raw ``@`` after the hosts, a space, a
    bad ``%`` escape, a parameter with no or two ``=``) and that may hold a
    secret is shown as ``postgresql://***``. Anything else, such as a file path, is
    returned as it is, but for the values of secret keywords in libpq's keyword form
    (``host=h password=***``). Never raises, never returns a secret."""
    scheme = _SCHEME.match(url)
    if scheme is None:
        return _hide_keywords(url)
    split = _split(url, scheme.end())
    if split is not None:
        return split[0]
    return url[: scheme.end()] + HIDDEN if _may_hold_secret(url[scheme.end() :]) else url


def _hide_keywords(text: str) -> str:
    return _KEYWORD.sub(lambda m: m.group(1) + (HIDDEN if m.group(2) else ""), text)


def redact_urls(text: str) -> str:
    """``text`` with every PostgreSQL URL in it (up to the next space) redacted, and the
    value of every secret keyword in libpq's keyword form (``password=***``)."""
    return _hide_keywords(_URL_IN_TEXT.sub(lambda m: _redact_word(m.group(0)), text))


def _redact_word(word: str) -> str:
    bare = word.rstrip(":,;.'\")]")  # a redacted URL with the sentence's ": " after it
    return word if bare != word and redact(bare) == bare else redact(word)


def redact_message(text: str, url: str) -> str:
    """A message about ``url`` (such as libpq's or psycopg's, which may quote it or a piece
    of it) as it may be shown: every URL in it redacted, or :data:`WITHHELD` instead when
    it still holds a secret of ``url`` (as written or percent-decoded), or when ``url`` is
    one whose secrets cannot be told apart for certain."""
    text = redact_urls(text)
    scheme = _SCHEME.match(url)
    if scheme is None:
        return text
    split = _split(url, scheme.end())
    if split is None:
        return WITHHELD if _may_hold_secret(url[scheme.end() :]) else text
    for secret in filter(None, split[1]):
        if any(form in text for form in (secret, unquote(secret), unquote(secret, "latin-1"))):
            return WITHHELD
    return text
