"""A pool of OpenAI-compatible servers of one model (``model=openai_pool``), against real
fake servers on 127.0.0.1 and the real ``openai`` SDK: routing, failover, start checks,
the cache identity, and a real run that loses a server half way."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.core.errors import ConfigError
from reflexion_bench.core.types import GenerateConfig, Message
from reflexion_bench.models.cache import request_key
from reflexion_bench.models.layer import ModelLayer, build_layered_model
from reflexion_bench.models.pool import PooledOpenAIClient, PoolUnavailableError
from reflexion_bench.runner.runlog import load_run_records
from reflexion_bench.testing.fake_llm_server import FakeLLMServer, fake_server_process

pytestmark = pytest.mark.network_local

ROOT = Path(__file__).resolve().parents[2]
POOL = "reflexion_bench.models.pool.PooledOpenAIClient"
MSG = [Message("user", "hello pool")]
CFG = GenerateConfig(max_tokens=8)


def closed_port_url() -> str:
    """The URL of a port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def layer(urls: list[str], **options: Any) -> ModelLayer:
    opts: dict[str, Any] = {"name": "m", "base_urls": urls, "timeout_s": 10, "retries": 0}
    opts.update(options)
    return build_layered_model(POOL, **opts)


def get_json(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return dict(json.loads(resp.read()))


# --------------------------------------------------------------------------- routing


async def test_a_busy_endpoint_gets_no_call_while_another_has_fewer_in_flight() -> None:
    with (
        FakeLLMServer(served_model="m", latency_s=3.0) as slow,
        FakeLLMServer(served_model="m", latency_s=0.02) as b,
        FakeLLMServer(served_model="m", latency_s=0.02) as c,
    ):
        urls = [slow.openai_base_url, b.openai_base_url, c.openai_base_url]
        model = layer(urls)
        try:
            await model.start()
            # All idle: the first call goes to the first endpoint and stays there 3 s.
            long_call = asyncio.create_task(model.generate(MSG, CFG))
            deadline = time.monotonic() + 2.0
            while slow.stats()["in_flight"] == 0 and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            assert slow.stats()["in_flight"] == 1
            served = [(await model.generate(MSG, CFG)).endpoint for _ in range(6)]
            assert (await long_call).endpoint == urls[0]
        finally:
            await model.aclose()
    # One at a time while the slow one is busy: the idle two take turns.
    assert Counter(served) == {urls[1]: 3, urls[2]: 3}
    assert slow.stats()["requests"] == 1


async def test_the_layer_admits_every_endpoints_limit_and_no_more() -> None:
    servers = [FakeLLMServer(served_model="m", latency_s=0.4).start() for _ in range(3)]
    try:
        model = layer([s.openai_base_url for s in servers], max_connections=2)
        assert model.max_connections == 6  # 2 per endpoint, not 2 for the pool
        started = time.perf_counter()
        outs = await asyncio.gather(*(model.generate(MSG, CFG) for _ in range(12)))
        wall = time.perf_counter() - started
        await model.aclose()
    finally:
        for s in servers:
            s.stop()
    # 12 calls, 6 at a time on 3 servers of 2: two rounds of 0.4 s (one server: six).
    assert [s.stats()["max_in_flight"] for s in servers] == [2, 2, 2]
    assert [s.stats()["requests"] for s in servers] == [4, 4, 4]
    # (Held to one endpoint's limit it would take 6 rounds, 2.4 s.)
    assert wall < 2.2, wall
    assert all(o.retries == 0 and o.endpoint_failovers is None for o in outs)


# --------------------------------------------------------------------------- failover


async def test_a_killed_endpoint_is_marked_dead_and_its_calls_move_on() -> None:
    servers = [FakeLLMServer(served_model="m", latency_s=0.3).start() for _ in range(3)]
    urls = [s.openai_base_url for s in servers]
    model = layer(urls, max_connections=4, endpoint_cooldown_s=60)
    try:
        first = await asyncio.gather(*(model.generate(MSG, CFG) for _ in range(6)))
        assert {o.endpoint for o in first} == set(urls)
        batch = asyncio.gather(*(model.generate(MSG, CFG) for _ in range(9)))
        await asyncio.sleep(0.1)  # the batch is in flight on every server
        answered_before = servers[1].stats()["requests"]
        servers[1].kill()  # open keep-alive connections and requests in progress are cut
        second = await batch
        after = await asyncio.gather(*(model.generate(MSG, CFG) for _ in range(6)))
        pool: PooledOpenAIClient = model.client  # type: ignore[assignment]
        state = {e["endpoint"]: e for e in pool.stats()}
    finally:
        await model.aclose()
        for s in (servers[0], servers[2]):
            s.stop()
    moved = [o for o in second if o.endpoint_failovers]
    assert moved, "calls in flight on the killed server were moved"
    assert all(o.endpoint != urls[1] for o in moved)
    assert all(f == f"{urls[1]}: connection" for o in moved for f in o.endpoint_failovers or [])
    # Nothing answered after the kill came from it, and no retry was spent on moving.
    assert all(o.endpoint != urls[1] for o in second + after)
    assert all(o.retries == 0 for o in first + second + after)
    assert answered_before >= 2
    assert state[urls[1]]["alive"] is False and state[urls[1]]["failures"] >= 1
    assert state[urls[0]]["alive"] and state[urls[2]]["alive"]


async def test_an_endpoint_that_stops_answering_times_out_and_the_call_moves() -> None:
    with (
        FakeLLMServer(served_model="m", fail_rate=1.0, fault_kinds=["timeout"], hang_s=5) as hung,
        FakeLLMServer(served_model="m") as ok,
    ):
        model = layer([hung.openai_base_url, ok.openai_base_url], timeout_s=0.5)
        try:
            started = time.perf_counter()
            out = await model.generate(MSG, CFG)  # the first call goes to the first endpoint
            wall = time.perf_counter() - started
            again = await model.generate(MSG, CFG)
        finally:
            await model.aclose()
    assert out.endpoint == ok.openai_base_url and out.retries == 0
    assert out.endpoint_failovers == [f"{hung.openai_base_url}: timeout"]
    assert 0.5 <= wall < 3.0
    assert again.endpoint == ok.openai_base_url and again.endpoint_failovers is None
    assert hung.stats()["requests"] == 1


async def test_a_dead_endpoint_gets_one_probe_after_its_cooldown_and_comes_back() -> None:
    down = closed_port_url()
    port = int(down.rsplit(":", 1)[1].split("/")[0])
    with FakeLLMServer(served_model="m") as up:
        model = layer([down, up.openai_base_url], endpoint_cooldown_s=0.3)
        try:
            await model.start()  # down at start: marked dead, not an error
            assert (await model.generate(MSG, CFG)).endpoint == up.openai_base_url
            with FakeLLMServer(port=port, served_model="m") as back:
                await asyncio.sleep(0.4)  # past the cooldown
                outs = [await model.generate(MSG, CFG) for _ in range(4)]
                probes = back.stats()["requests"]
        finally:
            await model.aclose()
    # Due a probe and idle: the next call is the probe; answered, the endpoint is back
    # in the rotation (how the rest split depends on when the cooldown ended).
    assert outs[0].endpoint == down
    assert {o.endpoint for o in outs} == {down, up.openai_base_url}
    assert probes == sum(o.endpoint == down for o in outs)
    assert all(o.endpoint_failovers is None for o in outs)


async def test_with_every_endpoint_dead_the_layers_retries_probe_them_at_once() -> None:
    a, b = FakeLLMServer(served_model="m").start(), FakeLLMServer(served_model="m").start()
    urls, port = [a.openai_base_url, b.openai_base_url], b.port
    # A cooldown longer than the test: only the all-dead rule can bring b back in time.
    model = layer(urls, endpoint_cooldown_s=600, retries=6, backoff_s=0.1, max_backoff_s=0.2)
    try:
        await model.start()
        a.kill()
        b.kill()
        call = asyncio.create_task(model.generate(MSG, CFG))
        await asyncio.sleep(0.3)  # both fail, the layer backs off and retries
        with FakeLLMServer(port=port, served_model="m"):
            out = await call
    finally:
        await model.aclose()
    assert out.endpoint == urls[1] and out.retries >= 1


# --------------------------------------------------------------------------- start checks


async def test_endpoints_serving_different_models_are_refused_naming_the_fix() -> None:
    with FakeLLMServer(served_model="m") as a, FakeLLMServer(served_model="other") as b:
        urls = [a.openai_base_url, b.openai_base_url]
        with pytest.raises(ConfigError) as info:
            await layer(urls).start()
        message = str(info.value)
        assert "model.base_urls" in message and "model.allow_mixed_pool=true" in message
        assert "'m'" in message and "'other'" in message
        mixed = layer(urls, allow_mixed_pool=True)
        await mixed.start()
        ident = mixed.identity()
        await mixed.aclose()
    assert [s["id"] for s in ident["served_models"]] == ["m", "other"]


async def test_the_same_id_over_different_weights_is_a_mixed_pool() -> None:
    # vLLM reports the weights behind a served name as `root`.
    with (
        FakeLLMServer(served_model="m", served_root="org/llama-8b") as a,
        FakeLLMServer(served_model="m", served_root="org/mistral-7b") as b,
        pytest.raises(ConfigError, match="allow_mixed_pool"),
    ):
        layer([a.openai_base_url, b.openai_base_url]).identity()


async def test_an_endpoint_down_at_start_is_marked_dead_not_an_error() -> None:
    down = closed_port_url()
    with FakeLLMServer(served_model="m") as a, FakeLLMServer(served_model="m") as b:
        model = layer([a.openai_base_url, down, b.openai_base_url], endpoint_cooldown_s=60)
        try:
            await model.start()
            outs = await asyncio.gather(*(model.generate(MSG, CFG) for _ in range(6)))
            pool: PooledOpenAIClient = model.client  # type: ignore[assignment]
            state = {e["endpoint"]: e for e in pool.stats()}
        finally:
            await model.aclose()
    assert state[down]["alive"] is False and "GET /v1/models" in state[down]["last_error"]
    assert {o.endpoint for o in outs} == {a.openai_base_url, b.openai_base_url}
    assert all(o.endpoint_failovers is None for o in outs)  # no call was sent there


async def test_every_endpoint_down_is_one_clear_error() -> None:
    urls = [closed_port_url(), closed_port_url()]
    with pytest.raises(PoolUnavailableError) as info:
        await layer(urls).start()
    message = str(info.value)
    assert "model.base_urls" in message and all(u in message for u in urls)


def test_every_endpoint_down_ends_the_cli_with_one_line(tmp_path: Path) -> None:
    urls = [closed_port_url(), closed_port_url()]
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "reflexion_bench.cli",
            "run",
            *toy_run_args(tmp_path, urls),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "model.base_urls" in errors[0], proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr


def test_base_urls_must_be_a_list_of_distinct_urls() -> None:
    with pytest.raises(ConfigError, match=r"model\.base_urls"):
        PooledOpenAIClient(name="m", base_urls=[])
    with pytest.raises(ConfigError, match="repeated"):
        PooledOpenAIClient(name="m", base_urls=["http://127.0.0.1:1/v1", "http://127.0.0.1:1/v1/"])


# --------------------------------------------------------------------------- cache identity


async def test_a_pool_and_a_single_server_of_one_model_share_cache_entries(
    tmp_path: Path,
) -> None:
    cache = str(tmp_path / "cache.sqlite")
    servers = [FakeLLMServer(served_model="m").start() for _ in range(4)]
    try:
        three = layer(
            [s.openai_base_url for s in servers[:3]], cache="read_write", cache_path=cache
        )
        recorded = await three.generate(MSG, CFG)
        await three.aclose()
        # Another machine's single server of the same model: a replay, no request sent.
        one = layer([servers[3].openai_base_url], cache="read_only", cache_path=cache)
        replayed = await one.generate(MSG, CFG)
        await one.aclose()
        assert replayed.cached and replayed.text == recorded.text
        assert servers[3].stats()["requests"] == 0
        # The URLs are recorded, not keyed.
        assert one.identity()["endpoints"] == [servers[3].openai_base_url]
        servers[3].configure(served_model="another")
        other = layer([servers[3].openai_base_url], cache="read_write", cache_path=cache)
        assert (
            request_key(other.identity(), MSG, CFG)[0] != request_key(three.identity(), MSG, CFG)[0]
        )
        fresh = await other.generate(MSG, CFG)
        await other.aclose()
    finally:
        for s in servers:
            s.stop()
    assert not fresh.cached  # another served model is another identity


def test_the_declared_engine_is_keyed_and_a_bad_one_names_the_key() -> None:
    plain = layer(["http://127.0.0.1:9/v1"]).identity()
    invariant = layer(
        ["http://127.0.0.1:9/v1"], engine={"name": "vllm", "batch_invariant": True}
    ).identity()
    assert "engine" not in plain
    assert invariant["engine"] == {"batch_invariant": True, "name": "vllm"}
    assert request_key(plain, MSG, CFG)[0] != request_key(invariant, MSG, CFG)[0]
    with pytest.raises(ConfigError, match=r"model\.engine"):
        layer(["http://127.0.0.1:9/v1"], engine="vllm")


# --------------------------------------------------------------------------- a real run


def toy_run_args(tmp_path: Path, urls: list[str], *extra: str) -> list[str]:
    words = "[" + ",".join(f"w{i}" for i in range(12)) + "]"
    return [
        f"hydra.searchpath=[file://{ROOT / 'tests' / 'configs'}]",
        "env=toy",
        "sandbox=none",
        f"env.words={words}",
        "strategy.max_trials=3",
        "max_concurrent_tasks=6",
        "model=openai_pool",
        "model.name=m",
        "model.base_urls=[" + ",".join(urls) + "]",
        "model.cache=off",
        "model.retries=0",
        "model.max_connections=4",
        "model.endpoint_cooldown_s=600",
        f"paths.cache_dir={tmp_path / 'cache'}",
        f"run_dir={tmp_path / 'run'}",
        "progress=false",
        *extra,
    ]


@pytest.mark.slow
def test_a_run_over_three_servers_finishes_every_task_when_one_is_stopped(
    tmp_path: Path,
) -> None:
    flags = ("--latency-s", "0.25", "--reply", "wrong", "--served-model", "m")
    with (
        fake_server_process(*flags) as (_, p0),
        fake_server_process(*flags) as (victim, p1),
        fake_server_process(*flags) as (_, p2),
    ):
        urls = [f"http://127.0.0.1:{p}/v1" for p in (p0, p1, p2)]
        run = subprocess.Popen(
            [sys.executable, "-m", "reflexion_bench.cli", "run", *toy_run_args(tmp_path, urls)],
            cwd=ROOT,
            env={**os.environ},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # Stop the second server once it has answered a few calls, mid-run.
        answered_before = 0
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and run.poll() is None:
            answered_before = get_json(f"http://127.0.0.1:{p1}/_stats")["statuses"].get("200", 0)
            if answered_before >= 4:
                victim.kill()
                victim.wait()
                break
            time.sleep(0.02)
        assert victim.poll() is not None, "the run ended before the server could be stopped"
        _, err = run.communicate(timeout=300)
        totals = {
            p: get_json(f"http://127.0.0.1:{p}/_stats")["statuses"].get("200", 0) for p in (p0, p2)
        }
    assert run.returncode == 0, err[-3000:]
    records = load_run_records(tmp_path / "run")  # one record per trial
    assert Counter(r["task_id"] for r in records) == {f"toy/{i}": 3 for i in range(12)}
    assert all(r["error"] is None for r in records)
    calls = [c for r in records for c in r["model_calls"]]
    # 12 tasks x 3 trials x (actor + reflector between trials) = 60 calls, none failed.
    assert len(calls) == 60 and all(c["error"] is None for c in calls)
    assert all(c["endpoint"] in urls for c in calls)
    by_endpoint = Counter(c["endpoint"] for c in calls)
    # The stopped server is named only by calls it answered before it was stopped
    # (answers in flight at the stop never arrived); every other call came from the two
    # live servers, and some calls moved off the stopped one without a retry.
    assert by_endpoint[urls[1]] <= answered_before + 1
    assert by_endpoint[urls[0]] == totals[p0] and by_endpoint[urls[2]] == totals[p2]
    moved = [c for c in calls if c.get("endpoint_failovers")]
    assert moved and all(c["endpoint"] != urls[1] for c in moved)
    assert all(c["retries"] == 0 for c in calls)
