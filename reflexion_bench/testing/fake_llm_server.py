"""A fake LLM HTTP server for tests: the OpenAI and Anthropic wire formats on 127.0.0.1.

It lets tests drive the *real* ``openai`` and ``anthropic`` SDKs over real HTTP while
controlling latency and faults:

- ``POST /v1/chat/completions`` (also ``/chat/completions``): OpenAI chat completions.
- ``POST /v1/messages``: Anthropic messages (validates roles alternate, ``max_tokens`` set).
- ``GET /v1/models`` (also ``/models``): the model list of an OpenAI-compatible server,
  one entry: ``served_model`` (default ``fake-model``), with ``root`` when ``served_root``
  is set (vLLM reports the weights there), so clients can check what an endpoint serves.
- ``GET /_stats``: requests seen (bodies without credentials), status counts, peak
  concurrency, rate-limited count. ``POST /_config`` changes options at run time (JSON
  object of the options below, plus ``script``); ``POST /_reset`` clears stats and script.

Options (constructor keywords, ``/_config`` keys, or ``--kebab-case`` CLI flags):
``latency_s`` per request; ``reply`` (a fixed reply; default: ``"echo: <last user
message>"``); ``fail_rate`` with ``fault_kinds`` (``429``, ``500``, ``503``, ``529``,
``timeout``, ``drop``) drawn from ``seed``; ``retry_after`` (seconds, sent with 429/503/529);
``hang_s`` (how long a ``timeout`` fault stalls); ``fail_always`` (an HTTP status for every
request); ``rpm`` with ``rate_window_s`` (a sliding-window limit answering 429 when
exceeded, for testing client-side rate limits, also across processes); ``api_key`` (if
set, requests must carry it); ``system_fingerprint`` (sent with OpenAI replies when set); ``served_model`` (the id
``/v1/models`` lists and OpenAI replies report as ``model``; default: the requested name,
and ``fake-model`` in the list) and ``served_root``. ``script`` is a list of faults
(``{"kind": "429", "retry_after": 1}``...) consumed by the next requests before any random
fault. ``latency_s`` is a fixed wait per request, on a thread per connection, so N
servers answer N times as many concurrent requests per second (benchmarks of pools).

:meth:`FakeLLMServer.kill` stops a server the way a crash does: the listening socket
and every open connection are closed, so a keep-alive connection gets no more answers.

The reply honours ``max_tokens`` (counted in whitespace-separated words, the unit of the
reported usage) and ``stop``, and reports usage, so clients can be checked end to end.

Run as a subprocess (e.g. to share one endpoint between several processes)::

    python -m reflexion_bench.testing.fake_llm_server --port 0 --latency-s 0.2

prints the bound port on its first stdout line, then serves until killed. Only loopback
addresses are accepted for ``--host``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import socket
import subprocess
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field, fields
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULT_KINDS = ("429", "500", "503", "529", "timeout", "drop")


@dataclass
class FakeOptions:
    """Behaviour of the fake server (all can be changed at run time via ``/_config``)."""

    latency_s: float = 0.0
    reply: str | None = None
    fail_rate: float = 0.0
    fault_kinds: list[str] = field(default_factory=lambda: ["429", "500", "timeout"])
    seed: int = 0
    retry_after: float | None = None
    hang_s: float = 30.0
    fail_always: int | None = None
    rpm: int | None = None
    rate_window_s: float = 60.0
    api_key: str | None = None
    system_fingerprint: str | None = None
    served_model: str | None = None
    served_root: str | None = None

    def update(self, changes: dict[str, Any]) -> None:
        known = {f.name for f in fields(self)}
        unknown = set(changes) - known - {"script"}
        if unknown:
            raise ValueError(
                f"unknown fake-server options {sorted(unknown)}; known: {sorted(known)}"
            )
        for key, value in changes.items():
            if key != "script":
                setattr(self, key, value)
        bad = [k for k in self.fault_kinds if k not in FAULT_KINDS]
        if bad:
            raise ValueError(f"unknown fault kinds {bad}; allowed: {FAULT_KINDS}")


class _State:
    """Shared mutable state of one server (guarded by ``lock``)."""

    def __init__(self, options: FakeOptions) -> None:
        self.options = options
        self.lock = threading.Lock()
        self.rng = random.Random(options.seed)
        self.script: deque[dict[str, Any]] = deque()
        self.reset()

    def reset(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.statuses: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.rate_limited = 0
        self.accepted_times: deque[float] = deque()
        self.script.clear()
        self.rng = random.Random(self.options.seed)

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {
                "requests": len(self.requests),
                "statuses": dict(self.statuses),
                "max_in_flight": self.max_in_flight,
                "in_flight": self.in_flight,
                "rate_limited": self.rate_limited,
                "log": list(self.requests),
                "options": asdict(self.options),
            }

    def choose_fault(self) -> dict[str, Any] | None:
        """The fault for the next request (script first, then seeded random draw)."""
        opts = self.options
        with self.lock:
            if self.script:
                return self.script.popleft()
            if opts.fail_always is not None:
                return {"kind": str(opts.fail_always)}
            if opts.rpm is not None:
                now = time.monotonic()
                while self.accepted_times and now - self.accepted_times[0] >= opts.rate_window_s:
                    self.accepted_times.popleft()
                if len(self.accepted_times) >= opts.rpm:
                    self.rate_limited += 1
                    wait = opts.rate_window_s - (now - self.accepted_times[0])
                    return {"kind": "429", "retry_after": max(0.01, round(wait, 3))}
                self.accepted_times.append(now)
            if opts.fail_rate > 0 and self.rng.random() < opts.fail_rate:
                return {"kind": self.rng.choice(opts.fault_kinds)}
        return None


def _words(text: str) -> int:
    return len(text.split())


def _text_of(content: Any) -> str:
    """Message content as text (a string, or a list of content blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _shape_reply(text: str, max_tokens: int | None, stop: list[str]) -> tuple[str, str, str | None]:
    """Apply stop sequences and the word budget; return (text, reason, stop hit)."""
    hit: tuple[int, str] | None = None
    for s in stop:
        i = text.find(s) if s else -1
        if i >= 0 and (hit is None or i < hit[0]):
            hit = (i, s)
    if hit is not None:
        text = text[: hit[0]]
    words = text.split(" ")
    if max_tokens is not None and _words(text) > max_tokens:
        return " ".join(words[:max_tokens]), "length", None
    return text, "stop", hit[1] if hit else None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    # ------------------------------------------------------------------ plumbing
    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (e.g. it timed out)

    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw) if raw else {}

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/_stats", "/_stats/"):
            self._send_json(200, self.server.state.stats())
        elif self.path.rstrip("/") in ("/health", "/v1/health"):
            self._send_json(200, {"status": "ok"})
        elif self.path.split("?")[0].rstrip("/") in ("/v1/models", "/models"):
            opts = self.server.state.options
            card: dict[str, Any] = {
                "id": opts.served_model or "fake-model",
                "object": "model",
                "created": 0,
                "owned_by": "fake",
            }
            if opts.served_root:
                card["root"] = opts.served_root
            self._send_json(200, {"object": "list", "data": [card]})
        else:
            self._send_json(
                404, {"error": {"message": f"no route {self.path}", "type": "not_found"}}
            )

    def do_POST(self) -> None:
        state = self.server.state
        try:
            body = self._read_body()
        except json.JSONDecodeError:
            self._send_json(
                400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}}
            )
            return
        path = self.path.split("?")[0].rstrip("/")
        if path == "/_config":
            try:
                with state.lock:
                    state.options.update(body)
                    if "script" in body:
                        state.script = deque(body["script"])
                    if "seed" in body:
                        state.rng = random.Random(state.options.seed)
            except ValueError as exc:
                self._send_json(400, {"error": str(exc)})
                return
            self._send_json(200, asdict(state.options))
            return
        if path == "/_reset":
            with state.lock:
                state.reset()
            self._send_json(200, {"ok": True})
            return
        if path in ("/v1/chat/completions", "/chat/completions"):
            self._serve(body, "openai")
        elif path in ("/v1/messages", "/messages"):
            self._serve(body, "anthropic")
        else:
            self._send_json(
                404, {"error": {"message": f"no route {self.path}", "type": "not_found"}}
            )

    # ------------------------------------------------------------------ API
    def _serve(self, body: dict[str, Any], api: str) -> None:
        state = self.server.state
        opts = state.options
        # Anthropic keys come as x-api-key (older SDKs) or a bearer token (current SDK).
        auth = self.headers.get("Authorization", "") or ""
        key = auth.removeprefix("Bearer ").strip()
        if api == "anthropic" and not key:
            key = (self.headers.get("x-api-key") or "").strip()
        record = {
            "api": api,
            "path": self.path,
            "time": time.time(),
            "body": body,
            "has_key": bool(key),
            "anthropic_version": self.headers.get("anthropic-version"),
        }
        with state.lock:
            state.requests.append(record)
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
        try:
            self._answer(body, api, key, opts, state)
        finally:
            with state.lock:
                state.in_flight -= 1

    def _answer(
        self, body: dict[str, Any], api: str, key: str, opts: FakeOptions, state: _State
    ) -> None:
        if opts.api_key is not None and key != opts.api_key:
            state.statuses["401"] += 1
            # Like real providers, echo (part of) the key: clients must redact errors.
            self._error(api, 401, f"Incorrect API key provided: {key}")
            return
        problem = self._validate(body, api)
        if problem:
            state.statuses["400"] += 1
            self._error(api, 400, problem)
            return
        fault = state.choose_fault()
        if opts.latency_s:
            time.sleep(opts.latency_s)
        if fault is not None:
            kind = str(fault["kind"])
            state.statuses[kind] += 1
            if kind == "timeout":
                time.sleep(float(fault.get("hang_s", opts.hang_s)))
                self.close_connection = True
                return
            if kind == "drop":
                self.close_connection = True
                with suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            status = int(kind)
            retry_after = fault.get("retry_after", opts.retry_after)
            headers = {}
            if retry_after is not None and status in (429, 503, 529):
                headers["Retry-After"] = f"{float(retry_after):g}"
            self._error(api, status, f"injected {kind}", headers)
            return
        state.statuses["200"] += 1
        self._send_json(200, self._completion(body, api, opts))

    @staticmethod
    def _validate(body: dict[str, Any], api: str) -> str | None:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return "`messages` must be a non-empty list"
        if not body.get("model"):
            return "`model` is required"
        if api == "anthropic":
            if not isinstance(body.get("max_tokens"), int):
                return "`max_tokens` is required"
            roles = [m.get("role") for m in messages]
            if roles[0] != "user":
                return "the first message must use the `user` role"
            if any(r not in ("user", "assistant") for r in roles):
                return "messages roles must be `user` or `assistant` (system goes in `system`)"
            if any(a == b for a, b in itertools.pairwise(roles)):
                return "roles must alternate between `user` and `assistant`"
            for s in body.get("stop_sequences") or []:
                if not str(s).strip():
                    return "each stop sequence must contain non-whitespace"
        return None

    def _error(
        self, api: str, status: int, message: str, headers: dict[str, str] | None = None
    ) -> None:
        kinds = {
            400: "invalid_request_error",
            401: "authentication_error",
            429: "rate_limit_error",
            529: "overloaded_error",
            503: "overloaded_error",
        }
        kind = kinds.get(status, "api_error")
        if api == "anthropic":
            self._send_json(
                status, {"type": "error", "error": {"type": kind, "message": message}}, headers
            )
        else:
            self._send_json(
                status, {"error": {"message": message, "type": kind, "code": status}}, headers
            )

    @staticmethod
    def _completion(body: dict[str, Any], api: str, opts: FakeOptions) -> dict[str, Any]:
        messages = body["messages"]
        last_user = next(
            (_text_of(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), ""
        )
        text = opts.reply if opts.reply is not None else f"echo: {last_user}"
        prompt_words = sum(_words(_text_of(m.get("content"))) for m in messages)
        if api == "anthropic":
            system = body.get("system")
            prompt_words += _words(_text_of(system) if system is not None else "")
            stop = list(body.get("stop_sequences") or [])
            text, reason, hit = _shape_reply(text, body.get("max_tokens"), stop)
            return {
                "id": "msg_fake",
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "content": [{"type": "text", "text": text}],
                "stop_reason": {"length": "max_tokens"}.get(
                    reason, "stop_sequence" if hit else "end_turn"
                ),
                "stop_sequence": hit,
                "usage": {"input_tokens": prompt_words, "output_tokens": _words(text)},
            }
        extra = {"system_fingerprint": opts.system_fingerprint} if opts.system_fingerprint else {}
        stop_field = body.get("stop")
        stop = [stop_field] if isinstance(stop_field, str) else list(stop_field or [])
        limit = body.get("max_completion_tokens", body.get("max_tokens"))
        text, reason, _ = _shape_reply(text, limit, stop)
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": opts.served_model or body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_words,
                "completion_tokens": _words(text),
                "total_tokens": prompt_words + _words(text),
            },
            **extra,
        }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # many clients connect at once; the default of 5 drops SYNs
    state: _State

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.open_connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def process_request(self, request: Any, client_address: Any) -> None:
        # Remembered so that kill() can cut keep-alive connections (a stopped server
        # must not go on answering on the connections a client pooled).
        with self.connections_lock:
            self.open_connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.open_connections.discard(request)
        super().shutdown_request(request)


def _check_loopback(host: str) -> None:
    if not (host.startswith("127.") or host in ("localhost", "::1")):
        raise ValueError(f"the fake LLM server only binds loopback addresses, not {host!r}")


class FakeLLMServer:
    """The fake server in a background thread of this process.

    Example::

        with FakeLLMServer(latency_s=0.2) as srv:
            client = AsyncOpenAI(base_url=srv.openai_base_url, api_key="x")
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, **options: Any) -> None:
        _check_loopback(host)
        self.options = FakeOptions()
        self.options.update(options)
        self._httpd = _Server((host, port), _Handler)
        self._httpd.state = _State(self.options)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    def start(self) -> FakeLLMServer:
        # A short poll interval: shutdown() waits up to one interval.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def kill(self) -> None:
        """Stop like a crashed server: no new connections, and every open one (pooled
        keep-alive ones and requests in progress) is cut without an answer."""
        self.stop()
        with self._httpd.connections_lock:
            open_now = list(self._httpd.open_connections)
        for conn in open_now:
            with suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def configure(self, **changes: Any) -> None:
        st = self._httpd.state
        with st.lock:
            st.options.update(changes)
            if "script" in changes:
                st.script = deque(changes["script"])
            if "seed" in changes:
                st.rng = random.Random(st.options.seed)

    def reset(self) -> None:
        with self._httpd.state.lock:
            self._httpd.state.reset()

    def stats(self) -> dict[str, Any]:
        return self._httpd.state.stats()

    @property
    def requests(self) -> list[dict[str, Any]]:
        return list(self.stats()["log"])


@contextmanager
def fake_server_process(
    *args: str, timeout_s: float = 20.0
) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """Start the fake server as a subprocess (``args`` are CLI flags); yield (process, port).

    The process is terminated when the context exits.
    """
    proc = subprocess.Popen(
        [sys.executable, "-m", "reflexion_bench.testing.fake_llm_server", "--port", "0", *args],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + timeout_s
        line = ""
        while not line and time.monotonic() < deadline and proc.poll() is None:
            line = proc.stdout.readline().strip()
        if not line.isdigit():
            raise RuntimeError(f"fake LLM server did not report a port (got {line!r})")
        yield proc, int(line)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    defaults = FakeOptions()
    for f in fields(FakeOptions):
        flag = "--" + f.name.replace("_", "-")
        if f.name == "fault_kinds":
            parser.add_argument(
                flag, default=",".join(defaults.fault_kinds), help="comma-separated"
            )
        elif f.name in ("reply", "api_key", "system_fingerprint", "served_model", "served_root"):
            parser.add_argument(flag, default=None)
        elif f.name in ("fail_always", "rpm", "seed"):
            parser.add_argument(flag, type=int, default=getattr(defaults, f.name))
        else:
            parser.add_argument(flag, type=float, default=getattr(defaults, f.name))
    ns = vars(parser.parse_args(argv))
    host, port = ns.pop("host"), ns.pop("port")
    ns["fault_kinds"] = [k for k in ns["fault_kinds"].split(",") if k]
    server = FakeLLMServer(host=host, port=port, **ns)
    print(server.port, flush=True)
    with suppress(KeyboardInterrupt):
        server._httpd.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
