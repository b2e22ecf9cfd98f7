"""provenance.json of a real `reflexion-bench run`, and `report`'s warnings when the runs
of one table differ in code, libraries, data, model identity, sandbox or machine.

Expected values are computed here independently (hashlib on the data file, `git` on
the checkout, importlib.metadata, platform) rather than copied from the code under test.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
from datetime import datetime
from importlib import metadata
from pathlib import Path

import pytest

from reflexion_bench.testing.fake_llm_server import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
SEARCH = f"hydra.searchpath=[file://{ROOT / 'tests' / 'configs'}]"
URL_PASSWORD = "provPass" + "W0rd2026"  # split: not a real key

PROBLEMS = [
    {
        "task_id": "T/0",
        "prompt": "def add(a: int, b: int) -> int:\n",
        "entry_point": "add",
        "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n",
    },
    {
        "task_id": "T/1",
        "prompt": "def neg(a: int) -> int:\n",
        "entry_point": "neg",
        "test": "def check(candidate):\n    assert candidate(1) == -1\n",
    },
]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reflexion_bench.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def write_problems(path: Path, extra: str = "") -> str:
    rows = [dict(p) for p in PROBLEMS]
    rows[0]["prompt"] += extra
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def code_run(
    run_dir: Path, data: Path, base_url: str, tmp: Path
) -> subprocess.CompletedProcess[str]:
    return cli(
        "run",
        "env=humaneval",
        f"env.path={data}",
        "strategy=simple",
        "model=openai_compatible",
        "model.name=fake-model",
        f"model.base_url={base_url}",
        "model.cache=off",
        "sandbox=local",
        f"paths.cache_dir={tmp / 'cache'}",
        "progress=false",
        f"run_dir={run_dir}",
    )


def git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.network_local
def test_run_records_code_data_model_sandbox_and_host(tmp_path: Path) -> None:
    data = tmp_path / "problems.jsonl"
    digest = write_problems(data)
    with FakeLLMServer(reply="```python\ndef add(a, b):\n    return a + b\n```") as srv:
        # Credentials in the URL must not reach provenance.json.
        url = srv.openai_base_url.replace("http://", f"http://user:{URL_PASSWORD}@")
        out = code_run(tmp_path / "run", data, url, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    text = (tmp_path / "run" / "provenance.json").read_text()
    assert URL_PASSWORD not in text
    # Nor any other file of the run (config.yaml, Hydra's .hydra/ files, the log).
    leaked = [
        f
        for f in (tmp_path / "run").rglob("*")
        if f.is_file() and URL_PASSWORD.encode() in f.read_bytes()
    ]
    assert not leaked and URL_PASSWORD not in out.stdout + out.stderr
    prov = json.loads(text)

    assert prov["package_version"] == metadata.version("reflexion-bench")
    if (ROOT / ".git").exists():
        assert prov["git"]["commit"] == git("rev-parse", "HEAD")
        assert prov["git"]["dirty"] == bool(git("status", "--porcelain", "--untracked-files=no"))
    assert prov["python"]["version"] == platform.python_version()
    assert prov["packages"]["hydra-core"] == metadata.version("hydra-core")
    assert prov["packages"]["openai"] == metadata.version("openai")
    # The data file the environment read, with its content's digest.
    files = {f["path"]: f for f in prov["data_files"]}
    assert files[str(data.resolve())]["sha256"] == digest
    assert files[str(data.resolve())]["bytes"] == data.stat().st_size
    # The model is the server, reached without credentials in the record.
    model = prov["model"]
    assert model["model"] == "fake-model"
    assert model["base_url"].endswith(f"127.0.0.1:{srv.port}/v1")
    assert prov["sandbox"]["backend"] == "LocalSandbox"
    assert prov["sandbox"]["isolation"] not in (None, "", "none", "unknown")
    assert prov["host"]["cpu_count"] == os.cpu_count()
    assert prov["host"]["kernel"].endswith(platform.release())
    start = datetime.fromisoformat(prov["start_time"])
    end = datetime.fromisoformat(prov["end_time"])
    assert start <= end and prov["outcome"] == "finished"


@pytest.mark.network_local
def test_report_warns_when_runs_of_one_table_read_different_data(tmp_path: Path) -> None:
    data = tmp_path / "problems.jsonl"
    with FakeLLMServer() as srv:
        write_problems(data)
        assert (
            code_run(tmp_path / "runs" / "a", data, srv.openai_base_url, tmp_path).returncode == 0
        )
        assert (
            code_run(tmp_path / "runs" / "b", data, srv.openai_base_url, tmp_path).returncode == 0
        )
        same = cli("report", str(tmp_path / "runs"), "--no-write", "--resamples", "200")
        assert same.returncode == 0, same.stderr
        assert "provenance" not in same.stderr  # same code, data, model, sandbox, host

        # Same path, same name, other content: the kind of change no config shows.
        write_problems(data, extra="    # edited\n")
        assert (
            code_run(tmp_path / "runs" / "c", data, srv.openai_base_url, tmp_path).returncode == 0
        )
    rep = cli("report", str(tmp_path / "runs"), "--no-write", "--resamples", "200")
    assert rep.returncode == 0, rep.stderr
    (line,) = [x for x in rep.stderr.splitlines() if "data_files" in x]
    assert line.startswith("warning:") and "problems.jsonl" in line
    assert "(a, b)" in line and "(c)" in line
    # The markdown table carries the warning too, where a reader of the table sees it.
    assert "data_files.problems.jsonl" in rep.stdout


def test_resumed_run_keeps_earlier_sessions_and_report_flags_a_mixed_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    base = [
        "run",
        SEARCH,
        "env=toy",
        "model=toy",
        "sandbox=none",
        "progress=false",
        f"run_dir={run}",
    ]
    assert cli(*base, "limit=2").returncode == 0
    first = json.loads((run / "provenance.json").read_text())
    assert cli(*base, "limit=3").returncode == 0
    second = json.loads((run / "provenance.json").read_text())
    assert [s["start_time"] for s in second["previous_sessions"]] == [first["start_time"]]
    # Each session records the tasks it was asked to finish (a grown limit included).
    assert (first["tasks_planned"], second["tasks_planned"]) == (2, 3)
    assert second["previous_sessions"][0]["tasks_planned"] == 2
    # That is no difference a report warns about: only the model's is below.
    clean = cli("report", str(run), "--no-write")
    assert clean.returncode == 0 and "provenance field" not in clean.stderr, clean.stderr

    # A session under another model identity (as a forced resume with another server
    # behind the same name would leave): report names the run and both sessions.
    second["previous_sessions"][0]["model"]["base_url"] = "http://127.0.0.1:1/v1"
    (run / "provenance.json").write_text(json.dumps(second))
    rep = cli("report", str(run), "--no-write")
    assert rep.returncode == 0, rep.stderr
    assert "warning: provenance field `model[toy-mock].base_url` differs" in rep.stderr
    assert "run (session 1)" in rep.stderr and "run (session 2)" in rep.stderr


def test_large_data_files_are_hashed_once_then_stamped(tmp_path: Path) -> None:
    from reflexion_bench.runner.provenance import hash_data_files

    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(1024) * (17 * 1024))  # 17 MiB: above the stamp threshold
    expected = hashlib.sha256(big.read_bytes()).hexdigest()
    stamps = tmp_path / "stamps"
    (first,) = hash_data_files([big], stamps)
    assert first["sha256"] == expected and first["bytes"] == big.stat().st_size
    assert list(stamps.rglob("*.ok"))  # the digest is stamped with the file's size+mtime
    # A changed file is hashed again, not served from its stale stamp.
    with big.open("r+b") as fh:
        fh.write(b"changed")
    (second,) = hash_data_files([big], stamps)
    assert second["sha256"] == hashlib.sha256(big.read_bytes()).hexdigest() != expected


def test_report_names_runs_without_provenance(tmp_path: Path) -> None:
    base = ["run", SEARCH, "env=toy", "model=toy", "sandbox=none", "progress=false", "limit=1"]
    assert cli(*base, f"run_dir={tmp_path / 'runs' / 'new'}").returncode == 0
    assert cli(*base, f"run_dir={tmp_path / 'runs' / 'old'}", "seed=1").returncode == 0
    (tmp_path / "runs" / "old" / "provenance.json").unlink()  # as a run made before it existed
    rep = cli("report", str(tmp_path / "runs"), "--no-write", "--resamples", "200")
    assert rep.returncode == 0, rep.stderr
    assert "warning: no provenance.json in old" in rep.stderr


# --------------------------------------------------------------------------- code digest


def documented_digest(files: dict[str, bytes]) -> str:
    """The digest as code_digest's docstring defines it, written out independently."""
    h = hashlib.sha256()
    for name in sorted(files):
        data = files[name]
        h.update(f"{name}\0{len(data)}\0".encode() + data)
    return h.hexdigest()


def make_tree(root: Path, files: dict[str, str]) -> tuple[Path, Path]:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root / "pkg", root / "configs"


def test_code_digest_covers_source_prompts_and_configs_in_a_stable_order(
    tmp_path: Path,
) -> None:
    from reflexion_bench.runner.provenance import code_digest

    covered = {
        "pkg/__init__.py": "",
        "pkg/runner/loop.py": "x = 1\n",
        "pkg/prompts/code/actor.md": "Write {code}.\n",
        "pkg/prompts/pack.yaml": "a: b\n",
        "configs/config.yaml": "defaults: []\n",
        "configs/env/toy.yaml": "n: 2\n",
    }
    ignored = {
        "pkg/prompts/code/README.md": "notes on the pack\n",  # the loader skips it
        "pkg/view/assets/app.js": "1;\n",  # not source, prompts or configs
        "pkg/__pycache__/loop.cpython-311.pyc": "bytecode",
        "pkg/.loop.py.swp": "editor",
        "configs/local/default.yaml": "model: mine\n",  # per machine, git-ignored
        "docs/index.md": "# docs\n",
        "tests/test_x.py": "assert True\n",
    }
    pkg, configs = make_tree(tmp_path / "a", {**covered, **ignored})
    got = code_digest(pkg, configs)
    # Names are relative to the package's / configs' parent, so "pkg/..." as laid out.
    assert got == {
        "sha256": documented_digest({k: v.encode() for k, v in covered.items()}),
        "files": len(covered),
    }

    # The same files written in another order, in another folder: the same digest.
    pkg2, configs2 = make_tree(tmp_path / "b", dict(reversed(list(covered.items()))))
    assert code_digest(pkg2, configs2) == got

    # Each kind of change to covered code changes it; a change to ignored files does not.
    (pkg2 / "runner" / "loop.py").write_text("x = 2\n")
    edited = code_digest(pkg2, configs2)["sha256"]
    (pkg2 / "runner" / "loop.py").write_text("x = 1\n")
    (configs2 / "env" / "toy.yaml").rename(configs2 / "env" / "toy2.yaml")
    renamed = code_digest(pkg2, configs2)["sha256"]
    (configs2 / "env" / "toy2.yaml").rename(configs2 / "env" / "toy.yaml")
    (pkg2 / "prompts" / "code" / "actor.md").write_text("Write {code}!\n")
    prompt = code_digest(pkg2, configs2)["sha256"]
    assert len({got["sha256"], edited, renamed, prompt}) == 4
    (pkg2 / "prompts" / "code" / "actor.md").write_text("Write {code}.\n")
    make_tree(tmp_path / "b", ignored)
    assert code_digest(pkg2, configs2) == got
    # Bytes moved from one file to the next are a change (the size is hashed).
    (pkg2 / "__init__.py").write_text("x")
    (pkg2 / "runner" / "loop.py").write_text(" = 1\n")
    assert code_digest(pkg2, configs2) != got


def fake_code(run: Path, sha: str | None, commit: str = "c" * 40) -> None:
    prov = json.loads((run / "provenance.json").read_text())
    prov["git"] = {"commit": commit, "dirty": False}
    if sha is None:
        prov.pop("code", None)
    else:
        prov["code"] = {"sha256": sha, "files": 3}
    (run / "provenance.json").write_text(json.dumps(prov))


def test_report_says_once_that_runs_ran_the_same_code_or_lists_what_differs(
    tmp_path: Path,
) -> None:
    from reflexion_bench.runner.provenance import code_digest

    base = ["run", SEARCH, "env=toy", "model=toy", "sandbox=none", "progress=false", "limit=1"]
    runs = [tmp_path / "runs" / name for name in ("a", "b", "c")]
    for seed, run in enumerate(runs):
        assert cli(*base, f"run_dir={run}", f"seed={seed}").returncode == 0
    # A real run records the digest of the code it ran (this checkout).
    recorded = json.loads((runs[0] / "provenance.json").read_text())["code"]
    assert recorded == code_digest()
    assert recorded["files"] > 100

    def report() -> subprocess.CompletedProcess[str]:
        rep = cli("report", str(tmp_path / "runs"), "--no-write", "--resamples", "200")
        assert rep.returncode == 0, rep.stderr
        return rep

    # Same digest from three commits: one line, no commit hashes.
    for i, run in enumerate(runs):
        fake_code(run, "d" * 64, commit=str(i) * 40)
    rep = report()
    (line,) = [x for x in rep.stderr.splitlines() if "provenance" in x or "code" in x]
    assert line == (
        "note: same code digest dddddddddddd (package source, prompts, configs) in all "
        "sessions, from 3 git commit(s) (each run's provenance.json names its own)"
    )
    assert "0" * 40 not in rep.stderr + rep.stdout
    assert "- note: same code digest dddddddddddd" in rep.stdout  # in the table's notes

    # Two digests: one warning naming the groups, still no commits.
    fake_code(runs[2], "e" * 64, commit="2" * 40)
    rep = report()
    (line,) = [x for x in rep.stderr.splitlines() if "provenance" in x or "code" in x]
    assert line == (
        "warning: code digest (package source, prompts, configs) differs: "
        "dddddddddddd (a, b) vs eeeeeeeeeeee (c)"
    )
    assert "git.commit" not in rep.stderr + rep.stdout

    # A run from before the digest: named once as unknown, the others still compared.
    fake_code(runs[2], None, commit="2" * 40)
    rep = report()
    lines = [x for x in rep.stderr.splitlines() if "provenance" in x or "code" in x]
    assert lines == [
        "warning: code digest unknown for c (recorded before provenance.json had one): "
        "whether they ran the same code as the others is unknown",
        "note: same code digest dddddddddddd (package source, prompts, configs) in the "
        "2 sessions that record one, from 2 git commit(s) (each run's provenance.json "
        "names its own)",
    ]

    # No run has one (every committed study today): compared by commit as before, the
    # report's text unchanged; the terminal says once why.
    for i, run in enumerate(runs):
        fake_code(run, None, commit=str(i) * 40)
    rep = report()
    assert [x for x in rep.stderr.splitlines() if "code digest" in x] == [
        "note: code digest unknown for all 3 sessions (recorded before provenance.json had "
        "one): their code is compared by git commit only"
    ]
    assert "warning: provenance field `git.commit` differs" in rep.stderr
    assert "code digest" not in rep.stdout and "note:" not in rep.stdout
