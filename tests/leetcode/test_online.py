"""The online LeetCode judge client against a fake judge on 127.0.0.1 (real HTTP).

The fake server speaks the three endpoints the scorer uses, records every request
with its headers and time, and can be told to throttle (429), refuse (403), or keep
a submission pending. Nothing here touches the internet.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.config import redact_text
from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.types import Task
from reflexion_bench.environments.code_python import PythonLanguage
from reflexion_bench.environments.code_rust import RustLanguage
from reflexion_bench.scorers.leetcode_online import (
    LeetcodeOnlineScorer,
    python_submission,
    rust_submission,
)

pytestmark = pytest.mark.network_local

COOKIE = "sess-SECRET-0123456789abcdef"
CSRF = "csrf-SECRET-fedcba9876543210"


@dataclass
class FakeJudge:
    """State of the fake judge: what it answers and what it saw."""

    requests: list[dict[str, Any]] = field(default_factory=list)
    verdicts: dict[str, str] = field(default_factory=dict)  # marker in code -> status_msg
    pending_polls: int = 2
    throttle_next: int = 0
    refuse: bool = False
    next_id: int = 1000
    polls: dict[str, int] = field(default_factory=dict)
    codes: dict[str, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


def make_handler(judge: FakeJudge) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep the test output clean
            pass

        def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _record(self, body: Any) -> None:
            with judge.lock:
                judge.requests.append(
                    {
                        "method": self.command,
                        "path": self.path,
                        "headers": dict(self.headers),
                        "body": body,
                        "t": time.monotonic(),
                    }
                )

        def do_POST(self) -> None:
            n = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(n) or b"null")
            self._record(body)
            if judge.refuse or f"LEETCODE_SESSION={COOKIE}" not in self.headers.get("Cookie", ""):
                return self._send(403, {"error": "forbidden"})
            if self.path == "/graphql":
                slug = body["variables"]["titleSlug"]
                return self._send(200, {"data": {"question": {"questionId": f"q-{slug}"}}})
            m = re.fullmatch(r"/problems/([\w-]+)/submit/", self.path)
            if m:
                with judge.lock:
                    if judge.throttle_next:
                        judge.throttle_next -= 1
                        return self._send(429, {"error": "slow down"}, {"Retry-After": "0.2"})
                    sid = str(judge.next_id)
                    judge.next_id += 1
                    judge.codes[sid] = body["typed_code"]
                return self._send(200, {"submission_id": int(sid)})
            return self._send(404, {})

        def do_GET(self) -> None:
            self._record(None)
            m = re.fullmatch(r"/submissions/detail/(\d+)/check/", self.path)
            if not m:
                return self._send(404, {})
            sid = m.group(1)
            with judge.lock:
                judge.polls[sid] = judge.polls.get(sid, 0) + 1
                if judge.polls[sid] <= judge.pending_polls:
                    return self._send(200, {"state": "PENDING"})
                code = judge.codes[sid]
            msg = next((v for k, v in judge.verdicts.items() if k in code), "Wrong Answer")
            body: dict[str, Any] = {
                "state": "SUCCESS",
                "status_msg": msg,
                "total_correct": 40 if msg == "Accepted" else 12,
                "total_testcases": 40,
                "status_runtime": "31 ms",
            }
            if msg == "Compile Error":
                body["full_compile_error"] = "Line 3: SyntaxError: invalid syntax"
            return self._send(200, body)

    return Handler


@pytest.fixture
def judge() -> Iterator[tuple[FakeJudge, str]]:
    state = FakeJudge()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def cookies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEETCODE_SESSION", COOKIE)
    monkeypatch.setenv("LEETCODE_CSRF_TOKEN", CSRF)


def task(slug: str = "count-anagrams", entry: str = "countAnagrams") -> Task:
    return Task(
        slug,
        f'def {entry}(s: str) -> int:\n    """doc"""\n',
        "leetcode_hard",
        {"language": PythonLanguage(), "entry_point": entry, "slug": slug},
    )


def scorer(base: str, tmp_path: Path, **kw: Any) -> LeetcodeOnlineScorer:
    return LeetcodeOnlineScorer(
        base_url=base,
        cache_path=tmp_path / "verdicts.sqlite",
        min_interval_s=kw.pop("min_interval_s", 0.0),
        poll_interval_s=0.05,
        **kw,
    )


async def test_submit_poll_verdict_and_cache(
    judge: tuple[FakeJudge, str], tmp_path: Path, cookies: None
) -> None:
    state, base = judge
    state.verdicts = {
        "# good": "Accepted",
        "# slow": "Time Limit Exceeded",
        "# typo": "Compile Error",
    }
    sc = scorer(base, tmp_path)
    try:
        good = await sc.score_program(task(), "def countAnagrams(s):\n    return 1  # good\n")
        assert good.passed and good.status == "pass"
        assert good.detail == "Accepted (40/40 test cases)"
        assert good.extra["submission_id"] == "1000" and good.extra["cached"] is False
        slow = await sc.score_program(task(), "def countAnagrams(s):\n    return 2  # slow\n")
        assert slow.status == "timeout" and not slow.passed
        bad = await sc.score_program(task(), "def countAnagrams(s):\n    return 3  # typo\n")
        assert bad.status == "error" and "SyntaxError" in bad.detail
        wrong = await sc.score_program(task(), "def countAnagrams(s):\n    return 4\n")
        assert wrong.status == "fail" and "12/40" in wrong.detail
    finally:
        await sc.aclose()
    submits = [r for r in state.requests if r["path"].endswith("/submit/")]
    assert len(submits) == 4
    first = submits[0]
    assert first["path"] == "/problems/count-anagrams/submit/"
    assert first["body"]["lang"] == "python3" and first["body"]["question_id"] == "q-count-anagrams"
    # LeetCode's Python judge calls Solution().countAnagrams(...).
    assert "class Solution:" in first["body"]["typed_code"]
    assert first["headers"]["x-csrftoken"] == CSRF
    assert f"csrftoken={CSRF}" in first["headers"]["Cookie"]
    # Polled until the verdict was ready.
    assert state.polls["1000"] == state.pending_polls + 1
    # The questionId was looked up once per problem.
    assert sum(r["path"] == "/graphql" for r in state.requests) == 1

    # A new scorer (a new run) on the same cache: no new submission for known code.
    n_before = len(state.requests)
    sc2 = scorer(base, tmp_path)
    try:
        again = await sc2.score_program(task(), "def countAnagrams(s):\n    return 1  # good\n")
    finally:
        await sc2.aclose()
    assert again.passed and again.extra["cached"] is True
    assert len(state.requests) == n_before


async def test_submissions_are_spaced_and_429_backs_off(
    judge: tuple[FakeJudge, str], tmp_path: Path, cookies: None
) -> None:
    import asyncio

    state, base = judge
    state.pending_polls = 0
    state.throttle_next = 1
    sc = scorer(base, tmp_path, min_interval_s=0.4)
    try:
        programs = [f"def countAnagrams(s):\n    return {i}\n" for i in range(3)]
        scores = await asyncio.gather(*(sc.score_program(task(), p) for p in programs))
    finally:
        await sc.aclose()
    assert all(s.status == "fail" for s in scores)
    submits = [r for r in state.requests if r["path"].endswith("/submit/")]
    assert len(submits) == 4  # one throttled and retried
    ok = [r["t"] for r in submits]
    gaps = [b - a for a, b in itertools.pairwise(ok)]
    # The throttled try was retried after Retry-After; the others kept the interval.
    assert all(g >= 0.15 for g in gaps), gaps
    assert sum(g >= 0.38 for g in gaps) >= 2, gaps


async def test_refusal_is_an_error_that_is_not_cached(
    judge: tuple[FakeJudge, str], tmp_path: Path, cookies: None
) -> None:
    state, base = judge
    state.refuse = True
    sc = scorer(base, tmp_path, max_retries=0)
    try:
        s = await sc.score_program(task(), "def countAnagrams(s):\n    return 1\n")
        assert s.status == "error" and "HTTP 403" in s.detail and "LEETCODE_SESSION" in s.detail
        state.refuse = False
        state.verdicts = {"return 1": "Accepted"}
        s2 = await sc.score_program(task(), "def countAnagrams(s):\n    return 1\n")
        assert s2.passed and s2.extra["cached"] is False
    finally:
        await sc.aclose()


async def test_cookie_never_logged_or_returned(
    judge: tuple[FakeJudge, str],
    tmp_path: Path,
    cookies: None,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    state, base = judge
    state.throttle_next = 1
    caplog.set_level(logging.DEBUG)
    sc = scorer(base, tmp_path)
    try:
        s = await sc.score_program(task(), "def countAnagrams(s):\n    return 1\n")
        state.refuse = True
        refused = await sc.score_program(task(), "def countAnagrams(s):\n    return 9\n")
    finally:
        await sc.aclose()
    assert refused.status == "error"
    captured = capsys.readouterr()
    everything = "\n".join(
        [
            caplog.text,
            captured.out,
            captured.err,
            repr(sc),
            repr(sc.client),
            json.dumps(s.__dict__, default=str),
            json.dumps(refused.__dict__, default=str),
            (tmp_path / "verdicts.sqlite").read_bytes().decode("latin-1"),
        ]
    )
    assert COOKIE not in everything and CSRF not in everything
    assert "submitted count-anagrams" in caplog.text  # it did log, just not the secrets
    # The harness's redaction masks the cookie's value wherever it might appear.
    assert COOKIE not in redact_text(f"header Cookie: LEETCODE_SESSION={COOKIE}")


def test_missing_cookie_fails_at_start_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LEETCODE_SESSION", raising=False)
    with pytest.raises(ConfigError, match="LEETCODE_SESSION"):
        LeetcodeOnlineScorer(base_url="http://127.0.0.1:9", cache_path=tmp_path / "c.sqlite")


def test_submission_shapes() -> None:
    py = python_submission("def f(a, b):\n    return a + b\n", "f")
    ns: dict[str, Any] = {}
    exec(py, ns)
    assert ns["Solution"]().f(2, 3) == 5
    already = "class Solution:\n    def f(self, a):\n        return a\n"
    assert python_submission(already, "f") == already
    prompt = "fn is_reachable(target_x: i32, target_y: i32) -> bool {\n"
    rs = rust_submission(
        "fn is_reachable(target_x: i32, target_y: i32) -> bool { true }\n", prompt, "is_reachable"
    )
    assert "impl Solution {\n    pub fn is_reachable(target_x: i32, target_y: i32) -> bool {" in rs
    assert "is_reachable(target_x, target_y)" in rs
    # Our Rust extraction's `struct Solution;` is dropped: LeetCode declares it.
    lang = RustLanguage()
    extracted = lang.extract_code(
        "```rust\nimpl Solution {\n    pub fn is_reachable(target_x: i32, target_y: i32) -> bool { true }\n}\n```",
        prompt,
        "is_reachable",
    ).program
    assert "struct Solution" not in rust_submission(extracted, prompt, "is_reachable")
