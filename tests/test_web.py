"""The web table's claim checker over HTTP (no browser): the URL's table reads back what it
prints, every answer agrees with ``battlejudge claim --json`` (the page's data-verdict /
data-blocking / data-witness contract), bad input is refused with the command line's
message, and the certificate a page offers verifies (and is checked by the drop zone)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from web_server import Attributes, LiveServer

from battlejudge.apps.web.table import TACTICS, ZONES, Table
from battlejudge.cli.main import cli
from battlejudge.proofs.battleline.certificate import CertificateFile, from_file_model
from battlejudge.proofs.log import read_log
from battlejudge.solver import battleline as bl

EXAMPLES = Path(__file__).parents[1] / "examples"
QUESTIONS = [json.loads(line) for line in (EXAMPLES / "claims.jsonl").read_text().splitlines()]
ALL_CARDS = [bl.Card.parse(f"{c}{v}") for c in "ROYGBP" for v in range(1, 11)] + list(TACTICS)


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with LiveServer() as live, httpx.Client(base_url=live.url, timeout=30) as c:
        yield c


def page_url(q: dict[str, Any]) -> str:
    first = q.get("completed_first") or ""
    return "/?" + urlencode(
        {
            "mine": ",".join(q["mine"]),
            "theirs": ",".join(q.get("theirs", [])),
            "seen": ",".join(q.get("seen", [])),
            "mud": int(q.get("mud", False)),
            "fog": int(q.get("fog", False)),
            "first": first,
        }
    )


def cli_claim(q: dict[str, Any]) -> tuple[int, str]:
    args = ["claim", "--mine", " ".join(q["mine"]), "--theirs", " ".join(q.get("theirs", []))]
    args += ["--seen", " ".join(q.get("seen", []))]
    args += ["--mud"] * bool(q.get("mud")) + ["--fog"] * bool(q.get("fog"))
    if q.get("completed_first"):
        args += ["--completed-first", q["completed_first"]]
    r = CliRunner().invoke(cli, [*args, "--json"])
    return r.exit_code, r.output


# -- the URL's table ------------------------------------------------------------------------
@st.composite
def tables(draw: st.DrawFn) -> Table:
    cards = draw(st.lists(st.sampled_from(ALL_CARDS), unique=True, max_size=12))
    zones = draw(st.lists(st.sampled_from(ZONES), min_size=len(cards), max_size=len(cards)))
    placed = {z: tuple(c for c, cz in zip(cards, zones, strict=True) if cz == z) for z in ZONES}
    return Table(
        placed["mine"],
        placed["theirs"],
        placed["seen"],
        draw(st.booleans()),
        draw(st.booleans()),
        draw(st.sampled_from(["", "mine", "theirs"])),
        draw(st.sampled_from(ZONES)),
    )


def read_back(url: str) -> Table:
    return Table.from_query(dict(parse_qsl(urlsplit(url).query, keep_blank_values=True)))


@given(tables())
def test_a_table_reads_back_from_its_url(t: Table) -> None:
    assert read_back(t.url()) == t


@given(tables(), st.sampled_from(ALL_CARDS))
def test_tapping_a_card_twice_takes_it_back(t: Table, card: bl.Card) -> None:
    t = replace(t, first="")  # (who completed first is dropped with their complete side)
    tapped = t.tapped(card)
    assert (t.zone_of(card) is None) == (tapped.zone_of(card) is not None)
    if t.zone_of(card) is None:
        assert tapped.tapped(card) == t


def test_a_tap_goes_to_the_tap_zone_and_a_tactic_never_to_seen() -> None:
    t = Table(zone="theirs").tapped(bl.Card.parse("B8"))
    assert t.theirs == (bl.Card.parse("B8"),) and t.mine == ()
    t = Table(zone="seen").tapped(bl.Card.parse("alexander"))
    assert t.mine == (bl.Card.parse("alexander"),) and t.seen == ()


def test_the_issue_url_is_read_as_written() -> None:
    t = read_back("/?mine=R4,R5,R3&theirs=B8&seen=B7,B10&mud=0&fog=0&first=")
    assert t.question() == bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10")
    assert t.url() == "/?mine=R4,R5,R3&theirs=B8&seen=B7,B10&mud=0&fog=0&first="


# -- answers agree with the command line ------------------------------------------------------
@pytest.mark.parametrize("q", QUESTIONS, ids=[f"claims.jsonl:{i + 1}" for i in range(12)])
def test_the_page_answers_as_the_command_line(client: httpx.Client, q: dict[str, Any]) -> None:
    code, out = cli_claim(q)
    r = client.get(page_url(q))
    found = Attributes(r.text).found
    if code == 2:  # bad input: the same one-line message, and no verdict
        assert r.status_code == 422
        assert "data-verdict" not in found
        assert out.strip() == f"battlejudge: error: {found['data-problem'][0]}"
        return
    expected = json.loads(out)
    assert r.status_code == 200
    assert found["data-verdict"] == [expected["verdict"]]
    if expected["verdict"] == "valid":
        assert found["data-blocking"] == [" ".join(expected["blocking"])]
        assert "data-witness" not in found
    else:
        assert found["data-witness"] == [" ".join(expected["witness"]["added"])]
        assert "data-blocking" not in found
    for sentence in expected["explanation"]:
        assert sentence in r.text.replace("&#39;", "'")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("/?mine=alexander,darius,R3", "mine has two Leaders (alexander darius)"),
        ("/?mine=R4,R4,R3", "card R4 is given in mine twice"),
        ("/?mine=R4,R5,R3&theirs=R4", "card R4 is given in theirs and in mine"),
        ("/?mine=R4,R5,R11", "unknown card 'R11' in mine"),
        ("/?mine=R4,R5,R3&mud=2", "mud must be 0 or 1, got '2'"),
        # short of cards, and wrong too: the real problem is named, in red
        ("/?mine=R4,R4", "card R4 is given in mine twice"),
        ("/?mine=alexander,darius", "mine has two Leaders (alexander darius)"),
        ("/?mine=R4&theirs=B1,B2,B3,B4", "theirs has 4 cards (B1 B2 B3 B4)"),
        ("/?mine=R4&seen=alexander", "alexander in seen: seen lists face-up troops only"),
        ("/?mine=R4&zone=hand", "zone must be mine, theirs or seen, got 'hand'"),
    ],
)
def test_bad_input_is_refused_in_place(client: httpx.Client, url: str, message: str) -> None:
    r = client.get(url)
    found = Attributes(r.text).found
    assert r.status_code == 422
    assert "data-verdict" not in found
    assert message in found["data-problem"][0]
    assert 'id="card-R10"' in r.text  # the table is still there to fix it


@pytest.mark.parametrize(
    ("url", "hint"),
    [
        ("/?mine=R4,R5", "1 more card for your side"),
        ("/?mine=R4", "2 more cards for your side"),
        ("/?theirs=B8", "3 more cards for your side"),
        ("/?mine=R4,R5,R3&mud=1", "1 more card for your side"),  # Mud: four a side
        ("/?mine=R4,R5,R3&theirs=B1,B2&first=theirs", "1 more card for theirs"),
        ("/?mine=R4&theirs=B1&first=theirs", "2 more cards for your side, 2 more cards for theirs"),
    ],
)
def test_a_side_short_of_cards_gets_a_neutral_hint(
    client: httpx.Client, url: str, hint: str
) -> None:
    """Not an error: the question cannot be asked yet, so the page says what is missing,
    without the red problem line (on every tap until the side is complete)."""
    for fragment in (False, True):
        headers = {"HX-Request": "true"} if fragment else {}
        r = client.get(url, headers=headers)
        found = Attributes(r.text).found
        assert r.status_code == 200
        assert found["data-hint"] == [hint]
        assert "data-problem" not in found and "data-verdict" not in found
        assert 'class="problem"' not in r.text


def test_an_empty_table_asks_for_cards(client: httpx.Client) -> None:
    r = client.get("/")
    assert r.status_code == 200
    assert "data-verdict" not in r.text and "data-problem" not in r.text
    assert r.text.count('class="card c-') == 64


def test_htmx_gets_the_checker_alone(client: httpx.Client) -> None:
    url = "/?mine=R4,R5,R3&theirs=B8&seen=B7,B10"
    whole = client.get(url).text
    part = client.get(url, headers={"HX-Request": "true"}).text
    assert "<html" in whole and "<html" not in part
    assert part.lstrip().startswith('<div id="checker"')
    assert 'data-blocking="B7 B10"' in part


def test_every_tap_link_leads_to_its_table(client: httpx.Client) -> None:
    r = client.get("/?mine=R4,R5&zone=mine")
    found = Attributes(r.text).found
    links = [h for h in found["a.href"] if h.startswith("/?")]
    assert "/?mine=R4,R5,R3&theirs=&seen=&mud=0&fog=0&first=" in links  # tap R3
    assert "/?mine=R5&theirs=&seen=&mud=0&fog=0&first=" in links  # tap R4 again
    assert "/?mine=R4,R5&theirs=&seen=&mud=1&fog=0&first=" in links  # the Mud switch


def test_the_pages_load_nothing_from_elsewhere(client: httpx.Client) -> None:
    found = Attributes(client.get("/?mine=R4,R5,R3").text).found
    loaded = found.get("script.src", []) + found.get("link.href", [])
    assert loaded and all(u.startswith("/static/") for u in loaded)
    for u in loaded:
        assert client.get(u).status_code == 200, u
    assert client.get("/static/web/nothing.js").status_code == 404


# -- certificates ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("query", "verdict"),
    [("mine=R4,R5,R3&theirs=B8&seen=B7,B10", "valid"), ("mine=R4,R5,R3&theirs=B8", "invalid")],
)
def test_the_certificate_download_verifies(client: httpx.Client, query: str, verdict: str) -> None:
    r = client.get(f"/web/certificate?{query}")
    assert r.status_code == 200
    assert r.headers["content-disposition"].startswith("attachment; filename=")
    cert = from_file_model(CertificateFile.model_validate(r.json()))
    assert cert.verdict == verdict and bl.verify(cert)
    checked = client.post("/web/verify", files={"certificate": ("c.json", r.content)})
    found = Attributes(checked.text).found
    assert checked.status_code == 200 and found["data-verified"] == ["true"]
    assert read_back(next(h for h in found["href"] if h.startswith("/?"))) == read_back(
        f"/?{query}"
    )


def test_a_tampered_certificate_is_not_verified(client: httpx.Client) -> None:
    data = client.get("/web/certificate?mine=R4,R5,R3&theirs=B8&seen=B7,B10").json()
    data["blocking"] = ["B7"]
    r = client.post("/web/verify", files={"certificate": ("c.json", json.dumps(data))})
    assert Attributes(r.text).found["data-verified"] == ["false"]
    r = client.post("/web/verify", files={"certificate": ("c.json", b"not json")})
    assert r.status_code == 400 and Attributes(r.text).found["data-verified"] == ["error"]


def test_a_certificate_of_bad_input_is_refused(client: httpx.Client) -> None:
    r = client.get("/web/certificate?mine=R4,R4,R3")
    assert r.status_code == 422
    assert r.json() == {"error": "card R4 is given in mine twice; every card exists once"}


# -- the judge's audit -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two self-play games with their signed proof log, its checkpoint and the key."""
    folder = tmp_path_factory.mktemp("audit")
    runner = CliRunner()
    key = str(folder / "judge")
    assert runner.invoke(cli, ["keys", "new", "--out", key]).exit_code == 0
    args = ["selfplay", "--games", "2", "--bots", "heuristic,random", "--seed", "3"]
    args += ["--out", str(folder / "games"), "--log", str(folder / "claims.log")]
    r = runner.invoke(cli, [*args, "--key", f"{key}.key"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(
        cli, ["log", "checkpoint", str(folder / "claims.log"), "--key", f"{key}.key", "--write"]
    )
    assert r.exit_code == 0, r.output
    return folder


def audit_upload(folder: Path, log: bytes | None = None) -> dict[str, Any]:
    games = sorted((folder / "games").glob("*.blg"))
    return {
        "log": ("claims.log", log if log is not None else (folder / "claims.log").read_bytes()),
        "checkpoint": ("claims.log.checkpoint", (folder / "claims.log.checkpoint").read_bytes()),
        "pubkey": ("judge.pub", (folder / "judge.pub").read_bytes()),
        "games": [(g.name, g.read_bytes()) for g in games],
    }


def post_audit(client: httpx.Client, upload: dict[str, Any]) -> httpx.Response:
    files = [(k, v) for k, v in upload.items() if k != "games"]
    files += [("games", g) for g in upload["games"]]
    return client.post("/audit", files=files)


def cli_audit(folder: Path, log: Path) -> dict[str, Any]:
    args = ["audit", str(log), "--pubkey", str(folder / "judge.pub")]
    r = CliRunner().invoke(cli, [*args, "--games", str(folder / "games"), "--json"])
    report: dict[str, Any] = json.loads(r.stdout)
    return report


def page_report(html: str) -> dict[str, Any]:
    from html import unescape

    start = html.index('<pre class="json">') + len('<pre class="json">')
    report: dict[str, Any] = json.loads(unescape(html[start : html.index("</pre>", start)]))
    return report


def test_the_audit_page_reports_as_the_command(client: httpx.Client, played: Path) -> None:
    r = post_audit(client, audit_upload(played))
    assert r.status_code == 200
    expected = cli_audit(played, played / "claims.log")
    assert expected["ok"] and expected["signatures"]["checked"]
    assert page_report(r.text) == expected
    found = Attributes(r.text).found
    assert found["data-audit"] == ["ok"]
    assert len(found["data-status"]) == expected["records"]
    links = [h for h in found["href"] if h.startswith("/?")]
    games = sum(1 for r in read_log(played / "claims.log")[0] if r.kind == "game")
    assert games == len(list((played / "games").glob("*.blg")))  # each game's headers bound
    assert len(links) == expected["records"] - games  # every claim opens in the checker
    for h in links[:3]:
        assert client.get(h).status_code == 200


def test_the_audit_page_names_the_first_problem(
    client: httpx.Client, played: Path, tmp_path: Path
) -> None:
    lines = (played / "claims.log").read_bytes().splitlines(keepends=True)
    record = json.loads(lines[2])
    record["flag"] = 9 if record["flag"] != 9 else 8  # an edited record
    lines[2] = json.dumps(record, separators=(",", ":"), sort_keys=True).encode() + b"\n"
    edited = b"".join(lines)
    (tmp_path / "claims.log").write_bytes(edited)
    (tmp_path / "claims.log.checkpoint").write_bytes(
        (played / "claims.log.checkpoint").read_bytes()
    )
    expected = cli_audit(played, tmp_path / "claims.log")
    r = post_audit(client, audit_upload(played, edited))
    assert r.status_code == 200
    assert page_report(r.text) == expected and not expected["ok"]
    found = Attributes(r.text).found
    assert found["data-audit"] == ["problems"]
    assert found["data-first-problem"] == [str(expected["problems"][0]["record"])]
    assert "problem" in found["data-status"]


def test_the_audit_refuses_what_is_not_a_log(client: httpx.Client, played: Path) -> None:
    upload = audit_upload(played, b"hello\n")
    r = post_audit(client, upload)
    assert r.status_code == 422
    assert Attributes(r.text).found["data-audit"] == ["error"]
    assert "not a proof log" in r.text
    r = client.post("/audit", files=[("pubkey", ("k.pub", b"x"))])
    assert r.status_code == 422 and "no proof log was sent" in r.text


@st.composite
def questions(draw: st.DrawFn) -> bl.ClaimQuestion:
    """Questions a player could tap in: three cards of mine (troops and at most one morale
    tactic), up to three of theirs, up to six troops seen elsewhere, Mud and Fog off."""
    troops = [c for c in ALL_CARDS if c.is_troop]
    cards = draw(st.lists(st.sampled_from(troops), unique=True, min_size=3, max_size=12))
    n_theirs = draw(st.integers(0, min(3, len(cards) - 3)))
    mine, theirs, seen = cards[:3], cards[3 : 3 + n_theirs], cards[3 + n_theirs :]
    if draw(st.booleans()):
        mine[0] = draw(st.sampled_from(TACTICS))
    first = None
    if len(theirs) == 3:
        first = draw(st.sampled_from(["mine", "theirs"]))
    return bl.ClaimQuestion(mine=mine, theirs=theirs, seen=seen, completed_first=first)


@settings(max_examples=30)
@given(q=questions())
def test_any_tapped_question_shows_its_proved_answer(
    client: httpx.Client, q: bl.ClaimQuestion
) -> None:
    t = Table(q.mine, q.theirs, q.seen, q.mud, q.fog, q.completed_first or "")
    found = Attributes(client.get(t.url(), headers={"HX-Request": "true"}).text).found
    p = bl.prove(q)
    assert found["data-verdict"] == [p.verdict]
    if p.valid:
        assert found["data-blocking"] == [bl.format_cards(p.blocking)]
    else:
        assert p.witness is not None
        assert found["data-witness"] == [bl.format_cards(p.witness.added)]
