"""The fake LLM server as other areas use it: a subprocess on 127.0.0.1 configured over HTTP."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from reflexion_bench.testing.fake_llm_server import FakeLLMServer, fake_server_process

pytestmark = pytest.mark.network_local

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi there"}], "max_tokens": 5}


def post(port: int, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read()), dict(resp.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), dict(exc.headers)


def get(port: int, path: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as resp:
        return dict(json.loads(resp.read()))


def test_subprocess_server_reports_port_and_enforces_a_rate_window() -> None:
    with fake_server_process("--rpm", "3", "--rate-window-s", "30") as (proc, port):
        codes = [post(port, "/v1/chat/completions", CHAT)[0] for _ in range(5)]
        assert codes == [200, 200, 200, 429, 429]
        status, body, headers = post(port, "/v1/chat/completions", CHAT)
        assert status == 429 and float(headers["Retry-After"]) > 0
        assert body["error"]["type"] == "rate_limit_error"
        stats = get(port, "/_stats")
        assert stats["rate_limited"] == 3 and stats["requests"] == 6
        assert proc.poll() is None


def test_runtime_config_script_and_reset_over_http() -> None:
    with fake_server_process() as (_, port):
        assert (
            post(port, "/_config", {"script": [{"kind": "503", "retry_after": 2}], "reply": "ok"})[
                0
            ]
            == 200
        )
        status, _, headers = post(port, "/v1/chat/completions", CHAT)
        assert status == 503 and headers["Retry-After"] == "2"
        status, body, _ = post(port, "/v1/chat/completions", CHAT)
        assert status == 200 and body["choices"][0]["message"]["content"] == "ok"
        assert body["usage"] == {"prompt_tokens": 2, "completion_tokens": 1, "total_tokens": 3}
        assert post(port, "/_config", {"nonsense": 1})[0] == 400
        post(port, "/_reset", {})
        assert get(port, "/_stats")["requests"] == 0


def test_seeded_faults_are_reproducible() -> None:
    def statuses(seed: int) -> list[int]:
        with FakeLLMServer(fail_rate=0.5, fault_kinds=["500", "429"], seed=seed) as srv:
            return [post(srv.port, "/v1/chat/completions", CHAT)[0] for _ in range(20)]

    first = statuses(3)
    assert first == statuses(3)
    assert 200 in first and {500, 429} & set(first)
    assert first != statuses(4)


def test_only_loopback_addresses() -> None:
    with pytest.raises(ValueError, match="loopback"):
        FakeLLMServer(host="0.0.0.0")


def test_models_route_reports_the_served_id_and_replies_name_it() -> None:
    with fake_server_process("--served-model", "llama-8b", "--served-root", "org/llama") as (
        _,
        port,
    ):
        listed = get(port, "/v1/models")
        status, body, _ = post(port, "/v1/chat/completions", CHAT)
    assert [(m["id"], m["root"]) for m in listed["data"]] == [("llama-8b", "org/llama")]
    assert status == 200 and body["model"] == "llama-8b"
    with FakeLLMServer() as srv:  # unset: a default id listed, the requested name echoed
        assert [m["id"] for m in get(srv.port, "/models")["data"]] == ["fake-model"]
        assert post(srv.port, "/v1/chat/completions", CHAT)[1]["model"] == "m"


def test_kill_cuts_keep_alive_connections_that_stop_would_leave_answering() -> None:
    import http.client

    srv = FakeLLMServer().start()
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
    body = json.dumps(CHAT)
    conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
    assert conn.getresponse().read()
    srv.kill()
    with pytest.raises((ConnectionError, http.client.HTTPException, OSError)):
        conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
        conn.getresponse().read()
    conn.close()
