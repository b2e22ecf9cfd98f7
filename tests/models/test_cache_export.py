"""The response cache carried between machines (``reflexion-bench cache export/import``):
an export re-imported elsewhere serves the same answers for the same requests, keeps
each entry's age (so re-exports only grow at the end), never replaces a local answer,
and refuses a line whose key is not its own request's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reflexion_bench.core.types import GenerateConfig, Message, ModelOutput
from reflexion_bench.models.cache import (
    KEY_VERSION,
    ResponseCache,
    export_entries,
    import_entries,
    request_key,
)

IDENTITY = {"provider": "embedded", "model": "m", "weights_sha256": "ab", "server": {"n": 1}}


def put(cache: ResponseCache, prompt: str, text: str, temperature: float = 0.0) -> str:
    key, request = request_key(
        IDENTITY, [Message("user", prompt)], GenerateConfig(temperature=temperature)
    )
    cache.put(key, request, ModelOutput(text=text, prompt_tokens=7, completion_tokens=3))
    return key


def test_an_export_imported_elsewhere_answers_the_same_requests(tmp_path: Path) -> None:
    here = ResponseCache(tmp_path / "a.sqlite")
    greedy = put(here, "first", "def f(): return 1")
    sampled = put(here, "first", "def f(): return 2", temperature=0.8)
    later = put(here, "second", "def g(): pass")
    out = tmp_path / "shared.jsonl"
    assert export_entries(here, out, greedy_only=True) == 2
    assert [json.loads(x)["key"] for x in out.read_text().splitlines()] == [greedy, later]

    there = ResponseCache(tmp_path / "b.sqlite")
    counts = import_entries(there, out)
    assert (counts["added"], counts["present"], counts["refused"]) == (2, 0, 0)
    hit = there.get(greedy)
    assert hit is not None and hit.cached and hit.text == "def f(): return 1"
    assert (hit.prompt_tokens, hit.completion_tokens) == (7, 3)  # what the live call spent
    assert there.get(sampled) is None  # not exported: a sampled call is not shared
    # The entries keep their age: an export from the second machine is the same file.
    again = tmp_path / "again.jsonl"
    export_entries(there, again, greedy_only=True)
    assert again.read_bytes() == out.read_bytes()
    assert import_entries(there, out)["present"] == 2


def test_a_local_answer_is_never_replaced(tmp_path: Path) -> None:
    a = ResponseCache(tmp_path / "a.sqlite")
    key = put(a, "p", "from a")
    export_entries(a, tmp_path / "a.jsonl")
    b = ResponseCache(tmp_path / "b.sqlite")
    put(b, "p", "from b")
    assert import_entries(b, tmp_path / "a.jsonl")["present"] == 1
    hit = b.get(key)
    assert hit is not None and hit.text == "from b"


def test_a_line_that_does_not_match_its_key_is_refused(tmp_path: Path) -> None:
    a = ResponseCache(tmp_path / "a.sqlite")
    put(a, "p", "ok")
    put(a, "q", "ok too")
    export_entries(a, tmp_path / "x.jsonl")
    lines = (tmp_path / "x.jsonl").read_text().splitlines()
    forged = json.loads(lines[0])
    forged["request"]["messages"][0]["content"] = "another question"  # key left as it was
    old = json.loads(lines[1])
    old["request"]["v"] = KEY_VERSION - 1
    bad = [json.dumps(forged), json.dumps(old), "{not json", json.dumps(["a", "list"])]
    (tmp_path / "bad.jsonl").write_text("\n".join([*bad, ""]))
    b = ResponseCache(tmp_path / "b.sqlite")
    counts = import_entries(b, tmp_path / "bad.jsonl")
    assert (counts["added"], counts["refused"]) == (0, 4)
    assert len(b) == 0
    assert "line 1: its key is not the SHA-256 of its request" in counts["problems"][0]
    assert f"this version keys v={KEY_VERSION}" in counts["problems"][1]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reflexion_bench.cli", "cache", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_command_exports_imports_and_reports_refusals(tmp_path: Path) -> None:
    a = ResponseCache(tmp_path / "a.sqlite")
    put(a, "p", "x")
    put(a, "p", "y", temperature=1.0)
    a.close()
    out = tmp_path / "e.jsonl"
    done = cli(
        "export", str(out), "--greedy", "--model", "m", "--cache", str(tmp_path / "a.sqlite")
    )
    assert done.returncode == 0 and "exported 1 entries" in done.stdout
    info = cli("info", "--cache", str(tmp_path / "a.sqlite"))
    assert "2 entries" in info.stdout and "m: 2 (1 greedy)" in info.stdout
    done = cli("import", str(out), "--cache", str(tmp_path / "b.sqlite"))
    assert done.returncode == 0 and "1 added, 0 already present, 0 refused" in done.stdout
    out.write_text(out.read_text() + "{broken\n")
    done = cli("import", str(out), "--cache", str(tmp_path / "b.sqlite"))
    assert done.returncode == 1 and "refused line 2" in done.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["export"], "`cache export` needs a FILE"),
        (["import", "nowhere.jsonl"], "no file nowhere.jsonl to import"),
        (["export", "o.jsonl", "--cache", "missing.sqlite"], "no response cache at missing.sqlite"),
    ],
)
def test_bad_input_names_what_to_fix(tmp_path: Path, args: list[str], says: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "reflexion_bench.cli", "cache", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 2 and says in done.stderr
