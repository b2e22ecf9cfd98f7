"""Document stores: the offline store on the shared HotpotQA file, and the MediaWiki
client against a local HTTP server on 127.0.0.1 that speaks the part of the API it uses."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlparse

import pytest

from reflexion_bench.environments.docstore import (
    ContextDocstore,
    WikipediaDocstore,
    base_key,
    split_sentences,
    title_key,
)
from reflexion_bench.environments.hotpotqa import load_records, paragraphs


@pytest.fixture(scope="module")
def hotpot_file(shared_data: Path) -> Path:
    return shared_data / "hotpotqa-distractor-100.jsonl"


@pytest.fixture(scope="module")
def store(hotpot_file: Path) -> ContextDocstore:
    return ContextDocstore(path=str(hotpot_file))


def test_every_context_title_of_the_split_is_a_page(
    store: ContextDocstore, hotpot_file: Path
) -> None:
    records = load_records("jsonl", hotpot_file)
    titles = {t for r in records for t, _ in paragraphs(r)}
    assert len(store.titles) == len({title_key(t) for t in titles})
    assert len(store.titles) > 100  # distractors of every question, not only gold pages


async def test_search_exact_title_returns_first_sentences(
    store: ContextDocstore, hotpot_file: Path
) -> None:
    rec = load_records("jsonl", hotpot_file)[0]
    title, sents = paragraphs(rec)[5]  # "VIVA Media"
    out = await store.session().search(title)
    first = sents[0].strip()
    assert out.startswith(first)
    assert not out.startswith("[")  # exact match: no title banner


async def test_search_is_case_and_space_insensitive(store: ContextDocstore) -> None:
    a = await store.session().search("Creed (band)")
    b = await store.session().search("  creed   (BAND) ")
    assert a == b and a.startswith("Creed is an American rock band")


async def test_search_without_disambiguation_opens_the_only_page(store: ContextDocstore) -> None:
    out = await store.session().search("Creed")
    assert out.startswith("[Creed (band)] Creed is an American rock band")


async def test_search_returns_sentences_limit() -> None:
    s = ContextDocstore.from_pages([("P", [f"S{i}." for i in range(9)])], search_sentences=3)
    assert await s.session().search("P") == "S0. S1. S2."


async def test_unknown_entity_suggests_similar_titles(store: ContextDocstore) -> None:
    out = await store.session().search("Scott Stapp")
    assert out.startswith("Could not find [Scott Stapp]. Similar: [")
    assert "'Jaclyn Stapp'" in out  # same surname, found by BM25 over titles


async def test_typo_suggests_the_intended_title(store: ContextDocstore) -> None:
    similar = store.similar("Nik Park")
    assert similar[0] == "Nick Park"
    assert len(similar) <= store.n_similar


async def test_html_escaped_titles_are_searchable_unescaped(store: ContextDocstore) -> None:
    out = await store.session().search("Wallace & Gromit's Musical Marvels")
    assert not out.startswith("Could not find")


async def test_lookup_walks_matches_statefully_per_page(store: ContextDocstore) -> None:
    sess = store.session()
    assert (await sess.lookup("album")).startswith("No page is open")
    await sess.search("Creed (band)")
    first = await sess.lookup("album")
    second = await sess.lookup("ALBUM")  # same keyword, any case: the next result
    assert first.startswith("(Result 1 / 2) Creed released two studio albums")
    assert second.startswith("(Result 2 / 2) The band's third album")
    assert (await sess.lookup("album")).startswith("No more results for [album]")
    # Another keyword starts over; a miss says so.
    assert (await sess.lookup("Tallahassee")).startswith("(Result 1 / 1)")
    assert (await sess.lookup("zeppelin")).startswith("No results for [zeppelin]")
    # A new search resets the cursor to the new page.
    await sess.search("Jaclyn Stapp")
    assert "Creed" in await sess.lookup("Creed")
    # A failed search closes the page.
    await sess.search("No Such Page At All")
    assert (await sess.lookup("Creed")).startswith("No page is open")


async def test_sessions_do_not_share_state(store: ContextDocstore) -> None:
    a, b = store.session(), store.session()
    await a.search("Creed (band)")
    assert (await b.lookup("album")).startswith("No page is open")
    await b.search("Creed (band)")
    assert (await a.lookup("album")).startswith("(Result 1 / 2)")
    assert (await b.lookup("album")).startswith("(Result 1 / 2)")


def test_title_keys() -> None:
    assert title_key('"The_Beatles"') == "the beatles"
    assert base_key("Creed (band)") == "creed"
    assert title_key("Wallace &amp; Gromit") == "wallace & gromit"


def test_split_sentences() -> None:
    text = 'Alpha is a town. It has a river! Does it? Yes.\n\n== History ==\nFounded in 1900. "Quoted" end.'
    assert split_sentences(text) == [
        "Alpha is a town.",
        "It has a river!",
        "Does it?",
        "Yes.",
        "Founded in 1900.",
        '"Quoted" end.',
    ]


# --------------------------------------------------------------------------- MediaWiki

WIKI: dict[str, dict[str, Any]] = {
    "Creed (band)": {
        "extract": "Creed is an American rock band formed in 1993. The band disbanded in 2004.\n\n"
        "== Albums ==\nTheir album Weathered was released in 2001.",
    },
    "Mercury": {"extract": "Mercury may refer to:", "pageprops": {"disambiguation": ""}},
}
REDIRECTS = {"Creed": "Creed (band)"}


class _WikiHandler(BaseHTTPRequestHandler):
    calls: ClassVar[list[dict[str, str]]] = []
    fail_next: ClassVar[list[int]] = []

    def log_message(self, *args: Any) -> None:  # keep test output clean
        return None

    def do_GET(self) -> None:
        q = {k: v[0] for k, v in parse_qs(urlparse(self.path).query).items()}
        type(self).calls.append(q)
        if type(self).fail_next:
            self.send_response(type(self).fail_next.pop(0))
            self.end_headers()
            return
        assert q.get("format") == "json" and q.get("formatversion") == "2"
        if q.get("list") == "search":
            term = q["srsearch"].lower()
            hits = [{"title": t} for t in WIKI if term.split()[0] in t.lower()] or [
                {"title": "Creed (band)"}
            ]
            body: dict[str, Any] = {"query": {"search": hits[: int(q.get("srlimit", 5))]}}
        else:
            title = REDIRECTS.get(q["titles"], q["titles"])
            page = WIKI.get(title)
            if page is None:
                body = {"query": {"pages": [{"title": q["titles"], "missing": True}]}}
            else:
                body = {"query": {"pages": [{"title": title, **page}]}}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture()
def wiki_url() -> Iterator[str]:
    _WikiHandler.calls = []
    _WikiHandler.fail_next = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _WikiHandler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/w/api.php"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.network_local
async def test_wikipedia_search_lookup_and_redirect(wiki_url: str, tmp_path: Path) -> None:
    store = WikipediaDocstore(api_url=wiki_url, cache_dir=str(tmp_path), retries=1)
    sess = store.session()
    out = await sess.search("Creed")
    assert (
        out
        == "[Creed (band)] Creed is an American rock band formed in 1993. The band disbanded in 2004. Their album Weathered was released in 2001."
    )
    assert (await sess.lookup("album")).startswith("(Result 1 / 1) Their album Weathered")
    assert _WikiHandler.calls[0]["redirects"] == "1"
    assert _WikiHandler.calls[0]["explaintext"] == "1"


@pytest.mark.network_local
async def test_wikipedia_missing_and_disambiguation_give_similar(
    wiki_url: str, tmp_path: Path
) -> None:
    store = WikipediaDocstore(api_url=wiki_url, cache_dir=str(tmp_path), retries=1, n_similar=3)
    out = await store.session().search("Mercury")
    assert out == "Could not find [Mercury]. Similar: ['Mercury']."
    out = await store.session().search("Creed band history")
    assert out.startswith("Could not find [Creed band history]. Similar: ['Creed (band)'")
    assert _WikiHandler.calls[-1]["srlimit"] == "3"


@pytest.mark.network_local
async def test_wikipedia_cache_makes_reruns_identical_and_offline(
    wiki_url: str, tmp_path: Path
) -> None:
    first = WikipediaDocstore(api_url=wiki_url, cache_dir=str(tmp_path), retries=1)
    a = await first.session().search("Creed (band)")
    n = len(_WikiHandler.calls)
    WIKI["Creed (band)"] = {"extract": "Changed text."}  # the live page changes...
    try:
        again = WikipediaDocstore(api_url=wiki_url, cache_dir=str(tmp_path), retries=1)
        assert await again.session().search("Creed (band)") == a  # ...a rerun sees the cached page
        assert len(_WikiHandler.calls) == n
        replay = WikipediaDocstore(api_url=wiki_url, cache_dir=str(tmp_path), cache_only=True)
        assert await replay.session().search("Creed (band)") == a
        miss = replay.session()
        out = await miss.search("Uncached Page")
        assert out.startswith("Search failed: not in the docstore cache")
        assert miss.errors == 1
        assert len(_WikiHandler.calls) == n
    finally:
        WIKI["Creed (band)"] = {
            "extract": "Creed is an American rock band formed in 1993. The band disbanded in 2004.\n\n"
            "== Albums ==\nTheir album Weathered was released in 2001.",
        }


@pytest.mark.network_local
async def test_wikipedia_retries_transient_errors_then_reports(
    wiki_url: str, tmp_path: Path
) -> None:
    store = WikipediaDocstore(api_url=wiki_url, cache_dir=str(tmp_path), retries=2)
    _WikiHandler.fail_next = [503]
    assert (await store.session().search("Creed (band)")).startswith("Creed is an American")
    assert store.requests_made == 2
    _WikiHandler.fail_next = [500, 500]
    sess = store.session()
    out = await sess.search("Jaclyn")
    assert out.startswith("Search failed:") and sess.errors == 1


async def test_wikipedia_unreachable_is_a_failed_search_not_a_crash(tmp_path: Path) -> None:
    # Port 9 on loopback (discard) is closed: the connection is refused at once.
    store = WikipediaDocstore(api_url="http://127.0.0.1:9/w/api.php", retries=1, timeout_s=2)
    sess = store.session()
    out = await sess.search("Creed")
    assert out.startswith("Search failed: ") and sess.errors == 1


def test_cache_only_needs_a_cache_dir() -> None:
    with pytest.raises(ValueError, match="cache_dir"):
        WikipediaDocstore(cache_only=True)
