"""LeetcodeHard judged by LeetCode itself (optional; needs an account and the network).

This is how the paper judged LeetcodeHard. The scorer submits a solution with the
user's session cookie (read from an environment variable, never from config), waits
for the verdict, and caches it by (problem, language, exact code) in SQLite, so a
re-run or a re-score never submits the same code twice. Submissions are spaced by
``min_interval_s`` (LeetCode throttles bursts; be polite), a 429 answer backs off and
retries, and polling stops after ``max_wait_s``.

The session cookie and the CSRF token go into request headers only: they are never
logged, never put into a Score, an error message or the run's saved config.

Endpoints (as the LeetCodeHardGym client uses them): ``POST /graphql`` (the
problem's internal ``questionId``), ``POST /problems/<slug>/submit/`` (returns
``submission_id``), ``GET /submissions/detail/<id>/check/`` (``state`` PENDING /
STARTED / SUCCESS, then ``status_msg`` such as ``Accepted``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.state import TaskState
from reflexion_bench.core.types import Attempt, Score, Task

log = logging.getLogger(__name__)

#: LeetCode's verdict text -> our status.
STATUS_OF = {
    "Accepted": "pass",
    "Wrong Answer": "fail",
    "Runtime Error": "fail",
    "Memory Limit Exceeded": "fail",
    "Output Limit Exceeded": "fail",
    "Time Limit Exceeded": "timeout",
    "Compile Error": "error",
}
LANG_SLUG = {"python": "python3", "rust": "rust"}


class LeetcodeJudgeError(RuntimeError):
    """The online judge could not give a verdict (auth, network, throttling, timeout)."""


# --------------------------------------------------------------------------- submissions


def python_submission(program: str, entry_point: str) -> str:
    """A program as LeetCode's Python 3 judge wants it: a ``class Solution`` whose
    method is the entry point. Programs that already have one are sent unchanged."""
    if re.search(
        rf"^class\s+Solution\b[\s\S]*?^\s+def\s+{re.escape(entry_point)}\s*\(", program, re.M
    ):
        return program
    return (
        program.rstrip()
        + "\n\n\nclass Solution:\n"
        + f"    def {entry_point}(self, *args, **kwargs):\n"
        + f"        return {entry_point}(*args, **kwargs)\n"
    )


def rust_submission(program: str, prompt: str, entry_point: str) -> str:
    """A program as LeetCode's Rust judge wants it: ``impl Solution { pub fn ... }``
    (LeetCode declares ``struct Solution`` itself)."""
    from reflexion_bench.environments.code_rust import parse_signature

    code = re.sub(r"^\s*(?:pub\s+)?struct\s+Solution\s*;\s*$", "", program, flags=re.M)
    if re.search(rf"\bimpl\s+Solution\b[\s\S]*\bfn\s+{re.escape(entry_point)}\b", code):
        # Already LeetCode-shaped; drop the free wrapper our extraction added, if any.
        return code
    fn = parse_signature(prompt, entry_point)
    params = ", ".join(f"{n}: {t}" for n, t in fn.params)
    args = ", ".join(n for n, _ in fn.params)
    ret = f" -> {fn.ret}" if fn.ret != "()" else ""
    return (
        code.rstrip()
        + f"\n\nimpl Solution {{\n    pub fn {entry_point}({params}){ret} {{\n"
        + f"        {entry_point}({args})\n    }}\n}}\n"
    )


def submission_for(task: Task, program: str) -> tuple[str, str]:
    """(LeetCode language slug, code) of ``program`` for ``task``."""
    lang = task.data.get("language")
    name = getattr(lang, "name", str(lang or "python"))
    if name not in LANG_SLUG:
        raise ConfigError("env.language", name, tuple(LANG_SLUG))
    entry = str(task.data.get("entry_point", ""))
    if name == "rust":
        return LANG_SLUG[name], rust_submission(program, task.prompt, entry)
    return LANG_SLUG[name], python_submission(program, entry)


# --------------------------------------------------------------------------- cache


class VerdictCache:
    """SQLite verdict cache keyed by sha256(slug, language, code)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS verdicts (key TEXT PRIMARY KEY, slug TEXT, "
                "lang TEXT, verdict TEXT, created REAL)"
            )

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    @staticmethod
    def key(slug: str, lang: str, code: str) -> str:
        return hashlib.sha256(json.dumps([slug, lang, code]).encode()).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._connect() as db:
            row = db.execute("SELECT verdict FROM verdicts WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, slug: str, lang: str, verdict: dict[str, Any]) -> None:
        with self._connect() as db:
            db.execute(
                "INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?, ?)",
                (key, slug, lang, json.dumps(verdict), time.time()),
            )


# --------------------------------------------------------------------------- client


class LeetcodeClient:
    """A minimal, polite client of LeetCode's submission endpoints.

    Args:
        base_url: ``https://leetcode.com`` (tests point it at a local fake server).
        session: The ``LEETCODE_SESSION`` cookie value.
        csrf_token: The ``csrftoken`` cookie value (also sent as ``x-csrftoken``).
        min_interval_s: Least time between two submissions.
        poll_interval_s: Time between two verdict polls.
        max_wait_s: Give up waiting for a verdict after this long.
        max_retries: Retries of a request answered 429 / 5xx or failed on the network.
        request_timeout_s: Timeout of one HTTP request.
    """

    def __init__(
        self,
        base_url: str,
        session: str,
        csrf_token: str = "",
        min_interval_s: float = 10.0,
        poll_interval_s: float = 2.0,
        max_wait_s: float = 180.0,
        max_retries: int = 4,
        request_timeout_s: float = 30.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._session = session
        self._csrf = csrf_token
        self.min_interval_s = min_interval_s
        self.poll_interval_s = poll_interval_s
        self.max_wait_s = max_wait_s
        self.max_retries = max_retries
        self.request_timeout_s = request_timeout_s
        self._submit_lock = asyncio.Lock()
        self._last_submit = 0.0
        self._question_ids: dict[str, str] = {}
        self._client: Any = None

    def __repr__(self) -> str:  # never show the cookie
        return f"LeetcodeClient(base_url={self.base_url!r}, session=***)"

    def _headers(self, slug: str | None = None) -> dict[str, str]:
        cookie = f"LEETCODE_SESSION={self._session}"
        if self._csrf:
            cookie += f"; csrftoken={self._csrf}"
        headers = {
            "Cookie": cookie,
            "Content-Type": "application/json",
            "Origin": self.base_url,
            "Referer": f"{self.base_url}/problems/{slug}/" if slug else self.base_url + "/",
            "User-Agent": "reflexion-bench (research harness; polite client)",
        }
        if self._csrf:
            headers["x-csrftoken"] = self._csrf
        return headers

    async def _http(self) -> Any:
        if self._client is None:
            import httpx

            self._client = httpx.AsyncClient(timeout=self.request_timeout_s, follow_redirects=False)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def _request(self, method: str, path: str, slug: str | None, body: Any = None) -> Any:
        import httpx

        client = await self._http()
        delay = max(self.poll_interval_s, 1.0)
        last = ""
        for attempt in range(self.max_retries + 1):
            try:
                resp = await client.request(
                    method,
                    self.base_url + path,
                    headers=self._headers(slug),
                    content=None if body is None else json.dumps(body),
                )
            except httpx.HTTPError as exc:
                # The exception text names the URL, never the headers.
                last = f"{type(exc).__name__} on {method} {path}"
            else:
                if resp.status_code in (401, 403):
                    raise LeetcodeJudgeError(
                        f"LeetCode refused {method} {path} (HTTP {resp.status_code}): the "
                        "session cookie is missing, expired or lacks the CSRF token "
                        "(set LEETCODE_SESSION and LEETCODE_CSRF_TOKEN)"
                    )
                if resp.status_code == 429 or resp.status_code >= 500:
                    last = f"HTTP {resp.status_code} on {method} {path}"
                    retry_after = resp.headers.get("Retry-After")
                    if retry_after and retry_after.replace(".", "", 1).isdigit():
                        delay = max(delay, float(retry_after))
                elif resp.status_code >= 400:
                    raise LeetcodeJudgeError(f"HTTP {resp.status_code} on {method} {path}")
                else:
                    try:
                        return resp.json()
                    except ValueError:
                        raise LeetcodeJudgeError(f"{method} {path} did not answer JSON") from None
            if attempt < self.max_retries:
                log.info("leetcode: %s; retrying in %.1fs", last, delay)
                await asyncio.sleep(delay)
                delay *= 2
        raise LeetcodeJudgeError(f"giving up after {self.max_retries + 1} tries: {last}")

    async def question_id(self, slug: str) -> str:
        if slug not in self._question_ids:
            query = (
                "query questionData($titleSlug: String!) "
                "{ question(titleSlug: $titleSlug) { questionId } }"
            )
            data = await self._request(
                "POST", "/graphql", slug, {"query": query, "variables": {"titleSlug": slug}}
            )
            try:
                self._question_ids[slug] = str(data["data"]["question"]["questionId"])
            except (KeyError, TypeError):
                raise LeetcodeJudgeError(
                    f"no questionId for {slug!r} in LeetCode's answer"
                ) from None
        return self._question_ids[slug]

    async def submit(self, slug: str, lang: str, code: str) -> str:
        qid = await self.question_id(slug)
        async with self._submit_lock:
            wait = self._last_submit + self.min_interval_s - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            try:
                data = await self._request(
                    "POST",
                    f"/problems/{slug}/submit/",
                    slug,
                    {"lang": lang, "question_id": qid, "typed_code": code},
                )
            finally:
                self._last_submit = time.monotonic()
        sid = data.get("submission_id") if isinstance(data, dict) else None
        if sid is None:
            raise LeetcodeJudgeError(f"submitting {slug} gave no submission_id: {str(data)[:200]}")
        log.info("leetcode: submitted %s (%s) as submission %s", slug, lang, sid)
        return str(sid)

    async def verdict(self, submission_id: str, slug: str) -> dict[str, Any]:
        started = time.monotonic()
        while True:
            data = await self._request("GET", f"/submissions/detail/{submission_id}/check/", slug)
            if isinstance(data, dict) and data.get("state") == "SUCCESS":
                return data
            if time.monotonic() - started > self.max_wait_s:
                raise LeetcodeJudgeError(
                    f"no verdict for submission {submission_id} after {self.max_wait_s:.0f}s"
                )
            await asyncio.sleep(self.poll_interval_s)


# --------------------------------------------------------------------------- scorer


class LeetcodeOnlineScorer:
    """Final scorer that asks LeetCode's judge (see the module doc).

    Args:
        base_url: The judge's address.
        cookie_env: Environment variable holding the ``LEETCODE_SESSION`` cookie.
        csrf_env: Environment variable holding the ``csrftoken`` cookie.
        cache_path: SQLite file of cached verdicts.
        min_interval_s, poll_interval_s, max_wait_s, max_retries, request_timeout_s:
            see :class:`LeetcodeClient`.
    """

    def __init__(
        self,
        base_url: str = "https://leetcode.com",
        cookie_env: str = "LEETCODE_SESSION",
        csrf_env: str = "LEETCODE_CSRF_TOKEN",
        cache_path: str | Path = "~/.cache/reflexion-bench/leetcode_verdicts.sqlite",
        min_interval_s: float = 10.0,
        poll_interval_s: float = 2.0,
        max_wait_s: float = 180.0,
        max_retries: int = 4,
        request_timeout_s: float = 30.0,
    ) -> None:
        session = os.environ.get(cookie_env, "")
        if not session:
            raise ConfigError(
                "scorer.cookie_env",
                cookie_env,
                f"the name of an environment variable holding your LeetCode session cookie "
                f"(export {cookie_env}=<the LEETCODE_SESSION cookie of a logged-in browser>)",
            )
        self.client = LeetcodeClient(
            base_url,
            session,
            os.environ.get(csrf_env, ""),
            min_interval_s=min_interval_s,
            poll_interval_s=poll_interval_s,
            max_wait_s=max_wait_s,
            max_retries=max_retries,
            request_timeout_s=request_timeout_s,
        )
        self.cache = VerdictCache(cache_path)

    def __repr__(self) -> str:
        return f"LeetcodeOnlineScorer({self.client!r})"

    async def score(self, state: TaskState, attempt: Attempt) -> Score:
        return await self.score_program(state.task, attempt.candidate)

    async def score_program(self, task: Task, program: str) -> Score:
        slug = str(task.data.get("slug", task.id))
        lang, code = submission_for(task, program)
        key = self.cache.key(slug, lang, code)
        cached = self.cache.get(key)
        if cached is not None:
            return _score_of(cached, cached=True)
        try:
            sid = await self.client.submit(slug, lang, code)
            verdict = await self.client.verdict(sid, slug)
        except LeetcodeJudgeError as exc:
            # Not cached: a judge failure says nothing about the code.
            return Score(passed=False, status="error", detail=f"online judge: {exc}")
        record = {
            "submission_id": sid,
            "status_msg": verdict.get("status_msg", ""),
            "total_correct": verdict.get("total_correct"),
            "total_testcases": verdict.get("total_testcases"),
            "status_runtime": verdict.get("status_runtime"),
            "compile_error": verdict.get("full_compile_error") or verdict.get("compile_error"),
            "runtime_error": verdict.get("full_runtime_error") or verdict.get("runtime_error"),
            "last_testcase": verdict.get("last_testcase"),
        }
        self.cache.put(key, slug, lang, record)
        return _score_of(record, cached=False)

    async def aclose(self) -> None:
        await self.client.aclose()


def _score_of(record: dict[str, Any], cached: bool) -> Score:
    msg = str(record.get("status_msg", ""))
    status = STATUS_OF.get(msg, "fail")
    detail = msg
    if record.get("total_testcases"):
        detail += f" ({record.get('total_correct')}/{record.get('total_testcases')} test cases)"
    extra_text = record.get("compile_error") or record.get("runtime_error")
    if extra_text:
        detail += f": {str(extra_text)[:1000]}"
    return Score(
        passed=status == "pass",
        status=status,
        value=1.0 if status == "pass" else 0.0,
        detail=detail,
        extra={
            "judge": "leetcode_online",
            "cached": cached,
            "submission_id": record.get("submission_id"),
            "total_correct": record.get("total_correct"),
            "total_testcases": record.get("total_testcases"),
        },
    )
