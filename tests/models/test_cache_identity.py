"""Issue 14, items 1-2: the response cache is keyed on what a model *is* (weights'
SHA-256, endpoint + served id), never answers for another model, and a replayed call
reports what its live call spent ("as run live") while paying nothing now."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from reflexion_bench.core.types import GenerateConfig, Message, ModelOutput
from reflexion_bench.models import identity as identity_mod
from reflexion_bench.models.anthropic import AnthropicClient
from reflexion_bench.models.base import BudgetExceeded, CacheMissError
from reflexion_bench.models.cache import ResponseCache, request_key
from reflexion_bench.models.embedded import EmbeddedModel, verify_file
from reflexion_bench.models.identity import file_sha256, public_url, stamp_path
from reflexion_bench.models.layer import ModelLayer
from reflexion_bench.models.mock import MockModel
from reflexion_bench.models.openai import OpenAIChatClient
from reflexion_bench.runner.run import run_experiment
from reflexion_bench.testing.fake_llm_server import FakeLLMServer
from tests.models.test_runner_integration import raw_records, run_cfg

MSG = [Message("user", "hello world")]
PRICES = {"gpt-4o-mini": {"input": 150_000.0, "output": 600_000.0}}  # big: visible costs


def calls_by_position(run_dir: Path) -> dict[tuple[str, int, int], dict[str, Any]]:
    out = {}
    for rec in raw_records(run_dir):
        for i, call in enumerate(rec["model_calls"]):
            out[(rec["task_id"], rec["trial"], i)] = call
    return out


# --------------------------------------------------------------------------- servers


@pytest.mark.network_local
async def test_two_servers_behind_one_name_never_answer_for_each_other(
    tmp_path: Path, keys: dict[str, str]
) -> None:
    with FakeLLMServer(reply="from server A") as a, FakeLLMServer(reply="from server B") as b:
        # Same model.name and the same cache file (run_cfg puts it under tmp_path/run).
        await run_experiment(run_cfg(tmp_path, a), tmp_path / "run_a")
        await run_experiment(run_cfg(tmp_path, b), tmp_path / "run_b")
        a_requests, b_requests = a.stats()["requests"], b.stats()["requests"]
        # Run B behaved as a first run: cached exactly where run A (on an empty cache)
        # was, i.e. only repeats of its own requests; B answered all the others.
        calls_a, calls_b = (
            calls_by_position(tmp_path / "run_a"),
            calls_by_position(tmp_path / "run_b"),
        )
        assert calls_b.keys() == calls_a.keys() and calls_b
        assert {p: c["cached"] for p, c in calls_b.items()} == {
            p: c["cached"] for p, c in calls_a.items()
        }
        assert b_requests == sum(not c["cached"] for c in calls_b.values()) == a_requests
        records_b = raw_records(tmp_path / "run_b")
        assert {r["candidate"] for r in records_b} == {"from server B"}
        assert {r["reflection"] for r in records_b if r["reflection"]} == {"from server B"}
        # Each server's own entries still replay for it.
        await run_experiment(run_cfg(tmp_path, a), tmp_path / "run_a2")
        assert a.stats()["requests"] == a_requests
        calls_a2 = [c for r in raw_records(tmp_path / "run_a2") for c in r["model_calls"]]
        assert calls_a2 and all(c["cached"] for c in calls_a2)
        assert {r["candidate"] for r in raw_records(tmp_path / "run_a2")} == {"from server A"}


@pytest.mark.network_local
async def test_identical_rerun_replays_what_the_live_run_spent(
    tmp_path: Path, keys: dict[str, str]
) -> None:
    with FakeLLMServer(latency_s=0.05, system_fingerprint="fp_live") as srv:
        cfg = run_cfg(tmp_path, srv, prices=PRICES)
        await run_experiment(cfg, tmp_path / "live")
        live_requests = srv.stats()["requests"]
        await run_experiment(cfg, tmp_path / "replay")
        assert srv.stats()["requests"] == live_requests  # nothing ran live again
    live, replay = calls_by_position(tmp_path / "live"), calls_by_position(tmp_path / "replay")
    assert live.keys() == replay.keys() and live
    for pos, call in live.items():
        again = replay[pos]
        assert call["cached"] is False and again["cached"] is True
        assert call["cost_usd"] > 0 and call["latency_s"] >= 0.05
        for field in ("prompt_tokens", "completion_tokens", "cost_usd", "latency_s"):
            assert again[field] == call[field], (pos, field)
        # Per-call metadata comes back with the replay too.
        assert again["system_fingerprint"] == call["system_fingerprint"] == "fp_live"
        assert call["served_model"] == "gpt-4o-mini"

    live_sum = json.loads((tmp_path / "live" / "summary.json").read_text())
    replay_sum = json.loads((tmp_path / "replay" / "summary.json").read_text())
    lt, rt = live_sum["totals"], replay_sum["totals"]
    tokens = sum(c["prompt_tokens"] + c["completion_tokens"] for c in live.values())
    cost = sum(c["cost_usd"] for c in live.values())
    # As run live: the same for both runs. Paid now: everything live, nothing replayed.
    assert lt["tokens"] == rt["tokens"] == tokens
    assert lt["cost_usd"] == pytest.approx(cost) and rt["cost_usd"] == pytest.approx(cost)
    assert lt["paid_tokens"] == tokens and lt["paid_cost_usd"] == pytest.approx(cost)
    assert rt["paid_tokens"] == 0 and rt["paid_cost_usd"] == 0
    ru = replay_sum["usage"]["total"]
    assert ru["cached_calls"] == len(live) and ru["paid_cost_usd"] == 0
    assert ru["cost_usd"] == pytest.approx(cost)


@pytest.mark.network_local
async def test_system_fingerprint_is_logged_not_keyed(
    tmp_path: Path, fake_server: FakeLLMServer, keys: dict[str, str]
) -> None:
    db = str(tmp_path / "c.sqlite")
    client = OpenAIChatClient(name="gpt-4o-mini", base_url=fake_server.openai_base_url)
    model = ModelLayer(client, cache="read_write", cache_path=db)
    fake_server.configure(system_fingerprint="fp_one")
    first = await model.generate(MSG, GenerateConfig())
    fake_server.configure(system_fingerprint="fp_two")  # changes per call on OpenAI's side
    second = await model.generate(MSG, GenerateConfig())
    fresh = await model.generate([Message("user", "other")], GenerateConfig())
    await model.aclose()
    assert first.system_fingerprint == "fp_one" and not first.cached
    assert second.cached and second.system_fingerprint == "fp_one"
    assert fresh.system_fingerprint == "fp_two"
    assert fake_server.stats()["requests"] == 2


def test_server_identity_holds_endpoint_and_settings_never_credentials(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret, password = "sk-" + "ABCDEFGHIJKLMNOP1234", "hunter2pass"
    url = f"https://user:{password}@API.Example.com:443/v1/?api-key={secret}&api-version=2024-01"
    client = OpenAIChatClient(
        name="gpt-4o-mini",
        base_url=url,
        extra_body={"api_key": secret, "reasoning_effort": "low"},
        omit_params=["temperature"],
    )
    ident = client.identity()
    text = json.dumps(ident)
    assert secret not in text and password not in text
    assert ident["base_url"] == "https://api.example.com/v1?api-version=2024-01"
    assert ident["request_settings"]["extra_body"]["reasoning_effort"] == "low"
    assert ident["request_settings"]["omit_params"] == ["temperature"]
    _, request = request_key(ident, MSG, GenerateConfig())  # what the cache file stores
    assert secret not in json.dumps(request) and password not in json.dumps(request)
    # Spellings of one endpoint are one identity; another port is another server.
    assert public_url("http://127.0.0.1:8000/v1/") == public_url("HTTP://127.0.0.1:8000/v1")
    assert public_url("http://127.0.0.1:8000/v1") != public_url("http://127.0.0.1:8001/v1")
    # No base_url: the endpoint the SDK will really use.
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert OpenAIChatClient(name="m").identity()["base_url"] == "https://api.openai.com/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://10.0.0.5:8080/v1")
    assert OpenAIChatClient(name="m").identity()["base_url"] == "http://10.0.0.5:8080/v1"
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    assert AnthropicClient(name="c").identity()["base_url"] == "https://api.anthropic.com"


# --------------------------------------------------------------------------- old scheme


def _v1_key(provider: str, model: str, messages: Sequence[Message], cfg: GenerateConfig) -> str:
    """The key recipe before issue 14 (provider + name), rebuilt here on purpose."""
    request = {
        "v": 1,
        "provider": provider,
        "model": model,
        "messages": [m.to_dict() for m in messages],
        "max_tokens": cfg.max_tokens,
        "temperature": cfg.temperature,
        "top_p": cfg.top_p,
        "stop": list(cfg.stop),
        "seed": cfg.seed,
        "sample_index": cfg.sample_index,
    }
    blob = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


async def test_entries_of_the_old_key_scheme_never_answer(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    old = ResponseCache(db)
    key = _v1_key("mock", "mock", MSG, GenerateConfig())
    old.put(key, {"provider": "mock", "model": "mock"}, ModelOutput(text="stale answer"))
    old.close()
    model = ModelLayer(
        MockModel(responses=["fresh answer"]), cache="read_write", cache_path=str(db)
    )
    out = await model.generate(MSG, GenerateConfig())
    await model.aclose()
    assert out.text == "fresh answer" and not out.cached
    replay = ModelLayer(MockModel(responses=[]), cache="read_only", cache_path=str(db))
    with pytest.raises(CacheMissError):
        await replay.generate([Message("user", "only in the old scheme")], GenerateConfig())
    await replay.aclose()


# --------------------------------------------------------------------------- local weights


class ServedFile(EmbeddedModel):
    """An embedded model whose 'server' answers with the first bytes of its weights file:
    the real file handling (verification, identity), no llama.cpp."""

    async def start(self) -> None:
        self.model_file()

    async def generate(self, messages: Sequence[Message], config: GenerateConfig) -> ModelOutput:
        return ModelOutput(text=self.model_file().read_bytes()[:6].hex(), prompt_tokens=3)

    async def aclose(self) -> None:
        return None


def weights(path: Path, fill: bytes) -> Path:
    path.write_bytes(fill * 4096)
    return path


async def test_two_weight_files_under_one_name_never_share_entries(tmp_path: Path) -> None:
    a = weights(tmp_path / "a.gguf", b"A")
    b = weights(tmp_path / "b.gguf", b"B")
    db, cache_dir = str(tmp_path / "c.sqlite"), str(tmp_path / "cache")

    def layer(path: Path, mode: str = "read_write", cls: type = ServedFile) -> ModelLayer:
        client = cls(name="qwen2.5-coder-0.5b-instruct", model_path=str(path), cache_dir=cache_dir)
        return ModelLayer(client, cache=mode, cache_path=db)

    la, lb = layer(a), layer(b)
    out_a, out_b = (
        await la.generate(MSG, GenerateConfig()),
        await lb.generate(MSG, GenerateConfig()),
    )
    assert (out_a.text, out_b.text) == ((b"A" * 6).hex(), (b"B" * 6).hex())
    assert not out_a.cached and not out_b.cached
    assert la.identity()["weights_sha256"] == hashlib.sha256(a.read_bytes()).hexdigest()
    assert (await layer(a).generate(MSG, GenerateConfig())).text == out_a.text
    # A read-only replay (the real client, never started) finds A's entry for A only.
    replay_a = layer(a, "read_only", EmbeddedModel)
    assert (await replay_a.generate(MSG, GenerateConfig())).cached
    c = weights(tmp_path / "c.gguf", b"C")
    with pytest.raises(CacheMissError):
        await layer(c, "read_only", EmbeddedModel).generate(MSG, GenerateConfig())
    for m in (la, lb, replay_a):
        await m.aclose()


def test_server_settings_that_change_answers_are_part_of_the_identity(tmp_path: Path) -> None:
    path = str(weights(tmp_path / "m.gguf", b"M"))

    def ident(**kw: Any) -> dict[str, Any]:
        return EmbeddedModel(model_path=path, cache_dir=str(tmp_path), **kw).identity()

    base = ident()
    assert ident(n_ctx=2048) != base and ident(n_parallel=2) != base
    assert ident(n_batch=64) != base
    assert ident(n_threads=2) == base  # speed only (see EmbeddedModel.identity)
    assert ident(name="other") != base


def test_pinned_weights_are_identified_without_reading_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The pinned SHA-256 is what start() enforces, so a read-only replay needs neither
    # the packages nor a hash.
    monkeypatch.setattr(identity_mod, "sha256_file", _fail)
    pinned = "ab" * 32
    model = EmbeddedModel(packages=["not-installed-model-pkg"], sha256=pinned.upper())
    assert model.identity()["weights_sha256"] == pinned


def _fail(path: Path) -> str:
    raise AssertionError(f"hashed {path}")


def test_weights_digest_stamp_is_reused_until_the_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hashed: list[Path] = []
    real = identity_mod.sha256_file

    def counting(path: Path) -> str:
        hashed.append(path)
        return real(path)

    monkeypatch.setattr(identity_mod, "sha256_file", counting)
    f = weights(tmp_path / "w.gguf", b"x")
    stamps = tmp_path / "stamps"
    d1 = file_sha256(f, stamps)
    assert d1 == hashlib.sha256(f.read_bytes()).hexdigest() and len(hashed) == 1
    assert file_sha256(f, stamps) == d1 and len(hashed) == 1  # from the stamp
    # A fresh model object (a new process) reuses the stamp too.
    model = EmbeddedModel(model_path=str(f), cache_dir=str(stamps))
    assert model.identity()["weights_sha256"] == d1 and len(hashed) == 1
    verify_file(f, d1, f.stat().st_size, stamps)
    assert len(hashed) == 1

    # Same size, other bytes, mtime put back: the stamp must not be trusted.
    st = f.stat()
    f.write_bytes(b"y" * st.st_size)
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    d2 = file_sha256(f, stamps)
    assert d2 == hashlib.sha256(f.read_bytes()).hexdigest() != d1 and len(hashed) == 2
    assert (
        EmbeddedModel(model_path=str(f), cache_dir=str(stamps)).identity()["weights_sha256"] == d2
    )

    # A corrupt stamp only costs a re-hash.
    stamp_path(stamps, f).write_text("not json")
    assert file_sha256(f, stamps) == d2 and len(hashed) == 3


# --------------------------------------------------------------------------- budgets


async def test_replays_count_as_run_live_and_money_caps_count_paid_now(tmp_path: Path) -> None:
    prices = {"mock": {"input": 100_000.0, "output": 100_000.0}}  # $0.1 per token
    model = ModelLayer(
        MockModel(responses=["a"], cycle=True),
        prices=prices,
        max_cost_usd=0.5,
        cache="read_write",
        cache_path=str(tmp_path / "c.sqlite"),
    )
    live = await model.generate(MSG, GenerateConfig())  # 3 tokens: $0.3
    replays = [await model.generate(MSG, GenerateConfig()) for _ in range(4)]
    assert all(r.cached and r.cost_usd == pytest.approx(live.cost_usd) for r in replays)
    assert all(r.latency_s == live.latency_s for r in replays)
    u = model.usage
    assert u.paid_now()["cost_usd"] == pytest.approx(0.3)
    assert u.as_run_live()["cost_usd"] == pytest.approx(1.5)
    assert u.as_run_live()["tokens"] == 15 and u.paid_now()["tokens"] == 3
    # The cap saw $0.3, not $1.5: one more live call is allowed, then it stops.
    await model.generate([Message("user", "new one")], GenerateConfig())
    with pytest.raises(BudgetExceeded, match=r"max_cost_usd=0\.5"):
        await model.generate([Message("user", "and another")], GenerateConfig())
    await model.aclose()
