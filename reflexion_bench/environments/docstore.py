"""Document stores for the ReAct actor's ``Search[entity]`` and ``Lookup[keyword]``.

A store finds pages; a :class:`DocstoreSession` (one per attempt) holds the open page
and the lookup cursor, so that concurrent tasks never share browsing state. The
session's behaviour is the one the paper's agent saw:

- ``Search[entity]`` opens the page whose title matches and returns its first
  sentences; when no title matches it returns ``Could not find [entity]. Similar:
  [...]`` with the best-matching titles, and no page is open.
- ``Lookup[keyword]`` returns the next sentence of the open page containing the
  keyword, as ``(Result i / n) sentence``; repeating the same keyword moves on,
  another keyword (or a new search) starts over.

Two stores:

- :class:`ContextDocstore` (offline, reproducible): every context paragraph of the
  HotpotQA split (gold and distractor paragraphs of every question, not only the
  selected ones, so a task sees the same pages whatever ``limit`` is) is one page.
  Similar titles come from BM25 (bm25s) over titles and text, then difflib for typos.
- :class:`WikipediaDocstore` (online): the MediaWiki API of a live wiki, with every
  response cached on disk, so that a rerun sees the same pages (and runs from the
  cache alone with ``cache_only: true``).
"""

from __future__ import annotations

import abc
import difflib
import hashlib
import html
import json
import logging
import os
import re
import tempfile
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reflexion_bench.environments.hotpotqa import join_sentences, load_records, paragraphs

log = logging.getLogger(__name__)


class DocstoreError(RuntimeError):
    """A page could not be fetched (network, API error); the step records it."""


class _Transient(Exception):
    """An HTTP answer worth retrying (429, 5xx)."""


@dataclass(frozen=True)
class Page:
    title: str
    sentences: tuple[str, ...]


@dataclass(frozen=True)
class NotFound:
    query: str
    similar: tuple[str, ...] = ()


def title_key(text: str) -> str:
    """Case-, space-, underscore- and quote-insensitive form of a title or query."""
    text = unicodedata.normalize("NFKC", html.unescape(text)).replace("_", " ").casefold()
    text = text.strip().strip("\"'`“”‘’").strip()
    return " ".join(text.split())


_PAREN_SUFFIX = re.compile(r"\s*\([^()]*\)\s*$")


def base_key(text: str) -> str:
    """:func:`title_key` without a trailing disambiguation, ``Creed (band)`` -> ``creed``."""
    return _PAREN_SUFFIX.sub("", title_key(text))


class Docstore(abc.ABC):
    """A source of pages. Subclasses implement :meth:`find`.

    Args:
        search_sentences: Sentences of a page that ``Search`` returns.
        n_similar: Titles suggested when ``Search`` finds no page.
    """

    def __init__(self, search_sentences: int = 5, n_similar: int = 5) -> None:
        if search_sentences < 1:
            raise ValueError(f"docstore.search_sentences must be >= 1, got {search_sentences}")
        self.search_sentences = search_sentences
        self.n_similar = n_similar

    @abc.abstractmethod
    async def find(self, entity: str) -> Page | NotFound:
        """The page for ``entity``, or the titles most like it."""

    def session(self) -> DocstoreSession:
        """Fresh browsing state for one attempt."""
        return DocstoreSession(self)


@dataclass
class DocstoreSession:
    """Browsing state of one attempt: the open page and the lookup cursor."""

    store: Docstore
    page: Page | None = None
    errors: int = 0
    _keyword: str | None = None
    _hits: list[str] = field(default_factory=list)
    _next: int = 0

    async def search(self, entity: str) -> str:
        entity = entity.strip()
        self._keyword = None
        try:
            found = await self.store.find(entity)
        except DocstoreError as exc:
            self.errors += 1
            self.page = None
            return f"Search failed: {exc}"
        if isinstance(found, NotFound):
            self.page = None
            return f"Could not find [{entity}]. Similar: {list(found.similar)}."
        self.page = found
        text = join_sentences(found.sentences[: self.store.search_sentences])
        if not text:
            return f"The page [{found.title}] is empty."
        if title_key(found.title) != title_key(entity):
            return f"[{found.title}] {text}"
        return text

    async def lookup(self, keyword: str) -> str:
        keyword = keyword.strip()
        if self.page is None:
            return "No page is open: use Search[entity] first, then Lookup[keyword]."
        key = keyword.casefold()
        if key != self._keyword:
            self._keyword = key
            self._hits = [s.strip() for s in self.page.sentences if key in s.casefold()]
            self._next = 0
        if not self._hits:
            return f"No results for [{keyword}] on the page [{self.page.title}]."
        if self._next >= len(self._hits):
            return f"No more results for [{keyword}] on the page [{self.page.title}]."
        self._next += 1
        return f"(Result {self._next} / {len(self._hits)}) {self._hits[self._next - 1]}"


# --------------------------------------------------------------------------- offline


class ContextDocstore(Docstore):
    """Pages built from HotpotQA's own context paragraphs (offline, reproducible).

    Args:
        source, path, hf_path, hf_config, split, hf_cache_dir: The data to build pages from (the
            same keys as the environment; configs interpolate them from ``env``).
        search_sentences: Sentences returned by ``Search`` (HotpotQA paragraphs have
            about four, so 5 returns a whole paragraph, like a page summary).
        n_similar: Titles suggested when nothing matches.
    """

    def __init__(
        self,
        source: str = "jsonl",
        path: str | None = None,
        hf_path: str = "hotpotqa/hotpot_qa",
        hf_config: str = "distractor",
        split: str = "validation",
        hf_cache_dir: str | None = None,
        search_sentences: int = 5,
        n_similar: int = 5,
    ) -> None:
        super().__init__(search_sentences, n_similar)
        self._records_args = (source, path, hf_path, hf_config, split, hf_cache_dir)
        self._pages: dict[str, Page] | None = None
        self._by_base: dict[str, list[str]] = {}
        self._titles: list[str] = []
        self._bm25: Any = None

    @classmethod
    def from_pages(
        cls, pages: Sequence[tuple[str, Sequence[str]]], **kwargs: Any
    ) -> ContextDocstore:
        """A store over explicit (title, sentences) pages (first title wins on repeats)."""
        store = cls(**kwargs)
        store._index(pages)
        return store

    @property
    def titles(self) -> list[str]:
        self._ensure()
        return list(self._titles)

    def _ensure(self) -> None:
        if self._pages is None:
            records = load_records(*self._records_args)
            self._index([p for r in records for p in paragraphs(r)])

    def _index(self, pages: Sequence[tuple[str, Sequence[str]]]) -> None:
        self._pages = {}
        for title, sents in pages:
            key = title_key(title)
            if key in self._pages:  # the same Wikipedia paragraph recurs across questions
                continue
            title = html.unescape(title)  # HotpotQA keeps some titles HTML-escaped (&amp;)
            self._pages[key] = Page(title, tuple(sents))
            self._titles.append(title)
            self._by_base.setdefault(base_key(title), []).append(title)

    async def find(self, entity: str) -> Page | NotFound:
        self._ensure()
        assert self._pages is not None
        key = title_key(entity)
        if key in self._pages:
            return self._pages[key]
        same_base = self._by_base.get(base_key(entity), [])
        if len(same_base) == 1:  # `Creed` -> `Creed (band)` when that is the only Creed
            return self._pages[title_key(same_base[0])]
        return NotFound(entity, tuple(self.similar(entity, exclude=())))

    def similar(self, entity: str, exclude: Sequence[str] = ()) -> list[str]:
        """Titles most like ``entity``: same base title, near-identical spellings
        (difflib, for typos), then BM25 over titles and first sentences."""
        self._ensure()
        out = list(dict.fromkeys(self._by_base.get(base_key(entity), [])))
        keys = {title_key(t): t for t in self._titles}
        close = difflib.get_close_matches(title_key(entity), list(keys), self.n_similar, 0.8)
        out += [keys[k] for k in close if keys[k] not in out]
        if len(out) < self.n_similar:
            out += [t for t in self._bm25_titles(entity) if t not in out]
        return [t for t in out if t not in exclude][: self.n_similar]

    def _bm25_titles(self, query: str) -> list[str]:
        try:
            import bm25s
        except ImportError:  # pragma: no cover - bm25s is a dependency; difflib still works
            log.warning("bm25s is not installed: similar titles come from difflib only")
            return []

        assert self._pages is not None
        if self._bm25 is None:
            # Titles weigh double: a query is usually a name, and names are in titles.
            corpus = [
                f"{p.title} {p.title} {join_sentences(p.sentences[:2])}"
                for p in self._pages.values()
            ]
            tokens = bm25s.tokenize(corpus, stopwords="en", show_progress=False)
            retriever = bm25s.BM25()
            retriever.index(tokens, show_progress=False)
            self._bm25 = (retriever, tokens.vocab)
        retriever, vocab = self._bm25
        q = [
            w
            for w in bm25s.tokenize(query, stopwords="en", return_ids=False, show_progress=False)[0]
            if w in vocab
        ]
        if not q:
            return []
        k = min(self.n_similar, len(self._titles))
        docs, scores = retriever.retrieve([q], k=k, show_progress=False)
        return [self._titles[int(d)] for d, s in zip(docs[0], scores[0], strict=True) if s > 0]


# --------------------------------------------------------------------------- online

_HEADING = re.compile(r"^=+\s.*\s=+$")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(\[])")


def split_sentences(text: str) -> list[str]:
    """Plain-text article -> sentences (paragraph breaks and headings respected).

    A small rule-based splitter: good enough for ``Lookup`` and for the first
    sentences of ``Search``; abbreviations such as ``U.S. Army`` may split early.
    """
    out: list[str] = []
    for para in text.split("\n"):
        para = para.strip()
        if not para or _HEADING.match(para):
            continue
        out.extend(s.strip() for s in _SENTENCE_END.split(para) if s.strip())
    return out


class WikipediaDocstore(Docstore):
    """Live pages from a MediaWiki API (Wikipedia by default), cached on disk.

    Args:
        api_url: The wiki's ``api.php`` endpoint.
        cache_dir: Folder of cached API responses (one JSON file per request); a
            rerun reads pages from here instead of the network, so it sees the pages
            the first run saw.
        cache_only: Never touch the network; a request missing from the cache is a
            failed search (replay of an earlier run, or offline use).
        timeout_s: Per-request timeout.
        retries: Attempts per request on network errors and HTTP 429/5xx.
        user_agent: Sent with every request (Wikimedia asks for a descriptive one).
        search_sentences, n_similar: As for every store.
    """

    def __init__(
        self,
        api_url: str = "https://en.wikipedia.org/w/api.php",
        cache_dir: str | None = None,
        cache_only: bool = False,
        timeout_s: float = 20.0,
        retries: int = 3,
        user_agent: str = "reflexion-bench/0.1 (research benchmark; HotpotQA ReAct docstore)",
        search_sentences: int = 5,
        n_similar: int = 5,
    ) -> None:
        super().__init__(search_sentences, n_similar)
        self.api_url = api_url
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else None
        self.cache_only = cache_only
        self.timeout_s = timeout_s
        self.retries = max(1, retries)
        self.user_agent = user_agent
        self.requests_made = 0
        if cache_only and self.cache_dir is None:
            raise ValueError("docstore.cache_only needs docstore.cache_dir")

    async def find(self, entity: str) -> Page | NotFound:
        data = await self._api(
            {
                "action": "query",
                "prop": "extracts|pageprops",
                "explaintext": "1",
                "redirects": "1",
                "titles": entity,
            }
        )
        pages = (data.get("query") or {}).get("pages") or []
        page = pages[0] if pages else {}
        disambiguation = "disambiguation" in (page.get("pageprops") or {})
        extract = page.get("extract") or ""
        if (
            page
            and not page.get("missing")
            and not page.get("invalid")
            and extract
            and not disambiguation
        ):
            return Page(str(page.get("title", entity)), tuple(split_sentences(extract)))
        found = await self._api(
            {
                "action": "query",
                "list": "search",
                "srsearch": entity,
                "srlimit": str(self.n_similar),
            }
        )
        hits = (found.get("query") or {}).get("search") or []
        return NotFound(entity, tuple(str(h["title"]) for h in hits if "title" in h))

    async def _api(self, params: dict[str, str]) -> dict[str, Any]:
        full = {**params, "format": "json", "formatversion": "2"}
        cached = self._cache_get(full)
        if cached is not None:
            return cached
        if self.cache_only:
            raise DocstoreError(
                f"not in the docstore cache ({self.cache_dir}) and cache_only is set"
            )
        data = await self._fetch(full)
        if "error" in data:
            err = data["error"]
            raise DocstoreError(f"wiki API error {err.get('code')}: {err.get('info')}")
        self._cache_put(full, data)
        return data

    async def _fetch(self, params: dict[str, str]) -> dict[str, Any]:
        import httpx
        from tenacity import (
            AsyncRetrying,
            retry_if_exception_type,
            stop_after_attempt,
            wait_exponential,
        )

        try:
            async for attempt in AsyncRetrying(
                stop=stop_after_attempt(self.retries),
                wait=wait_exponential(multiplier=0.5, max=8),
                retry=retry_if_exception_type((_Transient, httpx.TransportError)),
                reraise=True,
            ):
                with attempt:
                    async with httpx.AsyncClient(
                        timeout=self.timeout_s, headers={"User-Agent": self.user_agent}
                    ) as client:
                        self.requests_made += 1
                        resp = await client.get(self.api_url, params=params)
                    if resp.status_code == 429 or resp.status_code >= 500:
                        raise _Transient(f"HTTP {resp.status_code}")
                    if resp.status_code != 200:
                        raise DocstoreError(f"HTTP {resp.status_code} from {self.api_url}")
                    payload = resp.json()
                    if not isinstance(payload, dict):
                        raise DocstoreError(f"unexpected response from {self.api_url}")
                    return payload
        except (_Transient, httpx.HTTPError, ValueError) as exc:
            raise DocstoreError(f"{type(exc).__name__}: {exc}") from None
        raise DocstoreError("no attempt made")  # pragma: no cover - AsyncRetrying always tries

    def _cache_path(self, params: dict[str, str]) -> Path | None:
        if self.cache_dir is None:
            return None
        key = json.dumps({"url": self.api_url, "params": params}, sort_keys=True)
        return self.cache_dir / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"

    def _cache_get(self, params: dict[str, str]) -> dict[str, Any] | None:
        path = self._cache_path(params)
        if path is None or not path.is_file():
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None  # a torn write: fetch again
        response = entry.get("response") if isinstance(entry, dict) else None
        return response if isinstance(response, dict) else None

    def _cache_put(self, params: dict[str, str], data: dict[str, Any]) -> None:
        path = self._cache_path(params)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        # Write-then-rename so that concurrent runs never read half a file.
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"url": self.api_url, "params": params, "response": data}, fh)
        os.replace(tmp, path)
